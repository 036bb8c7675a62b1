package pack

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// ruleDef is a pack rule as compiled.
type ruleDef struct {
	rule   *rules.Rule
	idNode ast.Node
	where  string

	match *matcher
	when  *program
	// message renders the finding's message; nil means the default.
	message    *template
	confidence float64
	remedy     string
	outcome    rules.Outcome
	phase      rules.Phase
	cause      bool
	// layer is the rules.Layer* value, layerName as the pack wrote it.
	layer, layerName string

	matchText, whenText, messageText string
}

// matcher selects log events.
type matcher struct {
	types    []string
	msg      *regexp.Regexp
	fields   []fieldMatch
	sigs     []string
	sigNodes []ast.Node
}

type fieldMatch struct {
	key string
	re  *regexp.Regexp
}

// String renders the matcher as YAML-like lines, for rules explain.
func (m *matcher) String() string {
	var b []string
	if len(m.types) > 0 {
		b = append(b, "type: "+strings.Join(m.types, ", "))
	}
	if m.msg != nil {
		b = append(b, "msg: "+m.msg.String())
	}
	if len(m.fields) > 0 {
		b = append(b, "fields:")
		for _, f := range m.fields {
			b = append(b, "  "+f.key+": "+f.re.String())
		}
	}
	if len(m.sigs) > 0 {
		b = append(b, "signature: "+strings.Join(m.sigs, ", "))
	}
	return strings.Join(b, "\n")
}

// maxCited bounds the evidence of one finding: the first few places say
// where to look; the message says how many there are.
const maxCited = 8

// hits returns the events the matcher selects, in log order, then the
// kernel lines of the signatures it names. Events after the server was
// told to stop are shutdown noise and are left out, as the signature
// rule does.
func (m *matcher) hits(idx *rules.Index) []*facts.LogEvent {
	var out []*facts.LogEvent
	if len(m.sigs) > 0 {
		for _, sm := range idx.Matches("", m.sigs...) {
			if sm.AfterShutdown {
				continue
			}
			e := sm.Event
			if e == nil {
				e = &facts.LogEvent{Src: sm.Src, Time: sm.Time, Type: "kernel", Msg: sm.Text}
			}
			if m.accepts(e) {
				out = append(out, e)
			}
		}
		return out
	}
	for _, l := range idx.Facts.Logs {
		stop := rules.ShutdownLine(l)
		for _, e := range l.Events {
			if stop > 0 && e.Src.Line > stop {
				break
			}
			if m.accepts(e) {
				out = append(out, e)
			}
		}
	}
	return out
}

func (m *matcher) accepts(e *facts.LogEvent) bool {
	if len(m.types) > 0 && !containsStr(m.types, string(e.Type)) {
		return false
	}
	if m.msg != nil && !m.msg.MatchString(e.Msg) {
		tb := e.Traceback
		if tb == nil || !m.msg.MatchString(tb.ExcType+": "+tb.ExcMsg) {
			return false
		}
	}
	if len(m.fields) == 0 {
		return true
	}
	fields := facts.Fields(e.Data)
	for _, f := range m.fields {
		v, ok := fields[f.key]
		if !ok || !f.re.MatchString(facts.ValueText(v)) && !f.re.MatchString(fmt.Sprint(v)) {
			return false
		}
	}
	return true
}

// run is the rule's Run.
func (d *ruleDef) run(p *rules.Pass) {
	v := newView(p.Index)
	v.noFields = !d.seesFields()
	e := newEnv(v)
	var ev []rules.Evidence
	var first *facts.LogEvent
	n := 0
	if d.match != nil {
		hits := d.match.hits(p.Index)
		var kept []*facts.LogEvent
		var evalErr error
		for _, h := range hits {
			if d.when != nil {
				e.Event, e.Matches = v.event(h), len(hits)
				ok, err := d.when.bool(e)
				if err != nil {
					evalErr = err
					continue
				}
				if !ok {
					continue
				}
			}
			kept = append(kept, h)
		}
		if len(kept) == 0 {
			if evalErr != nil {
				d.missing(p, evalErr)
			}
			return
		}
		first, n = kept[0], len(kept)
		e.Event, e.Matches = v.event(first), n
		for i, h := range kept {
			if i == 5 {
				break
			}
			ev = append(ev, rules.Ev(h))
		}
	} else {
		ok, err := d.when.bool(e)
		if err != nil {
			d.missing(p, err)
			return
		}
		if !ok {
			return
		}
	}
	if d.when != nil {
		ev = append(ev, d.when.cites(e)...)
	}
	ev = dedupe(ev)
	msg := d.defaultMessage(first, n, ev)
	if d.message != nil {
		if s, err := d.message.render(e); err == nil {
			msg = s
		} else {
			msg += fmt.Sprintf(" (the rule's message failed: %v)", err)
		}
	}
	f := rules.Finding{
		Confidence: d.confidence,
		Message:    msg,
		Remedy:     d.remedy,
		Evidence:   ev,
		Outcome:    d.outcome,
		Phase:      d.phase,
		Cause:      d.cause,
		Layer:      d.layer,
		Why:        fmt.Sprintf("the pack rule %s (%s) holds", d.rule.ID, d.where),
	}
	if d.layerName != "" {
		f.Why = fmt.Sprintf("the pack rule %s (%s, layer %s) holds", d.rule.ID, d.where, d.layerName)
	}
	if f.Outcome != "" && f.Phase == "" {
		f.Phase = p.Index.RunPhase()
	}
	p.Report(f)
}

