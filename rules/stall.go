package rules

import (
	"fmt"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(stallRule) }

var stallRule = &Rule{
	ID:       "stall",
	Title:    "startup stalled: the log is silent while the server is alive",
	Severity: SeverityError,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Measures how long the server log has been silent, from its last sign of life
(the last stamped line, or the estimated end of a progress bar drawn after it)
to the latest evidence in the bundle (the last process or GPU snapshot, probe
or capture stamp), while the server's processes are still alive in the latest
process snapshot. A silence longer than the phase can take is a hang.

How long a phase may stay silent, and why:

| phase | limit | why |
|---|---|---|
| launch | 10 min | imports and spawning the workers take seconds to a minute |
| distributed-init | 5 min (10 multi-node) | NCCL/Gloo setup takes 0.2-3 s on one node; a hang here is a rendezvous or P2P problem |
| weights-loading | 3x the time the remaining shards need at the measured shard rate, at least 10 min; 30 min without a progress bar | loading scales with checkpoint size and disk speed |
| post-weights | 20 min | after the last shard the engine post-processes weights and sizes the KV cache in seconds; quantized-MoE repacking or a DeepGEMM/flashinfer JIT pre-compile can take 10-20 min |
| kv-cache | 10 min | memory profiling runs one forward pass |
| torch-compile | 30 min | Dynamo and Inductor take minutes, tens on big models |
| cuda-graph-capture | 15 min; 45 with torch.compile | capture takes 5-90 s observed; the first batch size may include a kernel JIT build of a few minutes on a new GPU |
| warmup | 10 min | SGLang gives its warmup request 120 s; vLLM's API server starts in seconds |

A run that reached serving is never stalled by this rule (an idle server logs
nothing); a run whose processes are gone, or whose log ends in a failure, is
for the crashed rule. Without a process snapshot taken after the log's last
line, a silence cannot be measured, and the rule says what to collect.`,
	References: []string{
		"https://github.com/sgl-project/sglang/issues/3666",
		"https://github.com/sgl-project/sglang/issues/3578",
	},
	Run: runStall,
}

// phaseLimit is how long a phase may stay silent, and why.
func phaseLimit(idx *Index, ph Phase) (time.Duration, string) {
	switch ph {
	case PhaseLaunch:
		return 10 * time.Minute, "imports and spawning the workers take seconds to a minute"
	case PhaseDistributedInit:
		if s, ok := idx.Setting("nnodes"); ok && s.Value != "1" {
			return 10 * time.Minute, "multi-node NCCL/Gloo rendezvous takes seconds to a few minutes"
		}
		return 5 * time.Minute, "NCCL/Gloo setup takes 0.2-3 s on one node"
	case PhaseWeightsLoading:
		if b := weightsBar(idx); b != nil && b.N > 0 && b.Elapsed > 0 {
			per := b.Elapsed / float64(b.N)
			left := time.Duration(per*float64(b.Total-b.N)*float64(time.Second)) * 3
			limit := max(10*time.Minute, left+time.Duration(3*per*float64(time.Second)))
			return limit, fmt.Sprintf("the bar shows %d/%d shards at %.1f s per shard", b.N, b.Total, per)
		}
		return 30 * time.Minute, "no shard progress is visible; a large checkpoint on a slow disk can take that long"
	case PhasePostWeights:
		return 20 * time.Minute, "after the last shard the engine post-processes weights and sizes the KV cache in seconds; quantized-MoE repacking or a DeepGEMM/flashinfer JIT pre-compile can take 10-20 min"
	case PhaseKVCache:
		return 10 * time.Minute, "memory profiling runs one forward pass"
	case PhaseTorchCompile:
		return 30 * time.Minute, "Dynamo and Inductor take minutes, tens of minutes on big models"
	case PhaseCUDAGraphCapture:
		if s, ok := idx.Setting("enable_torch_compile"); ok && (s.Value == "True" || s.Value == "true") {
			return 45 * time.Minute, "capture with torch.compile compiles every batch size"
		}
		return 15 * time.Minute, "capture takes 5-90 s observed; the first batch size may include a kernel JIT build of a few minutes"
	case PhaseWarmup:
		return 10 * time.Minute, "SGLang gives its warmup request 120 s; vLLM's API server starts in seconds"
	}
	return 0, ""
}

func runStall(p *Pass) {
	idx, st := p.Index, &p.Index.State
	if st.Ready != nil || st.Failed() {
		return
	}
	if st.LastLog == nil || st.Last.Time.IsZero() {
		return
	}
	phase := idx.RunPhase()
	if phase == PhaseServing || phase == PhaseShutdown || phase == "" {
		return
	}
	if st.PS == nil {
		p.Missing("`ps -eo pid,ppid,lstart,etimes,times,rss,stat,nlwp,args` now and a minute later (`coroner collect --count 2 --every 60s`)",
			"a process snapshot: without one a silent log cannot be told from a dead server")
		return
	}
	if st.Silence == 0 {
		p.Missing("a process snapshot and the log taken at the same moment (`coroner collect --log FILE`)",
			"evidence later than the log's last line: the silence cannot be measured")
		return
	}
	if len(st.Alive) == 0 {
		return // nothing alive: a crash or a kill, not a stall
	}
	limit, why := phaseLimit(idx, phase)
	if limit == 0 || st.Silence <= limit {
		return
	}
	// A compiler that started recently under the server is work being done:
	// the silence is a build, which the jit-compile rule judges.
	if t := compilersOf(st.PS); len(t.compilers) > 0 {
		if oldest := newestStart(t.compilers); !oldest.IsZero() && !st.PS.At.IsZero() && st.PS.At.Sub(oldest) < limit {
			p.RuleOut(fmt.Sprintf("the log has been silent for %s in %s, but compilers started %s before the snapshot run under the server: a kernel build, not a hang",
				humanDuration(st.Silence), phase, humanDuration(st.PS.At.Sub(oldest))), EvProc(t.compilers[len(t.compilers)-1]))
			return
		}
	}
	ev := []Evidence{{Src: st.Last.Src, Text: st.Last.Text}}
	for i, w := range st.Workers {
		if i == 4 {
			break
		}
		ev = append(ev, EvProc(w))
	}
	msg := fmt.Sprintf("Hung in %s for %s: the log's last sign of life is %s (%s) and the latest evidence, %s, is from %s; %d server process(es) are alive in that snapshot. %s normally stays silent at most %s (%s).",
		phase, humanDuration(st.Silence), st.Last.Src, facts.FormatTime(st.Last.Time.UTC(), "2006-01-02 15:04:05Z", p.Facts.YearUnknown()),
		idx.LatestFrom, facts.FormatTime(idx.Latest.UTC(), "2006-01-02 15:04:05Z", p.Facts.YearUnknown()), len(st.Alive), capitalize(phaseWords(phase)), humanDuration(limit), why)
	p.Report(Finding{
		Message:    msg,
		Evidence:   ev,
		Outcome:    OutcomeHung,
		Phase:      phase,
		Stalled:    st.Silence,
		Confidence: 0.9,
		Remedy:     "Before restarting, grab stacks of the stuck processes: `py-spy dump --native --pid PID` for each scheduler/worker, `nvidia-smi -q`, and a second `ps` a minute later to see whether CPU time still grows (`coroner collect --count 2 --every 60s`).",
	})
}

// newestStart is the latest start time among processes.
func newestStart(ps []*facts.Process) time.Time {
	var t time.Time
	for _, p := range ps {
		if p.Start.After(t) {
			t = p.Start
		}
	}
	return t
}
