package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(kvPressureRule) }

var kvPressureRule = &Rule{
	ID:       "kv-pressure",
	Title:    "the KV cache ran full while serving",
	Severity: SeverityWarning,
	Category: CatKVCacheInsufficent,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Every running request holds its tokens in the KV cache. When the cache is
full the scheduler stops admitting requests (the queue grows), and when
running requests need more room it evicts some: SGLang retracts them ("KV
cache pool is full. Retract requests."), vLLM preempts them ("Preemptions: N"
in the stat line, or V0's "Sequence group ... is preempted" warning) and
computes them again later. Both cost throughput and latency.

A full cache alone is healthy (SGLang's tuning guide calls token usage above
0.9 good utilization); the rule fires on its consequences:

- five or more retractions or preemptions, or any together with a cache at
  95% or more;
- three or more stat lines with the cache at 95% or more while the waiting
  queue grows (its last value above its first, and at least 5 requests).

SGLang's guide counts a retraction about once a minute as acceptable, so a
single one on a cache short of full does not fire.`,
	References: []string{
		"https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/hyperparameter_tuning.md",
	},
	Run: runKVPressure,
}

// kvFull is the usage from which the cache counts as full.
const kvFull = 0.95

func runKVPressure(p *Pass) {
	idx := p.Index
	var ev []Evidence
	evicted, evLines := 0.0, 0
	verb := "retracted"
	for _, e := range idx.Events(facts.EventRetract, facts.EventPreemption) {
		n := 1.0
		if d, ok := e.Data.(*facts.Pressure); ok {
			if v, ok := d.Retracted.Get(); ok && v > 0 {
				n = v
			}
		}
		if e.Type == facts.EventPreemption {
			verb = "preempted"
		}
		evicted += n
		if evLines < 2 {
			ev = append(ev, Ev(e))
		}
		evLines++
	}
	var full []*RatePoint
	var peak float64
	var peakAt *RatePoint
	for _, s := range RuntimeOf(idx).Series {
		for i := range s.Points {
			pt := &s.Points[i]
			if pt.KV > peak {
				peak, peakAt = pt.KV, pt
			}
			if pt.KV >= kvFull {
				full = append(full, pt)
			}
		}
		// vLLM counts its preemptions in the stat line.
		if t := s.Series.Total("preemptions"); t.N > 0 && t.Sum > 0 {
			evicted += t.Sum
			verb = "preempted"
			for _, b := range s.Series.Buckets {
				if a := b.Agg("preemptions"); a != nil && a.Sum > 0 {
					ev = append(ev, Evidence{Src: b.Src, Text: fmt.Sprintf("Preemptions: %.0f", a.Sum)})
					break
				}
			}
		}
	}
	growing := len(full) >= 3 && full[len(full)-1].Queue > full[0].Queue && full[len(full)-1].Queue >= 5
	fires := evicted >= 5 || (evicted >= 1 && len(full) > 0) || growing
	if !fires {
		return
	}
	var why []string
	if evicted > 0 {
		why = append(why, fmt.Sprintf("the scheduler %s %.0f running request(s) to free KV cache", verb, evicted))
	}
	if len(full) > 0 {
		why = append(why, fmt.Sprintf("%d stat line(s) show the KV cache at %.0f%% or more (peak %.0f%% at %s)", len(full), kvFull*100, peak*100, peakAt.Src))
		ev = append(ev, Evidence{Src: peakAt.Src, Text: fmt.Sprintf("KV cache usage %.0f%%, %s", peak*100, inFlight(peakAt))})
	}
	if growing {
		first, last := full[0], full[len(full)-1]
		why = append(why, fmt.Sprintf("while it was full the waiting queue grew from %.0f to %.0f requests", first.Queue, last.Queue))
		ev = append(ev, Evidence{Src: last.Src, Text: fmt.Sprintf("%.0f waiting", last.Queue)})
	}
	conf := 0.5
	if evicted > 0 && len(full) > 0 {
		conf = 0.7
	}
	p.Report(Finding{
		Message:    capitalize(strings.Join(why, "; ")) + ". The load needs more KV cache than the server has: requests wait, and evicted ones are computed again.",
		Evidence:   ev,
		Cause:      true,
		Confidence: conf,
		Why:        "the KV cache was full and requests were evicted or queued",
		Remedy: "Give the KV cache more memory (SGLang --mem-fraction-static, vLLM --gpu-memory-utilization), store it in FP8 (--kv-cache-dtype fp8_e4m3), spread the model over more GPUs, " +
			"or admit less at once (SGLang --max-running-requests and a higher --schedule-conservativeness, vLLM --max-num-seqs, a shorter --max-model-len).",
	})
}
