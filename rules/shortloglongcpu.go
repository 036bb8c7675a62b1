package rules

import (
	"fmt"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(shortLogRule) }

var shortLogRule = &Rule{
	ID:       "short-log-long-cpu",
	Title:    "few log lines against a lot of CPU time: silent busy work",
	Severity: SeverityWarning,
	Needs:    []facts.Kind{facts.KindPS, facts.KindTop},
	Doc: `Compares what the server said with what it did. A scheduler or worker that
has burned many minutes of CPU while its log stayed silent is busy with work
that prints nothing: a kernel JIT build (flashinfer, DeepGEMM, Triton, torch
extensions), a spin in a collective waiting for a peer, or a host thread
polling a GPU kernel that never returns.

It fires when the server is not ready, its workers have each burned at least
10 minutes of CPU at half a core or more since they started, and the log has
been silent for at least 5 minutes before the snapshot. With two snapshots it
uses the CPU burned between them, which is exact; with one it uses the CPU
time and elapsed time of each process.

An idle SGLang scheduler also polls at full speed, so after the ready line a
high CPU time means nothing; the rule stays quiet then.`,
	Run: runShortLog,
}

func runShortLog(p *Pass) {
	idx, st := p.Index, &p.Index.State
	if st.Ready != nil || st.Failed() || len(st.Workers) == 0 || st.LastLog == nil {
		return
	}
	if st.Silence < 5*time.Minute {
		return
	}
	lines := idx.Lines()
	var maxCPU, sumCPU time.Duration
	var busiest *facts.Process
	var wall time.Duration
	for _, w := range st.Workers {
		sumCPU += w.CPUTime
		if w.CPUTime > maxCPU {
			maxCPU, busiest = w.CPUTime, w
		}
		if el := processAge(w, st.PS); el > wall {
			wall = el
		}
	}
	if maxCPU < 10*time.Minute || busiest == nil {
		return
	}
	ratio := 0.0
	if wall > 0 {
		ratio = maxCPU.Seconds() / wall.Seconds()
	}
	if wall > 0 && ratio < 0.5 {
		return
	}
	// A second snapshot gives the CPU burned while the log was silent.
	delta := ""
	if before := previousSnapshot(idx, st.PS); before != nil {
		if q := SameProcess(before, busiest); q != nil && st.PS.At.After(before.At) {
			d := busiest.CPUTime - q.CPUTime
			span := st.PS.At.Sub(before.At)
			delta = fmt.Sprintf(" Between the snapshots at %s and %s (%s apart) it burned %s more CPU.",
				before.At.UTC().Format("15:04:05Z"), st.PS.At.UTC().Format("15:04:05Z"), humanDuration(span), humanDuration(d))
			if d < span/4 {
				return // it was not busy while silent
			}
		}
	}
	ev := []Evidence{{Src: st.LastLog.LastSrc, Text: fmt.Sprintf("%s has %d lines; its last sign of life: %s", st.LastLog.Path, st.LastLog.Lines, st.Last.Text)}}
	for i, w := range st.Workers {
		if i == 8 {
			break
		}
		ev = append(ev, EvProc(w))
	}
	busyPct := ""
	if wall > 0 {
		busyPct = fmt.Sprintf(" (%.0f%% of a core over the %s since it started)", ratio*100, humanDuration(wall))
	}
	msg := fmt.Sprintf("%d lines after %s of %s CPU: the log has been silent for %s while %d worker(s) burned %s of CPU in total, the busiest %s%s.%s That is silent busy work: a kernel JIT build, a spin waiting for a peer in a collective, or a host thread polling a GPU kernel that never returns.",
		lines, humanDuration(maxCPU), roleWords(busiest.Role), humanDuration(st.Silence), len(st.Workers), humanDuration(sumCPU),
		derive.FormatCPU(maxCPU), busyPct, delta)
	p.Report(Finding{
		Message:    msg,
		Evidence:   ev,
		Confidence: 0.8,
		Remedy:     "See what the busy processes run: `py-spy dump --native --pid PID` on a scheduler/worker, `ps -eo pid,ppid,stat,etimes,times,args --forest` for compiler children, and `nvidia-smi` for GPU utilization.",
	})
}

// processAge is how long the process had run at the snapshot.
func processAge(p *facts.Process, s *facts.ProcSnapshot) time.Duration {
	if p.Elapsed > 0 {
		return p.Elapsed
	}
	if !p.Start.IsZero() && s != nil && !s.At.IsZero() && s.At.After(p.Start) {
		return s.At.Sub(p.Start)
	}
	return 0
}

// previousSnapshot returns the latest process snapshot taken a while
// before s, or nil.
func previousSnapshot(idx *Index, s *facts.ProcSnapshot) *facts.ProcSnapshot {
	var out *facts.ProcSnapshot
	for _, o := range idx.Rounds() {
		if o == s || o.At.IsZero() || s.At.IsZero() {
			continue
		}
		if o.At.Before(s.At.Add(-5 * time.Second)) {
			out = o
		}
	}
	return out
}

func roleWords(r facts.Role) string {
	switch r {
	case facts.RoleSGLangScheduler:
		return "scheduler"
	case facts.RoleVLLMWorker:
		return "worker"
	case facts.RoleVLLMEngineCore:
		return "engine core"
	}
	return "server process"
}
