package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(throughputDropRule) }

var throughputDropRule = &Rule{
	ID:       "throughput-drop",
	Title:    "generation throughput dropped during the run at the same batch size",
	Severity: SeverityWarning,
	Category: CatThroughput,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Compares the engine's generation throughput with itself: at the same number
of running requests (exactly, up to 8; within 25% above that), a decode step
costs the same, so tokens per second should stay put. The rule fires when
three steady stat lines in a row fall below 60% of what the run sustained
earlier at that batch size (the best median of three steady lines before
them), that is a drop by more than 40%.

Only steady lines count (see the throughput rule): the first line after an
idle gap, a line that includes a prefill or, for vLLM, a prompt, and the line
after the batch changed are not decoding speed. Batch sizes need at least six
steady lines. Three lines in a row keep one slow interval (a long prompt, a
garbage collection) from firing it.

A sustained drop at an unchanged batch means the GPUs or the host got slower:
clocks throttled (power, temperature), another process on the GPUs or on the
host's CPUs, the KV cache filling up (retractions, preemptions), or CUDA graphs
no longer used.`,
	References: []string{
		"https://docs.nvidia.com/deploy/nvidia-smi/index.html",
	},
	Run: runThroughputDrop,
}

// dropRatio is the share of the sustained throughput below which a line
// counts as dropped: a drop by more than 40%.
const dropRatio = 0.6

// drop is a fall of throughput at one comparable batch size.
type drop struct {
	batch     string
	ref, low  []*RatePoint
	refRate   float64
	lowRate   float64
	recovered bool
}

func runThroughputDrop(p *Pass) {
	for _, s := range RuntimeOf(p.Index).Series {
		d := worstDrop(s)
		if d == nil {
			continue
		}
		ratio := d.lowRate / d.refRate
		last := d.low[len(d.low)-1]
		ev := []Evidence{
			{Src: d.ref[0].Src, Text: fmt.Sprintf("%s running: %s tok/s sustained (median of 3 steady lines)", d.batch, fmtRate(d.refRate))},
			{Src: d.low[0].Src, Text: fmt.Sprintf("%s running: %s tok/s", d.batch, fmtRate(d.low[0].Rate))},
			{Src: last.Src, Text: fmt.Sprintf("%s running: %s tok/s", d.batch, fmtRate(last.Rate))},
		}
		after := "and it did not recover before the last steady line at that batch size"
		if d.recovered {
			after = "then recovered"
		}
		hints := dropHints(d)
		msg := fmt.Sprintf("%s %s decoded %s tok/s at %s (%s), then %s tok/s from %s (%s): %.0f%% less at the same batch size, %s.%s",
			engineName(s.Engine), s.Name, fmtRate(d.refRate), requestsWord(d.batch), d.ref[0].Src, fmtRate(d.lowRate), d.low[0].Src,
			stamp(d.low[0], p.Facts.YearUnknown()), (1-ratio)*100, after, hints)
		conf := 0.6
		if !d.recovered {
			conf = 0.7
		}
		p.Report(Finding{
			Message:    msg,
			Evidence:   ev,
			Outcome:    OutcomeSlow,
			Phase:      PhaseServing,
			Cause:      true,
			Confidence: conf,
			Why:        "the same batch size decoded far slower later in the run",
			Remedy: "Look at what changed at that time: GPU clocks and throttle reasons (`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE`), " +
				"other processes on the GPUs (`nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv`) or the host's CPUs (`ps -eo pid,pcpu,args --sort=-pcpu`), " +
				"KV cache usage and retractions or preemptions in the log, and `cuda graph: False` in SGLang's decode lines. `coroner diff` against a good run shows the settings that differ.",
		})
	}
}

// worstDrop finds the deepest sustained drop of a series, or nil.
func worstDrop(s *RuntimeSeries) *drop {
	groups := map[int][]*RatePoint{}
	var order []int
	for i := range s.Points {
		p := &s.Points[i]
		if !p.Steady || p.Batch < 1 {
			continue
		}
		k := comparableBatch(p.Batch)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	var worst *drop
	for _, k := range order {
		ps := groups[k]
		if len(ps) < 6 {
			continue
		}
		d := dropIn(ps)
		if d != nil && (worst == nil || d.lowRate/d.refRate < worst.lowRate/worst.refRate) {
			worst = d
		}
	}
	return worst
}

// dropIn looks for three lines in a row under dropRatio of the best median
// of three lines before them.
func dropIn(ps []*RatePoint) *drop {
	win := func(i int) float64 { return derive.Median([]float64{ps[i].Rate, ps[i+1].Rate, ps[i+2].Rate}) }
	best, bestAt := 0.0, -1
	for j := 3; j+2 < len(ps); j++ {
		if i := j - 3; win(i) > best {
			best, bestAt = win(i), i
		}
		if best <= 0 {
			continue
		}
		if ps[j].Rate < dropRatio*best && ps[j+1].Rate < dropRatio*best && ps[j+2].Rate < dropRatio*best {
			d := &drop{batch: batchLabel(ps[j:]), ref: ps[bestAt : bestAt+3], low: ps[j : j+3], refRate: best, lowRate: win(j)}
			// Extend the low stretch while it lasts, and see whether a later
			// window climbs back.
			end := j + 3
			for end < len(ps) && ps[end].Rate < dropRatio*best {
				end++
			}
			d.low = ps[j:end]
			vals := make([]float64, 0, end-j)
			for _, p := range d.low {
				vals = append(vals, p.Rate)
			}
			d.lowRate = derive.Median(vals)
			for i := end; i+2 < len(ps); i++ {
				if win(i) >= 0.8*best {
					d.recovered = true
					break
				}
			}
			return d
		}
	}
	return nil
}

// dropHints names what else changed between the sustained and the dropped
// lines, when the stat lines show it.
func dropHints(d *drop) string {
	var hs []string
	graph := func(ps []*RatePoint) float64 {
		v, n := 0.0, 0
		for _, p := range ps {
			if p.Graph >= 0 {
				v += p.Graph
				n++
			}
		}
		if n == 0 {
			return -1
		}
		return v / float64(n)
	}
	if g0, g1 := graph(d.ref), graph(d.low); g0 > 0.5 && g1 >= 0 && g1 < 0.5 {
		hs = append(hs, "the dropped lines ran without CUDA graphs (`cuda graph: False`)")
	}
	kv := func(ps []*RatePoint) float64 {
		m := -1.0
		for _, p := range ps {
			m = max(m, p.KV)
		}
		return m
	}
	if k0, k1 := kv(d.ref), kv(d.low); k0 >= 0 && k1 >= 0.9 && k1 > k0+0.2 {
		hs = append(hs, fmt.Sprintf("KV cache usage rose from %.0f%% to %.0f%%", k0*100, k1*100))
	}
	if len(hs) == 0 {
		return ""
	}
	return " Meanwhile " + strings.Join(hs, " and ") + "."
}

// requestsWord reads a batch label as "1 running request", "16 running requests".
func requestsWord(label string) string {
	if label == "1" {
		return "1 running request"
	}
	return label + " running requests"
}
