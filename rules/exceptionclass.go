package rules

import (
	"fmt"
	"sort"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(exceptionClassRule) }

var exceptionClassRule = &Rule{
	ID:       "exception-class",
	Title:    "what the error is, by its class",
	Severity: SeverityError,
	Doc: `The second layer of diagnosis. Below the exact signatures (one message of
one library) lie the classes of errors: what CUDA, NCCL, PyTorch, Python and
the operating system say when memory runs out, a kernel faults, a binary
lacks this GPU's architecture, a driver does not fit the runtime, a library
was built against another, a compiler fails, a peer cannot be reached, a
port is taken or a setting is wrong (catalog/exceptions.yaml).

Classes are matched against failure text only (exception lines, warning and
error lines, lines no parser recognized), and a class whose category an
exact signature already names for the same line adds nothing. One finding
per category, citing its first lines; the confidence is the class's measured
precision (rules/calibration.json) where it was measured.`,
	References: []string{
		"https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/types.html",
		"https://docs.python.org/3/library/exceptions.html",
	},
	Run: runExceptionClass,
}

func runExceptionClass(p *Pass) {
	idx := p.Index
	// Lines an exact signature explains: it is the more specific reading.
	named := map[facts.Source]bool{}
	for _, m := range idx.SigMatches {
		if m.Sig.Layer != LayerClass {
			named[m.Src] = true
		}
	}
	byCat := map[Category][]SigMatch{}
	for _, m := range idx.SigMatches {
		if m.Sig.Layer != LayerClass || m.AfterShutdown || !nearFailure(idx, m) {
			continue
		}
		if named[m.Src] {
			continue
		}
		byCat[m.Sig.Category] = append(byCat[m.Sig.Category], m)
	}
	cats := make([]Category, 0, len(byCat))
	for c := range byCat {
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i] < cats[j] })
	for _, c := range cats {
		ms := byCat[c]
		best := ms[0]
		for _, m := range ms[1:] {
			if m.Sig.Confidence > best.Sig.Confidence {
				best = m
			}
		}
		var ev []Evidence
		for i, m := range ms {
			if i == 3 {
				break
			}
			ev = append(ev, Evidence{Src: m.Src, Text: m.Text})
		}
		phase := idx.MatchPhase(best, idx.RunPhase())
		p.Report(Finding{
			Title:      best.Sig.Title,
			Severity:   best.Sig.Severity,
			Category:   c,
			Confidence: best.Sig.Confidence,
			Message:    period(fmt.Sprintf("%s: %q at %s is of the class %q (%d line(s) of it)", capitalize(best.Sig.Title), trimText(best.Text, 240), best.Src, best.Sig.ID, len(ms))),
			Remedy:     best.Sig.Remedy,
			References: best.Sig.References,
			Evidence:   ev,
			Phase:      phase,
			Cause:      true,
			Layer:      LayerClass,
			Signature:  best.Sig.ID,
			Why:        fmt.Sprintf("the error at %s is of a class that means %s", best.Src, c),
		})
	}
}

// nearWindow is how many lines before a failure a warning may say what
// went wrong.
const nearWindow = 60

// nearFailure keeps a class match that says what failed: an exception or an
// error line anywhere, a warning or unlevelled line only close before a
// failure of the same log or right after it (the rest of its message). A
// benign warning of a run that did not fail ("Please set a HF_TOKEN",
// "Ignore import error") is no cause.
func nearFailure(idx *Index, m SigMatch) bool {
	e := m.Event
	if e == nil {
		return true // a kernel line
	}
	if e.Traceback != nil || e.Level.Severe() || e.Type == facts.EventNCCLWarn || e.Type == facts.EventOOM {
		return true
	}
	if m.Log == nil {
		return false
	}
	for _, f := range idx.State.Failures {
		if f.Src.File == m.Src.File && f.Src.Line >= m.Src.Line && f.Src.Line-m.Src.Line <= nearWindow {
			return true
		}
		if derive.RestOf(m, f) {
			return true // the rest of the failure's message
		}
	}
	return false
}
