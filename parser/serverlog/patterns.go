package serverlog

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/coroner-dev/coroner/parser/facts"
)

// pattern is one kind of line table recognizes by the text it starts with:
// what it starts with (and holds), the event it makes, and which of the
// payload's fields the line's words fill. A line whose reading is not a
// list of such captures (stat lines, dedupes, state, several steps) has a
// reader, code, in its place in the list instead: the order of a list is the
// order its checks are tried in, so that a line two checks could take goes
// to the same one as it always has.
type pattern struct {
	// pre are the prefixes, any of which the line starts with; also is
	// text it must hold besides.
	pre  []string
	also string

	typ facts.EventType
	// lvl is the event's level; LevelNone keeps the line's own, as
	// inferLevel gave it.
	lvl  facts.Level
	pay  payload // the payload with its constant fields; none if zero
	caps []capture

	// code reads the line instead; its ok false leaves the line untaken.
	// next lets the rows after a reader try a line it declines: its
	// prefix is shared by lines other rows read ("Engine " is a stat line
	// or, further down, "Engine core proc ... died unexpectedly").
	code reader
	next bool
}

// reader reads a line that a pattern's prefix matched; ok reports that it
// took the line (ev and done are then table's answer: done for a line read
// without an event, a stat line).
type reader func(p *parser, ps *procState, lvl facts.Level, b []byte) (ev *facts.LogEvent, done, ok bool)

// takes is the reader of a method that reads the line whole: its event, or
// nil, is table's answer.
func takes(f func(*parser, *procState, facts.Level, []byte) *facts.LogEvent) reader {
	return func(p *parser, ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
		return f(p, ps, lvl, b), false, true
	}
}

// takesIf is takes for a method that may decline: no event leaves the line
// untaken.
func takesIf(f func(*parser, *procState, facts.Level, []byte) *facts.LogEvent) reader {
	return func(p *parser, ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool, bool) {
		ev := f(p, ps, lvl, b)
		return ev, false, ev != nil
	}
}

// ownLevel adapts a method that sets its events' levels itself.
func ownLevel(f func(*parser, *procState, []byte) *facts.LogEvent) func(*parser, *procState, facts.Level, []byte) *facts.LogEvent {
	return func(p *parser, ps *procState, _ facts.Level, b []byte) *facts.LogEvent { return f(p, ps, b) }
}

// payload makes a pattern's payload: a copy of its template, and where it
// lies, for the captures to fill the fields they name.
type payload struct {
	typ  reflect.Type // the struct, for resolving capture names once
	make func() (facts.Payload, unsafe.Pointer)
}

// pay is the payload whose constant fields are v's.
func pay[T any, P interface {
	*T
	facts.Payload
}](v T) payload {
	return payload{typ: reflect.TypeFor[T](), make: func() (facts.Payload, unsafe.Pointer) {
		c := new(T)
		*c = v
		return P(c), unsafe.Pointer(c)
	}}
}

type capKind uint8

const (
	capNum  capKind = iota // numAfter the first key that has a number after it
	capWord                // wordAfter the key
	capRest                // what follows the prefix, trimDot'ed
)

// capture fills one field of a pattern's payload from the line. field is
// the field's name in the schema (its json tag); the offset it resolves to
// once, at start, lets a matched line be read without reflection.
type capture struct {
	field string
	kind  capKind
	keys  []string
	// need is set where the line is not this pattern's unless the
	// capture finds its value.
	need bool

	off uintptr
	ok  bool // resolved: off is a field of the payload, of the kind's type
}

func num(field string, keys ...string) capture {
	return capture{field: field, kind: capNum, keys: keys}
}
func word(field, key string) capture {
	return capture{field: field, kind: capWord, keys: []string{key}}
}
func rest(field string) capture { return capture{field: field, kind: capRest} }

// needed marks a capture without which the line is not the pattern's.
func needed(c capture) capture { c.need = true; return c }

// fill reads the capture's value from b, which starts with pre, into the
// payload at at; it reports whether the line had one.
func (c *capture) fill(at unsafe.Pointer, b []byte, pre string) bool {
	if !c.ok {
		return false
	}
	switch c.kind {
	case capNum:
		for _, k := range c.keys {
			if v, ok := numAfter(b, k); ok {
				*(*facts.Num)(unsafe.Add(at, c.off)) = facts.N(v)
				return true
			}
		}
	case capWord:
		if w := wordAfter(b, c.keys[0]); w != nil {
			*(*string)(unsafe.Add(at, c.off)) = string(w)
			return true
		}
	case capRest:
		*(*string)(unsafe.Add(at, c.off)) = string(trimDot(b[len(pre):]))
		return true
	}
	return false
}

