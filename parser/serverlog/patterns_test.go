package serverlog

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// patternCase is a line of one of table's patterns and what it must parse
// into: a real line from the fixtures, the package's tests or the error
// catalog where one exists, else rendered from the message's format (the
// name says so). fields are all the payload's fields.
type patternCase struct {
	name   string
	line   string
	typ    facts.EventType
	level  facts.Level
	fields map[string]any
}

// patternCases holds a line for every prefix of every pattern, in the
// table's order.
var patternCases = []patternCase{
	{name: "All deep_gemm operations loaded successfully", line: "All deep_gemm operations loaded successfully!",
		typ: facts.EventJITEnd, fields: map[string]any{"what": "deepgemm"}},
	{name: "Available KV cache memory:", line: "2026-05-12T08:00:40.000000000Z (Worker_TP0 pid=90) INFO 05-12 08:00:40 [gpu_worker.py:276] Available KV cache memory: 55.10 GiB",
		typ: facts.EventAvailableKV, level: facts.LevelInfo, fields: map[string]any{"gib": 55.1}},
	{name: "Building extension module (format)", line: "Building extension module fused_adam...",
		typ: facts.EventJITBegin, fields: map[string]any{"module": "fused_adam", "what": "torch-extension"}},
	{name: "Compiling a graph for", line: "(EngineCore pid=6890) INFO 08-03 21:49:03 [backends.py:393] Compiling a graph for compile range (1, 2048) takes 20.64 s",
		typ: facts.EventTorchCompile, level: facts.LevelInfo, fields: map[string]any{"compile_s": 20.64, "stage": "compile"}},
	{name: "Capturing cudagraphs for decoding", line: "INFO 01-22 18:25:22 model_runner.py:1415] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.",
		typ: facts.EventGraphBegin, level: facts.LevelInfo, fields: map[string]any{"graph": "cuda graph"}},
	{name: "Capturing the model for CUDA graphs", line: "INFO 10-22 07:40:23 model_runner.py:1395] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI.",
		typ: facts.EventGraphBegin, level: facts.LevelInfo, fields: map[string]any{"graph": "cuda graph"}},
	{name: "Child process unexpectedly failed", line: "[2025-06-01 10:00:00] Child process unexpectedly failed with exitcode=256. pid=1234",
		typ: facts.EventChildFailed, level: facts.LevelError, fields: map[string]any{"exit_code": 256.0, "pid": 1234.0}},
	{name: "Creating FlashInfer allreduce workspace…JIT (format)", line: "[2025-10-01 10:00:00 TP0] Creating FlashInfer allreduce workspace (the first run JIT-compiles its kernels)",
		typ: facts.EventJITBegin, level: facts.LevelInfo, fields: map[string]any{"what": "flashinfer"}},
	{name: "Chat template warmup completed", line: "(APIServer pid=229492) INFO 05-16 21:40:35 [serving.py:210] Chat template warmup completed in 817.0ms",
		typ: facts.EventWarmup, level: facts.LevelInfo, fields: map[string]any{"what": "chat-template"}},
	{name: "Cannot use FlashAttention", line: "ds-chat-completions  | INFO 01-29 01:53:21 cuda.py:185] Cannot use FlashAttention-2 backend for FP8 KV cache.",
		typ: facts.EventConfigWarning, level: facts.LevelInfo},
	{name: "Compute Capability < 8.0 is not supported by the V1 Engine", line: "WARNING 05-26 18:53:44 [arg_utils.py:1658] Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0. ",
		typ: facts.EventConfigWarning, level: facts.LevelWarning, fields: map[string]any{"fallback": "V0"}},
	{name: "CUDA graph is disabled (format)", line: "WARNING 06-01 10:00:00 [config.py:100] CUDA graph is disabled for this model.",
		typ: facts.EventConfigWarning, level: facts.LevelWarning, fields: map[string]any{"cuda_graph_off": true}},
	{name: "Cuda graph is disabled (format)", line: "[2025-06-01 10:00:00] Cuda graph is disabled because of using torch native attention backend",
		typ: facts.EventConfigWarning, level: facts.LevelInfo, fields: map[string]any{"cuda_graph_off": true}},
	{name: "Cudagraph is disabled (format)", line: "WARNING 06-01 10:00:00 [compilation.py:600] Cudagraph is disabled under eager mode",
		typ: facts.EventConfigWarning, level: facts.LevelWarning, fields: map[string]any{"cuda_graph_off": true}},
	{name: "Dynamo bytecode transform time:", line: "INFO 05-12 02:45:47 [backends.py:430] Dynamo bytecode transform time: 11.47 s",
		typ: facts.EventTorchCompile, level: facts.LevelInfo, fields: map[string]any{"dynamo_s": 11.47, "stage": "dynamo"}},
	{name: "Directly load the compiled graph", line: "INFO 05-12 02:45:56 [backends.py:118] Directly load the compiled graph(s) for shape None from the cache, took 8.559 s",
		typ: facts.EventTorchCompile, level: facts.LevelInfo, fields: map[string]any{"cached": true, "load_s": 8.559, "stage": "load"}},
	{name: "Directly load AOT compilation", line: "(EngineCore_DP0 pid=230015) INFO 05-16 21:40:13 [decorators.py:465] Directly load AOT compilation from path /scratch/vjd5zr/.cache/vllm/torch_compile_cache/torch_aot_compile/8bcfa2022c7515057db3e6430cbd55933e9db4f08aad3e63b22632890c8737c4/rank_0_0/model",
		typ: facts.EventTorchCompile, level: facts.LevelInfo, fields: map[string]any{"aot": true, "cached": true, "stage": "load"}},
	{name: "Decode out of memory", line: "[2026-05-27 10:00:00 TP0] Decode out of memory. Try to lower your batch size.",
		typ: facts.EventOOM, level: facts.LevelError, fields: map[string]any{"kind": "kv-cache"}},
	{name: "DetokenizerManager hit an exception", line: "[2026-05-29 12:21:03] DetokenizerManager hit an exception: Traceback (most recent call last):",
		typ: facts.EventSchedulerCrash, level: facts.LevelError, fields: map[string]any{"component": "DetokenizerManager"}},
	{name: "DataParallelController hit an exception (format)", line: "[2025-06-01 10:00:00] DataParallelController hit an exception: Traceback (most recent call last):",
		typ: facts.EventSchedulerCrash, level: facts.LevelError, fields: map[string]any{"component": "DataParallelController"}},
	{name: "Disaggregation warmup (format)", line: "[2025-06-01 10:00:00] Disaggregation warmup request sent",
		typ: facts.EventWarmup, level: facts.LevelInfo, fields: map[string]any{"what": "disaggregation"}},
	{name: "Engine core proc …died unexpectedly", line: "(APIServer pid=215332) ERROR 09-05 01:15:59 [core_client.py:562] Engine core proc EngineCore_0 died unexpectedly, shutting down client.",
		typ: facts.EventEngineDead, level: facts.LevelError, fields: map[string]any{"proc": "EngineCore_0"}},
	{name: "Entering DeepGEMM JIT Pre-Compile session", line: "[2026-05-27 10:00:00 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.",
		typ: facts.EventJITBegin, level: facts.LevelInfo, fields: map[string]any{"what": "deepgemm"}},
	{name: "EngineCore failed to start", line: "(EngineCore pid=6890) ERROR 08-03 21:49:23 [core.py:1231] EngineCore failed to start.",
		typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "engine-core"}},
	{name: "EngineCore encountered a fatal error", line: "2026-05-12T08:06:01.000000000Z (EngineCore_DP0 pid=77) ERROR 05-12 08:06:01 [core.py:968] EngineCore encountered a fatal error.",
		typ: facts.EventEngineDead, level: facts.LevelError},
	{name: "Estimated CUDA graph memory:", line: "(EngineCore pid=6890) INFO 08-03 21:49:23 [gpu_model_runner.py:6639] Estimated CUDA graph memory: 2.55 GiB total",
		typ: facts.EventMemoryProfile, level: facts.LevelInfo, fields: map[string]any{"cuda_graph_gib": 2.55}},
	{name: "End of disaggregation warmup (format)", line: "[2025-06-01 10:00:05] End of disaggregation warmup with status 200",
		typ: facts.EventWarmup, level: facts.LevelInfo, fields: map[string]any{"done": true, "what": "disaggregation"}},
	{name: "Emitting ninja build file (format)", line: "Emitting ninja build file /root/.cache/torch_extensions/py310_cu121/fused_adam/build.ninja...",
		typ: facts.EventJITBegin, fields: map[string]any{"what": "torch-extension"}},
	{name: "Exception: WorkerProc initialization failed", line: "(EngineCore pid=395145) ERROR 06-03 12:30:47 [core.py:1165] Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause.",
		typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "worker"}},
	{name: "FlashInfer autotune completed (format)", line: "[2025-06-01 10:00:00 TP0] FlashInfer autotune completed.",
		typ: facts.EventJITEnd, level: facts.LevelInfo, fields: map[string]any{"what": "flashinfer-autotune"}},
	{name: "Fatal Python error", line: "(RayWorker pid=3554640) Fatal Python error: Bus error",
		typ: facts.EventKilled, level: facts.LevelCritical, fields: map[string]any{"what": "fatal-python-error"}},
	{name: "GPU KV cache size:", line: "2026-05-12T08:00:41.000000000Z (EngineCore_DP0 pid=77) INFO 05-12 08:00:41 [kv_cache_utils.py:1013] GPU KV cache size: 802,160 tokens",
		typ: facts.EventKVCacheSize, level: facts.LevelInfo, fields: map[string]any{"tokens": 802160.0}},
	{name: "Graph capturing finished", line: "INFO 01-22 18:25:37 model_runner.py:1535] Graph capturing finished in 15 secs, took 0.29 GiB",
		typ: facts.EventGraphEnd, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 15.0, "graph": "cuda graph", "mem_gib": 0.29}},
	{name: "Gracefully exiting (format)", line: "[2025-06-01 10:00:00] Gracefully exiting...",
		typ: facts.EventShutdown, level: facts.LevelInfo, fields: map[string]any{"what": "graceful-exit"}},
	{name: "Health check failed", line: "[2026-05-27 10:00:00] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 10:00:00. last_heartbeat time: 09:58:12",
		typ: facts.EventRPCTimeout, level: facts.LevelWarning, fields: map[string]any{"what": "health-check"}},
	{name: "Init torch distributed begin", line: "[2025-04-03 19:58:58 DP0 TP0] Init torch distributed begin.",
		typ: facts.EventDistInitBegin, level: facts.LevelInfo},
	{name: "Initialization failed…warmup", line: "[2025-03-05 10:34:48] Initialization failed. warmup error: Traceback (most recent call last):",
		typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "warmup"}},
	{name: "Initialization failed (format)", line: "[2025-06-01 10:00:00] Initialization failed. Check the logs above.",
		typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "init"}},
	{name: "Initial profiling/warmup run took", line: "(EngineCore pid=6890) INFO 08-03 21:49:09 [monitor.py:81] Initial profiling/warmup run took 2.90 s",
		typ: facts.EventWarmup, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 2.9, "what": "profiling"}},
	{name: "KV Cache is allocated", line: "[2026-02-26 05:35:08 TP7] KV Cache is allocated. #tokens: 3262823, KV size: 186.77 GB",
		typ: facts.EventKVCacheAlloc, level: facts.LevelInfo, fields: map[string]any{"kv_size_gb": 186.77, "tokens": 3.262823e+06}},
	{name: "KV Cache is allocated (MHA)", line: "[2026-08-01 23:40:01] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 148717, K size: 10.21 GB, V size: 10.21 GB",
		typ: facts.EventKVCacheAlloc, level: facts.LevelInfo, fields: map[string]any{"dtype": "torch.bfloat16", "tokens": 148717.0, "k_size_gb": 10.21, "v_size_gb": 10.21}},
	{name: "Load weight begin", line: "[2025-04-03 19:59:00 DP0 TP0] Load weight begin. avail mem=77.43 GB",
		typ: facts.EventLoadBegin, level: facts.LevelInfo, fields: map[string]any{"avail_mem_gb": 77.43}},
	{name: "Loading weights took", line: "2026-05-12T08:00:20.000000000Z (Worker_TP0 pid=90) INFO 05-12 08:00:20 [default_loader.py:262] Loading weights took 3.10 seconds",
		typ: facts.EventLoadEnd, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 3.1, "stage": "weights"}},
	{name: "Loading model weights took", line: "INFO 01-22 18:25:17 model_runner.py:1099] Loading model weights took 7.1217 GB",
		typ: facts.EventLoadEnd, level: facts.LevelInfo, fields: map[string]any{"mem_gb": 7.1217, "stage": "model"}},
	{name: "Loading extension module (format)", line: "Loading extension module fused_adam...",
		typ: facts.EventJITEnd, fields: map[string]any{"module": "fused_adam", "what": "torch-extension"}},
	{name: "Memory pool end", line: "[2024-11-02 00:06:59 TP0] Memory pool end. avail mem=8.19 GB",
		typ: facts.EventMemPoolEnd, level: facts.LevelInfo, fields: map[string]any{"avail_mem_gb": 8.19}},
	{name: "Model loading took", line: "2026-05-12T08:00:21.000000000Z (Worker_TP0 pid=90) INFO 05-12 08:00:21 [gpu_model_runner.py:2007] Model loading took 7.7 GiB and 4.200000 seconds",
		typ: facts.EventLoadEnd, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 4.2, "mem_gib": 7.7, "stage": "model"}},
	{name: "Memory profiling takes", line: "INFO 01-22 18:25:20 worker.py:241] Memory profiling takes 2.91 seconds",
		typ: facts.EventMemoryProfile, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 2.91}},
	{name: "Maximum concurrency for", line: "INFO 01-22 18:25:20 distributed_gpu_executor.py:61] Maximum concurrency for 32768 tokens per request: 71.14x",
		typ: facts.EventMaxConcurrency, level: facts.LevelInfo, fields: map[string]any{"concurrency": 71.14, "tokens_per_request": 32768.0}},
	{name: "No available shared memory broadcast block found", line: "2026-05-12T08:02:01.000000000Z (EngineCore_DP0 pid=77) INFO 05-12 08:02:01 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
		typ: facts.EventSHMWait, level: facts.LevelWarning, fields: map[string]any{"wait_s": 60.0}},
	{name: "Not enough memory (format)", line: "[2025-06-01 10:00:00 TP0] Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.9",
		typ: facts.EventKVInsufficient, level: facts.LevelError},
	{name: "No available memory for the cache blocks (format)", line: "ERROR 11-18 18:07:28 engine.py:366] No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
		typ: facts.EventKVInsufficient, level: facts.LevelError},
	{name: "NCCL version", line: "NCCL version 2.4.8+cuda10.0",
		typ: facts.EventNCCLVersion, fields: map[string]any{"version": "2.4.8+cuda10.0"}},
	{name: "Primary job…terminated normally, but", line: "Primary job  terminated normally, but 1 process returned",
		typ: facts.EventChildFailed, level: facts.LevelError, fields: map[string]any{"launcher": "mpirun"}},
	{name: "Prefill out of memory", line: "Prefill out of memory. This should nerver happen.",
		typ: facts.EventOOM, level: facts.LevelError, fields: map[string]any{"kind": "kv-cache"}},
	{name: "Piecewise CUDA Graph failed (format)", line: "[2025-06-01 10:00:00 TP0] Piecewise CUDA Graph failed with error: CUDA error: out of memory",
		typ: facts.EventGraphFailed, level: facts.LevelError, fields: map[string]any{"graph": "piecewise CUDA graph"}},
	{name: "Parent process exited, terminating worker", line: "INFO 10-13 09:06:25 [v1/executor/multiproc_executor.py:558] Parent process exited, terminating worker",
		typ: facts.EventShutdown, level: facts.LevelInfo, fields: map[string]any{"what": "parent-exited"}},
	{name: "Profiling CUDA graph memory", line: "(EngineCore pid=6890) INFO 08-03 21:49:21 [gpu_model_runner.py:6534] Profiling CUDA graph memory: PIECEWISE=32 (largest=512), FULL=32 (largest=512)",
		typ: facts.EventMemoryProfile, level: facts.LevelInfo},
	{name: "Received sigquit from a child proces", line: "[2025-04-03 20:06:39] Received sigquit from a child process. It usually means the child failed.",
		typ: facts.EventSigquit, level: facts.LevelError},
	{name: "Rank …scheduler is dead", line: "[2026-01-08 03:07:03] Rank 3 scheduler is dead. Please check if there are relevant logs.",
		typ: facts.EventChildFailed, level: facts.LevelError, fields: map[string]any{"rank": 3.0, "what": "scheduler"}},
	{name: "Registering …cuda graph addresses", line: "[2026-02-26 05:35:13 TP7] Registering 0 cuda graph addresses",
		typ: facts.EventCustomAllReduce, level: facts.LevelInfo, fields: map[string]any{"addresses": 0.0, "enabled": true, "what": "graph-buffers"}},
	{name: "Running FlashInfer autotune (format)", line: "[2025-06-01 10:00:00 TP0] Running FlashInfer autotune...",
		typ: facts.EventJITBegin, level: facts.LevelInfo, fields: map[string]any{"what": "flashinfer-autotune"}},
	{name: "Scheduler hit an exception", line: "[2026-02-26 05:35:13 TP7] Scheduler hit an exception: Traceback (most recent call last):",
		typ: facts.EventSchedulerCrash, level: facts.LevelError, fields: map[string]any{"component": "Scheduler"}},
	{name: "Sequence group …is preempted by PreemptionMode.", line: "Sequence group 221 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=101",
		typ: facts.EventPreemption, level: facts.LevelWarning, fields: map[string]any{"mode": "RECOMPUTE", "total": 101.0}},
	{name: "Scheduler or DataParallelController (format)", line: "[2025-06-01 10:00:00] Scheduler or DataParallelController 31379 terminated with -9",
		typ: facts.EventChildFailed, level: facts.LevelError, fields: map[string]any{"exit_code": -9.0, "what": "scheduler"}},
	{name: "SIGQUIT received", line: "[2026-08-02 00:17:43] SIGQUIT received. signum=None, frame=None. It usually means one child failed.",
		typ: facts.EventSigquit, level: facts.LevelError},
	{name: "SIGTERM received", line: "[2026-08-02 00:17:43] SIGTERM received. signum=None frame=None. Draining requests and shutting down...",
		typ: facts.EventShutdown, level: facts.LevelInfo, fields: map[string]any{"signal": "SIGTERM"}},
	{name: "SIGINT received (format)", line: "[2026-08-02 00:17:43] SIGINT received. signum=None frame=None. Draining requests and shutting down...",
		typ: facts.EventShutdown, level: facts.LevelInfo, fields: map[string]any{"signal": "SIGINT"}},
	{name: "Subprocess …crashed with exit code", line: "[2026-08-02 00:17:43] Subprocess detokenizer (pid=31379) crashed with exit code -15. Triggering SIGQUIT for cleanup...",
		typ: facts.EventChildFailed, level: facts.LevelError, fields: map[string]any{"exit_code": -15.0, "name": "detokenizer", "pid": 31379.0}},
	{name: "Start of pd disaggregation warmup", line: "[2026-05-24 00:53:21] Start of pd disaggregation warmup ...",
		typ: facts.EventWarmup, level: facts.LevelInfo, fields: map[string]any{"what": "disaggregation"}},
	{name: "Skipping CUDA graph capture (format)", line: "INFO 06-01 10:00:00 [gpu_model_runner.py:2000] Skipping CUDA graph capture. To turn on CUDA graph capture, ensure `cudagraph_mode` was not manually set to `NONE`",
		typ: facts.EventConfigWarning, level: facts.LevelInfo, fields: map[string]any{"cuda_graph_off": true}},
	{name: "Segmentation fault", line: "Segmentation fault (core dumped)",
		typ: facts.EventKilled, level: facts.LevelCritical, fields: map[string]any{"signal": "SIGSEGV"}},
	{name: "The server is fired up and ready to roll", line: "[2025-04-03 20:00:01] The server is fired up and ready to roll!",
		typ: facts.EventReady, level: facts.LevelInfo, fields: map[string]any{"server": "sglang"}},
	{name: "TileLang begins to compile kernel (format)", line: "TileLang begins to compile kernel `main` with `out_idx=[-1]`",
		typ: facts.EventJITBegin, fields: map[string]any{"what": "tilelang"}},
	{name: "TileLang completes (format)", line: "TileLang completes to compile kernel `main`",
		typ: facts.EventJITEnd, fields: map[string]any{"what": "tilelang"}},
	{name: "TokenizerManager hit an exception (format)", line: "[2025-06-01 10:00:00] TokenizerManager hit an exception: Traceback (most recent call last):",
		typ: facts.EventSchedulerCrash, level: facts.LevelError, fields: map[string]any{"component": "TokenizerManager"}},
	{name: "TP rank …other ranks that didn't finish loading (format)", line: "[2025-06-01 10:00:00 TP0] TP rank 3 could finish the model loading, but there are other ranks that didn't finish loading. It is likely due to unexpected failures (e.g., OOM) or a slow node.",
		typ: facts.EventError, level: facts.LevelError, fields: map[string]any{"what": "load-barrier"}},
	{name: "The number of required GPUs exceeds the total number of available GPUs", line: "WARNING 05-26 18:53:53 [ray_utils.py:342] The number of required GPUs exceeds the total number of available GPUs in the placement group.",
		typ: facts.EventConfigWarning, level: facts.LevelWarning, fields: map[string]any{"what": "placement-group"}},
	{name: "Using cache directory:…torch.compile", line: "INFO 05-12 02:45:47 [backends.py:420] Using cache directory: /home/.cache/vllm/torch_compile_cache/ca01316bdf/rank_0_0 for vLLM's torch.compile",
		typ: facts.EventTorchCompile, level: facts.LevelInfo, fields: map[string]any{"cache_dir": "/home/.cache/vllm/torch_compile_cache/ca01316bdf/rank_0_0", "stage": "begin"}},
	{name: "Use …attention backend", line: "[2026-05-24 00:52:39] Use trtllm_mla as attention backend on sm100 for DeepseekV3ForCausalLM",
		typ: facts.EventAttentionBackend, level: facts.LevelInfo, fields: map[string]any{"backend": "trtllm_mla"}},
	{name: "Waiting for creating a placement group", line: "INFO 05-26 18:54:03 [ray_utils.py:233] Waiting for creating a placement group of specs for 10 seconds. specs=[{'node:10.0.0.175': 0.001, 'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` and `ray list nodes` to see if you have enough resources, and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment variable specified in each node if you are running on a multi-node.",
		typ: facts.EventPlacementWait, level: facts.LevelWarning, fields: map[string]any{"wait_s": 10.0}},
	{name: "Worker proc …died unexpectedly", line: "(EngineCore_DP0 pid=478560) ERROR 01-18 22:19:25 [multiproc_executor.py:231] Worker proc VllmWorker-0 died unexpectedly, shutting down executor.",
		typ: facts.EventWorkerDied, level: facts.LevelError, fields: map[string]any{"worker": "VllmWorker-0"}},
	{name: "WorkerProc was terminated", line: "(Worker_TP2 pid=1913) WARNING 06-01 17:32:02 [multiproc_executor.py:884] WorkerProc was terminated",
		typ: facts.EventShutdown, level: facts.LevelWarning, fields: map[string]any{"what": "worker-terminated"}},
	{name: "WorkerProc failed to start", line: "ERROR 10-13 09:06:25 [v1/executor/multiproc_executor.py:597] WorkerProc failed to start.",
		typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "worker"}},
	{name: "Warming up", line: "(APIServer pid=229492) INFO 05-16 21:40:34 [serving.py:185] Warming up chat template processing...",
		typ: facts.EventWarmup, level: facts.LevelInfo},
	{name: "torch.compile takes", line: "INFO 05-12 02:45:58 [monitor.py:33] torch.compile takes 11.47 s in total",
		typ: facts.EventTorchCompileEnd, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 11.47}},
	{name: "torch.compile took", line: "(EngineCore pid=6890) INFO 08-03 21:49:06 [monitor.py:53] torch.compile took 29.18 s in total",
		typ: facts.EventTorchCompileEnd, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 29.18}},
	{name: "the current vLLM instance can use total_gpu_memory", line: "INFO 01-22 18:25:20 worker.py:241] the current vLLM instance can use total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.24GiB",
		typ: facts.EventMemoryProfile, level: facts.LevelInfo, fields: map[string]any{"total_gib": 79.15, "usable_gib": 71.24, "utilization": 0.9}},
	{name: "model weights take", line: "INFO 01-22 18:25:20 worker.py:241] model weights take 7.12GiB; non_torch_memory takes 0.45GiB; PyTorch activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is 62.25GiB.",
		typ: facts.EventMemoryProfile, level: facts.LevelInfo, fields: map[string]any{"activation_gib": 1.42, "kv_cache_gib": 62.25, "non_torch_gib": 0.45, "weights_gib": 7.12}},
	{name: "# cuda blocks:", line: "INFO 03-21 20:15:46 [executor_base.py:111] # cuda blocks: 7191, # CPU blocks: 512",
		typ: facts.EventKVCacheSize, level: facts.LevelInfo, fields: map[string]any{"cpu_blocks": 512.0, "gpu_blocks": 7191.0}},
	{name: "# GPU blocks:", line: "INFO 01-22 18:25:20 distributed_gpu_executor.py:57] # GPU blocks: 145702, # CPU blocks: 9362",
		typ: facts.EventKVCacheSize, level: facts.LevelInfo, fields: map[string]any{"cpu_blocks": 9362.0, "gpu_blocks": 145702.0}},
	{name: "init engine…took", line: "INFO 01-22 18:25:37 llm_engine.py:431] init engine (profile, create kv cache, warmup model) took 19.68 seconds",
		typ: facts.EventInitEngineDone, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 19.68}},
	{name: "init engine…took (compilation)", line: "(EngineCore pid=23397) INFO 08-01 21:23:42 [core.py:337] init engine (profile, create kv cache, warmup model) took 867.33 s (compilation: 9.98 s)",
		typ: facts.EventInitEngineDone, level: facts.LevelInfo, fields: map[string]any{"elapsed_s": 867.33, "compilation_s": 9.98}},
	{name: "reading GPU P2P access cache from", line: "(VllmWorkerProcess pid=3222324) INFO 01-22 18:25:14 custom_all_reduce_utils.py:242] reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
		typ: facts.EventP2P, level: facts.LevelInfo, fields: map[string]any{"cache": "/root/.cache/vllm/gpu_p2p_access_cache_for_0,1.json"}},
	{name: "rank … is assigned as", line: "INFO 05-12 02:45:31 [parallel_state.py:1004] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0",
		typ: facts.EventRankAssigned, level: facts.LevelInfo, fields: map[string]any{"dp": 0.0, "pp": 0.0, "rank": 0.0, "tp": 0.0, "world_size": 1.0}},
	{name: "rank … is assigned as (PCP, EP)", line: "INFO 01-18 20:15:06 [parallel_state.py:1411] rank 1 in world size 2 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank 1, EP rank 1",
		typ: facts.EventRankAssigned, level: facts.LevelInfo, fields: map[string]any{"rank": 1.0, "world_size": 2.0, "dp": 0.0, "pp": 0.0, "pcp": 0.0, "tp": 1.0, "ep": 1.0}},
	{name: "sglang is using nccl==", line: "[2026-02-26 05:20:07 TP0] sglang is using nccl==2.27.7",
		typ: facts.EventNCCLVersion, level: facts.LevelInfo, fields: map[string]any{"version": "2.27.7"}},
	{name: "vLLM API server version", line: "INFO 01-22 18:25:01 api_server.py:712] vLLM API server version 0.6.6.post1",
		typ: facts.EventVersion, level: facts.LevelInfo, fields: map[string]any{"engine": "vllm", "version": "0.6.6.post1"}},
	{name: "vLLM is using nccl==", line: "(VllmWorkerProcess pid=3222324) INFO 01-22 18:25:14 pynccl.py:67] vLLM is using nccl==2.21.5",
		typ: facts.EventNCCLVersion, level: facts.LevelInfo, fields: map[string]any{"version": "2.21.5"}},
	{name: "[AR] …custom AR disabled", line: "[2026-02-26 05:20:07 TP7] [AR] All-reduce call path: NCCL (custom AR disabled)",
		typ: facts.EventCustomAllReduce, level: facts.LevelInfo, fields: map[string]any{"enabled": false}},
	{name: "[AR] Using", line: "[2026-02-26 05:20:19 TP3] [AR] Using AiterCustomAllreduce (AMD default)",
		typ: facts.EventCustomAllReduce, level: facts.LevelInfo, fields: map[string]any{"enabled": true}},
	{name: "[AR] (format)", line: "[2026-02-26 05:20:07 TP7] [AR] All-reduce call path: custom all-reduce",
		typ: facts.EventCustomAllReduce, level: facts.LevelInfo, fields: map[string]any{"enabled": false}},
	{name: "*** SIGTERM received", line: "*** SIGTERM received at time=1748300290 on cpu 8 ***",
		typ: facts.EventSignal, level: facts.LevelWarning, fields: map[string]any{"signal": "SIGTERM"}},
	{name: "*** SIGSEGV received", line: "(RayWorkerWrapper pid=2191173, ip=10.52.51.232) *** SIGSEGV received at time=1746566409 on cpu 131 ***",
		typ: facts.EventSignal, level: facts.LevelWarning, fields: map[string]any{"signal": "SIGSEGV"}},
	{name: "*** SIGABRT received", line: "(RayWorkerVllm pid=48211) *** SIGABRT received at time=1712827591 on cpu 41 ***",
		typ: facts.EventSignal, level: facts.LevelWarning, fields: map[string]any{"signal": "SIGABRT"}},
}

