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

	// spare holds the buckets that compaction merged away, and their
	// aggregates, for reuse: a series that has filled up then costs no
	// allocation per sample.
	spare     []*Bucket
	spareAggs []*Agg
	// fastKeys are the keys of the last AddPairs call, lastVals its values
	// (as Last holds them) and fastAggs their aggregates in fastBucket: a run
	// of samples with the same keys skips most map operations.
	fastKeys   []string
	lastVals   []float64
	fastAggs   []*Agg
	fastBucket *Bucket
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
	if s.Last.Values == nil {
		s.Last.Values = make(map[string]float64, len(values))
	}
	last := s.Last.Values
	s.fastKeys, s.fastBucket = s.fastKeys[:0], nil // Last changes behind AddPairs' back

	b := s.bucketFor(src, t, len(values))
	// One pass copies the sample into Last and aggregates it: a series of
	// stat lines is the hot path of a long log.
	for k, v := range values {
		last[k] = v
		a := b.Aggs[k]
		if a == nil {
			a = s.newAgg()
			b.Aggs[k] = a
		}
		a.add(v)
	}
	if len(last) != len(values) {
		// last holds every key of values plus stale ones of earlier samples.
		for k := range last {
			if _, ok := values[k]; !ok {
				delete(last, k)
			}
		}
	}
}

func (s *Series) newAgg() *Agg {
	if n := len(s.spareAggs); n > 0 {
		a := s.spareAggs[n-1]
		s.spareAggs = s.spareAggs[:n-1]
		*a = Agg{}
		return a
	}
	return &Agg{}
}

// AddPairs appends a sample given as parallel slices of keys and values,
// which stat-line parsers fill without building a map. It is Add without the
// map: same result, fewer hash lookups when consecutive samples have the
// same keys in the same order. The caller may reuse both slices.
func (s *Series) AddPairs(src Source, t time.Time, keys []string, vals []float64) {
	n := min(len(keys), len(vals))
	keys, vals = keys[:n], vals[:n]
	if s.PerBucket == 0 {
		s.PerBucket = 1
	}
	s.Count++
	if s.First == nil {
		first := make(map[string]float64, n)
		for i, k := range keys {
			first[k] = vals[i]
		}
		s.First = &Sample{Src: src, Time: t, Values: first}
	}
	if s.Last == nil {
		s.Last = &Sample{}
	}
	s.Last.Src, s.Last.Time = src, t
	if s.Last.Values == nil {
		s.Last.Values = make(map[string]float64, n)
	}
	last := s.Last.Values
	same := len(s.fastKeys) == n
	for i := 0; same && i < n; i++ {
		same = s.fastKeys[i] == keys[i]
	}
	if same {
		// Last already holds these keys: write only the values that moved.
		for i, v := range vals {
			if v != s.lastVals[i] || v != v {
				last[keys[i]] = v
				s.lastVals[i] = v
			}
		}
	} else {
		for i, k := range keys {
			last[k] = vals[i]
		}
		if len(last) != n {
			for k := range last {
				if !containsKey(keys, k) {
					delete(last, k)
				}
			}
		}
		s.fastKeys = append(s.fastKeys[:0], keys...)
		s.lastVals = append(s.lastVals[:0], vals...)
		s.fastBucket = nil
	}
	b := s.bucketFor(src, t, n)
	if s.fastBucket != b {
		s.fastBucket = b
		s.fastAggs = s.fastAggs[:0]
		for _, k := range keys {
			a := b.Aggs[k]
			if a == nil {
				a = s.newAgg()
				b.Aggs[k] = a
			}
			s.fastAggs = append(s.fastAggs, a)
		}
	}
	for i, v := range vals {
		s.fastAggs[i].add(v)
	}
}

func containsKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// bucketFor returns the bucket a sample goes to, starting a new one (and
// compacting) when the last is full, and counts the sample in it.
func (s *Series) bucketFor(src Source, t time.Time, n int) *Bucket {
	var b *Bucket
	if k := len(s.Buckets); k > 0 && s.Buckets[k-1].N < s.PerBucket {
		b = s.Buckets[k-1]
	} else {
		if len(s.Buckets) == MaxBuckets {
			s.compact()
		}
		if k := len(s.spare); k > 0 {
			b = s.spare[k-1]
			s.spare = s.spare[:k-1]
			*b = Bucket{Src: src, Start: t, Aggs: b.Aggs}
		} else {
			b = &Bucket{Src: src, Start: t, Aggs: make(map[string]*Agg, n)}
		}
		s.Buckets = append(s.Buckets, b)
	}
	b.N++
	if !t.IsZero() {
		if b.Start.IsZero() {
			b.Start = t
		}
		b.End = t
	}
	return b
}

// compact merges buckets pairwise and doubles the bucket width.
func (s *Series) compact() {
	s.fastBucket = nil
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
					av = s.newAgg()
					a.Aggs[k] = av
				}
				av.merge(bv)
				s.spareAggs = append(s.spareAggs, bv)
			}
			clear(b.Aggs)
			s.spare = append(s.spare, b)
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
