package facts

import (
	"encoding/json"
	"sort"
	"time"
	"unsafe"
)

// Series is a bounded time series of one kind of stat line (SGLang Decode
// batch, vLLM throughput, SpecDecoding metrics) written by one process.
//
// A week of decode stats from 8 ranks is millions of lines; the series keeps
// at most MaxBuckets buckets. When full, neighbouring buckets merge pairwise
// and the bucket width doubles, so memory stays fixed while every bucket still
// holds the count, sum, min and max of each field over its span.
//
// The series keeps its field names once; a bucket holds its aggregates in a
// slice indexed like them. A bundle of 512 rank logs has 512 x 256 buckets
// of a dozen fields each: a map per bucket was most of the memory of such a
// run and most of the garbage collector's work.
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
	// Last.Values is written by Finish (Add keeps it current): a writer that
	// feeds AddPairs calls Finish after its last sample.
	First *Sample `json:"first"`
	Last  *Sample `json:"last"`
	// Buckets hold the aggregated samples, in time order. PerBucket is how
	// many samples a bucket takes before the next one starts.
	Buckets   []*Bucket `json:"buckets"`
	PerBucket int       `json:"per_bucket"`
	// DroppedKeys counts values of fields beyond MaxSeriesKeys, which a
	// hostile log could otherwise use to grow every bucket.
	DroppedKeys int `json:"dropped_keys,omitempty"`

	keys *keyList
	// spare holds the buckets that compaction merged away, for reuse: a
	// series that has filled up then costs no allocation per sample.
	spare []*Bucket
	// fastKeys are the keys of the last AddPairs call and fastIdx their
	// indexes in keys (-1 for a dropped key): a run of samples with the same
	// keys in the same order finds every slot without a lookup. lastVals
	// are that sample's values, which Finish copies into Last.
	fastKeys []string
	fastIdx  []int
	fastMax  int
	lastVals []float64
	synced   bool
}

// MaxBuckets bounds the memory of a series.
const MaxBuckets = 256

// MaxSeriesKeys bounds the fields of a series. Real stat lines have at most
// about 30 (vLLM's speculative decoding line with 16 per-position rates).
const MaxSeriesKeys = 128

// keyList holds the field names of a series in the order they first
// appeared; the series and its buckets share it.
type keyList struct{ names []string }

func (l *keyList) index(k string) int {
	for i, n := range l.names {
		if n == k {
			return i
		}
	}
	return -1
}

// Sample is one stat line.
type Sample struct {
	Src    Source             `json:"src"`
	Time   time.Time          `json:"time,omitzero"`
	Values map[string]float64 `json:"values"`
}

// Bucket aggregates consecutive samples.
type Bucket struct {
	Src   Source    `json:"src"` // the first sample's line
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	N     int       `json:"n"`

	keys *keyList
	// aggs[i] aggregates field keys.names[i]; it is shorter than the name
	// list when later fields appeared after the bucket was filled.
	aggs []Agg
}

// Agg returns the aggregate of a field over the bucket, or nil when the
// bucket holds no value of it.
func (b *Bucket) Agg(key string) *Agg {
	if b == nil || b.keys == nil {
		return nil
	}
	i := b.keys.index(key)
	if i < 0 || i >= len(b.aggs) || b.aggs[i].N == 0 {
		return nil
	}
	return &b.aggs[i]
}

// Fields lists the fields the bucket holds values of, sorted.
func (b *Bucket) Fields() []string {
	var out []string
	for i := range b.aggs {
		if b.aggs[i].N > 0 {
			out = append(out, b.keys.names[i])
		}
	}
	sort.Strings(out)
	return out
}

