package reports

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGitHubSeed checks what the brief of the seed quotes: the cited lines
// with two lines of context, the cited ones marked.
func TestGitHubSeed(t *testing.T) {
	path := "../fixtures/seed/flashinfer-sm120-hang"
	r := analyze(t, "seed", path)
	var buf bytes.Buffer
	require.NoError(t, GitHub(&buf, r, excerpts(t, path, r)))
	out := buf.String()
	assert.Less(t, utf8.RuneCountInString(out), GitHubLimit)
	assert.True(t, strings.HasPrefix(out, "### coroner: hung in post-weights, silent 77 min\n"))
	// The flag the attention-backend rule cites, launch.sh:13, quoted as the
	// file has it, between its neighbours.
	assert.Contains(t, out, "  12 |   --trust-remote-code \\\n> 13 |   --attention-backend flashinfer \\\n  14 |   --num-continuous-decode-steps 4 \\\n")
	// The last log line, server.log:225, is the tqdm bar's final state.
	assert.Contains(t, out, "> 225 | Loading safetensors checkpoint shards: 100% Completed | 64/64 [09:41<00:00, 9.08s/it]\n")
	// A ps row the stall rule cites, quoted raw.
	assert.Contains(t, out, ">  8 | ubuntu   72309 99.4 12.1 1180283116 256901120 ?  Rl   00:28  87:02 sglang::scheduler_TP0\n")
	// A line quoted once is referred to afterwards.
	assert.Equal(t, 1, strings.Count(out, "> 225 |"))
	assert.Contains(t, out, "(quoted above)")
	// The remedy of the top cause comes first.
	assert.Contains(t, out, "**What to do**\n\n1. Restart with `--attention-backend triton`")
	// Lines no finding cites stay out (the ServerArgs dump's neighbours are
	// context of server.log:4; line 100 is nobody's).
	assert.NotContains(t, out, "\n  100 |")
}

// TestGitHubWithoutExcerpts: with no bundle to read (stdin), the brief
// quotes the cited text alone.
func TestGitHubWithoutExcerpts(t *testing.T) {
	r := analyze(t, "seed", "../fixtures/seed/flashinfer-sm120-hang")
	var buf bytes.Buffer
	require.NoError(t, GitHub(&buf, r, nil))
	assert.Contains(t, buf.String(), "> 13 | attention_backend = flashinfer (cmdline)\n")
}

// TestGitHubLimit builds a report with far more evidence than one comment
// holds and checks the brief stays under the limit and says what it left out.
func TestGitHubLimit(t *testing.T) {
	r := &Report{Tool: Tool{Name: "coroner", Version: "test"}, Bundle: Bundle{Path: "big"},
		Verdict: Verdict{Outcome: "crashed", Phase: "warmup", Summary: "Crashed in warmup."}}
	long := strings.Repeat("x", 5000)
	ex := Excerpts{}
	for i := 0; i < 200; i++ {
		f := Finding{Rule: fmt.Sprintf("rule-%03d", i), Title: "finding", Severity: "error", Message: "m", Remedy: fmt.Sprintf("fix %d", i)}
		file := fmt.Sprintf("log%03d.txt", i)
		ex[file] = map[int]string{}
		for l := 1; l <= 30; l++ {
			ex[file][l] = fmt.Sprintf("%d %s", l, long)
			if l%3 == 0 {
				f.Evidence = append(f.Evidence, Evidence{File: file, Line: l, Text: long})
			}
		}
		r.Findings = append(r.Findings, f)
	}
	var buf bytes.Buffer
	require.NoError(t, GitHub(&buf, r, ex))
	out := buf.String()
	n := utf8.RuneCountInString(out)
	assert.Less(t, n, GitHubLimit)
	assert.Greater(t, n, GitHubLimit/2, "the brief uses the room it has")
	assert.Regexp(t, `\*Evidence of \d+ more findings left out to fit one comment\.\*`, out)
	assert.True(t, strings.HasSuffix(out, "The full postmortem: `coroner analyze --format md`.*\n"))
	assert.Equal(t, 0, strings.Count(out, "```")%2, "every fence is closed")
}

// TestReadExcerpts reads wanted lines the way the parsers number them:
// CRLF endings dropped, an over-long line cut, reading stopped after the
// last wanted line.
func TestReadExcerpts(t *testing.T) {
	files := map[string]string{
		"a.log":  "one\r\ntwo\r\nthree\r\n",
		"b.log":  "1\n" + strings.Repeat("y", 10000) + "\n3\n4",
		"c.log":  "not wanted\n",
		"nl.log": "x\n\n\nlast",
	}
	walk := func(visit func(string, io.Reader) error) error {
		for _, name := range []string{"a.log", "b.log", "c.log", "nl.log"} {
			if err := visit(name, strings.NewReader(files[name])); err != nil {
				return err
			}
		}
		return nil
	}
	ex, err := ReadExcerpts(walk, map[string][]int{"a.log": {2, 3}, "b.log": {2, 4}, "nl.log": {3, 4, 5}})
	require.NoError(t, err)
	assert.Equal(t, map[int]string{2: "two", 3: "three"}, ex["a.log"])
	assert.Len(t, ex["b.log"][2], maxExcerptLine)
	assert.Equal(t, "4", ex["b.log"][4])
	assert.Equal(t, map[int]string{3: "", 4: "last"}, ex["nl.log"])
	assert.NotContains(t, ex, "c.log")
}
