package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
)

// Real logs of fixtures/corpus/fulllogs.
const full = "../../fixtures/corpus/fulllogs/"

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(full + name + "/server.log")
	require.NoError(t, err)
	return string(b)
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func split(t *testing.T, dir string) []*Run {
	t.Helper()
	f, err := parser.Parse([]string{dir}, parser.Options{})
	require.NoError(t, err)
	return Split(f)
}

// Several real logs, a folder each, as people keep them: one run each, in
// the order they started.
func TestFoldersOfLogsAreRuns(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/server.log", read(t, "sglang-glm5-tp8-mi355x-graphcrash"))      // 2026-02-26
	write(t, dir, "b/server.log", read(t, "sglang-qwq32b-tp4-l4"))                   // 2025-03-08
	write(t, dir, "c/server.log", read(t, "vllm-qwen25-32b-tp4-ray-placement-hang")) // 2025-05-26
	rs := split(t, dir)
	require.Len(t, rs, 3)
	for i, want := range []string{"b/server.log", "c/server.log", "a/server.log"} {
		assert.Equal(t, i+1, rs[i].ID)
		require.Len(t, rs[i].Parts, 1)
		assert.Equal(t, want, rs[i].Parts[0].Path)
		require.Len(t, rs[i].Facts.Logs, 1)
		assert.Equal(t, want, rs[i].Facts.Logs[0].Path)
		assert.Equal(t, "its own log: "+want, rs[i].Why)
	}
	assert.True(t, rs[0].Start.Before(rs[1].Start) && rs[1].Start.Before(rs[2].Start))
}

// Two real logs appended into one file (nohup ... >> server.log): two runs,
// cut where the second launch's stamped lines begin; line numbers stay the
// file's.
func TestAppendedLogIsTwoRuns(t *testing.T) {
	first := read(t, "sglang-spark-laguna-nvfp4-capture-stall") // 66 lines, 21:40-21:51
	second := read(t, "sglang-spark-laguna-int4")               // 397 lines, 23:37-00:17
	dir := t.TempDir()
	write(t, dir, "server.log", first+second)
	rs := split(t, dir)
	require.Len(t, rs, 2)
	n1 := strings.Count(first, "\n")
	// The second log's first lines are unstamped warnings, then its
	// stamped preamble before server_args: the cut is at that preamble.
	var firstStamped int
	for i, l := range strings.Split(second, "\n") {
		if strings.HasPrefix(l, "[2026-") {
			firstStamped = n1 + i + 1
			break
		}
	}
	assert.Equal(t, Part{Path: "server.log", From: 1, To: firstStamped - 1}, rs[0].Parts[0])
	assert.Equal(t, Part{Path: "server.log", From: firstStamped, To: n1 + strings.Count(second, "\n")}, rs[1].Parts[0])
	assert.Equal(t, "the first launch in server.log", rs[0].Why)
	assert.Contains(t, rs[1].Why, "a launch at server.log:")
	for _, e := range rs[0].Facts.Logs[0].Events {
		assert.LessOrEqual(t, e.Src.Line, firstStamped-1)
	}
	for _, e := range rs[1].Facts.Logs[0].Events {
		assert.GreaterOrEqual(t, e.Src.Line, firstStamped)
	}
	// A bar of the second launch does not continue the first launch's bar
	// of the same description.
	for _, b := range rs[0].Facts.Logs[0].Bars {
		assert.Less(t, b.Src.Line, firstStamped, "bar %q", b.Desc)
	}
}

// A rotated log's pieces are one log, one run.
func TestRotatedPiecesAreOneRun(t *testing.T) {
	text := read(t, "sglang-spark-laguna-int4")
	lines := strings.SplitAfter(text, "\n")
	dir := t.TempDir()
	write(t, dir, "server.log.1", strings.Join(lines[:200], ""))
	write(t, dir, "server.log", strings.Join(lines[200:], ""))
	rs := split(t, dir)
	require.Len(t, rs, 1)
	assert.Len(t, rs[0].Facts.Logs, 2)
}

// A bundle of one run is the bundle itself.
func TestOneRunIsTheBundle(t *testing.T) {
	f, err := parser.Parse([]string{full + "sglang-qwq32b-tp4-l4"}, parser.Options{})
	require.NoError(t, err)
	rs := Split(f)
	require.Len(t, rs, 1)
	assert.Same(t, f, rs[0].Facts)
}
