package envinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

const corpus = "../../fixtures/corpus/"

func read(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// run sniffs and parses a file as the orchestrator does.
func run(t testing.TB, p string) (facts.Kind, *facts.Facts, []facts.Issue) {
	t.Helper()
	b := read(t, p)
	head := b
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	k, _ := Sniff(filepath.Base(p), head)
	out, issues := parse(p, string(b), k)
	return k, out, issues
}

func parse(path, s string, k facts.Kind) (*facts.Facts, []facts.Issue) {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(s), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, k, out)
	return out, issues
}

type env struct {
	line        int
	name, value string
}

func envOf(out *facts.Facts) []env {
	var r []env
	for _, e := range out.Env {
		r = append(r, env{e.Src.Line, e.Name, e.Value})
	}
	return r
}

func TestCollectEnv(t *testing.T) {
	cases := []struct {
		file     string
		line     int
		versions map[string]string
		where    map[string]int
		absent   []string
		gpus     []string
		topo     int // topology lines
		topo0    string
		env      []env
	}{
		{
			file: corpus + "h200-x2/collect_env.txt", line: 2,
			versions: map[string]string{
				"torch": "2.11.0+cu130", "cuda_build": "13.0", "driver": "580.159.04", "cuda_runtime": "13.0.88",
				"cudnn": "9.14.0", "python": "3.12.3", "os": "Ubuntu 24.04.3 LTS", "arch": "x86_64", "gcc": "13.3.0",
				"cmake": "4.4.3", "libc": "glibc-2.39", "kernel": "6.18.44-fc-v657-gpu", "cuda_available": "True",
				"nccl": "2.28.9", "triton": "3.6.0", "numpy": "2.5.2", "pip:torch": "2.11.0",
				"pip:nvidia-cudnn-cu13": "9.19.0.56", "cpu": "Intel(R) Xeon(R) Processor", "hypervisor": "KVM", "cpus": "32",
			},
			where:  map[string]int{"torch": 3, "cuda_build": 5, "driver": 23, "cudnn": 25, "nccl": 100, "triton": 114, "python": 14},
			absent: []string{"rocm_build", "clang", "cuda_module_loading", "hip", "miopen", "vllm", "conda:could"},
			gpus:   []string{"GPU 0: NVIDIA H200", "GPU 1: NVIDIA H200"},
		},
		{
			file: "testdata/vllm-collect-env-new.txt", line: 2,
			versions: map[string]string{
				"torch": "2.9.1+cu129", "cuda_build": "12.9", "cuda_runtime": "12.9.86", "driver": "570.172.08",
				"vllm": "0.14.0", "cuda_archs": "7.0 7.5 8.0 8.9 9.0 10.0 12.0", "flashinfer": "0.6.4", "nccl": "2.27.5",
				"os": "Ubuntu 22.04.5 LTS", "python": "3.12.12", "gcc": "11.4.0", "cuda_module_loading": "LAZY",
				"cpu": "AMD EPYC 9454 48-Core Processor", "cpus": "192", "transformers": "4.57.6",
			},
			where:  map[string]int{"torch": 15, "driver": 38, "vllm": 70, "cuda_archs": 72, "flashinfer": 57},
			absent: []string{"cudnn", "rocm", "rocm_build", "hip"},
			gpus: []string{"GPU 0: NVIDIA H100 80GB HBM3", "GPU 1: NVIDIA H100 80GB HBM3",
				"GPU 2: NVIDIA H100 80GB HBM3", "GPU 3: NVIDIA H100 80GB HBM3"},
			topo: 5, topo0: "  \tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID",
			env: []env{{93, "NCCL_CUMEM_ENABLE", "0"}, {94, "PYTORCH_NVML_BASED_CUDA_CHECK", "1"},
				{95, "TORCHINDUCTOR_COMPILE_THREADS", "1"}, {96, "CUDA_MODULE_LOADING", "LAZY"},
				{97, "VLLM_ATTENTION_BACKEND", "FLASHINFER"}},
		},
		{
			file: "testdata/vllm-collect-env-old.txt", line: 1,
			versions: map[string]string{
				"torch": "2.4.0+cu121", "cuda_build": "12.1", "cuda_runtime": "12.4.131", "driver": "551.88",
				"vllm": "0.6.3.post1", "nccl": "2.20.5", "python": "3.10.12", "hypervisor": "Microsoft",
				"kernel": "5.15.153.1-microsoft-standard-WSL2", "cpu": "13th Gen Intel(R) Core(TM) i7-13700H",
			},
			where:  map[string]int{"torch": 2, "driver": 19, "vllm": 41, "nccl": 33},
			absent: []string{"cuda_archs", "neuron", "rocm", "cudnn"},
			gpus:   []string{"GPU 0: NVIDIA GeForce RTX 4070 Laptop GPU"},
			topo:   2, topo0: "GPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID",
			env: []env{{53, "CUDA_MODULE_LOADING", "LAZY"}, {54, "NCCL_CUMEM_ENABLE", "0"}},
		},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindCollectEnv, k)
			assert.Empty(t, issues)
			require.Len(t, out.Envs, 1)
			r := out.Envs[0]
			assert.Equal(t, facts.Source{File: tc.file, Line: tc.line}, r.Src)
			assert.Equal(t, facts.KindCollectEnv, r.Format)
			for k, v := range tc.versions {
				assert.Equal(t, v, r.Versions[k], k)
			}
			for k, line := range tc.where {
				assert.Equal(t, facts.Source{File: tc.file, Line: line}, r.Where[k], k)
			}
			for _, k := range tc.absent {
				assert.NotContains(t, r.Versions, k)
			}
			assert.Equal(t, tc.gpus, r.GPUs)
			assert.Len(t, r.Topology, tc.topo)
			if tc.topo > 0 {
				assert.Equal(t, tc.topo0, r.Topology[0])
			}
			assert.Equal(t, tc.env, envOf(out))
			for _, e := range out.Env {
				assert.Equal(t, "collect-env", e.From)
			}
		})
	}
}

