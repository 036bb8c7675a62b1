package derive

import (
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// PhaseOf maps a recognized log event to the phase it starts. Events absent
// from the map start no phase: they happen inside one (JIT builds, NCCL
// lines, warnings, errors).
//
// Phases follow the order the engine prints them, not the order of the
// taxonomy: vLLM compiles (torch-compile) before it sizes the KV cache,
// SGLang sizes the KV cache before it captures graphs. A span ends where the
// next begins.
var PhaseOf = map[facts.EventType]Phase{
	facts.EventServerArgs:     PhaseLaunch,
	facts.EventNonDefaultArgs: PhaseLaunch,
	facts.EventEngineInit:     PhaseLaunch,
	facts.EventDistInitBegin:  PhaseDistributedInit,
	facts.EventLoadBegin:      PhaseWeightsLoading,
	facts.EventWeightsFormat:  PhaseWeightsLoading,
	facts.EventLoadProgress:   PhaseWeightsLoading,
	facts.EventLoadEnd:        PhasePostWeights,
	facts.EventMemoryProfile:  PhaseKVCache,
	facts.EventKVCacheAlloc:   PhaseKVCache,
	facts.EventKVCacheSize:    PhaseKVCache,
	facts.EventAvailableKV:    PhaseKVCache,
	facts.EventMemPoolEnd:     PhaseKVCache,
	facts.EventTorchCompile:   PhaseTorchCompile,
	facts.EventGraphBegin:     PhaseCUDAGraphCapture,
	facts.EventGraphProgress:  PhaseCUDAGraphCapture,
	facts.EventGraphEnd:       PhaseWarmup,
	facts.EventInitEngineDone: PhaseWarmup,
	facts.EventHTTPStart:      PhaseWarmup,
	facts.EventWarmup:         PhaseWarmup,
	facts.EventReady:          PhaseServing,
	facts.EventStatDecode:     PhaseServing,
	facts.EventStatPrefill:    PhaseServing,
	facts.EventStatThroughput: PhaseServing,
	facts.EventShutdown:       PhaseShutdown,
}

// ProcTimeline is one process's life as its log tells it.
type ProcTimeline struct {
	// Key names the process: its log tag ("TP0", "EngineCore_DP0", "main"),
	// prefixed with the log's path when the bundle holds several logs.
	Key  string
	Log  *facts.Log
	Proc *facts.ProcLog
	// Spans are its phases in log order, as far as its lines are stamped.
	Spans []Span
	// Marks are the phases it entered, in log order, stamped or not: a
	// pasted fragment without times still shows how far a process got.
	Marks []Mark
}

// Mark is where a process entered a phase.
type Mark struct {
	Phase Phase
	Src   facts.Source
}

// procTimelines reconstructs the phases of every process of every log.
func procTimelines(f *facts.Facts) []*ProcTimeline {
	var out []*ProcTimeline
	multi := len(f.Logs) > 1
	for _, l := range f.Logs {
		byKey := map[string]*ProcTimeline{}
		var order []string
		get := func(p facts.Proc) *ProcTimeline {
			k := p.Key()
			if pt := byKey[k]; pt != nil {
				return pt
			}
			key := k
			if multi {
				key = l.Label() + ": " + k
			}
			pt := &ProcTimeline{Key: key, Log: l, Proc: l.ProcLog(k)}
			byKey[k] = pt
			order = append(order, k)
			return pt
		}
		// Every process that wrote a stamped line starts in launch.
		for _, pl := range l.Procs {
			pt := get(pl.Proc)
			if pl.Lines > 0 {
				pt.mark(PhaseLaunch, pl.FirstSrc)
			}
			if !pl.FirstTime.IsZero() {
				pt.Spans = append(pt.Spans, Span{Process: pt.Key, Phase: PhaseLaunch, Start: pl.FirstTime, Evidence: pl.FirstSrc})
			}
		}
		events := append([]*facts.LogEvent(nil), l.Events...)
		rank0 := rankZero(l)
		for _, b := range l.Bars {
			proc := b.Proc
			if proc.Name == "" && rank0 != nil {
				// tqdm bars carry no prefix; SGLang and vLLM draw the weight
				// and capture bars on rank 0 only.
				proc = *rank0
			}
			switch BarPhase(b) {
			case facts.EventLoadProgress:
				events = append(events, &facts.LogEvent{Src: b.FirstSrc, Time: b.Time, Proc: proc, Type: facts.EventLoadProgress})
				if b.Done() {
					// The last shard read ends weight loading even when the
					// engine has not yet logged its own end line. Rank 0 draws
					// the bar for the whole group: every rank reads the same
					// shards in step, so the group's loading ends with it.
					for _, q := range loadingPeers(l, proc, b.Src.Line) {
						events = append(events, &facts.LogEvent{Src: b.Src, Time: barEnd(b), Proc: q, Type: facts.EventLoadEnd})
					}
				}
			case facts.EventGraphProgress:
				events = append(events, &facts.LogEvent{Src: b.FirstSrc, Time: b.Time, Proc: proc, Type: facts.EventGraphProgress})
			case facts.EventStatThroughput:
				events = append(events, &facts.LogEvent{Src: b.FirstSrc, Time: b.Time, Proc: proc, Type: facts.EventStatThroughput})
			}
		}
		// Stat lines live in series, not events: the first of each says its
		// process was serving.
		for _, ser := range l.Series {
			if ser.First != nil {
				events = append(events, &facts.LogEvent{Src: ser.First.Src, Time: ser.First.Time, Proc: ser.Proc, Type: ser.Type})
			}
		}
		sort.SliceStable(events, func(i, j int) bool { return events[i].Src.Line < events[j].Src.Line })
		for _, e := range events {
			ph, ok := PhaseOf[e.Type]
			if !ok {
				continue
			}
			// vLLM's "Initial profiling/warmup run" is the memory profiling
			// that sizes the KV cache, not the warmup of a started server.
			if e.Type == facts.EventWarmup && strings.Contains(e.Msg, "profiling") {
				ph = PhaseKVCache
			}
			pt := get(e.Proc)
			pt.mark(ph, e.Src)
			if !e.Time.IsZero() {
				pt.advance(ph, e)
			}
		}
		handOff(byKey, order)
		readyAll(l, byKey, order)
		markReadyAll(l, byKey, order)
		var pts []*ProcTimeline
		for _, k := range order {
			pts = append(pts, byKey[k])
		}
		cutAtGaps(l, pts)
		for _, k := range order {
			pt := byKey[k]
			if len(pt.Spans) > 0 || len(pt.Marks) > 0 {
				out = append(out, pt)
			}
		}
	}
	return out
}

// BarPhase says which phase a progress bar belongs to ("" for none).
func BarPhase(b *facts.ProgressBar) facts.EventType {
	switch {
	case containsAny(b.Desc, "checkpoint shards", "loading shards", "Loading safetensors", "Loading pt", "Multi-thread loading", "Loading weights"):
		return facts.EventLoadProgress
	case containsAny(b.Desc, "Capturing", "CUDA graph", "cuda graph", "Compiling num tokens"):
		return facts.EventGraphProgress
	case containsAny(b.Desc, "Processed prompts", "Adding requests"):
		// vLLM's offline LLM.generate: the engine is serving the batch.
		return facts.EventStatThroughput
	}
	return ""
}

// barEnd estimates when a bar reached its last state: its elapsed time
// counts from its start, and the closest stamped line before its last state
// bounds it from below. Zero when no stamped line preceded the bar.
func barEnd(b *facts.ProgressBar) time.Time {
	if b.Start.IsZero() {
		return b.Time
	}
	end := b.Start.Add(time.Duration(b.Elapsed * float64(time.Second)))
	if end.Before(b.Time) {
		return b.Time
	}
	return end
}

// rankZero returns the process of a log that draws the rank-0 bars: the
// lowest TP rank of DP group 0, or nil when the log has no rank tags.
func rankZero(l *facts.Log) *facts.Proc {
	var best *facts.Proc
	for _, pl := range l.Procs {
		p := pl.Proc
		r := p.Rank
		if p.Name != "" && r.TP == 0 && r.DP <= 0 && r.PP <= 0 {
			return &pl.Proc
		}
		if p.Name == "TP0" || strings.HasSuffix(p.Name, "_TP0") {
			best = &pl.Proc
		}
	}
	return best
}

// mark records that the process entered ph at src, by the rules of
// advance, whatever the times.
func (pt *ProcTimeline) mark(ph Phase, src facts.Source) {
	if n := len(pt.Marks); n > 0 && !nextPhase(pt.Marks[n-1].Phase, ph) {
		return
	}
	pt.Marks = append(pt.Marks, Mark{Phase: ph, Src: src})
}

// nextPhase reports whether a process in phase cur moves on to ph: phases
// move in log order, except that after serving only shutdown may follow (a
// late KV-cache line is not a restart), a repeated marker of the current
// phase extends it, and a KV-cache marker after capture is late news
// (SGLang prints max_total_num_tokens and vLLM its KV cache size after
// capture on some versions).
func nextPhase(cur, ph Phase) bool {
	switch {
	case cur == ph, cur == PhaseShutdown, ph == PhaseLaunch:
		return false
	case cur == PhaseServing && ph != PhaseShutdown:
		return false
	case ph == PhaseKVCache && (cur == PhaseCUDAGraphCapture || cur == PhaseWarmup):
		return false
	}
	return true
}

// advance moves the process into ph at event e. Phases move in log order,
// with two exceptions: after serving only shutdown may follow (a late
// KV-cache line is not a restart), and a repeated marker of the current phase
// extends it rather than splitting it.
func (pt *ProcTimeline) advance(ph Phase, e *facts.LogEvent) {
	n := len(pt.Spans)
	if n > 0 {
		cur := &pt.Spans[n-1]
		if !nextPhase(cur.Phase, ph) {
			return
		}
		if cur.End.IsZero() {
			cur.End, cur.endLine = e.Time, e.Src.Line
		}
	}
	pt.Spans = append(pt.Spans, Span{Process: pt.Key, Phase: ph, Start: e.Time, Evidence: e.Src})
}

// cutAtGaps ends every span that runs across a gap of its log at the last
// stamp before the gap: events on both sides of a gap are not one interval.
// An open span after which the log has a gap ends there too.
func cutAtGaps(l *facts.Log, pts []*ProcTimeline) {
	if len(l.Gaps) == 0 {
		return
	}
	for _, pt := range pts {
		for i := range pt.Spans {
			s := &pt.Spans[i]
			end := s.endLine
			if s.End.IsZero() {
				end = l.Lines + 1
			}
			for _, g := range l.Gaps {
				if g.Line <= s.Evidence.Line || g.Line > end {
					continue
				}
				s.End, s.Cut = g.Before, true
				if s.End.Before(s.Start) || s.End.IsZero() {
					s.End = s.Start
				}
				break
			}
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// handOff ends the launch of an untagged main process that logged nothing
// after it where ranked processes took over: SGLang's launcher prints its
// ServerArgs and then waits for the schedulers, which is not 87 minutes of
// "launch".
func handOff(byKey map[string]*ProcTimeline, order []string) {
	main := byKey["main"]
	if main == nil || len(main.Spans) != 1 || main.Spans[0].Phase != PhaseLaunch || !main.Spans[0].End.IsZero() {
		return
	}
	var first time.Time
	for _, k := range order {
		if k == "main" {
			continue
		}
		for _, s := range byKey[k].Spans {
			if s.Phase != PhaseLaunch && !s.Start.IsZero() && (first.IsZero() || s.Start.Before(first)) {
				first = s.Start
			}
		}
	}
	if !first.IsZero() && first.After(main.Spans[0].Start) {
		main.Spans[0].End = first
	}
}

// loadingPeers returns the process that drew a weights bar and, when it is a
// rank, the other ranks of the log that had begun loading before the bar
// ended and logged no end of their own.
func loadingPeers(l *facts.Log, drawer facts.Proc, line int) []facts.Proc {
	// A rank that logs its own end of loading ends there, the drawer too:
	// the last shard read is not the end of loading when the engine goes
	// on processing the weights (SGLang's "Load weight end. elapsed=778.18
	// s" on rank 0, minutes after its bar reached 100%).
	var out []facts.Proc
	if !endsOnItsOwn(l, drawer, line) {
		out = append(out, drawer)
	}
	if drawer.Name == "" {
		return out
	}
	begun := map[string]facts.Proc{}
	ended := map[string]bool{}
	for _, e := range l.Events {
		if e.Proc.Name == "" || e.Proc.Key() == drawer.Key() {
			continue
		}
		switch {
		case e.Type == facts.EventLoadBegin && e.Src.Line < line:
			begun[e.Proc.Key()] = e.Proc
		case e.Type == facts.EventLoadEnd:
			ended[e.Proc.Key()] = true
		}
	}
	keys := make([]string, 0, len(begun))
	for k := range begun {
		if !ended[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, begun[k])
	}
	return out
}

// endsOnItsOwn reports that a process logs its own end of loading after
// line.
func endsOnItsOwn(l *facts.Log, p facts.Proc, line int) bool {
	for _, e := range l.Events {
		if e.Type == facts.EventLoadEnd && e.Src.Line > line && e.Proc.Key() == p.Key() {
			return true
		}
	}
	return false
}

// markReadyAll is readyAll for the marks.
func markReadyAll(l *facts.Log, byKey map[string]*ProcTimeline, order []string) {
	var ready *facts.LogEvent
	for _, e := range l.Events {
		if e.Type == facts.EventReady {
			ready = e
			break
		}
	}
	if ready == nil {
		return
	}
	for _, k := range order {
		pt := byKey[k]
		n := len(pt.Marks)
		if n == 0 {
			continue
		}
		last := pt.Marks[n-1]
		if last.Phase.Order() >= PhaseServing.Order() || last.Phase.Order() < PhasePostWeights.Order() || last.Src.Line > ready.Src.Line {
			continue
		}
		pt.Marks = append(pt.Marks, Mark{Phase: PhaseServing, Src: ready.Src})
	}
}

// readyAll moves every process of the log into serving at the ready line:
// the engine answers as a whole, and only rank 0 prints the stat lines that
// would show the others serving.
func readyAll(l *facts.Log, byKey map[string]*ProcTimeline, order []string) {
	var ready *facts.LogEvent
	for _, e := range l.Events {
		if e.Type == facts.EventReady && !e.Time.IsZero() {
			ready = e
			break
		}
	}
	if ready == nil {
		return
	}
	for _, k := range order {
		pt := byKey[k]
		n := len(pt.Spans)
		if n == 0 {
			continue
		}
		last := &pt.Spans[n-1]
		if !last.End.IsZero() || last.Phase.Order() >= PhaseServing.Order() || last.Phase.Order() < PhasePostWeights.Order() {
			continue
		}
		if ready.Time.Before(last.Start) {
			continue
		}
		last.End = ready.Time
		pt.Spans = append(pt.Spans, Span{Process: pt.Key, Phase: PhaseServing, Start: ready.Time, Evidence: ready.Src})
	}
}
