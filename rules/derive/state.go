package derive

import (
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// State is the run's condition as the evidence shows it, before any rule
// reasons about causes: did it get ready, did something fail, are its
// processes alive, how long has it been silent.
type State struct {
	// Ready is the first ready line (fired up, Application startup complete).
	Ready *facts.LogEvent
	// Serving is the first sign that the server answered without a ready
	// line in the evidence (a paste that starts later): a stat line of a
	// running engine, a request answered, vLLM's HTTP server listening.
	Serving *facts.LogEvent
	// Shutdown is the first sign that the server was told to stop.
	Shutdown *facts.LogEvent
	// Failures are the failure events that are not shutdown noise, in log order.
	Failures []*facts.LogEvent
	// RequestFailures are tracebacks of one request's handling (the
	// server answered it with an error and went on): not a crash.
	RequestFailures []*facts.LogEvent
	// PS is the latest process snapshot; Alive its live server processes
	// and Workers the ones that drive GPUs.
	PS      *facts.ProcSnapshot
	Alive   []*facts.Process
	Workers []*facts.Process
	// NodesDown are the latest snapshots of the nodes that show no server
	// process while another node's still does (bundles of several nodes).
	NodesDown []*facts.ProcSnapshot
	// ProbesOK and ProbesFailed are the health probes by result.
	ProbesOK, ProbesFailed []*facts.Probe
	// Last is the last sign of life of the logs; Silence is how long before
	// the latest evidence it was (0 when nothing is later than the log).
	Last    LogActivity
	LastLog *facts.Log
	Silence time.Duration
}

// failureTypes are the log events that mean something failed.
var failureTypes = map[facts.EventType]bool{
	facts.EventTraceback: true, facts.EventSchedulerCrash: true, facts.EventChildFailed: true,
	facts.EventEngineInitFailed: true, facts.EventWorkerDied: true, facts.EventEngineDead: true,
	facts.EventSigquit: true, facts.EventKilled: true, facts.EventOOM: true, facts.EventGraphFailed: true,
	facts.EventJITFailed: true, facts.EventCollectiveTimout: true, facts.EventWatchdogTimeout: true,
	facts.EventNCCLError: true,
}

// shutdownExceptions are what a process raises when it is told to stop.
var shutdownExceptions = []string{"KeyboardInterrupt", "SystemExit", "CancelledError", "BrokenPipeError"}

// IsShutdownNoise reports an exception that a stop request raises.
func IsShutdownNoise(e *facts.LogEvent) bool {
	if e.Traceback == nil {
		return false
	}
	for _, x := range shutdownExceptions {
		if strings.HasSuffix(e.Traceback.ExcType, x) {
			return true
		}
	}
	return false
}

func (idx *Index) deriveState() {
	st := &idx.State
	for _, l := range idx.Facts.Logs {
		shutdown := 0
		for _, e := range l.Events {
			if !isStopRequest(e) {
				continue
			}
			if st.Shutdown == nil {
				st.Shutdown = e
			}
			if shutdown == 0 {
				shutdown = e.Src.Line
			}
		}
		for _, e := range l.Events {
			switch {
			case e.Type == facts.EventReady:
				if st.Ready == nil {
					st.Ready = e
				}
			case failureTypes[e.Type]:
				if (shutdown > 0 && e.Src.Line > shutdown) || IsShutdownNoise(e) {
					continue
				}
				if idx.requestFailure(e) {
					st.RequestFailures = append(st.RequestFailures, e)
					continue
				}
				if e.Type == facts.EventEngineInitFailed && progressAfter(l, e) {
					// "Failed to load the optional plugin", then the run went
					// on to its next step: an error it survived.
					continue
				}
				st.Failures = append(st.Failures, e)
			}
		}
		if st.Serving == nil && st.Ready == nil {
			st.Serving = servingSign(l)
		}
		if st.Serving == nil && st.Ready == nil && len(st.RequestFailures) > 0 {
			st.Serving = st.RequestFailures[0] // it answered a request, with an error
		}
		a := LastActivity(l)
		if a.Time.After(st.Last.Time) {
			st.Last, st.LastLog = a, l
		}
	}
	st.PS = idx.LatestProcs()
	st.Alive = serverProcs(st.PS, idx.LogPIDs())
	st.Workers = Workers(st.PS)
	if len(st.Alive) > 0 {
		named := idx.LogPIDs()
		for _, s := range idx.LatestProcsByHost() {
			if s != st.PS && len(serverProcs(s, named)) == 0 {
				st.NodesDown = append(st.NodesDown, s)
			}
		}
	}
	for _, p := range idx.Facts.Probes {
		if p.OK() {
			st.ProbesOK = append(st.ProbesOK, p)
		} else {
			st.ProbesFailed = append(st.ProbesFailed, p)
		}
	}
	if !st.Last.Time.IsZero() && idx.Latest.After(st.Last.Time) {
		st.Silence = idx.Latest.Sub(st.Last.Time)
	}
}

// Failed reports whether the run shows a failure that is not shutdown noise.
func (st *State) Failed() bool { return len(st.Failures) > 0 }

// isStopRequest reports a line that says the server was told to stop: a
// shutdown line, or SIGTERM/SIGINT/SIGHUP received (SIGQUIT is how SGLang's
// children report a failure, so it is not one).
func isStopRequest(e *facts.LogEvent) bool {
	switch e.Type {
	case facts.EventShutdown:
		return true
	case facts.EventSignal:
		sig := ""
		if d, ok := e.Data.(*facts.Server); ok {
			sig = d.Signal
		}
		return strings.Contains(sig, "TERM") || strings.Contains(sig, "INT") || strings.Contains(sig, "HUP") ||
			sig == "15" || sig == "2" || sig == "1"
	}
	return false
}

// servingSign is the first line of a log that shows the server serving:
// an answered request, a stat line, or vLLM's uvicorn listening ("Uvicorn
// running on": the engine is up before vLLM starts its HTTP server; SGLang
// starts its server before its warmup, so there only the ready line says
// it).
func servingSign(l *facts.Log) *facts.LogEvent {
	for _, ser := range l.Series {
		if ser.First != nil && (ser.Type == facts.EventStatDecode || ser.Type == facts.EventStatPrefill || ser.Type == facts.EventStatThroughput) {
			return &facts.LogEvent{Src: ser.First.Src, Time: ser.First.Time, Proc: ser.Proc, Type: ser.Type, Msg: "a stat line of the running engine"}
		}
	}
	for _, e := range l.Events {
		switch {
		case e.Type == facts.EventRequest:
			if d, ok := e.Data.(*facts.HTTP); ok {
				if st, ok := d.Status.Get(); ok && st > 0 && st < 500 {
					return e
				}
			}
		case e.Type == facts.EventHTTPStart && l.Engine == facts.EngineVLLM:
			if d, ok := e.Data.(*facts.Server); ok && d.URL != "" {
				return e
			}
		}
	}
	return nil
}

// requestFailure reports a traceback raised while handling one request
// (its frames run the request handlers: FastAPI's routing, the engines'
// OpenAI adapters): the request failed, the server did not.
func (idx *Index) requestFailure(e *facts.LogEvent) bool {
	tb := e.Traceback
	if tb == nil {
		return false
	}
	for _, f := range tb.Frames {
		if idx.Frames.LibraryOf(f) == "http-request" {
			return true
		}
	}
	return false
}

// RootFailure returns the failure that started the cascade.
func RootFailure(st *State) *facts.LogEvent {
	fs := append([]*facts.LogEvent(nil), st.Failures...)
	if len(fs) == 0 {
		return nil
	}
	// An exception that says what went wrong beats everything; among the
	// rest (wrappers, "worker died", "child failed") the first in time is
	// the first sign of the failure.
	rank := func(e *facts.LogEvent) int {
		if rootTypes[e.Type] && !isWrapper(e) {
			return 0
		}
		return 1
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if !a.Time.IsZero() && !b.Time.IsZero() && !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.Src.Line < b.Src.Line
	})
	return fs[0]
}

