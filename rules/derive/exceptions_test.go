package derive

import (
	"testing"

	catdata "github.com/coroner-dev/coroner/rules/catalog"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuiltinClassesAreValid(t *testing.T) {
	cls, err := ParseCatalog(catdata.Exceptions, "catalog/exceptions.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, cls)
	for _, c := range cls {
		assert.Equal(t, LayerClass, c.Layer, c.ID)
		assert.NotEmpty(t, c.Remedy, c.ID)
		assert.NotEmpty(t, c.References, c.ID)
	}
}

// Each class fires on real lines (from upstream threads, fixtures/incidents
// and the corpus) and stays quiet on near-misses: lines that share its
// words and mean something else.
func TestClassesOnRealLines(t *testing.T) {
	tests := []struct {
		id          string
		fire, quiet []string
	}{
		{"class-gpu-oom",
			[]string{`[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)`,
				`RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in error: out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/ipcUtils.cpp:48)`,
				"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 22.09 GiB of which 758.44 MiB is free.",
				"RuntimeError: CUDA error: out of memory",
				"[TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)"},
			[]string{"Memory cgroup out of memory: Killed process 1320 (python3) total-vm:2120292kB, anon-rss:2092928kB",
				"MemoryError", "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."}},
		{"class-api-mismatch",
			[]string{"TypeError: __init__() got an unexpected keyword argument 'use_v2_block_manager'",
				"TypeError: forward() missing 1 required positional argument: 'positions'",
				"AttributeError: module 'torch' has no attribute 'float8_e4m3fn'"},
			[]string{"AttributeError: 'NoneType' object has no attribute 'shape'", "TypeError: unsupported operand type(s) for +: 'int' and 'str'"}},
		{"class-hub-unreachable",
			[]string{"huggingface_hub.utils._http.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/bigcode/starcoder: offline mode is enabled.",
				"(APIServer pid=1) urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /openai/gpt-oss-120b/resolve/main/config.json"},
			[]string{"Downloading https://huggingface.co/Qwen/Qwen3-8B config.json: 100%", "HTTPSConnectionPool(host='localhost', port=8000): Max retries exceeded"}},
		{"class-attention-feature",
			[]string{"Exception in worker VllmWorkerProcess while processing method load_model: Torch SPDA does not support logits soft cap., Traceback (most recent call last):",
				"NotImplementedError: Sharded Santacoder requires Flash Attention enabled models.",
				"ValueError: XFormers does not support attention logits soft capping."},
			[]string{"INFO 08-07 16:06:47 selector.py:54] Using XFormers backend.", "Flash Attention supports head size 128"}},
		{"class-python-too-old",
			[]string{"TypeError: type 'array.array' is not subscriptable",
				"TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'"},
			[]string{"TypeError: 'NoneType' object is not subscriptable"}},
		{"class-package-requirement",
			[]string{"ImportError: vllm>=0.4.3,<=0.7.3 is required for a normal functioning of this module, but found vllm==0.8.1.",
				"importlib.metadata.PackageNotFoundError: flashinfer",
				"RuntimeError: DeepGEMM backend is not available or outdated. Please install or update the `deep_gemm` to a newer version to enable FP8 kernels."},
			[]string{"INFO: Installed packages: vllm==0.8.1", "Packages found: 3"}},
		{"class-distributed-interface",
			[]string{"[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback",
				"RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"},
			[]string{"Using network interface eth0 for Gloo"}},
		{"class-host-oom",
			[]string{"MemoryError", "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."},
			[]string{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."}},
		{"class-kv-cache-insufficient",
			[]string{`[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.`,
				`AssertionError: No space left for only one request, self.token_to_kv_pool_allocator.available_size()=0`,
				"ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (1984). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
				"(EngineCore_0 pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 GiB",
				"ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88."},
			[]string{"INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: 62.14 GiB",
				"Memory for the KV cache: 40 GiB"}},
		{"class-arch-unsupported",
			[]string{`AssertionError: Only SM 10.x and 11.x are supported`,
				`RuntimeError: This kernel only supports sm90`,
				"RuntimeError: HIP error: invalid device function",
				"CUDA Error: no kernel image is available for execution on the device (209) /tmp/build-via-sdist-iemil769/flashinfer-0.1.4+cu121torch2.4/include/flashinfer/attention/handler.cuh: line 169",
				"ValueError: Quantization scheme is not supported for the current GPU. Min capability: 80. Current capability: 75."},
			[]string{"INFO 04-28 Compute capability: (7, 5)"}},
		{"class-illegal-access",
			[]string{"/opt/conda/conda-bld/pytorch_1712608935911/work/aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectSmallIndex: block: [0,0,0], thread: [28,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
				`RuntimeError: CHECK_EQ(paged_kv_indptr.size(0), batch_size + 1) failed. 1 vs 257.`,
				"RuntimeError: CUDA error: an illegal memory access was encountered"},
			[]string{"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."}},
		{"class-native-crash",
			[]string{"Fatal Python error: Segmentation fault",
				"/bin/bash: line 1:  2212 Segmentation fault      (core dumped) python3 -m sglang.launch_server --model-path /models/x",
				"RuntimeError: Rank 3 scheduler died during initialization (exit code: -11).",
				"  exitcode  : -11 (pid: 2371)",
				"Signal 11 (SIGSEGV) received by PID 2371"},
			[]string{"  exitcode  : -9 (pid: 2371)", "Signal 15 (SIGTERM) received by PID 2371",
				"RuntimeError: Rank 1 scheduler died during initialization (exit code: -110)."}},
		{"class-gpu-fault",
			[]string{"NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
				"RuntimeError: CUDA error: unknown error"},
			[]string{"NVRM: Xid (PCI:0000:3b:00): 13, Graphics SM Warp Exception"}},
		{"class-cuda-graph",
			[]string{"RuntimeError: CUDA error: operation not permitted when stream is capturing"},
			[]string{"Capture cuda graph begin. This can take up to several minutes."}},
		{"class-driver-too-old",
			[]string{"RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination",
				"RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
				"torch.AcceleratorError: CUDA error: the provided PTX was compiled with an unsupported toolchain."},
			[]string{"NCCL INFO cudaDriverVersion 12060"}},
		{"class-abi-mismatch",
			[]string{`AttributeError: '_OpNamespace' '_moe_C' object has no attribute 'topk_softmax'`,
				`RuntimeError: Failed to import transformers.models.bloom.modeling_bloom because of the following error (look up to see its traceback):`,
				"ImportError: /usr/local/lib/python3.12/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEa"},
			[]string{"Ignoring import of a plugin"}},
		{"class-module-missing",
			[]string{"ModuleNotFoundError: No module named 'vllm._C'"},
			[]string{"Loaded module vllm._C"}},
		{"class-jit-compile",
			[]string{`[2025-03-10 14:17:52 TP6] Ignore import error when loading sglang.srt.models.deepseek_v2. Command '['/usr/bin/gcc', '/tmp/tmp6x1f85tg/main.c', '-O3', '-shared', '-fPIC']' returned non-zero exit status 1.`,
				"/tmp/tmpx/main.c:5:10: fatal error: Python.h: No such file or directory",
				"RuntimeError: Failed to find C compiler. Please specify via CC environment variable."},
			[]string{"INFO 08-20 18:04:21 [monitor.py:34] torch.compile takes 5.55 s in total"}},
		{"class-torch-compile",
			[]string{"AssertionError: failed to get the hash of the compiled graph",
				"torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:"},
			[]string{"INFO 08-20 18:04:16 [backends.py:559] Dynamo bytecode transform time: 5.55 s"}},
		{"class-head-size",
			[]string{`RuntimeError: Worker failed with error 'This flash attention build does not support headdim not being a multiple of 32.'`,
				`RuntimeError: Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128), got headDimPerCtaV=%d`,
				"AssertionError: assert Lq in {16, 32, 64, 128, 256, 576}, where Lq = 80.",
				"ValueError: Head size 80 is not supported by FlashAttention. Supported head sizes are: [32, 64, 96, 128, 160, 192, 224, 256].",
				"RuntimeError: BatchPrefillWithPagedKVCachePyTorchWrapper::Forward(at::Tensor, at::Tensor, bool, float)::<lambda()>::<lambda()> failed to dispatch group_size 5"},
			[]string{"INFO 04-16 head_size=128 num_heads=32"}},
		{"class-nccl-p2p",
			[]string{"Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'"},
			[]string{"Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs.",
				"NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC"}},
		{"class-nccl-network-config",
			[]string{"socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)",
				"ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)"},
			[]string{"NCCL INFO Bootstrap : Using bond0:10.0.0.3<0>"}},
		{"class-nccl-cuda-failure",
			[]string{"Cuda failure 1 'invalid argument'",
				"Failed, NCCL error /x/allreduceOp.cpp:308 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'"},
			[]string{"NCCL INFO cudaDriverVersion 12080"}},
		{"class-nccl-internal",
			[]string{"ncclInternalError: Internal check failed.", "Attribute arch of node cpu not found"},
			[]string{"NCCL INFO NCCL_SOCKET_IFNAME set to eth2"}},
		{"class-shm-exhausted",
			[]string{"NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888)",
				"RuntimeError: DataLoader worker (pid 81) is killed by signal: Bus error."},
			[]string{"Using /dev/null for logs", "OSError: [Errno 28] No space left on device: '/data/hf/models--org--m/blobs/x.incomplete'"}},
		{"class-collective-timeout",
			[]string{`[rank1]:[W623 15:37:01.824135523 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=100, addr=[node-0]:43590, remote=[node-0]:20000) timed out after 1800000ms`,
				"[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800108 milliseconds before timing out.",
				"torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/2 clients joined."},
			[]string{"INFO 01-09 07:33:45 llm_engine.py:431] init engine (profile, create kv cache, warmup model) took 57.23 seconds"}},
		{"class-port-in-use",
			[]string{`E1221 09:27:15.346824 166 main.cc:244] failed to start GRPC service: Unavailable - Socket '0.0.0.0:8001' already in use`,
				"OSError: [Errno 98] Address already in use",
				"RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."},
			[]string{"INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)"}},
		{"class-config-value",
			[]string{`400 As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one. None`,
				`RuntimeError: weight gptq_bits does not exist`,
				"ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed!",
				"ValueError: Total number of attention heads (32) must be divisible by tensor parallel size (3)."},
			[]string{"Using default HuggingFace chat template with detected content format: string"}},
		{"class-weight-name-unknown",
			[]string{"KeyError: 'layers.0.mlp.down_proj.weight_scale'", "KeyError: 'model.layers.13.mlp.experts.w2_weight_scale'", "KeyError: 'lm_head.weight'"},
			[]string{"KeyError: 'choices'", "KeyError: 'weight'"}},
		{"class-file-limits",
			[]string{"OSError: [Errno 24] Too many open files"},
			[]string{"Opened 24 files"}},
		{"class-proxy-response",
			[]string{"AssertionError: res=<Response [502]>, res.text=''"},
			[]string{`INFO:     127.0.0.1:40418 - "GET / HTTP/1.1" 404 Not Found`}},
		{"class-mpi-init",
			[]string{"*** An error occurred in MPI_Init_thread"},
			[]string{"MPI size: 1"}},
	}
	sigs := BuiltinCatalog()
	byID := map[string]*Signature{}
	for _, s := range sigs {
		byID[s.ID] = s
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		s := byID[tc.id]
		require.NotNil(t, s, tc.id)
		seen[tc.id] = true
		for _, l := range tc.fire {
			assert.True(t, s.Match(l), "%s should match %q", tc.id, l)
		}
		for _, l := range tc.quiet {
			assert.False(t, s.Match(l), "%s should not match %q", tc.id, l)
		}
	}
	for _, s := range sigs {
		if s.Layer == LayerClass {
			assert.True(t, seen[s.ID], "class %s has no test lines", s.ID)
		}
	}
}
