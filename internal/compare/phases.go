package compare

import (
	"math"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// PhaseRow is one phase of both runs. A run's phase starts when its first
// process entered it and lasts until the run entered its next phase; the
// last phase a run reached is open until the run's latest evidence.
type PhaseRow struct {
	Phase string     `json:"phase"`
	A     *PhaseSpan `json:"a"`
	B     *PhaseSpan `json:"b"`
}

// PhaseSpan is one run's time in a phase.
type PhaseSpan struct {
	Start    string  `json:"start"`
	Seconds  float64 `json:"duration_s"`
	Open     bool    `json:"open,omitempty"`
	Evidence *Ref    `json:"evidence,omitempty"`
}

// runPhase is a phase of the run as a whole.
type runPhase struct {
	phase rules.Phase
	start time.Time
	end   time.Time
	open  bool
	src   facts.Source
	// noYear: the run's times carry no year (facts.Facts.YearUnknown).
	noYear bool
}

// runPhases merges the per-process timelines into one: a SGLang run's
// launch is the main process's, its weight loading the ranks'. Phases are
// ordered by when they began, so vLLM's compile-before-KV-cache order stays.
func runPhases(r Run) []runPhase {
	idx := r.Result.Index
	first := map[rules.Phase]rules.Span{}
	for _, s := range idx.Timeline {
		if s.Start.IsZero() {
			continue
		}
		if f, ok := first[s.Phase]; !ok || s.Start.Before(f.Start) {
			first[s.Phase] = s
		}
	}
	var out []runPhase
	for ph, s := range first {
		out = append(out, runPhase{phase: ph, start: s.Start, src: s.Evidence, noYear: r.Facts.YearUnknown()})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].start.Equal(out[j].start) {
			return out[i].start.Before(out[j].start)
		}
		return out[i].phase.Order() < out[j].phase.Order()
	})
	for i := range out {
		if i+1 < len(out) {
			out[i].end = out[i+1].start
			continue
		}
		// The last phase is open unless a later span of it closed.
		out[i].open = true
		out[i].end = idx.Latest
		for _, s := range idx.Timeline {
			if s.Phase == out[i].phase && !s.End.IsZero() && s.End.After(out[i].end) {
				out[i].end, out[i].open = s.End, false
			}
		}
		if out[i].end.Before(out[i].start) {
			out[i].end = out[i].start
		}
	}
	return out
}

func phases(a, b Run) []PhaseRow {
	pa, pb := runPhases(a), runPhases(b)
	var rows []PhaseRow
	for _, ph := range rules.Phases {
		row := PhaseRow{Phase: string(ph), A: spanOf(pa, ph), B: spanOf(pb, ph)}
		if row.A != nil || row.B != nil {
			rows = append(rows, row)
		}
	}
	return rows
}

func spanOf(ps []runPhase, ph rules.Phase) *PhaseSpan {
	for _, p := range ps {
		if p.phase == ph {
			return &PhaseSpan{
				Start:    facts.Stamp(p.start, p.noYear),
				Seconds:  math.Round(p.end.Sub(p.start).Seconds()*1000) / 1000,
				Open:     p.open,
				Evidence: refOf(p.src),
			}
		}
	}
	return nil
}

// Divergence is the first milestone where the runs part ways.
type Divergence struct {
	// Index is the position in the milestone sequences (0-based).
	Index int `json:"index"`
	// Basis is "event" (the runs' milestone event types, same engine) or
	// "phase" (the phases they entered, across engines).
	Basis string     `json:"basis"`
	A     *Milestone `json:"a"`
	B     *Milestone `json:"b"`
	// After is the last milestone both share, nil when they differ from the
	// first one.
	After *Milestone `json:"after,omitempty"`
}

// Milestone is one step of a run's life.
type Milestone struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	Time string `json:"time,omitempty"`
	Ref  *Ref   `json:"ref,omitempty"`
}

