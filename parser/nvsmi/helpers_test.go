package nvsmi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
	"github.com/stretchr/testify/require"
)

const corpus = "../../fixtures/corpus/"

// parsed is what one file yields.
type parsed struct {
	kind   facts.Kind
	score  int
	out    *facts.Facts
	issues []facts.Issue
}

// sniffParse detects a file's kind as the orchestrator would and parses it.
func sniffParse(t testing.TB, path string) parsed {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	head := data
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	kind, score := Sniff(filepath.Base(path), head)
	p := parseString(path, string(data), kind)
	p.score = score
	return p
}

func parseString(path, text string, kind facts.Kind) parsed {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(text), 0, func(i facts.Issue) { issues = append(issues, i) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, kind, out)
	return parsed{kind: kind, out: out, issues: issues}
}

func sniffOnly(t testing.TB, path string) parsed {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	if len(data) > 8<<10 {
		data = data[:8<<10]
	}
	kind, score := Sniff(filepath.Base(path), data)
	return parsed{kind: kind, score: score}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
