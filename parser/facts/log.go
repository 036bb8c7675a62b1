package facts

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// Engine names the inference engine that wrote a log.
type Engine string

// Engines.
const (
	EngineSGLang  Engine = "sglang"
	EngineVLLM    Engine = "vllm"
	EngineUnknown Engine = ""
)

// Level is a log level. SGLang prints none, so its parser infers one from the
// message ("Traceback", "Error", "Exception" ...).
type Level string

// Levels, lowest first.
const (
	LevelNone     Level = ""
	LevelDebug    Level = "DEBUG"
	LevelInfo     Level = "INFO"
	LevelWarning  Level = "WARNING"
	LevelError    Level = "ERROR"
	LevelCritical Level = "CRITICAL"
)

// Severe reports whether the level is ERROR or worse.
func (l Level) Severe() bool { return l == LevelError || l == LevelCritical }

// Rank is a process's place in the parallel layout. A field is -1 when the
// log or title does not carry it.
type Rank struct {
	DP, PP, CP, MoeDP, TP, EP int
}

// NoRank is a rank with every field absent.
var NoRank = Rank{-1, -1, -1, -1, -1, -1}

// IsZero reports whether no field is set.
func (r Rank) IsZero() bool { return r == NoRank || r == Rank{} }

// String renders the rank as SGLang tags it: "DP0 TP3 EP3".
func (r Rank) String() string {
	var b []string
	add := func(name string, v int) {
		if v >= 0 {
			b = append(b, fmt.Sprintf("%s%d", name, v))
		}
	}
	add("DP", r.DP)
	add("PP", r.PP)
	add("ATTN_CP", r.CP)
	add("MOE_DP", r.MoeDP)
	add("TP", r.TP)
	add("EP", r.EP)
	return strings.Join(b, " ")
}

// Proc identifies the process that wrote a log line.
type Proc struct {
	// Name is the process's display name: the SGLang rank tag ("TP0",
	// "DP1 TP3"), the vLLM process tag without pid ("EngineCore_DP0",
	// "Worker_TP3", "APIServer"), or "" for untagged lines (the main process
	// of SGLang, every line of an untagged vLLM log).
	Name string `json:"name"`
	PID  int    `json:"pid,omitempty"`
	Rank Rank   `json:"-"`
	// Host is set by wrappers that say where the process ran (Ray ip=, NCCL host).
	Host string `json:"host,omitempty"`
}

// Label names the log among the others of a bundle: its node when one is
// known, else its file name.
func (l *Log) Label() string {
	if l.Host != "" {
		return l.Host
	}
	return path.Base(l.Path)
}

// Key is the stable identity of the process within one log.
func (p Proc) Key() string {
	if p.Name == "" {
		return "main"
	}
	return p.Name
}

// EventType is the recognized meaning of a log line. The generic EventLine
// covers every line that matched nothing, so rules can count lines and
// measure silences.
type EventType string