// BindFailure reports a failure that is a taken port.
func BindFailure(idx *Index, e *facts.LogEvent) bool {
	for _, m := range idx.SigMatches {
		if m.Event == e && m.Sig.Category == CatPortInUse {
			return true
		}
	}
	return false
}

func isWrapper(e *facts.LogEvent) bool {
	text := e.Msg
	if e.Traceback != nil {
		text = e.Traceback.ExcType + ": " + e.Traceback.ExcMsg
	}
	for _, w := range wrapperExceptions {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// progressAfter reports a milestone of the same process logged after e:
// the process went on past the error.
func progressAfter(l *facts.Log, e *facts.LogEvent) bool {
	for _, o := range l.Events {
		if _, ok := PhaseOf[o.Type]; ok && o.Src.Line > e.Src.Line && o.Proc.Key() == e.Proc.Key() && o.Type != facts.EventShutdown {
			return true
		}
	}
	return false
}

// rootTypes are failures that carry their own cause; the others report a
// failure elsewhere.
var rootTypes = map[facts.EventType]bool{
	facts.EventTraceback: true, facts.EventSchedulerCrash: true, facts.EventOOM: true,
	facts.EventGraphFailed: true, facts.EventJITFailed: true, facts.EventCollectiveTimout: true,
	facts.EventWatchdogTimeout: true,
}

// wrapperExceptions say "see above" rather than what went wrong.
var wrapperExceptions = []string{"Engine core initialization failed", "EngineDeadError", "Executor failed",
	"WorkerProc initialization failed", "Initialization failed", "scheduler died", "is dead"}
