package serverlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Logs as people paste them: in a markdown quote, behind a CI gutter, under
// torchrun's and PyTorch's rank prefixes, cut in the middle of a traceback.
// Every line here is real (upstream issue threads; the case folders under
// fixtures/incidents hold the whole pastes).

func TestPastedPrefixes(t *testing.T) {
	cases := []struct {
		name, line string
		typ        facts.EventType
		proc       string
		msg        string // the event's message starts with it
	}{
		{"markdown quote and Buildkite gutter",
			">   | [2024-09-05T00:38:34Z] ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 44319): [errno 98] address already in use",
			facts.EventError, "", "[Errno 98] error while attempting"},
		{"markdown quote and uvicorn",
			"> [2024-09-05T00:38:34Z] INFO:     Started server process [60858]",
			facts.EventHTTPStart, "", "Started server process"},
		{"GitHub Actions gutter and [rank0]: frame",
			`2025-10-09T04:13:06.6371779Z [rank0]:   File "/public_sglang_ci/runner-l1c-gpu-67/_work/sglang/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 485, in capture`,
			facts.EventTraceback, "rank0", `File "/public_sglang_ci`},
		{"torchrun's role and rank prefix",
			"[trainer0|0]:ncclInternalError: Internal check failed.",
			facts.EventTraceback, "trainer0|0", "ncclInternalError: Internal check failed."},
		{"NCCL without host, with rank and source line",
			"[1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'",
			facts.EventNCCLWarn, "", "Cuda failure 1 'invalid argument'"},
		{"NCCL without host or rank",
			"graph/xml.h:77 NCCL WARN Attribute arch of node cpu not found",
			facts.EventNCCLWarn, "", "Attribute arch of node cpu not found"},
		{"NCCL WARN source line only",
			"transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'",
			facts.EventNCCLWarn, "", "Cuda failure 'invalid argument'"},
		{"a bare exception line is a failure",
			"AssertionError: assert Lq in {16, 32, 64, 128, 256, 576}, where Lq = 80.",
			facts.EventTraceback, "", "AssertionError: assert Lq"},
		{"a frame under vLLM's repeated header starts a traceback",
			`(Worker_TP0 pid=1707110) ERROR 11-29 20:52:18 [multiproc_executor.py:597]   File "/home/drc-whlab/miniconda3/envs/vllm011cp312/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py", line 117, in get_quant_method`,
			facts.EventTraceback, "Worker_TP0", `File "/home/drc-whlab`},
		{"a log collector's severity and stamp before SGLang's header (sglang-5096)",
			"ERROR 2025-04-05T00:01:19.209237575Z [2025-04-05 00:01:19] Received sigquit from a child process. It usually means the child failed.",
			facts.EventSigquit, "", "Received sigquit"},
		{"bash reporting the script's child killed (sglang-5096)",
			"ERROR 2025-04-05T00:01:19.509514570Z ./entrypoint.sh: line 48: 28 Killed python3 -m sglang.launch_server --host 0.0.0.0 --port ...",
			facts.EventKilled, "", "./entrypoint.sh: line 48: 28 Killed python3 -m sglang.launch_server"},
		{"bash reporting a segfault, padded as bash pads it",
			"run.sh: line 12: 41230 Segmentation fault      (core dumped) vllm serve /models/m",
			facts.EventKilled, "", "run.sh: line 12"},
		{"a Ray tag whose \"(\" the paste cut off",
			"RayWorkerWrapper pid=1861983) INFO 03-27 10:29:03 [model_runner.py:1442] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.",
			facts.EventGraphBegin, "RayWorkerWrapper_1861983", "Capturing cudagraphs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, issues := parseText("x.log", c.line+"\n", facts.KindServerLog)
			assert.Empty(t, issues)
			l := out.Logs[0]
			ev := firstEvent(l, c.typ)
			require.NotNil(t, ev, "want a %s event, got %v", c.typ, types(l))
			assert.Equal(t, c.proc, ev.Proc.Name)
			assert.True(t, strings.HasPrefix(ev.Msg, c.msg), "msg %q", ev.Msg)
		})
	}
}

