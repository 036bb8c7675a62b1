package manifest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// FuzzParse feeds damaged manifests to the parser: it must never panic,
// and every fact it gives must cite a line of the input.
func FuzzParse(f *testing.F) {
	var b bytes.Buffer
	_ = Encode(&b, sample())
	f.Add(b.String())
	f.Add(`{"format": "coroner-manifest", "artifacts": [{"path": "x"}, 3, null]}`)
	f.Add(`{"format": "coroner-manifest", "rounds": {"dir": 1}, "host": [], "artifacts": "no"}`)
	f.Fuzz(func(t *testing.T, s string) {
		in := textio.NewInput("manifest.json", strings.NewReader(s), 0, nil)
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, facts.KindManifest, out)
		lines := strings.Count(s, "\n") + 1
		for _, a := range out.Runs {
			if a.Src.Line < 0 || a.Src.Line > lines {
				t.Fatalf("artifact cites line %d of %d", a.Src.Line, lines)
			}
		}
	})
}
