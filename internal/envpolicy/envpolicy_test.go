package envpolicy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The lists the table replaced, as each package had them: the table must
// judge every name as they did, so that no report, diff or bundle changes.
var (
	oldReport   = []string{"NCCL_", "CUDA_", "VLLM_", "SGLANG_", "SGL_", "PYTORCH_", "TORCH_", "FLASHINFER_", "TRITON_", "NVSHMEM_", "NVIDIA_"}
	oldEvidence = []string{"NCCL_", "CUDA_", "VLLM_", "SGLANG_", "SGL_", "PYTORCH_", "TORCH_", "FLASHINFER_", "TRITON_", "NVSHMEM_", "NVIDIA_", "HF_", "LD_LIBRARY_PATH"}
	oldDiff     = []string{"NCCL_", "CUDA_", "VLLM_", "SGLANG_", "PYTORCH_", "TORCH_", "TORCHINDUCTOR_"}
	oldCollect  = []string{"CUDA_", "NCCL_", "NVIDIA_", "TORCH", "PYTORCH_", "VLLM_", "SGLANG_", "SGL_", "HF_", "HUGGING",
		"TRANSFORMERS_", "TRITON_", "FLASHINFER_", "GLOO_", "MASTER_", "OMP_", "MKL_", "NVTE_", "UCX_", "RAY_", "HIP_", "ROCM_",
		"HSA_", "TOKENIZERS_", "XLA_", "LD_", "PYTHON", "VIRTUAL_ENV", "CONDA_", "TORCHINDUCTOR_", "DG_", "DEEPGEMM_", "NVSHMEM_", "CUTLASS_"}
	oldCollectNames = []string{"PATH", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "TZ", "MAX_JOBS", "CC", "CXX", "HOME", "USER", "HOSTNAME"}
	oldProbe        = []string{"NCCL_", "TORCH_", "PYTORCH_", "VLLM_", "SGLANG_", "SGL_", "TRITON_", "FLASHINFER_", "CUDA_"}
	oldProbeNames   = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
		"PYTHONPATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "HF_HOME"}
	oldSniff = []string{"PATH=", "HOME=", "HOSTNAME=", "NCCL_", "CUDA_", "VLLM_", "SGLANG_", "PYTORCH_", "TORCH", "HF_", "LD_LIBRARY_PATH=", "NVIDIA_", "PWD=", "SHELL=", "USER="}
)

func hasPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// samples are names around every pattern of every list: the pattern, the
// pattern and more, and the pattern less its last byte.
func samples() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, l := range [][]string{oldReport, oldEvidence, oldDiff, oldCollect, oldCollectNames, oldProbe, oldProbeNames, oldSniff} {
		for _, p := range l {
			p = strings.TrimSuffix(p, "=")
			add(p)
			add(p + "X")
			add(p + "_DEBUG")
			add(p[:len(p)-1])
		}
	}
	for _, s := range []string{"LD_PRELOAD", "PYTHONSTARTUP", "PYTHONHOME", "BASH_ENV", "HF_TOKEN", "TORCHDYNAMO_VERBOSE",
		"TORCHINDUCTOR_COMPILE_THREADS", "NVIDIA_VISIBLE_DEVICES", "OLDPWD", "TERM", "LANGUAGE", "EDITOR", "nccl_debug"} {
		add(s)
	}
	return out
}

func TestMattersAsTheOldLists(t *testing.T) {
	tests := []struct {
		use  Use
		want func(name string) bool
	}{
		{Report, func(n string) bool { return hasPrefix(n, oldReport) }},
		{Evidence, func(n string) bool { return hasPrefix(n, oldEvidence) }},
		{Diff, func(n string) bool { return hasPrefix(n, oldDiff) }},
		{Collect, func(n string) bool { return contains(oldCollectNames, n) || hasPrefix(n, oldCollect) }},
		{Probe, func(n string) bool { return contains(oldProbeNames, n) || hasPrefix(n, oldProbe) }},
	}
	for _, tc := range tests {
		for _, n := range samples() {
			assert.Equal(t, tc.want(n), Matters(n, tc.use), "use %d, %s", tc.use, n)
		}
	}
}

func TestSetsSniffedAsTheOldList(t *testing.T) {
	for _, n := range samples() {
		for _, line := range []string{n + "=1", n, n + "=", n + "X=1"} {
			assert.Equal(t, hasPrefix(line, oldSniff), SetsSniffed(line), "%q", line)
		}
	}
}

// TestProbeLoadsNoCode: the environment report collect runs never gets a
// variable that makes Python or the loader run code by itself.
func TestProbeLoadsNoCode(t *testing.T) {
	for _, n := range []string{"LD_PRELOAD", "LD_AUDIT", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "BASH_ENV", "ENV", "PROMPT_COMMAND"} {
		assert.False(t, Matters(n, Probe), n)
	}
}

// TestUsesNest: what the report lists is evidence of a run, and collect
// keeps what any other use reads.
func TestUsesNest(t *testing.T) {
	for _, n := range samples() {
		if Matters(n, Report) {
			assert.True(t, Matters(n, Evidence), n)
		}
		if Matters(n, Report) || Matters(n, Diff) || Matters(n, Evidence) {
			assert.True(t, Matters(n, Collect), "%s matters to a report but collect would leave it out", n)
		}
	}
	assert.False(t, Matters("NCCL_DEBUG", 0))
	assert.True(t, Matters("NCCL_DEBUG", Report|Diff))
	assert.False(t, Matters("SGL_ENABLE_JIT", Report|Diff), "diff does not compare SGL_ variables")
}

// TestKeep: past its first variables a capped dump keeps what the report
// lists (every Report variable) and the rules read, nothing else.
func TestKeep(t *testing.T) {
	for _, name := range samples() {
		if Matters(name, Report) {
			assert.True(t, Matters(name, Keep), name)
		}
	}
	for name, want := range map[string]bool{"HF_HOME": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "OMP_NUM_THREADS": true,
		"PATH": true, "PYTHONPATH": true, "VLLM_ATTENTION_BACKEND": true, "APP_SETTING_1": false, "HOME": false, "PATHX": false} {
		assert.Equal(t, want, Matters(name, Keep), name)
	}
}