// Event types. The timeline maps them to phases; PayloadOf says which typed
// fields each carries (the "Fields:" notes below name them).
const (
	EventLine EventType = "line" // unrecognized, kept for counting and silences

	// configuration and environment
	EventServerArgs       EventType = "server-args"       // Fields: every ServerArgs key
	EventNonDefaultArgs   EventType = "non-default-args"  // vLLM: Fields: every arg
	EventVersion          EventType = "version"           // Fields: engine, version
	EventAttentionBackend EventType = "attention-backend" // Fields: backend
	EventConfigWarning    EventType = "config-warning"

	// startup milestones
	EventEngineInit       EventType = "engine-init"
	EventDistInitBegin    EventType = "dist-init-begin"
	EventDistInitEnd      EventType = "dist-init-end" // Fields: elapsed_s, mem_usage_gb
	EventNCCLVersion      EventType = "nccl-version"  // Fields: version
	EventLoadBegin        EventType = "load-begin"    // Fields: avail_mem_gb
	EventWeightsFormat    EventType = "weights-format"
	EventLoadProgress     EventType = "load-progress" // a weight-loading bar's last state
	EventLoadEnd          EventType = "load-end"      // Fields: elapsed_s, avail_mem_gb, mem_usage_gb, type, quant
	EventMemoryProfile    EventType = "memory-profile"
	EventKVCacheAlloc     EventType = "kv-cache-alloc" // Fields: tokens, k_size_gb, v_size_gb, kv_size_gb
	EventKVCacheSize      EventType = "kv-cache-size"  // vLLM GPU KV cache size: Fields: tokens
	EventAvailableKV      EventType = "available-kv"   // vLLM Available KV cache memory: Fields: gib
	EventMaxConcurrency   EventType = "max-concurrency"
	EventMemPoolEnd       EventType = "mem-pool-end"
	EventMaxTotalTokens   EventType = "max-total-tokens"
	EventTorchCompile     EventType = "torch-compile" // Fields: elapsed_s where printed
	EventTorchCompileEnd  EventType = "torch-compile-end"
	EventJITBegin         EventType = "jit-begin" // flashinfer / DeepGEMM / torch extension: Fields: what
	EventJITEnd           EventType = "jit-end"
	EventJITFailed        EventType = "jit-failed"
	EventGraphBegin       EventType = "graph-capture-begin" // Fields: graph (cuda graph, piecewise, draft), avail_mem_gb
	EventGraphProgress    EventType = "graph-capture-progress"
	EventGraphEnd         EventType = "graph-capture-end" // Fields: elapsed_s, mem_usage_gb
	EventGraphFailed      EventType = "graph-capture-failed"
	EventInitEngineDone   EventType = "init-engine-done" // vLLM init engine (profile, create kv cache, warmup) took
	EventWarmup           EventType = "warmup"
	EventHTTPStart        EventType = "http-start" // uvicorn started / API server starting
	EventReady            EventType = "ready"      // fired up / Application startup complete
	EventRequest          EventType = "request"    // access log line: Fields: method, path, status
	EventStatDecode       EventType = "stat-decode"
	EventStatPrefill      EventType = "stat-prefill"
	EventStatThroughput   EventType = "stat-throughput" // vLLM Avg prompt/generation throughput
	EventStatSpecDecode   EventType = "stat-spec-decode"
	EventRetract          EventType = "retract"
	EventPreemption       EventType = "preemption"
	EventShutdown         EventType = "shutdown" // SIGTERM, graceful exit, shutting down
	EventNCCLInfo         EventType = "nccl-info"
	EventNCCLWarn         EventType = "nccl-warn"
	EventNCCLError        EventType = "nccl-error" // an NCCL call returned an error: "init.cc:840 -> 3": Fields: code, file, result
	EventGloo             EventType = "gloo"
	EventPythonWarning    EventType = "python-warning"
	EventTorchLog         EventType = "torch-log" // glog-style W0911 ... lines
	EventCollectiveTimout EventType = "collective-timeout"
	EventWatchdogTimeout  EventType = "watchdog-timeout" // SGLang scheduler watchdog
	EventSHMWait          EventType = "shm-broadcast-wait"
	EventRPCTimeout       EventType = "rpc-timeout"

	// Added with the server log parser (parser/serverlog).
	EventRoute           EventType = "route"            // vLLM "Route: /health, Methods: GET": Fields: path, methods
	EventCustomAllReduce EventType = "custom-allreduce" // custom all-reduce enabled/disabled: Fields: enabled, reason
	EventP2P             EventType = "p2p"              // GPU P2P access checks and caches: Fields: detail, cache
	EventJITProgress     EventType = "jit-progress"     // one JIT step without a matching end (DeepGEMM shape, ninja [n/m], Triton kernel at inference)
	EventKVInsufficient  EventType = "kv-insufficient"  // not enough memory for the KV cache: Fields: needed_gib, available_gib, max_seq_len
	EventPlacementWait   EventType = "placement-wait"   // Ray placement group not ready: Fields: wait_s
	EventWeightsDownload EventType = "weights-download" // vLLM "Time spent downloading weights": Fields: elapsed_s, model
	EventRankAssigned    EventType = "rank-assigned"    // vLLM "rank 0 in world size 2 is assigned as ... TP rank 0": Fields: rank, world_size, dp, pp, tp, ep
	EventCmdline         EventType = "cmdline"          // a launch command pasted into the log: Fields: every flag
	EventDeprecation     EventType = "deprecation"      // a flag or entrypoint reported as deprecated
	EventSignal          EventType = "signal"           // a process received a signal (SIGTERM received, *** SIGTERM received at time=...)
	EventBenchmark       EventType = "benchmark"        // a benchmark's summary result: Fields: metric, value, unit, label (the paste's "Before"/"After")

	// failures
	EventTraceback        EventType = "traceback" // Traceback holds the details
	EventError            EventType = "error"     // an error-level line of no more specific type
	EventOOM              EventType = "oom"       // CUDA out of memory: Fields: tried_gib, total_gib, free_gib, in_use_gib
	EventSchedulerCrash   EventType = "scheduler-exception"
	EventChildFailed      EventType = "child-failed"
	EventEngineInitFailed EventType = "engine-init-failed"
	EventWorkerDied       EventType = "worker-died"
	EventEngineDead       EventType = "engine-dead"
	EventSigquit          EventType = "sigquit"
	EventKilled           EventType = "killed" // exit by signal printed by a wrapper
)