func TestCheckEnv(t *testing.T) {
	cases := []struct {
		file     string
		line     int
		versions map[string]string
		absent   []string
		gpus     []string
		topo     int
		issues   []int // lines with an issue
	}{
		{"testdata/check_env-0.4.3.txt", 1, map[string]string{
			"python": "3.11.11", "cuda_available": "True", "compute_capability": "8.0", "cuda_home": "/usr/local/cuda-12.4",
			"cuda_toolkit": "12.4.99", "driver": "570.86.15", "torch": "2.5.1+cu124", "sglang": "0.4.3.post2",
			"sgl_kernel": "0.0.3.post6", "flashinfer": "0.2.1.post2", "triton": "3.1.0", "ulimit_nofile": "1048576",
		}, []string{"vllm", "hypervisor"}, []string{"GPU 0,1: NVIDIA A100 80GB PCIe"}, 3, nil},
		{"testdata/check_env-2026.txt", 2, map[string]string{
			"python": "3.12.3", "compute_capability": "12.0", "driver": "580.95.05", "torch": "2.9.1+cu130",
			"sglang": "0.5.9", "sgl_kernel": "0.4.4", "flashinfer": "0.6.12", "flashinfer_cubin": "0.6.12",
			"flashinfer_jit_cache": "0.6.12+cu130", "hypervisor": "KVM", "torchcodec": "0.11.1+cu130",
		}, []string{"cuda_home", "cuda_toolkit"}, []string{"GPU 0,1: NVIDIA RTX PRO 6000 Blackwell Workstation Edition"}, 3, nil},
		// Pasted from a cloud log viewer: each line behind its severity and
		// an RFC 3339 stamp (sgl-project/sglang#5096).
		{"testdata/check_env-cloud-logging.txt", 1, map[string]string{
			"python": "3.10.12", "cuda_available": "True", "compute_capability": "9.0", "driver": "535.230.02",
			"torch": "2.5.1+cu124", "sglang": "0.4.4.post3", "sgl_kernel": "0.0.7", "triton": "3.1.0",
		}, []string{"flashinfer"}, []string{"GPU 0,1,2,3,4,5,6,7: NVIDIA H100 80GB HBM3"}, 0, []int{2}}, // the paste's "--"
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindCheckEnv, k)
			var at []int
			for _, is := range issues {
				at = append(at, is.Src.Line)
			}
			assert.Equal(t, tc.issues, at)
			require.Len(t, out.Envs, 1)
			r := out.Envs[0]
			assert.Equal(t, facts.Source{File: tc.file, Line: tc.line}, r.Src)
			assert.Equal(t, facts.KindCheckEnv, r.Format)
			for k, v := range tc.versions {
				assert.Equal(t, v, r.Versions[k], k)
			}
			for _, k := range tc.absent {
				assert.NotContains(t, r.Versions, k)
			}
			assert.Equal(t, tc.gpus, r.GPUs)
			assert.Len(t, r.Topology, tc.topo)
		})
	}
}

