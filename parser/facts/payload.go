package facts

import (
	"encoding/json"
	"strconv"
)

// Payload is what a recognized line says beyond its type: the typed fields
// of one kind of line. Which payload goes with which event type is PayloadOf's
// table; the parser fills it, rules read its fields.
//
// Every field has a snake_case name (its json tag), the name packs match on
// and the name the JSON output uses. Numbers are Num, so that "not printed"
// differs from zero; flags are bool; the rest string.
type Payload interface{ payload() }

// Num is a number a line may or may not print.
type Num struct {
	V  float64
	OK bool
}

// N is a printed number.
func N(v float64) Num { return Num{V: v, OK: true} }

// Get returns the number and whether the line printed it.
func (n Num) Get() (float64, bool) { return n.V, n.OK }

// IsZero reports an absent number, for omitzero.
func (n Num) IsZero() bool { return !n.OK }

// String is the number as the old by-name fields printed it ("" when absent).
func (n Num) String() string {
	if !n.OK {
		return ""
	}
	return strconv.FormatFloat(n.V, 'g', -1, 64)
}

// MarshalJSON writes the bare number.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.OK {
		return []byte("null"), nil
	}
	return json.Marshal(n.V)
}

// Settings is a settings dump or a pasted launch command (server-args,
// non-default-args, cmdline): the engine's own flag names, so a map. Values
// are Python literals converted: string, float64 or bool; secrets "<set>".
type Settings struct {
	Values map[string]any `json:"values,omitempty"`
	// AllArgs is set for a dump of every argument (vLLM's "args:
	// Namespace(...)"), not only the non-default ones.
	AllArgs bool `json:"all_args,omitempty"`
}

// EngineConfig is vLLM's "Initializing a V1 LLM engine (v0.10.2) with
// config: model=..., ..." (engine-init).
type EngineConfig struct {
	Version       string         `json:"version,omitempty"`
	EngineVersion string         `json:"engine_version,omitempty"` // V0 or V1
	Config        map[string]any `json:"config,omitempty"`
}

// Version is an engine's version line (version).
type Version struct {
	Engine  string `json:"engine,omitempty"`
	Version string `json:"version,omitempty"`
}

// AttentionBackend is the attention backend an engine chose (attention-backend).
type AttentionBackend struct {
	Backend       string `json:"backend,omitempty"`
	Candidates    string `json:"candidates,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	// Default is set when the engine fell back to its default.
	Default   bool `json:"default,omitempty"`
	FAVersion Num  `json:"fa_version,omitzero"`
}

// Notice is a configuration warning or a deprecation (config-warning,
// deprecation).
type Notice struct {
	What        string `json:"what,omitempty"`
	Fallback    string `json:"fallback,omitempty"` // the engine version fallen back to
	Replacement string `json:"replacement,omitempty"`
	// CUDAGraphOff is set when the line says CUDA graphs are disabled.
	CUDAGraphOff bool `json:"cuda_graph_off,omitempty"`
}

// Milestone is a startup stage's begin or end with what it printed of time
// and memory (dist-init-end, load-begin, load-end, weights-format,
// weights-download, mem-pool-end, graph-capture-*, torch-compile-end,
// init-engine-done, warmup).
type Milestone struct {
	What   string `json:"what,omitempty"`
	Stage  string `json:"stage,omitempty"`
	Model  string `json:"model,omitempty"`
	Graph  string `json:"graph,omitempty"` // cuda graph, piecewise, draft
	Engine string `json:"engine,omitempty"`
	// Backend is the graph-capture backend a line names.
	Backend string `json:"backend,omitempty"`
	// Type, DType and Quant are SGLang's "Load weight end. type=...,
	// dtype=..., quant=...": the model class, dtype, quantization.
	Type   string `json:"type,omitempty"`
	DType  string `json:"dtype,omitempty"`
	Quant  string `json:"quant,omitempty"`
	Fmt    string `json:"fmt,omitempty"`
	Format string `json:"format,omitempty"` // weights-format: safetensors, pt, ...
	// Done is set on the line that ends a stage begun by another of the
	// same type (warmup).
	Done bool `json:"done,omitempty"`

	ElapsedS     Num `json:"elapsed_s,omitzero"`
	CompilationS Num `json:"compilation_s,omitzero"`
	AvailMemGB   Num `json:"avail_mem_gb,omitzero"`
	MemUsageGB   Num `json:"mem_usage_gb,omitzero"`
	// MemGiB and MemGB are vLLM's "took 14.99 GiB" and "took 14.99 GB".
	MemGiB Num `json:"mem_gib,omitzero"`
	MemGB  Num `json:"mem_gb,omitzero"`
}

// Compile is a torch.compile step (torch-compile).
type Compile struct {
	What     string `json:"what,omitempty"`  // autotune
	Stage    string `json:"stage,omitempty"` // dynamo, compile, load
	CacheDir string `json:"cache_dir,omitempty"`
	Cached   bool   `json:"cached,omitempty"`
	AOT      bool   `json:"aot,omitempty"`
	CompileS Num    `json:"compile_s,omitzero"`
	DynamoS  Num    `json:"dynamo_s,omitzero"`
	LoadS    Num    `json:"load_s,omitzero"`
}

// Progress is a progress bar's last state (load-progress,
// graph-capture-progress).
type Progress struct {
	Desc     string `json:"desc,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Done     bool   `json:"done"`
	N        Num    `json:"n,omitzero"`
	Total    Num    `json:"total,omitzero"`
	ElapsedS Num    `json:"elapsed_s,omitzero"`
}

