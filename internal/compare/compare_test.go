package compare

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// load analyzes a bundle of the repository's fixtures; name is the path
// under fixtures/, which is also how the diff shows it.
func load(t *testing.T, name string) Run {
	t.Helper()
	f, err := parser.Parse([]string{filepath.Join("..", "..", "fixtures", name)}, parser.Options{})
	require.NoError(t, err)
	return Run{Path: "fixtures/" + name, Facts: f, Result: rules.Run(f, rules.Options{})}
}

func row(t *testing.T, d *Diff, id string) RateRow {
	t.Helper()
	for _, r := range d.Throughput.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no throughput row %s", id)
	return RateRow{}
}

func setting(d *Diff, key string) *SettingRow {
	for i := range d.Settings {
		if d.Settings[i].Key == key {
			return &d.Settings[i]
		}
	}
	return nil
}

// TestSlowAgainstTuned is the acceptance: the diff of the slow and
// the tuned SGLang runs names the attention backend and the NCCL variables
// and shows both throughputs.
func TestSlowAgainstTuned(t *testing.T) {
	d := Compare(load(t, "runtime/sglang-k25-baseline-63tps"), load(t, "runtime/sglang-k25-tuned-90tps"), "test")

	ss := row(t, d, "single_stream")
	require.NotNil(t, ss.A)
	require.NotNil(t, ss.B)
	assert.Equal(t, 63.6, round(*ss.A, 1))
	assert.Equal(t, 90.0, round(*ss.B, 1))
	require.NotNil(t, ss.Change)
	assert.InDelta(t, 41.5, *ss.Change, 0.1)
	assert.Equal(t, 120, ss.ALines)

	attn := setting(d, "attention_backend")
	require.NotNil(t, attn, "attention_backend must be among the differences")
	assert.Equal(t, "explicit", attn.Kind)
	assert.Equal(t, "triton", attn.A.Value)
	assert.False(t, attn.A.Explicit)
	assert.True(t, attn.B.Explicit)
	require.NotNil(t, attn.B.SetAt)
	assert.Equal(t, Ref{File: "launch.sh", Line: 13}, *attn.B.SetAt)

	steps := setting(d, "num_continuous_decode_steps")
	require.NotNil(t, steps)
	assert.Equal(t, "differs", steps.Kind)
	assert.Equal(t, "1", steps.A.Value)
	assert.Equal(t, "4", steps.B.Value)
	assert.Equal(t, "differs", d.Settings[0].Kind, "value differences come first")

	env := map[string]EnvRow{}
	for _, r := range d.Env {
		env[r.Name] = r
	}
	for name, want := range map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "NCCL_P2P_LEVEL": "SYS", "NCCL_IB_DISABLE": "1", "NCCL_MIN_NCHANNELS": "4", "CUDA_DEVICE_MAX_CONNECTIONS": "1"} {
		r, ok := env[name]
		require.True(t, ok, "%s must be among the differences", name)
		assert.Nil(t, r.A, name)
		require.NotNil(t, r.B, name)
		assert.Equal(t, want, r.B.Value, name)
		assert.Equal(t, "cmdline", r.B.From, name)
	}
	assert.Len(t, d.Env, 6)

	assert.Nil(t, d.Divergence, "both startups log the same milestones")
	assert.Positive(t, d.Milestones)
	for _, v := range d.Versions {
		assert.False(t, v.Differs, v.Component)
	}
	assert.False(t, d.GPUs.Differs)
	assert.Contains(t, d.GPUs.A, "8 × NVIDIA RTX PRO 6000 Blackwell Server Edition")

	var md bytes.Buffer
	require.NoError(t, Markdown(&md, d))
	for _, want := range []string{"63.6 tok/s (A) against 90.0 tok/s (B), +41.5%", "`attention_backend`", "`NCCL_PROTO`", "`NCCL_ALGO`", "`NCCL_P2P_LEVEL`"} {
		assert.Contains(t, md.String(), want)
	}
}

