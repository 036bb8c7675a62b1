// Package derive computes, once per analysis, what the rules, the report
// and diff read besides the raw facts: the Index of per-process timelines,
// the run's state, snapshots in time and the same process across them, the
// GPU inventory, the software readings and versions, runtime series, where
// the signature catalog matched, the frame map and where a failure sits.
// It reads facts only and imports no rule.
package derive

import (
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Index is what the derivation step computes once from the facts for every
// rule: the evidence kinds present, the per-process timelines and the
// snapshot order. Rules read it instead of recomputing.
type Index struct {
	Facts *facts.Facts
	// Kinds counts the sources of each kind.
	Kinds map[facts.Kind]int
	// Procs are the per-process timelines; Timeline is all their spans, in
	// process then log order.
	Procs    []*ProcTimeline
	Timeline []Span
	// Latest is the latest instant the bundle knows of: the last snapshot,
	// else the last log line. Silences are measured up to it.
	Latest     time.Time
	LatestFrom facts.Source
	// State is the run's condition before any reasoning about causes.
	State State
	// Catalog is the signature catalog in use; SigMatches where it matched.
	Catalog    []*Signature
	SigMatches []SigMatch
	// Frames is the frame map in use.
	Frames *FrameMap

	compileFirst bool
	gpus         []GPUInfo
	versions     map[string]Running
	software     []Reading
	platform     []Reading
}

// Span is one phase of one process.
type Span struct {
	Process string    `json:"process"`
	Phase   Phase     `json:"phase"`
	Start   time.Time `json:"start"`
	// End is zero while the phase is still open at the end of the evidence.
	End      time.Time    `json:"end"`
	Evidence facts.Source `json:"evidence"`
	// Cut marks a span that ends at a gap in its log (excerpts of a paste,
	// a clock that went back): it lasted at least that long, and how much
	// longer the evidence does not say.
	Cut bool `json:"cut,omitempty"`
	// endLine is the line of the event that ended the span.
	endLine int
}

// Derive computes the index. catalog is the signature catalog to match
// (nil: the built-in one).
func Derive(f *facts.Facts, catalog []*Signature) *Index {
	if catalog == nil {
		catalog = BuiltinCatalog()
	}
	idx := &Index{Facts: f, Kinds: map[facts.Kind]int{}, Catalog: catalog, Frames: BuiltinFrames()}
	for _, s := range f.Sources {
		idx.Kinds[s.Kind]++
	}
	idx.latest()
	idx.gpus = inventory(f)
	idx.software, idx.platform = readSoftware(f)
	idx.versions = versionsOf(idx.software)
	idx.Procs = procTimelines(f)
	idx.compileFirst = compilesFirst(f, idx.Procs)
	for _, pt := range idx.Procs {
		idx.Timeline = append(idx.Timeline, pt.Spans...)
	}
	idx.SigMatches = matchCatalog(f, catalog)
	idx.deriveState()
	return idx
}

// HasAny reports whether the bundle holds a source of any of the kinds.
func (idx *Index) HasAny(kinds ...facts.Kind) bool {
	for _, k := range kinds {
		if idx.Kinds[k] > 0 {
			return true
		}
	}
	return false
}

func (idx *Index) latest() {
	consider := func(t time.Time, src facts.Source) {
		if !t.IsZero() && t.After(idx.Latest) {
			idx.Latest, idx.LatestFrom = t, src
		}
	}
	for _, p := range idx.Facts.Procs {
		consider(p.At, p.Src)
	}
	for _, g := range idx.Facts.GPUs {
		consider(g.At, g.Src)
	}
	for _, p := range idx.Facts.Probes {
		consider(p.At, p.Src)
	}
	for _, c := range idx.Facts.Capture {
		consider(c.At, c.Src)
	}
	for _, a := range idx.Facts.Runs {
		consider(a.End, a.Src)
	}
	for _, k := range idx.Facts.Kernel {
		consider(k.Time, k.Src)
	}
	// A log written after the last snapshot is the latest evidence too.
	for _, l := range idx.Facts.Logs {
		consider(l.LastTime, l.LastSrc)
	}
}

// PhaseAt returns the phase the process that wrote a log line was in at
// that line, or the run's phase when the line's process has no timeline.
func (idx *Index) PhaseAt(l *facts.Log, proc facts.Proc, line int) Phase {
	var best Phase
	// An untagged line in a log with ranked processes is the launcher's or
	// unprefixed output (a build, a traceback): the run is where its ranks are.
	if proc.Name == "" && hasRanked(idx, l) {
		return idx.furthestAt(l, line)
	}
	for _, pt := range idx.Procs {
		if pt.Log != l || pt.Proc == nil || pt.Proc.Proc.Key() != proc.Key() {
			continue
		}
		for _, m := range pt.Marks {
			if m.Src.Line <= line {
				best = m.Phase
			}
		}
		if best != "" {
			return best
		}
	}
	// The line's process printed no milestone: use the furthest phase any
	// process of the log had reached by then.
	return idx.furthestAt(l, line)
}

// furthestAt is the furthest phase any process of the log reached by line.
func (idx *Index) furthestAt(l *facts.Log, line int) Phase {
	var best Phase
	for _, pt := range idx.Procs {
		if pt.Log != l {
			continue
		}
		for _, m := range pt.Marks {
			if m.Src.Line <= line && idx.Later(m.Phase, best) {
				best = m.Phase
			}
		}
	}
	return best
}

func hasRanked(idx *Index, l *facts.Log) bool {
	for _, pt := range idx.Procs {
		if pt.Log == l && pt.Proc != nil && pt.Proc.Proc.Name != "" {
			return true
		}
	}
	return false
}

// Later reports whether phase a comes after b in the engine's own startup
// order (see PhaseOrder).
func (idx *Index) Later(a, b Phase) bool {
	return idx.PhaseOrder(a) > idx.PhaseOrder(b)
}

// PhaseOrder is a phase's place in the engine's own startup order: the
// taxonomy's, except that vLLM's V1 engine compiles the model
// (torch-compile) while it profiles memory, before it sizes the KV cache.
func (idx *Index) PhaseOrder(p Phase) int {
	o := p.Order()
	if idx.compileFirst {
		switch p {
		case PhaseTorchCompile:
			return PhaseKVCache.Order()
		case PhaseKVCache:
			return PhaseTorchCompile.Order()
		}
	}
	return o
}

// compilesFirst tells a vLLM V1 engine from the evidence: its EngineCore
// process, or a process that entered torch-compile before kv-cache.
func compilesFirst(f *facts.Facts, procs []*ProcTimeline) bool {
	for _, pt := range procs {
		compiled := false
		for _, m := range pt.Marks {
			switch m.Phase {
			case PhaseTorchCompile:
				compiled = true
			case PhaseKVCache:
				if compiled {
					return true
				}
			}
		}
	}
	for _, l := range f.Logs {
		if l.Engine != facts.EngineVLLM {
			continue
		}
		for _, pl := range l.Procs {
			if strings.HasPrefix(pl.Proc.Name, "EngineCore") {
				return true
			}
		}
	}
	return false
}

// RunPhase is the furthest phase any process reached, stamped or not: its
// milestones, and the lines whose signature says in which phase they are
// printed (a placement-group wait is distributed init, a request rejected
// for its length is serving), which a paste may hold without a milestone.
// (Relays are not among the matches.)
func (idx *Index) RunPhase() Phase {
	var best Phase
	for _, pt := range idx.Procs {
		for _, m := range pt.Marks {
			if idx.Later(m.Phase, best) {
				best = m.Phase
			}
		}
	}
	for _, m := range idx.SigMatches {
		if m.Sig.Phase != "" && !m.AfterShutdown && idx.Later(m.Sig.Phase, best) {
			best = m.Sig.Phase
		}
	}
	return best
}
