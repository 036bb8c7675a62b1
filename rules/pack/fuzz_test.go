package pack

import (
	"os"
	"testing"
)

// FuzzParse feeds hostile YAML to the loader: it may reject anything, but
// must not panic, and every error must name the file.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(example)
	if err == nil {
		f.Add(string(example))
	}
	f.Add(badPack)
	f.Add("rules:\n  - &a {id: x, title: t, doc: d, when: state.ready}\n  - *a\n")
	f.Add("rules:\n  - !!map {id: x, title: t, doc: d, match: {type: [oom], fields: {a: '('}}}\n")
	f.Add("- id: s\n  pattern: x\n  category: config\n  confidence: 0.5\n  title: t\n")
	f.Add("rules:\n  - id: m\n    title: t\n    doc: d\n    when: state.ready\n    message: '{{ 1 + }} {{'\n")
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse([]byte(src), "fuzz.yaml")
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 {
				t.Fatalf("error of type %T: %v", err, err)
			}
			for _, e := range es {
				if e.File != "fuzz.yaml" {
					t.Fatalf("error without the file: %v", e)
				}
			}
			return
		}
		if _, err := New(p); err != nil {
			return
		}
		for _, r := range p.Rules {
			if r.Run == nil {
				t.Fatalf("rule %s has no Run", r.ID)
			}
		}
	})
}
