package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Verdict is the run's state and its ranked causes.
type Verdict struct {
	Outcome Outcome
	Phase   Phase
	Summary string
	// StalledFor is how long the run has been silent while alive (0 if not stalled).
	StalledFor time.Duration
	Causes     []Cause
	// Sequence is what the run went through when it was more than one
	// outcome, in order: a hang that a watchdog or a timeout ended is
	// [hung crashed].
	Sequence []Outcome
}

// Cause is one ranked hypothesis.
type Cause struct {
	Category   Category `json:"category"`
	Rule       string   `json:"rule"`
	Confidence float64  `json:"confidence"`
	Title      string   `json:"title"`
	Why        string   `json:"-"`
}

func decide(idx *Index, fs []Finding, ruledOut []RuledOut) Verdict {
	v := Verdict{Outcome: OutcomeUnknown}
	best := -1
	for _, f := range fs {
		if f.Outcome == "" {
			continue
		}
		if p := f.Outcome.Priority(); p > best {
			best = p
			v.Outcome = f.Outcome
			v.Phase = f.Phase
		} else if p == best && v.Phase == "" {
			// A finding that claims the outcome without a phase does not
			// hide the phase another claiming it places it in.
			v.Phase = f.Phase
		}
	}
	if best < 0 {
		// No rule claimed an outcome: a ready line, or a server seen
		// serving, that nothing contradicts means ready.
		if idx.State.Ready != nil || idx.State.Serving != nil {
			v.Outcome = OutcomeReady
		}
	}
	if v.Phase == "" {
		v.Phase = idx.RunPhase()
		if v.Outcome == OutcomeReady && idx.State.Serving != nil && idx.Later(PhaseServing, v.Phase) {
			v.Phase = PhaseServing // it answered requests
		}
	}
	for _, f := range fs {
		if f.Stalled > v.StalledFor {
			v.StalledFor = f.Stalled
		}
	}
	// The evidence for each category, pooled (calibration.go).
	type pool struct {
		best  Finding
		ps    []float64
		rules []string
	}
	byCat := map[Category]*pool{}
	for _, f := range fs {
		if !f.Cause || f.Category == "" {
			continue
		}
		pl := byCat[f.Category]
		if pl == nil {
			pl = &pool{best: f}
			byCat[f.Category] = pl
		} else if f.Confidence > pl.best.Confidence {
			pl.best = f
		}
		pl.ps = append(pl.ps, f.Confidence)
		if !contains(pl.rules, f.Rule) {
			pl.rules = append(pl.rules, f.Rule)
		}
	}
	against := map[Category]int{}
	for _, r := range ruledOut {
		against[r.Category]++
	}
	for cat, pl := range byCat {
		var others []string
		for _, r := range pl.rules {
			if r != pl.best.Rule {
				others = append(others, r)
			}
		}
		why := pl.best.Why + also(others)
		if pl.best.Seen != "" {
			why += "; " + pl.best.Seen
		}
		if n := against[cat]; n > 0 {
			why += fmt.Sprintf("; %d rule(s) found evidence against it", n)
		}
		v.Causes = append(v.Causes, Cause{Category: cat, Rule: pl.best.Rule, Confidence: combine(pl.ps, against[cat]),
			Title: pl.best.Title, Why: why})
	}
	sort.Slice(v.Causes, func(i, j int) bool {
		a, b := v.Causes[i], v.Causes[j]
		if a.Confidence != b.Confidence {
			return a.Confidence > b.Confidence
		}
		return a.Category < b.Category
	})
	if v.Outcome == OutcomeCrashed && hungFirst(idx, fs) {
		v.Sequence = []Outcome{OutcomeHung, OutcomeCrashed}
	}
	v.Summary = summarize(v)
	return v
}