func TestEnvDump(t *testing.T) {
	cases := []struct {
		file string
		want []env
	}{
		{"testdata/env.txt", []env{
			{1, "SHELL", "/bin/bash"}, {2, "HOSTNAME", "gpu-node-07"}, {3, "NCCL_PROTO", "LL"}, {4, "NCCL_ALGO", "Ring"},
			{5, "NCCL_P2P_LEVEL", "SYS"}, {6, "NCCL_DEBUG", "INFO"}, {7, "NCCL_IB_DISABLE", "1"},
			{8, "CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"}, {9, "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
			{10, "SGLANG_ENABLE_JIT_DEEPGEMM", "0"}, {11, "HF_HOME", "/data/hf"}, {12, "HF_TOKEN", Redacted},
			{13, "PWD", "/root"}, {14, "HOME", "/root"},
			{15, "HTTPS_PROXY", "http://" + Redacted + "@proxy.internal:3128"},
			{16, "LD_LIBRARY_PATH", "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"},
			{17, "PATH", "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			{18, "BASH_FUNC_module%%", "() {  eval `/usr/bin/modulecmd bash $*`\n}"},
			{20, "_", "/usr/bin/env"},
		}},
		{"testdata/export-p.txt", []env{
			{1, "HOME", "/home/ubuntu"}, {2, "NCCL_SOCKET_IFNAME", "eth0"},
			{4, "PATH", "/home/ubuntu/.local/bin:/usr/local/cuda-12.8/bin:/usr/bin:/bin"},
			{5, "VLLM_USE_V1", "1"}, {6, "VLLM_WORKER_MULTIPROC_METHOD", "spawn"}, {7, "OPENAI_API_KEY", Redacted},
			{8, "PS1", `\u@\h:\w\$ `},
		}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindEnv, k)
			assert.Empty(t, issues)
			assert.Equal(t, tc.want, envOf(out))
			for _, e := range out.Env {
				assert.Equal(t, "env", e.From)
				assert.NotContains(t, e.Value, "hf_aBc")
				assert.NotContains(t, e.Value, "S3cr3t")
				assert.NotContains(t, e.Value, "sk-proj")
			}
		})
	}
}

