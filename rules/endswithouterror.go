package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(endsWithoutRule) }

var endsWithoutRule = &Rule{
	ID:       "ends-without-error",
	Title:    "where a log that ends without an error stopped",
	Severity: SeverityWarning,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `A log (often a paste) that ends without an error, a ready line or any
evidence taken after it can still say what state the run was in, from what
its last lines were doing:

- inside a step that completes in seconds when it works: NCCL's communicator
  set-up (bootstrap and transport lines, no "Init COMPLETE" after them), or
  a progress bar left at 0 of its total (the first capture step, the first
  batch of an offline generation): the run is hung there, most often in a
  collective that never completes, and on PCIe machines in a broken GPU
  peer-to-peer path;
- right after the engine finished initializing (graphs captured, vLLM's
  "init engine ... took"): the run was still starting its API server, in
  progress (after an earlier step the log is as likely cut by a kill as
  still going: incomplete-log says that);
- after vLLM's API server listed its routes (it does so once the engine is
  up, right before it serves): the server came up.

These are readings of where the evidence stops, weaker than any failure or
snapshot: the rule says nothing when the bundle holds a failure, a ready
line, a process snapshot or a probe (the stall, crash and readiness rules
decide then), or a line of the catalog that means the run failed.`,
	References: []string{
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
		"https://docs.vllm.ai/en/latest/usage/troubleshooting.html",
	},
	Run: runEndsWithout,
}

func runEndsWithout(p *Pass) {
	idx, st := p.Index, &p.Index.State
	if st.Failed() || idx.SignatureFailed() || st.Ready != nil || st.Serving != nil || st.Shutdown != nil || st.PS != nil || len(idx.Facts.Probes) > 0 {
		return
	}
	l := idx.MainLog()
	if l == nil || len(l.Events)+len(l.Bars) == 0 {
		return
	}
	last := lastRecord(l)
	if last.line == 0 {
		return
	}
	end := Evidence{Src: facts.Source{File: l.Path, Line: last.line}, Text: "last line: " + trimText(last.text, 200)}
	multi := multiGPU(idx, l)
	switch {
	case last.bar != nil && last.bar.N == 0 && last.bar.Total > 0:
		b := last.bar
		phase := PhaseServing
		if derive.BarPhase(b) == facts.EventGraphProgress {
			phase = PhaseCUDAGraphCapture
		}
		ev := []Evidence{{Src: b.Src, Text: derive.BarText(b)}}
		p.Report(Finding{
			Message: fmt.Sprintf("The log ends with %q at 0 of %d (%s), and nothing after it: the first step never finished. A first step that does not finish is a hang: a collective that never completes when several GPUs take part, else a kernel stuck or still being built.",
				b.Desc, b.Total, b.Src),
			Evidence:   ev,
			Outcome:    OutcomeHung,
			Phase:      phase,
			Confidence: 0.45,
			Remedy:     "Take py-spy dumps of every rank (`py-spy dump --pid PID`) while it hangs: a rank parked in a collective (all_reduce, broadcast) waits for another; run with NCCL_DEBUG=INFO to see the transport each pair uses.",
		})
		if multi {
			p.Report(Finding{
				Title:      "the first step waits in a collective",
				Category:   CatCollectiveHang,
				Message:    fmt.Sprintf("Several GPUs take part (%s) and the first step at %s never finished: its first collective did not complete.", multiWhy(idx, l), b.Src),
				Evidence:   ev,
				Confidence: 0.45,
				Cause:      true,
				Why:        "the first step of a multi-GPU run stopped at 0 without an error",
				Remedy:     "Find the rank that is not in the collective (py-spy dumps of each); compare the ranks' last lines.",
			})
			p.Report(Finding{
				Title:      "GPU peer-to-peer transfers may hang",
				Category:   CatNCCLP2P,
				Message:    "A first collective that hangs on a single machine is most often a broken PCIe peer-to-peer path (ACS or an IOMMU between the GPUs); NCCL_P2P_DISABLE=1 confirms it.",
				Evidence:   ev,
				Confidence: 0.35,
				Cause:      true,
				Why:        "a hung first collective on one machine is the classic symptom of broken P2P",
				Remedy:     ncclRemedy(CatNCCLP2P),
			})
		}
	case last.capBar != nil:
		reportCaptureLeft(p, l, last)
	case last.ncclSetup:
		p.Report(Finding{
			Message:    fmt.Sprintf("The log ends in NCCL's communicator set-up (%s): no \"Init COMPLETE\" and no error after it. Set-up takes seconds when it works; a log that stops there is a run hung in distributed init.", end.Src),
			Evidence:   []Evidence{end},
			Outcome:    OutcomeHung,
			Phase:      PhaseDistributedInit,
			Confidence: 0.45,
			Remedy:     "Run NCCL's own test on the same GPUs (all_reduce_perf from nccl-tests) with NCCL_DEBUG=INFO; if it hangs too, the machine's GPU-to-GPU path is at fault, not the engine.",
		})
		p.Report(Finding{
			Title:      "NCCL's set-up hangs on the GPU peer-to-peer path",
			Category:   CatNCCLP2P,
			Message:    "A hang inside NCCL's set-up on one machine is most often its peer-to-peer transport: PCIe ACS or an IOMMU between the GPUs make P2P transfers stall. NCCL_P2P_DISABLE=1 (shared memory instead) confirms it.",
			Evidence:   []Evidence{end},
			Confidence: 0.45,
			Cause:      true,
			Why:        "NCCL's set-up stopped without an error",
			Remedy:     ncclRemedy(CatNCCLP2P),
		})
		p.Report(Finding{
			Title:      "a rank never joined the communicator",
			Category:   CatCollectiveHang,
			Message:    "NCCL's set-up is itself a collective: every rank must join. A rank that never arrives (it failed, or waits elsewhere) leaves the others waiting.",
			Evidence:   []Evidence{end},
			Confidence: 0.4,
			Cause:      true,
			Why:        "NCCL's set-up stopped without an error",
			Remedy:     "Check that every rank started and reached the same point (their last lines); look for a rank that failed first.",
		})
	case last.routes:
		p.Report(Finding{
			Message:    fmt.Sprintf("The log ends with vLLM's API server listing its routes (%s): vLLM starts its HTTP server only once the engine is up, so the server came up.", end.Src),
			Evidence:   []Evidence{end},
			Outcome:    OutcomeReady,
			Phase:      PhaseWarmup,
			Confidence: 0.5,
		})
	case last.completed != "":
		p.Report(Finding{
			Message:    fmt.Sprintf("The log ends right after a step that completed (%s: %s), with no error: the run was still starting when the evidence ends.", end.Src, last.completed),
			Evidence:   []Evidence{end},
			Outcome:    OutcomeInProgress,
			Phase:      idx.RunPhase(),
			Confidence: 0.4,
		})
	}
}

