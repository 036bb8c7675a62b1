package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

func runOf(f *facts.Facts) Run {
	return Run{Path: "run", Facts: f, Result: rules.Run(f, rules.Options{})}
}

func TestVersionsOfARun(t *testing.T) {
	src := func(file string, line int) facts.Source { return facts.Source{File: file, Line: line} }
	// An offline vLLM log without a logger header: the parser tells its
	// version from the engine-init line but not its engine.
	f := &facts.Facts{
		Logs: []*facts.Log{{Path: "run.log", Version: "0.6.3", LastSrc: src("run.log", 6), Events: []*facts.LogEvent{
			{Type: facts.EventEngineInit, Src: src("run.log", 2), Data: &facts.EngineConfig{Version: "0.6.3"}},
		}}},
		Envs: []*facts.EnvReport{{Src: src("collect_env.txt", 0), Format: facts.KindCollectEnv, Versions: map[string]string{"vllm": "0.9.0"}}},
		// nvidia-smi's first capture printed the CUDA version only.
		GPUs: []*facts.GPUSnapshot{{Src: src("smi-1.txt", 1), CUDA: "12.4"}, {Src: src("smi-2.txt", 1), Driver: "550.54.15", CUDA: "12.4"}},
	}
	r := runOf(f)
	assert.Equal(t, "0.6.3", engineVersion(r), "the log's own version before the env report's")
	v := runVersions(r)
	assert.Equal(t, version{"550.54.15", src("smi-2.txt", 1)}, v["driver"])
	assert.Equal(t, version{"0.9.0", src("collect_env.txt", 0)}, v["vllm"], "a log of no named engine gives no component row")
}
