package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(stragglerRanksRule) }

var stragglerRanksRule = &Rule{
	ID:       "straggler-ranks",
	Title:    "ranks far behind their peers in a startup step",
	Severity: SeverityWarning,
	Category: CatSlowStorage,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Every rank of a tensor- or pipeline-parallel server runs the same startup
steps, and each prints how long its own took: the weights (SGLang's "Load
weight end. elapsed=778.18 s", vLLM's "Loading weights took 12.34 seconds" and
"Model loading took 15 GiB and 8.4 seconds", TGI's "Shard ready in 9.1s"),
memory profiling ("Memory profiling takes 4.26 seconds"), torch.compile
("torch.compile takes 55 s in total") and CUDA-graph capture (SGLang's "Capture
cuda graph end. Time elapsed: 7.23 s", vLLM's "Graph capturing finished in 9
secs"). The group moves at the pace of its slowest rank: the next collective
waits for it.

For each step that three or more ranks report, the rule compares each rank with
the median of the step: a rank that took at least twice the median and 30 s
more is a straggler, named with the numbers the log prints. When the ranks
carry their host (Ray's ip=, NCCL's host name) and the stragglers share one,
the node is named. On the weights a straggler is most often its disk or its
page cache (a cold node, another rank's reads competing for one disk), or CPU
contention while the weights are processed; it is a finding, not the cause of
the outcome.`,
	References: []string{
		"https://github.com/sgl-project/sglang/blob/v0.5.8/python/sglang/srt/model_executor/model_runner.py",
		"https://github.com/vllm-project/vllm/blob/v0.10.1/vllm/v1/worker/gpu_model_runner.py",
	},
	Run: runStragglerRanks,
}

// stepDurations are the event types whose elapsed_s is one rank's own time
// for a startup step, with the step in words.
var stepDurations = []struct {
	typ  facts.EventType
	what string
}{
	{facts.EventLoadEnd, "load the weights"},
	{facts.EventMemoryProfile, "profile memory"},
	{facts.EventTorchCompileEnd, "run torch.compile"},
	{facts.EventGraphEnd, "capture the CUDA graphs"},
}

type rankTime struct {
	key string
	e   *facts.LogEvent
	s   float64
}

func runStragglerRanks(p *Pass) {
	idx := p.Index
	for _, step := range stepDurations {
		for _, l := range idx.Facts.Logs {
			reportStragglers(p, l, step.typ, step.what)
		}
	}
}

func reportStragglers(p *Pass, l *facts.Log, typ facts.EventType, what string) {
	byKey := map[string]rankTime{}
	for _, e := range l.Events {
		if e.Type != typ || e.Proc.Name == "" {
			continue
		}
		v, ok := stepElapsed(e)
		if !ok || v <= 0 {
			continue
		}
		if _, seen := byKey[e.Proc.Key()]; !seen {
			byKey[e.Proc.Key()] = rankTime{key: e.Proc.Key(), e: e, s: v}
		}
	}
	if len(byKey) < 3 {
		return
	}
	all := make([]rankTime, 0, len(byKey))
	for _, r := range byKey {
		all = append(all, r)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].s != all[j].s {
			return all[i].s < all[j].s
		}
		return all[i].key < all[j].key
	})
	secs := make([]float64, len(all))
	for i, r := range all {
		secs[i] = r.s
	}
	med := derive.Median(secs)
	var slow, rest []rankTime
	for _, r := range all {
		if r.s >= 2*med && r.s >= med+30 {
			slow = append(slow, r)
		} else {
			rest = append(rest, r)
		}
	}
	if len(slow) == 0 || len(rest) == 0 {
		return
	}
	var names, times []string
	var ev []Evidence
	for _, r := range slow {
		names = append(names, r.key)
		times = append(times, fmt.Sprintf("%s s (%.1f×, %s)", trimFloat(r.s), r.s/med, r.e.Src))
		if len(ev) < 4 {
			ev = append(ev, Evidence{Src: r.e.Src, Text: fmt.Sprintf("%s: %s s", r.key, trimFloat(r.s))})
		}
	}
	mid := rest[len(rest)/2]
	ev = append(ev, Evidence{Src: mid.e.Src, Text: fmt.Sprintf("%s, a typical peer: %s s", mid.key, trimFloat(mid.s))})
	msg := fmt.Sprintf("%s took %s to %s; the other %d rank(s) took %s-%s s (median of all %s s). The group waits for the slowest at its next collective.",
		strings.Join(names, ", "), strings.Join(times, ", "), what, len(rest), trimFloat(rest[0].s), trimFloat(rest[len(rest)-1].s), trimFloat(med))
	if host := sharedHost(slow, rest); host != "" {
		msg += fmt.Sprintf(" The slow ranks all run on %s: the node is behind, not a rank.", host)
	}
	ph := derive.PhaseOf[typ]
	if typ == facts.EventLoadEnd {
		ph = PhaseWeightsLoading
	} else if typ == facts.EventGraphEnd {
		ph = PhaseCUDAGraphCapture
	}
	p.Report(Finding{
		Title:      fmt.Sprintf("%d rank(s) took far longer than their peers to %s", len(slow), what),
		Message:    msg,
		Evidence:   ev,
		Phase:      ph,
		Confidence: 0.7,
		Remedy:     "Compare the slow ranks' hosts, disks and NUMA placement with the others': a model directory on local NVMe (or warmed into the page cache) for every node, and one loader per disk, keep ranks in step.",
	})
}

// sharedHost returns the host every slow rank runs on when the rest run
// elsewhere, "" otherwise.
func sharedHost(slow, rest []rankTime) string {
	h := slow[0].e.Proc.Host
	if h == "" {
		return ""
	}
	for _, r := range slow {
		if r.e.Proc.Host != h {
			return ""
		}
	}
	for _, r := range rest {
		if r.e.Proc.Host == h || r.e.Proc.Host == "" {
			return ""
		}
	}
	return h
}

// trimFloat writes a duration as the log does, without trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// stepElapsed is the time a step's line printed it took: a milestone's
// (vLLM's "torch.compile takes 11.02 s in total" is torch-compile-end's) or
// memory profiling's.
func stepElapsed(e *facts.LogEvent) (float64, bool) {
	switch d := e.Data.(type) {
	case *facts.Milestone:
		return d.ElapsedS.Get()
	case *facts.MemoryProfile:
		return d.ElapsedS.Get()
	}
	return 0, false
}
