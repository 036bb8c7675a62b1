package derive

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// The runtime rules (throughput, throughput-drop, cuda-graph-off,
// serving-hang, kv-pressure, spec-decode-acceptance) and `coroner diff` read
// the engines' stat lines through this one reduction, so that they agree on
// what "single-stream tok/s" or "accept length" means.
//
// Generation throughput is a property of a batch: an engine decoding 16
// requests prints 16 times the tokens per second of one. Figures are
// therefore kept per batch size (SGLang "#running-req", vLLM "Running"), and
// only from steady stat lines: lines whose batch did not change since the
// previous line, with no prefill and no idle gap in between. SGLang's first
// decode line after idle counts the idle time in its throughput (0.07 tok/s),
// and vLLM's interval that admits a request spends part of it on the prompt;
// neither says how fast the engine decodes.

// RuntimeSeries is one engine process's generation-throughput stat lines:
// SGLang's "Decode batch" lines of a scheduler (TP0, or DPn TP0), or vLLM's
// "Avg generation throughput" lines of one engine.
type RuntimeSeries struct {
	Log    *facts.Log
	Series *facts.Series
	// Spec is vLLM's SpecDecoding series of the same process; SGLang prints
	// acceptance inside the decode line, so it is nil there.
	Spec   *facts.Series
	Engine facts.Engine
	// Name is the process ("TP0", "APIServer", "APIServer Engine 001"),
	// prefixed with the log's file name when the bundle has several logs.
	Name string
	// Points are the series' buckets in time order: one stat line each
	// unless the series was long enough to be compacted.
	Points []RatePoint
	// Batches are the figures per batch size, smallest first.
	Batches []BatchRate
	// Active counts the stat lines with requests running or tokens made;
	// Mean is their mean generation throughput and Peak the highest steady one.
	Active int
	Mean   float64
	Peak   float64
	// First and Last are the first and last active points (nil when none).
	First, Last *RatePoint
	// Accept is the speculative decoding acceptance, nil without a drafter.
	Accept *Acceptance
	// Compacted is set when the log had more stat lines than a series keeps
	// one by one: buckets then average several lines, idle and prefill lines
	// with steady ones, and the figures are approximate (biased low).
	Compacted bool
}

// RatePoint is one bucket of a throughput series.
type RatePoint struct {
	Src        facts.Source
	Start, End time.Time
	// N is the number of stat lines in the bucket.
	N int
	// Batch is the number of running requests, -1 when the bucket mixes
	// several batch sizes.
	Batch float64
	// Rate is the mean generation throughput (tokens/s); Prompt vLLM's
	// prompt throughput.
	Rate, Prompt float64
	// Queue is the most requests waiting; KV the highest KV cache usage as a
	// fraction (-1 when not printed); Graph the share of lines that ran a
	// CUDA graph (SGLang, -1 when not printed).
	Queue, KV, Graph float64
	// Tokens is SGLang's "#token" (KV tokens in use) at the bucket's last
	// line, -1 when absent.
	Tokens float64
	// Steady marks a line whose batch did not change since the previous line,
	// with no prefill and no idle gap in between.
	Steady bool
	// AfterGap marks the first line after an idle gap.
	AfterGap bool
}

// BatchRate is the generation throughput at one batch size.
type BatchRate struct {
	Batch int
	// N counts the lines the figures come from; Steady is false when no
	// steady line exists at this size and the figures come from every line
	// but those far below the rest.
	N                      int
	Steady                 bool
	Median, Mean, Min, Max float64
	// Src is the line closest to the median.
	Src facts.Source
}

// Acceptance is what a speculative-decoding drafter achieved.
type Acceptance struct {
	// Algorithm and Draft name the drafter as the settings give it ("EAGLE3",
	// "/models/drafter"); DraftTokens is the tokens drafted per verify step
	// (0 unknown).
	Algorithm, Draft string
	DraftTokens      int
	Settings         []*facts.Setting
	// N counts the stat lines; Len is the mean accept length (tokens emitted
	// per verify step, the target's own token included: 1.0 means no draft
	// token was accepted; 0 when not printed); Rate the mean share of drafted
	// tokens accepted (0-1, -1 when not printed).
	N         int
	Len, Rate float64
	First     facts.Source
	Last      facts.Source
	// FirstText and LastText are those lines' acceptance as printed.
	FirstText, LastText string
}

