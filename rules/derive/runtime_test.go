package derive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules/derive"
)

func runtimeOf(t *testing.T, dir string) *derive.Runtime {
	t.Helper()
	f, err := parser.Parse([]string{dir}, parser.Options{Year: 2026})
	require.NoError(t, err)
	return derive.RuntimeOf(derive.Derive(f, nil))
}

// TestRuntimeRealLogs checks the reduction against real captures; the
// expected figures were computed from the log lines with a separate script
// (sums and means of the printed values).
func TestRuntimeRealLogs(t *testing.T) {
	t.Run("sglang DFlash drafter", func(t *testing.T) {
		rt := runtimeOf(t, "../../fixtures/corpus/fulllogs/sglang-spark-laguna-int4")
		s := rt.Primary()
		require.NotNil(t, s)
		assert.Equal(t, "main", s.Name)
		assert.Equal(t, 56, s.Active)
		// The first decode line (0.10 tok/s, 19 minutes after the warmup
		// request) counts the idle time: it starts after a gap and is not a
		// decoding speed.
		require.NotEmpty(t, s.Points)
		assert.True(t, s.Points[0].AfterGap)
		assert.False(t, s.Points[0].Steady)
		assert.InDelta(t, 0.10, s.Points[0].Rate, 1e-9)
		require.NotNil(t, s.Accept)
		assert.Equal(t, 56, s.Accept.N)
		assert.InDelta(t, 2.7005, s.Accept.Len, 1e-3)
		assert.InDelta(t, 0.11375, s.Accept.Rate, 1e-4)
		assert.Equal(t, "DFLASH", s.Accept.Algorithm)
		// speculative_num_draft_tokens=16 counts the verify slot of the
		// target's own token: 15 are drafted.
		assert.Equal(t, 15, s.Accept.DraftTokens)
	})
	t.Run("vllm DFlash drafter", func(t *testing.T) {
		rt := runtimeOf(t, "../../fixtures/corpus/fulllogs/vllm-spark-laguna-nvfp4")
		s := rt.Primary()
		require.NotNil(t, s)
		assert.Equal(t, "APIServer", s.Name)
		require.NotNil(t, s.Accept)
		assert.Equal(t, 64, s.Accept.N)
		assert.Equal(t, 15, s.Accept.DraftTokens)
		// 6670 of 104385 drafted tokens accepted; 1 + 6670 / (104385 / 15).
		assert.InDelta(t, 6670.0/104385, s.Accept.Rate, 1e-9)
		assert.InDelta(t, 1.95847, s.Accept.Len, 1e-4)
	})
}

func TestRuntimeStoryFigures(t *testing.T) {
	for _, c := range []struct {
		dir    string
		single float64
		steady int
	}{
		{"../../fixtures/runtime/sglang-k25-baseline-63tps", 63.6, 120},
		{"../../fixtures/runtime/sglang-k25-tuned-90tps", 90.0, 120},
		{"../../fixtures/runtime/vllm-k25-82tps", 82.5, 7},
	} {
		t.Run(c.dir, func(t *testing.T) {
			s := runtimeOf(t, c.dir).Primary()
			require.NotNil(t, s)
			ss := s.SingleStream()
			require.NotNil(t, ss)
			assert.True(t, ss.Steady)
			assert.Equal(t, c.steady, ss.N)
			assert.InDelta(t, c.single, ss.Median, 0.05)
			assert.Nil(t, s.Accept)
		})
	}
}