// milestoneTypes are the events that mark a run's progress or its end.
var milestoneTypes = map[facts.EventType]bool{
	facts.EventServerArgs: true, facts.EventNonDefaultArgs: true, facts.EventEngineInit: true,
	facts.EventDistInitBegin: true, facts.EventDistInitEnd: true, facts.EventLoadBegin: true, facts.EventLoadEnd: true,
	facts.EventKVCacheAlloc: true, facts.EventKVCacheSize: true, facts.EventMemPoolEnd: true,
	facts.EventTorchCompile: true, facts.EventTorchCompileEnd: true, facts.EventGraphBegin: true, facts.EventGraphEnd: true,
	facts.EventInitEngineDone: true, facts.EventHTTPStart: true, facts.EventWarmup: true, facts.EventReady: true,
	facts.EventShutdown: true, facts.EventJITBegin: true, facts.EventJITFailed: true, facts.EventGraphFailed: true,
	facts.EventTraceback: true, facts.EventOOM: true, facts.EventSchedulerCrash: true, facts.EventChildFailed: true,
	facts.EventEngineInitFailed: true, facts.EventWorkerDied: true, facts.EventEngineDead: true, facts.EventSigquit: true,
	facts.EventKilled: true, facts.EventWatchdogTimeout: true, facts.EventCollectiveTimout: true, facts.EventSHMWait: true,
}

// milestones returns a run's milestone events in log order, a repeat of the
// previous type (every rank prints the same line) collapsed into one.
func milestones(r Run) []*facts.LogEvent {
	var out []*facts.LogEvent
	for _, l := range r.Facts.Logs {
		for _, e := range l.Events {
			if !milestoneTypes[e.Type] {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Type == e.Type {
				continue
			}
			out = append(out, e)
		}
	}
	return out
}

// diverge compares the runs' milestone events when one engine wrote both
// logs, else the phases they entered.
func diverge(a, b Run) (*Divergence, int) {
	if a.Result.Index.Engine() == b.Result.Index.Engine() {
		of := func(r Run) func(*facts.LogEvent) *Milestone {
			return func(e *facts.LogEvent) *Milestone { return eventMilestone(e, r.Facts.YearUnknown()) }
		}
		return firstDivergence(milestones(a), milestones(b), "event",
			func(x, y *facts.LogEvent) bool { return x.Type == y.Type }, of(a), of(b))
	}
	return firstDivergence(runPhases(a), runPhases(b), "phase",
		func(x, y runPhase) bool { return x.phase == y.phase }, phaseMilestone, phaseMilestone)
}

// firstDivergence finds the first step where sequences a and b differ, and
// how many steps were compared to find it; nil when they are the same.
// milestoneA and milestoneB describe a step of a and of b.
func firstDivergence[T any](a, b []T, basis string, same func(x, y T) bool, milestoneA, milestoneB func(T) *Milestone) (*Divergence, int) {
	n := min(len(a), len(b))
	i := 0
	for i < n && same(a[i], b[i]) {
		i++
	}
	if i == len(a) && i == len(b) {
		return nil, n
	}
	d := &Divergence{Index: i, Basis: basis}
	if i < len(a) {
		d.A = milestoneA(a[i])
	}
	if i < len(b) {
		d.B = milestoneB(b[i])
	}
	if i > 0 {
		d.After = milestoneA(a[i-1])
	}
	return d, i + 1
}

func eventMilestone(e *facts.LogEvent, noYear bool) *Milestone {
	return &Milestone{Kind: string(e.Type), Text: clip(e.Msg, 160), Ref: refOf(e.Src), Time: facts.Stamp(e.Time, noYear)}
}

func phaseMilestone(p runPhase) *Milestone {
	return &Milestone{Kind: string(p.phase), Text: "entered " + string(p.phase), Time: facts.Stamp(p.start, p.noYear), Ref: refOf(p.src)}
}

// clip shortens s to n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