// SingleStream returns the figures at one running request, or nil.
func (s *RuntimeSeries) SingleStream() *BatchRate {
	for i := range s.Batches {
		if s.Batches[i].Batch == 1 {
			return &s.Batches[i]
		}
	}
	return nil
}

// Runtime is every runtime series of a bundle.
type Runtime struct {
	Series []*RuntimeSeries
}

// Primary returns the series with the most active lines (the first on a
// tie), which a one-line summary or a diff stands on; nil when none.
func (r *Runtime) Primary() *RuntimeSeries {
	var best *RuntimeSeries
	for _, s := range r.Series {
		if best == nil || s.Active > best.Active {
			best = s
		}
	}
	if best != nil && best.Active == 0 && best.Accept == nil {
		return nil
	}
	return best
}

// RuntimeOf reduces the stat lines of every log. It is cheap (a series
// holds at most facts.MaxBuckets buckets), so each rule computes it rather
// than growing the shared index.
func RuntimeOf(idx *Index) *Runtime {
	rt := &Runtime{}
	multi := len(idx.Facts.Logs) > 1
	for _, l := range idx.Facts.Logs {
		for _, s := range l.Series {
			if !IsRateSeries(s) {
				continue
			}
			rs := &RuntimeSeries{Log: l, Series: s, Engine: l.Engine, Name: s.Proc.Key(), Compacted: s.PerBucket > 1}
			if s.Stream != "" {
				rs.Name += " " + s.Stream
			}
			if multi {
				rs.Name = l.Label() + ": " + rs.Name
			}
			if rs.Engine == facts.EngineUnknown {
				rs.Engine = engineOfSeries(s)
			}
			rs.Spec = specSeriesOf(l, s)
			rs.points(prefillOf(l, s))
			rs.batches()
			rs.Accept = acceptanceOf(idx, rs)
			rt.Series = append(rt.Series, rs)
		}
	}
	return rt
}

func IsRateSeries(s *facts.Series) bool {
	switch s.Type {
	case facts.EventStatDecode:
		return true
	case facts.EventStatThroughput:
		// V0's separate prefix-cache line carries no throughput.
		return s.Stream != "prefix-cache"
	}
	return false
}

func engineOfSeries(s *facts.Series) facts.Engine {
	if s.Type == facts.EventStatDecode {
		return facts.EngineSGLang
	}
	return facts.EngineVLLM
}

// specSeriesOf finds vLLM's SpecDecoding series written by the same process.
func specSeriesOf(l *facts.Log, s *facts.Series) *facts.Series {
	if s.Type != facts.EventStatThroughput {
		return nil
	}
	for _, x := range l.Series {
		if x.Type == facts.EventStatSpecDecode && x.Proc.Key() == s.Proc.Key() && (x.Stream == s.Stream || x.Stream == "") {
			return x
		}
	}
	return nil
}

// prefillOf returns the line ranges of SGLang's prefill stat lines of the
// same scheduler: a prefill between two decode lines paused decoding.
func prefillOf(l *facts.Log, s *facts.Series) [][2]int {
	if s.Type != facts.EventStatDecode {
		return nil
	}
	var out [][2]int
	for _, x := range l.Series {
		if x.Type != facts.EventStatPrefill || x.Proc.Key() != s.Proc.Key() {
			continue
		}
		for i, b := range x.Buckets {
			// A bucket of one line is that line; a compacted bucket spans
			// up to the next one.
			end := b.Src.Line
			switch {
			case b.N == 1:
			case i+1 < len(x.Buckets):
				end = max(end, x.Buckets[i+1].Src.Line-1)
			case x.Last != nil:
				end = x.Last.Src.Line
			}
			out = append(out, [2]int{b.Src.Line, end})
		}
	}
	return out
}