// LogEvent is one record of a server log: a line, or several lines grouped
// (a traceback, a multi-line record).
type LogEvent struct {
	Src Source `json:"src"`
	// EndLine is the last line of a grouped record (0 for single lines).
	EndLine int `json:"end_line,omitempty"`
	// Time is the record's stamp; zero when the line has none. Inherited
	// reports that the time was taken from the closest earlier stamped line.
	Time      time.Time `json:"time,omitzero"`
	Inherited bool      `json:"inherited,omitempty"`
	Proc      Proc      `json:"proc"`
	Level     Level     `json:"level,omitempty"`
	Type      EventType `json:"type"`
	// Msg is the message without prefixes, cut to MaxMsg bytes.
	Msg string `json:"msg"`
	// Data is what the line says beyond its type, of the type PayloadOf
	// gives for it; nil when it says nothing more.
	Data Payload `json:"fields,omitempty"`
	// Repeated counts the identical lines folded into this one (the same
	// line from every rank).
	Repeated int `json:"repeated,omitempty"`
	// Traceback is set for EventTraceback.
	Traceback *Traceback `json:"traceback,omitempty"`
}

// MaxMsg bounds the message kept per event; the line stays in the file.
const MaxMsg = 4096

// Num returns a field by name if it is a number. By-name access is for
// packs and tests; rules read Data's typed fields.
func (e *LogEvent) Num(name string) (float64, bool) {
	v, ok := Fields(e.Data)[name].(float64)
	return v, ok
}

// Str returns a field by name as text ("" when absent).
func (e *LogEvent) Str(name string) string { return ValueText(Fields(e.Data)[name]) }

// EngineVersion is the engine version a version line or an engine-init
// line printed ("vLLM API server version 0.8.5", "Initializing an LLM
// engine (v0.6.3)"), "" for any other line.
func (e *LogEvent) EngineVersion() string {
	switch d := e.Data.(type) {
	case *Version:
		return d.Version
	case *EngineConfig:
		return d.Version
	}
	return ""
}

// Bool returns a field by name if it is a flag.
func (e *LogEvent) Bool(name string) (bool, bool) {
	v, ok := Fields(e.Data)[name].(bool)
	return v, ok
}