// A launch command, a line that names a line, and a stop are no job that a
// signal ended.
// The error word opens a line a program wrote; in a sentence it is prose.
func TestToolError(t *testing.T) {
	cases := []struct {
		line string
		want bool
	}{
		{"rocblaslt error: Could not load /x/TensileLibrary_lazy_gfx942.dat", true},
		{"/tmp/tmps1rkq3y3/main.c:5:10: fatal error: Python.h: No such file or directory", true},
		{"error: subprocess-exited-with-error", true},
		{"  error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1", true},
		{"The request returned no error: the batch was empty", false},
		{"Please check the error: it names the port that is taken", false},
		{"Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state", false},
		{"RuntimeError: CUDA error: out of memory", false}, // an exception, read as one
	}
	for _, c := range cases {
		assert.Equal(t, c.want, toolError([]byte(c.line)), c.line)
	}
}

func TestShellJobDied(t *testing.T) {
	for _, c := range []struct {
		line string
		sig  string
	}{
		{"./entrypoint.sh: line 48: 28 Killed python3 -m sglang.launch_server", "SIGKILL"},
		{"start.sh: line 7:  1234 Aborted                 (core dumped) python x.py", "SIGABRT"},
		{"./run.sh: line 3: 99 Terminated              vllm serve m", ""},
		{"python3 -m sglang.launch_server --model-path m", ""},
		{"File \"x.py\", line 48: 28 Killed", ""},
		{"config.yaml: line 4: 7 Killedfoo", ""},
	} {
		sig, ok := shellJobDied([]byte(c.line))
		assert.Equal(t, c.sig, sig, c.line)
		assert.Equal(t, c.sig != "", ok, c.line)
	}
}

func TestHeadlessTraceback(t *testing.T) {
	// vllm-29707: two workers' tracebacks interleaved, no header, no
	// exception line: one traceback each, attributed to its worker.
	log := strings.Join([]string{
		`(Worker_TP0 pid=1707110) ERROR 11-29 20:52:18 [multiproc_executor.py:597]                         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^`,
		`(Worker_TP1 pid=1707111) ERROR 11-29 20:52:18 [multiproc_executor.py:597]                      ^^^^^^^^^^^^^^^`,
		`(Worker_TP0 pid=1707110) ERROR 11-29 20:52:18 [multiproc_executor.py:597]   File "/home/drc-whlab/miniconda3/envs/vllm011cp312/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py", line 117, in get_quant_method`,
		`(Worker_TP1 pid=1707111) ERROR 11-29 20:52:18 [multiproc_executor.py:597]   File "/home/drc-whlab/miniconda3/envs/vllm011cp312/lib/python3.12/site-packages/vllm/model_executor/models/qwen3.py", line 97, in __init__`,
		`(Worker_TP0 pid=1707110) ERROR 11-29 20:52:18 [multiproc_executor.py:597]     quant_scheme = self.get_scheme(layer=layer, layer_name=prefix)`,
		`(Worker_TP1 pid=1707111) ERROR 11-29 20:52:18 [multiproc_executor.py:597]     self.qkv_proj = QKVParallelLinear(`,
		`(Worker_TP0 pid=1707110) ERROR 11-29 20:52:18 [multiproc_executor.py:597]                    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^`,
		`(Worker_TP1 pid=1707111) ERROR 11-29 20:52:18 [multiproc_executor.py:597]                     ^^^^^^^^^^^^^^^^^^`,
	}, "\n") + "\n"
	out, _ := parseText("x.log", log, facts.KindVLLMLog)
	l := out.Logs[0]
	tbs := l.EventsOf(facts.EventTraceback)
	require.Len(t, tbs, 2)
	for i, want := range []struct{ proc, fn string }{{"Worker_TP0", "get_quant_method"}, {"Worker_TP1", "__init__"}} {
		e := tbs[i]
		assert.Equal(t, want.proc, e.Proc.Name)
		assert.Equal(t, true, facts.Fields(e.Data)["headless"])
		assert.Equal(t, true, facts.Fields(e.Data)["incomplete"], "no exception line")
		require.Len(t, e.Traceback.Frames, 1)
		assert.Equal(t, want.fn, e.Traceback.Frames[0].Func)
		assert.Empty(t, e.Traceback.ExcType, "a source line is never the exception")
	}

	// sglang-1058: a bare traceback that starts mid-stack and ends in its
	// exception.
	log = strings.Join([]string{
		`  File "/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py", line 282, in compile`,
		`    next_module = compile_ir(module, metadata)`,
		`  File "/usr/local/lib/python3.10/dist-packages/triton/backends/nvidia/compiler.py", line 318, in <lambda>`,
		`    stages["llir"] = lambda src, metadata: self.make_llir(src, metadata, options, self.capability)`,
		`  File "/usr/local/lib/python3.10/dist-packages/triton/backends/nvidia/compiler.py", line 216, in make_llir`,
		`    pm.run(mod)`,
		`IndexError: map::at`,
	}, "\n") + "\n"
	out, _ = parseText("x.log", log, facts.KindServerLog)
	tbs = out.Logs[0].EventsOf(facts.EventTraceback)
	require.Len(t, tbs, 1)
	tb := tbs[0].Traceback
	assert.Equal(t, "IndexError", tb.ExcType)
	assert.Equal(t, "map::at", tb.ExcMsg)
	assert.Len(t, tb.Frames, 3)
	assert.Equal(t, "make_llir", tb.Frames[2].Func)
	assert.Equal(t, 1, tbs[0].Src.Line)
	assert.Equal(t, 7, tbs[0].EndLine)
}

