package serverlog

import (
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures in testdata/ are built from the formats the research notes
// document for eras the corpus lacks: SGLang v0.3.5 (TP0 tag at tp=1, no
// capture end line), an SGLang DP deployment whose scheduler watchdog fires,
// vLLM V0 with multiproc workers and V0 stat lines, and a vLLM V1 TP2 run in
// a container (docker -t stamps) that hangs: shm waits, then an RPC timeout.

func TestTestdataSGLangV035(t *testing.T) {
	out, issues, kind := parseFile(t, "testdata/sglang-v035-tp1.log")
	assert.Empty(t, issues)
	assert.Equal(t, facts.KindSGLangLog, kind)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineSGLang, l.Engine)
	assert.Equal(t, []string{"", "TP0"}, procNames(l))
	ms := inOrder(t, l, step{facts.EventServerArgs, ""}, step{facts.EventDistInitBegin, "TP0"}, step{facts.EventLoadBegin, "TP0"},
		step{facts.EventLoadProgress, "TP0"}, step{facts.EventLoadEnd, "TP0"}, step{facts.EventMemPoolEnd, "TP0"},
		step{facts.EventGraphBegin, "TP0"}, step{facts.EventMaxTotalTokens, "TP0"}, step{facts.EventHTTPStart, ""}, step{facts.EventReady, ""})
	require.Len(t, ms, 10)
	sa := ms[0]
	for k, v := range map[string]any{"tp_size": 1.0, "attention_backend": "flashinfer", "mem_fraction_static": 0.88, "cuda_graph_max_bs": 160.0,
		"disable_cuda_graph": false, "num_continuous_decode_steps": 1.0, "enable_torch_compile": false, "watchdog_timeout": 300.0,
		"host": "0.0.0.0", "port": 30000.0, "api_key": false, "model_path": "meta-llama/Meta-Llama-3.1-8B-Instruct", "kv_cache_dtype": "auto",
		"dp_size": 1.0, "ep_size": 1.0} {
		assert.Equal(t, v, facts.Fields(sa.Data)[k], k)
	}
	assert.NotContains(t, facts.Fields(sa.Data), "quantization", "None")
	assert.Equal(t, 66, len(facts.Fields(sa.Data)), "77 settings, of which 11 are None and absent from the fields")
	n := 0
	for _, st := range out.Settings {
		if st.From == "server-args" {
			n++
		}
		if st.Key == "quantization" {
			assert.Equal(t, "None", st.Value)
		}
	}
	assert.Equal(t, 77, n)
	assert.Zero(t, count(l, facts.EventGraphEnd), "no end line before v0.4.0")
	dec := findSeries(l, facts.EventStatDecode, "")
	require.NotNil(t, dec)
	assert.Equal(t, 2, dec.Count)
	assert.Equal(t, 39.15, dec.Last.Values["gen_throughput"])
	assert.Equal(t, 104.0, dec.Last.Values["tokens"])
	assert.Equal(t, wall("2024-11-02 00:07:11"), ms[9].Time)
}