// Traceback is a Python traceback grouped into one event.
type Traceback struct {
	// ExcType is the exception class as printed ("torch.OutOfMemoryError"),
	// and ExcLine the line that printed it (0 when none did).
	ExcType string `json:"exc_type"`
	ExcMsg  string `json:"exc_msg"`
	ExcLine int    `json:"exc_line,omitempty"`
	// Frames are the frames, outermost first and innermost last: all of
	// them up to MaxFrames, else the first MaxOuterFrames and the last
	// MaxFrames-MaxOuterFrames, with Elided counting those left out between.
	// The outer ones say what the engine was doing (loading, capturing),
	// the inner ones which library raised.
	Frames []Frame `json:"frames,omitempty"`
	Elided int     `json:"elided,omitempty"`
	// Chained counts earlier tracebacks of the same chain ("During handling
	// of the above exception ...", "The above exception was the direct cause").
	Chained int `json:"chained,omitempty"`
	// After holds the unprefixed lines that followed the exception line of
	// a traceback whose lines carry no prefix, up to a blank line and at
	// most MaxAfter of them. Python prints a multi-line message verbatim
	// there (Triton's PTXASError puts ptxas's own error on its third line),
	// but nothing tells it from other output that followed, so these lines
	// are kept beside the message, not in it, and are still read as lines
	// of their own.
	After []TracebackLine `json:"after,omitempty"`
}

// TracebackLine is one line of Traceback.After.
type TracebackLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// MaxAfter bounds Traceback.After.
const MaxAfter = 8

// MaxFrames bounds the frames kept per traceback, MaxOuterFrames the
// outermost among them.
const (
	MaxFrames      = 24
	MaxOuterFrames = 8
)

// Frame is one `File "...", line N, in func` entry, with the source line
// Python printed under it (the call that led deeper), when there was one.
type Frame struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Func string `json:"func"`
	Code string `json:"code,omitempty"`
}

// MaxCode bounds the source line kept per frame.
const MaxCode = 200

// ProgressBar is the last state of one tqdm bar.
type ProgressBar struct {
	Src  Source    `json:"src"`
	Time time.Time `json:"time,omitzero"`
	Proc Proc      `json:"proc"`
	// Desc is the bar's description with per-step detail removed
	// ("Capturing batches", "Loading safetensors checkpoint shards").
	Desc string `json:"desc"`
	// Detail is the last per-step detail ("bs=1 avail_mem=23.56 GB").
	Detail  string  `json:"detail,omitempty"`
	N       int     `json:"n"`
	Total   int     `json:"total"`
	Elapsed float64 `json:"elapsed_s"`
	// Updates counts the states seen.
	Updates int `json:"updates"`
	// FirstSrc is where the bar first appeared.
	FirstSrc Source `json:"first_src"`
	// Start estimates when the bar began: the closest stamped line before
	// its first state, less the elapsed time that state showed. Zero when
	// no stamp preceded it. Time moves with every state, so a bar whose
	// states are interleaved with other stamped lines (a JIT logger on the
	// same stderr) is timed from Start, not from Time.
	Start time.Time `json:"start,omitzero"`
}

// Done reports whether the bar reached its total.
func (b *ProgressBar) Done() bool { return b.Total > 0 && b.N >= b.Total }

// ProcLog summarizes what one process wrote to one log.
type ProcLog struct {
	Proc  Proc `json:"proc"`
	Lines int  `json:"lines"`
	// First and Last are the first and last stamped lines of the process.
	FirstTime time.Time `json:"first_time,omitzero"`
	LastTime  time.Time `json:"last_time,omitzero"`
	FirstSrc  Source    `json:"first_src"`
	LastSrc   Source    `json:"last_src"`
	// LastMsg is the last message it wrote, cut to MaxMsg.
	LastMsg string `json:"last_msg"`
}

