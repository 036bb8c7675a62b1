package serverlog

import (
	"bytes"
	"strconv"
	"strings"
	"unsafe"

	"github.com/coroner-dev/coroner/parser/facts"
)

// has and contains take the pattern as a string so that the many literals
// of this file cost no conversion; neither allocates.
func has(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

func contains(b []byte, s string) bool { return strings.Contains(bstr(b), s) }

// bstr views b as a string without copying, for searching only: the string
// must not outlive the call that receives it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// cut returns what follows prefix, if b starts with it.
func cut(b []byte, prefix string) ([]byte, bool) {
	if has(b, prefix) {
		return b[len(prefix):], true
	}
	return nil, false
}

// trimDot removes a final "." and spaces.
func trimDot(b []byte) []byte {
	b = bytes.TrimSpace(b)
	for len(b) > 0 && (b[len(b)-1] == '.' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

// inferLevel gives SGLang's unlevelled lines a level from their text: the
// cheap part, by prefix. Words such as "Failed" make an event's level
// WARNING when it is emitted (see warnWords); they are not looked for on
// every line.
func inferLevel(l *line, body []byte) facts.Level {
	if l.level != facts.LevelNone {
		return l.level
	}
	if len(body) == 0 {
		return facts.LevelNone
	}
	if has(body, "Traceback") || looksLikeException(body) || (l.kind == hdrNone && toolError(body)) {
		// toolError only where no logger wrote the line: a C or C++
		// program's own stderr.
		return facts.LevelError
	}
	if has(body, "Warning") || has(body, "WARNING") {
		return facts.LevelWarning
	}
	switch l.kind {
	case hdrSGLang, hdrSGLangOld, hdrGPU:
		// SGLang prints its own lines at INFO unless they say otherwise
		// above; the search below is for lines without a header, and
		// SGLang's stat lines are most lines of a long log.
		return facts.LevelInfo
	}
	if bytes.Contains(body[:min(len(body), 256)], []byte("[ERROR]")) {
		// A library's own tag inside an unlevelled line ("... with error:
		// [TensorRT-LLM][ERROR] CUDA runtime error ...").
		return facts.LevelError
	}
	return facts.LevelNone
}

// warnWords reports the words that make an unlevelled line a warning. Real
// SGLang lines such as "Failed to import amdsmi" are benign, so they are not
// errors.
func warnWords(b []byte) bool {
	return contains(b, "ailed") || contains(b, "rror") || contains(b, "deprecated")
}

// looksLikeException reports a line such as "RuntimeError: ..." or
// "torch.OutOfMemoryError: ...".
func looksLikeException(b []byte) bool {
	k := bytes.IndexByte(b, ':')
	if k <= 0 || k > 128 {
		return false
	}
	head := b[:k]
	if bytes.IndexByte(head, ' ') >= 0 {
		return false
	}
	return bytes.HasSuffix(head, []byte("Error")) || bytes.HasSuffix(head, []byte("Exception")) ||
		bytes.HasSuffix(head, []byte("Interrupt")) || bytes.HasSuffix(head, []byte("Exit")) || qualifiedClass(head)
}

// toolError reports the way C and C++ programs and libraries put an error
// on stderr without a logger: "error: ...", "prog: error: ...", "rocblaslt
// error: ...", "file.cu(12): error: ...", "fatal error: ...". The word must
// come at the start, after at most three words of prefix, so prose that
// mentions an error ("no error: ...", "the error: ...") in a sentence is
// not read as one.
func toolError(b []byte) bool {
	b = trimIndent(b)
	k := bytes.Index(b[:min(len(b), 96)], []byte("rror: "))
	if k < 1 || (b[k-1] != 'e' && b[k-1] != 'E') {
		return false
	}
	head := b[:k-1]
	if len(head) > 0 && head[len(head)-1] != ' ' && head[len(head)-1] != ':' {
		return false // "SomeError: ..." is an exception, read elsewhere
	}
	if bytes.Count(head, []byte(" ")) > 3 {
		return false
	}
	switch w := bytes.ToLower(bytes.TrimRight(head, ": ")); {
	case len(w) == 0:
		return true
	case bytes.HasSuffix(w, []byte("no")), bytes.HasSuffix(w, []byte("the")), bytes.HasSuffix(w, []byte("an")), bytes.HasSuffix(w, []byte("without")):
		return false
	}
	return true
}

// qualifiedClass reports an exception's qualified name as Python prints it
// for a class whose name ends in neither Error nor Exception
// ("huggingface_hub.utils._http.OfflineModeIsEnabled",
// "torch._dynamo.exc.FailOnRecompileLimitHit"): a lower-case module path,
// then a CamelCase class name.
func qualifiedClass(head []byte) bool {
	dot := bytes.LastIndexByte(head, '.')
	if dot <= 0 || dot+4 > len(head) || head[0] < 'a' || head[0] > 'z' {
		return false
	}
	name := head[dot+1:]
	if name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	lower := false
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	for _, c := range head[:dot] {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return lower
}

// recognize matches a message against the known lines and records what it
// means. It returns the event it added, if any, and whether the line was
// taken (a stat line makes no event but is read).
func (p *parser) recognize(l *line, ps *procState, bare bool) (*facts.LogEvent, bool) {
	ev, done := p.recognized(l, ps, bare)
	return ev, done || ev != nil
}

func (p *parser) recognized(l *line, ps *procState, bare bool) (*facts.LogEvent, bool) {
	b := l.body
	lvl := inferLevel(l, b)
	switch l.kind {
	case hdrNCCL:
		return p.nccl(l, ps, lvl), false
	case hdrGloo:
		return p.gloo(l, ps), false
	case hdrTracing:
		if ev := p.tgi(ps, lvl, b); ev != nil {
			return ev, false
		}
	case hdrTRT:
		if ev := p.trt(ps, lvl, b); ev != nil {
			return ev, false
		}
	case hdrC10d, hdrGlog:
		if ev := p.torchLine(l, ps, lvl); ev != nil {
			return ev, false
		}
	case hdrPyLog:
		if k := bytes.Index(b, []byte("flashinfer.jit: ")); k >= 0 {
			return p.flashinfer(ps, lvl, b, b[k+len("flashinfer.jit: "):]), false
		}
	}
	if l.uvicorn {
		if ev, taken := p.uvicorn(l, ps, lvl); ev != nil || taken {
			return ev, taken
		}
	}
	if len(b) > 0 && b[0] == ' ' && l.kind == hdrVLLM {
		// The 2026 ASCII-art banner: "  ▄▄ ▄█ █ ... █  version 0.19.2rc1".
		if k := bytes.Index(b, []byte("  version ")); k > 0 && bytes.Contains(b[:k], []byte("█")) {
			return p.emit(ps, facts.EventVersion, lvl, b[k+2:], &facts.Version{Engine: "vllm", Version: string(trimDot(b[k+len("  version "):]))}), false
		}
	}
	ev, done := p.table(l, ps, lvl, b, bare)
	if ev != nil || done {
		return ev, done
	}
	if l.level != facts.LevelInfo && l.level != facts.LevelDebug {
		// Signatures that matter wherever they sit in a line; an INFO line
		// of a levelled format does not carry them.
		if ev := p.anywhere(ps, lvl, b); ev != nil {
			return ev, false
		}
	}
	if l.level == facts.LevelNone {
		// A line without a logger's level, which inferLevel may have
		// called an error by its words: the C runtime's and the CUDA
		// check macros' own reports say more than that.
		if ev := p.bareReport(ps, b); ev != nil {
			return ev, false
		}
	}
	if lvl.Severe() && !nativeFrame(b) {
		if startFailed(b) {
			// A component saying that it could not start: the run ends here
			// even when no traceback follows (TensorRT-LLM's executor,
			// TGI's shards, a library's own init).
			what := "component"
			if modelLoadFailed(b) {
				what = "model-load"
			}
			return p.emit(ps, facts.EventEngineInitFailed, facts.LevelError, b, &facts.Failure{What: what}), false
		}
		return p.emit(ps, facts.EventError, lvl, b, nil), false
	}
	if l.level != facts.LevelNone && l.level != facts.LevelInfo && l.level != facts.LevelDebug {
		// (A line without a level was offered to bareReport above.) The C
		// runtime and the check macros print no logger's level: an INFO
		// line is a logger's, and never their report.
		if ev := p.bareReport(ps, b); ev != nil {
			return ev, false
		}
	}
	if memoryKill(b) {
		// Ray's memory monitor, a container runtime, systemd's unit report
		// ("A process of this unit has been killed by the OOM killer."):
		// processes killed for host memory.
		return p.emit(ps, facts.EventKilled, facts.LevelCritical, b, &facts.Failure{Signal: "SIGKILL", What: "memory"}), false
	}
	return nil, false
}

// memoryKill reports a process killed for host memory as Ray's memory
// monitor, a container runtime or systemd's unit report words it. Every
// phrase holds "ill", looked for first: one scan of the line, not five.
func memoryKill(b []byte) bool {
	if !contains(b, "ill") {
		return false
	}
	return contains(b, "killed due to memory pressure") || contains(b, "OOMKilled") || contains(b, "killed due to the node running low on memory") ||
		contains(b, "killed by the OOM killer") || contains(b, "Failed with result 'oom-kill'")
}

// bareReport reads what the C runtime, MPI and the CUDA check macros print
// on their own: an abort, or a CUDA error the library exits or throws on.
func (p *parser) bareReport(ps *procState, b []byte) *facts.LogEvent {
	if aborted(b) {
		return p.emit(ps, facts.EventKilled, facts.LevelCritical, b, &facts.Failure{Signal: "abort"})
	}
	if cudaCheck(b) {
		// vLLM's CUDACHECK "Failed: Cuda error file:line 'msg'",
		// flashinfer's "CUDA Error: msg (code) file: line N".
		ev := p.emit(ps, facts.EventTraceback, facts.LevelError, b, &facts.TracebackInfo{Headless: true, What: "cuda-check"})
		ev.Traceback = &facts.Traceback{ExcType: "CUDA error", ExcMsg: p.text(b), ExcLine: p.lineNo}
		return ev
	}
	return nil
}

// startFailed reports an error line that says something could not start:
// "Failed to initialize executor on rank 1: ...", "Shard 0 failed to
// start", "Worker initialization failed".
func startFailed(b []byte) bool {
	if len(b) > 512 {
		b = b[:512]
	}
	s := bstr(b)
	for _, w := range []string{"Failed to initialize", "Failed to start", "failed to start", "failed to initialize",
		"initialization failed", "Initialization failed", "Failed to create", "failed to launch", "Failed to launch",
		"loading failed", "load failed", "Failed to load"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// modelLoadFailed reports Triton's failure to load a model (its weights,
// for TensorRT-LLM the engine, and the runtime's buffers): "Model 'NAME'
// loading failed with error: ..." or "failed to load 'NAME' version 1: ...".
func modelLoadFailed(b []byte) bool {
	s := bstr(b[:min(len(b), 512)])
	if k := strings.Index(s, "Model '"); k >= 0 && strings.Contains(s[k:], "' loading failed") {
		return true
	}
	return strings.Contains(s, "failed to load '")
}

// cudaCheck reports the line a CUDA error-check macro prints.
func cudaCheck(b []byte) bool {
	return has(b, "Failed: Cuda error ") || has(b, "Failed: CUDA error ") || has(b, "CUDA Error: ") || has(b, "Cuda error: ") ||
		has(b, "CUDA error: ") || has(b, "HIP error: ")
}

// aborted reports a process dying as the C runtime or MPI print it.
func aborted(b []byte) bool {
	return contains(b, "will now abort") || has(b, "Segmentation fault") || has(b, "Fatal Python error") ||
		contains(b, "(core dumped)") || has(b, "Bus error")
}

// trt reads the milestones of TensorRT-LLM's runtime.
func (p *parser) trt(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	switch {
	case contains(b, "tokens in paged KV cache"):
		// "Using 10718 tokens in paged KV cache." (the KV cache allocated)
		f := &facts.KVCache{Engine: "trtllm"}
		if v, ok := numAfter(b, "Using"); ok {
			f.Tokens = facts.N(v)
		}
		return p.emit(ps, facts.EventKVCacheSize, lvl, b, f)
	case has(b, "Loaded engine size"), has(b, "Engine load time"):
		return p.emit(ps, facts.EventLoadEnd, lvl, b, &facts.Milestone{Engine: "trtllm"})
	}
	return nil
}

// tgi reads the milestones of text-generation-inference's launcher and
// router (launcher/src/main.rs, router/src/main.rs).
func (p *parser) tgi(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	const engine = "tgi"
	switch {
	case has(b, "Starting shard"):
		return p.emit(ps, facts.EventLoadBegin, lvl, b, &facts.Milestone{Engine: engine})
	case has(b, "Shard ready in"):
		f := &facts.Milestone{Engine: engine}
		if v, ok := numAfter(b, "Shard ready in"); ok {
			f.ElapsedS = facts.N(v)
		}
		return p.emit(ps, facts.EventLoadEnd, lvl, b, f)
	case has(b, "Starting Webserver"):
		return p.emit(ps, facts.EventHTTPStart, lvl, b, &facts.Server{Engine: engine})
	case has(b, "Warming up model"):
		return p.emit(ps, facts.EventWarmup, lvl, b, &facts.Milestone{Engine: engine})
	case has(b, "Connected"):
		return p.emit(ps, facts.EventReady, lvl, b, &facts.Server{Engine: engine})
	case has(b, "Shutting down shards"):
		return p.emit(ps, facts.EventShutdown, lvl, b, &facts.Server{Engine: engine})
	case has(b, "Shard ") && contains(b, " failed to start"):
		return p.emit(ps, facts.EventChildFailed, facts.LevelError, b, &facts.Failure{Engine: engine})
	}
	return nil
}

// nativeFrame reports a frame of a native stack dump ("PC: @ 0x7a30...",
// "@ 0x549b85 32 PyObject_Vectorcall") that Ray and absl print after a
// signal; the dump's first line carries the meaning.
func nativeFrame(b []byte) bool {
	b = bytes.TrimLeft(b, " ")
	return has(b, "@ ") || has(b, "PC: @")
}

// anywhere looks for the signatures that matter wherever they sit in a
// line: in pytest output, condensed pastes, behind prefixes of tools not
// known here.
func (p *parser) anywhere(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	switch {
	case contains(b, "out of memory"):
		return p.oom(ps, b)
	case contains(b, "Watchdog caught collective operation timeout"):
		return p.collectiveTimeout(ps, lvl, b)
	case contains(b, "Engine core initialization failed"):
		return p.emit(ps, facts.EventEngineInitFailed, facts.LevelError, b, &facts.Failure{What: "engine-core"})
	case contains(b, "The actor is dead because its worker process has died"), contains(b, "The actor died unexpectedly before finishing"),
		contains(b, "A worker died or was killed while executing a task by an unexpected system error"):
		// Ray's report of an actor (an engine worker) whose process died
		// (python/ray/exceptions.py ActorDiedError, the raylet's notice),
		// with the exit type the raylet recorded: SYSTEM_ERROR when the
		// process vanished, NODE_OUT_OF_MEMORY when Ray's memory monitor
		// killed it.
		f := &facts.Failure{What: "ray-actor"}
		if t := wordAfter(b, "Worker exit type: "); len(t) > 0 {
			f.ExitType = string(t)
		}
		return p.emit(ps, facts.EventWorkerDied, facts.LevelError, b, f)
	case contains(b, "atchdog timeout (self.watchdog_timeout="):
		return p.watchdog(ps, b)
	}
	if k := strings.Index(bstr(b), "RPC call to "); k >= 0 && contains(b[k:], "timed out") {
		return p.rpcTimeout(ps, b)
	}
	return nil
}

// table is the big table of milestones and failures, by first letter
// (patterns.go). It returns done for lines it consumed without an event
// (stat lines).
func (p *parser) table(l *line, ps *procState, lvl facts.Level, b []byte, bare bool) (*facts.LogEvent, bool) {
	if len(b) == 0 {
		return nil, false
	}
	switch b[0] {
	case 'S', 'T', 'D':
		// "Scheduler watchdog timeout (...)" and the other components' (the
		// old "Watchdog timeout (...)" is under 'W').
		if sp := bytes.IndexByte(b[:min(len(b), 32)], ' '); sp > 0 && has(b[sp:], " watchdog timeout (") {
			return p.watchdog(ps, b), true
		}
	}
	if ev, done, ok := p.rows(ps, lvl, b); ok {
		return ev, done
	}
	if looksLikeException(b) {
		// An exception line outside a traceback ("RuntimeError: ...").
		return p.exceptionLine(ps, b), false
	}
	if bare && bytes.Contains(b, []byte("hroughput")) {
		if f := benchmarkResult(b); f != nil {
			return p.emit(ps, facts.EventBenchmark, lvl, b, f), false
		}
	}
	if bare || l.tag != nil {
		if sig, ok := shellJobDied(b); ok {
			// bash reporting a child the signal ended, with its command:
			// the command is what died, not a launch.
			// The command may hold a secret: keep only the program part.
			msg := b
			if k := bytes.Index(b, []byte(" --")); k > 0 {
				msg = b[:k]
			}
			return p.emit(ps, facts.EventKilled, facts.LevelCritical, msg, &facts.Failure{Signal: sig, What: "shell-job"}), false
		}
		if ev := p.cmdline(ps, b); ev != nil {
			return ev, false
		}
		if ev := p.ninja(ps, lvl, b); ev != nil {
			return ev, false
		}
		if b[0] != '/' {
			if ev := p.pyWarning(ps, b); ev != nil {
				return ev, false
			}
		}
	}
	if has(b, "terminate called after throwing an instance of") {
		return p.emit(ps, facts.EventError, facts.LevelCritical, b, &facts.Failure{What: "c++-terminate"}), false
	}
	if has(b, "Aborted (core dumped)") {
		return p.emit(ps, facts.EventKilled, facts.LevelCritical, b, &facts.Failure{Signal: "SIGABRT"}), false
	}
	return nil, false
}

// The readers of patterns.go: the lines whose reading is code. Each is
// tried where its pattern sits in its first byte's list.

// attentionDefault reads "Attention backend not explicitly specified. Use
// fa3 backend by default." and "... Falling back to 'X'".
func (p *parser) attentionDefault(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	if w := wordAfter(b, " Use "); w != nil {
		return p.emit(ps, facts.EventAttentionBackend, lvl, b, &facts.AttentionBackend{Backend: string(w), Default: true}), false, true
	}
	if k := bytes.Index(b, []byte("Falling back to '")); k >= 0 {
		rest := b[k+len("Falling back to '"):]
		if e := bytes.IndexByte(rest, '\''); e > 0 {
			return p.emit(ps, facts.EventAttentionBackend, lvl, b, &facts.AttentionBackend{Backend: string(rest[:e]), Default: true}), false, true
		}
	}
	return nil, false, false
}

func (p *parser) statThroughput(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	p.statVLLM(ps, facts.EventStatThroughput, nil, b)
	return nil, true, true
}

// autotune: the model is being compiled. Once per shape; the first is
// kept.
func (p *parser) autotune(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	p.kbuf = append(p.kbuf[:0], "autotune|"...)
	if p.seenKey() {
		return nil, true, true
	}
	return p.emit(ps, facts.EventTorchCompile, lvl, b, &facts.Compile{What: "autotune"}), false, true
}

func (p *parser) customAllReduceOff(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.CustomAllReduce{Enabled: false}
	if k := bytes.Index(b, []byte("because ")); k >= 0 {
		r := b[k+len("because "):]
		if e := bytes.Index(r, []byte(". ")); e > 0 {
			r = r[:e]
		}
		f.Reason = string(trimDot(r))
	}
	return p.emit(ps, facts.EventCustomAllReduce, lvl, b, f), false, true
}

// deepGEMMKernel reads the kernel a DeepGEMM JIT line names in <...>.
func (p *parser) deepGEMMKernel(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.JIT{What: "deepgemm"}
	if k := bytes.IndexByte(b, '<'); k >= 0 {
		if e := bytes.IndexByte(b[k:], '>'); e > 0 {
			f.Kernel = string(b[k+1 : k+e])
		}
	}
	return p.emit(ps, facts.EventJITProgress, lvl, b, f), false, true
}

func (p *parser) statDecode(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	if p.statSGLang(ps, facts.EventStatDecode, b[len("Decode batch"):]) {
		return nil, true, true
	}
	return nil, false, false
}

func (p *parser) statPrefill(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	if p.statSGLang(ps, facts.EventStatPrefill, b[len("Prefill batch"):]) {
		return nil, true, true
	}
	return nil, false, false
}

func (p *parser) statPrefixCacheV0(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	p.prefixCacheV0(ps, b)
	return nil, true, true
}

func (p *parser) statSpecLine(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	p.statSpec(ps, b)
	return nil, true, true
}

func (p *parser) endpointDeprecated(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Notice{What: string(wordUntil(b[len("Endpoint '"):], '\''))}
	return p.emit(ps, facts.EventDeprecation, facts.LevelWarning, b, f), false, true
}

// engineStat reads the lines vLLM's front end prefixes with "Engine 000: ".
func (p *parser) engineStat(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	if ev, ok := p.engineLine(ps, lvl, b); ok {
		return ev, true, true
	}
	return nil, false, false
}

func (p *parser) engineCoreFailed(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	return p.classifyException(ps, nil, b, b), false, true
}

func (p *parser) distInitEnd(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Milestone{}
	kvEq(afterPrefix(b, "Init torch distributed ends."), f)
	return p.emit(ps, facts.EventDistInitEnd, lvl, b, f), false, true
}

// killed reads the shell's "Killed" alone on its line.
func (p *parser) killed(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	if len(trimDot(b)) == len("Killed") {
		return p.emit(ps, facts.EventKilled, facts.LevelError, b, &facts.Failure{Signal: "SIGKILL"}), false, true
	}
	return nil, false, false
}

func (p *parser) loadWeightEnd(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Milestone{}
	kvEq(afterPrefix(b, "Load weight end."), f)
	return p.emit(ps, facts.EventLoadEnd, lvl, b, f), false, true
}

func (p *parser) route(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	rest := b[len("Route: "):]
	f := &facts.HTTP{}
	if k := bytes.Index(rest, []byte(", Methods: ")); k >= 0 {
		f.Path = string(rest[:k])
		f.Methods = string(rest[k+len(", Methods: "):])
	} else {
		f.Path = string(rest)
	}
	return p.emit(ps, facts.EventRoute, lvl, b, f), false, true
}

func (p *parser) loadModel(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Milestone{}
	if rest, ok := cut(b, "Starting to load model "); ok {
		f.Model = string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte("...")))
	}
	return p.emit(ps, facts.EventLoadBegin, lvl, b, f), false, true
}

func (p *parser) startingVLLM(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Server{Server: "vllm"}
	if k := bytes.Index(b, []byte("http")); k >= 0 {
		f.URL = string(trimDot(b[k:]))
	}
	return p.emit(ps, facts.EventHTTPStart, lvl, b, f), false, true
}

func (p *parser) weightsDownload(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Milestone{}
	if k := bytes.LastIndex(b, []byte(": ")); k > 0 {
		if v, n := parseNum(b[k+2:]); n > 0 {
			f.ElapsedS = facts.N(v)
		}
		if m := bytes.Index(b[:k], []byte(" for ")); m >= 0 {
			f.Model = string(b[m+5 : k])
		}
	}
	return p.emit(ps, facts.EventWeightsDownload, lvl, b, f), false, true
}

func (p *parser) jitDuringInference(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.JIT{What: "triton-inference"}
	if has(b, "CuTeDSL") {
		f.What = "cutedsl-inference"
	}
	if k := bytes.Index(b, []byte("inference: ")); k >= 0 {
		f.Kernel = string(trimDot(wordUntil(b[k+len("inference: "):], '.')))
	}
	return p.emit(ps, facts.EventJITProgress, lvl, b, f), false, true
}

func (p *parser) weightsFormat(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.Milestone{}
	if k := bytes.IndexByte(b, '['); k >= 0 {
		f.Format = string(b[k:])
	}
	return p.emit(ps, facts.EventWeightsFormat, lvl, b, f), false, true
}

func (p *parser) tokenBudget(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.TokenBudget{}
	kvEq(b, f)
	return p.emit(ps, facts.EventMaxTotalTokens, lvl, b, f), false, true
}

func (p *parser) nonDefaultArgs(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	return p.argsDump(ps, lvl, b, b[len("non-default args: "):], "non-default-args", facts.EventNonDefaultArgs, false), false, true
}

func (p *parser) namespaceArgs(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	return p.argsDump(ps, lvl, b, b[len("args: "):], "non-default-args", facts.EventNonDefaultArgs, true), false, true
}

func (p *parser) serverArgs(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	return p.argsDump(ps, lvl, b, b[len("server_args="):], "server-args", facts.EventServerArgs, false), false, true
}

// distInitBegin reads vLLM's "world_size=2 rank=0 local_rank=0
// distributed_init_method=tcp://... backend=nccl".
func (p *parser) distInitBegin(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	f := &facts.RankInfo{}
	for _, kv := range bytes.Fields(b) {
		if e := bytes.IndexByte(kv, '='); e > 0 {
			if v, n := parseNum(kv[e+1:]); n > 0 && n == len(kv)-e-1 {
				facts.SetField(f, string(kv[:e]), v)
			} else {
				facts.SetField(f, string(kv[:e]), string(kv[e+1:]))
			}
		}
	}
	return p.emit(ps, facts.EventDistInitBegin, lvl, b, f), false, true
}

func (p *parser) shutdownNote(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	return p.emit(ps, facts.EventShutdown, lvl, b, &facts.Server{What: string(b[len("[shutdown] "):min(len(b), len("[shutdown] ")+64)])}), false, true
}

// flagDeprecated reads "'--cuda-graph-max-bs' is deprecated and will be
// removed in a future release. Use '--cuda-graph-max-bs-decode' instead."
func (p *parser) flagDeprecated(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	if e := bytes.IndexByte(b[1:], '\''); e > 0 && has(b[e+2:], " is deprecated") {
		f := &facts.Notice{What: string(b[1 : e+1])}
		if k := strings.Index(bstr(b), "Use '"); k >= 0 {
			if q := bytes.IndexByte(b[k+5:], '\''); q > 0 {
				f.Replacement = string(b[k+5 : k+5+q])
			}
		}
		return p.emit(ps, facts.EventDeprecation, facts.LevelWarning, b, f), false, true
	}
	return nil, false, false
}

// starSignal reads "*** SIGKILL..." as a signal handler prints it; the
// other signals' lines, whose word is fixed, are patterns.
func (p *parser) starSignal(ps *procState, _ facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	sig := b[4:]
	if e := bytes.IndexByte(sig, ' '); e > 0 {
		sig = sig[:e]
	}
	return p.emit(ps, facts.EventSignal, facts.LevelWarning, b, &facts.Server{Signal: string(sig)}), false, true
}

func (p *parser) flashinferLine(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
	return p.flashinfer(ps, lvl, b, skipOneSpace(b[len("flashinfer.jit:"):])), false, true
}

// benchmarks are the summary lines the engines' benchmark scripts print,
// each with the metric it reports; step lines ("Decode 3. Batch size:
// 128, ... throughput: ...") are no result.
var benchmarks = []struct {
	marker, metric, unit string
}{
	// vLLM benchmarks/benchmark_throughput.py, vllm bench throughput: one
	// line, requests/s first, then tokens/s (total, and output since 2024).
	{"Throughput: ", "requests", "requests/s"},
	// vLLM benchmark_serving.py / vllm bench serve and SGLang's
	// bench_serving: a table of "Name (unit): value" lines.
	{"Request throughput (req/s):", "requests", "requests/s"},
	{"Output token throughput (tok/s):", "output-tokens", "tokens/s"},
	{"Total Token throughput (tok/s):", "total-tokens", "tokens/s"},
	{"Total token throughput (tok/s):", "total-tokens", "tokens/s"},
	// SGLang benchmark/*/bench_sglang.py (gsm8k, mmlu, ...).
	{"Output throughput: ", "output-tokens", "tokens/s"},
	// SGLang bench_one_batch: the decode median and the total.
	{"Decode.  median latency: ", "decode-tokens", "tokens/s"},
	{"Total. latency: ", "total-tokens", "tokens/s"},
}

// benchmarkResult reads a benchmark's summary line, behind a label a paste
// may give it ("Before: Throughput: 20.13 requests/s, ...").
func benchmarkResult(b []byte) *facts.Benchmark {
	for _, m := range benchmarks {
		k := bytes.Index(b, []byte(m.marker))
		if k < 0 {
			continue
		}
		rest := b[k+len(m.marker):]
		if m.metric == "decode-tokens" || m.metric == "total-tokens" && m.marker == "Total. latency: " {
			// "median throughput: 1134.62 token/s", "throughput: 23253.82 token/s"
			t := bytes.LastIndex(rest, []byte("throughput: "))
			if t < 0 {
				return nil
			}
			rest = rest[t+len("throughput: "):]
		}
		v, ok := leadingNumber(rest)
		if !ok {
			return nil
		}
		f := &facts.Benchmark{Metric: m.metric, Value: facts.N(v), Unit: m.unit}
		if label := bytes.TrimSpace(b[:k]); len(label) > 1 && len(label) <= 32 && label[len(label)-1] == ':' {
			f.Label = string(bytes.TrimSpace(label[:len(label)-1]))
		}
		return f
	}
	return nil
}

// leadingNumber reads the decimal number b starts with, after spaces.
func leadingNumber(b []byte) (float64, bool) {
	i := skipSpaces(b, 0)
	j := i
	for j < len(b) && (isDigit(b[j]) || b[j] == '.') {
		j++
	}
	if j == i {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b[i:j]), 64)
	return v, err == nil
}

// shellJobSignals are the descriptions bash prints (strsignal) for the
// signals that end a job abnormally; SIGTERM and SIGINT ("Terminated",
// "Interrupt") are a stop.
var shellJobSignals = []struct{ text, sig string }{
	{"Killed", "SIGKILL"}, {"Segmentation fault", "SIGSEGV"}, {"Aborted", "SIGABRT"}, {"Bus error", "SIGBUS"},
	{"Illegal instruction", "SIGILL"}, {"Floating point exception", "SIGFPE"},
}

// shellJobDied reads bash's report of a script's child that a signal
// ended (jobs.c: the script and line, the pid, the signal's description,
// the command): "./entrypoint.sh: line 48:    28 Killed    python3 -m ...".
func shellJobDied(b []byte) (string, bool) {
	i := bytes.Index(b, []byte(": line "))
	if i <= 0 {
		return "", false
	}
	j := i + len(": line ")
	k := j
	for k < len(b) && isDigit(b[k]) {
		k++
	}
	if k == j || k+1 >= len(b) || b[k] != ':' || b[k+1] != ' ' {
		return "", false
	}
	k = skipSpaces(b, k+1)
	pid := k
	for k < len(b) && isDigit(b[k]) {
		k++
	}
	if k == pid || k >= len(b) || b[k] != ' ' {
		return "", false
	}
	rest := b[skipSpaces(b, k):]
	for _, s := range shellJobSignals {
		if bytes.HasPrefix(rest, []byte(s.text)) && (len(rest) == len(s.text) || rest[len(s.text)] == ' ') {
			return s.sig, true
		}
	}
	return "", false
}

func wordUntil(b []byte, c byte) []byte {
	if k := bytes.IndexByte(b, c); k >= 0 {
		return b[:k]
	}
	return b
}

// capture reads SGLang's "Capture <graph> begin/end" lines of every era.
func (p *parser) capture(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	rest := b[len("Capture "):]
	if k := bytes.Index(rest, []byte(" failed")); k >= 0 && k < 48 {
		return p.emit(ps, facts.EventGraphFailed, facts.LevelError, b, &facts.Milestone{Graph: string(rest[:k])})
	}
	var typ facts.EventType
	var k int
	if k = bytes.Index(rest, []byte(" begin")); k >= 0 && k < 64 {
		typ = facts.EventGraphBegin
	} else if k = bytes.Index(rest, []byte(" end")); k >= 0 && k < 64 {
		typ = facts.EventGraphEnd
	} else {
		return nil
	}
	f := &facts.Milestone{Graph: string(rest[:k])}
	if v, ok := numAfter(b, "avail mem="); ok {
		f.AvailMemGB = facts.N(v)
	}
	if typ == facts.EventGraphEnd {
		if v, ok := numAfter(b, "elapsed"); ok {
			f.ElapsedS = facts.N(v)
		}
		if v, ok := numAfter(b, "mem usage="); ok {
			f.MemUsageGB = facts.N(v)
		}
	} else if w := wordAfter(b, "backend="); w != nil {
		f.Backend = string(w)
	}
	return p.emit(ps, typ, lvl, b, f)
}

// retract reads "KV cache pool is full. Retract requests. #retracted_reqs: 1,
// #new_token_ratio: 0.9998 -> 1.0000" and its older wording.
func (p *parser) retract(ps *procState, b []byte) *facts.LogEvent {
	f := &facts.Pressure{}
	if v, ok := numAfter(b, "#retracted_reqs:"); ok {
		f.Retracted = facts.N(v)
	}
	if v, ok := numAfter(b, "#new_tokens_gained:"); ok {
		f.NewTokensGained = facts.N(v)
	}
	if k := bytes.Index(b, []byte("#new_token_ratio:")); k >= 0 {
		r := b[k+len("#new_token_ratio:"):]
		if v, ok := numAfter(r, ""); ok {
			f.RatioBefore = facts.N(v)
		}
		if v, ok := numAfter(r, "->"); ok {
			f.RatioAfter = facts.N(v)
		}
	}
	return p.emit(ps, facts.EventRetract, facts.LevelWarning, b, f)
}

// watchdog reads the scheduler watchdog lines of every era:
// "Watchdog timeout (self.watchdog_timeout=300)",
// "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)".
func (p *parser) watchdog(ps *procState, b []byte) *facts.LogEvent {
	f := &facts.Failure{}
	if k := bytes.Index(b, []byte(" watchdog timeout")); k > 0 {
		f.Component = string(b[:k])
	}
	if v, ok := numAfter(b, "watchdog_timeout="); ok {
		f.TimeoutS = facts.N(v)
	}
	if k := bytes.Index(b, []byte("self.soft=")); k >= 0 {
		f.Soft = has(b[k+len("self.soft="):], "True")
	}
	lvl := facts.LevelError
	if f.Soft {
		lvl = facts.LevelWarning
	}
	return p.emit(ps, facts.EventWatchdogTimeout, lvl, b, f)
}

// schedulerDied reads "Rank 0 scheduler died during initialization (exit
// code: -9)".
func (p *parser) schedulerDied(ps *procState, b []byte) *facts.LogEvent {
	f := &facts.Failure{What: "scheduler"}
	if v, ok := numAfter(b, "Rank"); ok {
		f.Rank = facts.N(v)
	}
	if v, ok := numAfter(b, "exit code:"); ok {
		f.ExitCode = facts.N(v)
	}
	return p.emit(ps, facts.EventChildFailed, facts.LevelError, b, f)
}

func (p *parser) rpcTimeout(ps *procState, b []byte) *facts.LogEvent {
	if !contains(b, "timed out") {
		return nil
	}
	f := &facts.Wait{}
	if k := bytes.Index(b, []byte("RPC call to ")); k >= 0 {
		f.Method = string(wordAfter(b[k:], "RPC call to "))
	}
	return p.emit(ps, facts.EventRPCTimeout, facts.LevelError, b, f)
}

// engineLine reads the lines vLLM's front end prefixes with "Engine 000: ".
func (p *parser) engineLine(ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool) {
	k := bytes.Index(b, []byte(": "))
	if k <= 0 || k > 40 {
		return nil, false
	}
	head, rest := b[:k], b[k+2:]
	if !(has(head, "Engine ") || bytes.HasSuffix(head, []byte("Engines Aggregated")) || bytes.HasSuffix(head, []byte(" Engines"))) {
		return nil, false
	}
	switch {
	case has(rest, "Avg prompt throughput"):
		p.statVLLM(ps, facts.EventStatThroughput, head, rest)
		return nil, true
	case contains(rest, "num_gpu_blocks is:"):
		f := &facts.KVCache{}
		if v, ok := numAfter(rest, "num_gpu_blocks is:"); ok {
			f.GPUBlocks = facts.N(v)
		}
		return p.emit(ps, facts.EventKVCacheSize, lvl, b, f), true
	}
	return nil, false
}

// engineInit reads "Initializing a V1 LLM engine (v0.10.2) with config:
// model='...', tensor_parallel_size=2, ...".
func (p *parser) engineInit(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	f := &facts.EngineConfig{Config: map[string]any{}}
	if k := bytes.Index(b, []byte("(v")); k >= 0 {
		if e := bytes.IndexByte(b[k:], ')'); e > 0 {
			f.Version = string(b[k+2 : k+e])
		}
	}
	switch {
	case has(b, "Initializing a V1"):
		f.EngineVersion = "V1"
	case has(b, "Initializing a V0"), has(b, "Initializing an LLM"):
		f.EngineVersion = "V0"
	}
	if k := bytes.Index(b, []byte("with config: ")); k >= 0 {
		n := 0
		pyPairs(b[k+len("with config: "):], '=', func(key, val []byte) {
			if n >= maxSettings {
				return
			}
			n++
			if v, ok := pyValue(val); ok {
				if _, dup := f.Config[string(key)]; !dup {
					f.Config[string(key)] = v
				}
			}
		})
	}
	return p.emit(ps, facts.EventEngineInit, lvl, b[:min(len(b), 200)], f)
}

// vllmBackend reads vLLM's attention backend lines of every era.
func (p *parser) vllmBackend(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	switch {
	case has(b, "Using FlashAttention version"):
		if v, ok := numAfter(b, "version"); ok {
			return p.emit(ps, facts.EventAttentionBackend, lvl, b, &facts.AttentionBackend{Backend: "FLASH_ATTN", FAVersion: facts.N(v)})
		}
	case contains(b, " attention backend out of potential backends"):
		k := bytes.Index(b, []byte(" attention backend"))
		f := &facts.AttentionBackend{Backend: string(bytes.Trim(afterUsing(b[:k]), "'"))}
		if c := bytes.Index(b, []byte("backends: ")); c >= 0 {
			f.Candidates = string(trimDot(b[c+len("backends: "):]))
		}
		return p.emit(ps, facts.EventAttentionBackend, lvl, b, f)
	case bytes.HasSuffix(trimDot(b), []byte(" backend on V1 engine")):
		t := trimDot(b)
		name := afterUsing(t[:len(t)-len(" backend on V1 engine")])
		return p.emit(ps, facts.EventAttentionBackend, lvl, b, &facts.AttentionBackend{Backend: string(name), EngineVersion: "V1"})
	case bytes.HasSuffix(trimDot(b), []byte(" backend")) && !contains(b, " for ") && !contains(b, "MoE") && !contains(b, "sampling"):
		t := trimDot(b)
		name := afterUsing(t[:len(t)-len(" backend")])
		if i := bytes.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:] // AttentionBackendEnum.FLASHINFER
		}
		if len(name) == 0 || len(name) > 48 {
			return nil
		}
		return p.emit(ps, facts.EventAttentionBackend, lvl, b, &facts.AttentionBackend{Backend: string(name)})
	}
	return nil
}

// afterPrefix returns what follows prefix in b, or what follows its longest
// part that b holds: a line cut short ("Init torch distributed ends", the
// fuzzer found) has nothing after it.
func afterPrefix(b []byte, prefix string) []byte {
	n := min(len(prefix), len(b))
	return b[n:]
}

// afterUsing strips a leading "Using " from a backend line's head. The
// fuzzer found "Using backend", whose head is shorter than "Using ".
func afterUsing(b []byte) []byte {
	b, _ = bytes.CutPrefix(b, []byte("Using "))
	return b
}

// freeMemory reads vLLM's memory summary "Free memory on device
// (14.66/15.99 GiB) on startup. Desired GPU memory utilization is (0.8, 12.79
// GiB). Actual usage is 4.15 GiB for weight, 2.65 GiB for peak activation,
// ..." and, as an error, "... on startup is less than desired GPU memory
// utilization (0.9, 71.33 GiB)".
func (p *parser) freeMemory(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	f := &facts.MemoryProfile{}
	if v, ok := numAfter(b, "device ("); ok {
		f.FreeGiB = facts.N(v)
	}
	if k := bytes.Index(b, []byte("device (")); k >= 0 {
		if v, ok := numAfter(b[k:], "/"); ok {
			f.TotalGiB = facts.N(v)
		}
	}
	if k := bytes.Index(b, []byte("utilization")); k >= 0 {
		r := b[k:]
		if v, ok := numAfter(r, "("); ok {
			f.Utilization = facts.N(v)
		}
		if v, ok := numAfter(r, ", "); ok {
			f.DesiredGiB = facts.N(v)
		}
	}
	for _, k := range [...]struct {
		key string
		to  *facts.Num
	}{{" for weight", &f.WeightsGiB}, {" for peak activation", &f.ActivationGiB}, {" for non-torch memory", &f.NonTorchGiB}, {" for CUDAGraph memory", &f.CUDAGraphGiB}} {
		if i := strings.Index(bstr(b), k.key); i > 0 {
			j := i - 1
			for j >= 0 && b[j] != ' ' {
				j--
			}
			for j >= 0 && b[j] == ' ' {
				j--
			}
			for j >= 0 && b[j] != ' ' {
				j--
			}
			if v, n := parseNum(b[j+1:]); n > 0 {
				*k.to = facts.N(v)
			}
		}
	}
	if contains(b, "is less than desired") {
		oom := &facts.OOM{Kind: "startup-free-memory", FreeGiB: f.FreeGiB, TotalGiB: f.TotalGiB,
			Utilization: f.Utilization, DesiredGiB: f.DesiredGiB}
		return p.emit(ps, facts.EventOOM, facts.LevelError, b, oom)
	}
	return p.emit(ps, facts.EventMemoryProfile, lvl, b, f)
}

// cudaRuntimeOOM reports the CUDA check macro of FasterTransformer and its
// descendants (TensorRT-LLM, LMDeploy's TurboMind) reporting
// cudaErrorMemoryAllocation: "[FT][ERROR] CUDA runtime error: out of memory
// file:line", "[TensorRT-LLM][ERROR] CUDA runtime error in
// ::cudaMallocAsync(...): out of memory". The report opens the line, after
// the library's tags; quoted deep in another message (Triton's "Model ...
// loading failed with error: ...") it is that message's cause, read there.
func cudaRuntimeOOM(b []byte) bool {
	i := bytes.Index(b[:min(len(b), 64)], []byte("CUDA runtime error"))
	return i >= 0 && contains(b[i:], ": out of memory")
}

// oom reads PyTorch's CUDA out-of-memory messages of both eras, and the
// CUDA check macros' reports of cudaErrorMemoryAllocation.
func (p *parser) oom(ps *procState, b []byte) *facts.LogEvent {
	k := bytes.Index(b, []byte("CUDA out of memory"))
	if k < 0 {
		if contains(b, "CUDA error: out of memory") || cudaRuntimeOOM(b) {
			return p.emit(ps, facts.EventOOM, facts.LevelError, b, &facts.OOM{Kind: "cuda"})
		}
		return nil
	}
	f := &facts.OOM{Kind: "cuda"}
	r := b[k:]
	if v, ok := gibAfter(r, "Tried to allocate"); ok {
		f.TriedGiB = facts.N(v)
	}
	if v, ok := numAfter(r, "GPU "); ok {
		f.GPU = facts.N(v)
	} else if v, ok := numAfter(r, "(GPU "); ok {
		f.GPU = facts.N(v)
	}
	if v, ok := gibAfter(r, "total capacity of"); ok {
		f.TotalGiB = facts.N(v)
	} else if v, ok := gibBefore(r, " total capacity"); ok {
		f.TotalGiB = facts.N(v)
	}
	if v, ok := gibAfter(r, "of which"); ok {
		f.FreeGiB = facts.N(v)
	} else if v, ok := gibBefore(r, " free"); ok {
		f.FreeGiB = facts.N(v)
	}
	if v, ok := gibAfter(r, "this process has"); ok {
		f.InUseGiB = facts.N(v)
	}
	if v, ok := gibAfter(r, "Of the allocated memory"); ok {
		f.AllocatedGiB = facts.N(v)
	} else if v, ok := gibBefore(r, " already allocated"); ok {
		f.AllocatedGiB = facts.N(v)
	}
	if v, ok := gibAfter(r, "and "); ok && contains(r, "reserved by PyTorch but unallocated") {
		f.ReservedUnallocatedGiB = facts.N(v)
	} else if v, ok := gibBefore(r, " reserved in total"); ok {
		f.ReservedGiB = facts.N(v)
	}
	return p.emit(ps, facts.EventOOM, facts.LevelError, b, f)
}

// gibAfter reads a size after key and converts it to GiB ("565.31 MiB",
// "0 bytes").
func gibAfter(b []byte, key string) (float64, bool) {
	k := strings.Index(bstr(b), key)
	if k < 0 {
		return 0, false
	}
	r := b[k+len(key):]
	i := skipSpaces(r, 0)
	return sizeGiB(r[i:])
}

// gibBefore reads the size that ends right before key ("27.91 GiB already
// allocated").
func gibBefore(b []byte, key string) (float64, bool) {
	k := strings.Index(bstr(b), key)
	if k <= 0 {
		return 0, false
	}
	j := k - 1
	for j >= 0 && b[j] != ' ' {
		j--
	}
	j--
	for j >= 0 && b[j] != ' ' && b[j] != '(' && b[j] != ';' {
		j--
	}
	return sizeGiB(b[j+1 : k])
}

func sizeGiB(b []byte) (float64, bool) {
	v, n := parseNum(b)
	if n == 0 {
		return 0, false
	}
	u := bytes.TrimLeft(b[n:], " ")
	switch {
	case has(u, "GiB"), has(u, "GB"):
		return v, true
	case has(u, "MiB"), has(u, "MB"):
		return v / 1024, true
	case has(u, "KiB"), has(u, "KB"):
		return v / (1024 * 1024), true
	case has(u, "TiB"):
		return v * 1024, true
	case has(u, "bytes"):
		return v / (1 << 30), true
	}
	return 0, false
}

// collectiveTimeout reads the c10d watchdog's "Watchdog caught collective
// operation timeout: WorkNCCL(SeqNum=218, OpType=ALLREDUCE, NumelIn=...,
// NumelOut=..., Timeout(ms)=600000) ran for 600001 milliseconds before timing
// out." and "Timeout at NCCL work: 218, last enqueued NCCL work: 218, last
// completed NCCL work: 217."
func (p *parser) collectiveTimeout(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	f := &facts.Collective{}
	if v, ok := numAfter(b, "[Rank "); ok {
		f.Rank = facts.N(v)
	} else if v, ok := numAfter(b, " Rank "); ok {
		f.Rank = facts.N(v)
	}
	if v, ok := numAfter(b, "SeqNum="); ok {
		f.SeqNum = facts.N(v)
	}
	if w := wordAfter(b, "OpType="); w != nil {
		f.OpType = string(w)
	}
	if v, ok := numAfter(b, "NumelIn="); ok {
		f.NumelIn = facts.N(v)
	}
	if v, ok := numAfter(b, "NumelOut="); ok {
		f.NumelOut = facts.N(v)
	}
	if v, ok := numAfter(b, "Timeout(ms)="); ok {
		f.TimeoutMs = facts.N(v)
	}
	if v, ok := numAfter(b, "ran for"); ok {
		f.RanForMs = facts.N(v)
	}
	if v, ok := numAfter(b, "Timeout at NCCL work:"); ok {
		f.SeqNum = facts.N(v)
	}
	if v, ok := numAfter(b, "last enqueued NCCL work:"); ok {
		f.LastEnqueued = facts.N(v)
	}
	if v, ok := numAfter(b, "last completed NCCL work:"); ok {
		f.LastCompleted = facts.N(v)
	}
	if lvl == facts.LevelNone {
		lvl = facts.LevelError
	}
	return p.emit(ps, facts.EventCollectiveTimout, lvl, b, f)
}

// torchLine handles torch's glog-style and c10d lines.
func (p *parser) torchLine(l *line, ps *procState, lvl facts.Level) *facts.LogEvent {
	b := l.body
	var rank facts.Num
	if l.torchRank >= 0 {
		rank = facts.N(float64(l.torchRank))
	}
	switch {
	case contains(b, "Watchdog caught collective operation timeout") || contains(b, "Timeout at NCCL work:"):
		ev := p.collectiveTimeout(ps, lvl, b)
		if c, ok := ev.Data.(*facts.Collective); ok && rank.OK {
			// "[rank2]:" is the process's global rank; "[Rank 0]" in the
			// message its rank in the process group.
			if c.Rank.OK {
				c.PGRank = c.Rank
			}
			c.Rank = rank
		}
		return ev
	case contains(b, "watchdog got stuck") || contains(b, "Heartbeat monitor timed out"):
		return p.emit(ps, facts.EventCollectiveTimout, facts.LevelError, b, &facts.Collective{Kind: "heartbeat", Rank: rank})
	}
	if lvl == facts.LevelInfo || lvl == facts.LevelNone {
		return nil
	}
	if contains(b, "out of memory") && contains(b, "CUDA") {
		return p.oom(ps, b)
	}
	// A body that opens a traceback never gets here: handle starts the
	// traceback instead. The header never starts with a space.
	if e := bytes.LastIndexByte(l.hdr, ' '); e > 0 {
		// the source file of the glog line
		return p.emit(ps, facts.EventTorchLog, lvl, b, &facts.CodeSite{File: string(bytes.TrimRight(l.hdr[e+1:], "]")), Rank: rank})
	}
	return p.emit(ps, facts.EventTorchLog, lvl, b, &facts.CodeSite{Rank: rank})
}

// nccl handles NCCL's debug lines: its version, the transports of its
// channels (once per rank and transport), init completion and warnings.
func (p *parser) nccl(l *line, ps *procState, lvl facts.Level) *facts.LogEvent {
	b := l.body
	f := &facts.NCCL{Host: string(l.ncclHost), PID: facts.N(float64(l.ncclPID)), Rank: facts.N(float64(l.ncclRank))}
	if lvl == facts.LevelWarning || lvl == facts.LevelError {
		return p.emit(ps, facts.EventNCCLWarn, facts.LevelWarning, b, f)
	}
	if file, code, ok := ncclReturn(b); ok {
		// NCCL's error trace: each function on the way out prints the
		// ncclResult_t it returns. The first line of each rank's trace is
		// kept (the one nearest the fault), with the file that says where
		// in NCCL it happened (init.cc, bootstrap.cc: communicator setup).
		p.kbuf = append(p.kbuf[:0], l.ncclHost...)
		p.kbuf = append(p.kbuf, '|')
		p.kbuf = strconv.AppendInt(p.kbuf, int64(l.ncclPID), 10)
		p.kbuf = append(p.kbuf, '|')
		p.kbuf = strconv.AppendInt(p.kbuf, int64(l.ncclRank), 10)
		if prev := p.ncclTrace[string(p.kbuf)]; prev != nil && prev.Src.Line >= p.lineNo-64 {
			// The same trace, further out: note where it passed.
			if pf, ok := prev.Data.(*facts.NCCL); ok && strings.Count(pf.Chain, ",") < 16 && !strings.Contains(","+pf.Chain+",", ","+string(file)+",") {
				pf.Chain += "," + string(file)
			}
			return nil
		}
		f.File, f.Code, f.Chain = string(file), facts.N(float64(code)), string(file)
		f.Result = ncclResultName(code)
		ev := p.emit(ps, facts.EventNCCLError, facts.LevelError, b, f)
		if p.ncclTrace == nil {
			p.ncclTrace = map[string]*facts.LogEvent{}
		}
		if len(p.ncclTrace) < 256 {
			p.ncclTrace[string(p.kbuf)] = ev
		}
		return ev
	}
	switch {
	case has(b, "NCCL version "):
		f.Version = string(wordAfter(b, "NCCL version "))
		return p.emit(ps, facts.EventNCCLVersion, lvl, b, f)
	case contains(b, " via "):
		tr := wordAfter(b, " via ")
		if len(tr) == 0 {
			return nil
		}
		if s := bytes.IndexByte(tr, '/'); s > 0 {
			tr = tr[:s]
		}
		p.kbuf = append(p.kbuf[:0], l.ncclHost...)
		p.kbuf = append(p.kbuf, '|')
		p.kbuf = strconv.AppendInt(p.kbuf, int64(l.ncclRank), 10)
		p.kbuf = append(p.kbuf, '|')
		p.kbuf = append(p.kbuf, tr...)
		if p.seenKey() {
			return nil
		}
		f.Transport = string(tr)
		return p.emit(ps, facts.EventNCCLInfo, lvl, b, f)
	case contains(b, "Init COMPLETE"):
		f.What = "init-complete"
		if w := wordAfter(b, "commId "); w != nil {
			// The communicator's id: every rank of it, on every node, logs
			// the same one as it completes (what lines up nodes' clocks).
			f.CommID = string(w)
		}
		return p.emit(ps, facts.EventNCCLInfo, lvl, b, f)
	}
	return nil
}

// ncclReturn reads NCCL's "init.cc:840 -> 3" (optionally followed by
// " [Async thread]"): a function returning a non-zero ncclResult_t.
func ncclReturn(b []byte) ([]byte, int, bool) {
	k := bytes.Index(b, []byte(" -> "))
	if k <= 0 || k > 128 {
		return nil, 0, false
	}
	file := b[:k]
	c := bytes.LastIndexByte(file, ':')
	if c <= 0 || bytes.IndexByte(file, ' ') >= 0 {
		return nil, 0, false
	}
	if _, ok := digits(file, c+1, len(file)-c-1); !ok || c+1 == len(file) {
		return nil, 0, false
	}
	rest := b[k+4:]
	n := 0
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	code, ok := digits(rest, 0, n)
	if !ok || n == 0 || code == 0 {
		return nil, 0, false
	}
	return file[:c], code, true
}

// ncclResultName names an ncclResult_t (nccl.h).
func ncclResultName(code int) string {
	switch code {
	case 1:
		return "ncclUnhandledCudaError"
	case 2:
		return "ncclSystemError"
	case 3:
		return "ncclInternalError"
	case 4:
		return "ncclInvalidArgument"
	case 5:
		return "ncclInvalidUsage"
	case 6:
		return "ncclRemoteError"
	}
	return ""
}

// gloo reads "[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of
// connected peer ranks is : 7".
func (p *parser) gloo(l *line, ps *procState) *facts.LogEvent {
	b := l.body
	f := &facts.Gloo{}
	if v, ok := numAfter(b, "Rank"); ok {
		f.Rank = facts.N(v)
	}
	if v, ok := numAfter(b, "connected to"); ok {
		f.Connected = facts.N(v)
	}
	if v, ok := numAfter(b, "peer ranks is"); ok {
		f.Expected = facts.N(v)
	}
	lvl := facts.LevelInfo
	if f.Connected.V != f.Expected.V {
		lvl = facts.LevelWarning
	} else {
		// Gloo prints this for every group of every rank: keep the first
		// per rank and peer count, and every mismatch.
		p.kbuf = append(p.kbuf[:0], "gloo|"...)
		p.kbuf = append(p.kbuf, b...)
		if p.seenKey() {
			return nil
		}
	}
	return p.emit(ps, facts.EventGloo, lvl, b, f)
}

// seenKey reports whether the key in p.kbuf was met before, or can no
// longer be remembered, and remembers it.
func (p *parser) seenKey() bool {
	if p.ncclSeen[string(p.kbuf)] || len(p.ncclSeen) >= 4096 {
		return true
	}
	p.ncclSeen[string(p.kbuf)] = true
	return false
}

// flashinfer reads flashinfer's JIT logger: b is its message, msg the
// line's.
func (p *parser) flashinfer(ps *procState, lvl facts.Level, msg, b []byte) *facts.LogEvent {
	switch {
	case has(b, "Loading JIT ops:"):
		return p.emit(ps, facts.EventJITBegin, lvl, msg, &facts.JIT{What: "flashinfer", Op: string(skipOneSpace(b[len("Loading JIT ops:"):]))})
	case has(b, "Finished loading JIT ops:"):
		return p.emit(ps, facts.EventJITEnd, lvl, msg, &facts.JIT{What: "flashinfer", Op: string(skipOneSpace(b[len("Finished loading JIT ops:"):]))})
	case has(b, "[Autotuner]: Autotuning process starts"):
		return p.emit(ps, facts.EventJITBegin, lvl, msg, &facts.JIT{What: "flashinfer-autotune"})
	case has(b, "[Autotuner]: Autotuning process ends"):
		return p.emit(ps, facts.EventJITEnd, lvl, msg, &facts.JIT{What: "flashinfer-autotune"})
	}
	if lvl.Severe() {
		return p.emit(ps, facts.EventJITFailed, lvl, msg, &facts.JIT{What: "flashinfer"})
	}
	return nil
}

// uvicorn reads uvicorn's own lines: start, ready, access log, shutdown.
// taken is set for an access line that was counted but kept as no event
// (past the first ones): it is read, and nothing else need look at it.
func (p *parser) uvicorn(l *line, ps *procState, lvl facts.Level) (ev *facts.LogEvent, taken bool) {
	b := l.body
	switch {
	case has(b, "Started server process"):
		return p.uvicornStarted(ps, lvl, b), false
	case has(b, "Application startup complete"):
		if p.engine() == facts.EngineSGLang {
			// SGLang's server is ready only after its warmup request.
			return p.emit(ps, facts.EventHTTPStart, lvl, b, &facts.Server{Server: "uvicorn", Stage: "startup-complete"}), false
		}
		return p.emit(ps, facts.EventReady, lvl, b, &facts.Server{Server: "uvicorn"}), false
	case has(b, "Uvicorn running on"):
		return p.uvicornRunning(ps, lvl, b), false
	case has(b, "Shutting down"), has(b, "Application shutdown complete"), has(b, "Finished server process"):
		return p.emit(ps, facts.EventShutdown, lvl, b, &facts.Server{Server: "uvicorn"}), false
	case has(b, "Exception in ASGI application"):
		return p.emit(ps, facts.EventError, facts.LevelError, b, &facts.Failure{What: "asgi"}), false
	case contains(b, " HTTP/"):
		return p.request(ps, lvl, b)
	}
	return nil, false
}

func (p *parser) uvicornStarted(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	f := &facts.Server{Server: "uvicorn", Stage: "process-started"}
	if v, ok := numAfter(b, "process ["); ok {
		f.PID = facts.N(v)
	}
	return p.emit(ps, facts.EventHTTPStart, lvl, b, f)
}

func (p *parser) uvicornRunning(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	f := &facts.Server{Server: "uvicorn"}
	if w := wordAfter(b, "running on "); w != nil {
		f.URL = string(w)
	}
	return p.emit(ps, facts.EventHTTPStart, lvl, b, f)
}

// request reads an access-log line `127.0.0.1:41676 - "GET /v1/models
// HTTP/1.1" 200 OK`. All are counted in a series (counted is set); the
// first ones and the failed ones are also kept as events.
func (p *parser) request(ps *procState, lvl facts.Level, b []byte) (ev *facts.LogEvent, counted bool) {
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		return nil, false
	}
	e := bytes.IndexByte(b[q+1:], '"')
	if e < 0 {
		return nil, false
	}
	reqLine := b[q+1 : q+1+e]
	st, n := parseNum(bytes.TrimLeft(b[q+2+e:], " "))
	if n == 0 {
		return nil, false
	}
	p.resetKV()
	p.putc("status", st)
	switch {
	case st >= 500:
		p.putc("server_error", 1)
	case st >= 400:
		p.putc("client_error", 1)
	}
	p.addSample(ps, facts.EventRequest, nil)
	keep := p.requests < maxReqEvents || (st >= 400 && p.errRequests < maxErrReqEvent)
	p.requests++
	if st >= 400 {
		p.errRequests++
	}
	if !keep {
		return nil, true
	}
	f := &facts.HTTP{Status: facts.N(st)}
	parts := bytes.Fields(reqLine)
	if len(parts) >= 2 {
		f.Method = string(parts[0])
		f.Path = string(parts[1])
	}
	if st >= 500 {
		lvl = facts.LevelError
	} else if st >= 400 {
		lvl = facts.LevelWarning
	}
	return p.emit(ps, facts.EventRequest, lvl, b, f), true
}

