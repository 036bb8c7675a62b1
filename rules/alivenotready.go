package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(notReadyRule) }

var notReadyRule = &Rule{
	ID:       "alive-not-ready",
	Title:    "alive but not ready: no crash, no ready line",
	Severity: SeverityWarning,
	Needs:    []facts.Kind{facts.KindPS, facts.KindTop, facts.KindProbe},
	Doc: `The server's processes are alive in the latest process snapshot, yet the
server is not ready: its health probe failed, or its log has no ready line
("The server is fired up and ready to roll!", "Application startup
complete"). It has not crashed and it does not serve.

Both engines bind their HTTP port only once the model is loaded and the
engine reports ready (SGLang after every scheduler is up, vLLM after the
engine core), so a refused or unanswered /health during startup means startup
has not finished; a 503 means the port is up but the engine is not.

On its own this says "in progress"; the stall rule decides whether it has
taken too long.`,
	Run: runNotReady,
}

func runNotReady(p *Pass) {
	st := &p.Index.State
	if len(st.Alive) == 0 || st.Failed() {
		return
	}
	if st.Ready != nil && len(st.ProbesFailed) == 0 {
		return
	}
	if len(st.ProbesOK) > 0 && len(st.ProbesFailed) == 0 {
		return
	}
	var ev []Evidence
	var why []string
	for i, pr := range st.ProbesFailed {
		if i == 3 {
			break
		}
		what := pr.Err
		if what == "" {
			what = fmt.Sprintf("HTTP %d", pr.Status)
		}
		url := pr.URL
		if url == "" {
			url = pr.Endpoint
		}
		ev = append(ev, Evidence{Src: pr.Src, Text: fmt.Sprintf("%s: %s", url, what)})
		why = append(why, fmt.Sprintf("%s did not answer (%s)", orDefault(pr.Endpoint, url), what))
	}
	if st.Ready == nil {
		why = append(why, "the log has no ready line")
		if st.LastLog != nil {
			ev = append(ev, Evidence{Src: st.Last.Src, Text: "last sign of life: " + st.Last.Text})
		}
	}
	for i, w := range st.Workers {
		if i == 4 {
			break
		}
		ev = append(ev, EvProc(w))
	}
	cpu := ""
	if len(st.Workers) > 0 {
		cpu = fmt.Sprintf(", the busiest at %s of CPU", derive.FormatCPU(maxCPU(st.Workers)))
	}
	msg := fmt.Sprintf("Not ready: %s, while %d server process(es) are alive%s. Not crashed, not serving: startup has not finished.",
		strings.Join(why, " and "), len(st.Alive), cpu)
	if st.Ready != nil {
		msg = fmt.Sprintf("The log says ready at %s, yet %s while %d server process(es) are alive: the server stopped answering after it came up.",
			st.Ready.Src, strings.Join(why, " and "), len(st.Alive))
	}
	f := Finding{Message: msg, Evidence: ev, Confidence: 0.7}
	switch {
	case st.Ready == nil:
		f.Outcome, f.Phase = OutcomeInProgress, p.Index.RunPhase()
	case len(st.ProbesFailed) > 0 && !probeOKAfter(st):
		// Ready once, unanswered now, processes alive: a hang while serving.
		f.Outcome, f.Phase = OutcomeHung, PhaseServing
	}
	p.Report(f)
}

// probeOKAfter reports a successful probe after the last failed one.
func probeOKAfter(st *State) bool {
	var lastFail time.Time
	for _, pr := range st.ProbesFailed {
		if pr.At.After(lastFail) {
			lastFail = pr.At
		}
	}
	for _, pr := range st.ProbesOK {
		if pr.At.After(lastFail) {
			return true
		}
	}
	return false
}
