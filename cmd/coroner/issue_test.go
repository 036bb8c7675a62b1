package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/issue/issuetest"
)

// An issue read from a file, from stdin, with and without a label table,
// and one with nothing to diagnose, through the command line.
func TestAnalyzeIssue(t *testing.T) {
	c, err := issuetest.Load("../../fixtures/incidents/cases/vllm-23278")
	require.NoError(t, err)
	dir := t.TempDir()
	md := filepath.Join(dir, "issue.md")
	require.NoError(t, os.WriteFile(md, []byte(c.Markdown()), 0o644))
	thin := filepath.Join(dir, "thin.md")
	require.NoError(t, os.WriteFile(thin, []byte("### 🐛 Describe the bug\n\nvllm serve hangs, @anyone?\n"), 0o644))

	code, out, errs := runCLI(t, "", "analyze", md, "--brief", "--labels", "vllm")
	assert.Equal(t, exitFindings, code, errs)
	assert.Contains(t, out, "### coroner: crashed in kv-cache")
	assert.Contains(t, out, "the issue, lines ")
	assert.Contains(t, out, "**Suggested labels:** `bug`")

	// From stdin the brief quotes the cited lines alone (stdin is read once).
	code, out, errs = runCLI(t, c.Markdown(), "analyze", "-", "--format", "github")
	assert.Equal(t, exitFindings, code, errs)
	assert.Contains(t, out, "### coroner: crashed in kv-cache")
	assert.Contains(t, out, "(a fenced block, stdin#")

	code, out, errs = runCLI(t, "", "analyze", md, "-f", "json", "--labels", "vllm")
	assert.Equal(t, exitFindings, code, errs)
	var rep struct {
		Labels []string `json:"labels"`
		Bundle struct {
			Sources []struct {
				Path, Kind string
				Part       *struct {
					Of        string `json:"of"`
					How       string `json:"how"`
					FirstLine int    `json:"first_line"`
				} `json:"part"`
			} `json:"sources"`
		} `json:"bundle"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, []string{"bug"}, rep.Labels)
	require.NotEmpty(t, rep.Bundle.Sources)
	assert.Equal(t, "markdown", rep.Bundle.Sources[0].Kind)
	for _, s := range rep.Bundle.Sources[1:] {
		require.NotNil(t, s.Part, s.Path)
		assert.Equal(t, "issue.md", filepath.Base(s.Part.Of))
		assert.Positive(t, s.Part.FirstLine)
	}

	// Nothing to diagnose: an answer that asks, not an error.
	code, out, errs = runCLI(t, "", "analyze", thin, "--brief")
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "nothing to diagnose yet")
	assert.NotContains(t, out, "@anyone")

	code, _, errs = runCLI(t, "", "analyze", md, "--labels", "nosuch")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "the built-in tables: sglang, vllm")

	code, out, _ = runCLI(t, "", "sources", md)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "issue.md#1")
}