// JIT is a just-in-time build step (jit-begin, jit-end, jit-failed,
// jit-progress).
type JIT struct {
	What   string `json:"what,omitempty"` // flashinfer, deepgemm, torch-extension, triton, ...
	Op     string `json:"op,omitempty"`
	Tool   string `json:"tool,omitempty"` // ninja, nvcc, ptxas, ...
	Module string `json:"module,omitempty"`
	Kernel string `json:"kernel,omitempty"`
	N      Num    `json:"n,omitzero"`
	Total  Num    `json:"total,omitzero"`
}

// KVCache is what an engine printed of its KV cache (kv-cache-alloc,
// kv-cache-size, available-kv, max-concurrency).
type KVCache struct {
	Engine           string `json:"engine,omitempty"`
	DType            string `json:"dtype,omitempty"`
	Tokens           Num    `json:"tokens,omitzero"`
	KSizeGB          Num    `json:"k_size_gb,omitzero"`
	VSizeGB          Num    `json:"v_size_gb,omitzero"`
	KVSizeGB         Num    `json:"kv_size_gb,omitzero"`
	GPUBlocks        Num    `json:"gpu_blocks,omitzero"`
	CPUBlocks        Num    `json:"cpu_blocks,omitzero"`
	GiB              Num    `json:"gib,omitzero"`
	Concurrency      Num    `json:"concurrency,omitzero"`
	TokensPerRequest Num    `json:"tokens_per_request,omitzero"`
}

// TokenBudget is SGLang's "max_total_num_tokens=..., chunked_prefill_size=...,
// ..." (max-total-tokens).
type TokenBudget struct {
	MaxTotalNumTokens  Num `json:"max_total_num_tokens,omitzero"`
	ChunkedPrefillSize Num `json:"chunked_prefill_size,omitzero"`
	MaxPrefillTokens   Num `json:"max_prefill_tokens,omitzero"`
	MaxRunningRequests Num `json:"max_running_requests,omitzero"`
	ContextLen         Num `json:"context_len,omitzero"`
	AvailableGPUMemGB  Num `json:"available_gpu_mem_gb,omitzero"`
}

