package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListingsWriteOutput: coroner sources and coroner timeline write to
// -o FILE as analyze does (the same bytes as on stdout) and refuse an
// input as -o (issue 18, item 9).
func TestListingsWriteOutput(t *testing.T) {
	for _, tc := range []struct{ cmd, format string }{{"sources", "table"}, {"sources", "json"}, {"timeline", "table"}, {"timeline", "json"}} {
		t.Run(tc.cmd+" "+tc.format, func(t *testing.T) {
			code, stdout, errs := runCLI(t, "", tc.cmd, "-f", tc.format, seedBundle)
			require.Equal(t, exitOK, code, errs)
			out := filepath.Join(t.TempDir(), "out")
			code, printed, errs := runCLI(t, "", tc.cmd, "-f", tc.format, "-o", out, seedBundle)
			require.Equal(t, exitOK, code, errs)
			assert.Empty(t, printed)
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, stdout, string(data))
			code, _, errs = runCLI(t, "", tc.cmd, "-o", filepath.Join(seedBundle, "server.log"), seedBundle)
			assert.Equal(t, exitInternal, code)
			assert.Contains(t, errs, "inside the bundle")
		})
	}
}

// TestTextWidth: --format text wraps at the terminal's width when stdout
// is one, and at 100 columns in a pipe or a file, whatever the window.
func TestTextWidth(t *testing.T) {
	tests := []struct {
		name      string
		tty       bool
		cols      int
		output    string
		wantWidth int
	}{
		{"a pipe", false, 0, "", 100},
		{"a wide terminal", true, 160, "", 160},
		{"a narrow terminal", true, 72, "", 72},
		{"a tiny terminal", true, 20, "", 40},
		{"a huge terminal", true, 500, "", 200},
		{"a terminal, but -o", true, 72, "x.txt", 100},
		{"a terminal of unknown width", true, 0, "-", 100},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.wantWidth, textWidth(&env{stdoutTTY: tc.tty, stdoutWidth: tc.cols}, tc.output), tc.name)
	}
	// The report itself on a 72-column terminal: prose and the header fit.
	var out, errb bytes.Buffer
	code := run([]string{"analyze", "-f", "text", "--color", "never", "--fail-on", "never", seedBundle},
		env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, stdoutTTY: true, stdoutWidth: 72})
	require.Equal(t, exitOK, code, errb.String())
	inTimeline := false
	for _, l := range strings.Split(out.String(), "\n") {
		inTimeline = strings.HasPrefix(l, "TIMELINE") || inTimeline && l != ""
		if !inTimeline {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), 72, l)
		}
	}
}

// TestHelpCitesNothingMissing: no --help cites DESIGN, which is not in the
// repository (issue 18, item 9).
func TestHelpCitesNothingMissing(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"analyze", "--help"}, {"sources", "--help"}, {"timeline", "--help"},
		{"diff", "--help"}, {"collect", "--help"}, {"bundle", "--help"}, {"rules", "list", "--help"}, {"rules", "explain", "--help"},
		{"rules", "test", "--help"}, {"rules", "calibrate", "--help"}} {
		code, out, errs := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, errs)
		assert.NotContains(t, out, "DESIGN", args)
	}
}