// Formats of other engines and libraries, as their loggers print them.
func TestOtherFormats(t *testing.T) {
	cases := []struct {
		name, line string
		typ        facts.EventType
		level      facts.Level
		msg        string
	}{
		{"TGI launcher (Rust tracing behind its RFC 3339 stamp)",
			"2023-10-16T06:54:28.059380Z ERROR text_generation_launcher: Shard 0 failed to start",
			facts.EventChildFailed, facts.LevelError, "Shard 0 failed to start"},
		{"TGI router, padded level and a span",
			"2023-12-15T07:11:11.868626Z  INFO text_generation_router: router/src/main.rs:247: Connected",
			facts.EventReady, facts.LevelInfo, "Connected"},
		{"TensorRT-LLM with a rank",
			"[07/08/2025-19:47:15] [TRT-LLM] [RANK 1] [E] Failed to initialize executor on rank 1: Executor creation failed due to insufficient GPU memory.",
			facts.EventEngineInitFailed, facts.LevelError, "Failed to initialize executor on rank 1"},
		{"NCCL's error trace: a call returned ncclInternalError",
			"NCCL INFO init.cc:840 -> 3",
			facts.EventNCCLError, facts.LevelError, "init.cc:840 -> 3"},
		{"a CUDA check macro's report (vLLM's CUDACHECK)",
			"Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
			facts.EventTraceback, facts.LevelError, "Failed: Cuda error"},
		{"flashinfer's CUDA error report",
			"CUDA Error: no kernel image is available for execution on the device (209) /tmp/build-via-sdist-iemil769/flashinfer-0.1.4+cu121torch2.4/include/flashinfer/attention/handler.cuh: line 169 at function cudaOccupancyMaxActiveBlocksPerMultiprocessor(&num_blocks_per_sm, kernel, num_threads, smem_size)",
			facts.EventTraceback, facts.LevelError, "CUDA Error: no kernel image"},
		{"Ray's memory monitor killing workers, through syslog's escaped colours",
			"#033[2m#033[33m(raylet)#033[0m [DATE] (raylet) node_manager.cc:3007: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node",
			facts.EventKilled, facts.LevelCritical, "(raylet) [DATE] (raylet) node_manager.cc:3007"},
		{"SGLang's DeepGEMM wrapper compiling a new shape",
			"[2025-04-16 08:13:14 TP3] DeepGEMM JIT code generation <gemm_fp8_fp8_bf16_nt>: M=7857, N=576, K=7168. Please wait.",
			facts.EventJITProgress, facts.LevelInfo, "DeepGEMM JIT code generation"},
		{"TensorRT-LLM's C++ logger",
			"[TensorRT-LLM][INFO] Using 10718 tokens in paged KV cache.",
			facts.EventKVCacheSize, facts.LevelInfo, "Using 10718 tokens"},
		{"Triton's model load failure quoting TensorRT-LLM's error tag",
			"Model 'tensorrt_llm' loading failed with error: version 1 is at UNAVAILABLE state: Internal: unexpected error when creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)",
			facts.EventEngineInitFailed, facts.LevelError, "Model 'tensorrt_llm' loading failed"},
		{"a C++ library's own error on stderr (hipBLASLt, no logger)",
			"rocblaslt error: Could not load /home/hotaisle/miniforge3/envs/vllm/lib/python3.11/site-packages/torch/lib/hipblaslt/library/TensileLibrary_lazy_gfx942.dat",
			facts.EventError, facts.LevelError, "rocblaslt error: Could not load"},
		{"a compiler's error after its file:line:col",
			"/tmp/tmps1rkq3y3/main.c:5:10: fatal error: Python.h: No such file or directory",
			facts.EventError, facts.LevelError, "/tmp/tmps1rkq3y3/main.c:5:10: fatal error"},
		{"a program's name, then its error (the NVIDIA container runtime)",
			"nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container: unknown",
			facts.EventError, facts.LevelError, "nvidia-container-cli: requirement error"},
		{"FasterTransformer's CUDA check macro, as LMDeploy's TurboMind prints it",
			"[TM][ERROR] CUDA runtime error: out of memory /lmdeploy/src/turbomind/core/allocator.cc:49",
			facts.EventOOM, facts.LevelError, "[TM][ERROR] CUDA runtime error: out of memory"},
		{"MPI's abort banner",
			"*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
			facts.EventKilled, facts.LevelCritical, "*** MPI_ERRORS_ARE_FATAL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, issues := parseText("x.log", c.line+"\n", facts.KindServerLog)
			assert.Empty(t, issues)
			l := out.Logs[0]
			ev := firstEvent(l, c.typ)
			require.NotNil(t, ev, "want a %s event, got %v", c.typ, types(l))
			assert.Equal(t, c.level, ev.Level)
			assert.True(t, strings.HasPrefix(ev.Msg, c.msg), "msg %q", ev.Msg)
		})
	}
}