func TestTestdataSGLangWatchdog(t *testing.T) {
	out, issues, _ := parseFile(t, "testdata/sglang-dp-watchdog.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, []string{"", "DP0 TP0", "DP1 TP0", "DP0 TP1", "DP1 TP1"}, procNames(l))
	assert.Equal(t, facts.Rank{DP: 1, PP: -1, CP: -1, MoeDP: -1, TP: 0, EP: -1}, l.ProcLog("DP1 TP0").Proc.Rank)
	ms := inOrder(t, l, step{facts.EventServerArgs, ""}, step{facts.EventJITBegin, ""}, step{facts.EventJITEnd, ""},
		step{facts.EventGraphEnd, "DP0 TP0"}, step{facts.EventReady, ""}, step{facts.EventWatchdogTimeout, "DP1 TP0"},
		step{facts.EventSigquit, ""}, step{facts.EventCollectiveTimout, ""}, step{facts.EventCollectiveTimout, ""}, step{facts.EventKilled, ""})
	require.Len(t, ms, 10)
	assert.Equal(t, "<set>", facts.Fields(ms[0].Data)["api_key"])
	assert.Equal(t, 2.0, facts.Fields(ms[0].Data)["dp_size"])
	assert.Equal(t, "cascade", facts.Fields(ms[1].Data)["op"])
	assert.Equal(t, 17.13, facts.Fields(ms[3].Data)["elapsed_s"])
	assert.Equal(t, 0.89, facts.Fields(ms[3].Data)["mem_usage_gb"])
	assert.Equal(t, 300.0, facts.Fields(ms[5].Data)["timeout_s"])
	assert.Equal(t, 17, ms[5].Src.Line)
	wd := ms[7]
	assert.Equal(t, 2.0, facts.Fields(wd.Data)["rank"], "the [rank2] prefix")
	assert.Equal(t, 0.0, facts.Fields(wd.Data)["pg_rank"])
	assert.Equal(t, 1218.0, facts.Fields(wd.Data)["seq_num"])
	assert.Equal(t, "ALLREDUCE", facts.Fields(wd.Data)["op_type"])
	assert.Equal(t, 600000.0, facts.Fields(wd.Data)["timeout_ms"])
	assert.Equal(t, 600080.0, facts.Fields(wd.Data)["ran_for_ms"])
	last := ms[8]
	assert.Equal(t, 1218.0, facts.Fields(last.Data)["last_enqueued"])
	assert.Equal(t, 1217.0, facts.Fields(last.Data)["last_completed"])
	assert.Equal(t, "SIGKILL", facts.Fields(ms[9].Data)["signal"])
	for _, st := range out.Settings {
		assert.NotEqual(t, "sk-do-not-keep", st.Value)
	}
}

func TestTestdataVLLMV0(t *testing.T) {
	out, issues, kind := parseFile(t, "testdata/vllm-v0-tp2.log")
	assert.Empty(t, issues)
	assert.Equal(t, facts.KindVLLMLog, kind)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.6.6.post1", l.Version)
	assert.Equal(t, []string{"", "VllmWorkerProcess_3222324"}, procNames(l))
	ms := inOrder(t, l, step{facts.EventVersion, ""}, step{facts.EventNonDefaultArgs, ""}, step{facts.EventEngineInit, ""},
		step{facts.EventAttentionBackend, "VllmWorkerProcess_3222324"}, step{facts.EventNCCLVersion, ""}, step{facts.EventP2P, ""},
		step{facts.EventLoadBegin, ""}, step{facts.EventLoadProgress, ""}, step{facts.EventLoadEnd, ""}, step{facts.EventMemoryProfile, ""},
		step{facts.EventKVCacheSize, ""}, step{facts.EventGraphBegin, ""}, step{facts.EventGraphProgress, ""}, step{facts.EventGraphEnd, ""},
		step{facts.EventInitEngineDone, ""}, step{facts.EventRoute, ""}, step{facts.EventReady, ""}, step{facts.EventRequest, ""},
		step{facts.EventError, ""}, step{facts.EventTraceback, ""}, step{facts.EventEngineDead, ""})
	require.Len(t, ms, 21)
	assert.Equal(t, "V0", facts.Fields(ms[2].Data)["engine_version"])
	assert.Equal(t, 2.0, facts.Fields(ms[2].Data)["tensor_parallel_size"])
	assert.Equal(t, 145702.0, facts.Fields(ms[10].Data)["gpu_blocks"])
	assert.Equal(t, 35.0, facts.Fields(ms[12].Data)["total"])
	assert.Equal(t, 500.0, facts.Fields(ms[17].Data)["status"])
	assert.Equal(t, facts.LevelError, ms[17].Level)
	assert.Equal(t, "vllm.engine.async_llm_engine.AsyncEngineDeadError", ms[19].Traceback.ExcType)
	st := findSeries(l, facts.EventStatThroughput, "")
	require.NotNil(t, st)
	assert.Equal(t, 2, st.Count)
	assert.Equal(t, 82.1, st.Last.Values["kv_cache_usage_pct"])
	assert.Equal(t, 3.0, st.Last.Values["waiting"], "V0's Pending")
	pc := findSeries(l, facts.EventStatThroughput, "prefix-cache")
	require.NotNil(t, pc)
	assert.Equal(t, 90.0, pc.Last.Values["cpu_prefix_cache_hit_pct"])
	assert.True(t, out.Clocks[l.Path].NoYear)
}

func TestTestdataVLLMHangInContainer(t *testing.T) {
	out, issues, _ := parseFile(t, "testdata/vllm-v1-hang.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, []string{"APIServer", "EngineCore_DP0", "Worker_TP0", "Worker_TP1"}, procNames(l))
	ms := inOrder(t, l, step{facts.EventVersion, "APIServer"}, step{facts.EventNonDefaultArgs, "APIServer"},
		step{facts.EventEngineInit, "EngineCore_DP0"}, step{facts.EventNCCLVersion, "Worker_TP0"}, step{facts.EventCustomAllReduce, "Worker_TP1"},
		step{facts.EventLoadEnd, "Worker_TP0"}, step{facts.EventAvailableKV, "Worker_TP0"}, step{facts.EventKVCacheSize, "EngineCore_DP0"},
		step{facts.EventInitEngineDone, "EngineCore_DP0"}, step{facts.EventHTTPStart, "APIServer"}, step{facts.EventReady, "APIServer"},
		step{facts.EventSHMWait, "EngineCore_DP0"}, step{facts.EventSHMWait, "EngineCore_DP0"}, step{facts.EventEngineDead, "EngineCore_DP0"},
		step{facts.EventTraceback, "EngineCore_DP0"}, step{facts.EventRPCTimeout, "EngineCore_DP0"}, step{facts.EventEngineDead, "APIServer"})
	require.Len(t, ms, 17)
	assert.Equal(t, "<set>", facts.Fields(ms[1].Data)["api_key"], "a list of keys is a secret too")
	assert.Equal(t, "execute_model", facts.Fields(ms[15].Data)["method"])
	assert.Equal(t, wall("2026-05-12 08:06:01"), ms[13].Time, "times come from the container's zoned stamps")
	assert.Equal(t, facts.Clock{Latest: wall("2026-05-12 08:06:01").Add(500e6)}, out.Clocks[l.Path])
	st := findSeries(l, facts.EventStatThroughput, "")
	require.NotNil(t, st)
	assert.Equal(t, 12.0, st.Last.Values["waiting"])
	assert.Equal(t, 0.0, st.Last.Values["gen_throughput"])
}