func TestPatternsCompile(t *testing.T) {
	_, errs := compilePatterns(patterns)
	assert.Empty(t, errs)
}

// TestPatternMistakesFail checks that compiling patterns reports a capture
// of a field the payload lacks, one of a field of another type, and a
// prefix filed under a byte it does not start with: none may pass quietly.
func TestPatternMistakesFail(t *testing.T) {
	_, errs := compilePatterns([]patternList{{"X", []pattern{
		{pre: []string{"Xa"}, typ: facts.EventOOM, pay: pay(facts.OOM{}), caps: []capture{num("tried_gb", "Xa")}},
		{pre: []string{"Xb"}, typ: facts.EventOOM, pay: pay(facts.OOM{}), caps: []capture{word("gpu", "Xb")}},
		{pre: []string{"Yc"}, typ: facts.EventOOM},
		{pre: []string{"Xd"}, typ: facts.EventOOM, caps: []capture{num("gpu", "Xd")}},
	}}})
	require.Len(t, errs, 4)
	assert.Contains(t, errs[0], `has no field "tried_gb"`)
	assert.Contains(t, errs[1], `field "gpu" is facts.Num`)
	assert.Contains(t, errs[2], "never tried")
	assert.Contains(t, errs[3], "captures without a payload")
}

// TestPatternSchema checks every pattern against the schema: its payload is
// the type facts.PayloadOf gives its event type, and its captures fill
// fields of that type's.
func TestPatternSchema(t *testing.T) {
	n := 0
	for _, pl := range patterns {
		for i := range pl.pats {
			pat := &pl.pats[i]
			if pat.code != nil {
				continue
			}
			n++
			if pat.pay.make != nil {
				want := facts.PayloadOf(pat.typ)
				require.NotNil(t, want, "%q: %s declares no payload", pat.pre, pat.typ)
				assert.Equal(t, reflect.TypeOf(want).Elem(), pat.pay.typ, "%q", pat.pre)
				got, at := pat.pay.make()
				assert.Equal(t, reflect.TypeOf(want), reflect.TypeOf(got), "%q", pat.pre)
				assert.Equal(t, reflect.ValueOf(got).UnsafePointer(), at, "%q", pat.pre)
			}
			names, _ := facts.FieldNames(pat.typ)
			for _, c := range pat.caps {
				assert.Contains(t, names, c.field, "%q: %s has no field %q", pat.pre, pat.typ, c.field)
			}
		}
	}
	assert.Greater(t, n, 90)
}

