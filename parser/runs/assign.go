package runs

import (
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// assign gives each run its evidence: its pieces of logs, the snapshots
// and lines taken while it ran, and what describes the machine.
func assign(f *facts.Facts, runs []*Run, groups []runGroup) {
	for i, r := range runs {
		r.Facts = &facts.Facts{
			Clocks:      f.Clocks,
			Assumptions: append([]string(nil), f.Assumptions...),
			// The machine, not the run.
			Topo: f.Topo, GPUList: f.GPUList, Disks: f.Disks, Env: f.Env, Envs: f.Envs, Cmds: f.Cmds,
			Runs: f.Runs, Nodes: f.Nodes, Cgroups: f.Cgroups, System: f.System, Capture: f.Capture,
		}
		for _, s := range groups[i] {
			r.Facts.Logs = append(r.Facts.Logs, slice(s.log, s.from, s.to))
		}
	}
	// Settings the logs printed go with the run of their line; those of a
	// launch command or an environment report with every run.
	for _, st := range f.Settings {
		if k := runOfLine(groups, st.Src); k >= 0 {
			runs[k].Facts.Settings = append(runs[k].Facts.Settings, st)
			continue
		}
		if isLog(f, st.Src.File) {
			continue
		}
		for _, r := range runs {
			r.Facts.Settings = append(r.Facts.Settings, st)
		}
	}
	starts := make([]time.Time, len(runs))
	for i, r := range runs {
		starts[i] = r.Start
	}
	at := func(t time.Time) int { return runAt(starts, t) }
	for _, s := range f.Procs {
		k := at(s.At)
		runs[k].Facts.Procs = append(runs[k].Facts.Procs, s)
	}
	for _, s := range f.GPUs {
		k := at(s.At)
		runs[k].Facts.GPUs = append(runs[k].Facts.GPUs, s)
	}
	for _, e := range f.Kernel {
		k := at(e.Time)
		runs[k].Facts.Kernel = append(runs[k].Facts.Kernel, e)
	}
	for _, m := range f.Memory {
		k := at(m.At)
		runs[k].Facts.Memory = append(runs[k].Facts.Memory, m)
	}
	for _, p := range f.Probes {
		k := at(p.At)
		runs[k].Facts.Probes = append(runs[k].Facts.Probes, p)
	}
	for _, s := range f.Stacks {
		var t time.Time
		if src := f.Source(s.Src.File); src != nil {
			t = src.CapturedAt
		}
		k := at(t)
		runs[k].Facts.Stacks = append(runs[k].Facts.Stacks, s)
	}
	// Each run lists the sources it holds.
	for _, r := range runs {
		used := map[string]bool{}
		for _, l := range r.Facts.Logs {
			used[l.Path] = true
		}
		mark := func(src facts.Source) { used[src.File] = true }
		for _, x := range r.Facts.Procs {
			mark(x.Src)
		}
		for _, x := range r.Facts.GPUs {
			mark(x.Src)
		}
		for _, x := range r.Facts.Kernel {
			mark(x.Src)
		}
		for _, x := range r.Facts.Memory {
			mark(x.Src)
		}
		for _, x := range r.Facts.Probes {
			mark(x.Src)
		}
		for _, x := range r.Facts.Stacks {
			mark(x.Src)
		}
		for _, s := range f.Sources {
			if used[s.Path] || !isLog(f, s.Path) && !timed(f, s.Path) {
				r.Facts.Sources = append(r.Facts.Sources, s)
			}
		}
	}
}

// runAt is the run whose span holds t: the last that started at or before
// it; the first for a time before every start, the latest for no time.
func runAt(starts []time.Time, t time.Time) int {
	if t.IsZero() {
		return len(starts) - 1
	}
	k := 0
	for i, s := range starts {
		if !s.IsZero() && !s.After(t) {
			k = i
		}
	}
	return k
}

func runOfLine(groups []runGroup, src facts.Source) int {
	for i, g := range groups {
		for _, s := range g {
			if s.log.Path == src.File && src.Line >= s.from && src.Line <= s.to {
				return i
			}
		}
	}
	return -1
}

func isLog(f *facts.Facts, path string) bool {
	for _, l := range f.Logs {
		if l.Path == path {
			return true
		}
	}
	return false
}

// timed reports a source whose facts go to one run by their time.
func timed(f *facts.Facts, path string) bool {
	in := func(src facts.Source) bool { return src.File == path }
	for _, x := range f.Procs {
		if in(x.Src) {
			return true
		}
	}
	for _, x := range f.GPUs {
		if in(x.Src) {
			return true
		}
	}
	for _, x := range f.Kernel {
		if in(x.Src) {
			return true
		}
	}
	for _, x := range f.Memory {
		if in(x.Src) {
			return true
		}
	}
	for _, x := range f.Probes {
		if in(x.Src) {
			return true
		}
	}
	for _, x := range f.Stacks {
		if in(x.Src) {
			return true
		}
	}
	return false
}

// slice returns the part of a log between two lines, with its summaries
// computed again from what the part holds. Line numbers stay the file's.
func slice(l *facts.Log, from, to int) *facts.Log {
	if from <= 1 && to >= l.Lines {
		return l
	}
	in := func(src facts.Source) bool { return src.Line >= from && src.Line <= to }
	out := &facts.Log{Path: l.Path, Engine: l.Engine, Version: l.Version, Lines: to - from + 1}
	procs := map[string]*facts.ProcLog{}
	var order []string
	note := func(e *facts.LogEvent) {
		if !e.Time.IsZero() {
			if out.FirstTime.IsZero() || e.Time.Before(out.FirstTime) {
				out.FirstTime = e.Time
			}
			if e.Time.After(out.LastTime) {
				out.LastTime = e.Time
			}
		}
		if e.Src.Line > out.LastSrc.Line {
			out.LastSrc = e.Src
		}
		k := e.Proc.Key()
		pl := procs[k]
		if pl == nil {
			pl = &facts.ProcLog{Proc: e.Proc, FirstSrc: e.Src}
			procs[k] = pl
			order = append(order, k)
		}
		pl.Lines++
		if e.Src.Line < pl.FirstSrc.Line {
			pl.FirstSrc = e.Src
		}
		if e.Src.Line >= pl.LastSrc.Line {
			pl.LastSrc, pl.LastMsg = e.Src, e.Msg
		}
		if !e.Time.IsZero() {
			if pl.FirstTime.IsZero() || e.Time.Before(pl.FirstTime) {
				pl.FirstTime = e.Time
			}
			if e.Time.After(pl.LastTime) {
				pl.LastTime = e.Time
			}
		}
	}
	for _, e := range l.Events {
		if in(e.Src) {
			out.Events = append(out.Events, e)
			note(e)
		}
	}
	for _, e := range l.Unmatched {
		if in(e.Src) {
			out.Unmatched = append(out.Unmatched, e)
			note(e)
		}
	}
	for _, e := range l.Watched {
		if in(e.Src) {
			out.Watched = append(out.Watched, e)
		}
	}
	for _, b := range l.Bars {
		if in(b.Src) || in(b.FirstSrc) {
			out.Bars = append(out.Bars, b)
			if b.Src.Line > out.LastSrc.Line && in(b.Src) {
				out.LastSrc = b.Src
			}
		}
	}
	for _, g := range l.Gaps {
		if g.Line >= from && g.Line <= to {
			out.Gaps = append(out.Gaps, g)
		}
	}
	for _, ser := range l.Series {
		if s := sliceSeries(ser, in); s != nil {
			out.Series = append(out.Series, s)
			if s.Last != nil && s.Last.Src.Line > out.LastSrc.Line {
				out.LastSrc = s.Last.Src
			}
			if s.Last != nil && s.Last.Time.After(out.LastTime) {
				out.LastTime = s.Last.Time
			}
		}
	}
	for _, k := range order {
		out.Procs = append(out.Procs, procs[k])
	}
	if out.LastSrc.File == "" {
		out.LastSrc = facts.Source{File: l.Path, Line: to}
	}
	return out
}

// sliceSeries keeps the buckets of a series whose first line falls in the
// range; the first and last samples are the kept buckets' ends when the
// series' own lie outside.
func sliceSeries(s *facts.Series, in func(facts.Source) bool) *facts.Series {
	var kept []*facts.Bucket
	n := 0
	for _, b := range s.Buckets {
		if in(b.Src) {
			kept = append(kept, b)
			n += b.N
		}
	}
	if len(kept) == 0 {
		return nil
	}
	out := *s
	out.Buckets, out.Count = kept, n
	if s.First == nil || !in(s.First.Src) {
		out.First = &facts.Sample{Src: kept[0].Src, Time: kept[0].Start, Values: map[string]float64{}}
	}
	if s.Last == nil || !in(s.Last.Src) {
		b := kept[len(kept)-1]
		out.Last = &facts.Sample{Src: b.Src, Time: b.End, Values: map[string]float64{}}
	}
	return &out
}