func TestNCCLErrorTrace(t *testing.T) {
	// nccl-379 (NVIDIA/nccl#379): one trace, from the topology code out to
	// communicator init: one event, with the files it passed.
	log := strings.Join([]string{
		"graph/xml.h:77 NCCL WARN Attribute arch of node cpu not found",
		"NCCL INFO graph/topo.cc:380 -> 3",
		"NCCL INFO graph/topo.cc:466 -> 3",
		"NCCL INFO init.cc:581 -> 3",
		"NCCL INFO init.cc:840 -> 3",
		"NCCL INFO group.cc:73 -> 3 [Async thread]",
	}, "\n") + "\n"
	out, _ := parseText("x.log", log, facts.KindServerLog)
	errs := out.Logs[0].EventsOf(facts.EventNCCLError)
	require.Len(t, errs, 1)
	assert.Equal(t, "ncclInternalError", facts.Fields(errs[0].Data)["result"])
	assert.Equal(t, "graph/topo.cc,init.cc,group.cc", facts.Fields(errs[0].Data)["chain"])
	assert.Equal(t, 2, errs[0].Src.Line)
}

// A paste is often several excerpts: the parser marks where one ends.
func TestGaps(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		gaps  []int
	}{
		{"fragment marker", []string{"[2025-02-24 14:09:34 TP12] sglang is using nccl==2.21.5", "# --- fragment 2 ---", "node5:240:240 [6] NCCL INFO misc/socket.cc:570 -> 2"}, []int{2}},
		{"ellipsis and [...]", []string{"INFO 01-09 07:33:45 a", "...", "INFO 01-09 07:34:45 b", "[...]", "c"}, []int{2, 4}},
		{"grep's separator inside a quote", []string{"> [2024-09-05T00:38:34Z] INFO:     Started server process [60858]", "> --", ">   | [2024-09-05T00:38:34Z] INFO:     Waiting for application startup."}, []int{2}},
		{"a clock that goes back", []string{"[2025-02-24 15:00:00 TP0] Load weight begin. avail mem=1 GB", "[2025-02-24 14:00:00 TP0] Load weight begin. avail mem=1 GB"}, []int{2}},
		{"no gap in ordinary lines", []string{"INFO 01-09 07:33:45 loading...", "    ...and more text", "--verbose given"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _ := parseText("x.log", strings.Join(c.lines, "\n")+"\n", facts.KindServerLog)
			var got []int
			for _, g := range out.Logs[0].Gaps {
				got = append(got, g.Line)
			}
			assert.Equal(t, c.gaps, got)
		})
	}
}

