package derive

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Placement is where in the engine's life a failure happened, and what
// placed it there: the frames of its traceback, a function its message
// names, a signature that implies a phase, the frames of another rank's
// traceback of the same cascade, or the last milestone logged before it.
type Placement struct {
	Phase Phase
	// By is "frames", "message", "signature", "peer-frames" or "milestone".
	By  string
	Src facts.Source
	// Why says it in words: "raised in capture_one_batch_size
	// (cuda_graph_runner.py:485)".
	Why string
	// atLeast: the evidence says only "this phase or a later one" (the
	// outer frames of a traceback whose inner ones were cut).
	atLeast bool
}

// methodRe finds the engine method a worker names in its exception
// ("Exception in worker VllmWorkerProcess while processing method
// determine_num_available_blocks").
// vLLM's engine core also names the method of an RPC to its workers that
// timed out ("RPC call to sample_tokens timed out").
var methodRe = regexp.MustCompile(`(?:processing method|RPC call to) ([A-Za-z_][A-Za-z0-9_]*)`)

// PlaceFailure places a failure event of log l. Frames are the strongest
// evidence (they say which code ran); a signature that implies a phase and
// the milestone logged before the failure come next, the later of the two
// in the engine's order winning (an NCCL error cannot come before launch,
// and a process that logged its capture was capturing). Where that leaves
// it at launch for want of anything better: what the other failures of the
// cascade say, a request answered 5xx right after it (serving), and, in a
// paste of the failure alone, the step its message names.
func (idx *Index) PlaceFailure(l *facts.Log, e *facts.LogEvent) Placement {
	pl := idx.placeFailure(l, e)
	if pl.Phase == "" || pl.Phase == PhaseLaunch || pl.atLeast {
		// What the peers of the same cascade say can only move it later:
		// a traceback cut after its outer frames, or a failure placed at
		// launch for want of anything better.
		if peer, ok := idx.peerPlace(e); ok && (pl.Phase == "" || idx.Later(peer.Phase, pl.Phase)) {
			return peer
		}
	}
	if (pl.Phase == "" || pl.Phase == PhaseLaunch && pl.By == "milestone") && l != nil {
		// The server answered a request with an error right after it (a
		// 5xx access line): it failed while serving that request.
		if r, ok := failedRequestAfter(l, e); ok {
			return Placement{Phase: PhaseServing, By: "message", Src: r.Src,
				Why: "the server answered a request with an error right after it (" + trimText(r.Msg, 80) + ")"}
		}
	}
	if (pl.Phase == "" || pl.Phase == PhaseLaunch && pl.By == "milestone") && l != nil && !milestoneBefore(l, e.Src.Line) {
		// A paste of the failure alone: its first line is all that says
		// "launch". The step its message names is the better guess.
		if w, ok := wordsPlace(e); ok {
			return w
		}
		// The record that announced it on the same line ("Initialization
		// failed. warmup error: Traceback ...").
		for _, o := range l.Events {
			if o != e && o.Src == e.Src {
				if w, ok := wordsPlace(o); ok {
					return w
				}
			}
		}
	}
	return pl
}

// milestoneBefore reports a milestone of log l (a launch line, a step's
// begin or end) at or before line: the log shows where the run was.
func milestoneBefore(l *facts.Log, line int) bool {
	for _, e := range l.Events {
		if _, ok := PhaseOf[e.Type]; ok && e.Src.Line <= line {
			return true
		}
	}
	return false
}