func TestCmdline(t *testing.T) {
	type setting struct {
		line       int
		key, value string
	}
	cases := []struct {
		file      string
		line, end int
		engine    facts.Engine
		argv0     []string // the first words of Argv
		flags     map[string]string
		cmdEnv    map[string]string
		container map[string]string
		env       []env
		settings  []setting // the first ones, in order
	}{
		{
			file: "testdata/launch-sglang.sh", line: 5, end: 14, engine: facts.EngineSGLang,
			argv0: []string{"nohup", "python3", "-m", "sglang.launch_server", "--model-path", "$MODEL", "--tp", "8"},
			flags: map[string]string{
				"model_path": "/models/Kimi-K2.5-INT4", "tp_size": "8", "trust_remote_code": "true",
				"attention_backend": "flashinfer", "num_continuous_decode_steps": "4", "mem_fraction_static": "0.88",
				"cuda_graph_bs": "1 2 4 8", "host": "0.0.0.0", "port": "8000",
			},
			cmdEnv: map[string]string{"NCCL_PROTO": "LL", "NCCL_ALGO": "Ring", "NCCL_P2P_LEVEL": "SYS", "NCCL_MIN_NCHANNELS": "4",
				"HF_HUB_OFFLINE": "1", "MODEL": "/models/Kimi-K2.5-INT4"},
			env: []env{{3, "MODEL", "/models/Kimi-K2.5-INT4"}, {4, "HF_HUB_OFFLINE", "1"}, {5, "NCCL_ALGO", "Ring"},
				{5, "NCCL_MIN_NCHANNELS", "4"}, {5, "NCCL_P2P_LEVEL", "SYS"}, {5, "NCCL_PROTO", "LL"}},
			settings: []setting{{7, "model_path", "/models/Kimi-K2.5-INT4"}, {8, "tp_size", "8"}, {9, "trust_remote_code", "true"},
				{10, "attention_backend", "flashinfer"}, {11, "num_continuous_decode_steps", "4"}},
		},
		{
			file: "testdata/vllm-serve.txt", line: 1, engine: facts.EngineVLLM,
			argv0: []string{"vllm", "serve", "Qwen/Qwen3-30B-A3B", "-tp", "2"},
			flags: map[string]string{
				"model": "Qwen/Qwen3-30B-A3B", "tensor_parallel_size": "2", "max_model_len": "32768",
				"gpu_memory_utilization": "0.92", "enable_prefix_caching": "true", "api_key": Redacted,
				"served_model_name": "qwen3 qwen3-moe", "compilation_config": "3",
			},
			cmdEnv:   map[string]string{"VLLM_ATTENTION_BACKEND": "FLASHINFER"},
			env:      []env{{1, "VLLM_ATTENTION_BACKEND", "FLASHINFER"}},
			settings: []setting{{1, "model", "Qwen/Qwen3-30B-A3B"}, {1, "tensor_parallel_size", "2"}},
		},
		{
			file: "testdata/docker-vllm.sh", line: 1, end: 10, engine: facts.EngineVLLM,
			argv0:  []string{"docker", "run", "-d", "--gpus", "all", "--ipc=host"},
			flags:  map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": "2", "max_num_seqs": "256"},
			cmdEnv: map[string]string{"HF_TOKEN": Redacted, "NCCL_P2P_DISABLE": "1"},
			container: map[string]string{"image": "vllm/vllm-openai:v0.11.0", "gpus": "all", "ipc": "host", "shm_size": "16g",
				"publish": "8000:8000", "volume": "/data/hf:/root/.cache/huggingface", "name": "vllm-llama", "detach": "true"},
			env:      []env{{4, "HF_TOKEN", Redacted}, {5, "NCCL_P2P_DISABLE", "1"}},
			settings: []setting{{8, "model", "meta-llama/Llama-3.1-8B-Instruct"}, {9, "tensor_parallel_size", "2"}, {10, "max_num_seqs", "256"}},
		},
		{
			file: "testdata/docker-sglang.sh", line: 2, end: 4, engine: facts.EngineSGLang,
			argv0:  []string{"docker", "run", "--rm", "-it", "--gpus", `"device=0,1"`},
			flags:  map[string]string{"model_path": "Qwen/Qwen3-14B", "tp_size": "2", "host": "0.0.0.0", "port": "30000"},
			cmdEnv: map[string]string{"NCCL_DEBUG": "WARN", "SGLANG_ENABLE_TORCH_COMPILE": "0"},
			container: map[string]string{"image": "lmsysorg/sglang:v0.5.5-cu129", "gpus": `"device=0,1"`, "shm_size": "32g",
				"ipc": "host", "rm": "true", "interactive": "true", "tty": "true"},
			env:      []env{{1, "NCCL_DEBUG", "WARN"}, {2, "NCCL_DEBUG", "WARN"}, {4, "SGLANG_ENABLE_TORCH_COMPILE", "0"}},
			settings: []setting{{4, "model_path", "Qwen/Qwen3-14B"}, {4, "tp_size", "2"}},
		},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindCmdline, k)
			assert.Empty(t, issues)
			require.Len(t, out.Cmds, 1)
			c := out.Cmds[0]
			assert.Equal(t, facts.Source{File: tc.file, Line: tc.line}, c.Src)
			assert.Equal(t, tc.end, c.EndLine)
			assert.Equal(t, tc.engine, c.Engine)
			require.GreaterOrEqual(t, len(c.Argv), len(tc.argv0))
			assert.Equal(t, tc.argv0, c.Argv[:len(tc.argv0)])
			assert.Equal(t, tc.flags, c.Flags)
			assert.Equal(t, tc.cmdEnv, c.Env)
			assert.Equal(t, tc.container, c.Container)
			assert.Equal(t, tc.env, envOf(out))
			for _, e := range out.Env {
				assert.Equal(t, "cmdline", e.From)
			}
			require.Len(t, out.Settings, len(tc.flags))
			for i, s := range tc.settings {
				got := out.Settings[i]
				assert.Equal(t, setting{s.line, s.key, s.value}, setting{got.Src.Line, got.Key, got.Value})
				assert.Equal(t, "cmdline", got.From)
			}
			for _, a := range c.Argv {
				assert.NotContains(t, a, "hf_aBc")
				assert.NotContains(t, a, "sk-local")
			}
		})
	}
}