// Log is everything parsed from one server log.
type Log struct {
	Path    string `json:"path"`
	Engine  Engine `json:"engine"`
	Version string `json:"version,omitempty"`
	// Host is the node the log was written on, when a run spans several
	// (set by parser/runs from NCCL's and Ray's host tags or the folder).
	Host  string `json:"host,omitempty"`
	Lines int    `json:"lines"`
	// FirstTime and LastTime bound the stamped lines.
	FirstTime time.Time `json:"first_time,omitzero"`
	LastTime  time.Time `json:"last_time,omitzero"`
	// LastSrc is the last non-empty line of the file.
	LastSrc Source `json:"last_src"`
	// Events are the recognized records (every type but EventLine and the
	// stat lines, which go to Series), at most MaxEvents; DroppedEvents
	// counts the rest.
	Events        []*LogEvent `json:"events"`
	DroppedEvents int         `json:"dropped_events,omitempty"`
	// Unmatched are lines nothing recognized (EventLine; EventNCCLInfo for
	// NCCL's INFO lines that say nothing of note), the first
	// MaxUnmatched/4 and the last 3*MaxUnmatched/4 of them, so that an error
	// printed in a format nobody anticipated still reaches the signature
	// catalog and user packs; DroppedUnmatched counts the rest.
	Unmatched        []*LogEvent    `json:"unmatched,omitempty"`
	DroppedUnmatched int            `json:"dropped_unmatched,omitempty"`
	Procs            []*ProcLog     `json:"procs"`
	Bars             []*ProgressBar `json:"bars,omitempty"`
	Series           []*Series      `json:"series,omitempty"`
	// Gaps are where the log is not continuous: a paste's excerpts joined
	// ("# --- fragment 2 ---", "...", "[...]") or a clock that jumps back.
	// No interval is measured across one.
	Gaps []Gap `json:"gaps,omitempty"`
	// Watched are the lines a LineWatch wanted (any line of the log, stat
	// lines and tracebacks included, that may match a user pack's
	// signature), as EventLine records with their level and message;
	// DroppedWatched counts those past MaxWatched.
	Watched        []*LogEvent `json:"watched,omitempty"`
	DroppedWatched int         `json:"dropped_watched,omitempty"`
}

// Gap is a break in a log: lines after Line are not the continuation of
// those before it.
type Gap struct {
	Line int `json:"line"`
	// Before is the last stamp before the gap (zero when none).
	Before time.Time `json:"before,omitzero"`
	Why    string    `json:"why"`
}

// MaxGaps bounds the gaps kept per log.
const MaxGaps = 1024

// MaxUnmatched bounds the unrecognized lines kept per log, and
// MaxUnmatchedText the text kept of each.
const (
	MaxUnmatched     = 2000
	MaxUnmatchedText = 1024
)

// MaxEvents bounds the recognized events kept per log: the first half and the
// last half are kept so that startup and the end of the log both survive.
const MaxEvents = 20000

// ProcLog returns the summary of the named process, or nil.
func (l *Log) ProcLog(key string) *ProcLog {
	for _, p := range l.Procs {
		if p.Proc.Key() == key {
			return p
		}
	}
	return nil
}

// EventsOf returns the events of the given types, in log order.
func (l *Log) EventsOf(types ...EventType) []*LogEvent {
	var out []*LogEvent
	for _, e := range l.Events {
		for _, t := range types {
			if e.Type == t {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// Setting is one engine setting with where it was read: a ServerArgs dump,
// vLLM's non-default args, or the launch command line. Keys are snake_case
// engine argument names (attention_backend, tp_size, ...).
type Setting struct {
	Src   Source `json:"src"`
	Key   string `json:"key"`
	Value string `json:"value"`
	// From is "server-args", "non-default-args", "cmdline" or "check-env".
	// The vLLM `args: Namespace(...)` dump of older versions (every argument,
	// not only the changed ones) is recorded with From "non-default-args" too.
	From string `json:"from"`
}