// MemoryProfile is vLLM's memory profiling summary (memory-profile) and its
// "not enough memory for the KV cache" error (kv-insufficient). Sizes in GiB.
type MemoryProfile struct {
	TotalGiB      Num `json:"total_gib,omitzero"`
	Utilization   Num `json:"utilization,omitzero"`
	DesiredGiB    Num `json:"desired_gib,omitzero"`
	FreeGiB       Num `json:"free_gib,omitzero"`
	UsableGiB     Num `json:"usable_gib,omitzero"`
	WeightsGiB    Num `json:"weights_gib,omitzero"`
	NonTorchGiB   Num `json:"non_torch_gib,omitzero"`
	ActivationGiB Num `json:"activation_gib,omitzero"`
	CUDAGraphGiB  Num `json:"cuda_graph_gib,omitzero"`
	KVCacheGiB    Num `json:"kv_cache_gib,omitzero"`
	ElapsedS      Num `json:"elapsed_s,omitzero"`

	NeededGiB       Num `json:"needed_gib,omitzero"`
	AvailableGiB    Num `json:"available_gib,omitzero"`
	MaxSeqLen       Num `json:"max_seq_len,omitzero"`
	EstimatedMaxLen Num `json:"estimated_max_len,omitzero"`
}

// OOM is an out-of-memory error (oom). Kind is cuda, kv-cache or
// startup-free-memory.
type OOM struct {
	Kind                   string `json:"kind,omitempty"`
	GPU                    Num    `json:"gpu,omitzero"`
	TriedGiB               Num    `json:"tried_gib,omitzero"`
	TotalGiB               Num    `json:"total_gib,omitzero"`
	FreeGiB                Num    `json:"free_gib,omitzero"`
	InUseGiB               Num    `json:"in_use_gib,omitzero"`
	AllocatedGiB           Num    `json:"allocated_gib,omitzero"`
	ReservedGiB            Num    `json:"reserved_gib,omitzero"`
	ReservedUnallocatedGiB Num    `json:"reserved_unallocated_gib,omitzero"`
	DesiredGiB             Num    `json:"desired_gib,omitzero"`
	Utilization            Num    `json:"utilization,omitzero"`
}

// RankInfo is a process's place in the distributed setup as a line prints it (dist-init-begin,
// rank-assigned).
type RankInfo struct {
	Backend    string `json:"backend,omitempty"`
	InitMethod string `json:"distributed_init_method,omitempty"`
	Rank       Num    `json:"rank,omitzero"`
	LocalRank  Num    `json:"local_rank,omitzero"`
	WorldSize  Num    `json:"world_size,omitzero"`
	DP         Num    `json:"dp,omitzero"`
	PP         Num    `json:"pp,omitzero"`
	PCP        Num    `json:"pcp,omitzero"`
	TP         Num    `json:"tp,omitzero"`
	EP         Num    `json:"ep,omitzero"`
}

// NCCL is an NCCL line (nccl-info, nccl-warn, nccl-error, nccl-version): the
// "host:pid:tid [rank]" prefix NCCL prints and what the line says.
type NCCL struct {
	Host      string `json:"host,omitempty"`
	PID       Num    `json:"pid,omitzero"`
	Rank      Num    `json:"rank,omitzero"`
	What      string `json:"what,omitempty"` // init-complete, ...
	CommID    string `json:"comm_id,omitempty"`
	Transport string `json:"transport,omitempty"`
	Version   string `json:"version,omitempty"`
	// Code, File and Result are an error trace's "init.cc:840 -> 3": the
	// ncclResult_t, where, and its name; Chain is the files it ran through.
	Code   Num    `json:"code,omitzero"`
	File   string `json:"file,omitempty"`
	Result string `json:"result,omitempty"`
	Chain  string `json:"chain,omitempty"`
}

// Collective is a collective that timed out or a watchdog that stopped
// (collective-timeout).
type Collective struct {
	Kind          string `json:"kind,omitempty"` // heartbeat for a stuck watchdog
	OpType        string `json:"op_type,omitempty"`
	Rank          Num    `json:"rank,omitzero"`    // the process's global rank
	PGRank        Num    `json:"pg_rank,omitzero"` // its rank in the process group
	SeqNum        Num    `json:"seq_num,omitzero"`
	NumelIn       Num    `json:"numel_in,omitzero"`
	NumelOut      Num    `json:"numel_out,omitzero"`
	TimeoutMs     Num    `json:"timeout_ms,omitzero"`
	RanForMs      Num    `json:"ran_for_ms,omitzero"`
	LastEnqueued  Num    `json:"last_enqueued,omitzero"`
	LastCompleted Num    `json:"last_completed,omitzero"`
}