func TestCmdlineShell(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		engine facts.Engine
		flags  map[string]string
		env    map[string]string
	}{
		{"sglang serve", "sglang serve --model-path Qwen/Qwen3-8B --tp-size 2 --attention-backend=triton\n",
			facts.EngineSGLang, map[string]string{"model_path": "Qwen/Qwen3-8B", "tp_size": "2", "attention_backend": "triton"}, nil},
		{"api server module with continuations and quotes",
			"export CUDA_VISIBLE_DEVICES=0,1\npython -u -m vllm.entrypoints.openai.api_server \\\n    --model \"/models/my model\" \\\n    --tensor-parallel-size 2 --max-num-seqs -1 \\\n    --chat-template='{{ x }}'\n",
			facts.EngineVLLM, map[string]string{"model": "/models/my model", "tensor_parallel_size": "2", "max_num_seqs": "-1", "chat_template": "{{ x }}"},
			map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}},
		{"env and numactl wrappers", "env NCCL_ALGO=Tree numactl --cpunodebind=0 -m 0 python3 -m sglang.launch_server --tensor-parallel-size 4 --enable-torch-compile --dp 2\n",
			facts.EngineSGLang, map[string]string{"tp_size": "4", "enable_torch_compile": "true", "dp_size": "2"}, map[string]string{"NCCL_ALGO": "Tree"}},
		{"prompt and pipe", "$ CUDA_LAUNCH_BLOCKING=1 python3 -m sglang.launch_server --model Qwen/Qwen3-8B 2>&1 | tee server.log\n",
			facts.EngineSGLang, map[string]string{"model_path": "Qwen/Qwen3-8B"}, map[string]string{"CUDA_LAUNCH_BLOCKING": "1"}},
		{"expansion", "PORT=9000\nvllm serve m --port ${PORT} --host ${HOST:-127.0.0.1} --hf-token $HF_TOKEN\n",
			facts.EngineVLLM, map[string]string{"model": "m", "port": "9000", "host": "127.0.0.1", "hf_token": Redacted},
			map[string]string{"PORT": "9000"}},
		{"bash -c", "NCCL_DEBUG=INFO bash -c 'SGLANG_X=1 exec python3 -m sglang.launch_server --model-path m --tp 2'\n",
			facts.EngineSGLang, map[string]string{"model_path": "m", "tp_size": "2"}, map[string]string{"NCCL_DEBUG": "INFO", "SGLANG_X": "1"}},
		{"uv run", "uv run --python 3.12 vllm serve m --enable-chunked-prefill false\n",
			facts.EngineVLLM, map[string]string{"model": "m", "enable_chunked_prefill": "false"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, issues := parse("cmd.sh", tc.in, facts.KindCmdline)
			assert.Empty(t, issues)
			require.Len(t, out.Cmds, 1)
			c := out.Cmds[0]
			assert.Equal(t, tc.engine, c.Engine)
			assert.Equal(t, tc.flags, c.Flags)
			assert.Equal(t, tc.env, c.Env)
		})
	}
}

