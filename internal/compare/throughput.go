package compare

import (
	"math"
	"sort"
	"strconv"

	"github.com/coroner-dev/coroner/rules"
)

// Throughput sets the runs' generation throughput and drafter acceptance
// side by side, from the engine process with the most stat lines of each.
type Throughput struct {
	A    *RunRate  `json:"a"`
	B    *RunRate  `json:"b"`
	Rows []RateRow `json:"rows"`
}

// RunRate is one run's figures.
type RunRate struct {
	// Series names the engine process the figures come from.
	Series string `json:"series"`
	Lines  int    `json:"stat_lines"`
	First  *Ref   `json:"first,omitempty"`
	Last   *Ref   `json:"last,omitempty"`
	// Approximate is set for a log long enough that its stat lines were
	// kept in buckets of several lines (see the throughput rule).
	Approximate bool `json:"approximate,omitempty"`
}

// RateRow is one figure of both runs. A and B are nil where a run has no
// such figure; Change is B relative to A in percent, nil unless both exist.
type RateRow struct {
	// ID names the figure for programs: single_stream, batch_N, mean, peak,
	// accept_len, accept_rate_pct.
	ID     string   `json:"id"`
	Metric string   `json:"metric"`
	Unit   string   `json:"unit"`
	A      *float64 `json:"a"`
	B      *float64 `json:"b"`
	Change *float64 `json:"change_pct"`
	// Lines counts the stat lines behind each figure.
	ALines int  `json:"a_lines,omitempty"`
	BLines int  `json:"b_lines,omitempty"`
	ARef   *Ref `json:"a_ref,omitempty"`
	BRef   *Ref `json:"b_ref,omitempty"`
}

func throughput(a, b Run) Throughput {
	pa := rules.RuntimeOf(a.Result.Index).Primary()
	pb := rules.RuntimeOf(b.Result.Index).Primary()
	t := Throughput{A: runRate(pa), B: runRate(pb)}
	// figure reads one figure of a series: value, lines behind it, where.
	type figure func(*rules.RuntimeSeries) (float64, int, *Ref, bool)
	add := func(id, metric, unit string, f figure) {
		row := RateRow{ID: id, Metric: metric, Unit: unit}
		if pa != nil {
			if v, n, ref, ok := f(pa); ok {
				v = round(v, 3)
				row.A, row.ALines, row.ARef = &v, n, ref
			}
		}
		if pb != nil {
			if v, n, ref, ok := f(pb); ok {
				v = round(v, 3)
				row.B, row.BLines, row.BRef = &v, n, ref
			}
		}
		if row.A == nil && row.B == nil {
			return
		}
		if row.A != nil && row.B != nil && *row.A != 0 {
			c := round((*row.B-*row.A) / *row.A * 100, 1)
			row.Change = &c
		}
		t.Rows = append(t.Rows, row)
	}
	batch := func(n int) figure {
		return func(s *rules.RuntimeSeries) (float64, int, *Ref, bool) {
			for _, br := range s.Batches {
				if br.Batch == n {
					return br.Median, br.N, refOf(br.Src), true
				}
			}
			return 0, 0, nil, false
		}
	}
	add("single_stream", "single-stream (1 running request, median)", "tok/s", batch(1))
	for _, n := range batchSizes(pa, pb) {
		add("batch_"+strconv.Itoa(n), "at "+strconv.Itoa(n)+" running requests (median)", "tok/s", batch(n))
	}
	add("mean", "mean over stat lines with work (depends on the load)", "tok/s", func(s *rules.RuntimeSeries) (float64, int, *Ref, bool) {
		return s.Mean, s.Active, nil, s.Active > 0
	})
	add("peak", "peak (steady lines)", "tok/s", func(s *rules.RuntimeSeries) (float64, int, *Ref, bool) {
		return s.Peak, 0, nil, s.Peak > 0
	})
	add("accept_len", "speculative accept length (tokens per verify step)", "tokens", func(s *rules.RuntimeSeries) (float64, int, *Ref, bool) {
		if s.Accept == nil || s.Accept.Len <= 0 {
			return 0, 0, nil, false
		}
		return s.Accept.Len, s.Accept.N, refOf(s.Accept.Last), true
	})
	add("accept_rate_pct", "speculative acceptance rate (drafted tokens accepted)", "%", func(s *rules.RuntimeSeries) (float64, int, *Ref, bool) {
		if s.Accept == nil || s.Accept.Rate < 0 {
			return 0, 0, nil, false
		}
		return s.Accept.Rate * 100, s.Accept.N, refOf(s.Accept.Last), true
	})
	return t
}

func runRate(s *rules.RuntimeSeries) *RunRate {
	if s == nil {
		return nil
	}
	r := &RunRate{Series: engineName(string(s.Engine)) + " " + s.Name, Lines: s.Series.Count, Approximate: s.Compacted}
	if s.First != nil {
		r.First, r.Last = refOf(s.First.Src), refOf(s.Last.Src)
	}
	return r
}

// round keeps d decimals: the figures come from two-decimal log values, and
// a fixed precision keeps the JSON the same on every platform.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}

// batchSizes are the batch sizes above 1 that both runs have figures for:
// comparing the tok/s of 16 requests with nothing says little.
func batchSizes(a, b *rules.RuntimeSeries) []int {
	if a == nil || b == nil {
		return nil
	}
	in := map[int]bool{}
	for _, br := range a.Batches {
		in[br.Batch] = true
	}
	var out []int
	for _, br := range b.Batches {
		if br.Batch > 1 && in[br.Batch] {
			out = append(out, br.Batch)
		}
	}
	sort.Ints(out)
	return out
}
