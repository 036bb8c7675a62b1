package manifest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

var t0 = time.Date(2026, 11, 30, 4, 24, 37, 811000000, time.UTC)

func sample() *Manifest {
	return &Manifest{
		Format: Format, Version: Version, Tool: Tool{Name: "coroner", Version: "test"}, Command: "collect",
		Started: t0, Finished: t0.Add(64 * time.Second),
		Host:      &Host{Hostname: "gpu17", Clock: t0, Zone: "CET", UTCOffsetS: 3600, Root: true},
		Rounds:    []Round{{Dir: "round-01", N: 1, Start: t0, End: t0.Add(31 * time.Second)}, {Dir: "round-02", N: 2, Start: t0.Add(60 * time.Second), End: t0.Add(61 * time.Second)}},
		Redaction: Redaction{Enabled: true, Counts: map[string]int{"hf-token": 2}},
		Artifacts: []Artifact{
			{Path: "round-01/ps_eo.txt", Program: "ps", Command: "ps -eo pid,ppid,lstart,etimes,times,rss,vsz,stat,nlwp,comm,args -ww", Round: 1,
				Start: t0, End: t0.Add(40 * time.Millisecond), Bytes: 5120, SHA256: "ab"},
			{Program: "nvidia-smi", Command: "/opt/stub/nvidia-smi -q -x", Round: 1, Start: t0, End: t0.Add(30 * time.Second),
				ExitCode: -1, TimedOut: true, TimeoutS: 30},
			{Command: "py-spy dump --pid 41170", Start: t0, End: t0, ExitCode: -1, NotFound: true, Error: "executable file not found in $PATH"},
		},
	}
}

func encode(t *testing.T, m *Manifest) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Encode(&b, m))
	return b.String()
}

func parse(t *testing.T, path, text string) (*facts.Facts, []facts.Issue) {
	t.Helper()
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(text), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, facts.KindManifest, out)
	return out, issues
}

func lineOf(text, substr string) int {
	i := strings.Index(text, substr)
	if i < 0 {
		return 0
	}
	return strings.Count(text[:i], "\n") + 1
}

func TestEncodeOneArtifactPerLine(t *testing.T) {
	text := encode(t, sample())
	assert.True(t, strings.HasPrefix(text, "{\n  \"format\": \"coroner-manifest\",\n  \"version\": 1,\n"))
	assert.True(t, strings.HasSuffix(text, "\n  ]\n}\n"))
	for _, a := range []string{`{"path":"round-01/ps_eo.txt"`, `{"program":"nvidia-smi"`, `{"command":"py-spy dump --pid 41170"`} {
		line := lineOf(text, a)
		require.NotZero(t, line, a)
		l := strings.Split(text, "\n")[line-1]
		assert.True(t, strings.HasPrefix(l, "    {") && (strings.HasSuffix(l, "},") || strings.HasSuffix(l, "}")), l)
	}
}

func TestParse(t *testing.T) {
	text := encode(t, sample())
	f, issues := parse(t, "b/manifest.json", text)
	assert.Empty(t, issues)
	require.Len(t, f.Runs, 3)
	ps, smi, spy := f.Runs[0], f.Runs[1], f.Runs[2]
	assert.Equal(t, facts.Source{File: "b/manifest.json", Line: lineOf(text, `{"path":"round-01/ps_eo.txt"`)}, ps.Src)
	assert.Equal(t, "b/round-01/ps_eo.txt", ps.Path, "paths are relative to the manifest's folder")
	assert.Equal(t, "ps", ps.Program)
	assert.EqualValues(t, 5120, ps.Bytes)
	assert.Equal(t, 0, ps.ExitCode)

	assert.Equal(t, lineOf(text, `{"program":"nvidia-smi"`), smi.Src.Line)
	assert.True(t, smi.TimedOut)
	assert.Equal(t, 30*time.Second, smi.Timeout)
	assert.Equal(t, -1, smi.ExitCode)
	assert.Equal(t, "", smi.Path, "nothing was written")
	assert.Equal(t, t0.Add(30*time.Second), smi.End)

	assert.True(t, spy.NotFound)
	assert.Equal(t, "py-spy", spy.Program, "the program is read from the command when the record lacks it")

	require.Len(t, f.Capture, 2)
	assert.Equal(t, &facts.CaptureStamp{Src: facts.Source{File: "b/manifest.json", Line: lineOf(text, `"dir": "round-01"`) - 1}, At: t0, Scope: "b/round-01", Zoned: true}, f.Capture[0])
	assert.Equal(t, "b/round-02", f.Capture[1].Scope)
	assert.Equal(t, t0.Add(time.Minute), f.Capture[1].At)

	require.Len(t, f.Env, 1)
	assert.Equal(t, facts.EnvVar{Src: facts.Source{File: "b/manifest.json", Line: lineOf(text, `"host": {`)}, Name: "TZ_OFFSET_SECONDS", Value: "3600", From: "manifest"}, *f.Env[0])
}

