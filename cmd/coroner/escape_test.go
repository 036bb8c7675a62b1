package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/gomarkdown/markdown"
	"github.com/gomarkdown/markdown/ast"
	"github.com/gomarkdown/markdown/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/internal/escape"
)

// The escaping suite: strings from a bundle (member names, GPU names,
// versions, environment values) reach every output escaped.

// hostileName goes before the name of every member of the seed bundle: a
// screen clear, an OSC 52 clipboard write, an OSC 8 hyperlink, a newline
// that would forge a line, an HTML tag, a C1 CSI and a bidi override.
const hostileName = "\x1b[2J" + "\x1b]52;c;cHduZWQ=\x07" + "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07" +
	"\nFORGED line " + "<svg onload=alert(1)>" + "\u009b2J" + "\b\u202e"

// hostileContent is put inside the seed's files, where the GPU name, the
// driver version and an environment value are read from. The OSC 8 here
// ends with ESC \ rather than BEL.
var hostileContent = []struct{ file, old, new string }{
	{"nvidia-smi-q.txt", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "NVIDIA <svg onload=alert(2)>\x1b[2J\x1b]52;c;eA==\x07 Blackwell"},
	{"nvidia-smi-q.txt", "580.105.08", "580<svg onload=alert(4)>\x1b]8;;https://evil.example/\x1b\\y\x1b]8;;\x1b\\"},
	{"launch.sh", "export NCCL_PROTO=LL", "export NCCL_PROTO='<svg onload=alert(3)>\x1b]8;;https://evil.example/\x1b\\y\x1b]8;;\x1b\\'"},
}

// seedTar is the seed bundle as a tar, each member's name after prefix,
// with the hostile content in place.
func seedTar(t *testing.T, prefix string) string {
	t.Helper()
	ms := dirMembers(t, seedBundle)
	for i := range ms {
		for _, c := range hostileContent {
			if ms[i].name == c.file {
				require.Contains(t, string(ms[i].data), c.old)
				ms[i].data = []byte(strings.ReplaceAll(string(ms[i].data), c.old, c.new))
			}
		}
		ms[i].name = prefix + ms[i].name
	}
	return string(tarBytes(t, ms))
}

// controls lists what a terminal could obey in s: C0 controls but tab and
// newline, DEL, C1 controls and bidi overrides.
func controls(s string) []string {
	var bad []string
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			bad = append(bad, fmt.Sprintf("%U", r))
		}
	}
	return bad
}

// detailsLine is a line of the <details> blocks coroner writes around
// evidence; the summary in it is escaped by the renderer.
var detailsLine = regexp.MustCompile(`(?m)^(<details( open)?><summary>[^<]*</summary>|</details>)$`)

// rawHTML lists the raw HTML a markdown renderer would pass through. The
// <details> lines coroner writes are blanked first: in CommonMark they are
// HTML blocks of their own that end at the blank line after them, so the
// fenced evidence between them is code, but gomarkdown would take the whole
// <details> element for one raw block.
func rawHTML(md string) []string {
	md = detailsLine.ReplaceAllString(md, "")
	doc := markdown.Parse([]byte(md), parser.NewWithExtensions(parser.CommonExtensions))
	var found []string
	ast.WalkFunc(doc, func(n ast.Node, entering bool) ast.WalkStatus {
		var lit []byte
		switch n := n.(type) {
		case *ast.HTMLSpan:
			lit = n.Literal
		case *ast.HTMLBlock:
			lit = n.Literal
		}
		s := strings.ToLower(string(lit))
		if entering && (strings.Contains(s, "svg") || strings.Contains(s, "onload")) {
			found = append(found, string(lit))
		}
		return ast.GoToNext
	})
	return found
}

// assertInert checks one output of a hostile bundle.
func assertInert(t *testing.T, what, out string, markdownOut bool) {
	t.Helper()
	assert.Empty(t, controls(out), "%s: control characters reach the output", what)
	// Sequences go whole, not just their ESC: no clipboard payload, no
	// link target is left behind as text.
	for _, rest := range []string{"52;c;", "]8;;", "evil.example"} {
		assert.NotContains(t, out, rest, "%s: part of an escape sequence is left", what)
	}
	if markdownOut {
		assert.Empty(t, rawHTML(out), "%s: raw HTML in the markdown", what)
	}
}

