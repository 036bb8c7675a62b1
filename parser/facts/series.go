package facts

import (
	"sort"
	"time"
)

// Series is a bounded time series of one kind of stat line (SGLang Decode
// batch, vLLM throughput, SpecDecoding metrics) written by one process.
//
// A week of decode stats from 8 ranks is millions of lines; the series keeps
// at most MaxBuckets buckets. When full, neighbouring buckets merge pairwise
// and the bucket width doubles, so memory stays fixed while every bucket still
// holds the count, sum, min and max of each field over its span.
type Series struct {
	Proc Proc      `json:"proc"`
	Type EventType `json:"type"`
	// Stream tells apart several series of one type written by one process:
	// vLLM's "Engine 001" of a DP deployment, or the V0 prefix-cache line
	// ("prefix-cache"). Empty for the main stream.
	Stream string `json:"stream,omitempty"`
	// Count is the number of stat lines seen.
	Count int `json:"count"`
	// First and Last are the first and last samples, exactly as parsed.
	First *Sample `json:"first"`
	Last  *Sample `json:"last"`
	// Buckets hold the aggregated samples, in time order. PerBucket is how
	// many samples a bucket takes before the next one starts.
	Buckets   []*Bucket `json:"buckets"`
	PerBucket int       `json:"per_bucket"`
}

// MaxBuckets bounds the memory of a series.
const MaxBuckets = 256

// Sample is one stat line.
type Sample struct {
	Src    Source             `json:"src"`
	Time   time.Time          `json:"time,omitzero"`
	Values map[string]float64 `json:"values"`
}

// Bucket aggregates consecutive samples.
type Bucket struct {
	Src   Source          `json:"src"` // the first sample's line
	Start time.Time       `json:"start,omitzero"`
	End   time.Time       `json:"end,omitzero"`
	N     int             `json:"n"`
	Aggs  map[string]*Agg `json:"aggs"`
}

// Agg is the count, sum, min and max of one field over a bucket.
type Agg struct {
	N   int     `json:"n"`
	Sum float64 `json:"sum"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Mean is Sum/N, or 0.
func (a *Agg) Mean() float64 {
	if a == nil || a.N == 0 {
		return 0
	}
	return a.Sum / float64(a.N)
}

func (a *Agg) add(v float64) {
	if a.N == 0 || v < a.Min {
		a.Min = v
	}
	if a.N == 0 || v > a.Max {
		a.Max = v
	}
	a.N++
	a.Sum += v
}

func (a *Agg) merge(b *Agg) {
	if b == nil || b.N == 0 {
		return
	}
	if a.N == 0 || b.Min < a.Min {
		a.Min = b.Min
	}
	if a.N == 0 || b.Max > a.Max {
		a.Max = b.Max
	}
	a.N += b.N
	a.Sum += b.Sum
}

// Add appends a sample. values is copied only for the first and last
// samples; the caller may reuse it.
func (s *Series) Add(src Source, t time.Time, values map[string]float64) {
	if s.PerBucket == 0 {
		s.PerBucket = 1
	}
	s.Count++
	if s.First == nil {
		s.First = &Sample{Src: src, Time: t, Values: copyValues(values)}
	}
	if s.Last == nil {
		s.Last = &Sample{}
	}
	s.Last.Src, s.Last.Time = src, t
	s.Last.Values = copyValuesInto(s.Last.Values, values)

	var b *Bucket
	if n := len(s.Buckets); n > 0 && s.Buckets[n-1].N < s.PerBucket {
		b = s.Buckets[n-1]
	} else {
		if len(s.Buckets) == MaxBuckets {
			s.compact()
		}
		b = &Bucket{Src: src, Start: t, Aggs: make(map[string]*Agg, len(values))}
		s.Buckets = append(s.Buckets, b)
	}
	b.N++
	if !t.IsZero() {
		if b.Start.IsZero() {
			b.Start = t
		}
		b.End = t
	}
	for k, v := range values {
		a := b.Aggs[k]
		if a == nil {
			a = &Agg{}
			b.Aggs[k] = a
		}
		a.add(v)
	}
}

// compact merges buckets pairwise and doubles the bucket width.
func (s *Series) compact() {
	out := s.Buckets[:0]
	for i := 0; i < len(s.Buckets); i += 2 {
		a := s.Buckets[i]
		if i+1 < len(s.Buckets) {
			b := s.Buckets[i+1]
			a.N += b.N
			if !b.End.IsZero() {
				a.End = b.End
			}
			if a.Start.IsZero() {
				a.Start = b.Start
			}
			for k, bv := range b.Aggs {
				av := a.Aggs[k]
				if av == nil {
					av = &Agg{}
					a.Aggs[k] = av
				}
				av.merge(bv)
			}
		}
		out = append(out, a)
	}
	for i := len(out); i < len(s.Buckets); i++ {
		s.Buckets[i] = nil
	}
	s.Buckets = out
	s.PerBucket *= 2
}

// Total aggregates a field over the whole series.
func (s *Series) Total(key string) Agg {
	var t Agg
	for _, b := range s.Buckets {
		t.merge(b.Aggs[key])
	}
	return t
}

// Keys lists the fields seen, sorted.
func (s *Series) Keys() []string {
	seen := map[string]bool{}
	for _, b := range s.Buckets {
		for k := range b.Aggs {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func copyValues(v map[string]float64) map[string]float64 {
	return copyValuesInto(make(map[string]float64, len(v)), v)
}

func copyValuesInto(dst, v map[string]float64) map[string]float64 {
	if dst == nil {
		dst = make(map[string]float64, len(v))
	}
	clear(dst)
	for k, x := range v {
		dst[k] = x
	}
	return dst
}