// The engines' benchmark scripts' summary lines are results, in the format
// each script prints; their per-step lines are not.
func TestBenchmarkResults(t *testing.T) {
	for _, c := range []struct {
		line, metric, label string
		value               float64
	}{
		{"Throughput: 20.13 requests/s, 10308.29 tokens/s", "requests", "", 20.13},
		{"After: Throughput: 17.67 requests/s, 9048.03 tokens/s", "requests", "After", 17.67},
		{"Throughput: 8.07 requests/s, 3296.13 total tokens/s, 1648.06 output tokens/s", "requests", "", 8.07},
		{"Request throughput (req/s):              4.27      ", "requests", "", 4.27},
		{"Output token throughput (tok/s):         918.57    ", "output-tokens", "", 918.57},
		{"Total Token throughput (tok/s):          1845.12   ", "total-tokens", "", 1845.12},
		{"Output throughput: 606.448 token/s", "output-tokens", "", 606.448},
		{"Decode.  median latency: 0.11281 s, median throughput:   1134.62 token/s", "decode-tokens", "", 1134.62},
		{"Total. latency:  5.681 s, throughput:  23253.82 token/s", "total-tokens", "", 23253.82},
		{"Decode 1. Batch size: 128, latency: 0.11283 s, throughput:   1134.45 token/s", "", "", 0},
		{"Prefill. latency: 2.12386 s, throughput:  60267.49 token/s", "", "", 0},
	} {
		out, _ := parseText("bench.txt", c.line+"\n", facts.KindServerLog)
		ev := firstEvent(out.Logs[0], facts.EventBenchmark)
		if c.metric == "" {
			assert.Nil(t, ev, c.line)
			continue
		}
		require.NotNil(t, ev, c.line)
		assert.Equal(t, c.metric, ev.Str("metric"), c.line)
		assert.Equal(t, c.label, ev.Str("label"), c.line)
		got, _ := ev.Num("value")
		assert.InDelta(t, c.value, got, 1e-9, c.line)
	}
}