// Gloo is a Gloo rendezvous progress line (gloo).
type Gloo struct {
	Rank      Num `json:"rank,omitzero"`
	Connected Num `json:"connected,omitzero"`
	Expected  Num `json:"expected,omitzero"`
}

// HTTP is an access-log line or a route listing (request, route).
type HTTP struct {
	Method  string `json:"method,omitempty"`
	Path    string `json:"path,omitempty"`
	Methods string `json:"methods,omitempty"`
	Status  Num    `json:"status,omitzero"`
}

// Server is the HTTP server's life: starting, ready, shutting down, a
// signal received (http-start, ready, shutdown, signal).
type Server struct {
	Server string `json:"server,omitempty"` // uvicorn, ...
	Engine string `json:"engine,omitempty"`
	Stage  string `json:"stage,omitempty"`
	URL    string `json:"url,omitempty"`
	What   string `json:"what,omitempty"`
	Signal string `json:"signal,omitempty"`
	PID    Num    `json:"pid,omitzero"`
}

// Failure is a process or engine failing (error, engine-init-failed,
// child-failed, worker-died, engine-dead, scheduler-exception, killed,
// watchdog-timeout).
type Failure struct {
	What        string `json:"what,omitempty"`
	Signal      string `json:"signal,omitempty"`
	Component   string `json:"component,omitempty"`
	Name        string `json:"name,omitempty"`
	Proc        string `json:"proc,omitempty"`
	Worker      string `json:"worker,omitempty"`
	Engine      string `json:"engine,omitempty"`
	Launcher    string `json:"launcher,omitempty"`
	ExcType     string `json:"exc_type,omitempty"`
	ExitType    string `json:"exit_type,omitempty"`
	FailedProcs string `json:"failed_procs,omitempty"`
	ExitCode    Num    `json:"exit_code,omitzero"`
	PID         Num    `json:"pid,omitzero"`
	Rank        Num    `json:"rank,omitzero"`
	TimeoutS    Num    `json:"timeout_s,omitzero"`
	// Soft is SGLang's soft watchdog, which warns and goes on.
	Soft bool `json:"soft,omitempty"`
}

// TracebackInfo is what the parser knows of a traceback beyond its frames
// (traceback).
type TracebackInfo struct {
	What string `json:"what,omitempty"` // cuda-check for a headless CUDA check
	// Headless is set for a traceback whose "Traceback (most recent call
	// last):" line is missing; Incomplete for one cut off.
	Headless   bool `json:"headless,omitempty"`
	Incomplete bool `json:"incomplete,omitempty"`
	// FirstExcType and FirstExcMsg are the first exception of a chain.
	FirstExcType string `json:"first_exc_type,omitempty"`
	FirstExcMsg  string `json:"first_exc_msg,omitempty"`
}

// CustomAllReduce is the custom all-reduce being set up or disabled
// (custom-allreduce).
type CustomAllReduce struct {
	Enabled   bool   `json:"enabled"`
	Reason    string `json:"reason,omitempty"`
	What      string `json:"what,omitempty"` // graph-buffers
	Addresses Num    `json:"addresses,omitzero"`
}

// P2P is a GPU peer-access check (p2p).
type P2P struct {
	Detail string `json:"detail,omitempty"`
	Cache  string `json:"cache,omitempty"`
}

// Benchmark is a benchmark's summary result (benchmark).
type Benchmark struct {
	Metric string `json:"metric,omitempty"`
	Value  Num    `json:"value,omitzero"`
	Unit   string `json:"unit,omitempty"`
	Label  string `json:"label,omitempty"` // the paste's "Before"/"After"
}

// Pressure is the scheduler giving back memory under load (retract,
// preemption).
type Pressure struct {
	Mode            string `json:"mode,omitempty"`
	Total           Num    `json:"total,omitzero"`
	Retracted       Num    `json:"retracted,omitzero"`
	NewTokensGained Num    `json:"new_tokens_gained,omitzero"`
	RatioBefore     Num    `json:"ratio_before,omitzero"`
	RatioAfter      Num    `json:"ratio_after,omitzero"`
}

// Wait is a process waiting on another (placement-wait, shm-broadcast-wait,
// rpc-timeout).
type Wait struct {
	What   string `json:"what,omitempty"` // health-check
	Method string `json:"method,omitempty"`
	WaitS  Num    `json:"wait_s,omitzero"`
}