func TestSystem(t *testing.T) {
	cases := []struct {
		file                 string
		host, kernel, osName string
		versions             map[string]string
	}{
		{corpus + "h200-x2/system.txt", "vm", "6.18.44-fc-v657-gpu", "Ubuntu 24.04.3 LTS", map[string]string{
			"arch": "x86_64", "os_id": "ubuntu", "os_version": "24.04", "os_codename": "noble", "procps": "4.0.4",
			"nvidia_smi": "580.159.04", "nvml": "580.159", "driver": "580.159.04", "cuda_driver": "13.0",
		}},
		{"testdata/os-release", "", "", "Ubuntu 22.04.5 LTS", map[string]string{"os_id": "ubuntu", "os_version": "22.04", "os_codename": "jammy"}},
		{"testdata/system-versions.txt", "", "6.8.0-45-generic", "Ubuntu 24.04.3 LTS", map[string]string{
			"driver": "580.95.05", "kernel_module": "open", "cuda_toolkit": "13.0.88", "python": "3.12.3", "docker": "28.3.3",
			"os_id": "ubuntu", "os_version": "24.04",
		}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindSystem, k)
			assert.Empty(t, issues)
			require.Len(t, out.System, 1)
			s := out.System[0]
			assert.Equal(t, facts.Source{File: tc.file, Line: 1}, s.Src)
			assert.Equal(t, tc.host, s.Hostname)
			assert.Equal(t, tc.kernel, s.Kernel)
			assert.Equal(t, tc.osName, s.OS)
			for k, v := range tc.versions {
				assert.Equal(t, v, s.Versions[k], k)
			}
			assert.Empty(t, out.Env, "os-release lines are not environment variables")
		})
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		kind  facts.Kind
		in    string
		issue facts.IssueKind
		line  int
	}{
		{"collect_env placeholder", facts.KindCollectEnv, "Your output of `python collect_env.py` here\n", facts.IssueUnrecognized, 0},
		{"collect_env stray line", facts.KindCollectEnv, "PyTorch version: 2.4.0\nthis line means nothing\n", facts.IssueMalformed, 2},
		{"check_env stray line", facts.KindCheckEnv, "Python: 3.11.1\nwhat is this\n", facts.IssueMalformed, 2},
		{"check_env nothing", facts.KindCheckEnv, "hello\n", facts.IssueUnrecognized, 0},
		{"env garbage first", facts.KindEnv, "not an assignment\nA=1\n", facts.IssueMalformed, 1},
		{"cmdline without server", facts.KindCmdline, "ls -la\n", facts.IssueUnrecognized, 0},
		{"cmdline open quote", facts.KindCmdline, "vllm serve m --chat-template '{{\n", facts.IssueIncomplete, 1},
		{"system nothing", facts.KindSystem, "hello\n", facts.IssueUnrecognized, 0},
		{"wrong kind", facts.KindPS, "x\n", facts.IssueUnrecognized, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, issues := parse("f.txt", tc.in, tc.kind)
			require.Len(t, issues, 1, "%v", issues)
			assert.Equal(t, tc.issue, issues[0].Kind)
			assert.Equal(t, tc.line, issues[0].Src.Line)
		})
	}
	// Partial facts survive the bad line.
	out, _ := parse("f.txt", "PyTorch version: 2.4.0\nthis line means nothing\nNvidia driver version: 551.88\n", facts.KindCollectEnv)
	require.Len(t, out.Envs, 1)
	assert.Equal(t, "2.4.0", out.Envs[0].Versions["torch"])
	assert.Equal(t, "551.88", out.Envs[0].Versions["driver"])
}