// hungFirst reports a crash that ended a hang: the first failure is a
// timeout (c10d's or an engine's watchdog, an RPC or a message queue that
// timed out), or a rule saw the run hung before it failed.
func hungFirst(idx *Index, fs []Finding) bool {
	for _, f := range fs {
		if f.Outcome == OutcomeHung {
			return true
		}
	}
	root := RootFailure(&idx.State)
	if root == nil {
		return false
	}
	switch root.Type {
	case facts.EventCollectiveTimout, facts.EventWatchdogTimeout, facts.EventRPCTimeout:
		return true
	}
	if tb := root.Traceback; tb != nil {
		t := tb.ExcType
		if k := strings.LastIndexByte(t, '.'); k >= 0 {
			t = t[k+1:]
		}
		return t == "TimeoutError" || t == "DistStoreError" && strings.Contains(tb.ExcMsg, "timed out")
	}
	return false
}

// summarize writes the one-sentence headline.
func summarize(v Verdict) string {
	var b strings.Builder
	switch v.Outcome {
	case OutcomeHung:
		b.WriteString("Hung")
		if v.StalledFor > 0 {
			fmt.Fprintf(&b, " %s", humanDuration(v.StalledFor))
		}
		if v.Phase != "" {
			fmt.Fprintf(&b, " in %s", phaseWords(v.Phase))
		}
	case OutcomeCrashed:
		if len(v.Sequence) > 1 && v.Sequence[0] == OutcomeHung {
			b.WriteString("Hung")
			if v.Phase != "" {
				fmt.Fprintf(&b, " in %s", phaseWords(v.Phase))
			}
			b.WriteString(", then crashed when a timeout ended it")
			break
		}
		b.WriteString("Crashed")
		if v.Phase != "" {
			fmt.Fprintf(&b, " in %s", phaseWords(v.Phase))
		}
	case OutcomeSlow:
		b.WriteString("Slow")
		if v.Phase != "" {
			fmt.Fprintf(&b, " in %s", phaseWords(v.Phase))
		}
	case OutcomeReady:
		if v.Phase == PhaseShutdown {
			b.WriteString("Came up and served, then shut down")
		} else {
			b.WriteString("Ready and serving")
		}
	case OutcomeInProgress:
		b.WriteString("Still starting")
		if v.Phase != "" {
			fmt.Fprintf(&b, ", in %s", phaseWords(v.Phase))
		}
	default:
		b.WriteString("State unknown")
		if v.Phase != "" {
			fmt.Fprintf(&b, "; last phase seen: %s", phaseWords(v.Phase))
		}
	}
	switch {
	case len(v.Causes) > 0 && v.Outcome == OutcomeReady:
		fmt.Fprintf(&b, "; worth a look: %s (%s)", v.Causes[0].Title, v.Causes[0].Category)
	case len(v.Causes) > 0 && v.Causes[0].Confidence < 0.5:
		fmt.Fprintf(&b, "; a possible cause: %s (%s)", v.Causes[0].Title, v.Causes[0].Category)
	case len(v.Causes) > 0:
		fmt.Fprintf(&b, "; most likely %s (%s)", v.Causes[0].Title, v.Causes[0].Category)
	case v.Outcome != OutcomeReady && v.Outcome != OutcomeInProgress:
		b.WriteString("; no cause could be named from this evidence")
	}
	b.WriteString(".")
	return b.String()
}

// phaseWords names a phase in a sentence.
func phaseWords(p Phase) string {
	switch p {
	case PhaseLaunch:
		return "launch"
	case PhaseDistributedInit:
		return "distributed init"
	case PhaseWeightsLoading:
		return "weight loading"
	case PhasePostWeights:
		return "the phase after loading weights"
	case PhaseKVCache:
		return "KV cache setup"
	case PhaseTorchCompile:
		return "torch.compile"
	case PhaseCUDAGraphCapture:
		return "CUDA graph capture"
	case PhaseWarmup:
		return "warmup"
	case PhaseServing:
		return "serving"
	case PhaseShutdown:
		return "shutdown"
	}
	return string(p)
}

// humanDuration renders 77 min, 2.5 h, 45 s, as the reports and coroner
// diff do (facts.Duration).
func humanDuration(d time.Duration) string { return facts.Duration(d) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