// IPython's (Jupyter's) traceback, where vLLM's offline LLM is often run:
// its header has the type and no colon, frames are "File PATH:LINE, in
// FUNC(ARGS)" (IPython 8) or "PATH in FUNC(ARGS)" (IPython 7), numbered
// source lines with an arrow at the call. Built from IPython's ultratb
// format around a vLLM 0.2 call chain (llm.py -> llm_engine.py ->
// worker.py), the exception as torch words it.
func TestIPythonTraceback(t *testing.T) {
	cases := []struct {
		name, log string
		frames    []facts.Frame
	}{
		{"IPython 8", `INFO 08-25 12:31:29 llm_engine.py:70] Initializing an LLM engine with config: model='meta-llama/Llama-2-13b-chat-hf', tensor_parallel_size=4, seed=0)
---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
Cell In[3], line 1
----> 1 llm = LLM(model="meta-llama/Llama-2-13b-chat-hf", tensor_parallel_size=4, dtype="float16")

File ~/miniconda3/envs/vllm/lib/python3.10/site-packages/vllm/entrypoints/llm.py:93, in LLM.__init__(self, model, tokenizer, tokenizer_mode, trust_remote_code, tensor_parallel_size, dtype, seed, **kwargs)
     79 engine_args = EngineArgs(
     80     model=model,
   (...)
     91     **kwargs,
     92 )
---> 93 self.llm_engine = LLMEngine.from_engine_args(engine_args)

File ~/miniconda3/envs/vllm/lib/python3.10/site-packages/vllm/worker/worker.py:67, in Worker.init_model(self)
     66 self.model = get_model(self.model_config)
---> 67 self.model.load_weights(self.model_config.model)

OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB (GPU 0; 15.77 GiB total capacity; 14.90 GiB already allocated)
`, []facts.Frame{{File: "<cell>", Line: 1, Func: "<module>"},
			{File: "~/miniconda3/envs/vllm/lib/python3.10/site-packages/vllm/entrypoints/llm.py", Line: 93, Func: "__init__", Code: "self.llm_engine = LLMEngine.from_engine_args(engine_args)"},
			{File: "~/miniconda3/envs/vllm/lib/python3.10/site-packages/vllm/worker/worker.py", Line: 67, Func: "init_model", Code: "self.model.load_weights(self.model_config.model)"}}},
		{"IPython 7", `---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
<ipython-input-3-5d3f1c0a9b2e> in <module>
----> 1 llm = LLM(model="meta-llama/Llama-2-13b-chat-hf", tensor_parallel_size=4, dtype="float16")

/usr/local/lib/python3.8/dist-packages/vllm/worker/worker.py in init_model(self)
     65         self.model = get_model(self.model_config)
---> 67         self.model.load_weights(self.model_config.model)

OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB (GPU 0; 15.77 GiB total capacity; 14.90 GiB already allocated)
`, []facts.Frame{{File: "<cell>", Func: "<module>", Line: 1},
			{File: "/usr/local/lib/python3.8/dist-packages/vllm/worker/worker.py", Line: 67, Func: "init_model", Code: "self.model.load_weights(self.model_config.model)"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _ := parseText("x.log", c.log, facts.KindServerLog)
			tbs := out.Logs[0].EventsOf(facts.EventTraceback)
			require.Len(t, tbs, 1)
			tb := tbs[0].Traceback
			assert.Equal(t, "OutOfMemoryError", tb.ExcType)
			assert.True(t, strings.HasPrefix(tb.ExcMsg, "CUDA out of memory. Tried to allocate 270.00 MiB"), tb.ExcMsg)
			for i := range tb.Frames {
				tb.Frames[i].Code = strings.TrimSpace(tb.Frames[i].Code)
			}
			c.frames[0].Code = `llm = LLM(model="meta-llama/Llama-2-13b-chat-hf", tensor_parallel_size=4, dtype="float16")`
			assert.Equal(t, c.frames, tb.Frames)
			require.NotNil(t, firstEvent(out.Logs[0], facts.EventOOM), "the exception's own events: %v", types(out.Logs[0]))
		})
	}
	// The header alone is no traceback in prose.
	assert.False(t, ipyHead([]byte("see the Traceback (most recent call last)")))
	assert.True(t, ipyHead([]byte("KeyboardInterrupt                         Traceback (most recent call last)")))
}

func TestHasEscape(t *testing.T) {
	for line, want := range map[string]bool{
		"[2025-03-20 09:20:01 TP0] Decode batch. #running-req: 1, #token: 8, token usage: 0.00, #queue-req: 0": false,
		"#033[2m#033[33m(raylet)#033[0m [DATE] (raylet) node_manager.cc:3007: 2 Workers killed":                true,
		"(raylet) ##033[0m killed":         true,
		"\x1b[36m(RayWorkerWrapper pid=1)": true,
		"no escape # here #03":             false,
		"[":                                false,
		"#033 without a bracket":           false,
		"#033[2m at the start":             true,
		"ab[ a bracket before index 4":     false,
	} {
		assert.Equal(t, want, hasEscape([]byte(line)), line)
	}
}

func TestSGRRemnant(t *testing.T) {
	for line, want := range map[string]int{
		"[36m(RayWorkerWrapper pid=12)[0m INFO 05-19 10:00:01 [worker.py:1] x": len("[36m"),
		"[1;36m(VllmWorker rank=1 pid=9)[0;0m INFO":                            len("[1;36m"),
		"[38;5;12mtext": len("[38;5;12m"),
		"ESC[33mWARNING 05-19 10:00:02 [worker.py:2] x": len("ESC[33m"),
		"^[[0m(raylet) x": len("^[[0m"),
		"[2026-05-27 10:00:00 TP0] Decode batch, #running-req: 1": 0,
		"[5m] timed out": 0,
		"[1234m":         0,
		"[m":             0,
		"ESC":            0,
	} {
		assert.Equal(t, want, sgrRemnant([]byte(line)), line)
	}
}

// TestStatLineFastPath: stat lines skip the paste checks, but a traceback
// glued to the end of one still opens on it, in its process, and a line
// whose header has a reader of its own (NCCL's) is not read as a stat line.
func TestStatLineFastPath(t *testing.T) {
	log := strings.Join([]string{
		`[2026-05-27 10:00:00 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.01, gen throughput (token/s): 5.00, #queue-req: 0Traceback (most recent call last):`,
		`  File "/sgl/python/sglang/srt/managers/scheduler.py", line 100, in event_loop`,
		`RuntimeError: boom`,
	}, "\n") + "\n"
	out, _ := parseText("x.log", log, facts.KindSGLangLog)
	l := out.Logs[0]
	tbs := l.EventsOf(facts.EventTraceback)
	require.Len(t, tbs, 1)
	assert.Equal(t, 1, tbs[0].Src.Line, "the traceback opens on the stat line")
	assert.Equal(t, "TP0", tbs[0].Proc.Name)
	assert.Nil(t, facts.Fields(tbs[0].Data)["headless"])
	assert.Equal(t, "RuntimeError", tbs[0].Traceback.ExcType)
	require.NotEmpty(t, l.Series, "the stat line is still read")

	out, _ = parseText("y.log", "gpu-1:1:2 [0] NCCL INFO Decode batch. #running-req: 1, #token: 10\n", facts.KindSGLangLog)
	assert.Empty(t, out.Logs[0].Series, "an NCCL line is NCCL's")
}

// TestBareReportNotOnInfo: the C runtime's and the check macros' own reports
// carry no logger level, so an INFO line that quotes one is not one.
func TestBareReportNotOnInfo(t *testing.T) {
	for _, tc := range []struct {
		line   string
		killed bool
	}{
		{"bash: line 1:  4242 Aborted                 (core dumped) python3 -m sglang.launch_server", true},
		{"INFO 05-19 10:00:00 [launcher.py:12] the previous run ended with: Aborted (core dumped)", false},
		{"***    and potentially your MPI job) will now abort", true},
		{"INFO 05-19 10:00:00 [docs.py:3] a process that fails this way will now abort", false},
	} {
		out, _ := parseText("x.log", tc.line+"\n", facts.KindServerLog)
		killed := len(out.Logs[0].EventsOf(facts.EventKilled)) > 0
		assert.Equal(t, tc.killed, killed, tc.line)
	}
}
