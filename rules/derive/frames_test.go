package derive

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
)

func TestBuiltinFramesParse(t *testing.T) {
	m, err := ParseFrames(builtinFrames, "catalog/frames.yaml")
	require.NoError(t, err)
	assert.NotEmpty(t, m.Phases)
	assert.NotEmpty(t, m.Libraries)
}

func TestParseFramesRejects(t *testing.T) {
	_, err := ParseFrames([]byte("phases:\n  - phase: nowhere\n    funcs: ['*']\n"), "x.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `phase "nowhere" is not in the taxonomy`)
	assert.Contains(t, err.Error(), "funcs '*' needs files")
	assert.Contains(t, err.Error(), "no references")
}

// Real frames from upstream tracebacks (fixtures/incidents and the corpus).
func TestTracebackPhase(t *testing.T) {
	m := BuiltinFrames()
	cases := []struct {
		name   string
		frames []facts.Frame
		want   Phase
		lib    string
	}{
		{"SGLang capture (flashinfer-1892)", []facts.Frame{
			{File: "/x/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 485, Func: "capture"},
			{File: "/x/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 661, Func: "capture_one_batch_size"},
			{File: "/x/sglang/python/sglang/srt/models/llama.py", Line: 469, Func: "forward"},
		}, PhaseCUDAGraphCapture, "cuda-graph"},
		{"vLLM V0 KV cache sizing (vllm-2785)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", Line: 114, Func: "__init__"},
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", Line: 331, Func: "_init_cache"},
		}, PhaseKVCache, ""},
		{"vLLM capture inside the piecewise backend (vllm-19186)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/site-packages/vllm/compilation/backends.py", Line: 681, Func: "__call__"},
			{File: "/usr/local/lib/python3.10/site-packages/torch/cuda/graphs.py", Line: 186, Func: "__exit__"},
			{File: "/usr/local/lib/python3.10/site-packages/torch/cuda/graphs.py", Line: 84, Func: "capture_end"},
		}, PhaseCUDAGraphCapture, "cuda-graph"},
		{"vLLM quantization scheme chosen while building the model (vllm-29707)", []facts.Frame{
			{File: "/h/site-packages/vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py", Line: 117, Func: "get_quant_method"},
		}, PhaseWeightsLoading, "quantization"},
		{"vLLM symmetric-memory communicator (vllm-26925)", []facts.Frame{
			{File: "/h/vllm/distributed/parallel_state.py", Line: 363, Func: "__init__"},
			{File: "/h/vllm/distributed/device_communicators/symm_mem.py", Line: 94, Func: "__init__"},
		}, PhaseDistributedInit, "symmetric-memory"},
		{"vLLM's message queue between processes is not NCCL (flashinfer-3279)", []facts.Frame{
			{File: "vllm/v1/executor/multiproc_executor.py", Line: 386, Func: "get_response"},
			{File: "vllm/distributed/device_communicators/shm_broadcast.py", Line: 631, Func: "timeout_ms"},
		}, "", "shm-broadcast"},
		{"SGLang pool sizing named only by the source line", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py", Line: 512, Func: "initialize", Code: "self.init_memory_pool()"},
		}, PhaseKVCache, ""},
		{"TGI warmup (tgi-755)", []facts.Frame{
			{File: "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", Line: 727, Func: "warmup"},
			{File: "/opt/conda/lib/python3.9/site-packages/torch/nn/modules/module.py", Line: 1501, Func: "_call_impl"},
		}, PhaseWarmup, ""},
		// vLLM V0 0.5: profile_run calls the model runner's execute_model
		// to profile memory; that execute_model must not read as serving.
		{"vLLM V0 profile_run through execute_model (vllm-7854)", []facts.Frame{
			{File: "/opt/conda/lib/python3.10/site-packages/vllm/executor/gpu_executor.py", Line: 94, Func: "determine_num_available_blocks"},
			{File: "/opt/conda/lib/python3.10/site-packages/torch/utils/_contextlib.py", Line: 116, Func: "decorate_context"},
			{File: "/opt/conda/lib/python3.10/site-packages/vllm/worker/worker.py", Line: 179, Func: "determine_num_available_blocks"},
			{File: "/opt/conda/lib/python3.10/site-packages/torch/utils/_contextlib.py", Line: 116, Func: "decorate_context"},
			{File: "/opt/conda/lib/python3.10/site-packages/vllm/worker/model_runner.py", Line: 940, Func: "profile_run"},
			{File: "/opt/conda/lib/python3.10/site-packages/torch/utils/_contextlib.py", Line: 116, Func: "decorate_context"},
			{File: "/opt/conda/lib/python3.10/site-packages/vllm/worker/model_runner.py", Line: 1363, Func: "execute_model"},
		}, PhaseKVCache, ""},
		{"vLLM V0 _initialize_kv_caches (vllm-10569)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", Line: 348, Func: "__init__"},
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", Line: 483, Func: "_initialize_kv_caches"},
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/executor/gpu_executor.py", Line: 114, Func: "determine_num_available_blocks"},
		}, PhaseKVCache, ""},
		{"vLLM V0 capture from _warm_up_model (vllm-6746)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", Line: 236, Func: "_warm_up_model"},
			{File: "/usr/local/lib/python3.10/dist-packages/torch/utils/_contextlib.py", Line: 115, Func: "decorate_context"},
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py", Line: 1173, Func: "capture_model"},
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/worker/model_runner.py", Line: 1410, Func: "capture"},
			{File: "/usr/local/lib/python3.10/dist-packages/torch/cuda/graphs.py", Line: 184, Func: "__exit__"},
			{File: "/usr/local/lib/python3.10/dist-packages/torch/cuda/graphs.py", Line: 82, Func: "capture_end"},
		}, PhaseCUDAGraphCapture, "cuda-graph"},
		{"vLLM V0 _warm_up_model cut before capture_model is still the capture (vllm-7593)", []facts.Frame{
			{File: "/local_disk0/.ephemeral_nfs/envs/pythonEnv-203728e4-b8a6-4791-b5f1-975f27b82372/lib/python3.11/site-packages/vllm/worker/worker.py", Line: 238, Func: "_warm_up_model"},
		}, PhaseCUDAGraphCapture, ""},
		{"vLLM V1 capture in a multiproc worker (vllm-15469)", []facts.Frame{
			{File: "/home/work/anyujie/py39/lib/python3.9/site-packages/vllm/v1/executor/multiproc_executor.py", Line: 370, Func: "worker_busy_loop", Code: "output = func(*args, **kwargs)"},
			{File: "/home/work/anyujie/py39/lib/python3.9/site-packages/vllm/v1/worker/gpu_worker.py", Line: 223, Func: "compile_or_warm_up_model", Code: "self.model_runner.capture_model()"},
			{File: "/home/work/anyujie/py39/lib/python3.9/site-packages/vllm/v1/worker/gpu_model_runner.py", Line: 1036, Func: "capture_model", Code: "self._dummy_run(num_tokens)"},
			{File: "/home/work/anyujie/py39/lib/python3.9/site-packages/torch/utils/_contextlib.py", Line: 116, Func: "decorate_context"},
		}, PhaseCUDAGraphCapture, ""},
		{"vLLM V1 capture split into _warmup_and_capture (vllm-30515)", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/tracing/otel.py", Line: 178, Func: "sync_wrapper"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", Line: 5684, Func: "capture_model"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", Line: 5795, Func: "_capture_cudagraphs"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", Line: 5741, Func: "_warmup_and_capture"},
		}, PhaseCUDAGraphCapture, ""},
		{"vLLM V1 worker loop alone places nothing: it runs every RPC (vllm-15469)", []facts.Frame{
			{File: "/home/work/anyujie/py39/lib/python3.9/site-packages/vllm/v1/executor/multiproc_executor.py", Line: 370, Func: "worker_busy_loop", Code: "output = func(*args, **kwargs)"},
		}, "", ""},
		{"vLLM V1 attention backend built in initialize_kv_cache (vLLM 0.10 traceback in a public RL training log)", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/executor/uniproc_executor.py", Line: 57, Func: "collective_rpc"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/utils/__init__.py", Line: 2736, Func: "run_method"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/worker/worker_base.py", Line: 601, Func: "initialize_from_config"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", Line: 250, Func: "initialize_from_config"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", Line: 2596, Func: "initialize_kv_cache"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", Line: 2366, Func: "initialize_attn_backend"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/attention/backends/flash_attn.py", Line: 181, Func: "__init__"},
		}, PhaseKVCache, "attention"},
		{"vLLM V1 memory profiling relayed to the executor (vllm-43109)", []facts.Frame{
			{File: "/home/jlj/dev/inferno-repro/.venv/lib/python3.13/site-packages/vllm/v1/engine/core.py", Line: 250, Func: "_initialize_kv_caches", Code: "available_gpu_memory = self.model_executor.determine_available_memory()"},
			{File: "/home/jlj/dev/inferno-repro/.venv/lib/python3.13/site-packages/vllm/v1/executor/abstract.py", Line: 147, Func: "determine_available_memory", Code: `return self.collective_rpc("determine_available_memory")`},
			{File: "/home/jlj/dev/inferno-repro/.venv/lib/python3.13/site-packages/vllm/v1/executor/uniproc_executor.py", Line: 93, Func: "collective_rpc"},
		}, PhaseKVCache, ""},
		// V1's EngineCore._initialize_kv_caches ends with the executor's
		// initialize_from_config, which also compiles, captures and warms
		// up in the workers: relayed from a Ray worker, the frames cannot
		// say which, so they place nothing (the milestones decide).
		{"vLLM V1 initialize_from_config relayed from a Ray worker places nothing (vllm-30017)", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", Line: 251, Func: "_initialize_kv_caches", Code: "self.model_executor.initialize_from_config(kv_cache_configs)"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/abstract.py", Line: 115, Func: "initialize_from_config", Code: `self.collective_rpc("initialize_from_config", args=(kv_cache_configs,))`},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/ray_executor.py", Line: 493, Func: "collective_rpc", Code: "return ray.get(ray_worker_outputs, timeout=timeout)"},
			{File: "/usr/local/lib/python3.12/dist-packages/ray/_private/auto_init_hook.py", Line: 22, Func: "auto_init_wrapper"},
		}, "", "ray"},
		{"vLLM V1 init_device through the worker wrapper (vllm-33447)", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", Line: 105, Func: "__init__"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/abstract.py", Line: 101, Func: "__init__"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/uniproc_executor.py", Line: 47, Func: "_init_executor"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/worker_base.py", Line: 326, Func: "init_device"},
		}, PhaseDistributedInit, ""},
		{"vLLM V1 executor construction alone places nothing (vllm-22331)", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", Line: 709, Func: "run_engine_core", Code: "engine_core = EngineCoreProc(*args, **kwargs)"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", Line: 510, Func: "__init__", Code: "super().__init__(vllm_config, executor_class, log_stats,"},
			{File: "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", Line: 82, Func: "__init__", Code: "self.model_executor = executor_class(vllm_config)"},
		}, "", ""},
		{"vLLM layer weight_loader (speculators-851)", []facts.Frame{
			{File: "/mnt/pfs/jh/Users/x/env/anaconda3/envs/vllm_dflash/lib/python3.12/site-packages/vllm/model_executor/layers/linear.py", Line: 369, Func: "weight_loader"},
		}, PhaseWeightsLoading, ""},
		{"vLLM piecewise compile interpreter (vllm-12721)", []facts.Frame{
			{File: "/home/mgoin/code/vllm/vllm/compilation/backends.py", Line: 616, Func: "__call__"},
			{File: "/home/mgoin/code/vllm/vllm/compilation/backends.py", Line: 424, Func: "run"},
		}, PhaseTorchCompile, ""},
		{"vLLM V1 execute_model while serving (vllm-omni-1618)", []facts.Frame{
			{File: "vllm/v1/executor/multiproc_executor.py", Line: 858, Func: "worker_busy_loop"},
			{File: "vllm/v1/worker/worker_base.py", Line: 361, Func: "execute_model"},
			{File: "vllm/v1/worker/gpu_worker.py", Line: 652, Func: "execute_model"},
			{File: "vllm_omni/worker/gpu_ar_model_runner.py", Line: 249, Func: "execute_model"},
		}, PhaseServing, ""},
		{"vLLM API port reserved in run_server (vllm-9737)", []facts.Frame{
			{File: "/usr/lib/python3.10/runpy.py", Line: 196, Func: "_run_module_as_main"},
			{File: "/usr/lib/python3.10/runpy.py", Line: 86, Func: "_run_code"},
			{File: "/home/user/code/debug/.venv/lib/python3.10/site-packages/vllm/entrypoints/openai/api_server.py", Line: 585, Func: "<module>", Code: "uvloop.run(run_server(args))"},
			{File: "/home/user/code/debug/.venv/lib/python3.10/site-packages/uvloop/__init__.py", Line: 82, Func: "run"},
			{File: "uvloop/loop.pyx", Line: 1517, Func: "uvloop.loop.Loop.run_until_complete"},
			{File: "/home/user/code/debug/.venv/lib/python3.10/site-packages/uvloop/__init__.py", Line: 61, Func: "wrapper"},
			{File: "/home/user/code/debug/.venv/lib/python3.10/site-packages/vllm/entrypoints/openai/api_server.py", Line: 544, Func: "run_server", Code: `sock.bind(("", args.port))`},
		}, PhaseLaunch, "http-server"},
		{"torch TCPStore rendezvous under init_process_group (pytorch-145170)", []facts.Frame{
			{File: "/mnt/data/taoshuchang.tsc/anaconda3/envs/py311llama33/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", Line: 83, Func: "wrapper"},
			{File: "/mnt/data/taoshuchang.tsc/anaconda3/envs/py311llama33/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", Line: 97, Func: "wrapper"},
			{File: "/mnt/data/taoshuchang.tsc/anaconda3/envs/py311llama33/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", Line: 1520, Func: "init_process_group"},
			{File: "/mnt/data/taoshuchang.tsc/anaconda3/envs/py311llama33/lib/python3.11/site-packages/torch/distributed/rendezvous.py", Line: 221, Func: "_tcp_rendezvous_handler"},
			{File: "/mnt/data/taoshuchang.tsc/anaconda3/envs/py311llama33/lib/python3.11/site-packages/torch/distributed/rendezvous.py", Line: 189, Func: "_create_c10d_store"},
		}, PhaseDistributedInit, "c10d-store"},
		{"Inductor code generation (vllm-17018)", []facts.Frame{
			{File: "/usr/local/lib/python3.11/dist-packages/torch/_inductor/compile_fx.py", Line: 878, Func: "fx_codegen_and_compile"},
			{File: "/usr/local/lib/python3.11/dist-packages/torch/_inductor/graph.py", Line: 1913, Func: "compile_to_fn"},
			{File: "/usr/local/lib/python3.11/dist-packages/torch/_inductor/graph.py", Line: 1839, Func: "compile_to_module"},
		}, PhaseTorchCompile, "torch-inductor"},
		// Up to torch 2.5 CompiledFxGraph.__call__ is in codecache.py and
		// the input-aligning wrapper `run` in compile_fx.py: both are in
		// every fault inside compiled code at run time.
		{"compiled graph running (torch 2.4/2.5 codecache __call__) is not compile time", []facts.Frame{
			{File: "/home/jobuser/.local/lib/python3.10/site-packages/torch/_functorch/_aot_autograd/runtime_wrappers.py", Line: 451, Func: "wrapper"},
			{File: "/home/jobuser/.local/lib/python3.10/site-packages/torch/_inductor/codecache.py", Line: 1158, Func: "__call__"},
			{File: "/home/jobuser/.local/lib/python3.10/site-packages/torch/_inductor/compile_fx.py", Line: 951, Func: "run"},
			{File: "/tmp/torchinductor_jobuser/3i/c3ilt6srmv7vhz4jupk7oeb4wvwxv75r5qywijr22r73z5r7adsx.py", Line: 579, Func: "call"},
		}, "", "torch-inductor"},
		{"compiled graph running (torch 2.6+ output_code __call__) is not compile time", []facts.Frame{
			{File: "/app/venv/lib/python3.12/site-packages/torch/_functorch/_aot_autograd/runtime_wrappers.py", Line: 526, Func: "wrapper"},
			{File: "/app/venv/lib/python3.12/site-packages/torch/_inductor/output_code.py", Line: 613, Func: "__call__"},
			{File: "/app/venv/lib/python3.12/site-packages/torch/_inductor/utils.py", Line: 3017, Func: "run"},
			{File: "/tmp/torchinductor_root/vu/cvu3x4ixszhl5ga7lowtnmnilmlwosgpddz5ghoizc2p2xhn7teo.py", Line: 10328, Func: "call"},
		}, "", "torch-inductor"},
		{"SGLang capture inside ModelRunner init (sglang-1117)", []facts.Frame{
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker.py", Line: 781, Func: "run_tp_server"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker.py", Line: 99, Func: "__init__"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", Line: 140, Func: "__init__"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", Line: 371, Func: "init_cuda_graphs"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 162, Func: "capture"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 242, Func: "capture_one_batch_size"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 239, Func: "run_once"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/models/deepseek_v2.py", Line: 642, Func: "forward"},
		}, PhaseCUDAGraphCapture, "cuda-graph"},
		{"SGLang 0.2 controller prefill while serving (sglang-748)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/controller/tp_worker.py", Line: 186, Func: "exposed_step"},
			{File: "/usr/local/lib/python3.10/dist-packages/torch/utils/_contextlib.py", Line: 115, Func: "decorate_context"},
			{File: "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/controller/tp_worker.py", Line: 202, Func: "forward_step"},
			{File: "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/controller/tp_worker.py", Line: 443, Func: "forward_prefill_batch"},
			{File: "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/controller/model_runner.py", Line: 336, Func: "forward"},
			{File: "/usr/local/lib/python3.10/dist-packages/torch/utils/_contextlib.py", Line: 115, Func: "decorate_context"},
			{File: "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/controller/model_runner.py", Line: 304, Func: "forward_extend"},
		}, PhaseServing, ""},
		{"SGLang overlap scheduler loop (sglang-12567)", []facts.Frame{
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", Line: 2810, Func: "run_scheduler_process", Code: "scheduler.event_loop_overlap()"},
			{File: "/usr/local/lib/python3.12/dist-packages/torch/utils/_contextlib.py", Line: 120, Func: "decorate_context"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", Line: 999, Func: "event_loop_overlap", Code: "batch_result = self.run_batch(batch)"},
		}, PhaseServing, ""},
		{"SGLang HTTP warm-up request (sglang-2468)", []facts.Frame{
			{File: "/home/sglang/python/sglang/srt/server.py", Line: 621, Func: "_wait_and_warmup"},
		}, PhaseWarmup, ""},
		{"SGLang paste cut at ModelRunner.__init__ places nothing (sglang-3820)", []facts.Frame{
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", Line: 1816, Func: "run_scheduler_process", Code: "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", Line: 240, Func: "__init__", Code: "self.tp_worker = TpWorkerClass("},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker_overlap_thread.py", Line: 63, Func: "__init__", Code: "self.worker = TpModelWorker(server_args, gpu_id, tp_rank, dp_rank, nccl_port)"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/tp_worker.py", Line: 68, Func: "__init__", Code: "self.model_runner = ModelRunner("},
			{File: "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", Line: 187, Func: "__init__"},
		}, "", ""},
		// init_attention_backend runs after the memory pool and before the
		// graphs, a step the taxonomy has no phase for: the milestones
		// place it (the seed's golden report says post-weights).
		{"SGLang attention backend init places nothing (fixtures/seed/flashinfer-sm120-crash)", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", Line: 2960, Func: "run_scheduler_process", Code: "scheduler = Scheduler("},
			{File: "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", Line: 348, Func: "__init__", Code: "self.tp_worker = TpModelWorker("},
			{File: "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py", Line: 512, Func: "initialize", Code: "self.init_attention_backend()"},
			{File: "/usr/local/lib/python3.12/dist-packages/sglang/srt/layers/attention/flashinfer_mla_backend.py", Line: 118, Func: "__init__", Code: "self.workspace_buffer = torch.empty("},
		}, "", "attention"},
		{"sgl-kernel op in a layer's forward places nothing (sglang-5903)", []facts.Frame{
			{File: "/data/sglang/sglang/python/sglang/srt/layers/layernorm.py", Line: 70, Func: "forward_cuda"},
			{File: "/usr/local/lib/python3.12/dist-packages/sgl_kernel/elementwise.py", Line: 41, Func: "rmsnorm"},
			{File: "/usr/local/lib/python3.12/dist-packages/torch/_ops.py", Line: 756, Func: "__call__"},
		}, "", "sgl-kernel"},
		{"Triton JIT compile places nothing: kernels compile on first launch in any phase (sglang-1058)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py", Line: 282, Func: "compile"},
			{File: "/usr/local/lib/python3.10/dist-packages/triton/backends/nvidia/compiler.py", Line: 318, Func: "<lambda>"},
			{File: "/usr/local/lib/python3.10/dist-packages/triton/backends/nvidia/compiler.py", Line: 216, Func: "make_llir"},
		}, "", "triton"},
		// The paste in huggingface/text-generation-inference#1695 ("Decode
		// cuda graph warmup failed") is cut before these frames; the lines
		// are v1.4.5's (flash_causal_lm.py:807 calls cuda_graph_warmup,
		// :728 enters torch.cuda.graph).
		{"TGI decode graph capture inside warmup (TGI v1.4.5 lines)", []facts.Frame{
			{File: "/opt/conda/lib/python3.10/site-packages/text_generation_server/server.py", Line: 95, Func: "Warmup"},
			{File: "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/flash_causal_lm.py", Line: 807, Func: "warmup"},
			{File: "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/flash_causal_lm.py", Line: 728, Func: "cuda_graph_warmup"},
		}, PhaseCUDAGraphCapture, ""},
		// The detokenizer works on served batches; its file's name ends in
		// tokenizer_manager.py without being the HTTP front end's.
		{"SGLang detokenizer (sglang-29853)", []facts.Frame{
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/detokenizer_manager.py", Line: 440, Func: "run_detokenizer_process"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/detokenizer_manager.py", Line: 150, Func: "event_loop"},
			{File: "/sgl-workspace/sglang/python/sglang/srt/managers/detokenizer_manager.py", Line: 358, Func: "handle_batch_token_id_out"},
		}, PhaseServing, ""},
		{"SGLang PD decode loop (sglang-38417)", []facts.Frame{
			{File: "python/sglang/srt/managers/scheduler.py", Line: 5770, Func: "run_scheduler_process"},
			{File: "python/sglang/srt/managers/scheduler.py", Line: 1890, Func: "run_event_loop"},
			{File: "python/sglang/srt/disaggregation/decode.py", Line: 2562, Func: "event_loop_overlap_disagg_decode"},
		}, PhaseServing, ""},
		{"a model's forward alone places nothing", []facts.Frame{
			{File: "/h/vllm/model_executor/models/llama.py", Line: 300, Func: "forward"},
			{File: "/h/torch/nn/modules/module.py", Line: 1747, Func: "_call_impl"},
		}, "", "model-code"},
		{"Dynamo's run-time wrapper is not compile time", []facts.Frame{
			{File: "/h/torch/_dynamo/eval_frame.py", Line: 632, Func: "_fn"},
		}, "", "torch-inductor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ph, _, _ := m.TracebackPhase(&facts.Traceback{Frames: c.frames})
			assert.Equal(t, c.want, ph)
			lib, _, _ := m.InnermostLibrary(&facts.Traceback{Frames: c.frames})
			assert.Equal(t, c.lib, lib)
		})
	}
}

// A phase that runs across a gap of a paste ends at the gap: the excerpts
// are not one interval.
func TestSpansEndAtGaps(t *testing.T) {
	f := parseLogText(t, "[2025-02-24 14:00:00 TP0] Load weight begin. avail mem=78.00 GB\n# --- fragment 2 ---\n[2025-02-24 15:30:00 TP0] Load weight end. type=X, dtype=torch.bfloat16, avail mem=60.00 GB, mem usage=18.00 GB.\n")
	idx := Derive(f, nil)
	var w *Span
	for i, s := range idx.Timeline {
		if s.Phase == PhaseWeightsLoading {
			w = &idx.Timeline[i]
		}
	}
	require.NotNil(t, w)
	assert.True(t, w.Cut)
	assert.Equal(t, w.Start, w.End, "ends at the last stamp before the gap, not 90 min later")
}

func parseLogText(t *testing.T, log string) *facts.Facts {
	t.Helper()
	f, err := parser.ParseFS(fstest.MapFS{"server.log": {Data: []byte(log)}}, parser.Options{})
	require.NoError(t, err)
	return f
}
