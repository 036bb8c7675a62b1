package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(crashedRule) }

var crashedRule = &Rule{
	ID:       "crashed",
	Title:    "the server crashed",
	Severity: SeverityCritical,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog, facts.KindPS, facts.KindTop},
	Doc: `A crash shows as a traceback as a process's last words, the engine's own
failure lines (SGLang "Scheduler hit an exception", "Received sigquit from a
child process", "Child process unexpectedly failed"; vLLM "EngineCore failed
to start", "Engine core initialization failed", "Worker proc ... died
unexpectedly", EngineDeadError), an exit by signal, or the server's processes
missing from a process snapshot taken after the log ends. A log that ends in
error-level lines, with nothing after them that shows the run going on (no
milestone, no INFO record), also failed there, though its exception was not
pasted (confidence 0.6).

One failure cascades: a rank raises, the engine notices, the launcher kills
the tree, every process complains. The rule reports the root: the first
exception in time (not the last process that complained, and not the
wrapper's "see root cause above"), the rank that raised it and the phase it
was in, with the cascade as further evidence.

Errors after the server was told to stop (SIGTERM, Ctrl-C, KeyboardInterrupt,
"Shutting down") are shutdown noise and are not a crash.`,
	References: []string{
		"https://docs.vllm.ai/en/latest/usage/troubleshooting.html",
	},
	Run: runCrashed,
}

func runCrashed(p *Pass) {
	idx, st := p.Index, &p.Index.State
	if root := RootFailure(st); root != nil {
		place := Placement{Phase: idx.RunPhase(), By: "milestone", Src: root.Src, Why: "the furthest phase the run reached"}
		if l := logOf(idx, root); l != nil {
			if pl := idx.PlaceFailure(l, root); pl.Phase != "" {
				place = pl
			}
		}
		afterReady := st.Ready != nil && st.Ready.Src.File == root.Src.File && st.Ready.Src.Line < root.Src.Line
		if afterReady && derive.BindFailure(idx, root) {
			afterReady = false // it never listened, so it never served
		}
		if afterReady && place.By != "frames" {
			place = Placement{Phase: PhaseServing, By: "milestone", Src: st.Ready.Src, Why: "after the server was ready"}
		}
		phase := place.Phase
		who := root.Proc.Key()
		if who == "main" {
			who = "the main process"
		}
		ev := []Evidence{{Src: root.Src, Text: failureText(root)}}
		if tb := root.Traceback; tb != nil && len(tb.Frames) > 0 {
			f := tb.Frames[len(tb.Frames)-1]
			ev = append(ev, Evidence{Src: root.Src, Text: fmt.Sprintf("raised in %s (%s:%d)", f.Func, f.File, f.Line)})
		}
		if phase != "" {
			ev = append(ev, Evidence{Src: place.Src, Text: fmt.Sprintf("placed in %s by %s: %s", phase, place.By, place.Why)})
		}
		others := 0
		for _, e := range st.Failures {
			if e == root {
				continue
			}
			others++
			if others <= 6 {
				ev = append(ev, Evidence{Src: e.Src, Text: e.Proc.Key() + ": " + trimText(failureText(e), 200)})
			}
		}
		verb := "raised"
		if root.Traceback == nil {
			verb = "reported"
		}
		where := "Crashed"
		if phase != "" {
			where = "Crashed in " + string(phase)
		}
		msg := fmt.Sprintf("%s: %s %s %s (%s).", where, who, verb, strings.TrimRight(trimText(failureText(root), 300), "."), root.Src)
		if others > 0 {
			msg += fmt.Sprintf(" %d more failure line(s) followed: the cascade of that first error.", others)
		}
		if afterReady {
			msg += fmt.Sprintf(" The server had been ready since %s: this is a crash at runtime.", st.Ready.Src)
		}
		p.Report(Finding{
			Message:    msg,
			Evidence:   ev,
			Outcome:    OutcomeCrashed,
			Phase:      phase,
			Confidence: 0.95,
			Remedy:     "Start from the first error, not the last: the lines after it are the other processes noticing. The cause findings below name what the error text means.",
		})
		return
	}
	// No failure event, but the log ends in error lines: the engine logged
	// an error and nothing more (a logger's error where the exception was
	// not pasted, TensorRT-LLM's and Triton's [ERROR] lines).
	if st.Ready == nil && st.Serving == nil && st.Shutdown == nil && len(st.Alive) == 0 {
		if errs := endingErrors(idx); len(errs) > 0 {
			e := errs[0]
			var ev []Evidence
			for i, x := range errs {
				if i < 4 {
					ev = append(ev, Ev(x))
				}
			}
			phase := idx.RunPhase()
			if l := logOf(idx, e); l != nil {
				if pl := idx.PlaceFailure(l, e); pl.Phase != "" {
					phase = pl.Phase
				}
			}
			p.Report(Finding{
				Message: fmt.Sprintf("The log ends in %d error line(s), the first at %s (%s), with nothing after them that shows the run going on: it failed there, though no exception or exit was pasted.",
					len(errs), e.Src, trimText(e.Msg, 200)),
				Evidence:   ev,
				Outcome:    OutcomeCrashed,
				Phase:      phase,
				Confidence: 0.6,
				Remedy:     "Find the exception these errors belong to (the full log, or the failing process's own log); the cause findings below name what the error text means.",
			})
			return
		}
	}
	// No failure in the log, but the processes are gone.
	if st.PS == nil || len(st.Alive) > 0 || st.Ready != nil || st.Shutdown != nil || st.LastLog == nil {
		return
	}
	if st.PS.At.IsZero() || !st.PS.At.After(st.Last.Time) {
		return
	}
	ev := []Evidence{{Src: st.Last.Src, Text: "last sign of life: " + st.Last.Text},
		{Src: st.PS.Src, Text: fmt.Sprintf("%d processes at %s, no SGLang or vLLM process among them", len(st.PS.Procs)+st.PS.Omitted, st.PS.At.UTC().Format("15:04:05Z"))}}
	p.Report(Finding{
		Message: fmt.Sprintf("The server's processes are gone from the process snapshot %s (%s), and the log ends at %s without an error: the server was killed from outside (the kernel's OOM killer, a signal, the operator or a supervisor).",
			st.PS.Src, facts.FormatTime(st.PS.At.UTC(), "2006-01-02 15:04:05Z", p.Facts.YearUnknown()), st.Last.Src),
		Evidence:   ev,
		Outcome:    OutcomeCrashed,
		Phase:      idx.RunPhase(),
		Confidence: 0.7,
		Remedy:     "Look for the killer: `dmesg -T | grep -iE 'killed process|oom'` (host OOM), the container runtime's events (`docker inspect` OOMKilled, exit code 137), and the supervisor's log.",
	})
}

// endingErrors are the error lines a log ends in: error-level lines after
// its last sign of progress (a milestone or an INFO record), with no
// progress after them, in the log the run's last activity is in.
func endingErrors(idx *Index) []*facts.LogEvent {
	l := idx.State.LastLog
	if l == nil {
		l = idx.MainLog()
	}
	if l == nil {
		return nil
	}
	evs := append([]*facts.LogEvent(nil), l.Events...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Src.Line < evs[j].Src.Line })
	var errs []*facts.LogEvent
	for _, e := range evs {
		switch {
		case e.Type == facts.EventError && e.Level.Severe():
			errs = append(errs, e)
		case e.Level == facts.LevelInfo && e.Type != facts.EventLine:
			errs = errs[:0] // the run went on after it
		}
	}
	return errs
}
