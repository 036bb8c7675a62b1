package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gomarkdown/markdown"
	"github.com/gomarkdown/markdown/ast"
	"github.com/gomarkdown/markdown/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/internal/labels"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/issue"
	"github.com/coroner-dev/coroner/parser/issue/issuetest"
)

// issueExcerpts reads the lines the brief quotes the way the CLI does: an
// issue document is visited as its blocks.
func issueExcerpts(t *testing.T, path string, r *Report) Excerpts {
	t.Helper()
	want := ExcerptWants(r)
	ex, err := ReadExcerpts(func(visit func(string, io.Reader) error) error {
		return bundle.Walk(path, bundle.Defaults(), func(e *bundle.Entry, rd io.Reader) error {
			for w := range want {
				if strings.HasPrefix(w, e.Path+"#") {
					return issue.Visit(e.Path, rd, visit)
				}
			}
			return visit(e.Path, rd)
		})
	}, want)
	require.NoError(t, err)
	return ex
}

// issueComment analyzes an issue file and renders its comment with the
// labels of a table ("" for none).
func issueComment(t *testing.T, path, table string) (string, *Report) {
	t.Helper()
	r := analyzeQuiet(t, path)
	if table != "" {
		tb, err := labels.Load(table)
		require.NoError(t, err)
		r.Labels = tb.For(r.LabelInput())
	}
	var b bytes.Buffer
	require.NoError(t, GitHub(&b, r, issueExcerpts(t, path, r)))
	return b.String(), r
}

// issueGoldens are the issues whose comments are kept as golden files:
// three built from incident folders, each in another form, and one with
// nothing to diagnose.
var issueGoldens = []struct {
	name, form, table string
	text              func(c issuetest.Case) []byte
	caseName          string
}{
	{"sglang-1058", "issue.md", "sglang", func(c issuetest.Case) []byte { return []byte(c.Markdown()) }, "sglang-1058"},
	{"vllm-19186", "issue.json", "vllm", func(c issuetest.Case) []byte { return c.GHJSON() }, "vllm-19186"},
	{"vllm-12721", "event.json", "vllm", func(c issuetest.Case) []byte { return c.Event("created") }, "vllm-12721"},
	{"nothing-to-diagnose", "issue.md", "vllm", nil, ""},
}

// undiagnosable is an issue as thin as many are.
const undiagnosable = "### Your current environment\n\nvllm 0.6.3 on 8x H100\n\n### 🐛 Describe the bug\n\n" +
	"When I run `vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 8` it never becomes ready. " +
	"It just sits there. What is wrong? cc @someone\n"

// TestIssueGolden compares the comments of issueGoldens with their golden
// files (testdata/issue; go test ./reports -run TestIssueGolden -update
// rewrites them), each rendered twice from scratch.
func TestIssueGolden(t *testing.T) {
	for _, g := range issueGoldens {
		t.Run(g.name, func(t *testing.T) {
			var text []byte
			if g.text == nil {
				text = []byte(undiagnosable)
			} else {
				c, err := issuetest.Load(filepath.Join("../fixtures/incidents/cases", g.caseName))
				require.NoError(t, err)
				text = g.text(c)
			}
			path := filepath.Join(t.TempDir(), g.form)
			require.NoError(t, os.WriteFile(path, text, 0o644))
			got, r := issueComment(t, path, g.table)
			again, _ := issueComment(t, path, g.table)
			assert.Equal(t, got, again, "two runs differ")
			assert.Less(t, utf8.RuneCountInString(got), GitHubLimit)
			if g.text == nil {
				assert.False(t, r.diagnosable())
			}
			file := filepath.Join("testdata", "issue", g.name+".github.md")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "missing golden file; run go test ./reports -run TestIssueGolden -update")
			assert.Equal(t, string(want), got, "%s differs from its golden file", file)
		})
	}
}

