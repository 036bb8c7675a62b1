package reports

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

func TestEnvironmentSoftware(t *testing.T) {
	src := func(file string, line int) facts.Source { return facts.Source{File: file, Line: line} }
	f := &facts.Facts{
		Logs: []*facts.Log{
			// A worker's stderr before the engine's log, with the same
			// NCCL: the engine's line speaks for the server.
			{Path: "a-worker-stderr.log", Events: []*facts.LogEvent{
				{Type: facts.EventNCCLVersion, Src: src("a-worker-stderr.log", 2), Data: &facts.NCCL{Version: "2.21.5+cuda12.4"}},
			}},
			{
				Path: "server.log", Engine: facts.EngineVLLM, Version: "0.8.5.post1", LastSrc: src("server.log", 188),
				Events: []*facts.LogEvent{
					{Type: facts.EventVersion, Src: src("server.log", 3), Data: &facts.Version{Version: "0.8.5.post1"}},
					{Type: facts.EventNCCLVersion, Src: src("server.log", 40), Data: &facts.NCCL{Version: "2.21.5+cuda12.4"}},
				},
			},
			// nccl-tests: no engine, its own NCCL.
			{Path: "nccl-tests.log", Events: []*facts.LogEvent{
				{Type: facts.EventNCCLVersion, Src: src("nccl-tests.log", 13), Data: &facts.NCCL{Version: "2.4.8+cuda10.0"}},
			}},
			{Path: "sglang.log", Engine: facts.EngineSGLang, Procs: []*facts.ProcLog{{FirstSrc: src("sglang.log", 1)}}},
		},
		GPUs: []*facts.GPUSnapshot{{Src: src("nvidia-smi.txt", 0), Driver: "570.86.15", CUDA: "12.8"}},
		Envs: []*facts.EnvReport{{
			Src: src("collect_env.txt", 0), Format: facts.KindCollectEnv,
			Versions: map[string]string{"torch": "2.6.0+cu124", "sgl_kernel": "0.1.0", "pip:sgl-kernel": "0.1.0", "pip:flashinfer-python": "0.2.5", "pip:numpy": "2.1",
				"nccl": "2.21.5", "pip:nvidia-nccl-cu12": "2.21.5", "os": "Ubuntu 22.04"},
			// collect_env reads its NCCL from the pip section's line.
			Where: map[string]facts.Source{"torch": src("collect_env.txt", 2),
				"nccl": src("collect_env.txt", 54), "pip:nvidia-nccl-cu12": src("collect_env.txt", 54)},
		}},
		System: []*facts.SystemInfo{{Src: src("uname.txt", 1), Kernel: "6.8.0", Hostname: "gpu-7"}},
	}
	env := buildEnvironment(rules.Derive(f, []*rules.Signature{}))

	assert.Equal(t, []Item{
		{Name: "sglang", Value: "unknown", Source: Location{File: "sglang.log", Line: 1}, Note: "the log does not print its version"},
		// The version line, not the log's last line.
		{Name: "vllm", Value: "0.8.5.post1", Source: Location{File: "server.log", Line: 3}},
		{Name: "driver", Value: "570.86.15", Source: Location{File: "nvidia-smi.txt"}},
		{Name: "cuda-driver", Value: "12.8", Source: Location{File: "nvidia-smi.txt"}, Note: "the newest CUDA the driver supports"},
		{Name: "torch", Value: "2.6.0+cu124", Source: Location{File: "collect_env.txt", Line: 2}},
		// One line, one row: the pip line the report's nccl was read from.
		{Name: "nccl", Value: "2.21.5", Source: Location{File: "collect_env.txt", Line: 54}},
		{Name: "nccl-runtime", Value: "2.21.5+cuda12.4", Source: Location{File: "server.log", Line: 40}, Note: "as the engine loaded it"},
		{Name: "nccl-runtime", Value: "2.4.8+cuda10.0", Source: Location{File: "nccl-tests.log", Line: 13}, Note: "as the log's process loaded it"},
		// A pip line of a package the report names itself (sgl-kernel) is
		// not shown again; numpy is not one that matters.
		{Name: "flashinfer-python", Value: "0.2.5", Source: Location{File: "collect_env.txt"}, Note: "pip"},
		{Name: "sgl-kernel", Value: "0.1.0", Source: Location{File: "collect_env.txt"}},
	}, env.Software)

	assert.Equal(t, []Item{
		{Name: "os", Value: "Ubuntu 22.04", Source: Location{File: "collect_env.txt"}},
		{Name: "kernel", Value: "6.8.0", Source: Location{File: "uname.txt", Line: 1}},
		{Name: "host", Value: "gpu-7", Source: Location{File: "uname.txt", Line: 1}},
	}, env.System)
	assert.Equal(t, "vllm", env.Engine)
}
