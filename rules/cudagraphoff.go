package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(graphsOffRule) }

var graphsOffRule = &Rule{
	ID:       "cuda-graph-off",
	Title:    "decoding ran without CUDA graphs",
	Severity: SeverityWarning,
	Category: CatThroughput,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `A decode step of a large model launches hundreds of small kernels; a CUDA
graph replays them as one launch. Without graphs the CPU's launch overhead
dominates at small batch sizes, and single-stream decoding is often several
times slower (SGLang and vLLM both capture decode graphs by default for that
reason).

The rule fires in two cases:

- graphs are switched off by configuration (SGLang --disable-cuda-graph,
  vLLM --enforce-eager) and the server decoded requests;
- graphs are on, yet SGLang's decode lines say ` + "`cuda graph: False`" + ` for at least
  three lines and half of the lines at batch sizes that are always captured
  (up to --cuda-graph-max-bs when the log gives it, else up to 4 running
  requests). Larger batches than the largest captured one run eagerly by
  design and do not count.`,
	References: []string{
		"https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/hyperparameter_tuning.md",
	},
	Run: runGraphsOff,
}

// alwaysCaptured is the largest batch size SGLang captures whatever the GPU
// when the log does not give cuda_graph_max_bs.
const alwaysCaptured = 4

func runGraphsOff(p *Pass) {
	idx := p.Index
	rt := RuntimeOf(idx)
	prim := rt.Primary()
	if prim == nil || prim.Active == 0 {
		return
	}
	if st := disabledBy(idx); st != nil {
		ev := []Evidence{{Src: st.Src, Text: fmt.Sprintf("%s = %s", st.Key, st.Value)}}
		if line := firstEager(prim, 1<<30); line != nil {
			ev = append(ev, Evidence{Src: line.Src, Text: fmt.Sprintf("%s running, cuda graph: False, %s tok/s", batchLabel([]*RatePoint{line}), fmtRate(line.Rate))})
		}
		flag := "--disable-cuda-graph"
		if st.Key == "enforce_eager" {
			flag = "--enforce-eager"
		}
		p.Report(Finding{
			Message: fmt.Sprintf("CUDA graphs are switched off (%s at %s) and the server decoded requests without them: every decode step launches its kernels one by one, which at small batch sizes usually costs a large share of the throughput (%s).",
				flag, st.Src, figures(prim)),
			Evidence:   ev,
			Outcome:    OutcomeSlow,
			Phase:      PhaseServing,
			Cause:      true,
			Confidence: 0.7,
			Why:        "the configuration turns CUDA graphs off",
			Remedy:     fmt.Sprintf("Remove %s unless it works around a capture failure; if it does, fix the capture (see the cuda-graph findings of the startup) or lower the captured batch sizes (SGLang --cuda-graph-max-bs, vLLM --max-cudagraph-capture-size / compilation_config) instead of disabling graphs.", flag),
		})
		return
	}
	limit, from := capturedLimit(idx)
	var eager, total int
	sizes := map[int]bool{}
	var first *RatePoint
	for i := range prim.Points {
		pt := &prim.Points[i]
		if pt.Graph < 0 || pt.Batch < 1 || pt.Batch > limit {
			continue
		}
		total += pt.N
		if pt.Graph < 0.5 {
			eager += pt.N
			sizes[int(pt.Batch)] = true
			if first == nil {
				first = pt
			}
		}
	}
	if eager < 3 || 2*eager < total {
		return
	}
	ev := []Evidence{{Src: first.Src, Text: fmt.Sprintf("%s running, cuda graph: False, %s tok/s", batchLabel([]*RatePoint{first}), fmtRate(first.Rate))}}
	captured := ""
	if e := idx.FirstEvent(facts.EventGraphEnd); e != nil {
		ev = append(ev, Ev(e))
		captured = fmt.Sprintf(" although graphs were captured at startup (%s)", e.Src)
	}
	p.Report(Finding{
		Message: fmt.Sprintf("%d of %d decode lines at batch sizes up to %d (%s) ran without a CUDA graph%s: at running-request counts %s, within the captured sizes, the engine fell back to eager decoding (%s).",
			eager, total, int(limit), from, captured, intList(sizes), figures(prim)),
		Evidence:   ev,
		Outcome:    OutcomeSlow,
		Phase:      PhaseServing,
		Cause:      true,
		Confidence: 0.6,
		Why:        "decode lines at captured batch sizes say cuda graph: False",
		Remedy:     "Look for warnings after capture that disable graph replay (a sampling, LoRA, logprob or speculative mode the graph runner does not support), and check that --disable-cuda-graph-padding is off; SGLang's --enable-profile-cuda-graph and a py-spy dump of the scheduler show which path decodes.",
	})
}

// disabledBy returns the setting that switches CUDA graphs off, or nil.
func disabledBy(idx *Index) *facts.Setting {
	for _, k := range []string{"disable_cuda_graph", "enforce_eager"} {
		if st, ok := idx.Setting(k); ok && isTrue(st.Value) {
			return st
		}
	}
	return nil
}

func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// capturedLimit is the largest batch size known to be captured, and where
// that comes from.
func capturedLimit(idx *Index) (float64, string) {
	if st, ok := idx.Setting("cuda_graph_max_bs", "cuda_graph_max_bs_decode"); ok {
		if v, err := strconv.Atoi(st.Value); err == nil && v > 0 {
			return float64(v), fmt.Sprintf("cuda_graph_max_bs=%d at %s", v, st.Src)
		}
	}
	return alwaysCaptured, fmt.Sprintf("SGLang captures at least %d", alwaysCaptured)
}

// firstEager returns the first decode line that ran without a graph at a
// batch size up to limit.
func firstEager(s *RuntimeSeries, limit float64) *RatePoint {
	for i := range s.Points {
		p := &s.Points[i]
		if p.Graph >= 0 && p.Graph < 0.5 && p.Batch >= 1 && p.Batch <= limit {
			return p
		}
	}
	return nil
}

func intList(m map[int]bool) string {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var s []string
	for _, k := range ks {
		s = append(s, strconv.Itoa(k))
	}
	return strings.Join(s, ", ")
}