// TestIssueUndiagnosable: an issue with nothing to read gets the request
// for evidence with the commands that collect it, and no verdict.
func TestIssueUndiagnosable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "issue.md")
	require.NoError(t, os.WriteFile(path, []byte(undiagnosable), 0o644))
	got, _ := issueComment(t, path, "")
	for _, s := range []string{"nothing to diagnose yet", "`python -m vllm.collect_env`", "`python -m sglang.check_env`",
		"`coroner collect --match vllm -o bundle.tar.zst`", "`nvidia-smi -q`"} {
		assert.Contains(t, got, s)
	}
	assert.NotContains(t, got, "Hypotheses")
	assert.NotContains(t, got, "@someone", "no ping")
	assert.Less(t, len(got), 2000, "short")
}

// hostileIssue builds an issue meant to break the comment: mentions,
// links, references, HTML, markdown that would close or open structures,
// an unclosed fence and 200 KB of log, with the hostile text also inside
// the evidence the brief quotes and the names it prints.
func hostileIssue() string {
	evil := "@everyone @org/team mail@evil.example [click](https://evil.example/a) https://evil.example/b www.evil.example " +
		"javascript:alert(1) <script>alert(1)</script> <img src=x onerror=alert(1)> </details> <!-- #1 owner/repo#2 GH-3 " +
		"| a | b | **bold** _em_ ``` ~~~"
	var log strings.Builder
	log.WriteString("[2025-01-01 10:00:00] server_args=ServerArgs(model_path='/models/" + evil + "', tp_size=2)\n")
	for log.Len() < 200<<10 {
		fmt.Fprintf(&log, "[2025-01-01 10:00:%02d TP0] Load weight begin. avail mem=78.50 GB %s\n", log.Len()%60, evil)
	}
	log.WriteString("[2025-01-01 10:01:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n")
	log.WriteString("  File \"/x/model_runner.py\", line 10, in init\n")
	log.WriteString("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. " + evil + "\n")
	log.WriteString("```\n</details>\n<details><summary>" + evil + "</summary>\n")
	env := "Python: 3.10.12\nCUDA available: True\nGPU 0,1: " + evil + "\nGPU 0,1 Compute Capability: 9.0\nPyTorch: 2.5.1\nsglang: 0.4.0\n"
	return "### Describe the bug " + evil + "\n\n" + evil + "\n\n<details><summary>" + evil + "</summary>\n\n" +
		"````\n" + log.String() + "````\n\n</details>\n\n### Environment\n\n```\n" + env + "```\n\n" +
		"Unfenced, with a mention:\nRuntimeError: CUDA error " + evil + "\n\n" +
		"```\nan unclosed fence " + evil + "\n"
}

var fenceLineRe = regexp.MustCompile("^(`{3,}|~{3,})")

// textOutsideCode is the text of the comment as a markdown parser reads it
// (gomarkdown, CommonMark's rules for escapes, code spans and fences),
// without its code: the text GitHub finds mentions, links and references
// in. Raw HTML counts as text, so that a test sees it.
func textOutsideCode(md string) string {
	doc := markdown.Parse([]byte(md), parser.NewWithExtensions(parser.CommonExtensions))
	var b strings.Builder
	ast.WalkFunc(doc, func(n ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.GoToNext
		}
		switch n := n.(type) {
		case *ast.Code, *ast.CodeBlock:
			return ast.SkipChildren
		case *ast.Text:
			b.Write(n.Literal)
			b.WriteByte('\n')
		case *ast.HTMLSpan:
			b.Write(n.Literal)
		case *ast.HTMLBlock:
			b.Write(n.Literal)
		}
		return ast.GoToNext
	})
	return b.String()
}