func TestSniff(t *testing.T) {
	cases := []struct {
		name     string
		file     string
		kind     facts.Kind
		min, max int
	}{
		{"collect_env.txt", corpus + "h200-x2/collect_env.txt", facts.KindCollectEnv, 90, 100},
		{"system.txt", corpus + "h200-x2/system.txt", facts.KindSystem, 80, 100},
		{"x", "testdata/vllm-collect-env-new.txt", facts.KindCollectEnv, 90, 100},
		{"x", "testdata/vllm-collect-env-old.txt", facts.KindCollectEnv, 90, 100},
		{"x", "testdata/check_env-0.4.3.txt", facts.KindCheckEnv, 80, 100},
		{"x", "testdata/check_env-2026.txt", facts.KindCheckEnv, 80, 100},
		{"x", "testdata/env.txt", facts.KindEnv, 70, 100},
		{"x", "testdata/export-p.txt", facts.KindEnv, 70, 100},
		{"x", "testdata/launch-sglang.sh", facts.KindCmdline, 80, 100},
		{"x", "testdata/vllm-serve.txt", facts.KindCmdline, 80, 100},
		{"x", "testdata/docker-vllm.sh", facts.KindCmdline, 80, 100},
		{"x", "testdata/os-release", facts.KindSystem, 70, 100},
		{"x", "testdata/system-versions.txt", facts.KindSystem, 70, 100},
		{"collect_env.txt", "", facts.KindCollectEnv, 1, 29},
		{"run.sh", "", facts.KindCmdline, 1, 29},
		{"x", corpus + "h200-x1/cgroup-oom/server.log", "", 0, 0},
		{"x", "../pyspy/testdata/vllm-locals.txt", "", 0, 0},
		{"x", corpus + "h200-x2/00-idle/ps_auxf.txt", "", 0, 0},
		{"x", corpus + "h200-x1/cgroup-oom/dmesg.txt", "", 0, 0},
		{"x", corpus + "h200-x2/00-idle/meminfo.txt", "", 0, 0},
		{"x", corpus + "fulllogs/vllm-llama31-8b-v0171/server.log", "", 0, 30},
		{"x", corpus + "fulllogs/sglang-qwq32b-tp4-l4/server.log", "", 0, 30},
	}
	for _, tc := range cases {
		var head []byte
		if tc.file != "" {
			head = read(t, tc.file)
			if len(head) > 8<<10 {
				head = head[:8<<10]
			}
		}
		k, s := Sniff(tc.name, head)
		if tc.kind == "" {
			assert.LessOrEqual(t, s, tc.max, tc.file)
			continue
		}
		assert.Equal(t, tc.kind, k, tc.file)
		assert.GreaterOrEqual(t, s, tc.min, tc.file)
		assert.LessOrEqual(t, s, tc.max, tc.file)
	}
}