// seesFields reports whether the rule's expressions may see an event's
// fields.
func (d *ruleDef) seesFields() bool {
	return d.when != nil && d.when.fields || d.message != nil && d.message.seesFields()
}

func (d *ruleDef) defaultMessage(first *facts.LogEvent, n int, ev []rules.Evidence) string {
	if first != nil {
		return fmt.Sprintf("Matched %d time(s), first at %s: %s", n, first.Src, first.Msg)
	}
	msg := fmt.Sprintf("The condition `%s` holds", strings.Join(strings.Fields(d.whenText), " "))
	var what []string
	for i, x := range ev {
		if i == 3 {
			break
		}
		what = append(what, fmt.Sprintf("%s (%s)", x.Text, x.Src))
	}
	if len(what) > 0 {
		msg += ": " + strings.Join(what, "; ")
	}
	return msg + "."
}

// missing reports the rule inconclusive: its expression could not be
// evaluated on this evidence (an index past the GPUs there are, say).
func (d *ruleDef) missing(p *rules.Pass, err error) {
	p.Missing("the evidence the rule's `when` reads; or fix the expression to allow for its absence",
		fmt.Sprintf("when (%s): %v", d.where, firstLine(err.Error())))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func dedupe(ev []rules.Evidence) []rules.Evidence {
	var out []rules.Evidence
	seen := map[string]bool{}
	for _, x := range ev {
		k := x.Src.String() + "\x00" + x.Text
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, x)
		if len(out) == maxCited {
			break
		}
	}
	return out
}

// eventTypes are the event types of parser/facts that a log keeps as
// events (a test keeps the list complete), plus "kernel" for kernel lines
// a signature matched. Plain lines and the stat lines are not kept as
// events (stats go to series), so a match on them could never fire.
var notEvents = []facts.EventType{facts.EventLine, facts.EventStatDecode, facts.EventStatPrefill,
	facts.EventStatThroughput, facts.EventStatSpecDecode}

var eventTypes = []facts.EventType{
	facts.EventServerArgs, facts.EventNonDefaultArgs, facts.EventVersion, facts.EventAttentionBackend,
	facts.EventConfigWarning, facts.EventEngineInit, facts.EventDistInitBegin, facts.EventDistInitEnd,
	facts.EventNCCLVersion, facts.EventLoadBegin, facts.EventWeightsFormat, facts.EventLoadProgress, facts.EventLoadEnd,
	facts.EventMemoryProfile, facts.EventKVCacheAlloc, facts.EventKVCacheSize, facts.EventAvailableKV,
	facts.EventMaxConcurrency, facts.EventMemPoolEnd, facts.EventMaxTotalTokens, facts.EventTorchCompile,
	facts.EventTorchCompileEnd, facts.EventJITBegin, facts.EventJITEnd, facts.EventJITFailed, facts.EventGraphBegin,
	facts.EventGraphProgress, facts.EventGraphEnd, facts.EventGraphFailed, facts.EventInitEngineDone, facts.EventWarmup,
	facts.EventHTTPStart, facts.EventReady, facts.EventRequest, facts.EventRetract, facts.EventPreemption, facts.EventShutdown,
	facts.EventNCCLInfo, facts.EventNCCLWarn, facts.EventNCCLError, facts.EventGloo, facts.EventPythonWarning, facts.EventTorchLog,
	facts.EventCollectiveTimout, facts.EventWatchdogTimeout, facts.EventSHMWait, facts.EventRPCTimeout,
	facts.EventRoute, facts.EventCustomAllReduce, facts.EventP2P, facts.EventJITProgress, facts.EventKVInsufficient,
	facts.EventPlacementWait, facts.EventWeightsDownload, facts.EventRankAssigned, facts.EventCmdline,
	facts.EventDeprecation, facts.EventSignal, facts.EventBenchmark, facts.EventTraceback, facts.EventError, facts.EventOOM,
	facts.EventSchedulerCrash, facts.EventChildFailed, facts.EventEngineInitFailed, facts.EventWorkerDied,
	facts.EventEngineDead, facts.EventSigquit, facts.EventKilled, "kernel",
}

func knownEventType(t string) bool {
	for _, x := range eventTypes {
		if string(x) == t {
			return true
		}
	}
	return false
}
