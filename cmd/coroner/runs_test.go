package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type runsReport struct {
	Verdict struct {
		Outcome string `json:"outcome"`
		Phase   string `json:"phase"`
		Summary string `json:"summary"`
	} `json:"verdict"`
	Runs []struct {
		ID       int      `json:"id"`
		Sources  []string `json:"sources"`
		Selected bool     `json:"selected"`
		Verdict  struct {
			Outcome string `json:"outcome"`
			Phase   string `json:"phase"`
			Summary string `json:"summary"`
		} `json:"verdict"`
	} `json:"runs"`
}

func runsJSON(t *testing.T, args ...string) runsReport {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"analyze", "-f", "json", "--fail-on", "never"}, args...)...)
	require.Equal(t, 0, code, errOut)
	var r runsReport
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	return r
}

func copyLog(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../fixtures/corpus/fulllogs", from, "server.log"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
	require.NoError(t, os.WriteFile(to, b, 0o644))
	return string(b)
}

// Issue 16's acceptance: a bundle of several real logs (a folder each)
// gets one run per log, each with the verdict it gets alone; two real logs
// appended into one file give two runs; the top-level verdict is the
// later run's, and --run picks another.
func TestRunsGetTheVerdictTheyGetAlone(t *testing.T) {
	dir := t.TempDir()
	logs := []struct{ folder, log string }{
		{"b", "sglang-qwq32b-tp4-l4"},                   // 2025-03-08, ready
		{"c", "vllm-qwen25-32b-tp4-ray-placement-hang"}, // 2025-05-26, hung
		{"a", "sglang-glm5-tp8-mi355x-graphcrash"},      // 2026-02-26, crashed
	}
	for _, l := range logs {
		copyLog(t, l.log, filepath.Join(dir, l.folder, "server.log"))
	}
	all := runsJSON(t, dir)
	require.Len(t, all.Runs, 3)
	for i, l := range logs {
		alone := runsJSON(t, filepath.Join("../../fixtures/corpus/fulllogs", l.log))
		assert.Empty(t, alone.Runs, "one log alone is one run")
		r := all.Runs[i]
		assert.Equal(t, []string{l.folder + "/server.log:1-" + lineCount(t, l.log)}, r.Sources)
		assert.Equal(t, alone.Verdict, r.Verdict, "run %d (%s)", r.ID, l.log)
	}
	assert.True(t, all.Runs[2].Selected)
	assert.Equal(t, all.Runs[2].Verdict, all.Verdict, "the top-level verdict is the latest run's")

	one := runsJSON(t, "--run", "1", dir)
	assert.True(t, one.Runs[0].Selected)
	assert.Equal(t, all.Runs[0].Verdict, one.Verdict)

	// Appended: the capture stall first, the INT4 run that came up after.
	cat := t.TempDir()
	a := copyLog(t, "sglang-spark-laguna-nvfp4-capture-stall", filepath.Join(cat, "x"))
	b := copyLog(t, "sglang-spark-laguna-int4", filepath.Join(cat, "y"))
	require.NoError(t, os.WriteFile(filepath.Join(cat, "server.log"), []byte(a+b), 0o644))
	require.NoError(t, os.Remove(filepath.Join(cat, "x")))
	require.NoError(t, os.Remove(filepath.Join(cat, "y")))
	two := runsJSON(t, cat)
	require.Len(t, two.Runs, 2)
	for i, l := range []string{"sglang-spark-laguna-nvfp4-capture-stall", "sglang-spark-laguna-int4"} {
		alone := runsJSON(t, filepath.Join("../../fixtures/corpus/fulllogs", l))
		assert.Equal(t, alone.Verdict, two.Runs[i].Verdict, "run %d (%s)", i+1, l)
	}
	assert.Equal(t, "ready", two.Verdict.Outcome, "the later run came up")
	code, _, errOut := runCLI(t, "", "analyze", "--run", "3", cat)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--run 3: the bundle holds 2 run(s)")
}

func lineCount(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../fixtures/corpus/fulllogs", log, "server.log"))
	require.NoError(t, err)
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return itoa(n)
}

func itoa(n int) string { return strconv.Itoa(n) }