// record is what a log's last line was doing.
type record struct {
	line      int
	text      string
	bar       *facts.ProgressBar
	ncclSetup bool
	routes    bool
	completed string
	// captureLeft: the custom all-reduce registered its graph buffers while
	// the capture bar stood below its total (regs, bar).
	regs   []*facts.LogEvent
	capBar *facts.ProgressBar
}

// lastRecord reads the last meaningful lines of a log.
func lastRecord(l *facts.Log) record {
	var r record
	var lastEv *facts.LogEvent
	for _, e := range l.Events {
		if lastEv == nil || e.Src.Line >= lastEv.Src.Line {
			lastEv = e
		}
	}
	lastUnm := 0
	for _, e := range l.Unmatched {
		lastUnm = max(lastUnm, e.Src.Line)
	}
	for _, b := range l.Bars {
		if (lastEv == nil || b.Src.Line > lastEv.Src.Line) && b.Src.Line >= lastUnm-2 {
			r.bar = b
		}
	}
	if r.bar != nil {
		r.line, r.text = r.bar.Src.Line, derive.BarText(r.bar)
		return r
	}
	if lastEv == nil {
		return r
	}
	r.line, r.text = lastEv.Src.Line, lastEv.Msg
	if regs, b := captureLeft(l); b != nil && regs[len(regs)-1] == lastEv {
		r.regs, r.capBar = regs, b
		return r
	}
	switch lastEv.Type {
	case facts.EventRoute:
		r.routes = true
	case facts.EventInitEngineDone, facts.EventGraphEnd:
		// The engine finished initializing: what follows is the API
		// server. After an earlier step (weights, torch.compile) a log that
		// stops is as likely killed as working: incomplete-log says so.
		r.completed = string(lastEv.Type)
	case facts.EventNCCLInfo, facts.EventNCCLVersion, facts.EventNCCLWarn:
		r.ncclSetup = ncclWhat(lastEv) != "init-complete"
	}
	// NCCL's INFO lines are mostly not events: a tail of NCCL set-up lines
	// after the last event also counts, and is where the log stops.
	if r.completed == "" && !r.routes {
		tail := 0
		for _, e := range l.Unmatched {
			if e.Src.Line > lastEv.Src.Line && e.Type == facts.EventNCCLInfo {
				tail++
			}
		}
		if tail > 0 && lastUnm > lastEv.Src.Line {
			r.ncclSetup = true
			r.line = lastUnm
			for _, e := range l.Unmatched {
				if e.Src.Line == lastUnm {
					r.text = e.Msg
				}
			}
		}
	}
	if r.ncclSetup {
		for _, e := range l.Events {
			if e.Type == facts.EventNCCLInfo && ncclWhat(e) == "init-complete" {
				r.ncclSetup = false
			}
		}
	}
	return r
}

// multiGPU reports evidence that several GPUs take part: NCCL lines of
// several ranks or devices, several rank tags, or a parallel size above 1.
func multiGPU(idx *Index, l *facts.Log) bool {
	return multiWhy(idx, l) != ""
}