// pyWarning reads Python's warnings module output:
// "/path/to/file.py:63: FutureWarning: message".
func (p *parser) pyWarning(ps *procState, b []byte) *facts.LogEvent {
	k := bytes.Index(b, []byte("Warning: "))
	if k < 0 || k > 400 {
		return nil
	}
	// back up over the category name
	j := k
	for j > 0 && b[j-1] != ' ' {
		j--
	}
	if j < 2 || b[j-1] != ' ' || b[j-2] != ':' {
		return nil
	}
	loc := b[:j-2]
	c := bytes.LastIndexByte(loc, ':')
	if c <= 0 || !bytes.HasSuffix(loc[:c], []byte(".py")) {
		return nil
	}
	ln, n := parseNum(loc[c+1:])
	if n == 0 {
		return nil
	}
	cat := b[j : k+len("Warning")]
	f := &facts.CodeSite{Category: string(cat), File: p.text(loc[:c]), Line: facts.N(ln)}
	ev := p.emit(ps, facts.EventPythonWarning, facts.LevelWarning, b[j:], f)
	p.warnCont = ps
	return ev
}

// ninja reads the build steps of torch's C++/CUDA extension JIT:
// "[2/3] /usr/local/cuda/bin/nvcc ...", and its failures. A step or a
// compiler's command line that the engine logged as an error is a failed
// build's output quoted in the exception (flashinfer's "Ninja build
// failed. Ninja output:", torch's "Error building extension"): ninja's
// output reaches an error only when the build failed.
func (p *parser) ninja(ps *procState, lvl facts.Level, b []byte) *facts.LogEvent {
	if lvl.Severe() {
		if tool, ok := compilerCommand(b); ok {
			return p.emit(ps, facts.EventJITFailed, facts.LevelError, b[:min(len(b), 512)], &facts.JIT{What: "ninja", Tool: tool})
		}
	}
	switch {
	case len(b) > 4 && b[0] == '[' && isDigit(b[1]):
		n, i := parseNum(b[1:])
		if i == 0 || 1+i >= len(b) || b[1+i] != '/' {
			return nil
		}
		tot, j := parseNum(b[2+i:])
		if j == 0 || 2+i+j+1 >= len(b) || b[2+i+j] != ']' || b[3+i+j] != ' ' {
			return nil
		}
		cmd := b[4+i+j:]
		tool := cmd
		if sp := bytes.IndexByte(tool, ' '); sp > 0 {
			tool = tool[:sp]
		}
		if s := bytes.LastIndexByte(tool, '/'); s >= 0 {
			tool = tool[s+1:]
		}
		return p.emit(ps, facts.EventJITProgress, facts.LevelInfo, b[:min(len(b), 512)], &facts.JIT{What: "ninja", N: facts.N(n), Total: facts.N(tot), Tool: string(tool)})
	case has(b, "FAILED: "), has(b, "ninja: build stopped"):
		return p.emit(ps, facts.EventJITFailed, facts.LevelError, b, &facts.JIT{What: "ninja"})
	}
	return nil
}

