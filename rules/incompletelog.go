package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(incompleteRule) }

var incompleteRule = &Rule{
	ID:       "incomplete-log",
	Title:    "the log ends inside a startup phase, with nothing later to tell why",
	Severity: SeverityWarning,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `A log that stops before the ready line, without an error, and with no
evidence in the bundle taken after its last line, cannot say whether the
server is still working, hung, or was killed: a process snapshot and the
kernel log decide that. This rule says where the log stopped, how long the
phase had run, and what to collect.

It also reads what the last lines suggest:

- a capture bar at 0 on its first batch size: the first capture step runs
  every kernel for the first time, and on a GPU without prebuilt kernels it
  JIT-compiles them (minutes on a new architecture); a bar at 0 is usually a
  build, not a hang;
- the log stops right after torch.compile or in KV-cache sizing: the next step
  JIT-compiles kernels (flashinfer, Triton), and parallel compilers (MAX_JOBS)
  are the usual victims of the host's OOM killer, which leaves no line in the
  server's log;
- a last line that is Python's resource_tracker warning at exit: the process
  ended without a traceback (stopped by the operator or a signal).`,
	Run: runIncomplete,
}

func runIncomplete(p *Pass) {
	idx, st := p.Index, &p.Index.State
	if st.Ready != nil || st.Failed() || idx.SignatureFailed() || st.LastLog == nil || st.Shutdown != nil {
		return
	}
	if st.Silence > 0 && (st.PS != nil || kernelAfter(idx, st.Last.Time)) {
		return // later evidence exists: stall, crashed, host-memory and the others decide
	}
	for _, m := range idx.SigMatches {
		if !m.AfterShutdown && m.Sig.Outcome != "" {
			return // a known signature already says what happened
		}
	}
	phase := idx.RunPhase()
	if phase == "" || phase == PhaseServing || phase == PhaseShutdown {
		return
	}
	var spanStart time.Time
	var spanSrc facts.Source
	for _, s := range idx.Timeline {
		if s.Phase == phase && s.End.IsZero() && (spanStart.IsZero() || s.Start.Before(spanStart)) {
			spanStart, spanSrc = s.Start, s.Evidence
		}
	}
	ev := []Evidence{{Src: st.Last.Src, Text: "last sign of life: " + st.Last.Text}}
	msg := fmt.Sprintf("The log ends in %s at %s", phase, st.Last.Src)
	if !spanStart.IsZero() && st.Last.Time.After(spanStart) {
		msg += fmt.Sprintf(", %s after the phase began (%s)", humanDuration(st.Last.Time.Sub(spanStart)), spanSrc)
		ev = append(ev, Evidence{Src: spanSrc, Text: "phase " + string(phase) + " began"})
	}
	msg += ", with no error and no ready line. Nothing in the bundle is later than the log, so it cannot be told whether the server was still working, hung, or was killed."
	exited := lastLineIsExit(st.LastLog)
	if exited != nil {
		msg += fmt.Sprintf(" The last line (%s) is written when the Python process exits: the process ended without a traceback, stopped by the operator or a signal.", exited.LastSrc)
	}
	p.Report(Finding{
		Message:    msg,
		Evidence:   ev,
		Confidence: 0.5,
		Remedy:     "Collect, while it happens: `ps -eo pid,ppid,lstart,etimes,times,rss,stat,nlwp,args --forest` twice a minute apart (is CPU time growing? are nvcc/cicc/ptxas children alive?), `dmesg -T | grep -iE 'oom|killed process|xid'`, and `nvidia-smi` (`coroner collect --log FILE --count 2 --every 60s`).",
	})
	p.Missing("a process snapshot taken after the log's last line and the kernel log (`coroner collect --log FILE`)",
		"evidence later than the log: whether the server was alive, hung or killed")

	// What the last lines suggest.
	switch {
	case phase == PhaseCUDAGraphCapture:
		if b := captureBarAtZero(st.LastLog); b != nil {
			p.Report(Finding{
				Title:    "the first capture step may be a kernel build",
				Severity: SeverityInfo,
				Category: CatJITCompile,
				Message: fmt.Sprintf("The capture bar stopped at %d/%d on its first batch size (%s). The first capture step runs every kernel for the first time; on a GPU without prebuilt kernels for its architecture it JIT-compiles them, which takes minutes and prints nothing.",
					b.N, b.Total, b.Src),
				Remedy:     "Look for compilers before restarting: `ps -eo pid,ppid,etimes,times,args --forest | grep -E 'cicc|ptxas|nvcc|ninja'`. If they run, wait: the result is cached for the next start.",
				Evidence:   []Evidence{{Src: b.Src, Text: derive.BarText(b)}},
				Confidence: 0.35,
				Cause:      true,
				Why:        "a capture bar at 0 on its first step is usually a kernel build; no process snapshot confirms it",
			})
		}
	case phase == PhaseTorchCompile || phase == PhaseKVCache:
		p.Report(Finding{
			Title:    "a silent death after torch.compile is often the OOM killer",
			Severity: SeverityInfo,
			Category: CatHostOOM,
			Message: fmt.Sprintf("The log stops in %s. The next step JIT-compiles kernels (flashinfer, Triton) with parallel compilers of several GB each (MAX_JOBS); when host memory runs out, the kernel's OOM killer kills them and the server's log shows nothing. The kernel log would say.",
				phase),
			Remedy:     "Check `dmesg -T | grep -i 'killed process'`; if a compiler was killed, set MAX_JOBS=1 or 2 and restart.",
			Evidence:   ev[:1],
			Confidence: 0.3,
			Cause:      true,
			Why:        "the log stops where compilers run, without an error; no kernel log confirms it",
		})
	}
}

// lastLineIsExit returns the process whose last line is Python's exit-time
// resource_tracker warning, or nil.
func lastLineIsExit(l *facts.Log) *facts.ProcLog {
	for _, pl := range l.Procs {
		if pl.LastSrc.Line < l.LastSrc.Line-3 {
			continue
		}
		if strings.Contains(pl.LastMsg, "resource_tracker") || strings.Contains(pl.LastMsg, "leaked semaphore") ||
			strings.Contains(pl.LastMsg, "warnings.warn('resource_tracker") {
			return pl
		}
	}
	return nil
}

// captureBarAtZero returns a capture bar left at 0 of its total, unless
// the capture context was left after it (then the step did not hang in a
// build: it raised).
func captureBarAtZero(l *facts.Log) *facts.ProgressBar {
	if _, b := captureLeft(l); b != nil {
		return nil
	}
	var out *facts.ProgressBar
	for _, b := range l.Bars {
		if derive.BarPhase(b) == facts.EventGraphProgress && b.N == 0 && b.Total > 0 {
			out = b
		}
	}
	return out
}

// kernelAfter reports kernel log lines that matter written after t.
func kernelAfter(idx *Index, t time.Time) bool {
	for _, k := range idx.Facts.Kernel {
		if k.Time.After(t) && k.Type != facts.KernelNVRM {
			return true
		}
	}
	return false
}
