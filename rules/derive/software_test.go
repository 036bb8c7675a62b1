package derive_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func TestSoftwareReadings(t *testing.T) {
	src := func(file string, line int) facts.Source { return facts.Source{File: file, Line: line} }
	f := &facts.Facts{
		Logs: []*facts.Log{
			{
				Path: "server.log", Engine: facts.EngineVLLM, Version: "0.8.5.post1", LastSrc: src("server.log", 188),
				Events: []*facts.LogEvent{
					{Type: facts.EventVersion, Src: src("server.log", 3), Data: &facts.Version{Version: "0.8.5.post1"}},
					{Type: facts.EventNCCLVersion, Src: src("server.log", 40), Msg: "NCCL version 2.21.5+cuda12.4", Data: &facts.NCCL{Version: "2.21.5+cuda12.4"}},
				},
			},
			// A log of no engine still shows its NCCL.
			{Path: "nccl-tests.log", Unmatched: []*facts.LogEvent{{Src: src("nccl-tests.log", 7), Msg: "NCCL INFO NCCL version 2.18.6+cuda11.8"}}},
		},
		GPUs: []*facts.GPUSnapshot{
			{Src: src("nvidia-smi.txt", 0)},
			{Src: src("nvidia-smi-2.txt", 0), Driver: "570.86.15", CUDA: "12.8"},
			{Src: src("nvidia-smi-3.txt", 0), Driver: "570.86.15", CUDA: "12.8"},
		},
		Envs: []*facts.EnvReport{{
			Src: src("collect_env.txt", 0), Format: facts.KindCollectEnv,
			Versions: map[string]string{"torch": "2.6.0+cu124", "os": "Ubuntu 22.04", "pip:flashinfer-python": "0.2.5"},
			Where:    map[string]facts.Source{"torch": src("collect_env.txt", 2)},
		}},
		System: []*facts.SystemInfo{{Src: src("uname.txt", 1), Kernel: "6.8.0", Versions: map[string]string{"driver": "570.86.15"}}},
		Cmds:   []*facts.Cmdline{{Src: src("launch.sh", 1), Container: map[string]string{"image": "vllm/vllm-openai:v0.8.5"}}},
	}
	idx := derive.Derive(f, []*derive.Signature{})

	type row struct {
		kind       derive.ReadingKind
		key, value string
		src        facts.Source
	}
	var got []row
	for _, r := range idx.Software() {
		got = append(got, row{r.Kind, r.Key, r.Value, r.Src})
	}
	assert.Equal(t, []row{
		// The banner cites the version line, not the log's last line.
		{derive.ByBanner, "vllm", "0.8.5.post1", src("server.log", 3)},
		{derive.ByNCCLRuntime, "nccl", "2.21.5+cuda12.4", src("server.log", 40)},
		{derive.ByNCCLMention, "nccl", "2.21.5", src("server.log", 40)},
		{derive.ByNCCLMention, "nccl", "2.18.6", src("nccl-tests.log", 7)},
		// The first snapshot that prints a header, once.
		{derive.BySnapshot, "driver", "570.86.15", src("nvidia-smi-2.txt", 0)},
		{derive.BySnapshot, "cuda-driver", "12.8", src("nvidia-smi-2.txt", 0)},
		{derive.BySystem, "driver", "570.86.15", src("uname.txt", 1)},
		// Keys sorted; a key with no line of its own cites the report.
		{derive.ByEnvReport, "os", "Ubuntu 22.04", src("collect_env.txt", 0)},
		{derive.ByEnvReport, "pip:flashinfer-python", "0.2.5", src("collect_env.txt", 0)},
		{derive.ByEnvReport, "torch", "2.6.0+cu124", src("collect_env.txt", 2)},
		{derive.ByImageTag, "vllm", "0.8.5", src("launch.sh", 1)},
	}, got)

	var platform []string
	for _, r := range idx.Platform() {
		platform = append(platform, r.Key+"="+r.Value)
	}
	assert.Equal(t, []string{"kernel=6.8.0", "os=Ubuntu 22.04"}, platform)

	// The catalog's view trusts the env report over the banner and the
	// image tag, and reads flashinfer from the package list's name.
	v := idx.Versions()
	assert.Equal(t, "2.6.0+cu124", v["torch"].Version.Text)
	assert.Equal(t, "0.2.5", v["flashinfer"].Version.Text)
	assert.Equal(t, "0.8.5.post1", v["vllm"].Version.Text)
	assert.Equal(t, src("server.log", 3), v["vllm"].Src)
	assert.Equal(t, "2.21.5", v["nccl"].Version.Text)
	assert.Equal(t, "NCCL banner", v["nccl"].From)
}

func TestSoftwareReadingSources(t *testing.T) {
	src := func(file string, line int) facts.Source { return facts.Source{File: file, Line: line} }
	f := &facts.Facts{
		Logs: []*facts.Log{
			// vLLM before its API-server banner: the version is on the
			// engine-init line, the log's first line says nothing of it.
			{Path: "offline.log", Engine: facts.EngineVLLM, Version: "0.6.3", LastSrc: src("offline.log", 6),
				Procs:  []*facts.ProcLog{{FirstSrc: src("offline.log", 1)}},
				Events: []*facts.LogEvent{{Type: facts.EventEngineInit, Src: src("offline.log", 2), Data: &facts.EngineConfig{Version: "0.6.3"}}}},
			// A version and no engine the parser could name.
			{Path: "run.log", Version: "0.5.1"},
		},
		GPUs: []*facts.GPUSnapshot{{Src: src("smi-1.txt", 1), CUDA: "12.4"}, {Src: src("smi-2.txt", 1), Driver: "550.54.15"}},
	}
	idx := derive.Derive(f, []*derive.Signature{})
	var got []string
	for _, r := range idx.Software() {
		got = append(got, fmt.Sprintf("%d %s=%s %s", r.Kind, r.Key, r.Value, r.Src))
	}
	assert.Equal(t, []string{
		fmt.Sprintf("%d vllm=0.6.3 offline.log:2", derive.ByBanner),
		fmt.Sprintf("%d =0.5.1 run.log", derive.ByBanner),
		// Each from the first capture that prints it.
		fmt.Sprintf("%d driver=550.54.15 smi-2.txt:1", derive.BySnapshot),
		fmt.Sprintf("%d cuda-driver=12.4 smi-1.txt:1", derive.BySnapshot),
	}, got)
	_, named := idx.Versions()[""]
	assert.False(t, named, "the catalog's versions are of packages it can name")
	assert.Equal(t, src("offline.log", 2), idx.Versions()["vllm"].Src)
}

func TestEnvReports(t *testing.T) {
	rs := []derive.Reading{
		{Kind: derive.ByEnvReport, Key: "a", Group: 1}, {Kind: derive.ByEnvReport, Key: "b", Group: 1},
		{Kind: derive.BySystem, Key: "driver", Group: 2},
		{Kind: derive.ByEnvReport, Key: "c", Group: 3},
	}
	got := derive.EnvReports(rs)
	require.Len(t, got, 2)
	assert.Len(t, got[0], 2)
	assert.Equal(t, "c", got[1]["c"].Key)
	assert.Empty(t, derive.EnvReports(nil))
}