// batchKeys are the running-request fields, SGLang's first.
var batchKeys = []string{"running_req", "running"}

func AggOf(b *facts.Bucket, keys ...string) *facts.Agg {
	for _, k := range keys {
		if a := b.Agg(k); a != nil && a.N > 0 {
			return a
		}
	}
	return nil
}

// points turns buckets into rate points and marks the steady ones.
func (s *RuntimeSeries) points(prefill [][2]int) {
	bs := s.Series.Buckets
	for _, b := range bs {
		p := RatePoint{Src: b.Src, Start: b.Start, End: b.End, N: b.N, Batch: -1, KV: -1, Graph: -1, Tokens: -1}
		if a := AggOf(b, batchKeys...); a != nil && a.Min == a.Max {
			p.Batch = a.Min
		}
		if a := AggOf(b, "gen_throughput"); a != nil {
			p.Rate = a.Mean()
		}
		if a := AggOf(b, "prompt_throughput"); a != nil {
			p.Prompt = a.Mean()
		}
		if a := AggOf(b, "queue_req", "waiting"); a != nil {
			p.Queue = a.Max
		}
		if a := AggOf(b, "token_usage", "full_token_usage", "gpu_token_usage"); a != nil {
			p.KV = a.Max
		}
		if a := AggOf(b, "kv_cache_usage_pct"); a != nil {
			p.KV = a.Max / 100
		}
		if a := AggOf(b, "cuda_graph"); a != nil {
			p.Graph = a.Mean()
		}
		if a := AggOf(b, "tokens", "full_token"); a != nil && b.N == 1 {
			p.Tokens = a.Max
		}
		s.Points = append(s.Points, p)
	}
	gapLimit := gapLimitOf(s.Points)
	for i := range s.Points {
		p := &s.Points[i]
		if i == 0 {
			p.AfterGap = true
			continue
		}
		q := &s.Points[i-1]
		if !q.End.IsZero() && !p.Start.IsZero() && p.Start.Sub(q.End) > gapLimit {
			p.AfterGap = true
			continue
		}
		// A line without tokens is a stall (the serving-hang rule's), not
		// a decoding speed.
		if p.Batch < 0 || p.Batch != q.Batch || p.Batch == 0 || p.Rate == 0 {
			continue
		}
		switch s.Series.Type {
		case facts.EventStatDecode:
			// A new request that replaced a finished one leaves the batch
			// size as it was but restarts the KV token count.
			if p.Tokens >= 0 && q.Tokens >= 0 && p.Tokens < q.Tokens {
				continue
			}
			if prefillBetween(prefill, q.Src.Line, p.Src.Line) {
				continue
			}
		case facts.EventStatThroughput:
			if p.Prompt > 0 {
				continue
			}
		}
		p.Steady = true
	}
	var sum float64
	var n int
	for i := range s.Points {
		p := &s.Points[i]
		if p.Batch == 0 && p.Rate == 0 {
			continue
		}
		if p.Batch < 0 && p.Rate == 0 {
			continue
		}
		if s.First == nil {
			s.First = p
		}
		s.Last = p
		sum += p.Rate * float64(p.N)
		n += p.N
		if p.Steady {
			s.Peak = max(s.Peak, p.Rate)
		}
	}
	s.Active = n
	if n > 0 {
		s.Mean = sum / float64(n)
	}
}

// gapLimitOf is how long a pause between two stat lines means the engine
// was idle: 2.5 times the usual interval, at least 5 s.
func gapLimitOf(ps []RatePoint) time.Duration {
	var ds []float64
	for i := 1; i < len(ps); i++ {
		if ps[i].Start.IsZero() || ps[i-1].End.IsZero() {
			continue
		}
		ds = append(ds, ps[i].Start.Sub(ps[i-1].End).Seconds())
	}
	limit := 5 * time.Second
	if len(ds) > 0 {
		limit = max(limit, time.Duration(2.5*Median(ds)*float64(time.Second)))
	}
	return limit
}