// exceptionLine handles an exception printed without its traceback: a
// paste that kept only the last line, a library that logs
// "RuntimeError: ..." itself. It is a traceback of one line, and a failure
// like any other; what the exception means is added beside it.
func (p *parser) exceptionLine(ps *procState, b []byte) *facts.LogEvent {
	typ, msg := splitException(b)
	ev := p.emit(ps, facts.EventTraceback, facts.LevelError, b, &facts.TracebackInfo{Headless: true})
	ev.Traceback = &facts.Traceback{ExcType: p.text(typ), ExcMsg: p.text(msg), ExcLine: p.lineNo}
	if cl := p.classifyException(ps, typ, msg, b); cl != nil {
		return cl
	}
	return ev
}

// classifyException adds the event an exception means, if it means one.
func (p *parser) classifyException(ps *procState, typ, msg, line []byte) *facts.LogEvent {
	switch {
	case contains(msg, "CUDA out of memory") || contains(msg, "CUDA error: out of memory") || bytes.HasSuffix(typ, []byte("OutOfMemoryError")) && contains(msg, "CUDA"):
		return p.oom(ps, line)
	case contains(msg, "Engine core initialization failed"):
		f := &facts.Failure{What: "engine-core"}
		if k := bytes.Index(msg, []byte("Failed core proc(s): ")); k >= 0 {
			f.FailedProcs = string(msg[k+len("Failed core proc(s): "):])
		}
		return p.emit(ps, facts.EventEngineInitFailed, facts.LevelError, line, f)
	case contains(msg, "WorkerProc initialization failed"):
		return p.emit(ps, facts.EventEngineInitFailed, facts.LevelError, line, &facts.Failure{What: "worker"})
	case bytes.HasSuffix(typ, []byte("EngineDeadError")):
		return p.emit(ps, facts.EventEngineDead, facts.LevelError, line, &facts.Failure{ExcType: string(typ)})
	case has(msg, "RPC call to ") && contains(msg, "timed out"):
		return p.rpcTimeout(ps, line)
	case contains(msg, "KV cache is needed, which is larger than the available KV cache memory"):
		f := &facts.MemoryProfile{}
		if v, ok := numAfter(msg, "max seq len ("); ok {
			f.MaxSeqLen = facts.N(v)
		}
		if k := bytes.Index(msg, []byte("), (")); k >= 0 {
			if v, ok := numAfter(msg[k:], "), ("); ok {
				f.NeededGiB = facts.N(v)
			}
		}
		if v, ok := numAfter(msg, "KV cache memory ("); ok {
			f.AvailableGiB = facts.N(v)
		}
		if v, ok := numAfter(msg, "maximum model length is"); ok {
			f.EstimatedMaxLen = facts.N(v)
		}
		return p.emit(ps, facts.EventKVInsufficient, facts.LevelError, line, f)
	case contains(msg, "No available memory for the cache blocks"), has(msg, "Not enough memory. Please try to increase --mem-fraction-static"):
		return p.emit(ps, facts.EventKVInsufficient, facts.LevelError, line, nil)
	case contains(msg, "scheduler died during initialization"):
		return p.schedulerDied(ps, msg)
	case has(msg, "Capture cuda graph failed"), has(msg, "Capture CUDA graph failed"):
		return p.emit(ps, facts.EventGraphFailed, facts.LevelError, line, &facts.Milestone{Graph: "cuda graph"})
	case has(msg, "Free memory on device ("):
		return p.freeMemory(ps, facts.LevelError, msg)
	case contains(msg, "Watchdog caught collective operation timeout"):
		return p.collectiveTimeout(ps, facts.LevelError, msg)
	}
	return nil
}