// stepWords are the words by which a failure's own message names the step
// it happened in, the most specific first (a capture names the decode it
// runs). They are read in the message's prose only: the paths, kernel and
// function names a message quotes (batch_prefill_with_kv_cache,
// PagedKVCacheWrapper, .../sampling.cuda.o) name code, not the step that
// ran it. They place a failure only when nothing else in the log does: the
// weakest placement.
var stepWords = []struct {
	phase Phase
	re    *regexp.Regexp
}{
	{PhaseCUDAGraphCapture, regexp.MustCompile(`(?i)\b(cuda ?graphs?|cudagraphs?|graph capture|capturing)\b`)},
	{PhaseTorchCompile, regexp.MustCompile(`(?i)(torch\.compile|\bdynamo\b|\binductor\b)`)},
	{PhaseKVCache, regexp.MustCompile(`(?i)\b(kv ?cache|cache blocks|memory pool)\b`)},
	{PhaseWeightsLoading, regexp.MustCompile(`(?i)\b(load(ing)? (the )?(weights?|model|checkpoint|state dict)|checkpoints?|safetensors|shards?)\b`)},
	{PhaseDistributedInit, regexp.MustCompile(`(?i)\b(init process group|process group|rendezvous|tcpstore|master.addr|master.port|nccl|gloo|world size)\b`)},
	{PhaseWarmup, regexp.MustCompile(`(?i)\bwarm.?up\b`)},
	{PhaseServing, regexp.MustCompile(`(?i)\b(requests?|prompts?|completions?|sampling|logits)\b`)},
}

// wordsPlace places a failure by the step its message names. A compiler's
// output (a failed build) names files, not steps.
func wordsPlace(e *facts.LogEvent) (Placement, bool) {
	if e.Type == facts.EventJITFailed {
		return Placement{}, false
	}
	text := e.Msg
	if tb := e.Traceback; tb != nil {
		text = tb.ExcMsg + " " + text
	}
	text = prose(text)
	for _, w := range stepWords {
		if m := w.re.FindString(text); m != "" {
			return Placement{Phase: w.phase, By: "words", Src: e.Src,
				Why: fmt.Sprintf("its message names the step (%q), and nothing in the log says where the run was", m)}, true
		}
	}
	return Placement{}, false
}

// prose keeps the words of a message that are words: not paths, qualified
// or snake_case names, CamelCase identifiers or key=value pairs.
func prose(s string) string {
	var b strings.Builder
	for _, w := range strings.Fields(s) {
		if strings.ContainsAny(w, "/\\_=") || strings.Contains(w, "::") || camel(w) {
			continue
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	return b.String()
}

// camel reports an identifier with a capital after a lower-case letter
// (PagedKVCache, FlashInfer).
func camel(w string) bool {
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			return true
		}
	}
	return false
}

func (idx *Index) placeFailure(l *facts.Log, e *facts.LogEvent) Placement {
	var cut Placement
	if tb := e.Traceback; tb != nil {
		if ph, f, ok := idx.Frames.TracebackPhase(tb); ok {
			pl := Placement{Phase: ph, By: "frames", Src: e.Src, Why: fmt.Sprintf("raised in %s (%s:%d)", f.Func, path.Base(f.File), f.Line)}
			if d, ok := e.Data.(*facts.TracebackInfo); !ok || !d.Incomplete {
				return pl
			}
			// The paste lost the inner frames: the outer ones say only
			// that it failed in this step or a later one.
			pl.atLeast = true
			cut = pl
		}
		if m := methodRe.FindStringSubmatch(tb.ExcMsg); m != nil {
			if ph, ok := idx.methodPhase(l, m[1]); ok {
				return Placement{Phase: ph, By: "message", Src: e.Src, Why: "raised while running " + m[1]}
			}
		}
	}
	if m := methodRe.FindStringSubmatch(e.Msg); m != nil {
		if ph, ok := idx.methodPhase(l, m[1]); ok {
			return Placement{Phase: ph, By: "message", Src: e.Src, Why: "raised while running " + m[1]}
		}
	}
	if pl, ok := ncclPlace(e); ok {
		return pl
	}
	if d, ok := e.Data.(*facts.Failure); ok && e.Type == facts.EventEngineInitFailed && d.What == "model-load" {
		return Placement{Phase: PhaseWeightsLoading, By: "message", Src: e.Src,
			Why: "the server failed to load the model (its weights or engine and the buffers it needs)"}
	}
	if l != nil && BindFailure(idx, e) && idx.State.Ready != nil && idx.State.Ready.Src.File == e.Src.File && idx.State.Ready.Src.Line < e.Src.Line {
		// uvicorn's "Application startup complete" comes before it binds
		// its port: a bind failure after it is the API server's start.
		return Placement{Phase: PhaseWarmup, By: "message", Src: e.Src, Why: "the API server could not bind its port after its app started"}
	}
	var mile Placement
	if l != nil {
		if ph := idx.PhaseAt(l, e.Proc, e.Src.Line); ph != "" {
			mile = Placement{Phase: ph, By: "milestone", Src: e.Src, Why: "the last phase logged before it"}
		}
	}
	if cut.Phase != "" && !idx.Later(mile.Phase, cut.Phase) {
		mile = cut
	}
	if sig, ok := idx.sigPhase(e); ok && !idx.Later(mile.Phase, sig.Phase) {
		return sig
	}
	if l != nil && (mile.Phase == "" || mile.Phase == PhaseLaunch) {
		if pl, ok := engineDeadAfter(idx, e); ok {
			return pl
		}
	}
	return mile
}