// CodeSite is a warning that names the code that printed it
// (python-warning, torch-log).
type CodeSite struct {
	Category string `json:"category,omitempty"`
	File     string `json:"file,omitempty"`
	Line     Num    `json:"line,omitzero"`
	Rank     Num    `json:"rank,omitzero"`
}

func (*Settings) payload()         {}
func (*EngineConfig) payload()     {}
func (*Version) payload()          {}
func (*AttentionBackend) payload() {}
func (*Notice) payload()           {}
func (*Milestone) payload()        {}
func (*Compile) payload()          {}
func (*Progress) payload()         {}
func (*JIT) payload()              {}
func (*KVCache) payload()          {}
func (*TokenBudget) payload()      {}
func (*MemoryProfile) payload()    {}
func (*OOM) payload()              {}
func (*RankInfo) payload()         {}
func (*NCCL) payload()             {}
func (*Collective) payload()       {}
func (*Gloo) payload()             {}
func (*HTTP) payload()             {}
func (*Server) payload()           {}
func (*Failure) payload()          {}
func (*TracebackInfo) payload()    {}
func (*CustomAllReduce) payload()  {}
func (*P2P) payload()              {}
func (*Benchmark) payload()        {}
func (*Pressure) payload()         {}
func (*Wait) payload()             {}
func (*CodeSite) payload()         {}

// PayloadOf returns a new, empty payload of the type that goes with t, or nil
// for the types that carry none. It is the schema: the parser fills only
// this type for t (a test checks every fixture), packs' field names are this
// type's.
func PayloadOf(t EventType) Payload {
	switch t {
	case EventServerArgs, EventNonDefaultArgs, EventCmdline:
		return &Settings{}
	case EventEngineInit:
		return &EngineConfig{}
	case EventVersion:
		return &Version{}
	case EventAttentionBackend:
		return &AttentionBackend{}
	case EventConfigWarning, EventDeprecation:
		return &Notice{}
	case EventDistInitEnd, EventLoadBegin, EventLoadEnd, EventWeightsFormat, EventWeightsDownload,
		EventMemPoolEnd, EventGraphBegin, EventGraphEnd, EventGraphFailed, EventTorchCompileEnd,
		EventInitEngineDone, EventWarmup:
		return &Milestone{}
	case EventTorchCompile:
		return &Compile{}
	case EventLoadProgress, EventGraphProgress:
		return &Progress{}
	case EventJITBegin, EventJITEnd, EventJITFailed, EventJITProgress:
		return &JIT{}
	case EventKVCacheAlloc, EventKVCacheSize, EventAvailableKV, EventMaxConcurrency:
		return &KVCache{}
	case EventMaxTotalTokens:
		return &TokenBudget{}
	case EventMemoryProfile, EventKVInsufficient:
		return &MemoryProfile{}
	case EventOOM:
		return &OOM{}
	case EventDistInitBegin, EventRankAssigned:
		return &RankInfo{}
	case EventNCCLInfo, EventNCCLWarn, EventNCCLError, EventNCCLVersion:
		return &NCCL{}
	case EventCollectiveTimout:
		return &Collective{}
	case EventGloo:
		return &Gloo{}
	case EventRequest, EventRoute:
		return &HTTP{}
	case EventHTTPStart, EventReady, EventShutdown, EventSignal:
		return &Server{}
	case EventError, EventEngineInitFailed, EventChildFailed, EventWorkerDied, EventEngineDead,
		EventSchedulerCrash, EventKilled, EventWatchdogTimeout:
		return &Failure{}
	case EventTraceback:
		return &TracebackInfo{}
	case EventCustomAllReduce:
		return &CustomAllReduce{}
	case EventP2P:
		return &P2P{}
	case EventBenchmark:
		return &Benchmark{}
	case EventRetract, EventPreemption:
		return &Pressure{}
	case EventPlacementWait, EventSHMWait, EventRPCTimeout:
		return &Wait{}
	case EventPythonWarning, EventTorchLog:
		return &CodeSite{}
	}
	return nil
}
