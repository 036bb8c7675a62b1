package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A failure pasted alone is placed by the step its message names, read in
// its prose: not by the kernel, file and function names it quotes, and
// not when the log shows where the run was.
func TestPlaceFailureByWords(t *testing.T) {
	tests := []struct {
		name, log string
		phase     Phase
		by        string
	}{
		{"memory pool in prose",
			"RuntimeError: rank 2 could not set up its memory pool with the requested fraction\n",
			PhaseKVCache, "words"},
		{"nccl",
			"RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n",
			PhaseDistributedInit, "words"},
		{"a kernel's name is no step",
			"RuntimeError: BatchPrefillWithPagedKVCachePyTorchWrapper::Forward(at::Tensor)::<lambda()> failed to dispatch group_size 5\n",
			PhaseLaunch, "milestone"},
		{"a path is no step",
			"subprocess.CalledProcessError: Command '['ninja', '-C', '/root/.cache/flashinfer/cached_ops/sampling']' returned non-zero exit status 1.\n",
			PhaseLaunch, "milestone"},
		{"the log says where the run was",
			"[2025-05-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1)\n" +
				"[2025-05-01 10:00:01] ValueError: the prompt template is invalid\n",
			PhaseLaunch, "milestone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := parseLogText(t, tc.log)
			idx := Derive(f, BuiltinCatalog())
			require.NotEmpty(t, idx.State.Failures)
			e := idx.State.Failures[len(idx.State.Failures)-1]
			pl := idx.PlaceFailure(f.Logs[0], e)
			assert.Equal(t, tc.phase, pl.Phase, pl.Why)
			assert.Equal(t, tc.by, pl.By, pl.Why)
		})
	}
}