func TestParseDamaged(t *testing.T) {
	text := encode(t, sample())
	cut := text[:strings.Index(text, `{"command":"py-spy`)+20]
	f, issues := parse(t, "manifest.json", cut)
	require.Len(t, issues, 1)
	assert.Equal(t, facts.IssueMalformed, issues[0].Kind)
	assert.Len(t, f.Runs, 2, "the artifacts before the damage are kept")
	assert.Len(t, f.Capture, 2)

	_, issues = parse(t, "manifest.json", `{"format": "something-else", "artifacts": []}`)
	require.Len(t, issues, 1)
	assert.Equal(t, facts.IssueUnrecognized, issues[0].Kind)

	f, issues = parse(t, "manifest.json", `{"format": "coroner-manifest", "version": 1, "host": "not an object", "rounds": [], "artifacts": [{"path": "x", "bytes": 3}]}`)
	assert.Empty(t, issues)
	assert.Len(t, f.Runs, 1, "a field of the wrong type costs only that field")
	assert.Empty(t, f.Env)
}

func TestSniff(t *testing.T) {
	text := encode(t, sample())
	tests := []struct {
		name, head string
		score      int
	}{
		{"manifest.json", text, 100},
		{"anything.json", text, 100},
		{"manifest.json", `{"artifacts": [], "made_by": "other"}`, 40},
		{"other.json", `{"artifacts": []}`, 0},
		{"server.log", "[2026-11-30 04:24:37] format: coroner-manifest", 0},
	}
	for _, tc := range tests {
		k, score := Sniff(tc.name, []byte(tc.head))
		assert.Equal(t, tc.score, score, tc.name)
		if score > 0 {
			assert.Equal(t, facts.KindManifest, k)
		}
	}
}

// A collect across a cluster names its nodes: each becomes a fact with its
// folder (under the manifest's), status and measured clock offset.
func TestParseNodes(t *testing.T) {
	m := sample()
	off := 7.25
	m.Cluster = &Cluster{Kind: "slurm", Tool: "srun", Job: "41"}
	m.Nodes = []Node{
		{Name: "gpu-b01", Dir: "nodes/gpu-b01", Host: "gpu-b01", State: "RUNNING", Status: "collected", ClockOffsetS: &off},
		{Name: "gpu-b02", Dir: "nodes/gpu-b02", Host: "gpu-b02", Status: "failed", Error: "did not answer: srun: error: Task launch failed"},
	}
	text := encode(t, m)
	f, issues := parse(t, "b/manifest.json", text)
	assert.Empty(t, issues)
	require.Len(t, f.Nodes, 2)
	a, b := f.Nodes[0], f.Nodes[1]
	assert.Equal(t, "b/nodes/gpu-b01", a.Dir)
	assert.True(t, a.HasClock)
	assert.Equal(t, 7250*time.Millisecond, a.ClockOffset)
	assert.Equal(t, "collected", a.Status)
	assert.Greater(t, b.Src.Line, a.Src.Line, "each node cites its own line")
	assert.Equal(t, "b/manifest.json", b.Src.File)
	assert.False(t, b.HasClock, "no clock was read from a node that did not answer")
	assert.Equal(t, "failed", b.Status)
	assert.Equal(t, "did not answer: srun: error: Task launch failed", b.Error)
}
