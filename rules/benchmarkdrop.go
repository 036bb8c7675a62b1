package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(benchmarkDropRule) }

var benchmarkDropRule = &Rule{
	ID:       "benchmark-drop",
	Title:    "one benchmark run is well below another of the same benchmark",
	Severity: SeverityWarning,
	Category: CatThroughput,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Performance reports paste the summary lines of the engines' benchmark
scripts, often two runs side by side: vLLM's benchmark_throughput ("Throughput:
N requests/s, M tokens/s") and benchmark_serving / vllm bench serve, SGLang's
bench_serving (the "Request throughput (req/s):" table), bench_one_batch
("Decode.  median latency: ..., median throughput: N token/s") and its
accuracy benchmarks ("Output throughput: N token/s"). parser/serverlog reads
each summary as a benchmark event, with the label a paste gives it
("Before:", "After:").

When two results of one metric differ by 10% or more, the rule reports the
lower one as slow: the later labeled "after"/"new" against the earlier
"before"/"old" (a regression), or, unlabeled, the lower against the higher.
When the lower is the first of identical runs, the likelier cause is a cold
start: the first requests compile kernels (DeepGEMM, FlashInfer, Triton)
and fill caches that later runs find ready.`,
	References: []string{
		"https://github.com/vllm-project/vllm/blob/main/benchmarks/README.md",
		"https://github.com/sgl-project/sglang/blob/main/docs/developer_guide/benchmark_and_profiling.md",
	},
	Run: runBenchmarkDrop,
}

// benchmarkDrop is the relative difference from which a run is slow.
const benchmarkDrop = 0.10

var beforeWords = []string{"before", "old", "baseline", "previous", "main", "base"}
var afterWords = []string{"after", "new", "current", "pr", "patched"}

func runBenchmarkDrop(p *Pass) {
	byMetric := map[string][]*facts.LogEvent{}
	var order []string
	for _, e := range p.Index.Events(facts.EventBenchmark) {
		m := benchData(e).Metric
		if _, ok := byMetric[m]; !ok {
			order = append(order, m)
		}
		byMetric[m] = append(byMetric[m], e)
	}
	var best struct {
		slow, ref *facts.LogEvent
		drop      float64
		labeled   bool
	}
	for _, m := range order {
		rs := byMetric[m]
		if len(rs) < 2 {
			continue
		}
		slow, ref, labeled := labeledPair(rs)
		if slow == nil {
			lo, hi := rs[0], rs[0]
			for _, e := range rs[1:] {
				if benchValue(e) < benchValue(lo) {
					lo = e
				}
				if benchValue(e) > benchValue(hi) {
					hi = e
				}
			}
			slow, ref = lo, hi
		}
		if benchValue(ref) <= 0 {
			continue
		}
		if d := 1 - benchValue(slow)/benchValue(ref); d >= benchmarkDrop && d > best.drop {
			best.slow, best.ref, best.drop, best.labeled = slow, ref, d, labeled
		}
	}
	if best.slow == nil {
		return
	}
	s, r := best.slow, best.ref
	unit := benchData(s).Unit
	msg := fmt.Sprintf("The benchmark reached %s %s at %s, %.0f%% below the %s %s at %s",
		benchNum(benchValue(s)), unit, s.Src, 100*best.drop, benchNum(benchValue(r)), unit, r.Src)
	why := fmt.Sprintf("%s %s is %.0f%% below %s", benchNum(benchValue(s)), unit, 100*best.drop, benchNum(benchValue(r)))
	remedy := "Compare the two runs' versions, settings and GPUs (coroner diff on their bundles); bisect the change between them."
	switch {
	case best.labeled:
		msg += fmt.Sprintf(" (%q against %q): a regression between the two builds or settings.", benchData(s).Label, benchData(r).Label)
	case s.Src.File == r.Src.File && s.Src.Line < r.Src.Line:
		msg += ": the first run was the slower, which a cold start explains (kernels compiled on the first requests, caches filled, graphs captured), or a change between the runs."
		remedy = "Warm the server up before measuring (a first run to discard; precompile DeepGEMM with sglang.compile_deep_gemm, keep FlashInfer's and Triton's caches), then compare warm runs."
	default:
		msg += ": a change between the runs (build, settings, load) costs that much."
	}
	p.Report(Finding{
		Message:    msg,
		Remedy:     remedy,
		Evidence:   []Evidence{Ev(s), Ev(r)},
		Confidence: 0.5,
		Outcome:    OutcomeSlow,
		Phase:      PhaseServing,
		Cause:      true,
		Why:        why,
	})
}

// labeledPair finds a result labeled as after and one labeled as before.
func labeledPair(rs []*facts.LogEvent) (after, before *facts.LogEvent, ok bool) {
	is := func(e *facts.LogEvent, words []string) bool {
		l := strings.ToLower(benchData(e).Label)
		for _, w := range words {
			if l == w || strings.HasPrefix(l, w+" ") || strings.HasSuffix(l, " "+w) {
				return true
			}
		}
		return false
	}
	for _, e := range rs {
		switch {
		case is(e, afterWords) && after == nil:
			after = e
		case is(e, beforeWords) && before == nil:
			before = e
		}
	}
	if after == nil || before == nil {
		return nil, nil, false
	}
	return after, before, true
}

// benchValue is a benchmark result's value.
func benchValue(e *facts.LogEvent) float64 {
	x, _ := benchData(e).Value.Get()
	return x
}

// benchData is a benchmark event's payload, every field absent when it has
// none.
func benchData(e *facts.LogEvent) facts.Benchmark {
	if d, ok := e.Data.(*facts.Benchmark); ok {
		return *d
	}
	return facts.Benchmark{}
}

// benchNum prints a benchmark value as the scripts do: two decimals.
func benchNum(x float64) string { return fmt.Sprintf("%.2f", x) }
