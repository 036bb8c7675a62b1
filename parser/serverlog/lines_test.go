package serverlog

import (
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineCase is one real-format line (from the research notes, sglang-logs.md
// §1-§4, §8 and vllm-logs.md §1-§4, §7, with their era) and what it must
// parse into. Lines the notes only give as a format string are rendered from
// it and say so.
type lineCase struct {
	name string
	line string
	kind facts.Kind // sniffed kind passed to Parse; defaults by the name's prefix
	// want an event of this type ("" when the line makes none)
	typ    facts.EventType
	proc   string
	level  facts.Level
	fields map[string]any
	exc    string // the exception type of a traceback event
	at     string // the event's time, "2006-01-02 15:04:05"
	// or a stat sample
	series facts.EventType
	stream string
	values map[string]float64
	// or a bar
	bar *facts.ProgressBar
	// noEvent asserts that the line makes no event at all, notType no
	// event of that type.
	noEvent bool
	notType facts.EventType
}

var sglangLines = []lineCase{
	// §1.1/§1.2 prefixes of every era
	{name: "sg/untagged-2026", line: "[2026-05-24 00:52:50] Init torch distributed begin.", typ: facts.EventDistInitBegin, proc: "", level: facts.LevelInfo, at: "2026-05-24 00:52:50"},
	{name: "sg/tp0-2025", line: "[2025-09-11 10:24:23 TP0] Init torch distributed ends. mem usage=1.25 GB", typ: facts.EventDistInitEnd, proc: "TP0", fields: map[string]any{"mem_usage_gb": 1.25}, at: "2025-09-11 10:24:23"},
	{name: "sg/graph-buffers-registered", line: "[2025-10-06 20:05:27 DP6 TP6] Registering 0 cuda graph addresses", typ: facts.EventCustomAllReduce, proc: "DP6 TP6", level: facts.LevelInfo, fields: map[string]any{"enabled": true, "what": "graph-buffers", "addresses": 0.0}},
	{name: "triton/model-load-failed", line: "Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)", typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "model-load"}},
	{name: "sg/dp1-tp0-watchdog", line: "[2025-04-03 20:06:34 DP1 TP0] Watchdog timeout (self.watchdog_timeout=300)", typ: facts.EventWatchdogTimeout, proc: "DP1 TP0", level: facts.LevelError, fields: map[string]any{"timeout_s": 300.0}},
	{name: "sg/ms-variant", line: "[2025-12-05 10:00:00.123 TP3] Memory pool end. avail mem=11.22 GB", typ: facts.EventMemPoolEnd, proc: "TP3", fields: map[string]any{"avail_mem_gb": 11.22}, at: "2025-12-05 10:00:00"},
	{name: "sg/legacy-hhmmss (format of Aug-Oct 2024)", line: "[10:24:20 TP0] Init torch distributed begin.", typ: facts.EventDistInitBegin, proc: "TP0", at: "2000-01-01 10:24:20"},
	{name: "sg/legacy-gpu (<=v0.2.13)", line: "[gpu=0] Load weight end. type=LlamaForCausalLM, dtype=torch.float16, avail mem=61.82 GB", typ: facts.EventLoadEnd, proc: "gpu=0", fields: map[string]any{"type": "LlamaForCausalLM", "dtype": "torch.float16", "avail_mem_gb": 61.82}},
	{name: "sg/order-DP-PP-TP-EP (format of v0.5.5.post1)", line: "[2025-11-10 10:00:00 DP0 PP1 TP2 EP2] Load weight begin. avail mem=70.00 GB", typ: facts.EventLoadBegin, proc: "DP0 PP1 TP2 EP2", fields: map[string]any{"avail_mem_gb": 70.0}},
	{name: "sg/order-DP-TP-EP-PP (format of v0.4.10)", line: "[2025-08-01 10:00:00 DP0 TP2 EP2 PP1] Load weight begin. avail mem=70.00 GB", typ: facts.EventLoadBegin, proc: "DP0 TP2 EP2 PP1"},
	{name: "sg/order-ATTN_CP-MOE_DP (format of 2026)", line: "[2026-03-01 10:00:00 DP1 PP0 ATTN_CP1 MOE_DP2 TP3 EP3] Init torch distributed begin.", typ: facts.EventDistInitBegin, proc: "DP1 PP0 ATTN_CP1 MOE_DP2 TP3 EP3"},
	{name: "sg/ray-wrapper", line: "(SGLangWorker pid=38138) [2025-09-18 03:27:45 DP1 TP0] Scheduler hit an exception: Traceback (most recent call last):", typ: facts.EventSchedulerCrash, proc: "DP1 TP0", level: facts.LevelError, fields: map[string]any{"component": "Scheduler"}},
	{name: "sg/main-level-2026", line: "[2025-11-11 20:29:05] WARNING server_args.py:1183: Attention backend not explicitly specified. Use fa3 backend by default.", typ: facts.EventAttentionBackend, level: facts.LevelWarning, fields: map[string]any{"backend": "fa3", "default": true}},
	{name: "sg/uvicorn-in-prefix", line: "[2024-11-02 00:07:09] INFO:     Started server process [102482]", typ: facts.EventHTTPStart, level: facts.LevelInfo, fields: map[string]any{"pid": 102482.0, "server": "uvicorn"}},
	{name: "sg/uvicorn-running", line: "[2024-11-02 00:07:09] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)", typ: facts.EventHTTPStart, fields: map[string]any{"url": "http://0.0.0.0:30000"}},
	{name: "sg/uvicorn-access", line: `[2025-09-11 10:26:05] INFO:     127.0.0.1:60032 - "POST /generate HTTP/1.1" 200 OK`, typ: facts.EventRequest, fields: map[string]any{"method": "POST", "path": "/generate", "status": 200.0}},
	{name: "sg/uvicorn-startup-complete", line: "[2024-11-02 00:07:09] INFO:     Application startup complete.", typ: facts.EventHTTPStart, fields: map[string]any{"stage": "startup-complete"}},
	{name: "sg/flashinfer-jit-loading", line: "2025-05-05 17:53:49,777 - INFO - flashinfer.jit: Loading JIT ops: batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False", typ: facts.EventJITBegin, level: facts.LevelInfo, fields: map[string]any{"what": "flashinfer", "op": "batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False"}, at: "2025-05-05 17:53:49"},
	{name: "sg/flashinfer-jit-cascade", line: "2025-04-03 19:59:12,086 - INFO - flashinfer.jit: Loading JIT ops: cascade", typ: facts.EventJITBegin, fields: map[string]any{"op": "cascade"}},
	{name: "sg/flashinfer-jit-finished (format)", line: "2025-04-03 19:59:40,001 - INFO - flashinfer.jit: Finished loading JIT ops: cascade", typ: facts.EventJITEnd, fields: map[string]any{"op": "cascade"}},
	{name: "sg/flashinfer-prebuilt", line: "2025-05-05 17:53:41,152 - INFO - flashinfer.jit: Prebuilt kernels not found, using JIT backend", noEvent: true},
	{name: "sg/gloo", line: "[Gloo] Rank 7 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7", typ: facts.EventGloo, fields: map[string]any{"rank": 7.0, "connected": 7.0, "expected": 7.0}},
	{name: "sg/nccl-raw-version", line: "NCCL version 2.27.7+cuda13.0", typ: facts.EventNCCLVersion, fields: map[string]any{"version": "2.27.7+cuda13.0"}},
	{name: "sg/torch-glog", line: "W0911 10:24:10.440000 1 torch/utils/cpp_extension.py:2425] TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation.", typ: facts.EventTorchLog, level: facts.LevelWarning, fields: map[string]any{"file": "torch/utils/cpp_extension.py:2425"}, at: "2000-09-11 10:24:10"},
	{name: "sg/c10d-watchdog", line: "[rank0]:[E623 05:45:04.413715744 ProcessGroupNCCL.cpp:704] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=218, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.", typ: facts.EventCollectiveTimout, level: facts.LevelError, fields: map[string]any{"rank": 0.0, "seq_num": 218.0, "op_type": "ALLREDUCE", "timeout_ms": 600000.0, "ran_for_ms": 600001.0, "numel_in": 1048576.0}, at: "2000-06-23 05:45:04"},
	{name: "sg/python-warning", line: "/home/stefano/bench/venv-sglang/lib/python3.12/site-packages/sglang/launch_server.py:56: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.", typ: facts.EventPythonWarning, level: facts.LevelWarning, fields: map[string]any{"category": "UserWarning", "line": 56.0, "file": "/home/stefano/bench/venv-sglang/lib/python3.12/site-packages/sglang/launch_server.py"}},
	{name: "sg/flag-deprecated", line: "'--cuda-graph-max-bs' is deprecated and will be removed in a future release. Use '--cuda-graph-max-bs-decode' instead.", typ: facts.EventDeprecation, level: facts.LevelWarning, fields: map[string]any{"what": "--cuda-graph-max-bs", "replacement": "--cuda-graph-max-bs-decode"}},
	{name: "sg/endpoint-deprecated (format)", line: "[2026-05-24 00:53:21] Endpoint '/get_model_info' is deprecated and will be removed in a future version. Please use '/model_info' instead.", typ: facts.EventDeprecation, fields: map[string]any{"what": "/get_model_info"}},
	{name: "sg/transformers-deprecated", line: "`torch_dtype` is deprecated! Use `dtype` instead!", noEvent: true},
	{name: "sg/deep_gemm-loaded", line: "All deep_gemm operations loaded successfully!", typ: facts.EventJITEnd, fields: map[string]any{"what": "deepgemm"}},
	// §2.1/§2.2 milestones of every era
	{name: "sg/server-args", line: "[2024-11-02 00:06:41] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', tokenizer_path='meta-llama/Meta-Llama-3.1-8B-Instruct', tokenizer_mode='auto', skip_tokenizer_init=False, tp_size=1)", typ: facts.EventServerArgs, fields: map[string]any{"model_path": "meta-llama/Meta-Llama-3.1-8B-Instruct", "skip_tokenizer_init": false, "tp_size": 1.0}},
	{name: "sg/template", line: "[2026-05-24 00:52:42] Using default HuggingFace chat template with detected content format: string", noEvent: true},
	{name: "sg/nccl-version", line: "[2025-09-11 10:24:21 TP0] sglang is using nccl==2.27.3", typ: facts.EventNCCLVersion, proc: "TP0", fields: map[string]any{"version": "2.27.3"}},
	{name: "sg/dist-end-2026", line: "[2026-05-24 00:52:50] Init torch distributed ends. elapsed=0.21 s, mem usage=0.10 GB", typ: facts.EventDistInitEnd, fields: map[string]any{"elapsed_s": 0.21, "mem_usage_gb": 0.10}},
	{name: "sg/load-begin", line: "[2024-11-02 00:06:54 TP0] Load weight begin. avail mem=76.83 GB", typ: facts.EventLoadBegin, proc: "TP0", fields: map[string]any{"avail_mem_gb": 76.83}},
	{name: "sg/load-end-2024", line: "[2024-11-02 00:06:59 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=61.82 GB", proc: "TP0", typ: facts.EventLoadEnd, fields: map[string]any{"type": "LlamaForCausalLM", "dtype": "torch.bfloat16", "avail_mem_gb": 61.82}},
	{name: "sg/load-end-2025", line: "[2025-05-05 17:53:40] Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=36.25 GB, mem usage=7.63 GB.", typ: facts.EventLoadEnd, fields: map[string]any{"avail_mem_gb": 36.25, "mem_usage_gb": 7.63}},
	{name: "sg/load-end-2026", line: "[2026-05-24 00:52:54] Load weight end. elapsed=2.62 s, type=Qwen3ForCausalLM, avail mem=260.48 GB, mem usage=15.28 GB.", typ: facts.EventLoadEnd, fields: map[string]any{"elapsed_s": 2.62, "type": "Qwen3ForCausalLM", "avail_mem_gb": 260.48, "mem_usage_gb": 15.28}},
	{name: "sg/load-end-quant", line: "[2026-08-01 23:39:39] Load weight end. elapsed=109.33 s, type=LagunaForCausalLM, quant=compressed-tensors, avail mem=47.80 GB, mem usage=67.56 GB.", typ: facts.EventLoadEnd, fields: map[string]any{"quant": "compressed-tensors", "elapsed_s": 109.33}},
	{name: "sg/load-end-grok", line: "[2025-09-11 10:25:33 TP0] Load weight end. type=Grok1ForCausalLM, dtype=torch.bfloat16, avail mem=40.69 GB, mem usage=36.73 GB.", typ: facts.EventLoadEnd, proc: "TP0", fields: map[string]any{"mem_usage_gb": 36.73}},
	{name: "sg/weights-format", line: "[2025-05-05 17:53:39] Using model weights format ['*.safetensors']", typ: facts.EventWeightsFormat, fields: map[string]any{"format": "['*.safetensors']"}},
	{name: "sg/kv-mha", line: "[2025-05-05 17:53:40] KV Cache is allocated. #tokens: 225647, K size: 15.49 GB, V size: 15.49 GB", typ: facts.EventKVCacheAlloc, fields: map[string]any{"tokens": 225647.0, "k_size_gb": 15.49, "v_size_gb": 15.49}},
	{name: "sg/kv-dtype-2026", line: "[2026-05-24 00:52:54] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1707904, K size: 117.28 GB, V size: 117.28 GB", typ: facts.EventKVCacheAlloc, fields: map[string]any{"dtype": "torch.bfloat16", "tokens": 1707904.0, "k_size_gb": 117.28}},
	{name: "sg/kv-tp3", line: "[2025-09-11 10:25:43 TP3] KV Cache is allocated. #tokens: 903439, K size: 13.79 GB, V size: 13.79 GB", typ: facts.EventKVCacheAlloc, proc: "TP3", fields: map[string]any{"tokens": 903439.0}},
	{name: "sg/kv-mla", line: "[2026-02-26 05:35:08 TP7] KV Cache is allocated. #tokens: 3262823, KV size: 186.77 GB", typ: facts.EventKVCacheAlloc, proc: "TP7", fields: map[string]any{"tokens": 3262823.0, "kv_size_gb": 186.77}},
	{name: "sg/mem-pool", line: "[2024-11-02 00:06:59 TP0] Memory pool end. avail mem=8.19 GB", proc: "TP0", typ: facts.EventMemPoolEnd, fields: map[string]any{"avail_mem_gb": 8.19}},
	{name: "sg/capture-begin-2024", line: "[2024-11-02 00:07:00 TP0] Capture cuda graph begin. This can take up to several minutes.", typ: facts.EventGraphBegin, proc: "TP0", fields: map[string]any{"graph": "cuda graph"}},
	{name: "sg/capture-begin-2025", line: "[2025-05-05 17:53:41] Capture cuda graph begin. This can take up to several minutes. avail mem=4.09 GB", typ: facts.EventGraphBegin, fields: map[string]any{"graph": "cuda graph", "avail_mem_gb": 4.09}},
	{name: "sg/capture-bs", line: "[2025-05-05 17:53:41] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160]", noEvent: true},
	{name: "sg/capture-end-v040", line: "[2025-02-17 05:27:24 TP1] Capture cuda graph end. Time elapsed: 84.89 s", typ: facts.EventGraphEnd, proc: "TP1", fields: map[string]any{"elapsed_s": 84.89}},
	{name: "sg/capture-end-2025-03", line: "[2025-03-08 12:29:28 TP0] Capture cuda graph end. Time elapsed: 7.23 s. avail mem=0.53 GB. mem usage=0.93 GB.", proc: "TP0", typ: facts.EventGraphEnd, fields: map[string]any{"elapsed_s": 7.23, "avail_mem_gb": 0.53, "mem_usage_gb": 0.93}},
	{name: "sg/capture-end-2025-04", line: "[2025-05-05 17:53:47] Capture cuda graph end. Time elapsed: 6.18 s. mem usage=1.41 GB. avail mem=2.67 GB.", typ: facts.EventGraphEnd, fields: map[string]any{"elapsed_s": 6.18, "mem_usage_gb": 1.41, "avail_mem_gb": 2.67}},
	{name: "sg/piecewise-begin", line: "[2026-05-24 00:53:00] Capture piecewise CUDA graph begin. avail mem=23.56 GB", typ: facts.EventGraphBegin, fields: map[string]any{"graph": "piecewise CUDA graph", "avail_mem_gb": 23.56}},
	{name: "sg/piecewise-end", line: "[2026-05-24 00:53:18] Capture piecewise CUDA graph end. Time elapsed: 18.18 s. mem usage=2.32 GB. avail mem=21.24 GB.", typ: facts.EventGraphEnd, fields: map[string]any{"graph": "piecewise CUDA graph", "elapsed_s": 18.18}},
	{name: "sg/draft-begin (format)", line: "[2025-06-01 10:00:00 TP0] Capture draft cuda graph begin. This can take up to several minutes. avail mem=10.00 GB", proc: "TP0", typ: facts.EventGraphBegin, fields: map[string]any{"graph": "draft cuda graph", "avail_mem_gb": 10.0}},
	{name: "sg/target-verify-end", line: "[2026-08-01 23:43:41] Capture target verify CUDA graph end. elapsed=3.00 s, mem usage=0.60 GB, avail mem=6.67 GB.", typ: facts.EventGraphEnd, fields: map[string]any{"graph": "target verify CUDA graph", "elapsed_s": 3.0, "mem_usage_gb": 0.60, "avail_mem_gb": 6.67}},
	{name: "sg/capture-failed (format)", line: "[2025-06-01 10:00:00 TP0] Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.44 GiB of which 1.50 GiB is free.", typ: facts.EventGraphFailed, proc: "TP0", level: facts.LevelError, fields: map[string]any{"graph": "cuda graph"}},
	{name: "sg/max-total-2024", line: "[2024-11-02 00:07:09 TP0] max_total_num_tokens=430915, max_prefill_tokens=16384, max_running_requests=2049, context_len=131072", proc: "TP0", typ: facts.EventMaxTotalTokens, fields: map[string]any{"max_total_num_tokens": 430915.0, "max_prefill_tokens": 16384.0, "max_running_requests": 2049.0, "context_len": 131072.0}},
	{name: "sg/max-total-2025", line: "[2025-09-11 10:26:01 TP0] max_total_num_tokens=903439, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=3529, context_len=131072, available_gpu_mem=10.26 GB", proc: "TP0", typ: facts.EventMaxTotalTokens, fields: map[string]any{"max_total_num_tokens": 903439.0, "chunked_prefill_size": 8192.0, "available_gpu_mem_gb": 10.26}},
	{name: "sg/attn-not-set", line: "[2025-05-05 17:53:38] Attention backend not set. Use flashinfer backend by default.", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "flashinfer"}},
	{name: "sg/attn-not-specified", line: "[2026-05-24 00:52:39] Attention backend not specified. Use trtllm_mha backend by default.", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "trtllm_mha"}},
	{name: "sg/attn-model-specific (format)", line: "[2026-05-24 00:52:39] Use trtllm_mla as attention backend on sm100 for DeepseekV3ForCausalLM", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "trtllm_mla"}},
	{name: "sg/fired-up", line: "[2024-10-31 22:40:54] The server is fired up and ready to roll!", typ: facts.EventReady, level: facts.LevelInfo, fields: map[string]any{"server": "sglang"}},
	{name: "sg/registering", line: "[2025-09-11 10:26:00 TP0] Registering 2967 cuda graph addresses", typ: facts.EventCustomAllReduce, proc: "TP0", level: facts.LevelInfo, fields: map[string]any{"enabled": true, "what": "graph-buffers", "addresses": 2967.0}},
	{name: "sg/tree-cache", line: "[2026-05-24 00:53:20] Tree cache initialized: source=default impl=RadixCache hybrid_swa=False hybrid_ssm=False hierarchical=False streaming_wrapped=False", noEvent: true},
	{name: "sg/pd-warmup (format)", line: "[2026-05-24 00:53:21] Start of pd disaggregation warmup ...", typ: facts.EventWarmup, fields: map[string]any{"what": "disaggregation"}},
	// §3 stat lines of every punctuation era
	{name: "sg/decode-2024", line: "[2024-10-31 19:45:17 TP0] Decode batch. #running-req: 1, #token: 82, token usage: 0.00, gen throughput (token/s): 5.21, #queue-req: 0", series: facts.EventStatDecode, proc: "TP0", values: map[string]float64{"running_req": 1, "tokens": 82, "token_usage": 0, "gen_throughput": 5.21, "queue_req": 0}},
	{name: "sg/decode-untagged-2025", line: "[2025-05-05 17:53:54] Decode batch. #running-req: 1, #token: 104, token usage: 0.00, gen throughput (token/s): 82.06, #queue-req: 0", series: facts.EventStatDecode, values: map[string]float64{"tokens": 104, "gen_throughput": 82.06}},
	{name: "sg/decode-cuda-graph-trailing", line: "[2025-09-12 07:27:14 TP0] Decode batch. #running-req: 1, #token: 84, token usage: 0.00, cuda graph: True, gen throughput (token/s): 98.94, #queue-req: 0, ", proc: "TP0", series: facts.EventStatDecode, values: map[string]float64{"cuda_graph": 1, "gen_throughput": 98.94, "queue_req": 0}},
	{name: "sg/decode-no-prefix", line: "Decode batch. #running-req: 233, #token: 370959, token usage: 0.82, cuda graph: True, gen throughput (token/s): 4594.01, #queue-req: 317", series: facts.EventStatDecode, values: map[string]float64{"running_req": 233, "tokens": 370959, "token_usage": 0.82, "queue_req": 317}},
	{name: "sg/decode-graph-false", line: "[2025-08-31 00:34:46 TP0] Decode batch. #running-req: 128, #token: 35794, token usage: 0.87, cuda graph: False, gen throughput (token/s): 50.98, #queue-req: 384", proc: "TP0", series: facts.EventStatDecode, values: map[string]float64{"cuda_graph": 0, "running_req": 128}},
	{name: "sg/decode-trailing-comma", line: "[2025-09-03 05:49:04] Decode batch. #running-req: 1, #token: 501, token usage: 0.02, cuda graph: True, gen throughput (token/s): 65.75, #queue-req: 0,", series: facts.EventStatDecode, values: map[string]float64{"tokens": 501, "gen_throughput": 65.75}},
	{name: "sg/decode-timestamp (v0.4.9.post1)", line: "[2025-07-10 12:34:56 TP0] Decode batch. #running-req: 2, #token: 300, token usage: 0.01, cuda graph: True, gen throughput (token/s): 40.00, #queue-req: 0, timestamp: 2025-07-10T12:34:56.789012", proc: "TP0", series: facts.EventStatDecode, values: map[string]float64{"running_req": 2, "gen_throughput": 40}},
	{name: "sg/decode-iter (v0.5.4)", line: "[2025-10-25 10:00:00 TP0] Decode batch [1200], #running-req: 4, #token: 900, token usage: 0.02, cuda graph: True, gen throughput (token/s): 120.50, #queue-req: 1, ", proc: "TP0", series: facts.EventStatDecode, values: map[string]float64{"iter": 1200, "running_req": 4, "queue_req": 1}},
	{name: "sg/decode-spec-dp (format)", line: "[2026-05-27 10:00:00 DP1 TP0] Decode batch, #running-req: 32, #token: 51234, token usage: 0.41, accept len: 3.12, accept rate: 0.71, cuda graph: True, gen throughput (token/s): 2250.13, #queue-req: 0", series: facts.EventStatDecode, proc: "DP1 TP0", values: map[string]float64{"accept_len": 3.12, "accept_rate": 0.71, "gen_throughput": 2250.13, "tokens": 51234}},
	{name: "sg/decode-mamba (format)", line: "[2026-05-27 10:00:00 TP0] Decode batch, #running-req: 8, #full token: 9000, full token usage: 0.10, mamba num: 8, mamba usage: 0.02, cuda graph: True, gen throughput (token/s): 900.00, #queue-req: 0", proc: "TP0", series: facts.EventStatDecode, values: map[string]float64{"full_token": 9000, "full_token_usage": 0.10, "mamba_num": 8, "mamba_usage": 0.02}},
	{name: "sg/decode-swa", line: "[2026-08-02 00:02:22] Decode batch, #running-req: 1, #full token: 181, full token usage: 0.00, #swa token: 181, swa token usage: 0.00, accept len: 2.75, accept rate: 0.12, cuda graph: True, gen throughput (token/s): 0.10, #queue-req: 0", series: facts.EventStatDecode, values: map[string]float64{"swa_token": 181, "accept_len": 2.75, "accept_rate": 0.12, "gen_throughput": 0.10}},
	{name: "sg/prefill-2024-hit-rate", line: "[2024-10-31 22:40:53 TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0", proc: "TP0", series: facts.EventStatPrefill, values: map[string]float64{"new_seq": 1, "new_token": 6, "cached_token": 0, "cache_hit_rate_pct": 0, "running_req": 0}},
	{name: "sg/prefill-2025-hit-rate-44", line: "[2025-02-26 20:13:21 TP0] Prefill batch. #new-seq: 1, #new-token: 1, #cached-token: 35, cache hit rate: 44.87%, token usage: 0.01, #running-req: 0, #queue-req: 0", proc: "TP0", series: facts.EventStatPrefill, values: map[string]float64{"cached_token": 35, "cache_hit_rate_pct": 44.87}},
	{name: "sg/prefill-trailing", line: "[2025-09-11 10:26:02 TP0] Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ", proc: "TP0", series: facts.EventStatPrefill, values: map[string]float64{"new_token": 6}},
	{name: "sg/prefill-2026 (format)", line: "[2026-05-27 10:00:00] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 64, token usage: 0.01, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 3071.55", series: facts.EventStatPrefill, values: map[string]float64{"new_token": 512, "cached_token": 64, "pending_token": 0, "cuda_graph": 0, "input_throughput": 3071.55}},
	{name: "sg/prefill-swa", line: "[2026-08-01 23:43:46] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, full token usage: 0.00, swa token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: True, input throughput (token/s): 1.81", series: facts.EventStatPrefill, values: map[string]float64{"full_token_usage": 0, "swa_token_usage": 0, "input_throughput": 1.81}},
	{name: "sg/retract-old", line: "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.9998 -> 1.0000", typ: facts.EventRetract, fields: map[string]any{"retracted": 1.0, "ratio_before": 0.9998, "ratio_after": 1.0}},
	{name: "sg/retract-2026 (format)", line: "[2026-05-27 10:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 4096, #new_token_ratio: 0.7000 -> 0.8000", typ: facts.EventRetract, proc: "TP0", fields: map[string]any{"retracted": 3.0, "new_tokens_gained": 4096.0, "ratio_after": 0.8}},
	// §4 failures
	{name: "sg/watchdog-2026 (format)", line: "[2026-05-27 10:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)", typ: facts.EventWatchdogTimeout, proc: "TP0", level: facts.LevelError, fields: map[string]any{"component": "Scheduler", "timeout_s": 300.0}},
	{name: "sg/watchdog-bare", line: "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)", typ: facts.EventWatchdogTimeout, fields: map[string]any{"timeout_s": 300.0}},
	{name: "sg/watchdog-soft (format)", line: "[2026-05-27 10:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=600.0, self.soft=True)", proc: "TP0", typ: facts.EventWatchdogTimeout, level: facts.LevelWarning, fields: map[string]any{"timeout_s": 600.0, "soft": true}},
	{name: "sg/scheduler-exception-tp3", line: "[2025-02-22 12:19:24 TP3] Scheduler hit an exception: Traceback (most recent call last):", typ: facts.EventSchedulerCrash, proc: "TP3", level: facts.LevelError},
	{name: "sg/sigquit-running (format)", line: "[2026-05-27 10:00:05] SIGQUIT received. signum=3, frame=<frame at 0x7f0c2a1b2c40, file '.../uvloop/...', line 1, code run>. It usually means one child failed.", typ: facts.EventSigquit, level: facts.LevelError},
	{name: "sg/sigquit-launch", line: "[2026-02-26 05:35:13] Received sigquit from a child process. It usually means the child failed.", typ: facts.EventSigquit, level: facts.LevelError},
	{name: "sg/sigquit-typo (v0.4.1.post6)", line: "[2025-02-01 10:00:00] Received sigquit from a child proces. It usually means the child failed.", typ: facts.EventSigquit},
	{name: "sg/health-failed (format)", line: "[2026-05-27 10:00:00] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 10:00:00. last_heartbeat time: 09:58:12", typ: facts.EventRPCTimeout, level: facts.LevelWarning, fields: map[string]any{"what": "health-check"}},
	{name: "sg/init-failed-warmup (format)", line: "[2026-05-27 10:00:00] Initialization failed. warmup error: Traceback (most recent call last):", typ: facts.EventEngineInitFailed, fields: map[string]any{"what": "warmup"}},
	{name: "sg/rank-died (format)", line: "RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.", typ: facts.EventChildFailed, level: facts.LevelError, fields: map[string]any{"rank": 0.0, "exit_code": -9.0}},
	{name: "sg/not-enough-memory (format)", line: "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.9", typ: facts.EventKVInsufficient, level: facts.LevelError},
	{name: "sg/decode-oom (format)", line: "[2026-05-27 10:00:00 TP0] Decode out of memory. Try to lower your batch size.", typ: facts.EventOOM, proc: "TP0", fields: map[string]any{"kind": "kv-cache"}},
	{name: "sg/subprocess-crashed (format)", line: "[2026-05-27 10:00:00] Subprocess scheduler_0 (pid=12345) crashed with exit code -6. Triggering SIGQUIT for cleanup...", typ: facts.EventChildFailed, fields: map[string]any{"name": "scheduler_0", "pid": 12345.0, "exit_code": -6.0}},
	{name: "sg/child-failed-v047 (format)", line: "[2025-06-01 10:00:00] Child process unexpectedly failed with exitcode=256. pid=1234", typ: facts.EventChildFailed, fields: map[string]any{"exit_code": 256.0, "pid": 1234.0}},
	{name: "sg/deepgemm-session (format)", line: "[2026-05-27 10:00:00 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`.", proc: "TP0", typ: facts.EventJITBegin, fields: map[string]any{"what": "deepgemm"}},
	{name: "sg/deepgemm-shape (format)", line: "[2026-05-27 10:00:00 TP0] Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, K=2048, num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have run `python3 -m sglang.compile_deep_gemm`. ", proc: "TP0", typ: facts.EventJITProgress, fields: map[string]any{"what": "deepgemm", "kernel": "GEMM_NT_F8F8BF16"}},
	{name: "sg/no-kernel-image", line: "RuntimeError: RMSNorm failed with error code no kernel image is available for execution on the device", typ: facts.EventTraceback, level: facts.LevelError, fields: map[string]any{"headless": true}, exc: "RuntimeError"},
	{name: "sg/trtllm-valueerror", line: "ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.", typ: facts.EventTraceback, fields: map[string]any{"headless": true}, exc: "ValueError"},
	{name: "sg/tllmgen", line: "RuntimeError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture", typ: facts.EventTraceback, fields: map[string]any{"headless": true}, exc: "RuntimeError"},
	{name: "sg/sigterm", line: "[2026-08-02 00:17:43] SIGTERM received. signum=None frame=None. Draining requests and shutting down...", typ: facts.EventShutdown, fields: map[string]any{"signal": "SIGTERM"}},
	{name: "sg/custom-ar-pcie", line: "[2025-03-08 12:29:12 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.", typ: facts.EventCustomAllReduce, proc: "TP0", fields: map[string]any{"enabled": false, "reason": "it's not supported on more than two PCIe-only GPUs"}},
	{name: "sg/ar-call-path", line: "[2026-02-26 05:20:07 TP7] [AR] All-reduce call path: NCCL (custom AR disabled)", typ: facts.EventCustomAllReduce, proc: "TP7", fields: map[string]any{"enabled": false}},
	{name: "sg/failed-amdsmi-is-warning", line: "[2026-02-26 05:20:06 TP7] Failed to import amdsmi with ModuleNotFoundError(\"No module named 'amdsmi'\")", noEvent: true},
	{name: "sg/cmdline", line: "python3.12 -m sglang.launch_server   --model Qwen/QwQ-32B --model-path /home/model/Qwen/QwQ-32B   --host 0.0.0.0 --port 30000 --tensor-parallel-size 4   --log-level info   --enable-metrics --trust-remote-code --enable-p2p-check", typ: facts.EventCmdline, fields: map[string]any{"model_path": "/home/model/Qwen/QwQ-32B", "tensor_parallel_size": "4", "enable_metrics": "true", "port": "30000"}},
	// bars (§2.3)
	{name: "sg/bar-weights", line: "Loading safetensors checkpoint shards:  67% Completed | 2/3 [00:00<00:00,  4.06it/s]", bar: &facts.ProgressBar{Desc: "Loading safetensors checkpoint shards", N: 2, Total: 3}},
	{name: "sg/bar-capture", line: "Capturing batches (bs=1 avail_mem=23.56 GB): 100%|██████████| 52/52 [00:05<00:00, 10.36it/s]", bar: &facts.ProgressBar{Desc: "Capturing batches", Detail: "bs=1 avail_mem=23.56 GB", N: 52, Total: 52, Elapsed: 5}},
	{name: "sg/bar-capture-2025-03", line: "Capturing batches (avail_mem=2.68 GB): 100%|██████████| 23/23 [00:06<00:00,  3.75it/s]", bar: &facts.ProgressBar{Desc: "Capturing batches", Detail: "avail_mem=2.68 GB", N: 23, Total: 23, Elapsed: 6}},
	{name: "sg/bar-multithread", line: "Multi-thread loading shards: 100% Completed | 5/5 [00:01<00:00,  2.62it/s]", bar: &facts.ProgressBar{Desc: "Multi-thread loading shards", N: 5, Total: 5, Elapsed: 1}},
	{name: "sg/bar-piecewise-compile", line: "Compiling num tokens (num_tokens=4): 100% | 74/74 [00:09<00:00, 7.44it/s]", noEvent: true},
	{name: "sg/bar-piecewise-capture", line: "Capturing num tokens (num_tokens=4 avail_mem=21.24 GB): 100%|██████████| 74/74 [00:07<00:00, 10.44it/s]", bar: &facts.ProgressBar{Desc: "Capturing num tokens", Detail: "num_tokens=4 avail_mem=21.24 GB", N: 74, Total: 74, Elapsed: 7}},
	{name: "sg/bar-grok-slow", line: "Loading safetensors checkpoint shards:   6% Completed | 1/18 [00:23<06:44, 23.81s/it]", bar: &facts.ProgressBar{Desc: "Loading safetensors checkpoint shards", N: 1, Total: 18, Elapsed: 23}},
	{name: "sg/bar-hours", line: "Capturing num tokens (num_tokens=8192 avail_mem=12.06 GB):   2%|▏         | 1/58 [01:54<1:48:53, 114.62s/it]", bar: &facts.ProgressBar{Desc: "Capturing num tokens", Detail: "num_tokens=8192 avail_mem=12.06 GB", N: 1, Total: 58, Elapsed: 114}},
	// Ray's report of a dead actor, as pasted (a code span's backtick left on).
	{name: "ray/actor-dead", kind: facts.KindServerLog, line: "`The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file.", typ: facts.EventWorkerDied, fields: map[string]any{"what": "ray-actor", "exit_type": "SYSTEM_ERROR"}},
	{name: "ray/raylet-worker-died", kind: facts.KindServerLog, line: "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker.", typ: facts.EventWorkerDied},
	{name: "ray/task-killed-memory", kind: facts.KindServerLog, line: "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", typ: facts.EventTraceback},
	{name: "ray/task-killed-memory-bare", kind: facts.KindServerLog, line: "Task was killed due to the node running low on memory", typ: facts.EventKilled, fields: map[string]any{"what": "memory"}},
	{name: "systemd/oom-killer", kind: facts.KindServerLog, line: "vllm.service: A process of this unit has been killed by the OOM killer.", typ: facts.EventKilled, fields: map[string]any{"signal": "SIGKILL"}},
	{name: "systemd/oom-result", kind: facts.KindServerLog, line: "vllm.service: Failed with result 'oom-kill'.", typ: facts.EventKilled},
	// Exceptions named by their module and a class name that ends in
	// neither Error nor Exception.
	{name: "exc/qualified-class", kind: facts.KindServerLog, line: "huggingface_hub.utils._http.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/bigcode/starcoder: offline mode is enabled.", typ: facts.EventTraceback, exc: "huggingface_hub.utils._http.OfflineModeIsEnabled"},
	{name: "exc/qualified-class-dynamo", kind: facts.KindServerLog, line: "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True", typ: facts.EventTraceback, exc: "torch._dynamo.exc.FailOnRecompileLimitHit"},
	{name: "exc/module-logger-is-not", kind: facts.KindServerLog, line: "torch.distributed.elastic.multiprocessing.api: Sending process 12 closing signal SIGTERM", notType: facts.EventTraceback},
	{name: "exc/capitalized-module-is-not", kind: facts.KindServerLog, line: "Main.Info: starting", notType: facts.EventTraceback},
	// Inductor's max-autotune at work: the model is being compiled.
	{name: "inductor/autotune", kind: facts.KindServerLog, line: "AUTOTUNE mm(8x4096, 4096x4096)", typ: facts.EventTorchCompile, fields: map[string]any{"what": "autotune"}},
	{name: "inductor/autotune-words", kind: facts.KindServerLog, line: "AUTOTUNE is off for this run", notType: facts.EventTorchCompile},
	// MPI launchers' reports of a failed process (Open MPI's help-orterun.txt).
	{name: "mpi/detected-nonzero", kind: facts.KindServerLog, line: "mpirun detected that one or more processes exited with non-zero status, thus causing", typ: facts.EventChildFailed, fields: map[string]any{"launcher": "mpirun"}},
	{name: "mpi/primary-job", kind: facts.KindServerLog, line: "Primary job  terminated normally, but 1 process returned", typ: facts.EventChildFailed},
	{name: "mpi/noticed-killed", kind: facts.KindServerLog, line: "mpirun noticed that process rank 1 with PID 18210 on node gpu-node-3 exited on signal 9 (Killed).", typ: facts.EventKilled, fields: map[string]any{"signal": "SIGKILL", "rank": 1.0, "pid": 18210.0}},
	{name: "mpi/noticed-segv", kind: facts.KindServerLog, line: "mpirun noticed that process rank 0 with PID 0 on node 7b3c01 exited on signal 11 (Segmentation fault).", typ: facts.EventKilled, fields: map[string]any{"signal": "SIGSEGV"}},
	{name: "mpi/launch-is-not-failure", kind: facts.KindServerLog, line: "mpirun --allow-run-as-root -n 2 python3 ../run.py --engine_dir ./engine", notType: facts.EventChildFailed},
	// A paste that cut the bar after its count keeps its state, not its timing.
	{name: "sg/bar-cut-ellipsis", line: "Capturing batches (bs=160 avail_mem=21.37 GB):  23%|██▎       | 8/35 ...", bar: &facts.ProgressBar{Desc: "Capturing batches", Detail: "bs=160 avail_mem=21.37 GB", N: 8, Total: 35}},
	{name: "sg/bar-cut-eol", line: "Loading safetensors checkpoint shards:  40% Completed | 2/5", bar: &facts.ProgressBar{Desc: "Loading safetensors checkpoint shards", N: 2, Total: 5}},
	{name: "sg/bar-not-cut", line: "Capturing batches (bs=8):  23%| | 8/35 of them were skipped", noEvent: true},
}