// rowOf is the pattern row a line goes to: the first that matches its
// message, passing over readers that may decline and let the next be tried.
func rowOf(raw string) *row {
	var l line
	l.reset([]byte(raw))
	peel(&l)
	b, _ := stripRayDedup(l.body)
	if len(b) == 0 || rowTable[b[0]] == nil {
		return nil
	}
	h := head8(b)
	rs := rowTable[b[0]].candidates(b)
	for i := range rs {
		if rs[i].matches(h, b) && !(rs[i].pat.code != nil && rs[i].pat.next) {
			return &rs[i]
		}
	}
	return nil
}

// TestPatternRows parses each case's line and checks that the pattern it
// names made the event, with the type, level and fields expected; and that
// the cases cover every prefix of every pattern and every capture.
func TestPatternRows(t *testing.T) {
	// Rows hold compiled copies of the patterns: a pattern is known by
	// what it matches.
	type key struct {
		also, pre string
		typ       facts.EventType
	}
	covered := map[key]bool{}
	filled := map[key]map[string]bool{}
	for _, c := range patternCases {
		t.Run(c.name, func(t *testing.T) {
			r := rowOf(c.line)
			require.NotNil(t, r, "no pattern takes the line")
			require.Nil(t, r.pat.code, "a reader takes the line, not a pattern")
			k := key{r.pat.also, r.pre, r.pat.typ}
			covered[k] = true
			assert.Equal(t, c.typ, r.pat.typ, "the line goes to %q", r.pre)

			out, _ := parseText("pattern.log", c.line+"\n", facts.KindServerLog)
			var ev *facts.LogEvent
			for _, e := range out.Logs[0].Events {
				if e.Src.Line == 1 && e.Type == c.typ {
					ev = e
					break
				}
			}
			require.NotNil(t, ev, "no %s event", c.typ)
			assert.Equal(t, c.level, ev.Level)
			if r.pat.lvl != facts.LevelNone {
				assert.Equal(t, r.pat.lvl, ev.Level)
			}
			assert.Empty(t, payloadMismatch(ev))
			got := facts.Fields(ev.Data)
			if len(c.fields) == 0 {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, c.fields, got)
			}
			if filled[k] == nil {
				filled[k] = map[string]bool{}
			}
			for f := range got {
				filled[k][f] = true
			}
		})
	}
	for _, pl := range patterns {
		for i := range pl.pats {
			pat := &pl.pats[i]
			if pat.code != nil {
				continue
			}
			for _, pre := range pat.pre {
				assert.True(t, covered[key{pat.also, pre, pat.typ}], "no case for %q (%q)", pre, pat.also)
			}
			for _, c := range pat.caps {
				filledBy := false
				for _, pre := range pat.pre {
					filledBy = filledBy || filled[key{pat.also, pre, pat.typ}][c.field]
				}
				assert.True(t, filledBy, "no case of %q fills %q", pat.pre, c.field)
			}
		}
	}
}
