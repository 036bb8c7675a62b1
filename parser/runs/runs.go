// Package runs tells apart the launches of a server in one bundle: logs of
// several runs kept side by side (a folder each), a log appended across a
// restart (`nohup ... >> server.log`), rotated pieces of one log, and the
// logs of the several nodes of one run. Each run gets the evidence that is
// its own, so that it is analyzed alone.
//
// A run starts where a log shows a launch (SGLang's server_args, vLLM's
// API-server version or its args, an engine's "Initializing ... engine")
// after the log had already moved past launching, or where the clock goes
// back before the launch line. Logs of different files are one run when
// their times overlap (the nodes of a multi-node server, each with its own
// log), separate runs otherwise; a log with no launch of its own belongs to
// the run it overlaps, or to the latest. Evidence with a time (process and
// GPU snapshots, probes, kernel lines, py-spy dumps) goes to the run whose
// span holds it, evidence without one to the latest run, and what describes
// the machine rather than a run (environment reports, launch commands,
// package lists, topology, disks) to every run.
package runs

import (
	"fmt"
	"sort"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Run is one launch of the server.
type Run struct {
	// ID counts from 1, in the order the runs started.
	ID         int
	Start, End time.Time
	// Hosts are the hosts its processes ran on, where the evidence says.
	Hosts []string
	// Parts are the pieces of logs it holds.
	Parts []Part
	// Why says what made it a run of its own.
	Why string
	// Facts is its evidence alone. With a single run it is the bundle's.
	Facts *facts.Facts
}

// Part is a range of lines of one log.
type Part struct {
	Path     string
	From, To int // lines, 1-based, inclusive
}

func (p Part) String() string { return fmt.Sprintf("%s:%d-%d", p.Path, p.From, p.To) }

// startTypes are the lines a launch prints first.
var startTypes = map[facts.EventType]bool{
	facts.EventServerArgs: true, facts.EventNonDefaultArgs: true, facts.EventVersion: true, facts.EventEngineInit: true,
}

// progressTypes are events of a run that got past launching: a launch
// line after one of them is a new launch.
var progressTypes = map[facts.EventType]bool{
	facts.EventDistInitBegin: true, facts.EventDistInitEnd: true, facts.EventLoadBegin: true, facts.EventLoadEnd: true,
	facts.EventMemoryProfile: true, facts.EventKVCacheAlloc: true, facts.EventKVCacheSize: true, facts.EventAvailableKV: true,
	facts.EventMemPoolEnd: true, facts.EventTorchCompile: true, facts.EventGraphBegin: true, facts.EventGraphEnd: true,
	facts.EventInitEngineDone: true, facts.EventWarmup: true, facts.EventHTTPStart: true, facts.EventReady: true,
	facts.EventRequest: true, facts.EventShutdown: true, facts.EventTraceback: true,
	facts.EventOOM: true, facts.EventSchedulerCrash: true, facts.EventChildFailed: true, facts.EventEngineInitFailed: true,
	facts.EventWorkerDied: true, facts.EventEngineDead: true, facts.EventKilled: true, facts.EventSigquit: true,
}

// clockBack is how far back a launch line's time must go to start a run
// by itself (a different run's lines appended).
const clockBack = time.Minute

// segment is a candidate run: one range of one log.
type segment struct {
	log        *facts.Log
	from, to   int
	start      *facts.LogEvent // the launch line, nil when the range has none
	first, end time.Time
	why        string
	// cont is the segment this one continues: the previous piece of a
	// rotated log.
	cont *segment
}

// Split returns the runs of a bundle, in the order they started. A bundle
// of one run gets one Run whose Facts is f itself.
func Split(f *facts.Facts) []*Run {
	var segs []*segment
	for i, l := range f.Logs {
		ss := splitLog(l)
		// A rotated log's later piece that does not start with a launch
		// goes on with the run its previous piece ended in (Facts.Logs
		// holds a rotated log's pieces next to each other, oldest first).
		if r := rotation(f, l); r != nil && r.Piece > 1 && i > 0 && ss[0].start == nil {
			if pr := rotation(f, f.Logs[i-1]); pr != nil && pr.Log == r.Log && len(segs) > 0 {
				ss[0].cont = segs[len(segs)-1]
			}
		}
		segs = append(segs, ss...)
	}
	groups := group(segs)
	if len(groups) <= 1 {
		r := &Run{ID: 1, Facts: f, Start: spanStart(groups), End: spanEnd(groups), Hosts: hostsOf(f.Logs), Parts: partsOf(groups), Why: "the only run"}
		nodes(r)
		return []*Run{r}
	}
	runs := make([]*Run, len(groups))
	for i, g := range groups {
		runs[i] = &Run{ID: i + 1, Start: g.first(), End: g.end(), Parts: g.parts(), Why: g.why()}
	}
	assign(f, runs, groups)
	for _, r := range runs {
		r.Hosts = hostsOf(r.Facts.Logs)
		nodes(r)
	}
	return runs
}

func rotation(f *facts.Facts, l *facts.Log) *facts.Rotation {
	if s := f.Source(l.Path); s != nil {
		return s.Rotation
	}
	return nil
}

// splitLog cuts a log at its relaunches.
func splitLog(l *facts.Log) []*segment {
	cur := &segment{log: l, from: 1}
	var out []*segment
	progressed := false
	var latest time.Time
	for _, e := range l.Events {
		if startTypes[e.Type] {
			back := !e.Time.IsZero() && !latest.IsZero() && e.Time.Before(latest.Add(-clockBack))
			relaunch := progressed || back
			if e.Type == facts.EventEngineInit && cur.start != nil {
				// vLLM's engine core announces itself after its API server
				// launched, each engine of a data-parallel group on its own:
				// only an offline script's second engine of the same
				// process, after the first had worked, is a new run.
				relaunch = back || progressed && cur.start.Type == facts.EventEngineInit && cur.start.Proc.Key() == e.Proc.Key()
			}
			if relaunch {
				// The new launch's own stamped preamble (warnings printed
				// before its arguments) goes with it.
				at := preamble(l, cur.from, e)
				cur.to = at - 1
				recount(cur, l)
				out = append(out, cur)
				why := fmt.Sprintf("a launch at %s after the previous run had started", e.Src)
				if back {
					why = fmt.Sprintf("a launch at %s with the clock back before the previous run's lines", e.Src)
				}
				cur = &segment{log: l, from: at, why: why}
				progressed = false
				latest = time.Time{}
				for _, x := range l.Events {
					if x.Src.Line >= at && x.Src.Line < e.Src.Line && !x.Time.IsZero() {
						cur.first, latest, cur.end = minTime(cur.first, x.Time), maxTime(latest, x.Time), maxTime(cur.end, x.Time)
					}
				}
			}
			if cur.start == nil {
				cur.start = e
			}
		} else if progressTypes[e.Type] {
			progressed = true
		}
		if !e.Time.IsZero() {
			if cur.first.IsZero() || e.Time.Before(cur.first) {
				cur.first = e.Time
			}
			if e.Time.After(latest) {
				latest = e.Time
			}
			if e.Time.After(cur.end) {
				cur.end = e.Time
			}
		}
	}
	cur.to = max(l.Lines, l.LastSrc.Line, cur.from)
	// The file's first and last stamped lines bound its first and last
	// segments.
	if l.LastTime.After(cur.end) {
		cur.end = l.LastTime
	}
	out = append(out, cur)
	if len(out) > 1 {
		out[0].why = "the first launch in " + l.Path
	}
	if !l.FirstTime.IsZero() && (out[0].first.IsZero() || l.FirstTime.Before(out[0].first)) {
		out[0].first = l.FirstTime
	}
	// Stat lines live in series: they stretch a segment's end.
	for _, s := range out {
		for _, ser := range l.Series {
			for _, b := range ser.Buckets {
				if b.Src.Line >= s.from && b.Src.Line <= s.to && b.End.After(s.end) {
					s.end = b.End
				}
			}
		}
	}
	return out
}

// runGroup is the segments of one run.
type runGroup []*segment

func (g runGroup) first() time.Time {
	var t time.Time
	for _, s := range g {
		if !s.first.IsZero() && (t.IsZero() || s.first.Before(t)) {
			t = s.first
		}
	}
	return t
}

func (g runGroup) end() time.Time {
	var t time.Time
	for _, s := range g {
		if s.end.After(t) {
			t = s.end
		}
	}
	return t
}

func (g runGroup) parts() []Part {
	out := make([]Part, len(g))
	for i, s := range g {
		out[i] = Part{Path: s.log.Path, From: s.from, To: s.to}
	}
	return out
}

func (g runGroup) why() string {
	for _, s := range g {
		if s.why != "" {
			return s.why
		}
	}
	if len(g) > 1 && g[1].cont == nil {
		return fmt.Sprintf("%d logs whose times overlap (one run over several processes or nodes)", len(g))
	}
	return "its own log: " + g[0].log.Path
}

func spanStart(gs []runGroup) time.Time {
	if len(gs) == 0 {
		return time.Time{}
	}
	return gs[0].first()
}

func spanEnd(gs []runGroup) time.Time {
	if len(gs) == 0 {
		return time.Time{}
	}
	return gs[0].end()
}

func partsOf(gs []runGroup) []Part {
	if len(gs) == 0 {
		return nil
	}
	return gs[0].parts()
}

// group joins the segments of different logs that are one run: their times
// overlap. A segment without a launch joins the run it overlaps, or the
// latest; segments of one log are separate runs by construction.
func group(segs []*segment) []runGroup {
	var groups []runGroup
	var loose []*segment
	find := func(x *segment) int {
		for gi, g := range groups {
			for _, y := range g {
				if y == x {
					return gi
				}
			}
		}
		return -1
	}
	for _, s := range segs {
		if s.cont != nil {
			if gi := find(s.cont); gi >= 0 {
				groups[gi] = append(groups[gi], s)
				continue
			}
		}
		placed := false
		for gi := range groups {
			if !sameLog(groups[gi], s) && overlaps(groups[gi], s) {
				groups[gi] = append(groups[gi], s)
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		if s.start == nil {
			loose = append(loose, s)
			continue
		}
		groups = append(groups, runGroup{s})
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i].first(), groups[j].first()
		return !a.IsZero() && !b.IsZero() && a.Before(b)
	})
	for _, s := range loose {
		placed := false
		for gi := range groups {
			if overlaps(groups[gi], s) {
				groups[gi] = append(groups[gi], s)
				placed = true
				break
			}
		}
		if !placed {
			if len(groups) == 0 {
				groups = append(groups, runGroup{s})
			} else {
				groups[len(groups)-1] = append(groups[len(groups)-1], s)
			}
		}
	}
	return groups
}

// overlapSlack is how far two nodes' clocks may disagree and their logs
// still be one run.
const overlapSlack = 2 * time.Minute

func overlaps(g runGroup, s *segment) bool {
	a0, a1 := g.first(), g.end()
	if a0.IsZero() || s.first.IsZero() {
		return false
	}
	b1 := s.end
	if b1.IsZero() {
		b1 = s.first
	}
	return !s.first.After(a1.Add(overlapSlack)) && !a0.After(b1.Add(overlapSlack))
}

func sameLog(g runGroup, s *segment) bool {
	for _, x := range g {
		if x.log == s.log {
			return true
		}
	}
	return false
}

func hostsOf(logs []*facts.Log) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range logs {
		for _, p := range l.Procs {
			if h := p.Proc.Host; h != "" && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	sort.Strings(out)
	return out
}

// preambleWindow is how long before its launch line a launch prints.
const preambleWindow = time.Minute

// preamble returns the first line of a new launch: its launch line, or the
// first line stamped less than preambleWindow before it, after from.
func preamble(l *facts.Log, from int, start *facts.LogEvent) int {
	at := start.Src.Line
	if start.Time.IsZero() {
		return at
	}
	for _, list := range [][]*facts.LogEvent{l.Events, l.Unmatched} {
		for _, x := range list {
			if x.Src.Line > from && x.Src.Line < at && !x.Time.IsZero() &&
				!x.Time.Before(start.Time.Add(-preambleWindow)) && !x.Time.After(start.Time) && !stampedBetween(l, x.Src.Line, start) {
				at = x.Src.Line
			}
		}
	}
	return at
}

// stampedBetween reports a line between line and the launch stamped before
// the preamble window: then line is not part of the launch's preamble.
func stampedBetween(l *facts.Log, line int, start *facts.LogEvent) bool {
	for _, list := range [][]*facts.LogEvent{l.Events, l.Unmatched} {
		for _, x := range list {
			if x.Src.Line > line && x.Src.Line < start.Src.Line && !x.Time.IsZero() && x.Time.Before(start.Time.Add(-preambleWindow)) {
				return true
			}
		}
	}
	return false
}

// recount sets a closed segment's times from the events it holds.
func recount(s *segment, l *facts.Log) {
	s.first, s.end = time.Time{}, time.Time{}
	for _, list := range [][]*facts.LogEvent{l.Events, l.Unmatched} {
		for _, x := range list {
			if x.Src.Line >= s.from && x.Src.Line <= s.to && !x.Time.IsZero() {
				s.first, s.end = minTime(s.first, x.Time), maxTime(s.end, x.Time)
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Latest returns the evidence of the latest run of a bundle: what
// `coroner analyze` reports on by default.
func Latest(f *facts.Facts) *facts.Facts {
	rs := Split(f)
	return rs[len(rs)-1].Facts
}
