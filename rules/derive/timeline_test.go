package derive

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
)

// The weights-loading span of each rank of a real TP8 log is the time that
// rank printed for itself ("Load weight end. elapsed=778.18 s"), not the
// time rank 0's shard bar took (9 s): the bar ends when the shards are
// read, the rank's loading when it says so.
func TestWeightLoadSpansAreThePrintedTimes(t *testing.T) {
	f, err := parser.Parse([]string{"../../fixtures/corpus/fulllogs/sglang-glm5-tp8-mi355x-graphcrash"}, parser.Options{})
	require.NoError(t, err)
	idx := Derive(f, nil)
	printed := map[string]float64{}
	for _, e := range f.Logs[0].Events {
		if v, ok := e.Num("elapsed_s"); ok && e.Type == facts.EventLoadEnd {
			printed[e.Proc.Key()] = v
		}
	}
	require.Len(t, printed, 8)
	for _, pt := range idx.Procs {
		want, ok := printed[pt.Key]
		if !ok {
			continue
		}
		for _, s := range pt.Spans {
			if s.Phase != PhaseWeightsLoading {
				continue
			}
			got := s.End.Sub(s.Start).Seconds()
			assert.InDelta(t, want, got, 2, "%s: weights-loading span %.0f s, the log says %.2f s", pt.Key, got, want)
		}
	}
}