func multiWhy(idx *Index, l *facts.Log) string {
	if tp := tensorParallel(idx); tp > 1 {
		return fmt.Sprintf("tensor parallelism %d", tp)
	}
	ranks := map[float64]bool{}
	for _, e := range l.Events {
		if d, ok := e.Data.(*facts.NCCL); ok && d.Rank.OK && (e.Type == facts.EventNCCLInfo || e.Type == facts.EventNCCLVersion || e.Type == facts.EventNCCLWarn) {
			ranks[d.Rank.V] = true
		}
	}
	if len(ranks) > 1 {
		return fmt.Sprintf("NCCL lines of %d ranks", len(ranks))
	}
	named := 0
	for _, pl := range l.Procs {
		if pl.Proc.Name != "" {
			named++
		}
	}
	if named > 1 {
		return fmt.Sprintf("%d processes", named)
	}
	return ""
}

// reportCaptureLeft: SGLang and vLLM wrap CUDA-graph capture in the custom
// all-reduce's capture context, which on leaving (in a finally, so also
// when the capture raised) registers the graphs' buffers and exchanges them
// with every rank of the group (broadcast_object_list). Leaving it before
// the bar reached its total means the capture raised; the error surfaces
// only once the exchange completes, and a rank still capturing (waiting in
// an all-reduce for the ranks that left) never joins it: both sides wait.
func reportCaptureLeft(p *Pass, l *facts.Log, last record) {
	idx, b := p.Index, last.capBar
	regs := last.regs
	seen := map[int]bool{}
	top := -1
	for _, pl := range l.Procs {
		if tp := pl.Proc.Rank.TP; tp >= 0 {
			top = max(top, tp)
		}
	}
	for _, e := range regs {
		if tp := e.Proc.Rank.TP; tp >= 0 {
			seen[tp] = true
		}
	}
	size := tensorParallel(idx)
	if size <= top {
		size = top + 1 // ranks are numbered from 0: the highest seen says there are that many
	}
	var missing []string
	if len(seen) > 0 {
		for i := 0; i < size; i++ {
			if !seen[i] {
				missing = append(missing, fmt.Sprintf("TP%d", i))
			}
		}
	}
	ev := []Evidence{{Src: b.Src, Text: derive.BarText(b)}}
	for i, e := range regs {
		if i < 3 {
			ev = append(ev, Evidence{Src: e.Src, Text: e.Proc.Key() + ": " + e.Msg})
		}
	}
	msg := fmt.Sprintf("The capture bar stands at %d of %d (%s) when %d rank(s) register their graph buffers (%s, %q): the custom all-reduce does that on leaving its capture context, also when the capture raised, so the capture stopped early. The registration exchanges buffers with every rank, and the error is printed only after it.",
		b.N, b.Total, b.Src, len(regs), regs[0].Src, regs[0].Msg)
	if len(missing) > 0 {
		msg += fmt.Sprintf(" %s did not register: the ranks that did wait for %s in that exchange, while %s still capture, waiting for them in an all-reduce.",
			strings.Join(missing, ", "), pronoun(len(missing)), pronoun(len(missing)))
	}
	msg += " The log ends there: a hang in the capture, its error unprinted."
	p.Report(Finding{
		Message:    msg,
		Evidence:   ev,
		Outcome:    OutcomeHung,
		Phase:      PhaseCUDAGraphCapture,
		Confidence: 0.5,
		Remedy:     "Re-run with --disable-custom-all-reduce (both engines take it): the capture then raises its error instead of hanging. Capture failures are most often memory: lower --cuda-graph-max-bs or --mem-fraction-static (SGLang), or gpu_memory_utilization (vLLM).",
	})
	p.Report(Finding{
		Title:      "the CUDA-graph capture raised on a rank, its error held back",
		Category:   CatCUDAGraph,
		Message:    fmt.Sprintf("The capture context was left at batch %d of %d (%s): the capture raised there.", b.N, b.Total, b.Src),
		Evidence:   ev,
		Confidence: 0.45,
		Cause:      true,
		Why:        "the custom all-reduce registered its graph buffers before the capture finished",
		Remedy:     "Run once with CUDA graphs off (--disable-cuda-graph / --enforce-eager) or without the custom all-reduce to see the error.",
	})
	if len(missing) > 0 {
		p.Report(Finding{
			Title:      "the ranks wait for each other in the graph-buffer exchange",
			Category:   CatCollectiveHang,
			Message:    fmt.Sprintf("%d rank(s) registered their graph buffers, %s did not: the exchange after it is a collective of the whole group, and it cannot complete.", len(regs), strings.Join(missing, ", ")),
			Evidence:   ev,
			Confidence: 0.5,
			Cause:      true,
			Why:        "some ranks of the group never joined the graph-buffer exchange",
			Remedy:     "py-spy dumps of a registered and a missing rank show the two collectives they wait in.",
		})
	}
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// ncclWhat is what an NCCL line says it did ("init-complete"), "" for
// another line.
func ncclWhat(e *facts.LogEvent) string {
	if d, ok := e.Data.(*facts.NCCL); ok {
		return d.What
	}
	return ""
}