func prefillBetween(ranges [][2]int, from, to int) bool {
	for _, r := range ranges {
		if r[1] > from && r[0] < to {
			return true
		}
	}
	return false
}

// batches computes the figures per batch size.
func (s *RuntimeSeries) batches() {
	by := map[int][]*RatePoint{}
	steady := map[int]bool{}
	for i := range s.Points {
		p := &s.Points[i]
		if p.Batch < 1 || p.Batch != math.Trunc(p.Batch) {
			continue
		}
		b := int(p.Batch)
		if p.Steady && !steady[b] {
			steady[b] = true
			by[b] = nil
		}
		if steady[b] && !p.Steady {
			continue
		}
		by[b] = append(by[b], p)
	}
	sizes := make([]int, 0, len(by))
	for b := range by {
		sizes = append(sizes, b)
	}
	sort.Ints(sizes)
	for _, b := range sizes {
		ps := by[b]
		if !steady[b] {
			// Without a steady line, a figure needs a few lines to stand on.
			if ps = dropFarBelow(ps); len(ps) < 3 {
				continue
			}
		}
		br := BatchRate{Batch: b, Steady: steady[b]}
		var vals []float64
		var sum float64
		for _, p := range ps {
			vals = append(vals, p.Rate)
			sum += p.Rate * float64(p.N)
			br.N += p.N
		}
		br.Median = Median(vals)
		br.Mean = sum / float64(br.N)
		br.Min, br.Max = vals[0], vals[0]
		best := math.Inf(1)
		for _, p := range ps {
			br.Min, br.Max = min(br.Min, p.Rate), max(br.Max, p.Rate)
			if d := math.Abs(p.Rate - br.Median); d < best {
				best, br.Src = d, p.Src
			}
		}
		s.Batches = append(s.Batches, br)
	}
}

// dropFarBelow removes the lines far below the rest (under half the
// median): lines that counted idle time or a prompt.
func dropFarBelow(ps []*RatePoint) []*RatePoint {
	var vals []float64
	for _, p := range ps {
		vals = append(vals, p.Rate)
	}
	m := Median(vals)
	var out []*RatePoint
	for _, p := range ps {
		if p.Rate >= m/2 {
			out = append(out, p)
		}
	}
	return out
}

func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

var numSpecRE = regexp.MustCompile(`num_spec(?:ulative)?_tokens'?\s*[:=]\s*(\d+)`)