// TestIssueHostile: the comment on a hostile issue pings nobody, links
// nowhere, references no issue, holds no HTML and no open structure, and
// fits one comment.
func TestIssueHostile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "issue.md")
	require.NoError(t, os.WriteFile(path, []byte(hostileIssue()), 0o644))
	got, r := issueComment(t, path, "sglang")
	require.True(t, r.diagnosable(), "the OOM in the hostile log is still diagnosed")
	assert.Less(t, utf8.RuneCountInString(got), GitHubLimit)
	assert.Contains(t, got, "evil", "the hostile text is quoted, not dropped")

	text := textOutsideCode(got)
	assert.NotRegexp(t, `(^|[^\w`+"\u200b"+`])@[A-Za-z0-9]`, text, "a mention would ping")
	assert.NotRegexp(t, `(?i)(https?|javascript|ftp)://|javascript:[^`+"\u200b"+`]|www\.[a-z]`, text, "a URL would link")
	assert.NotRegexp(t, `#\d|GH-\d`, text, "a reference would link")
	assert.NotRegexp(t, `<[a-zA-Z!/]`, text, "raw HTML")
	assert.NotContains(t, got, "<details", "the comment opens no <details> of its own")

	// Every fence the comment opens, it closes.
	fence, opened := "", 0
	for _, l := range strings.Split(got, "\n") {
		switch {
		case fence != "" && strings.HasPrefix(l, fence) && strings.Trim(l, "`") == "":
			fence = ""
		case fence == "" && fenceLineRe.MatchString(l):
			fence = fenceLineRe.FindString(l)
			opened++
		}
	}
	assert.Empty(t, fence, "a fence left open")
	assert.Positive(t, opened)

	// As HTML (gomarkdown with autolinks, as close to GitHub as a library
	// gets): no link, no image, no script, no element the issue wrote.
	html := string(markdown.ToHTML([]byte(got), parser.NewWithExtensions(parser.CommonExtensions|parser.Autolink), nil))
	for _, bad := range []string{"<a ", "<img", "<script", "<details", "<summary"} {
		assert.NotContains(t, html, bad)
	}
	assert.NotRegexp(t, `<[^>]*onerror=`, html)
}

// FuzzIssueComment puts arbitrary text everywhere evidence reaches the
// answer to an issue (rule prose, names, quoted lines, labels) and checks
// that its text outside code pings, links and references nothing, that its
// fences close, and that it fits one comment.
func FuzzIssueComment(f *testing.F) {
	for _, s := range []string{
		"@everyone", "x@y.z", "https://evil.example", "www.evil.example", "javascript:alert(1)", "#1 o/r#2 GH-3",
		"`@a` ``@b`` \\`@c\\`", "```\n@x\n```", "&#64;x", "<a href=x>@y</a>", "@\u200bx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, undiagnosed := range []bool{false, true} {
			r := fuzzReport(s)
			r.Bundle.Sources = append(r.Bundle.Sources, Source{Path: "issue.md#1", Kind: "server-log",
				Part: &SourcePart{Of: "issue.md", How: "fence", FirstLine: 5, LastLine: 9}})
			r.Findings[0].Evidence = append(r.Findings[0].Evidence, Evidence{File: "issue.md#1", Line: 2, Text: s})
			r.Labels = []string{s}
			if undiagnosed {
				r.Verdict.Outcome, r.Verdict.Causes = "unknown", nil
			}
			var b bytes.Buffer
			if err := GitHub(&b, r, Excerpts{"issue.md#1": {1: s, 2: s, 3: s}}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if n := utf8.RuneCountInString(out); n > GitHubLimit {
				t.Fatalf("%d characters", n)
			}
			text := textOutsideCode(out)
			for _, re := range []*regexp.Regexp{
				regexp.MustCompile(`(^|[^\w\x{200b}])@[A-Za-z0-9]`),
				regexp.MustCompile(`(?i)(https?|ftp)://|javascript:[^\x{200b}]|www\.[a-z]`),
				regexp.MustCompile(`#\d|GH-\d`),
			} {
				if m := re.FindString(text); m != "" {
					t.Fatalf("%q left in the comment's text:\n%s", m, text)
				}
			}
		}
	})
}