// row is one prefix of a pattern as table tries it. head and mask are the
// prefix's first eight bytes: one load of the line's and a compare reject a
// row without a call to compare strings, as the compiler's inlined compare
// with a constant prefix did.
type row struct {
	head, mask uint64
	pre        string
	pat        *pattern
}

// head8 is b's first eight bytes as a little-endian number, zeros past its
// end (no prefix holds a zero byte).
func head8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var h uint64
	for i := len(b) - 1; i >= 0; i-- {
		h = h<<8 | uint64(b[i])
	}
	return h
}

func (r *row) matches(h uint64, b []byte) bool {
	return h&r.mask == r.head && has(b, r.pre) && (r.pat.also == "" || contains(b, r.pat.also))
}

// byteRows are the rows of one first byte, by the line's second byte:
// lists[by2[c]] holds, in their order, the rows whose prefix has c second
// and those shorter than two bytes, which alone make lists[0] (for a second
// byte no prefix has, and a line of one byte). A line is offered only the
// rows its first two bytes allow: the rows of one first byte are as many as
// a switch's cases, and most lines that reach table match none.
type byteRows struct {
	by2   [256]uint16
	lists [][]row
}

func (t *byteRows) candidates(b []byte) []row {
	if len(b) < 2 {
		return t.lists[0]
	}
	return t.lists[t.by2[b[1]]]
}

// rowTable holds each first byte's rows.
var rowTable [256]*byteRows

// init compiles the table once. A wrong row (a field its payload does not
// have, a prefix under another first byte) is a mistake in this file, not
// in any input: it stops the program at start, as a bad regexp.MustCompile
// does, rather than leave a capture that never fills.
func init() {
	var errs []string
	rowTable, errs = compilePatterns(patterns)
	if len(errs) > 0 {
		panic("serverlog: the line table does not compile: " + strings.Join(errs, "; "))
	}
}

// compilePatterns lays the patterns out by first and second byte, and
// resolves their captures' field names in copies: the lists it is given
// stay as written.
func compilePatterns(lists []patternList) (t [256]*byteRows, errs []string) {
	numType, strType := reflect.TypeFor[facts.Num](), reflect.TypeFor[string]()
	var flat [256][]row
	for li := range lists {
		pl := &lists[li]
		for pi := range pl.pats {
			compiled := pl.pats[pi]
			compiled.caps = slices.Clone(compiled.caps)
			pat := &compiled
			name := fmt.Sprintf("%q pattern %q", pl.first, pat.pre)
			if len(pat.pre) == 0 {
				errs = append(errs, name+": no prefix")
			}
			if pat.code != nil && (pat.typ != "" || pat.pay.make != nil || len(pat.caps) > 0) {
				errs = append(errs, name+": a reader and a pattern's event")
			}
			if pat.code == nil && pat.typ == "" {
				errs = append(errs, name+": no event type")
			}
			if pat.pay.make == nil && len(pat.caps) > 0 {
				errs = append(errs, name+": captures without a payload")
				continue
			}
			for ci := range pat.caps {
				c := &pat.caps[ci]
				want := strType
				if c.kind == capNum {
					want = numType
				}
				if sf, ok := fieldByName(pat.pay.typ, c.field); !ok {
					errs = append(errs, fmt.Sprintf("%s: %v has no field %q", name, pat.pay.typ, c.field))
				} else if sf.Type != want {
					errs = append(errs, fmt.Sprintf("%s: field %q is %v, the capture fills %v", name, c.field, sf.Type, want))
				} else {
					c.off, c.ok = sf.Offset, true
				}
			}
			for _, pre := range pat.pre {
				if pre == "" && pat.code == nil {
					errs = append(errs, name+": an empty prefix needs a reader")
				}
				if pre != "" && strings.IndexByte(pl.first, pre[0]) < 0 {
					errs = append(errs, fmt.Sprintf("%s: %q is never tried on lines that start with %q", name, pre, pl.first))
				}
				r := row{pre: pre, pat: pat}
				for i := 0; i < min(len(pre), 8); i++ {
					r.head |= uint64(pre[i]) << (8 * i)
					r.mask |= 0xff << (8 * i)
				}
				for i := range len(pl.first) {
					flat[pl.first[i]] = append(flat[pl.first[i]], r)
				}
			}
		}
	}
	seen := map[byte]bool{}
	for _, pl := range lists {
		for i := range len(pl.first) {
			if seen[pl.first[i]] {
				errs = append(errs, fmt.Sprintf("%q has two lists", pl.first[i]))
			}
			seen[pl.first[i]] = true
		}
	}
	for c0, rs := range flat {
		if len(rs) > 0 {
			t[c0] = bySecond(rs)
		}
	}
	return t, errs
}