// TestAcrossEngines compares the vLLM run with the SGLang baseline: the
// engines' arguments meet under one name, phases stand in for log lines.
func TestAcrossEngines(t *testing.T) {
	d := Compare(load(t, "runtime/vllm-k25-82tps"), load(t, "runtime/sglang-k25-baseline-63tps"), "test")
	assert.Equal(t, "vllm", d.A.Engine)
	assert.Equal(t, "0.11.0", d.A.Version)
	assert.Equal(t, "sglang", d.B.Engine)
	assert.Equal(t, "0.5.8", d.B.Version)

	ss := row(t, d, "single_stream")
	assert.Equal(t, 82.5, round(*ss.A, 1))
	assert.Equal(t, 63.6, round(*ss.B, 1))

	// tensor_parallel_size=8 and tp_size=8 are the same setting with the
	// same value; model and model_path too.
	assert.Nil(t, setting(d, "tp_size"))
	assert.Nil(t, setting(d, "tensor_parallel_size"))
	assert.Nil(t, setting(d, "model_path"))
	ctx := setting(d, "context_length")
	require.NotNil(t, ctx)
	assert.Equal(t, "max_seq_len", ctx.A.Key)
	assert.Equal(t, "131072", ctx.A.Value)
	assert.Equal(t, "context_length", ctx.B.Key)
	// SGLang's mem_fraction_static and vLLM's gpu_memory_utilization
	// measure different things and are never aligned.
	gmu := setting(d, "gpu_memory_utilization")
	require.NotNil(t, gmu)
	assert.Equal(t, "only-a", gmu.Kind)
	mfs := setting(d, "mem_fraction_static")
	require.NotNil(t, mfs)
	assert.Equal(t, "only-b", mfs.Kind)

	require.NotNil(t, d.Divergence)
	assert.Equal(t, "phase", d.Divergence.Basis)
	assert.Equal(t, "weights-loading", d.Divergence.A.Kind)
	assert.Equal(t, "distributed-init", d.Divergence.B.Kind)

	versions := map[string]VersionRow{}
	for _, v := range d.Versions {
		versions[v.Component] = v
	}
	assert.Equal(t, VersionRow{Component: "torch", A: "2.8.0+cu128", B: "2.9.1+cu129", ARef: &Ref{"collect_env.txt", 15}, BRef: &Ref{"check_env.txt", 8}, Differs: true}, versions["torch"])
	assert.Equal(t, "2.27.3", versions["nccl"].A)
	assert.Equal(t, "2.27.5", versions["nccl"].B)
	assert.False(t, versions["driver"].Differs)
}

// TestAcceptance sets the drafter's acceptance beside the run without one.
func TestAcceptance(t *testing.T) {
	d := Compare(load(t, "runtime/sglang-k25-baseline-63tps"), load(t, "runtime/sglang-k25-eagle3-25pct"), "test")
	l := row(t, d, "accept_len")
	assert.Nil(t, l.A)
	require.NotNil(t, l.B)
	assert.InDelta(t, 1.25, *l.B, 0.01)
	r := row(t, d, "accept_rate_pct")
	assert.InDelta(t, 25, *r.B, 1)
	assert.Equal(t, 52.4, round(*row(t, d, "single_stream").B, 1))
	algo := setting(d, "speculative_algorithm")
	require.NotNil(t, algo)
	assert.Equal(t, "differs", algo.Kind)
	assert.Equal(t, "None", algo.A.Value)
	assert.Equal(t, "EAGLE3", algo.B.Value)
	// The drafter's startup adds a second weight load: the milestones part
	// ways after the target's.
	require.NotNil(t, d.Divergence)
	assert.Equal(t, "event", d.Divergence.Basis)
}

// TestHangAgainstReady finds where the seed's hung run stopped: after the
// last weight shard, where the ready run logged "Load weight end".
func TestHangAgainstReady(t *testing.T) {
	d := Compare(load(t, "seed/triton-sm120-ready"), load(t, "seed/flashinfer-sm120-hang"), "test")
	require.NotNil(t, d.Divergence)
	assert.Equal(t, "event", d.Divergence.Basis)
	require.NotNil(t, d.Divergence.A)
	assert.Equal(t, "load-end", d.Divergence.A.Kind)
	assert.Nil(t, d.Divergence.B)
	assert.Equal(t, "load-begin", d.Divergence.After.Kind)
	attn := setting(d, "attention_backend")
	require.NotNil(t, attn)
	assert.Equal(t, "differs", attn.Kind)
	assert.Equal(t, "flashinfer", attn.B.Value)
	assert.Equal(t, "hung", d.B.Outcome)

	var post *PhaseRow
	for i := range d.Phases {
		if d.Phases[i].Phase == "post-weights" {
			post = &d.Phases[i]
		}
	}
	require.NotNil(t, post)
	assert.False(t, post.A.Open)
	assert.True(t, post.B.Open)
	assert.Empty(t, d.Throughput.Rows, "neither run decoded")
}

