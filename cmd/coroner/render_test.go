package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runTTY runs coroner with stdout marked as a terminal.
func runTTY(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, stdoutTTY: true})
	return code, out.String(), errb.String()
}

func TestAnalyzeFormats(t *testing.T) {
	tests := []struct {
		format string
		prefix string // how the output starts
		has    string
	}{
		{"md", "# coroner postmortem: ", "```mermaid\ngantt\n"},
		{"markdown", "# coroner postmortem: ", "## What to do"},
		{"html", "<!DOCTYPE html>\n", `<svg class="timeline"`},
		{"json", "{\n  \"schema_version\": 1,", `"environment": {`},
		{"text", "coroner postmortem: ", "WHAT TO DO"},
		{"github", "### coroner: hung in post-weights", "> 13 |   --attention-backend flashinfer \\"},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			code, out, errs := runCLI(t, "", "analyze", "--fail-on", "never", "--format", tc.format, seedBundle)
			require.Equal(t, exitOK, code, errs)
			assert.True(t, strings.HasPrefix(out, tc.prefix), "%.80q", out)
			assert.Contains(t, out, tc.has)
			assert.Empty(t, errs)
		})
	}
}

func TestAnalyzeBrief(t *testing.T) {
	_, brief, _ := runCLI(t, "", "analyze", "--fail-on", "never", "--brief", seedBundle)
	_, github, _ := runCLI(t, "", "analyze", "--fail-on", "never", "--format", "github", seedBundle)
	assert.Equal(t, github, brief)
	assert.Less(t, len([]rune(brief)), 60000)
}

// TestBriefFromArchive: the brief quotes context from inside an archive,
// under the names the report uses.
func TestBriefFromArchive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seed.tar.zst")
	require.NoError(t, os.WriteFile(p, zst(t, tarBytes(t, dirMembers(t, seedBundle))), 0o644))
	code, out, errs := runCLI(t, "", "analyze", "--fail-on", "never", "--brief", p)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "> 13 |   --attention-backend flashinfer \\")
	assert.Contains(t, out, "> 225 | Loading safetensors checkpoint shards: 100% Completed | 64/64")
}

// TestBriefSeveralBundles: with two bundles each file is named under its
// bundle, and the brief finds the lines there.
func TestBriefSeveralBundles(t *testing.T) {
	code, out, errs := runCLI(t, "", "analyze", "--fail-on", "never", "--brief", seedBundle, idleBundle)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "flashinfer-sm120-hang/launch.sh\n")
	assert.Contains(t, out, "> 13 |   --attention-backend flashinfer \\")
}

func TestTextColor(t *testing.T) {
	esc := "\x1b["
	tests := []struct {
		name    string
		tty     bool
		noColor string
		args    []string
		color   bool
	}{
		{"terminal", true, "", nil, true},
		{"pipe", false, "", nil, false},
		{"NO_COLOR on a terminal", true, "1", nil, false},
		{"empty NO_COLOR is unset", true, "", nil, true},
		{"always through a pipe", false, "", []string{"--color", "always"}, true},
		{"never on a terminal", true, "", []string{"--color", "never"}, false},
		{"always beats NO_COLOR", true, "1", []string{"--color", "always"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.noColor != "" {
				t.Setenv("NO_COLOR", tc.noColor)
			} else {
				t.Setenv("NO_COLOR", "")
			}
			args := append([]string{"analyze", "--fail-on", "never", "--format", "text"}, tc.args...)
			args = append(args, seedBundle)
			var code int
			var out, errs string
			if tc.tty {
				code, out, errs = runTTY(t, args...)
			} else {
				code, out, errs = runCLI(t, "", args...)
			}
			require.Equal(t, exitOK, code, errs)
			assert.Equal(t, tc.color, strings.Contains(out, esc))
		})
	}
}

// TestTextToFileIsPlain: a report written with -o has no colour even when
// stdout is a terminal.
func TestTextToFileIsPlain(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	p := filepath.Join(t.TempDir(), "report.txt")
	code, _, errs := runTTY(t, "analyze", "--fail-on", "never", "--format", "text", "-o", p, seedBundle)
	require.Equal(t, exitOK, code, errs)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "\x1b[")
	assert.Contains(t, string(data), "HUNG  in post-weights")
}

func TestTimelineCommand(t *testing.T) {
	code, out, errs := runCLI(t, "", "timeline", seedBundle)
	require.Equal(t, exitOK, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Regexp(t, `^PROCESS +PHASE +START +END +DURATION +EVIDENCE$`, lines[0])
	assert.Contains(t, lines, "TP0      weights-loading   2026-02-10T00:28:19Z  2026-02-10T00:38:01Z         10 min    server.log:144")
	assert.Contains(t, out, "2026-02-10T01:55:12Z (open)")

	code, out, errs = runCLI(t, "", "timeline", "--format", "json", seedBundle)
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "[\n  {\n    \"process\": \"main\""))
}