// bySecond indexes one first byte's rows by their prefixes' second bytes.
func bySecond(rs []row) *byteRows {
	t := &byteRows{lists: [][]row{nil}}
	for _, r := range rs {
		if len(r.pre) >= 2 && t.by2[r.pre[1]] == 0 {
			t.by2[r.pre[1]] = uint16(len(t.lists))
			t.lists = append(t.lists, nil)
		}
	}
	for _, r := range rs {
		for k := range t.lists {
			if len(r.pre) < 2 || (k > 0 && t.by2[r.pre[1]] == uint16(k)) {
				t.lists[k] = append(t.lists[k], r)
			}
		}
	}
	return t
}

// fieldByName finds a struct's field by its schema name.
func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	if t == nil {
		return reflect.StructField{}, false
	}
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// rows tries the rows that b's first two bytes allow, in order. ok reports
// that one took the line (ev and done are then table's answer).
func (p *parser) rows(ps *procState, lvl facts.Level, b []byte) (ev *facts.LogEvent, done, ok bool) {
	t := rowTable[b[0]]
	if t == nil {
		return nil, false, false
	}
	rs := t.candidates(b)
	if len(rs) == 0 {
		return nil, false, false
	}
	h := head8(b)
	for i := range rs {
		r := &rs[i]
		if !r.matches(h, b) {
			continue
		}
		pat := r.pat
		if pat.code != nil {
			ev, done, ok := pat.code(p, ps, lvl, b)
			if ok || !pat.next {
				return ev, done, ok
			}
			continue
		}
		// The line is this pattern's: no later row reads it, whether or not
		// its captures find their values (a needed one that does not
		// leaves it to the readers after the table).
		ev, ok := p.fire(pat, r.pre, ps, lvl, b)
		return ev, false, ok
	}
	return nil, false, false
}

// fire makes the pattern's event of b, which starts with pre; ok is false
// when a needed capture found nothing.
func (p *parser) fire(pat *pattern, pre string, ps *procState, lvl facts.Level, b []byte) (*facts.LogEvent, bool) {
	var data facts.Payload
	if pat.pay.make != nil {
		d, at := pat.pay.make()
		for i := range pat.caps {
			if c := &pat.caps[i]; !c.fill(at, b, pre) && c.need {
				return nil, false
			}
		}
		data = d
	}
	if pat.lvl != facts.LevelNone {
		lvl = pat.lvl
	}
	return p.emit(ps, pat.typ, lvl, b, data), true
}

// patternList is the patterns tried on the lines that start with one of
// first's bytes, in order.
type patternList struct {
	first string
	pats  []pattern
}