func TestBundleStringsAreEscapedEverywhere(t *testing.T) {
	hostile := seedTar(t, hostileName)
	// The twin names every member as escape.Line shows the hostile name:
	// an output that escapes a name everywhere is the same for both.
	twin := seedTar(t, escape.Line(hostileName))
	require.NotEqual(t, hostile, twin)
	tests := []struct {
		name     string
		args     []string
		markdown bool
		html     bool
	}{
		{"analyze md", []string{"analyze", "--fail-on", "never", "-"}, true, false},
		{"analyze html", []string{"analyze", "--fail-on", "never", "-f", "html", "-"}, false, true},
		{"analyze text", []string{"analyze", "--fail-on", "never", "-f", "text", "-"}, false, false},
		{"analyze github", []string{"analyze", "--fail-on", "never", "-f", "github", "-"}, true, false},
		{"sources", []string{"sources", "-"}, false, false},
		{"timeline", []string{"timeline", "-"}, false, false},
		{"diff, hostile as B", []string{"diff", seedBundle, "-"}, true, false},
		{"diff, hostile as A", []string{"diff", "-", seedBundle}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, hostile, tc.args...)
			require.Equal(t, exitOK, code, stderr)
			assertInert(t, "stdout", out, tc.markdown)
			assertInert(t, "stderr", stderr, false)
			if tc.html {
				assert.NotContains(t, out, "<svg onload", "a raw tag in the page")
			}
			_, want, _ := runCLI(t, twin, tc.args...)
			if tc.markdown || tc.html {
				// Evidence text may span lines (a probe's body); its
				// continuation lines are indented, so that a newline in a
				// name cited inside it cannot pose as a cited line. Folding
				// them compares the rest.
				fold := strings.NewReplacer("\n    ", " ")
				out, want = fold.Replace(out), fold.Replace(want)
			}
			assert.Equal(t, want, out, "a name is shown differently from its escaped twin somewhere")
		})
	}
}

// TestJSONEscapesBundleStrings: JSON keeps names as they are, escaped, so
// that no raw control character reaches a terminal that prints it: the
// encoder escapes ESC and newlines, but not DEL or the C1 controls
// (U+009B), which escape.JSON does.
func TestJSONEscapesBundleStrings(t *testing.T) {
	hostile := seedTar(t, hostileName)
	for _, args := range [][]string{
		{"analyze", "--fail-on", "never", "-f", "json", "-"},
		{"sources", "-f", "json", "-"},
		{"timeline", "-f", "json", "-"},
		{"diff", "-f", "json", seedBundle, "-"},
	} {
		code, out, stderr := runCLI(t, hostile, args...)
		require.Equal(t, exitOK, code, stderr)
		assert.Empty(t, controls(out), args)
		assert.Contains(t, out, `\u001b[2J`, "%v: the name is not kept", args)
		assert.NotContains(t, out, "\nFORGED", args)
	}
}

// TestRulesTestEscapesCaseNames runs `coroner rules test` on a case whose
// file and evidence names hold escape sequences and whose want is empty, so
// that the unexpected finding is printed with its place.
func TestRulesTestEscapesCaseNames(t *testing.T) {
	dir := t.TempDir()
	pack, err := os.ReadFile("../../fixtures/rulepack-example/site.rules.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "site.rules.yaml"), pack, 0o644))
	c, err := os.ReadFile("../../fixtures/rulepack-example/nccl-p2p-disabled.txtar")
	require.NoError(t, err)
	// A txtar name is a valid fs path on one line: no newline, no "//".
	evil := "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]8;;https:evil.example\x07click\x1b]8;;\x07<svg onload=alert(1)>\u009b2J"
	kase := strings.Replace(string(c), "-- launch.sh --", "-- "+evil+"launch.sh --", 1)
	kase = kase[:strings.Index(kase, "-- want --")] + "-- want --\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "\x1b[2J\x1b]52;c;cHduZWQ=\x07case\nFORGED.txtar"), []byte(kase), 0o644))
	// The pack's other rules need a case each that fires; the example's.
	for _, name := range []string{"acmefs-stale-handle.txtar", "model-on-nfs.txtar", "custom-ar-no-p2p-h200.txtar", "custom-ar-no-p2p-l40s.txtar", "nccl-p2p-level-only.txtar"} {
		data, err := os.ReadFile(filepath.Join("../../fixtures/rulepack-example", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	code, out, stderr := runCLI(t, "", "rules", "test", dir)
	require.Equal(t, exitFindings, code, stderr)
	assert.Contains(t, out, "unexpected finding acme-nccl-p2p-disabled")
	assertInert(t, "stdout", out, false)
	assertInert(t, "stderr", stderr, false)
	for _, l := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(l, "FORGED"), "a case's name forged a line: %q", l)
	}
}

// TestErrorMessagesAreEscaped: a message that quotes a name (here a bundle
// that is not there) prints it without what a terminal would obey.
func TestErrorMessagesAreEscaped(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "\x1b[2J\x1b]52;c;cHduZWQ=\x07bundle\x9b31m")
	code, _, stderr := runCLI(t, "", "analyze", missing)
	require.Equal(t, exitInput, code, stderr)
	assert.Contains(t, stderr, "cannot read bundle")
	assertInert(t, "stderr", stderr, false)
}