// TestWithoutLogs compares a bundle of snapshots only (no server log) with a
// crashed run: nothing to line up but the verdicts, GPUs and versions.
func TestWithoutLogs(t *testing.T) {
	d := Compare(load(t, "corpus/h200-x2/00-idle"), load(t, "seed/flashinfer-sm120-crash"), "test")
	assert.Equal(t, "unknown", d.A.Engine)
	assert.Empty(t, d.Throughput.Rows)
	require.NotNil(t, d.Divergence)
	assert.Equal(t, "phase", d.Divergence.Basis)
	assert.Nil(t, d.Divergence.A)
	assert.Equal(t, "launch", d.Divergence.B.Kind)
	assert.True(t, d.GPUs.Differs)
	assert.Contains(t, d.GPUs.A, "2 × NVIDIA H200")
	var md bytes.Buffer
	require.NoError(t, Markdown(&md, d))
	assert.Contains(t, md.String(), "- A: nothing: no further milestone in its logs")
	assert.Contains(t, md.String(), "B is crashed")
}

func TestNorm(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"True", "true"}, {"true", "true"}, {"FALSE", "false"},
		{"None", ""}, {"null", ""}, {"", ""},
		{"'triton'", "triton"}, {`"x"`, "x"},
		{"['kimi-k2.5']", "kimi-k2.5"}, {"[1, 2]", "[1, 2]"},
		{" 8 ", "8"},
	} {
		assert.Equal(t, c.want, norm(c.in), c.in)
	}
}

// TestCode: values from a bundle become inline code, or escaped text where
// a backtick or a line break would end the code span or the table row
// (the reports' escaper, internal/escape).
func TestCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "-"},
		{"triton", "`triton`"},
		{"a|b", "`a\\|b`"},
		{"a`b", "a\\`b"},
		{"`x`", "\\`x\\`"},
		{"a|b\nc", "a\\|b c"},
		{"<svg onload=alert(1)>", "`<svg onload=alert(1)>`"},
		{"x\x1b]52;c;eA==\x07y\x1b[2J", "`xy`"},
	} {
		assert.Equal(t, c.want, code(c.in), c.in)
	}
}

// TestGolden renders whole diffs and compares them with testdata/; run
// `go test ./internal/compare -update` to rewrite them after checking the
// change by eye.
func TestGolden(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"baseline-vs-tuned", "runtime/sglang-k25-baseline-63tps", "runtime/sglang-k25-tuned-90tps"},
		{"vllm-vs-baseline", "runtime/vllm-k25-82tps", "runtime/sglang-k25-baseline-63tps"},
		{"baseline-vs-eagle3", "runtime/sglang-k25-baseline-63tps", "runtime/sglang-k25-eagle3-25pct"},
		{"ready-vs-hang", "seed/triton-sm120-ready", "seed/flashinfer-sm120-hang"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Compare(load(t, c.a), load(t, c.b), "test")
			var md, js bytes.Buffer
			require.NoError(t, Markdown(&md, d))
			require.NoError(t, JSON(&js, d))
			golden(t, filepath.Join("testdata", c.name+".md"), md.Bytes())
			golden(t, filepath.Join("testdata", c.name+".json"), js.Bytes())

			// The same bundles give the same bytes.
			var again bytes.Buffer
			require.NoError(t, JSON(&again, Compare(load(t, c.a), load(t, c.b), "test")))
			assert.Equal(t, js.String(), again.String())
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/compare -update to create it")
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (rewrite with -update after checking):\n%s", path, firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n- " + w + "\n+ " + g
		}
	}
	return ""
}
