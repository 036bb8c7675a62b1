package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/issue/issuetest"
	"github.com/coroner-dev/coroner/rules"
)

// incidentsDir is the labeled incidents the agreement test builds issues
// from; CORONER_INCIDENTS points it at another set of the same layout
// (../shared/corpus/incidents) for a one-off measurement.
func incidentsDir() string {
	if d := os.Getenv("CORONER_INCIDENTS"); d != "" {
		return d
	}
	return "../fixtures/incidents"
}

// verdictOf is what the agreement compares: the outcome, the phase and
// the ranked cause categories.
func verdictOf(r *Report) string {
	var cs []string
	for _, c := range r.Verdict.Causes {
		cs = append(cs, c.Category)
	}
	return fmt.Sprintf("%s / %s / [%s]", r.Verdict.Outcome, r.Verdict.Phase, strings.Join(cs, " "))
}

// issueForms writes the issue forms of a case into dir and returns their
// paths by form.
func issueForms(t *testing.T, c issuetest.Case, dir string) map[string]string {
	t.Helper()
	forms := map[string][]byte{
		"issue.md":           []byte(c.Markdown()),
		"issue.json":         c.GHJSON(),
		"event-opened.json":  c.Event("opened"),
		"event-comment.json": c.Event("created"),
	}
	out := map[string]string{}
	for name, b := range forms {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		out[name] = p
	}
	return out
}

// caseFolder copies a case's evidence (not case.md) to a folder of its own.
func caseFolder(t *testing.T, c issuetest.Case, dir string) string {
	t.Helper()
	d := filepath.Join(dir, "folder")
	require.NoError(t, os.MkdirAll(d, 0o755))
	for name, text := range c.Files {
		require.NoError(t, os.WriteFile(filepath.Join(d, name), []byte(text), 0o644))
	}
	return d
}

func analyzeQuiet(t *testing.T, path string) *Report {
	t.Helper()
	f, err := parser.Parse([]string{path}, parser.Options{Bundle: bundle.Defaults()})
	require.NoError(t, err)
	return Build(f, rules.Run(f, rules.Options{}), Meta{Path: filepath.Base(path), Version: "test"})
}

// TestIssueAgreement builds, for every incident folder, the issue a
// reporter would write from it (the log in a fence, the environment in a
// <details>, the command in a fence, prose around them) as a markdown file,
// as gh's issue JSON (evidence spread over body and comments) and as two
// Actions event payloads, and checks that each gets the folder's verdict:
// the same outcome, phase and ranked cause categories.
func TestIssueAgreement(t *testing.T) {
	root := filepath.Join(incidentsDir(), "cases")
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	agree := map[string]int{}
	total := 0
	var diffs []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c, err := issuetest.Load(filepath.Join(root, e.Name()))
		require.NoError(t, err)
		require.Empty(t, c.Extra(), "%s: files an issue built from it would leave out", c.Name)
		total++
		dir := t.TempDir()
		want := verdictOf(analyzeQuiet(t, caseFolder(t, c, dir)))
		forms := issueForms(t, c, dir)
		// Measured, not required: the log pasted with no fence.
		up := filepath.Join(dir, "unfenced.md")
		require.NoError(t, os.WriteFile(up, []byte(c.Unfenced()), 0o644))
		if got := verdictOf(analyzeQuiet(t, up)); got == want {
			agree["unfenced.md"]++
		} else {
			t.Logf("unfenced log: %s: folder %s, issue %s", c.Name, want, got)
		}
		names := make([]string, 0, len(forms))
		for n := range forms {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			got := verdictOf(analyzeQuiet(t, forms[n]))
			if got == want {
				agree[n]++
			} else {
				diffs = append(diffs, fmt.Sprintf("%s %s: folder %s, issue %s", c.Name, n, want, got))
			}
		}
	}
	for _, n := range []string{"issue.md", "issue.json", "event-opened.json", "event-comment.json", "unfenced.md"} {
		t.Logf("%s: %d of %d cases get the folder's verdict", n, agree[n], total)
	}
	assert.Empty(t, diffs, "issues built from the incident folders must get the folders' verdicts")
}