var vllmLines = []lineCase{
	// A failed build's output quoted in an error: ninja's step and the
	// compiler's command line (flashinfer's "Ninja build failed. Ninja
	// output:" logged by the engine core).
	{name: "vl/ninja-step-in-error", line: "(EngineCore_DP0 pid=2210) ERROR 03-05 09:56:09 [core.py:1100] [3/11] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile --dependency-output batch_prefill.cuda.o.d -c batch_prefill.cu -o batch_prefill.cuda.o", typ: facts.EventJITFailed, proc: "EngineCore_DP0", fields: map[string]any{"tool": "nvcc"}},
	{name: "vl/compiler-command-in-error", line: "(EngineCore_DP0 pid=2210) ERROR 03-05 09:56:09 [core.py:1100] :/usr/local/cuda-12.8/bin/nvcc --generate-dependencies-with-compile --dependency-output x.cuda.o.d -c x.cu", typ: facts.EventJITFailed, proc: "EngineCore_DP0", fields: map[string]any{"tool": "nvcc"}},
	{name: "vl/ninja-step-at-info", line: "(EngineCore_DP0 pid=2210) INFO 03-05 09:56:09 [core.py:1100] [3/11] /usr/local/cuda/bin/nvcc -c batch_prefill.cu -o batch_prefill.cuda.o", notType: facts.EventJITFailed},
	{name: "vl/compiler-words-in-error", line: "(EngineCore_DP0 pid=2210) ERROR 03-05 09:56:09 [core.py:1100] gcc version 9 is too old for this build", notType: facts.EventJITFailed},
	// §1.1 header eras
	{name: "vl/2024-no-bracket", line: "INFO 03-02 23:59:21 api_server.py:240] vLLM API server version 0.3.3", typ: facts.EventVersion, level: facts.LevelInfo, fields: map[string]any{"version": "0.3.3", "engine": "vllm"}, at: "2000-03-02 23:59:21"},
	{name: "vl/2024-upcast", line: "INFO 10-06 17:26:34 config.py:1648] Upcasting torch.bfloat16 to torch.float32.", noEvent: true},
	{name: "vl/2025-bracket-route", line: "INFO 02-09 11:36:52 [launcher.py:29] Route: /v1/rerank, Methods: POST", typ: facts.EventRoute, fields: map[string]any{"path": "/v1/rerank", "methods": "POST"}, at: "2000-02-09 11:36:52"},
	{name: "vl/2026-enginecore", line: "(EngineCore pid=1894) INFO 04-05 18:41:33 [default_loader.py:384] Loading weights took 0.99 seconds", typ: facts.EventLoadEnd, proc: "EngineCore", fields: map[string]any{"elapsed_s": 0.99, "stage": "weights"}},
	{name: "vl/debug-path-v1", line: "DEBUG 05-12 02:45:30 [v1/engine/core.py:464] Has DP Coordinator: False, stats publish address: None", noEvent: true},
	{name: "vl/debug-path-elided", line: "WARNING 05-12 02:45:30 [model_executor/.../utils/fp8_utils.py:512] Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal!", noEvent: true},
	{name: "vl/ansi", line: "\x1b[0;36m(APIServer pid=31)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m02-03 19:00:05 [api_server.py:946]\x1b[0m Starting vLLM API server 0 on http://0.0.0.0:8000", typ: facts.EventHTTPStart, proc: "APIServer", fields: map[string]any{"url": "http://0.0.0.0:8000", "server": "vllm"}},
	// §1.2 process tags of each era
	{name: "vl/no-time", line: "INFO [pynccl.py:113] vLLM is using nccl==2.28.9", typ: facts.EventNCCLVersion, level: facts.LevelInfo, fields: map[string]any{"version": "2.28.9"}},
	{name: "vl/no-time-not-a-header", line: "INFO [the model] is ready", notType: facts.EventNCCLVersion},
	{name: "vl/VllmWorkerProcess", line: "(VllmWorkerProcess pid=3222325) INFO 01-15 13:09:57 pynccl.py:67] vLLM is using nccl==2.21.5", typ: facts.EventNCCLVersion, proc: "VllmWorkerProcess_3222325", fields: map[string]any{"version": "2.21.5"}},
	{name: "vl/VllmWorkerProcess-found", line: "(VllmWorkerProcess pid=3222324) INFO 01-15 13:09:57 utils.py:937] Found nccl from library libnccl.so.2", noEvent: true},
	{name: "vl/VllmWorker-rank", line: "(VllmWorker rank=0 pid=2120280) INFO 07-28 23:02:25 [cuda.py:290] Using Flash Attention backend on V1 engine.", typ: facts.EventAttentionBackend, proc: "VllmWorker_rank0", fields: map[string]any{"backend": "Flash Attention", "engine_version": "V1"}},
	{name: "vl/VllmWorker-rank-loading", line: "(VllmWorker rank=0 pid=2120280) INFO 07-28 23:02:25 [default_loader.py:262] Loading weights took 0.38 seconds", typ: facts.EventLoadEnd, proc: "VllmWorker_rank0", fields: map[string]any{"elapsed_s": 0.38}},
	{name: "vl/EngineCore_0", line: "(EngineCore_0 pid=1399537) INFO 08-19 14:58:40 [core.py:215] init engine (profile, create kv cache, warmup model) took 1.06 seconds", typ: facts.EventInitEngineDone, proc: "EngineCore_0", fields: map[string]any{"elapsed_s": 1.06}},
	{name: "vl/EngineCore_DP0", line: "(EngineCore_DP0 pid=66914) INFO 09-21 12:29:22 [gpu_model_runner.py:2530] Starting to load model unsloth/Qwen3-4B-Instruct-2507-GGUF...", typ: facts.EventLoadBegin, proc: "EngineCore_DP0", fields: map[string]any{"model": "unsloth/Qwen3-4B-Instruct-2507-GGUF"}},
	{name: "vl/Worker_TP4_EP4", line: "(Worker_TP4_EP4 pid=2532) INFO 12-29 15:21:11 [multiproc_executor.py:709] Parent process exited, terminating worker", typ: facts.EventShutdown, proc: "Worker_TP4_EP4", fields: map[string]any{"what": "parent-exited"}},
	{name: "vl/ApiServer_2", line: "(ApiServer_2 pid=3873984) INFO 06-10 11:11:20 [launcher.py:46] Route: /metrics, Methods: GET", typ: facts.EventRoute, proc: "ApiServer_2", fields: map[string]any{"path": "/metrics", "methods": "GET"}},
	{name: "vl/Worker_TP0-available-kv", line: "(Worker_TP0 pid=203) INFO 08-13 08:24:32 [gpu_worker.py:538] Available KV cache memory: 10.86 GiB", typ: facts.EventAvailableKV, proc: "Worker_TP0", fields: map[string]any{"gib": 10.86}},
	{name: "vl/buildkite-wrapper", line: "[2025-08-12T08:42:31Z] (EngineCore_0 pid=13564) DEBUG 08-12 01:42:31 [core.py:464] Has DP Coordinator: False, stats publish address: None", noEvent: true},
	{name: "vl/docker-wrapper-stat", line: "2026-05-12T08:01:39.331095044Z (APIServer pid=1) INFO 05-12 08:01:39 [loggers.py:271] Engine 000: Avg prompt throughput: 6335.3 tokens/s, Avg generation throughput: 7.2 tokens/s, Running: 9 reqs, Waiting: 1 reqs, GPU KV cache usage: 68.8%, Prefix cache hit rate: 0.0%", series: facts.EventStatThroughput, proc: "APIServer", values: map[string]float64{"prompt_throughput": 6335.3, "gen_throughput": 7.2, "running": 9, "waiting": 1, "kv_cache_usage_pct": 68.8, "prefix_cache_hit_pct": 0}},
	{name: "vl/compose-wrapper", line: "vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", typ: facts.EventKVInsufficient, level: facts.LevelError, at: "2000-11-18 18:07:28"},
	{name: "vl/journald-wrapper", line: "Aug 19 18:34:30 vllm vllm[8707]: INFO 08-19 18:34:30 [api_server.py:1880] vLLM API server version 0.10.1", typ: facts.EventVersion, fields: map[string]any{"version": "0.10.1"}, at: "2000-08-19 18:34:30"},
	{name: "vl/kubectl-uvicorn-500", line: `2024-06-22T05:51:06.490+00:00 INFO:     10.42.20.211:38860 - "GET /health HTTP/1.1" 500 Internal Server Error`, typ: facts.EventRequest, level: facts.LevelError, fields: map[string]any{"status": 500.0, "path": "/health", "method": "GET"}, at: "2024-06-22 05:51:06"},
	{name: "vl/flashinfer-under-tag", line: "(EngineCore_0 pid=3516646) 2025-08-27 04:43:37,609 - INFO - autotuner.py:256 - flashinfer.jit: [Autotuner]: Autotuning process starts ...", typ: facts.EventJITBegin, proc: "EngineCore_0", fields: map[string]any{"what": "flashinfer-autotune"}, at: "2025-08-27 04:43:37"},
	{name: "vl/inductor-rank", line: "[rank0]:E0701 14:28:21.083000 911603 torch/_inductor/runtime/triton_heuristics.py:539] [0/0] ptxas fatal   : Value 'sm_120a' is not defined for option 'gpu-name'", typ: facts.EventTorchLog, level: facts.LevelError, fields: map[string]any{"rank": 0.0}},
	{name: "vl/c10d-warning", line: "[rank0]:[W1209 11:24:53.753104426 compiler_depend.ts:117] Warning: Device do not support double dtype now, dtype cast repalce with float. (function operator())", typ: facts.EventTorchLog, level: facts.LevelWarning, at: "2000-12-09 11:24:53"},
	{name: "vl/c10d-unpadded-month", line: "[rank0]:[W516 21:40:38.193445773 ProcessGroupNCCL.cpp:1553] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources.", typ: facts.EventTorchLog, level: facts.LevelWarning, at: "2000-05-16 21:40:38"},
	{name: "vl/uvicorn-tagged", line: "(APIServer pid=87) INFO:     Started server process [87]", typ: facts.EventHTTPStart, proc: "APIServer", fields: map[string]any{"pid": 87.0}},
	{name: "vl/uvicorn-startup-complete", line: "(APIServer pid=87) INFO:     Application startup complete.", typ: facts.EventReady, proc: "APIServer", level: facts.LevelInfo},
	{name: "vl/uvicorn-access", line: `INFO:     127.0.0.1:56038 - "GET /health HTTP/1.1" 200 OK`, typ: facts.EventRequest, fields: map[string]any{"status": 200.0, "path": "/health"}},
	{name: "vl/uvicorn-shutdown", line: "INFO:     Shutting down", typ: facts.EventShutdown},
	{name: "vl/uvicorn-asgi", line: "ERROR:    Exception in ASGI application", typ: facts.EventError, level: facts.LevelError, fields: map[string]any{"what": "asgi"}},
	{name: "vl/gloo", line: "[Gloo] Rank 0 is connected to 0 peer ranks. Expected number of connected peer ranks is : 0", typ: facts.EventGloo, fields: map[string]any{"connected": 0.0}},
	{name: "vl/python-warning", line: "/usr/lib/python3/site-packages/torch/utils/cpp_extension.py:2356: UserWarning: TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation.", typ: facts.EventPythonWarning, fields: map[string]any{"line": 2356.0}},
	// §2 startup milestones
	{name: "vl/platform", line: "INFO 09-03 16:28:08 [__init__.py:241] Automatically detected platform cuda.", noEvent: true},
	{name: "vl/version-dev", line: "INFO 09-03 16:28:10 [api_server.py:1882] vLLM API server version 0.10.2.dev378+g4d7fe40fc.d20250829", typ: facts.EventVersion, fields: map[string]any{"version": "0.10.2.dev378+g4d7fe40fc.d20250829"}},
	{name: "vl/non-default-args", line: "INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model_tag': '/data/datasets/models-hf/Qwen2.5-0.5B/', 'model': '/data/datasets/models-hf/Qwen2.5-0.5B/', 'tensor_parallel_size': 2}", typ: facts.EventNonDefaultArgs, fields: map[string]any{"model": "/data/datasets/models-hf/Qwen2.5-0.5B/", "tensor_parallel_size": 2.0}},
	{name: "vl/resolved-arch", line: "INFO 09-03 16:28:17 [__init__.py:744] Resolved architecture: Qwen2ForCausalLM", noEvent: true},
	{name: "vl/max-model-len", line: "INFO 09-03 16:28:17 [__init__.py:1773] Using max model len 32768", noEvent: true},
	{name: "vl/chunked-prefill", line: "INFO 09-03 16:28:17 [scheduler.py:222] Chunked prefill is enabled with max_num_batched_tokens=2048.", noEvent: true},
	{name: "vl/waiting-init", line: "INFO 09-03 16:28:23 [core.py:648] Waiting for init message from front-end.", noEvent: true},
	{name: "vl/engine-init", line: "INFO 09-03 16:28:23 [core.py:75] Initializing a V1 LLM engine (v0.10.2.dev378+g4d7fe40fc.d20250829) with config: model='/data/datasets/models-hf/Qwen2.5-0.5B/', speculative_config=None, tensor_parallel_size=2, enforce_eager=False", typ: facts.EventEngineInit, fields: map[string]any{"version": "0.10.2.dev378+g4d7fe40fc.d20250829", "engine_version": "V1", "model": "/data/datasets/models-hf/Qwen2.5-0.5B/", "tensor_parallel_size": 2.0, "enforce_eager": false}},
	{name: "vl/engine-init-v0", line: "INFO 05-26 18:53:50 [llm_engine.py:240] Initializing a V0 LLM engine (v0.8.5.post1) with config: model='Qwen/Qwen2.5-32B-Instruct', speculative_config=None", typ: facts.EventEngineInit, fields: map[string]any{"engine_version": "V0", "version": "0.8.5.post1"}},
	{name: "vl/banner-version", line: "(APIServer pid=1) INFO 04-24 16:44:31 [utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.2rc1.dev174+g100c7b65e", typ: facts.EventVersion, proc: "APIServer", fields: map[string]any{"version": "0.19.2rc1.dev174+g100c7b65e"}},
	{name: "vl/banner-model", line: "(APIServer pid=1) INFO 04-24 16:44:31 [utils.py:299]   █▄█▀ █     █     █     █  model   google/gemma-4-E2B-it", noEvent: true},
	{name: "vl/p2p-cache", line: "(VllmWorker rank=0 pid=2057) INFO 08-06 03:26:00 [custom_all_reduce_utils.py:246] reading GPU P2P access cache from /root/.cache/vllm/gpu_p2p_access_cache_for_1,2.json", typ: facts.EventP2P, proc: "VllmWorker_rank0", fields: map[string]any{"cache": "/root/.cache/vllm/gpu_p2p_access_cache_for_1,2.json"}},
	{name: "vl/rank-assigned", line: "(EngineCore_DP0 pid=66914) INFO 09-21 12:29:22 [parallel_state.py:1206] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0", proc: "EngineCore_DP0", typ: facts.EventRankAssigned, fields: map[string]any{"rank": 0.0, "world_size": 1.0, "tp": 0.0, "ep": 0.0}},
	{name: "vl/dist-init-method", line: "INFO 01-18 20:14:59 [parallel_state.py:1203] world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:43809 backend=nccl", typ: facts.EventDistInitBegin, fields: map[string]any{"world_size": 2.0, "backend": "nccl"}},
	{name: "vl/sampler", line: "(EngineCore_DP0 pid=66914) INFO 09-21 12:29:22 [topk_topp_sampler.py:55] Using FlashInfer for top-p & top-k sampling.", noEvent: true},
	{name: "vl/sampler-missing", line: "WARNING 05-26 07:50:26 [topk_topp_sampler.py:69] FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.", noEvent: true},
	{name: "vl/bar-weights", line: "Loading safetensors checkpoint shards: 100% Completed | 11/11 [00:04<00:00,  2.37it/s]", bar: &facts.ProgressBar{Desc: "Loading safetensors checkpoint shards", N: 11, Total: 11, Elapsed: 4}},
	{name: "vl/model-loading-2025", line: "(EngineCore_DP0 pid=66914) INFO 09-21 12:30:37 [gpu_model_runner.py:2581] Model loading took 2.2845 GiB and 74.270197 seconds", proc: "EngineCore_DP0", typ: facts.EventLoadEnd, fields: map[string]any{"mem_gib": 2.2845, "elapsed_s": 74.270197, "stage": "model"}},
	{name: "vl/model-loading-memory", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:43:54 [gpu_model_runner.py:3341] Model loading took 2.0513 GiB memory and 27.200487 seconds", proc: "EngineCore_DP0", typ: facts.EventLoadEnd, fields: map[string]any{"mem_gib": 2.0513, "elapsed_s": 27.200487}},
	{name: "vl/v0-model-weights", line: "INFO 01-30 03:19:10 gpu_model_runner.py:754] Loading model weights took 67.7229 GB", typ: facts.EventLoadEnd, fields: map[string]any{"mem_gb": 67.7229}},
	{name: "vl/compile-cache-dir", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:01 [backends.py:648] Using cache directory: /root/.cache/vllm/torch_compile_cache/fd1e589ad6/rank_0_0/backbone for vLLM's torch.compile", proc: "EngineCore_DP0", typ: facts.EventTorchCompile, fields: map[string]any{"stage": "begin", "cache_dir": "/root/.cache/vllm/torch_compile_cache/fd1e589ad6/rank_0_0/backbone"}},
	{name: "vl/dynamo", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:01 [backends.py:708] Dynamo bytecode transform time: 6.07 s", proc: "EngineCore_DP0", typ: facts.EventTorchCompile, fields: map[string]any{"dynamo_s": 6.07}},
	{name: "vl/compile-cold", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:15 [backends.py:286] Compiling a graph for dynamic shape takes 13.62 s", proc: "EngineCore_DP0", typ: facts.EventTorchCompile, fields: map[string]any{"compile_s": 13.62, "stage": "compile"}},
	{name: "vl/compile-warm", line: "(EngineCore_DP0 pid=188893) INFO 10-21 09:11:55 [backends.py:164] Directly load the compiled graph(s) for dynamic shape from the cache, took 2.717 s", proc: "EngineCore_DP0", typ: facts.EventTorchCompile, fields: map[string]any{"cached": true, "load_s": 2.717}},
	{name: "vl/compile-total", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:16 [monitor.py:34] torch.compile takes 19.69 s in total", proc: "EngineCore_DP0", typ: facts.EventTorchCompileEnd, fields: map[string]any{"elapsed_s": 19.69}},
	{name: "vl/compile-total-2026", line: "(EngineCore pid=17574) INFO 08-01 17:49:34 [monitor.py:53] torch.compile took 30.61 s in total", typ: facts.EventTorchCompileEnd, proc: "EngineCore", fields: map[string]any{"elapsed_s": 30.61}},
	{name: "vl/available-kv", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:17 [gpu_worker.py:348] Available KV cache memory: 33.31 GiB", proc: "EngineCore_DP0", typ: facts.EventAvailableKV, fields: map[string]any{"gib": 33.31}},
	{name: "vl/kv-size", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:18 [kv_cache_utils.py:1234] GPU KV cache size: 1,587,648 tokens", proc: "EngineCore_DP0", typ: facts.EventKVCacheSize, fields: map[string]any{"tokens": 1587648.0}},
	{name: "vl/max-concurrency", line: "(EngineCore_DP0 pid=441) INFO 11-24 11:44:18 [kv_cache_utils.py:1239] Maximum concurrency for 2,048 tokens per request: 775.22x", proc: "EngineCore_DP0", typ: facts.EventMaxConcurrency, fields: map[string]any{"tokens_per_request": 2048.0, "concurrency": 775.22}},
	{name: "vl/max-concurrency-v1-early", line: "INFO 01-30 03:19:14 kv_cache_utils.py:398] Maximum concurrency for 2048 tokens per request: 10.79x", typ: facts.EventMaxConcurrency, fields: map[string]any{"tokens_per_request": 2048.0, "concurrency": 10.79}},
	{name: "vl/profiling-graph-mem", line: "(EngineCore pid=1259857) INFO 04-13 19:51:20 [gpu_model_runner.py:5914] Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)", typ: facts.EventMemoryProfile, proc: "EngineCore"},
	{name: "vl/estimated-graph-mem", line: "(EngineCore pid=1259857) INFO 04-13 19:51:23 [gpu_model_runner.py:5993] Estimated CUDA graph memory: 1.62 GiB total", proc: "EngineCore", typ: facts.EventMemoryProfile, fields: map[string]any{"cuda_graph_gib": 1.62}},
	{name: "vl/bar-piecewise", line: "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 51/51 [00:01<00:00, 33.44it/s]", bar: &facts.ProgressBar{Desc: "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)", N: 51, Total: 51, Elapsed: 1}},
	{name: "vl/bar-full", line: "Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:01<00:00, 33.86it/s]", bar: &facts.ProgressBar{Desc: "Capturing CUDA graphs (decode, FULL)", N: 35, Total: 35, Elapsed: 1}},
	{name: "vl/bar-shapes (V0)", line: "Capturing CUDA graph shapes: 100%|██████████| 35/35 [00:10<00:00,  3.41it/s]", bar: &facts.ProgressBar{Desc: "Capturing CUDA graph shapes", N: 35, Total: 35, Elapsed: 10}},
	{name: "vl/graph-finished", line: "(EngineCore_DP0 pid=188893) INFO 10-21 09:12:04 [gpu_model_runner.py:3480] Graph capturing finished in 7 secs, took 0.95 GiB", proc: "EngineCore_DP0", typ: facts.EventGraphEnd, fields: map[string]any{"elapsed_s": 7.0, "mem_gib": 0.95}},
	{name: "vl/init-engine", line: "(EngineCore_DP0 pid=188893) INFO 10-21 09:12:04 [core.py:210] init engine (profile, create kv cache, warmup model) took 25.99 seconds", proc: "EngineCore_DP0", typ: facts.EventInitEngineDone, fields: map[string]any{"elapsed_s": 25.99}},
	{name: "vl/init-engine-2026", line: "(EngineCore pid=23397) INFO 08-01 21:23:42 [core.py:337] init engine (profile, create kv cache, warmup model) took 867.33 s (compilation: 9.98 s)", proc: "EngineCore", typ: facts.EventInitEngineDone, fields: map[string]any{"elapsed_s": 867.33, "compilation_s": 9.98}},
	{name: "vl/cache-config-info", line: "(APIServer pid=188747) INFO 10-21 09:12:14 [loggers.py:147] Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 26589", typ: facts.EventKVCacheSize, proc: "APIServer", fields: map[string]any{"gpu_blocks": 26589.0}},
	{name: "vl/supported-tasks", line: "(APIServer pid=1391815) INFO 08-19 14:58:41 [api_server.py:1639] Supported_tasks: ['generate']", noEvent: true},
	{name: "vl/starting-server-2026", line: "(APIServer pid=34165) INFO 05-06 21:00:52 [api_server.py:602] Starting vLLM server on http://0.0.0.0:8000", proc: "APIServer", typ: facts.EventHTTPStart, fields: map[string]any{"url": "http://0.0.0.0:8000"}},
	{name: "vl/starting-server-2025", line: "INFO 05-12 02:46:33 [api_server.py:1090] Starting vLLM API server on http://0.0.0.0:8000", typ: facts.EventHTTPStart, fields: map[string]any{"url": "http://0.0.0.0:8000"}},
	{name: "vl/routes", line: "(APIServer pid=34165) INFO 05-06 21:00:52 [launcher.py:37] Available routes are:", noEvent: true},
	{name: "vl/route-health", line: "(APIServer pid=34165) INFO 05-06 21:00:52 [launcher.py:46] Route: /health, Methods: GET", proc: "APIServer", typ: facts.EventRoute, fields: map[string]any{"path": "/health", "methods": "GET"}},
	{name: "vl/v0-mem-profiling", line: "INFO 03-21 20:15:45 [worker.py:267] Memory profiling takes 34.26 seconds", typ: facts.EventMemoryProfile, fields: map[string]any{"elapsed_s": 34.26}},
	{name: "vl/v0-mem-usable (format)", line: "INFO 03-21 20:15:45 [worker.py:267] the current vLLM instance can use total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.24GiB", typ: facts.EventMemoryProfile, fields: map[string]any{"total_gib": 79.15, "utilization": 0.90, "usable_gib": 71.24}},
	{name: "vl/v0-mem-split (format)", line: "INFO 03-21 20:15:45 [worker.py:267] model weights take 14.99GiB; non_torch_memory takes 0.19GiB; PyTorch activation peak memory takes 1.20GiB; the rest of the memory reserved for KV Cache is 54.86GiB.", typ: facts.EventMemoryProfile, fields: map[string]any{"weights_gib": 14.99, "kv_cache_gib": 54.86, "activation_gib": 1.20}},
	{name: "vl/v0-blocks", line: "INFO 03-21 20:15:46 [executor_base.py:111] # cuda blocks: 7191, # CPU blocks: 512", typ: facts.EventKVCacheSize, fields: map[string]any{"gpu_blocks": 7191.0, "cpu_blocks": 512.0}},
	{name: "vl/free-memory-summary", line: "(EngineCore_DP0 pid=995968) INFO 09-26 22:38:51 [gpu_worker.py:391] Free memory on device (14.66/15.99 GiB) on startup. Desired GPU memory utilization is (0.8, 12.79 GiB). Actual usage is 4.15 GiB for weight, 2.65 GiB for peak activation, 0.02 GiB for non-torch memory, and 4.06 GiB for CUDAGraph memory.", proc: "EngineCore_DP0", typ: facts.EventMemoryProfile, fields: map[string]any{"free_gib": 14.66, "total_gib": 15.99, "utilization": 0.8, "desired_gib": 12.79, "weights_gib": 4.15, "activation_gib": 2.65, "non_torch_gib": 0.02, "cuda_graph_gib": 4.06}},
	// §3 stat lines of each era
	{name: "vl/stat-v0-2024", line: "INFO 02-28 21:48:18 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 44.9 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, CPU KV cache usage: 0.0%", series: facts.EventStatThroughput, values: map[string]float64{"prompt_throughput": 0, "gen_throughput": 44.9, "running": 2, "swapped": 0, "waiting": 3, "kv_cache_usage_pct": 82.1, "cpu_kv_cache_usage_pct": 0}},
	{name: "vl/stat-v0-dot", line: "INFO 01-22 18:27:20 metrics.py:449] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 41.7 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.0%, CPU KV cache usage: 0.0%.", series: facts.EventStatThroughput, values: map[string]float64{"gen_throughput": 41.7, "running": 1, "kv_cache_usage_pct": 2.0, "cpu_kv_cache_usage_pct": 0}},
	{name: "vl/stat-v0-92pct", line: "INFO 01-23 06:33:37 metrics.py:396] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 16.7 tokens/s, Running: 16 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 92.1%, CPU KV cache usage: 0.0%.", series: facts.EventStatThroughput, values: map[string]float64{"running": 16, "kv_cache_usage_pct": 92.1}},
	{name: "vl/stat-v0-bracket", line: "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 15.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: 0.1%.", series: facts.EventStatThroughput, values: map[string]float64{"gen_throughput": 15.5, "cpu_kv_cache_usage_pct": 0.1}},
	{name: "vl/stat-v0-prefix-line", line: "INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%", series: facts.EventStatThroughput, stream: "prefix-cache", values: map[string]float64{"gpu_prefix_cache_hit_pct": 0, "cpu_prefix_cache_hit_pct": 90}},
	{name: "vl/stat-v1-jan2025 (format)", line: "INFO 01-30 03:20:00 loggers.py:72] Avg prompt throughput: 12.0 tokens/s, Avg generation throughput: 30.5 tokens/s, Running: 2 reqs, Waiting: 0 reqs ", series: facts.EventStatThroughput, values: map[string]float64{"prompt_throughput": 12, "running": 2, "waiting": 0}},
	{name: "vl/stat-engine-000", line: "Engine 000: Avg prompt throughput: 1.1 tokens/s, Avg generation throughput: 10.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%", series: facts.EventStatThroughput, values: map[string]float64{"prompt_throughput": 1.1, "gen_throughput": 10.0}},
	{name: "vl/stat-43295-a", line: "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache usage: 95.9%, Prefix cache hit rate: 0.0%", series: facts.EventStatThroughput, proc: "APIServer", values: map[string]float64{"gen_throughput": 1055.3, "running": 18, "waiting": 43, "kv_cache_usage_pct": 95.9}},
	{name: "vl/stat-43295-b", line: "(APIServer pid=3646) INFO 05-19 10:13:41 [loggers.py:271] Engine 000: Avg prompt throughput: 18032.5 tokens/s, Avg generation throughput: 589.8 tokens/s, Running: 21 reqs, Waiting: 23 reqs, GPU KV cache usage: 95.9%, Prefix cache hit rate: 0.0%", proc: "APIServer", series: facts.EventStatThroughput, values: map[string]float64{"prompt_throughput": 18032.5}},
	{name: "vl/stat-hit-rate", line: "(APIServer pid=5150) INFO 07-14 21:36:42 [loggers.py:273] Engine 000: Avg prompt throughput: 4.0 tokens/s, Avg generation throughput: 5.6 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.0%, Prefix cache hit rate: 48.4%", proc: "APIServer", series: facts.EventStatThroughput, values: map[string]float64{"prefix_cache_hit_pct": 48.4}},
	{name: "vl/stat-mm", line: "(APIServer pid=92107) INFO 05-08 16:22:00 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%, MM cache hit rate: 0.0%", proc: "APIServer", series: facts.EventStatThroughput, values: map[string]float64{"mm_cache_hit_pct": 0}},
	{name: "vl/stat-dgx", line: "(APIServer pid=1) INFO 09-07 06:43:30 [loggers.py:310] Engine 000: Avg prompt throughput: 260.2 tokens/s, Avg generation throughput: 34.1 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 70.1%, Prefix cache hit rate: 81.4%", proc: "APIServer", series: facts.EventStatThroughput, values: map[string]float64{"prompt_throughput": 260.2, "prefix_cache_hit_pct": 81.4}},
	{name: "vl/stat-preemptions (format)", line: "(APIServer pid=1) INFO 09-07 06:43:40 [loggers.py:310] Engine 001: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 34.1 tokens/s, Running: 30 reqs, Waiting: 12 reqs, Preemptions: 4, GPU KV cache usage: 99.1%, Prefix cache hit rate: 1.4%", proc: "APIServer", series: facts.EventStatThroughput, stream: "Engine 001", values: map[string]float64{"preemptions": 4, "kv_cache_usage_pct": 99.1}},
	{name: "vl/stat-aggregated (format)", line: "(APIServer pid=1) INFO 09-07 06:43:40 [loggers.py:310] 4 Engines Aggregated: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 34.1 tokens/s, Running: 30 reqs, Waiting: 12 reqs, GPU KV cache usage: 50.0%, Prefix cache hit rate: 1.4%", proc: "APIServer", series: facts.EventStatThroughput, stream: "aggregated", values: map[string]float64{"running": 30}},
	// §3.3 speculative decoding lines of each era
	{name: "vl/spec-v1-early", line: "Speculative metrics: Draft acceptance rate: 1.000, Number of accepted tokens: 66, Number of draft tokens: 66, ", series: facts.EventStatSpecDecode, values: map[string]float64{"acceptance_rate_pct": 100, "accepted_tokens": 66, "draft_tokens": 66}},
	{name: "vl/spec-v1-apr2025", line: "SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens", series: facts.EventStatSpecDecode, values: map[string]float64{"acceptance_rate_pct": 100, "accepted_tokens": 66, "draft_tokens": 66}},
	{name: "vl/spec-v1-sep2025", line: "(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: Draft acceptance rate: 88.8%, Mean acceptance length: 5.44, Accepted throughput: 4.37 tokens/s, Drafted throughput: 4.92 tokens/s, Accepted: 262 tokens, Drafted: 295 tokens, Per-position acceptance rate: 0.983, 0.949, 0.915, 0.881, 0.712", series: facts.EventStatSpecDecode, proc: "APIServer", values: map[string]float64{"acceptance_rate_pct": 88.8, "mean_acceptance_length": 5.44, "accepted_throughput": 4.37, "drafted_throughput": 4.92, "accepted_tokens": 262, "draft_tokens": 295, "acceptance_pos_0": 0.983, "acceptance_pos_4": 0.712}},
	{name: "vl/spec-v1-2026", line: "(APIServer pid=92107) INFO 05-08 16:21:55 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.20, Accepted throughput: 15.60 tokens/s, Drafted throughput: 38.99 tokens/s, Accepted: 78 tokens, Drafted: 195 tokens, Per-position acceptance rate: 0.615, 0.415, 0.169, Avg Draft acceptance rate: 40.0%", proc: "APIServer", series: facts.EventStatSpecDecode, values: map[string]float64{"mean_acceptance_length": 2.20, "acceptance_pos_2": 0.169, "acceptance_rate_pct": 40.0, "draft_tokens": 195}},
	{name: "vl/spec-dgx-a", line: "(APIServer pid=1) INFO 09-07 06:43:20 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.08, Accepted throughput: 15.58 tokens/s, Drafted throughput: 28.77 tokens/s, Accepted: 156 tokens, Drafted: 288 tokens, Per-position acceptance rate: 0.639, 0.444, Avg Draft acceptance rate: 54.2%", proc: "APIServer", series: facts.EventStatSpecDecode, values: map[string]float64{"mean_acceptance_length": 2.08, "acceptance_pos_1": 0.444, "acceptance_rate_pct": 54.2}},
	{name: "vl/spec-dgx-b", line: "(APIServer pid=1) INFO 09-07 06:43:30 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 1.85, Accepted throughput: 15.60 tokens/s, Drafted throughput: 36.80 tokens/s, Accepted: 156 tokens, Drafted: 368 tokens, Per-position acceptance rate: 0.511, 0.337, Avg Draft acceptance rate: 42.4%", proc: "APIServer", series: facts.EventStatSpecDecode, values: map[string]float64{"mean_acceptance_length": 1.85, "acceptance_rate_pct": 42.4}},
	{name: "vl/spec-v0 (format)", line: "INFO 06-01 10:00:00 metrics.py:400] Speculative metrics: Draft acceptance rate: 0.520, System efficiency: 0.450, Number of speculative tokens: 4, Number of accepted tokens: 520, Number of draft tokens: 1000, Number of emitted tokens: 900.", series: facts.EventStatSpecDecode, values: map[string]float64{"acceptance_rate_pct": 52, "system_efficiency": 0.45, "speculative_tokens": 4, "emitted_tokens": 900}},
	// §4 failures
	{name: "vl/v0-preemption (recalled format)", line: "WARNING 01-22 18:30:00 scheduler.py:1560] Sequence group 123 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51", typ: facts.EventPreemption, level: facts.LevelWarning, fields: map[string]any{"mode": "RECOMPUTE", "total": 51.0}},
	{name: "vl/shm-2025", line: "(EngineCore_DP0 pid=77352) INFO 10-22 09:43:49 [shm_broadcast.py:466] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation", typ: facts.EventSHMWait, proc: "EngineCore_DP0", fields: map[string]any{"wait_s": 60.0}},
	{name: "vl/shm-2026", line: "(EngineCore pid=2025) INFO 08-13 11:27:02 [shm_broadcast.py:802] No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).", proc: "EngineCore", typ: facts.EventSHMWait, fields: map[string]any{"wait_s": 60.0}},
	{name: "vl/init-failed-empty", line: "(APIServer pid=1179246) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}", typ: facts.EventEngineInitFailed, proc: "APIServer", level: facts.LevelError, fields: map[string]any{"failed_procs": "{}"}},
	{name: "vl/init-failed-pytest", line: "E               RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}", typ: facts.EventEngineInitFailed, level: facts.LevelError},
	{name: "vl/enginecore-failed", line: "ERROR 05-26 07:50:26 [core.py:396] EngineCore failed to start.", typ: facts.EventEngineInitFailed, level: facts.LevelError, fields: map[string]any{"what": "engine-core"}},
	{name: "vl/workerproc-failed", line: "(EngineCore pid=395145) ERROR 06-03 12:30:47 [core.py:1165] Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause.", proc: "EngineCore", typ: facts.EventEngineInitFailed, fields: map[string]any{"what": "worker"}},
	{name: "vl/worker-died", line: "(EngineCore_DP0 pid=137324) ERROR 10-29 08:32:36 [multiproc_executor.py:154] Worker proc VllmWorker-0 died unexpectedly, shutting down executor.", typ: facts.EventWorkerDied, proc: "EngineCore_DP0", level: facts.LevelError, fields: map[string]any{"worker": "VllmWorker-0"}},
	{name: "vl/engine-core-died", line: "(APIServer pid=215332) ERROR 09-05 01:15:59 [core_client.py:562] Engine core proc EngineCore_0 died unexpectedly, shutting down client.", typ: facts.EventEngineDead, proc: "APIServer", fields: map[string]any{"proc": "EngineCore_0"}},
	{name: "vl/workerproc-terminated", line: "(Worker_TP2 pid=1913) WARNING 06-01 17:32:02 [multiproc_executor.py:884] WorkerProc was terminated", typ: facts.EventShutdown, proc: "Worker_TP2", level: facts.LevelWarning},
	{name: "vl/timeouterror", line: "(EngineCore_DP0 pid=18052) ERROR 02-03 22:43:35 [core.py:968] TimeoutError", proc: "EngineCore_DP0", typ: facts.EventError, level: facts.LevelError},
	{name: "vl/rpc-timeout-condensed", line: "09:14:37 TimeoutError: RPC call to sample_tokens timed out.", typ: facts.EventRPCTimeout, fields: map[string]any{"method": "sample_tokens"}},
	{name: "vl/rpc-timeout", line: "TimeoutError: RPC call to execute_model timed out.", typ: facts.EventRPCTimeout, fields: map[string]any{"method": "execute_model"}},
	{name: "vl/engine-dead-error", line: "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.", typ: facts.EventEngineDead},
	{name: "vl/fatal-error", line: "(EngineCore_DP0 pid=478560) ERROR 01-18 22:19:26 [core.py:868] EngineCore encountered a fatal error.", proc: "EngineCore_DP0", typ: facts.EventEngineDead, level: facts.LevelError},
	{name: "vl/no-memory-cache-blocks", line: "ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", typ: facts.EventKVInsufficient},
	{name: "vl/free-memory-startup", line: "ValueError: Free memory on device (67.24/79.25 GiB) on startup is less than desired GPU memory utilization (0.9, 71.33 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.", typ: facts.EventOOM, fields: map[string]any{"kind": "startup-free-memory", "free_gib": 67.24, "total_gib": 79.25, "utilization": 0.9, "desired_gib": 71.33}},
	{name: "vl/kv-too-small", line: "(EngineCore pid=6890) ValueError: To serve at least one request with the model's max seq len (262144), (18.35 GiB KV cache is needed, which is larger than the available KV cache memory (8.72 GiB). Based on the available memory, the estimated maximum model length is 121840. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.", typ: facts.EventKVInsufficient, proc: "EngineCore", fields: map[string]any{"max_seq_len": 262144.0, "needed_gib": 18.35, "available_gib": 8.72, "estimated_max_len": 121840.0}},
	{name: "vl/oom-old-torch", line: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.63 GiB (GPU 0; 44.56 GiB total capacity; 27.91 GiB already allocated; 565.31 MiB free; 27.93 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF", typ: facts.EventOOM, level: facts.LevelError, fields: map[string]any{"tried_gib": 1.63, "gpu": 0.0, "total_gib": 44.56, "allocated_gib": 27.91, "free_gib": 565.31 / 1024, "reserved_gib": 27.93}},
	{name: "vl/cuda-error-oom", line: "RuntimeError: CUDA error: out of memory", typ: facts.EventOOM},
	{name: "vl/no-kernel-image", line: "RuntimeError: CUDA error: no kernel image is available for execution on the device", typ: facts.EventTraceback, fields: map[string]any{"headless": true}, exc: "RuntimeError"},
	{name: "vl/custom-ar-p2p", line: "(VllmWorker rank=0 pid=2057) WARNING 08-06 03:26:00 [custom_all_reduce.py:147] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.", proc: "VllmWorker_rank0", typ: facts.EventCustomAllReduce, level: facts.LevelWarning, fields: map[string]any{"enabled": false, "reason": "your platform lacks GPU P2P capability or P2P test failed"}},
	{name: "vl/jit-monitor", line: "(Worker_TP0 pid=1875538) WARNING 06-16 19:27:42 [jit_monitor.py:103] Triton kernel JIT compilation during inference: _zero_kv_blocks_kernel. This causes a latency spike; consider extending warmup to cover this shape/config.", typ: facts.EventJITProgress, proc: "Worker_TP0", fields: map[string]any{"kernel": "_zero_kv_blocks_kernel"}},
	// Built from the monitor's format (vllm/utils/jit_monitor.py): the CuTe DSL hook's backend and event words.
	{name: "vl/jit-monitor-cutedsl", line: "(EngineCore pid=9738) WARNING 05-22 12:30:11 [jit_monitor.py:103] CuTeDSL JIT compilation during inference: BlockScaledGemmKernel. This causes a latency spike; consider extending warmup to cover this shape/config.", typ: facts.EventJITProgress, proc: "EngineCore", fields: map[string]any{"kernel": "BlockScaledGemmKernel", "what": "cutedsl-inference"}},
	{name: "vl/placement-wait", line: "INFO 05-26 18:54:03 [ray_utils.py:233] Waiting for creating a placement group of specs for 10 seconds. specs=[{'node:10.0.0.175': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` and `ray list nodes` to see if you have enough resources", typ: facts.EventPlacementWait, fields: map[string]any{"wait_s": 10.0}},
	{name: "vl/shutdown-2026", line: "(EngineCore pid=23397) INFO 08-01 21:34:51 [core.py:1214] [shutdown] EngineCore: trigger received signal=SIGTERM", typ: facts.EventShutdown, proc: "EngineCore"},
	{name: "vl/sigterm-native", line: "*** SIGTERM received at time=1748300290 on cpu 8 ***", typ: facts.EventSignal, fields: map[string]any{"signal": "SIGTERM"}},
	{name: "vl/segfault", line: "Segmentation fault (core dumped)", typ: facts.EventKilled, fields: map[string]any{"signal": "SIGSEGV"}},
	// §4.6 attention backends
	{name: "vl/backend-v1-5090", line: "INFO 05-26 07:50:26 [cuda.py:221] Using Flash Attention backend on V1 engine.", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "Flash Attention"}},
	{name: "vl/backend-v1-dp0", line: "(EngineCore_DP0 pid=66914) INFO 09-21 12:30:10 [cuda.py:371] Using Flash Attention backend on V1 engine.", typ: facts.EventAttentionBackend, proc: "EngineCore_DP0"},
	{name: "vl/backend-v0-fp8", line: "INFO 09-10 13:32:59 [cuda.py:417] Cannot use FlashAttention backend for FP8 KV cache.", typ: facts.EventConfigWarning},
	{name: "vl/backend-xformers", line: "INFO 09-10 13:32:59 [cuda.py:429] Using XFormers backend.", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "XFormers"}},
	{name: "vl/backend-enum", line: "Using AttentionBackendEnum.FLASHINFER backend.", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "FLASHINFER"}},
	{name: "vl/backend-potential", line: "(Worker_TP0 pid=478857) INFO 01-18 20:15:07 [cuda.py:351] Using FLASH_ATTN attention backend out of potential backends: ('FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION')", proc: "Worker_TP0", typ: facts.EventAttentionBackend, fields: map[string]any{"backend": "FLASH_ATTN", "candidates": "('FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION')"}},
	{name: "vl/backend-fa-version", line: "(EngineCore_DP0 pid=230015) INFO 05-16 21:40:04 [flash_attn.py:587] Using FlashAttention version 2", proc: "EngineCore_DP0", typ: facts.EventAttentionBackend, fields: map[string]any{"fa_version": 2.0}},
	{name: "vl/backend-invalid", line: "ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration. Reason: ['head_size not supported']", typ: facts.EventTraceback, fields: map[string]any{"headless": true}, exc: "ValueError"},
	{name: "vl/backend-none-valid", line: "(Worker_TP4_EP4 pid=2532) ERROR 12-29 15:21:11 [multiproc_executor.py:751] ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=576, dtype=torch.bfloat16, kv_cache_dtype=auto, block_size=None, use_mla=True, has_sink=False, use_sparse=True, use_mm_prefix=False, attn_type=decoder).", typ: facts.EventTraceback, exc: "ValueError", proc: "Worker_TP4_EP4", level: facts.LevelError},
	{name: "vl/ninja-step", line: "[2/3] /usr/local/cuda/bin/nvcc -MD -MF cuda.cuda.o.d -ccbin /opt/gcc/bin/gcc -c cuda.cu -o cuda.cuda.o", typ: facts.EventJITProgress, fields: map[string]any{"what": "ninja", "n": 2.0, "total": 3.0, "tool": "nvcc"}},
	{name: "vl/nccl-info-version", line: "gpu-node-1:12345:12345 [0] NCCL INFO NCCL version 2.21.5+cuda12.4", typ: facts.EventNCCLVersion, fields: map[string]any{"version": "2.21.5+cuda12.4", "host": "gpu-node-1", "pid": 12345.0, "rank": 0.0}},
	{name: "vl/nccl-info-p2p", line: "gpu-node-1:12345:12398 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC", typ: facts.EventNCCLInfo, fields: map[string]any{"transport": "P2P", "rank": 1.0}},
	{name: "vl/nccl-warn", line: "gpu-node-1:12345:12398 [1] NCCL WARN Cuda failure 'invalid argument'", typ: facts.EventNCCLWarn, level: facts.LevelWarning},
	// NCCL's WARN format names the source line that printed it (debug.cc).
	{name: "vl/nccl-warn-src", line: "gpu-node-1:12345:12398 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these two devices'", typ: facts.EventNCCLWarn, level: facts.LevelWarning, fields: map[string]any{"rank": 1.0, "pid": 12345.0}},
	{name: "vl/nccl-warn-func", line: "node7:881:1290 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45123> failed : Software caused connection abort", typ: facts.EventNCCLWarn, level: facts.LevelWarning, fields: map[string]any{"host": "node7", "rank": 3.0}},
	{name: "vl/bar-glued-tag", line: "Processed prompts:   0%|          | 0/1 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 toks/s](EngineCore pid=4775) WARNING 06-04 12:29:15 [jit_monitor.py:103] Triton kernel JIT compilation during inference: _fwd_kernel. This causes a latency spike.", typ: facts.EventJITProgress, proc: "EngineCore", bar: &facts.ProgressBar{Desc: "Processed prompts", N: 0, Total: 1}},
}

func TestLines(t *testing.T) {
	cases := append(append([]lineCase{}, sglangLines...), vllmLines...)
	require.GreaterOrEqual(t, len(cases), 150, "the issue asks for at least 150 real-format lines")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind := c.kind
			if kind == "" {
				kind = facts.KindSGLangLog
				if strings.HasPrefix(c.name, "vl/") {
					kind = facts.KindVLLMLog
				}
			}
			out, issues := parseText("x.log", c.line+"\n", kind)
			assert.Empty(t, issues)
			require.Len(t, out.Logs, 1)
			l := out.Logs[0]
			for _, e := range l.Events {
				assert.Empty(t, payloadMismatch(e))
			}
			assert.Equal(t, 1, l.Lines)
			if c.noEvent {
				assert.Empty(t, l.Events, "want no event")
				assert.Empty(t, l.Series)
			}
			if c.notType != "" {
				assert.Nil(t, firstEvent(l, c.notType), "want no %s event", c.notType)
			}
			if c.typ != "" {
				ev := firstEvent(l, c.typ)
				require.NotNil(t, ev, "want a %s event, got %v", c.typ, types(l))
				assert.Equal(t, c.proc, ev.Proc.Name, "proc")
				if c.level != "" {
					assert.Equal(t, c.level, ev.Level, "level")
				}
				for k, v := range c.fields {
					assert.Equal(t, v, facts.Fields(ev.Data)[k], "field %s", k)
				}
				if c.exc != "" {
					require.NotNil(t, ev.Traceback, "a traceback")
					assert.Equal(t, c.exc, ev.Traceback.ExcType)
				}
				if c.at != "" {
					assert.Equal(t, c.at, ev.Time.Format("2006-01-02 15:04:05"), "time")
				}
			}
			if c.series != "" {
				s := findSeries(l, c.series, c.stream)
				require.NotNil(t, s, "want a %s series", c.series)
				assert.Equal(t, c.proc, s.Proc.Name)
				assert.Equal(t, 1, s.Count)
				for k, v := range c.values {
					assert.InDelta(t, v, s.First.Values[k], 1e-9, "value %s", k)
				}
			}
			if c.bar != nil {
				require.Len(t, l.Bars, 1)
				b := l.Bars[0]
				assert.Equal(t, c.bar.Desc, b.Desc)
				assert.Equal(t, c.bar.Detail, b.Detail)
				assert.Equal(t, c.bar.N, b.N)
				assert.Equal(t, c.bar.Total, b.Total)
				assert.Equal(t, c.bar.Elapsed, b.Elapsed)
				assert.Equal(t, 1, b.Updates)
			}
		})
	}
}

func firstEvent(l *facts.Log, typ facts.EventType) *facts.LogEvent {
	for _, e := range l.Events {
		if e.Type == typ {
			return e
		}
	}
	return nil
}

func types(l *facts.Log) []facts.EventType {
	var out []facts.EventType
	for _, e := range l.Events {
		out = append(out, e.Type)
	}
	return out
}

func findSeries(l *facts.Log, typ facts.EventType, stream string) *facts.Series {
	for _, s := range l.Series {
		if s.Type == typ && s.Stream == stream {
			return s
		}
	}
	return nil
}