// patterns is the table: the milestones and failures by first letter.
var patterns = []patternList{
	{"A", []pattern{
		{pre: []string{"Attention backend not"}, code: (*parser).attentionDefault},
		{pre: []string{"Avg prompt throughput:"}, code: (*parser).statThroughput},
		{pre: []string{"All deep_gemm operations loaded successfully"}, typ: facts.EventJITEnd, pay: pay(facts.JIT{What: "deepgemm"})},
		// Inductor's max-autotune benchmarking a kernel's choices
		// (select_algorithm.py: "AUTOTUNE mm(8x4096, 4096x4096)").
		{pre: []string{"AUTOTUNE "}, also: "(", code: (*parser).autotune},
		{pre: []string{"Available KV cache memory:"}, typ: facts.EventAvailableKV, pay: pay(facts.KVCache{}),
			caps: []capture{needed(num("gib", "memory:"))}},
	}},
	{"B", []pattern{
		{pre: []string{"Building extension module "}, typ: facts.EventJITBegin, pay: pay(facts.JIT{What: "torch-extension"}),
			caps: []capture{rest("module")}},
	}},
	{"C", []pattern{
		{pre: []string{"Capture "}, code: takesIf((*parser).capture)},
		{pre: []string{"Custom allreduce is disabled", "Custom all-reduce is disabled"}, code: (*parser).customAllReduceOff},
		{pre: []string{"Compiling a graph for "}, typ: facts.EventTorchCompile, pay: pay(facts.Compile{Stage: "compile"}),
			caps: []capture{num("compile_s", " takes")}},
		{pre: []string{"Capturing cudagraphs for decoding", "Capturing the model for CUDA graphs"}, typ: facts.EventGraphBegin,
			pay: pay(facts.Milestone{Graph: "cuda graph"})},
		{pre: []string{"Child process unexpectedly failed"}, typ: facts.EventChildFailed, lvl: facts.LevelError, pay: pay(facts.Failure{}),
			caps: []capture{num("exit_code", "exit code", "exitcode="), num("pid", "pid=")}},
		{pre: []string{"Creating FlashInfer allreduce workspace"}, also: "JIT", typ: facts.EventJITBegin, pay: pay(facts.JIT{What: "flashinfer"})},
		{pre: []string{"Chat template warmup completed"}, typ: facts.EventWarmup, pay: pay(facts.Milestone{What: "chat-template"})},
		{pre: []string{"Cannot use FlashAttention"}, typ: facts.EventConfigWarning},
		// vLLM's JIT monitor on a cute.compile call after warm-up
		// (vllm/utils/jit_monitor.py, "%s %s during inference: %s%s").
		{pre: []string{"CuTeDSL JIT compilation during inference"}, code: (*parser).jitDuringInference},
		{pre: []string{"Compute Capability < 8.0 is not supported by the V1 Engine"}, typ: facts.EventConfigWarning,
			pay: pay(facts.Notice{Fallback: "V0"})},
		{pre: []string{"CUDA graph is disabled", "Cuda graph is disabled", "Cudagraph is disabled"}, typ: facts.EventConfigWarning,
			pay: pay(facts.Notice{CUDAGraphOff: true})},
	}},
	{"D", []pattern{
		// SGLang's DeepGEMM wrapper, before DeepGEMM's own messages.
		{pre: []string{"DeepGEMM JIT code generation"}, code: (*parser).deepGEMMKernel},
		{pre: []string{"Decode batch"}, code: (*parser).statDecode},
		{pre: []string{"Dynamo bytecode transform time:"}, typ: facts.EventTorchCompile, pay: pay(facts.Compile{Stage: "dynamo"}),
			caps: []capture{num("dynamo_s", "time:")}},
		{pre: []string{"Directly load the compiled graph"}, typ: facts.EventTorchCompile, pay: pay(facts.Compile{Stage: "load", Cached: true}),
			caps: []capture{num("load_s", "took")}},
		{pre: []string{"Directly load AOT compilation"}, typ: facts.EventTorchCompile, pay: pay(facts.Compile{Stage: "load", Cached: true, AOT: true})},
		{pre: []string{"Decode out of memory happened"}, code: takes(ownLevel((*parser).retract))},
		{pre: []string{"Decode out of memory"}, typ: facts.EventOOM, lvl: facts.LevelError, pay: pay(facts.OOM{Kind: "kv-cache"})},
		{pre: []string{"DetokenizerManager hit an exception"}, typ: facts.EventSchedulerCrash, lvl: facts.LevelError,
			pay: pay(facts.Failure{Component: "DetokenizerManager"})},
		{pre: []string{"DataParallelController hit an exception"}, typ: facts.EventSchedulerCrash, lvl: facts.LevelError,
			pay: pay(facts.Failure{Component: "DataParallelController"})},
		{pre: []string{"Disaggregation warmup"}, typ: facts.EventWarmup, pay: pay(facts.Milestone{What: "disaggregation"})},
	}},
	{"E", []pattern{
		{pre: []string{"Endpoint '"}, also: "is deprecated", code: (*parser).endpointDeprecated},
		{pre: []string{"Engine "}, code: (*parser).engineStat, next: true},
		{pre: []string{"Engine core proc "}, also: "died unexpectedly", typ: facts.EventEngineDead, lvl: facts.LevelError,
			pay: pay(facts.Failure{}), caps: []capture{word("proc", "Engine core proc ")}},
		{pre: []string{"Engine core initialization failed"}, code: (*parser).engineCoreFailed},
		{pre: []string{"Entering DeepGEMM JIT Pre-Compile session"}, typ: facts.EventJITBegin, pay: pay(facts.JIT{What: "deepgemm"})},
		{pre: []string{"EngineCore failed to start"}, typ: facts.EventEngineInitFailed, lvl: facts.LevelError,
			pay: pay(facts.Failure{What: "engine-core"})},
		{pre: []string{"EngineCore encountered a fatal error"}, typ: facts.EventEngineDead, lvl: facts.LevelError},
		{pre: []string{"Estimated CUDA graph memory:"}, typ: facts.EventMemoryProfile, pay: pay(facts.MemoryProfile{}),
			caps: []capture{num("cuda_graph_gib", "memory:")}},
		{pre: []string{"End of disaggregation warmup"}, typ: facts.EventWarmup, pay: pay(facts.Milestone{What: "disaggregation", Done: true})},
		{pre: []string{"Emitting ninja build file"}, typ: facts.EventJITBegin, pay: pay(facts.JIT{What: "torch-extension"})},
		{pre: []string{"Exception: WorkerProc initialization failed"}, typ: facts.EventEngineInitFailed, lvl: facts.LevelError,
			pay: pay(facts.Failure{What: "worker"})},
	}},
	{"F", []pattern{
		{pre: []string{"FlashInfer autotune completed"}, typ: facts.EventJITEnd, pay: pay(facts.JIT{What: "flashinfer-autotune"})},
		{pre: []string{"Free memory on device ("}, code: takes((*parser).freeMemory)},
		{pre: []string{"Fatal Python error"}, typ: facts.EventKilled, lvl: facts.LevelCritical, pay: pay(facts.Failure{What: "fatal-python-error"})},
	}},
	{"G", []pattern{
		{pre: []string{"GPU KV cache size:"}, typ: facts.EventKVCacheSize, pay: pay(facts.KVCache{}),
			caps: []capture{needed(num("tokens", "size:"))}},
		{pre: []string{"Graph capturing finished"}, typ: facts.EventGraphEnd, pay: pay(facts.Milestone{Graph: "cuda graph"}),
			caps: []capture{num("elapsed_s", "finished in"), num("mem_gib", "took")}},
		{pre: []string{"Gracefully exiting"}, typ: facts.EventShutdown, pay: pay(facts.Server{What: "graceful-exit"})},
	}},
	{"H", []pattern{
		// SGLang's /health: no output came back from the scheduler and
		// detokenizer within the probe's timeout. The server still runs;
		// it says the scheduler did not answer, as a timeout waiting on
		// another process does, not that anything failed.
		{pre: []string{"Health check failed"}, typ: facts.EventRPCTimeout, lvl: facts.LevelWarning, pay: pay(facts.Wait{What: "health-check"})},
	}},
	{"I", []pattern{
		{pre: []string{"Init torch distributed begin"}, typ: facts.EventDistInitBegin},
		{pre: []string{"Init torch distributed ends"}, code: (*parser).distInitEnd},
		{pre: []string{"Initializing a V1 LLM engine", "Initializing a V0 LLM engine", "Initializing an LLM engine"}, code: takes((*parser).engineInit)},
		{pre: []string{"Initialization failed"}, also: "warmup", typ: facts.EventEngineInitFailed, lvl: facts.LevelError, pay: pay(facts.Failure{What: "warmup"})},
		{pre: []string{"Initialization failed"}, typ: facts.EventEngineInitFailed, lvl: facts.LevelError, pay: pay(facts.Failure{What: "init"})},
		{pre: []string{"Initial profiling/warmup run took"}, typ: facts.EventWarmup, pay: pay(facts.Milestone{What: "profiling"}),
			caps: []capture{num("elapsed_s", "took")}},
	}},
	{"K", []pattern{
		// "KV Cache is allocated. [dtype: X, ]#tokens: N, K size: a GB, V
		// size: b GB" (MHA) or "... KV size: c GB" (MLA).
		{pre: []string{"KV Cache is allocated"}, typ: facts.EventKVCacheAlloc, pay: pay(facts.KVCache{}),
			caps: []capture{num("tokens", "#tokens:"), num("k_size_gb", " K size:"), num("v_size_gb", " V size:"),
				num("kv_size_gb", " KV size:"), word("dtype", "dtype: ")}},
		{pre: []string{"KV cache pool is full"}, code: takes(ownLevel((*parser).retract))},
		{pre: []string{"Killed"}, code: (*parser).killed},
	}},
	{"L", []pattern{
		{pre: []string{"Load weight begin"}, typ: facts.EventLoadBegin, pay: pay(facts.Milestone{}),
			caps: []capture{num("avail_mem_gb", "avail mem=")}},
		{pre: []string{"Load weight end"}, code: (*parser).loadWeightEnd},
		{pre: []string{"Loading weights took"}, typ: facts.EventLoadEnd, pay: pay(facts.Milestone{Stage: "weights"}),
			caps: []capture{num("elapsed_s", "took")}},
		{pre: []string{"Loading model weights took"}, typ: facts.EventLoadEnd, pay: pay(facts.Milestone{Stage: "model"}),
			caps: []capture{num("mem_gb", "took")}},
		{pre: []string{"Loading extension module "}, typ: facts.EventJITEnd, pay: pay(facts.JIT{What: "torch-extension"}),
			caps: []capture{rest("module")}},
	}},
	{"M", []pattern{
		{pre: []string{"Memory pool end"}, typ: facts.EventMemPoolEnd, pay: pay(facts.Milestone{}),
			caps: []capture{num("avail_mem_gb", "avail mem=")}},
		{pre: []string{"Model loading took"}, typ: facts.EventLoadEnd, pay: pay(facts.Milestone{Stage: "model"}),
			caps: []capture{num("mem_gib", "took"), num("elapsed_s", " and ")}},
		{pre: []string{"Memory profiling takes"}, typ: facts.EventMemoryProfile, pay: pay(facts.MemoryProfile{}),
			caps: []capture{num("elapsed_s", "takes")}},
		{pre: []string{"Maximum concurrency for"}, typ: facts.EventMaxConcurrency, pay: pay(facts.KVCache{}),
			caps: []capture{num("tokens_per_request", "concurrency for"), num("concurrency", "per request:")}},
	}},
	{"N", []pattern{
		{pre: []string{"No available shared memory broadcast block found"}, typ: facts.EventSHMWait, lvl: facts.LevelWarning,
			pay: pay(facts.Wait{}), caps: []capture{num("wait_s", "found in")}},
		{pre: []string{"Not enough memory", "No available memory for the cache blocks"}, typ: facts.EventKVInsufficient, lvl: facts.LevelError},
		{pre: []string{"NCCL version "}, typ: facts.EventNCCLVersion, pay: pay(facts.NCCL{}), caps: []capture{word("version", "NCCL version ")}},
	}},
	{"P", []pattern{
		// Open MPI: the launcher ran the job to its end but a process
		// returned non-zero ("Primary job  terminated normally, but 1
		// process returned / a non-zero exit code.").
		{pre: []string{"Primary job"}, also: "terminated normally, but", typ: facts.EventChildFailed, lvl: facts.LevelError,
			pay: pay(facts.Failure{Launcher: "mpirun"})},
		{pre: []string{"Prefill batch"}, code: (*parser).statPrefill},
		{pre: []string{"Prefix cache hit rate: GPU:"}, code: (*parser).statPrefixCacheV0},
		{pre: []string{"Prefill out of memory"}, typ: facts.EventOOM, lvl: facts.LevelError, pay: pay(facts.OOM{Kind: "kv-cache"})},
		{pre: []string{"Piecewise CUDA Graph failed"}, typ: facts.EventGraphFailed, lvl: facts.LevelError,
			pay: pay(facts.Milestone{Graph: "piecewise CUDA graph"})},
		{pre: []string{"Parent process exited, terminating worker"}, typ: facts.EventShutdown, pay: pay(facts.Server{What: "parent-exited"})},
		{pre: []string{"Profiling CUDA graph memory"}, typ: facts.EventMemoryProfile},
	}},
	{"R", []pattern{
		{pre: []string{"Received sigquit from a child proces"}, typ: facts.EventSigquit, lvl: facts.LevelError},
		{pre: []string{"Rank "}, also: "scheduler is dead", typ: facts.EventChildFailed, lvl: facts.LevelError,
			pay: pay(facts.Failure{What: "scheduler"}), caps: []capture{num("rank", "Rank")}},
		{pre: []string{"Rank "}, also: "scheduler died during initialization", code: takes(ownLevel((*parser).schedulerDied))},
		// The custom all-reduce's capture context, on leaving (also on an
		// exception: it runs in a finally), registers the buffers its
		// graphs use and exchanges them with every rank of the group.
		{pre: []string{"Registering "}, also: "cuda graph addresses", typ: facts.EventCustomAllReduce,
			pay: pay(facts.CustomAllReduce{Enabled: true, What: "graph-buffers"}), caps: []capture{num("addresses", "Registering")}},
		{pre: []string{"Route: "}, code: (*parser).route},
		{pre: []string{"Running FlashInfer autotune"}, typ: facts.EventJITBegin, pay: pay(facts.JIT{What: "flashinfer-autotune"})},
		{pre: []string{"RPC call to "}, code: takes(ownLevel((*parser).rpcTimeout))},
	}},
	{"S", []pattern{
		{pre: []string{"Scheduler hit an exception"}, typ: facts.EventSchedulerCrash, lvl: facts.LevelError,
			pay: pay(facts.Failure{Component: "Scheduler"})},
		{pre: []string{"Sequence group "}, also: "is preempted by PreemptionMode.", typ: facts.EventPreemption, lvl: facts.LevelWarning,
			pay: pay(facts.Pressure{}), caps: []capture{word("mode", "PreemptionMode."), num("total", "total_num_cumulative_preemption=")}},
		{pre: []string{"SpecDecoding metrics:", "Speculative metrics:"}, code: (*parser).statSpecLine},
		{pre: []string{"Scheduler or DataParallelController"}, typ: facts.EventChildFailed, lvl: facts.LevelError,
			pay: pay(facts.Failure{What: "scheduler"}), caps: []capture{num("exit_code", "terminated with")}},
		{pre: []string{"SIGQUIT received"}, typ: facts.EventSigquit, lvl: facts.LevelError},
		{pre: []string{"SIGTERM received"}, typ: facts.EventShutdown, pay: pay(facts.Server{Signal: "SIGTERM"})},
		{pre: []string{"SIGINT received"}, typ: facts.EventShutdown, pay: pay(facts.Server{Signal: "SIGINT"})},
		// "Subprocess scheduler_0 (pid=12345) crashed with exit code -6.
		// Triggering SIGQUIT for cleanup...".
		{pre: []string{"Subprocess "}, also: "crashed with exit code", typ: facts.EventChildFailed, lvl: facts.LevelError,
			pay: pay(facts.Failure{}), caps: []capture{word("name", "Subprocess "), num("pid", "pid="), num("exit_code", "exit code")}},
		{pre: []string{"Starting to load model"}, code: (*parser).loadModel},
		{pre: []string{"Starting vLLM"}, code: (*parser).startingVLLM},
		{pre: []string{"Start of pd disaggregation warmup"}, typ: facts.EventWarmup, pay: pay(facts.Milestone{What: "disaggregation"})},
		{pre: []string{"Skipping CUDA graph capture"}, typ: facts.EventConfigWarning, pay: pay(facts.Notice{CUDAGraphOff: true})},
		{pre: []string{"Segmentation fault"}, typ: facts.EventKilled, lvl: facts.LevelCritical, pay: pay(facts.Failure{Signal: "SIGSEGV"})},
		{pre: []string{"Started server process"}, code: takes((*parser).uvicornStarted)},
	}},
	{"T", []pattern{
		{pre: []string{"The server is fired up and ready to roll"}, typ: facts.EventReady, lvl: facts.LevelInfo, pay: pay(facts.Server{Server: "sglang"})},
		{pre: []string{"Time spent downloading weights"}, code: (*parser).weightsDownload},
		{pre: []string{"Triton kernel JIT compilation during inference"}, code: (*parser).jitDuringInference},
		{pre: []string{"TileLang begins to compile kernel"}, typ: facts.EventJITBegin, pay: pay(facts.JIT{What: "tilelang"})},
		{pre: []string{"TileLang completes"}, typ: facts.EventJITEnd, pay: pay(facts.JIT{What: "tilelang"})},
		{pre: []string{"Try DeepGEMM JIT Compiling for"}, code: (*parser).deepGEMMKernel},
		{pre: []string{"TokenizerManager hit an exception"}, typ: facts.EventSchedulerCrash, lvl: facts.LevelError,
			pay: pay(facts.Failure{Component: "TokenizerManager"})},
		{pre: []string{"TP rank "}, also: "other ranks that didn't finish loading", typ: facts.EventError, lvl: facts.LevelError,
			pay: pay(facts.Failure{What: "load-barrier"})},
		{pre: []string{"The number of required GPUs exceeds the total number of available GPUs"}, typ: facts.EventConfigWarning,
			lvl: facts.LevelWarning, pay: pay(facts.Notice{What: "placement-group"})},
	}},
	{"U", []pattern{
		{pre: []string{"Using model weights format"}, code: (*parser).weightsFormat},
		{pre: []string{"Using cache directory:"}, also: "torch.compile", typ: facts.EventTorchCompile, pay: pay(facts.Compile{Stage: "begin"}),
			caps: []capture{word("cache_dir", "directory: ")}},
		{pre: []string{"Using "}, also: "backend", code: takesIf((*parser).vllmBackend)},
		{pre: []string{"Using FlashAttention version"}, code: takesIf((*parser).vllmBackend)},
		{pre: []string{"Use "}, also: "attention backend", typ: facts.EventAttentionBackend, pay: pay(facts.AttentionBackend{}),
			caps: []capture{word("backend", "Use ")}},
		{pre: []string{"Uvicorn running on"}, code: takes((*parser).uvicornRunning)},
	}},
	{"W", []pattern{
		{pre: []string{"Watchdog timeout"}, code: takes(ownLevel((*parser).watchdog))},
		{pre: []string{"Waiting for creating a placement group"}, typ: facts.EventPlacementWait, lvl: facts.LevelWarning,
			pay: pay(facts.Wait{}), caps: []capture{num("wait_s", "specs for")}},
		{pre: []string{"Worker proc "}, also: "died unexpectedly", typ: facts.EventWorkerDied, lvl: facts.LevelError,
			pay: pay(facts.Failure{}), caps: []capture{word("worker", "Worker proc ")}},
		{pre: []string{"WorkerProc was terminated"}, typ: facts.EventShutdown, pay: pay(facts.Server{What: "worker-terminated"})},
		{pre: []string{"WorkerProc failed to start"}, typ: facts.EventEngineInitFailed, lvl: facts.LevelError, pay: pay(facts.Failure{What: "worker"})},
		{pre: []string{"Warming up"}, typ: facts.EventWarmup},
	}},
	{"t", []pattern{
		{pre: []string{"torch.compile takes", "torch.compile took"}, typ: facts.EventTorchCompileEnd, pay: pay(facts.Milestone{}),
			caps: []capture{num("elapsed_s", " takes", " took")}},
		{pre: []string{"the current vLLM instance can use total_gpu_memory"}, typ: facts.EventMemoryProfile, pay: pay(facts.MemoryProfile{}),
			caps: []capture{num("total_gib", "total_gpu_memory ("), num("utilization", "gpu_memory_utilization ("), num("usable_gib", ") = ")}},
	}},
	{"mp", []pattern{
		{pre: []string{""}, code: takesIf(ownLevel((*parser).mpiReport)), next: true},
		{pre: []string{"max_total_num_tokens="}, code: (*parser).tokenBudget},
		{pre: []string{"model weights take"}, typ: facts.EventMemoryProfile, pay: pay(facts.MemoryProfile{}),
			caps: []capture{num("weights_gib", "model weights take"), num("non_torch_gib", "non_torch_memory takes"),
				num("activation_gib", "activation peak memory takes"), num("kv_cache_gib", "reserved for KV Cache is")}},
	}},
	{"#", []pattern{
		{pre: []string{"# cuda blocks:", "# GPU blocks:"}, typ: facts.EventKVCacheSize, pay: pay(facts.KVCache{}),
			caps: []capture{num("gpu_blocks", "blocks:"), num("cpu_blocks", "# CPU blocks:")}},
	}},
	{"i", []pattern{
		{pre: []string{"init engine"}, also: "took", typ: facts.EventInitEngineDone, pay: pay(facts.Milestone{}),
			caps: []capture{num("elapsed_s", "took"), num("compilation_s", "compilation:")}},
	}},
	{"n", []pattern{
		{pre: []string{"non-default args: {"}, code: (*parser).nonDefaultArgs},
	}},
	{"a", []pattern{
		{pre: []string{"args: Namespace("}, code: (*parser).namespaceArgs},
	}},
	{"r", []pattern{
		{pre: []string{"reading GPU P2P access cache from"}, typ: facts.EventP2P, pay: pay(facts.P2P{}), caps: []capture{rest("cache")}},
		// "rank 1 in world size 4 is assigned as DP rank 0, PP rank 0, TP
		// rank 1, EP rank 1".
		{pre: []string{"rank "}, also: " is assigned as ", typ: facts.EventRankAssigned, pay: pay(facts.RankInfo{}),
			caps: []capture{num("rank", "rank"), num("world_size", "world size"), num("dp", "DP rank"), num("pp", "PP rank"),
				num("pcp", "PCP rank"), num("tp", "TP rank"), num("ep", "EP rank")}},
	}},
	{"s", []pattern{
		{pre: []string{"server_args=ServerArgs("}, code: (*parser).serverArgs},
		{pre: []string{"sglang is using nccl=="}, typ: facts.EventNCCLVersion, pay: pay(facts.NCCL{}), caps: []capture{rest("version")}},
	}},
	{"v", []pattern{
		{pre: []string{"vLLM API server version "}, typ: facts.EventVersion, pay: pay(facts.Version{Engine: "vllm"}), caps: []capture{rest("version")}},
		{pre: []string{"vLLM is using nccl=="}, typ: facts.EventNCCLVersion, pay: pay(facts.NCCL{}), caps: []capture{rest("version")}},
	}},
	{"w", []pattern{
		{pre: []string{"world_size="}, also: "distributed_init_method=", code: (*parser).distInitBegin},
	}},
	{"[", []pattern{
		{pre: []string{"[shutdown] "}, code: (*parser).shutdownNote},
		{pre: []string{"[AR] "}, also: "custom AR disabled", typ: facts.EventCustomAllReduce, pay: pay(facts.CustomAllReduce{Enabled: false})},
		{pre: []string{"[AR] Using "}, typ: facts.EventCustomAllReduce, pay: pay(facts.CustomAllReduce{Enabled: true})},
		{pre: []string{"[AR] "}, typ: facts.EventCustomAllReduce, pay: pay(facts.CustomAllReduce{})},
	}},
	{"'", []pattern{
		{pre: []string{""}, code: (*parser).flagDeprecated},
	}},
	{"*", []pattern{
		{pre: []string{"*** SIGTERM received"}, typ: facts.EventSignal, lvl: facts.LevelWarning, pay: pay(facts.Server{Signal: "SIGTERM"})},
		{pre: []string{"*** SIGKILL"}, code: (*parser).starSignal},
		{pre: []string{"*** SIGSEGV received"}, typ: facts.EventSignal, lvl: facts.LevelWarning, pay: pay(facts.Server{Signal: "SIGSEGV"})},
		{pre: []string{"*** SIGABRT received"}, typ: facts.EventSignal, lvl: facts.LevelWarning, pay: pay(facts.Server{Signal: "SIGABRT"})},
	}},
	{"0123456789", []pattern{
		{pre: []string{""}, code: (*parser).engineStat},
	}},
	{"f", []pattern{
		// "flashinfer.jit: msg" behind its own formatter's header, or
		// "flashinfer.jit:msg" as logging's "%(name)s:%(message)s" puts it.
		{pre: []string{"flashinfer.jit:"}, code: (*parser).flashinferLine},
	}},
	{"/", []pattern{
		{pre: []string{""}, code: takesIf(ownLevel((*parser).pyWarning))},
	}},
}