// peerPlace is where the other failures of the same log place themselves
// by what they carry (their frames, what NCCL says), the latest of them:
// another rank's traceback may have kept the frames this one lost (a
// paste cut mid-stack, interleaved workers), and NCCL's error trace of one
// rank says where the cascade began.
func (idx *Index) peerPlace(e *facts.LogEvent) (Placement, bool) {
	var best Placement
	for _, o := range idx.State.Failures {
		if o == e || o.Src.File != e.Src.File {
			continue
		}
		var pl Placement
		if o.Traceback != nil {
			if ph, f, ok := idx.Frames.TracebackPhase(o.Traceback); ok {
				pl = Placement{Phase: ph, By: "peer-frames", Src: o.Src,
					Why: fmt.Sprintf("%s raised in %s (%s:%d) in the same failure", o.Proc.Key(), f.Func, path.Base(f.File), f.Line)}
			}
		}
		if np, ok := ncclPlace(o); ok && (pl.Phase == "" || idx.Later(np.Phase, pl.Phase)) {
			np.By = "peer-message"
			np.Why = o.Proc.Key() + ": " + np.Why
			pl = np
		}
		if pl.Phase != "" && (best.Phase == "" || idx.Later(pl.Phase, best.Phase)) {
			best = pl
		}
	}
	// A line of the same log the catalog knows the phase of (NCCL failing
	// to create its shared memory segment happens while communicators are
	// built), where the failure's own evidence placed nothing.
	for _, m := range idx.SigMatches {
		if m.Sig.Phase == "" || m.AfterShutdown || m.Src.File != e.Src.File || m.Event == e {
			continue
		}
		if best.Phase == "" || idx.Later(m.Sig.Phase, best.Phase) {
			best = Placement{Phase: m.Sig.Phase, By: "peer-signature", Src: m.Src,
				Why: fmt.Sprintf("the error %q of the same failure (%s) happens in %s", m.Sig.ID, m.Src, m.Sig.Phase)}
		}
	}
	return best, best.Phase != ""
}

// engineDeadAfter places a failure that vLLM followed by declaring its
// engine dead. vLLM does that only once the engine runs: EngineCoreProc
// logs "EngineCore encountered a fatal error" (where construction failing
// logs "EngineCore failed to start"), the client raises EngineDeadError
// after the core says so, and its liveness monitor ("Engine core proc ...
// died unexpectedly") starts after every engine reported ready
// (vllm/v1/engine/core.py run_engine_core, core_client.py MPClient).
func engineDeadAfter(idx *Index, e *facts.LogEvent) (Placement, bool) {
	for _, o := range idx.State.Failures {
		if o.Type == facts.EventEngineDead && o.Src.File == e.Src.File && o.Src.Line >= e.Src.Line {
			return Placement{Phase: PhaseServing, By: "message", Src: o.Src,
				Why: "vLLM declared its engine dead, which it does only after the engine started"}, true
		}
	}
	return Placement{}, false
}

// restLines is how many unprefixed lines after a record may be the rest of
// its message (TensorRT-LLM's executor error names the component on the
// third line).
const restLines = 8