func TestRedact(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"HF_TOKEN", "hf_abc", Redacted},
		{"api_key", "x", Redacted},
		{"AWS_SECRET_ACCESS_KEY", "x", Redacted},
		{"DB_PASSWORD", "x", Redacted},
		{"NCCL_ALGO", "Ring", "Ring"},
		{"URL", "https://user:pw@host/x", "https://" + Redacted + "@host/x"},
		{"ARGS", "--token hf_0123456789012345678901234567890123 --x", "--token " + Redacted + " --x"},
		{"EMPTY_TOKEN", "", ""},
		{"URL", "http://h:8000/health?api_key=abc123&x=1", "http://h:8000/health?api_key=" + Redacted + "&x=1"},
		// Query parameters follow internal/redact's query policy: words
		// that hold a credential only in a query, not a word somewhere in
		// the name.
		{"URL signature", "https://b.s3.amazonaws.com/k?X-Amz-Signature=0a1b2c&X-Amz-Date=20250101", "https://b.s3.amazonaws.com/k?X-Amz-Signature=" + Redacted + "&X-Amz-Date=20250101"},
		{"URL code", "https://h/cb?code=4/0AfJ&state=x", "https://h/cb?code=" + Redacted + "&state=x"},
		{"URL setting", "http://h/v1?max_tokens=16&tokenizer=llama", "http://h/v1?max_tokens=16&tokenizer=llama"},
		// Tokens by internal/redact's shapes, not only the four it had.
		{"AWS key in a value", "aws s3 cp --key AKIAABCDEFGHIJKLMNOP x", "aws s3 cp --key " + Redacted + " x"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, Redact(tc.name, tc.in), tc.name)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	files = append(files, corpus+"h200-x2/collect_env.txt", corpus+"h200-x2/system.txt")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(0))
		}
	}
	kinds := []facts.Kind{facts.KindCollectEnv, facts.KindCheckEnv, facts.KindEnv, facts.KindCmdline, facts.KindSystem, facts.KindPipList}
	f.Fuzz(func(t *testing.T, b []byte, ki uint8) {
		k, _ := Sniff("x", b)
		if k == "" {
			k = kinds[int(ki)%len(kinds)]
		}
		out, issues := parse("f", string(b), k)
		lines := strings.Count(string(b), "\n") + 1
		check := func(s facts.Source) {
			if s.Line < 0 || s.Line > lines || s.File != "f" {
				t.Fatalf("cites %v of %d lines", s, lines)
			}
		}
		for _, e := range out.Env {
			check(e.Src)
		}
		for _, r := range out.Envs {
			check(r.Src)
			for _, w := range r.Where {
				check(w)
			}
		}
		for _, c := range out.Cmds {
			check(c.Src)
			if c.EndLine > lines {
				t.Fatalf("end line %d of %d", c.EndLine, lines)
			}
		}
		for _, s := range out.Settings {
			check(s.Src)
		}
		for _, s := range out.System {
			check(s.Src)
		}
		for _, is := range issues {
			check(is.Src)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	cases := []struct {
		kind facts.Kind
		file string
	}{
		{facts.KindCollectEnv, corpus + "h200-x2/collect_env.txt"},
		{facts.KindEnv, "testdata/env.txt"},
		{facts.KindCmdline, "testdata/launch-sglang.sh"},
	}
	for _, c := range cases {
		b.Run(string(c.kind), func(b *testing.B) {
			one := read(b, c.file)
			var sb strings.Builder
			for sb.Len() < 4<<20 {
				sb.Write(one)
			}
			data := sb.String()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				parse("bench", data, c.kind)
			}
		})
	}
}

func TestPipList(t *testing.T) {
	cases := []struct {
		file string
		want map[string]string // Versions keys that must be there, with their values
		line map[string]int    // where some were read
	}{
		{"testdata/conda-list.txt", map[string]string{"torch": "2.5.1+cu121", "nccl": "2.21.5", "transformers": "4.52.4",
			"pip:torch": "2.5.1+cu121", "conda:_libgcc_mutex": "0.1"}, map[string]int{"torch": 13}},
		{"testdata/pip-list.txt", map[string]string{"torch": "2.6.0", "sglang": "0.4.6.post1", "flashinfer": "0.2.5", "triton": "3.2.0",
			"pip:adodbapi": "2.6.1.3"}, map[string]int{"sglang": 8}},
		{"testdata/packages.txt", map[string]string{"torch": "2.5.1", "cuda_build": "12.4", "sglang": "0.4.6.post1", "nccl": "2.21.5"},
			map[string]int{"cuda_build": 3, "torch": 8}},
		{"testdata/requirements-freeze.txt", map[string]string{"torch": "2.3.0", "xformers": "0.0.26.post1", "numpy": "1.26.4"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			require.Equal(t, facts.KindPipList, k)
			assert.Empty(t, issues)
			require.Len(t, out.Envs, 1)
			r := out.Envs[0]
			assert.Equal(t, facts.KindPipList, r.Format)
			for key, v := range tc.want {
				assert.Equal(t, v, r.Versions[key], key)
			}
			for key, line := range tc.line {
				assert.Equal(t, line, r.Where[key].Line, key)
			}
			// A path in the table is not a version; an @ URL has none.
			assert.NotContains(t, r.Versions, "vllm")
		})
	}
	// Nothing else is taken for a package list.
	for _, f := range []string{"testdata/env.txt", "testdata/vllm-collect-env-old.txt", "testdata/launch-sglang.sh", corpus + "h200-x2/collect_env.txt"} {
		k, _ := Sniff("x", read(t, f))
		assert.NotEqual(t, facts.KindPipList, k, f)
	}
}

// The GPUs an environment report names are the bundle's GPUs too.
func TestReportGPUs(t *testing.T) {
	checkEnv := "Python: 3.10.12 (main, Jul 29 2024, 16:56:48) [GCC 11.4.0]\nCUDA available: True\nGPU 0: Tesla T4\nGPU 0 Compute Capability: 7.5\nCUDA_HOME: /usr/local/cuda\nPyTorch: 2.4.0+cu121\n"
	out, _ := parse("env.txt", checkEnv, facts.KindCheckEnv)
	require.Len(t, out.GPUList, 1)
	assert.Equal(t, "Tesla T4", out.GPUList[0].Name)
	assert.Equal(t, "7.5", out.GPUList[0].CC)
	assert.Equal(t, 3, out.GPUList[0].Src.Line)

	_, out2, _ := run(t, corpus+"h200-x2/collect_env.txt")
	require.NotEmpty(t, out2.GPUList)
	for _, g := range out2.GPUList {
		assert.Equal(t, "9.0", g.CC, g.Name)
		assert.Contains(t, g.Name, "H200")
	}
}
