package rules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinCatalogIsValid(t *testing.T) {
	sigs, err := ParseCatalog(builtinCatalog, "catalog/signatures.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, sigs)
	ids := map[string]bool{}
	for _, r := range Registered() {
		ids[r.ID] = true
	}
	for _, s := range sigs {
		if s.Owner != "" {
			assert.True(t, ids[s.Owner], "signature %s names owner %s, which is no registered rule", s.ID, s.Owner)
		} else {
			assert.NotEmpty(t, s.Remedy, "signature %s is reported as is, so it needs a remedy", s.ID)
		}
	}
}

func TestCatalogSignaturesMatchRealLines(t *testing.T) {
	// Lines as engines and drivers print them (research notes and corpus).
	tests := []struct{ id, line string }{
		{"no-kernel-image", "RuntimeError: CUDA error: no kernel image is available for execution on the device"},
		{"ptxas-unsupported-target", "ptxas /tmp/x.ptx, line 5; error   : PTX .version 8.4 does not support .target sm_120a"},
		{"tllmgen-unsupported-arch", "RuntimeError: Error in function 'TllmGenFmhaRunner' at /x/fmhaRunner.cuh:30: Unsupported architecture"},
		{"trtllm-backend-needs-sm100", "ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend."},
		{"cuda-oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 27.86 GiB. GPU 0 has a total capacity of 139.80 GiB"},
		{"kv-cache-too-small", "ValueError: To serve at least one request with the models's max seq len (262144), (18.35 GiB KV cache is needed, which is larger than the available KV cache memory (8.72 GiB)."},
		{"nccl-shm", "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)"},
		{"watchdog-collective-timeout", "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out."},
		{"ninja-build-failed", "ninja: build stopped: subcommand failed."},
		{"port-in-use", "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use"},
		{"illegal-memory-access", "RuntimeError: CUDA error: an illegal memory access was encountered"},
		{"ray-insufficient-gpus", "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group."},
		{"vllm-no-valid-attention-backend", "ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=256)"},
		{"kv-cache-too-small", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (1984). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."},
		{"custom-allreduce-peer-access", "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'"},
		{"own-request-through-proxy", `[2025-08-13 11:01:03] http://172.16.37.200:3138 "GET http://0.0.0.0:25600/get_model_info HTTP/1.1" 403 3582`},
	}
	sigs := BuiltinCatalog()
	for _, tc := range tests {
		var sig *Signature
		for _, s := range sigs {
			if s.ID == tc.id {
				sig = s
			}
		}
		require.NotNil(t, sig, tc.id)
		assert.True(t, sig.Match(tc.line), "%s should match %q", tc.id, tc.line)
	}
	// Benign lines match nothing.
	for _, line := range []string{
		"Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=36.25 GB, mem usage=7.63 GB.",
		"The server is fired up and ready to roll!",
		"Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.",
		// urllib3 straight to the server: the request line in origin form.
		`[2025-08-13 11:01:03] http://0.0.0.0:25600 "GET /get_model_info HTTP/1.1" 200 3582`,
		// Through a proxy to another host: not the server's own address.
		`http://172.16.37.200:3138 "GET http://huggingface.co/api/models/x HTTP/1.1" 407 0`,
	} {
		for _, s := range sigs {
			assert.False(t, s.Match(line), "%s matched the benign line %q", s.ID, line)
		}
	}
}

func TestParseCatalogReportsAllErrors(t *testing.T) {
	bad := `- id: Bad_ID
  pattern: '('
  category: nonsense
  confidence: 2
  title: x
- id: ok-one
  pattern: 'x'
  category: config
  confidence: 0.5
  title: fine
`
	_, err := ParseCatalog([]byte(bad), "pack.yaml")
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "pack.yaml:1")
	for _, want := range []string{"kebab-case", "pattern", "taxonomy", "confidence"} {
		assert.True(t, strings.Contains(msg, want), "error should mention %s: %s", want, msg)
	}
}
