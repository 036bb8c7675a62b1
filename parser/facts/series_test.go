package facts

import (
	"encoding/json"
	"fmt"
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

func TestSeriesBucketAggs(t *testing.T) {
	var s Series
	src := func(l int) Source { return Source{File: "a", Line: l} }
	s.AddPairs(src(1), time.Time{}, []string{"x", "y"}, []float64{1, 10})
	s.AddPairs(src(2), time.Time{}, []string{"y", "z"}, []float64{20, -1})
	s.Finish()
	require.Len(t, s.Buckets, 2)
	b0, b1 := s.Buckets[0], s.Buckets[1]
	assert.Equal(t, &Agg{N: 1, Sum: 1, Min: 1, Max: 1}, b0.Agg("x"))
	assert.Nil(t, b0.Agg("z"), "z appeared after the first bucket was filled")
	assert.Nil(t, b1.Agg("x"), "a field without a value in the bucket has no aggregate")
	assert.Nil(t, b1.Agg("nope"))
	assert.Equal(t, []string{"y", "z"}, b1.Fields())
	assert.Equal(t, Agg{N: 2, Sum: 30, Min: 10, Max: 20}, s.Total("y"))
	assert.Equal(t, []string{"x", "y", "z"}, s.Keys())
	assert.Equal(t, map[string]float64{"x": 1, "y": 10}, s.First.Values)
	assert.Equal(t, map[string]float64{"y": 20, "z": -1}, s.Last.Values, "Finish writes only the last sample's keys")

	js, err := json.Marshal(b1)
	require.NoError(t, err)
	assert.JSONEq(t, `{"src":{"file":"a","line":2},"n":1,"aggs":{"y":{"n":1,"sum":20,"min":20,"max":20},"z":{"n":1,"sum":-1,"min":-1,"max":-1}}}`, string(js))
}

func TestSeriesCompactionMergesFieldsOfDifferentBuckets(t *testing.T) {
	var s Series
	// Odd samples carry a field the even ones lack; after compaction every
	// bucket holds both, with the counts of its samples.
	for i := range MaxBuckets * 2 {
		if i%2 == 0 {
			s.AddPairs(Source{File: "a", Line: i + 1}, time.Time{}, []string{"a"}, []float64{1})
		} else {
			s.AddPairs(Source{File: "a", Line: i + 1}, time.Time{}, []string{"a", "b"}, []float64{1, float64(i)})
		}
	}
	require.Len(t, s.Buckets, MaxBuckets)
	assert.Equal(t, 2, s.PerBucket)
	for i, b := range s.Buckets {
		assert.Equal(t, 2, b.Agg("a").N)
		assert.Equal(t, &Agg{N: 1, Sum: float64(2*i + 1), Min: float64(2*i + 1), Max: float64(2*i + 1)}, b.Agg("b"))
	}
}

func TestSeriesKeysAreBounded(t *testing.T) {
	var s Series
	keys := make([]string, MaxSeriesKeys+5)
	vals := make([]float64, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		vals[i] = float64(i)
	}
	s.AddPairs(Source{File: "a", Line: 1}, time.Time{}, keys, vals)
	s.AddPairs(Source{File: "a", Line: 2}, time.Time{}, keys, vals)
	assert.Len(t, s.Keys(), MaxSeriesKeys)
	assert.Equal(t, 10, s.DroppedKeys, "five fields over the bound, twice")
	assert.Equal(t, 2, s.Total("k0").N)
	assert.Zero(t, s.Total(keys[MaxSeriesKeys]).N)
}
