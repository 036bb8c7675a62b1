package facts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeriesStaysBounded(t *testing.T) {
	var s Series
	t0 := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	n := MaxBuckets*10 + 3
	for i := 0; i < n; i++ {
		s.Add(Source{File: "a.log", Line: i + 1}, t0.Add(time.Duration(i)*time.Second), map[string]float64{"gen_throughput": float64(i)})
	}
	require.LessOrEqual(t, len(s.Buckets), MaxBuckets)
	assert.Equal(t, n, s.Count)
	tot := s.Total("gen_throughput")
	assert.Equal(t, n, tot.N)
	assert.Equal(t, 0.0, tot.Min)
	assert.Equal(t, float64(n-1), tot.Max)
	assert.InDelta(t, float64(n-1)/2, tot.Mean(), 1e-9)
	assert.Equal(t, 1, s.First.Src.Line)
	assert.Equal(t, n, s.Last.Src.Line)
	assert.Equal(t, float64(n-1), s.Last.Values["gen_throughput"])
	// Buckets keep time order and cover the whole span.
	assert.Equal(t, t0, s.Buckets[0].Start)
	assert.Equal(t, t0.Add(time.Duration(n-1)*time.Second), s.Buckets[len(s.Buckets)-1].End)
	for i := 1; i < len(s.Buckets); i++ {
		assert.False(t, s.Buckets[i].Start.Before(s.Buckets[i-1].End), "bucket %d starts before the previous ends", i)
	}
}

func TestSeriesReusedValuesMap(t *testing.T) {
	var s Series
	v := map[string]float64{"x": 1}
	s.Add(Source{File: "a", Line: 1}, time.Time{}, v)
	v["x"] = 2
	s.Add(Source{File: "a", Line: 2}, time.Time{}, v)
	assert.Equal(t, 1.0, s.First.Values["x"], "the first sample must not alias the caller's map")
	assert.Equal(t, 2.0, s.Last.Values["x"])
}