// RestOf reports a line nothing recognized right after e: the rest of its
// message, as far as anyone can tell.
func RestOf(m SigMatch, e *facts.LogEvent) bool {
	return m.Event != nil && m.Event.Type == facts.EventLine && m.Src.File == e.Src.File &&
		m.Src.Line > e.Src.Line && m.Src.Line <= e.Src.Line+restLines
}

// sigPhase is the phase a signature that matched the event, or the rest of
// its message, implies.
func (idx *Index) sigPhase(e *facts.LogEvent) (Placement, bool) {
	for _, m := range idx.SigMatches {
		if (m.Event == e || RestOf(m, e)) && m.Sig.Phase != "" {
			return Placement{Phase: m.Sig.Phase, By: "signature", Src: m.Src,
				Why: fmt.Sprintf("the error %q happens in %s", m.Sig.ID, m.Sig.Phase)}, true
		}
	}
	return Placement{}, false
}

// ncclSetupFiles are the NCCL sources of communicator set-up: an error
// trace through them happened while the communicator was being built
// (ncclCommInitRank and what it calls), not in a collective.
var ncclSetupFiles = []string{"init.cc", "bootstrap.cc", "transport", "graph/", "proxy.cc", "channel.cc", "net.cc", "nvls.cc"}

// seqOneRe finds the first collective of a process group in a c10d
// watchdog line.
var seqOneRe = regexp.MustCompile(`WorkNCCL\(SeqNum=1[,)]`)

// ncclPlace places what NCCL and c10d say themselves: an error trace
// through NCCL's set-up code, or a timeout of a group's first collective
// (engines run one all-reduce right after building a group), is
// distributed init.
func ncclPlace(e *facts.LogEvent) (Placement, bool) {
	if e.Type == facts.EventNCCLError {
		chain := NCCLChain(e)
		for _, f := range ncclSetupFiles {
			if strings.Contains(chain, f) {
				return Placement{Phase: PhaseDistributedInit, By: "message", Src: e.Src,
					Why: "NCCL's error trace passes through its communicator set-up (" + chain + ")"}, true
			}
		}
	}
	if (e.Type == facts.EventCollectiveTimout || e.Traceback != nil) && seqOneRe.MatchString(e.Msg) {
		return Placement{Phase: PhaseDistributedInit, By: "message", Src: e.Src,
			Why: "the collective that timed out is the group's first (SeqNum=1), run as the group is set up"}, true
	}
	return Placement{}, false
}

// failedRequestAfter finds an access-log line of a request answered with a
// server error (5xx) within a few lines after e.
func failedRequestAfter(l *facts.Log, e *facts.LogEvent) (*facts.LogEvent, bool) {
	end := e.Src.Line + restLines
	if e.EndLine > e.Src.Line {
		end = e.EndLine + restLines
	}
	for _, r := range l.Events {
		if r.Type != facts.EventRequest || r.Src.Line <= e.Src.Line || r.Src.Line > end {
			continue
		}
		if d, ok := r.Data.(*facts.HTTP); ok {
			if st, ok := d.Status.Get(); ok && st >= 500 {
				return r, true
			}
		}
	}
	return nil, false
}

// methodPhase is the phase an engine method named in a message runs in,
// looked up in the log's engine, or in each engine when the log does not
// say which it is (a pasted line).
func (idx *Index) methodPhase(l *facts.Log, method string) (Phase, bool) {
	engines := []facts.Engine{facts.EngineVLLM, facts.EngineSGLang}
	if l != nil && l.Engine != facts.EngineUnknown {
		engines = []facts.Engine{l.Engine}
	}
	for _, en := range engines {
		if ph, ok := idx.Frames.MethodPhase(method, en); ok {
			return ph, true
		}
	}
	return "", false
}

// NCCLChain is the files an NCCL error trace ran through, "" for another
// line.
func NCCLChain(e *facts.LogEvent) string {
	if d, ok := e.Data.(*facts.NCCL); ok {
		return d.Chain
	}
	return ""
}

func trimText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
