package labels

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinTables(t *testing.T) {
	assert.Equal(t, []string{"sglang", "vllm"}, Names())
	for _, n := range Names() {
		tb, err := Load(n)
		require.NoError(t, err, n)
		assert.NotEmpty(t, tb.Repository)
	}
	assert.Equal(t, "vllm", ForRepository("vllm-project/vllm"))
	assert.Equal(t, "sglang", ForRepository("SGL-Project/SGLang"))
	assert.Equal(t, "", ForRepository("someone/else"))
}

func TestFor(t *testing.T) {
	vllm, err := Load("vllm")
	require.NoError(t, err)
	sglang, err := Load("sglang")
	require.NoError(t, err)
	compile := Input{Outcome: "crashed", Phase: "torch-compile", Causes: []Cause{{"jit-compile", 0.73}}}
	assert.Equal(t, []string{"bug", "torch.compile"}, vllm.For(compile))
	assert.Equal(t, []string{"bug", "jit-kernel"}, sglang.For(compile))

	amd := Input{Outcome: "hung", Phase: "distributed-init", Causes: []Cause{{"collective-hang", 0.6}},
		GPUs: []GPU{{Model: "AMD Instinct MI300X", Arch: "CDNA3"}}}
	assert.Equal(t, []string{"bug", "rocm"}, vllm.For(amd))
	assert.Equal(t, []string{"amd", "bug"}, sglang.For(amd))

	blackwell := Input{Outcome: "crashed", Causes: []Cause{{"attention-backend", 0.8}}, GPUs: []GPU{{Model: "NVIDIA RTX PRO 6000", Arch: "Blackwell"}}}
	assert.Equal(t, []string{"blackwell", "bug", "flashinfer"}, sglang.For(blackwell))

	weak := Input{Outcome: "crashed", Causes: []Cause{{"dependency-mismatch", 0.3}}}
	assert.Equal(t, []string{"bug"}, vllm.For(weak), "a weak guess adds no cause label")
	assert.Equal(t, []string{"usage"}, vllm.For(Input{Outcome: "ready", Phase: "serving"}))
	assert.Empty(t, vllm.For(Input{Outcome: "unknown"}))
	assert.False(t, Diagnosable(Input{Outcome: "unknown"}))
	assert.True(t, Diagnosable(Input{Outcome: "unknown", Causes: []Cause{{"config", 0.5}}}))
}

func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "labels.yaml")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	good, err := Load(write("cause:\n  gpu-oom: [memory]\nundiagnosed: [needs-info]\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"needs-info"}, good.For(Input{Outcome: "unknown"}))
	assert.Equal(t, []string{"memory"}, good.For(Input{Outcome: "crashed", Causes: []Cause{{"gpu-oom", 0.9}}}))

	for text, msg := range map[string]string{
		"cause:\n  oom: [x]\n":                         `"oom" is not a cause category`,
		"phase:\n  loading: [x]\n":                     `"loading" is not a phase`,
		"outcome:\n  dead: [x]\n":                      `"dead" is not an outcome`,
		"cause:\n  gpu-oom: [\"a,b\"]\n":               "not a label GitHub accepts",
		"cause:\n  gpu-oom: [\" x\"]\n":                "not a label GitHub accepts",
		"causes:\n  gpu-oom: [x]\n":                    "unknown field",
		"min_confidence: 2\n":                          "between 0 and 1",
		"gpu:\n  Blackwell: [x]\n":                     `"Blackwell" is not a GPU vendor`,
		"cause: [x]\n":                                 "labels.yaml",
		"undiagnosed: [\"" + string(rune(7)) + "\"]\n": "not a label",
	} {
		_, err := Load(write(text))
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), msg, text)
	}
	_, err = Load(filepath.Join(dir, "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the built-in tables: sglang, vllm")
}