// mpiReport reads what an MPI launcher prints when a process of its job
// failed (Open MPI's help-orterun.txt and errmgr messages, PRRTE's prterun):
// "mpirun detected that one or more processes exited with non-zero status,
// thus causing the job to be terminated", "mpirun noticed that process rank
// 1 with PID 4242 on node gpu-7 exited on signal 9 (Killed)."
func (p *parser) mpiReport(ps *procState, b []byte) *facts.LogEvent {
	launcher := ""
	for _, l := range []string{"mpirun", "prterun", "orterun"} {
		if has(b, l) {
			launcher = l
			break
		}
	}
	if launcher == "" {
		return nil
	}
	rest := b[len(launcher):]
	switch {
	case has(rest, " detected that one or more processes exited with non-zero status"):
		return p.emit(ps, facts.EventChildFailed, facts.LevelError, b, &facts.Failure{Launcher: launcher})
	case has(rest, " noticed that process rank "):
		f := &facts.Failure{Launcher: launcher, What: "mpi-rank"}
		if v, ok := numAfter(rest, "process rank"); ok {
			f.Rank = facts.N(v)
		}
		if v, ok := numAfter(rest, "with PID"); ok {
			f.PID = facts.N(v)
		}
		if k := strings.Index(bstr(rest), "exited on signal "); k >= 0 {
			// The signal's number, then strsignal's words in parentheses.
			sig := rest[k+len("exited on signal "):]
			if o := bytes.IndexByte(sig, '('); o >= 0 {
				for _, s := range shellJobSignals {
					if has(sig[o+1:], s.text+")") {
						f.Signal = s.sig
						return p.emit(ps, facts.EventKilled, facts.LevelCritical, b, f)
					}
				}
			}
		}
		return p.emit(ps, facts.EventChildFailed, facts.LevelError, b, f)
	}
	return nil
}

// compilers are the programs a JIT build runs whose command lines ninja
// echoes.
var compilers = []string{"nvcc", "gcc", "g++", "c++", "cc", "clang", "clang++", "cicc", "ptxas", "cudafe++", "fatbinary", "nvlink"}

// compilerCommand reports a line that is a compiler's command line, bare or
// as ninja's step ("[1/11] /usr/local/cuda/bin/nvcc -c ..."), and names
// the compiler. A path may carry a stray list separator (":/usr/local/cuda/
// bin/nvcc", a CUDA_HOME joined like PATH).
func compilerCommand(b []byte) (string, bool) {
	if len(b) > 4 && b[0] == '[' && isDigit(b[1]) {
		if k := bytes.IndexByte(b, ']'); k > 0 && k < 24 && k+1 < len(b) && b[k+1] == ' ' {
			b = b[k+2:]
		}
	}
	b = bytes.TrimLeft(b, ": ")
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp+1 >= len(b) || b[sp+1] != '-' {
		return "", false
	}
	tool := b[:sp]
	if s := bytes.LastIndexByte(tool, '/'); s >= 0 {
		tool = tool[s+1:]
	}
	for _, c := range compilers {
		if string(tool) == c {
			return c, true
		}
	}
	return "", false
}