// MarshalJSON writes the aggregates as an object keyed by field name.
func (b *Bucket) MarshalJSON() ([]byte, error) {
	aggs := make(map[string]*Agg, len(b.aggs))
	for _, k := range b.Fields() {
		aggs[k] = b.Agg(k)
	}
	type plain Bucket // without the method
	return json.Marshal(struct {
		*plain
		Aggs map[string]*Agg `json:"aggs"`
	}{(*plain)(b), aggs})
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

// Add appends a sample given as a map. values is copied; the caller may
// reuse it.
func (s *Series) Add(src Source, t time.Time, values map[string]float64) {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]float64, len(keys))
	for i, k := range keys {
		vals[i] = values[k]
	}
	s.AddPairs(src, t, keys, vals)
	s.Finish()
}

// AddPairs appends a sample given as parallel slices of keys and values,
// which stat-line parsers fill without building a map. The keys must be
// distinct. The caller may reuse both slices. Last.Values lags behind until
// Finish.
func (s *Series) AddPairs(src Source, t time.Time, keys []string, vals []float64) {
	n := min(len(keys), len(vals))
	keys, vals = keys[:n], vals[:n]
	if s.PerBucket == 0 {
		s.PerBucket = 1
	}
	if s.keys == nil {
		s.keys = &keyList{}
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
	if !s.sameKeys(keys) {
		s.fastKeys = append(s.fastKeys[:0], keys...)
		s.fastIdx = s.fastIdx[:0]
		s.fastMax = -1
		for _, k := range keys {
			i := s.keys.index(k)
			if i < 0 && len(s.keys.names) < MaxSeriesKeys {
				i = len(s.keys.names)
				s.keys.names = append(s.keys.names, k)
			}
			s.fastIdx = append(s.fastIdx, i)
			s.fastMax = max(s.fastMax, i)
		}
	}
	s.lastVals = append(s.lastVals[:0], vals...)
	s.synced = false

	b := s.bucketFor(src, t)
	if s.fastMax >= len(b.aggs) {
		b.aggs = append(b.aggs, make([]Agg, s.fastMax+1-len(b.aggs))...)
	}
	for i, v := range vals {
		if j := s.fastIdx[i]; j >= 0 {
			b.aggs[j].add(v)
		} else {
			s.DroppedKeys++
		}
	}
}

func (s *Series) sameKeys(keys []string) bool {
	if len(keys) != len(s.fastKeys) {
		return false
	}
	for i, k := range keys {
		// Parsers pass the same interned strings line after line: the
		// same pointer settles it without comparing bytes.
		f := s.fastKeys[i]
		if unsafe.StringData(f) != unsafe.StringData(k) || len(f) != len(k) {
			if f != k {
				return false
			}
		}
	}
	return true
}

// Finish writes the last sample's values into Last.Values.
func (s *Series) Finish() {
	if s.synced || s.Last == nil {
		return
	}
	s.synced = true
	if s.Last.Values == nil {
		s.Last.Values = make(map[string]float64, len(s.fastKeys))
	}
	clear(s.Last.Values)
	for i, k := range s.fastKeys {
		s.Last.Values[k] = s.lastVals[i]
	}
}

// bucketFor returns the bucket a sample goes to, starting a new one (and
// compacting) when the last is full, and counts the sample in it.
func (s *Series) bucketFor(src Source, t time.Time) *Bucket {
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
			*b = Bucket{Src: src, Start: t, keys: s.keys, aggs: b.aggs[:0]}
		} else {
			b = &Bucket{Src: src, Start: t, keys: s.keys, aggs: make([]Agg, 0, len(s.keys.names))}
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
			if len(b.aggs) > len(a.aggs) {
				a.aggs = append(a.aggs, make([]Agg, len(b.aggs)-len(a.aggs))...)
			}
			for j := range b.aggs {
				a.aggs[j].merge(&b.aggs[j])
			}
			clear(b.aggs)
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
		t.merge(b.Agg(key))
	}
	return t
}

// Keys lists the fields seen, sorted.
func (s *Series) Keys() []string {
	out := []string{}
	if s.keys == nil {
		return out
	}
	for i, k := range s.keys.names {
		for _, b := range s.Buckets {
			if i < len(b.aggs) && b.aggs[i].N > 0 {
				out = append(out, k)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
