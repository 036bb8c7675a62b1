package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
)

// TestInstallRemedy: the remedy for a program the collector did not find
// is that program's, never another's: no "pip install py-spy" for a
// missing nvidia-smi (issue 18, item 8).
func TestInstallRemedy(t *testing.T) {
	tests := []struct {
		progs       []string
		want, avoid []string
	}{
		{[]string{"nvidia-smi"}, []string{"NVIDIA driver", "--nvidia-smi"}, []string{"pip", "py-spy"}},
		{[]string{"py-spy"}, []string{"pip install py-spy", "--py-spy"}, []string{"nvidia-smi", "driver"}},
		{[]string{"nvidia-smi", "py-spy"}, []string{"NVIDIA driver", "pip install py-spy"}, nil},
		{[]string{"dmesg"}, []string{"dmesg: install it or put it on PATH"}, []string{"pip", "nvidia-smi"}},
	}
	for _, tc := range tests {
		got := installRemedy(tc.progs)
		for _, w := range tc.want {
			assert.Contains(t, got, w, tc.progs)
		}
		for _, a := range tc.avoid {
			assert.NotContains(t, got, a, tc.progs)
		}
	}
}

// TestFitReferences: an engine's pages and threads are cited only on a
// run of that engine: no vLLM troubleshooting page on an SGLang crash
// (issue 18, item 8); a library's or NVIDIA's stay on any run, and a run
// of an unknown engine keeps every reference.
func TestFitReferences(t *testing.T) {
	refs := []string{
		"https://docs.vllm.ai/en/latest/usage/troubleshooting.html",
		"https://github.com/vllm-project/vllm/issues/14452",
		"https://github.com/sgl-project/sglang/issues/7249",
		"https://docs.sglang.ai/advanced_features/server_arguments.html",
		"https://github.com/flashinfer-ai/flashinfer/issues/3612",
		"https://docs.nvidia.com/deploy/xid-errors/index.html",
	}
	tests := []struct {
		engine facts.Engine
		want   []string
	}{
		{facts.EngineSGLang, []string{refs[2], refs[3], refs[4], refs[5]}},
		{facts.EngineVLLM, []string{refs[0], refs[1], refs[4], refs[5]}},
		{facts.EngineUnknown, refs},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, fitReferences(refs, tc.engine), string(tc.engine))
	}
	assert.Equal(t, []string{}, fitReferences(refs[:1], facts.EngineSGLang), "none left: an empty list, not nil")
}
