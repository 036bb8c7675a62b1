package issue

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
)

// FuzzRead splits arbitrary input as every kind of issue document and
// checks what the parse relies on: no panic, at most MaxBlocks blocks with
// distinct names, each block's Lines its text's lines, and every line of a
// markdown block the line of the document its Offset says (quote markers,
// indentation and the fence removed, nothing else).
func FuzzRead(f *testing.F) {
	seeds := []string{
		"### Your current environment\n\n<details>\n<summary>The output of <code>python collect_env.py</code></summary>\n\n```text\nPyTorch version: 2.5.1\n```\n\n</details>\n",
		"Log:\n\n[2025-01-01 10:00:00 TP0] x\n  File \"a.py\", line 1, in f\n\nRuntimeError: y\n",
		"> ```\n> NCCL WARN x\nafter\n",
		"````\n```\n````\n~~~\n",
		"<pre>\na &lt; b\n</pre>\n<!-- x\n-->\n",
		"<details><summary>x</summary>y</details>\n<details>\n",
		`{"title":"t","body":"` + "```\\nERROR: a\\n```" + `","comments":[{"body":"b"}]}`,
		`{"action":"opened","issue":{"title":"t","body":"x\r\ny","comments":0}}`,
		`[{"body":"a"}]`,
		"1. a\n   ```bash\n   vllm serve m\n   ```\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, kind := range []facts.Kind{facts.KindMarkdown, facts.KindGitHubIssue, facts.KindGitHubEvent} {
			_ = Sniff("x.md", data)
			s, ok := Read("x", kind, data)
			if !ok {
				continue
			}
			if len(s.Blocks) > MaxBlocks {
				t.Fatalf("%d blocks", len(s.Blocks))
			}
			seen := map[string]bool{}
			for _, b := range s.Blocks {
				if seen[b.Name] {
					t.Fatalf("two blocks named %s", b.Name)
				}
				seen[b.Name] = true
				if n := bytes.Count(b.Text, []byte{'\n'}); n != b.Lines || b.Lines == 0 {
					t.Fatalf("%s: Lines %d, text of %d lines", b.Name, b.Lines, n)
				}
				if kind != facts.KindMarkdown || b.How == "pre" {
					continue
				}
				doc := splitLines(data)
				if b.Offset < 0 || b.Offset+b.Lines > len(doc) {
					t.Fatalf("%s: lines %d-%d of a document of %d", b.Name, b.Offset+1, b.Offset+b.Lines, len(doc))
				}
				for i, l := range strings.Split(strings.TrimSuffix(string(b.Text), "\n"), "\n") {
					if !strings.Contains(doc[b.Offset+i], strings.TrimSpace(l)) {
						t.Fatalf("%s line %d %q is not in document line %d %q", b.Name, i+1, l, b.Offset+i+1, doc[b.Offset+i])
					}
				}
			}
		}
	})
}