// acceptanceOf reads a drafter's acceptance: SGLang's "accept len" and
// "accept rate" of the decode lines, or vLLM's SpecDecoding lines.
func acceptanceOf(idx *Index, s *RuntimeSeries) *Acceptance {
	a := &Acceptance{Rate: -1}
	lenSum, rateSum := 0.0, 0.0
	lenN, rateN := 0, 0
	add := func(src *facts.Series, lenKey, rateKey string, rateScale float64) {
		for _, b := range src.Buckets {
			if x := b.Agg(lenKey); x != nil && x.N > 0 {
				lenSum += x.Sum
				lenN += x.N
			}
			if x := b.Agg(rateKey); x != nil && x.N > 0 {
				rateSum += x.Sum * rateScale
				rateN += x.N
			}
		}
		if lenN+rateN > 0 {
			a.N = src.Count
			a.First, a.FirstText = src.First.Src, acceptText(src.First.Values, lenKey, rateKey)
			a.Last, a.LastText = src.Last.Src, acceptText(src.Last.Values, lenKey, rateKey)
		}
	}
	switch {
	case s.Spec != nil:
		add(s.Spec, "mean_acceptance_length", "acceptance_rate_pct", 0.01)
	case s.Series.Type == facts.EventStatDecode:
		add(s.Series, "accept_len", "accept_rate", 1)
	}
	if lenN+rateN == 0 {
		return nil
	}
	if lenN > 0 {
		a.Len = lenSum / float64(lenN)
	}
	if rateN > 0 {
		a.Rate = rateSum / float64(rateN)
	}
	// vLLM prints the token counts of each interval: their totals weigh
	// busy intervals more than the mean of the printed rates does.
	var accepted, drafted float64
	if s.Spec != nil {
		acc, dr := s.Spec.Total("accepted_tokens"), s.Spec.Total("draft_tokens")
		accepted, drafted = acc.Sum, dr.Sum
		if drafted > 0 {
			a.Rate = accepted / drafted
		}
	}
	for _, k := range []string{"speculative_algorithm", "speculative_draft_model_path", "speculative_num_draft_tokens", "speculative_num_steps", "speculative_config", "speculative_model", "num_speculative_tokens"} {
		st, ok := idx.Setting(k)
		if !ok || isNone(st.Value) {
			continue
		}
		a.Settings = append(a.Settings, st)
		switch k {
		case "speculative_algorithm":
			a.Algorithm = st.Value
		case "speculative_draft_model_path", "speculative_model":
			a.Draft = st.Value
		case "speculative_num_draft_tokens", "num_speculative_tokens":
			// SGLang's draft tokens count the verify slot of the target's
			// own token; vLLM's speculative tokens do not.
			if n, err := strconv.Atoi(st.Value); err == nil {
				if k == "speculative_num_draft_tokens" {
					n--
				}
				a.DraftTokens = n
			}
		case "speculative_config":
			if m := numSpecRE.FindStringSubmatch(st.Value); m != nil && a.DraftTokens == 0 {
				a.DraftTokens, _ = strconv.Atoi(m[1])
			}
			if a.Algorithm == "" {
				a.Algorithm = quotedField(st.Value, "method")
			}
			if a.Draft == "" {
				a.Draft = quotedField(st.Value, "model")
			}
		}
	}
	if drafted > 0 && a.DraftTokens > 0 {
		a.Len = 1 + accepted/(drafted/float64(a.DraftTokens))
	}
	return a
}

// acceptText renders one stat line's acceptance figures.
func acceptText(vs map[string]float64, lenKey, rateKey string) string {
	var parts []string
	if v, ok := vs[lenKey]; ok {
		parts = append(parts, fmt.Sprintf("accept length %.2f", v))
	}
	if v, ok := vs[rateKey]; ok {
		if rateKey == "acceptance_rate_pct" {
			parts = append(parts, fmt.Sprintf("acceptance rate %.1f%%", v))
		} else {
			parts = append(parts, fmt.Sprintf("accept rate %.2f", v))
		}
	}
	if acc, ok := vs["accepted_tokens"]; ok {
		if dr, ok := vs["draft_tokens"]; ok {
			parts = append(parts, fmt.Sprintf("%.0f of %.0f drafted tokens accepted", acc, dr))
		}
	}
	return strings.Join(parts, ", ")
}

// PointText renders a stat line's figures for evidence: "1 running,
// 63.61 tok/s".
func PointText(p *RatePoint) string {
	var parts []string
	if p.Batch >= 0 {
		parts = append(parts, fmt.Sprintf("%.0f running", p.Batch))
	}
	if p.Queue > 0 {
		parts = append(parts, fmt.Sprintf("%.0f waiting", p.Queue))
	}
	if p.Prompt > 0 {
		parts = append(parts, fmt.Sprintf("prompt %.1f tok/s", p.Prompt))
	}
	parts = append(parts, fmt.Sprintf("generation %.2f tok/s", p.Rate))
	if p.N > 1 {
		parts = append(parts, fmt.Sprintf("mean of %d lines", p.N))
	}
	return strings.Join(parts, ", ")
}

func isNone(v string) bool {
	return v == "" || v == "None" || v == "null" || v == "none"
}

// quotedField reads 'key': 'value' or key='value' out of a Python repr.
func quotedField(s, key string) string {
	for _, pre := range []string{"'" + key + "': '", key + "='"} {
		if i := strings.Index(s, pre); i >= 0 {
			rest := s[i+len(pre):]
			if j := strings.IndexByte(rest, '\''); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}
