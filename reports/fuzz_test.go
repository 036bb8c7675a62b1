package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gomarkdown/markdown"
	"github.com/gomarkdown/markdown/ast"
	"github.com/gomarkdown/markdown/parser"

	"github.com/coroner-dev/coroner/internal/escape"
)

// FuzzRenderHostile puts arbitrary text everywhere evidence reaches a
// report (a path, a log line, a server argument, a process name, rule
// prose) and checks that the HTML stays inert, the markdown keeps its
// fences closed, and the plain text holds no escape sequence.
func FuzzRenderHostile(f *testing.F) {
	for _, s := range []string{
		"<script>alert(1)</script>",
		"<img src=x onerror=alert(2)>",
		"[x](javascript:alert(3))",
		"```\n</details><script>alert(4)</script>",
		"`a` ``b`` <b>`c`</b>",
		"\x1b[31mred\x1b]0;title\x07",
		"section x: crit, a, 2020-01-01, 1d # ;",
		"<!-- x --><style>@import url(http://e/x.css)</style>",
		"&lt;script&gt; &#60;img&#62;",
		"\xff\xfe\x00\u202e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := fuzzReport(s)
		var h bytes.Buffer
		if err := HTML(&h, r); err != nil {
			t.Fatal(err)
		}
		if problems, _ := inertProblems(h.String()); len(problems) > 0 {
			t.Fatalf("HTML not inert for %q: %v", s, problems)
		}
		var md bytes.Buffer
		if err := Markdown(&md, r); err != nil {
			t.Fatal(err)
		}
		opened, closed := 0, 0
		for _, l := range outsideFences(md.String()) {
			if strings.HasPrefix(l, "<details") {
				opened++
			}
			if l == "</details>" {
				closed++
			}
		}
		if opened != 1 || closed != 1 {
			t.Fatalf("unbalanced details for %q", s)
		}
		// Evidence must not change the document's shape: the same report
		// with harmless text has the same headings, code blocks, list items,
		// table cells and links.
		if c := escape.Text(s); strings.TrimSpace(c) != "" && !strings.Contains(c, "TP0") {
			var plain bytes.Buffer
			if err := Markdown(&plain, fuzzReport("harmless text")); err != nil {
				t.Fatal(err)
			}
			want, got := mdShape(plain.String()), mdShape(md.String())
			if want != got {
				t.Fatalf("evidence %q changed the markdown's shape:\n%s\nwant\n%s", s, got, want)
			}
		}
		var txt bytes.Buffer
		if err := Text(&txt, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(txt.String(), 0x1b) {
			t.Fatalf("escape in plain text for %q", s)
		}
		var gh bytes.Buffer
		if err := GitHub(&gh, r, Excerpts{s: {2: s, 3: s, 4: s}}); err != nil {
			t.Fatal(err)
		}
	})
}

// outsideFences returns the lines of a markdown document that lie outside
// its fenced code blocks.
func outsideFences(md string) []string {
	var out []string
	fence := ""
	for _, l := range strings.Split(md, "\n") {
		ticks := len(l) - len(strings.TrimLeft(l, "`"))
		switch {
		case fence == "" && ticks >= 3:
			fence = l[:ticks]
		case fence != "" && strings.TrimRight(l, " ") == fence:
			fence = ""
		case fence == "":
			out = append(out, l)
		}
	}
	return out
}

// mdShape counts the block and link nodes gomarkdown finds in a document.
func mdShape(md string) string {
	doc := markdown.Parse([]byte(md), parser.NewWithExtensions(parser.NoIntraEmphasis|parser.Tables|parser.FencedCode|parser.Strikethrough|parser.SpaceHeadings))
	counts := map[string]int{}
	ast.WalkFunc(doc, func(n ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.GoToNext
		}
		switch n.(type) {
		case *ast.Heading:
			counts["heading"]++
		case *ast.CodeBlock:
			counts["code"]++
		case *ast.ListItem:
			counts["item"]++
		case *ast.TableCell:
			counts["cell"]++
		case *ast.Link, *ast.Image:
			counts["link"]++
		case *ast.BlockQuote:
			counts["quote"]++
		case *ast.HorizontalRule:
			counts["rule"]++
		}
		return ast.GoToNext
	})
	return fmt.Sprint(counts)
}

func fuzzReport(s string) *Report {
	return &Report{
		Tool:        Tool{Name: "coroner", Version: s},
		Bundle:      Bundle{Path: s, Sources: []Source{{Path: s, Kind: "unknown", Issues: []Issue{{Line: 1, Kind: "malformed", Detail: s}}}}},
		Assumptions: []string{s},
		Verdict: Verdict{Outcome: "hung", Phase: s, Summary: s, StalledForS: 60,
			Causes: []Cause{{Category: "config", Rule: "r", Confidence: 0.5, Title: s, Why: s}}},
		Timeline: []TimelineSpan{
			{Process: s, Phase: s, Start: "2026-01-01T00:00:00Z", End: "2026-01-01T00:01:00Z", DurationS: 60, Evidence: Location{File: s, Line: 1}},
			{Process: "TP0", Phase: "weights-loading", Start: "2026-01-01T00:00:10Z", End: "2026-01-01T00:02:00Z", DurationS: 110, Open: true, Evidence: Location{File: s, Line: 2}},
		},
		Findings: []Finding{{Rule: "r", Title: s, Severity: "error", Category: "config", Confidence: 0.5, Message: s, Remedy: s,
			References: []string{s}, Evidence: []Evidence{{File: s, Line: 3, Text: s}}}},
		Inconclusive: []Inconclusive{{Rule: "r", Missing: []string{s}, Collect: s}},
		RuledOut:     []RuledOut{{Rule: "q", Category: "config", Title: s, Why: s, Evidence: []Evidence{{File: s, Line: 4, Text: s}}}},
		Environment: Environment{Engine: s, GPUs: []GPUGroup{{Model: s, Count: 1, ComputeCapability: s}},
			Software: []Item{{Name: s, Value: s, Note: s}}, ServerArgs: []Item{{Name: s, Value: s}}, EnvVars: []Item{{Name: "NCCL_X", Value: s}}},
		Snapshots:   []Snapshot{{Kind: s, At: "2026-01-01T00:01:30Z", File: s, Line: 1}},
		EvidenceEnd: &Instant{At: "2026-01-01T00:02:00Z", File: s, Line: 1},
	}
}
