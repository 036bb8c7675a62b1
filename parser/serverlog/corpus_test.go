package serverlog

import (
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is a milestone: an event type written by a process.
type step struct {
	typ  facts.EventType
	proc string
}

// inOrder asserts that the milestones appear in the log's events in this
// order (other events may come between them) and returns the events found.
func inOrder(t *testing.T, l *facts.Log, steps ...step) []*facts.LogEvent {
	t.Helper()
	var found []*facts.LogEvent
	i := 0
	for _, e := range l.Events {
		if i < len(steps) && e.Type == steps[i].typ && e.Proc.Name == steps[i].proc {
			found = append(found, e)
			i++
		}
	}
	if !assert.Equal(t, len(steps), i, "milestones in order: stopped before %v", func() any {
		if i < len(steps) {
			return steps[i]
		}
		return nil
	}()) {
		return nil
	}
	return found
}

func procNames(l *facts.Log) []string {
	var out []string
	for _, p := range l.Procs {
		out = append(out, p.Proc.Name)
	}
	return out
}

func lastEvent(l *facts.Log) *facts.LogEvent {
	if len(l.Events) == 0 {
		return nil
	}
	return l.Events[len(l.Events)-1]
}

func count(l *facts.Log, typ facts.EventType) int {
	return len(l.EventsOf(typ))
}

func wall(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

const full = "../../fixtures/corpus/fulllogs/"

func TestCorpusSGLangQwQ(t *testing.T) {
	out, issues, kind := parseFile(t, full+"sglang-qwq32b-tp4-l4/server.log")
	assert.Empty(t, issues)
	assert.Equal(t, facts.KindSGLangLog, kind)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineSGLang, l.Engine)
	assert.Equal(t, 89, l.Lines)
	assert.Equal(t, []string{"", "TP3", "TP1", "TP0", "TP2"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventCmdline, ""}, step{facts.EventServerArgs, ""},
		step{facts.EventDistInitBegin, "TP0"}, step{facts.EventNCCLVersion, "TP0"}, step{facts.EventCustomAllReduce, "TP0"},
		step{facts.EventDistInitEnd, "TP0"}, step{facts.EventLoadBegin, "TP0"}, step{facts.EventLoadProgress, "TP0"},
		step{facts.EventLoadEnd, "TP0"}, step{facts.EventKVCacheAlloc, "TP0"}, step{facts.EventMemPoolEnd, "TP0"},
		step{facts.EventGraphBegin, "TP0"}, step{facts.EventGraphEnd, "TP0"}, step{facts.EventMaxTotalTokens, "TP0"},
		step{facts.EventHTTPStart, ""}, step{facts.EventReady, ""})
	require.Len(t, ms, 16)
	assert.Equal(t, 48, ms[7].Src.Line, "the last state of the shard bar")
	assert.Equal(t, 14.0, facts.Fields(ms[7].Data)["n"])
	assert.Equal(t, 15.54, facts.Fields(ms[8].Data)["mem_usage_gb"])
	assert.Equal(t, 46611.0, facts.Fields(ms[9].Data)["tokens"])
	assert.Equal(t, 7.23, facts.Fields(ms[12].Data)["elapsed_s"])
	assert.Equal(t, 83, ms[15].Src.Line)
	assert.Equal(t, wall("2025-03-08 12:29:33"), ms[15].Time)
	// After ready only /health checks.
	last := lastEvent(l)
	assert.Equal(t, facts.EventRequest, last.Type)
	assert.Equal(t, 89, last.Src.Line)
	assert.Equal(t, "/health", facts.Fields(last.Data)["path"])
	assert.Equal(t, 4, count(l, facts.EventDistInitBegin))
	// The vLLM import lines (line 2: "INFO 03-07 12:29:02") take the year of
	// the SGLang stamps.
	assert.Equal(t, wall("2025-03-07 12:29:02"), l.FirstTime)
	assert.Equal(t, wall("2025-03-08 12:29:47"), l.LastTime)
	assert.Equal(t, facts.Clock{NoZone: true, Latest: wall("2025-03-08 12:29:47")}, out.Clocks[l.Path])
	assert.Equal(t, []string{l.Path + ": some of its timestamps carry no year (vLLM, torch or library stamps); they took the year of the file's dated stamps (2025)"}, out.Assumptions)
	// The capture bar of this era has no description and is glued to TP1's line.
	require.Len(t, l.Bars, 2)
	assert.Equal(t, "", l.Bars[1].Desc)
	assert.Equal(t, 13, l.Bars[1].N)
	assert.Equal(t, 13, l.Bars[1].Total)
	assert.Equal(t, 63, l.Bars[1].FirstSrc.Line)
	assert.Contains(t, out.Settings, &facts.Setting{Src: facts.Source{File: l.Path, Line: 3}, Key: "tp_size", Value: "4", From: "server-args"})
	assert.Contains(t, out.Settings, &facts.Setting{Src: facts.Source{File: l.Path, Line: 1}, Key: "tensor_parallel_size", Value: "4", From: "cmdline"})
	s := findSeries(l, facts.EventStatPrefill, "")
	require.NotNil(t, s)
	assert.Equal(t, "TP0", s.Proc.Name)
	assert.Equal(t, 1, s.Count)
}

func TestCorpusSGLangSparkInt4(t *testing.T) {
	out, issues, _ := parseFile(t, full+"sglang-spark-laguna-int4/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineSGLang, l.Engine)
	assert.Equal(t, []string{""}, procNames(l), "single GPU: no rank tag")
	ms := inOrder(t, l,
		step{facts.EventAttentionBackend, ""}, step{facts.EventServerArgs, ""}, step{facts.EventDistInitBegin, ""},
		step{facts.EventDistInitEnd, ""}, step{facts.EventLoadBegin, ""}, step{facts.EventLoadProgress, ""},
		step{facts.EventLoadEnd, ""}, step{facts.EventLoadBegin, ""}, step{facts.EventLoadEnd, ""},
		step{facts.EventKVCacheAlloc, ""}, step{facts.EventMemPoolEnd, ""}, step{facts.EventGraphBegin, ""},
		step{facts.EventGraphProgress, ""}, step{facts.EventGraphEnd, ""}, step{facts.EventMaxTotalTokens, ""},
		step{facts.EventHTTPStart, ""}, step{facts.EventReady, ""}, step{facts.EventShutdown, ""},
		step{facts.EventChildFailed, ""}, step{facts.EventSigquit, ""})
	require.Len(t, ms, 20)
	assert.Equal(t, "flashinfer", facts.Fields(ms[0].Data)["backend"])
	assert.Equal(t, 15.0, facts.Fields(ms[5].Data)["total"])
	assert.Equal(t, 109.33, facts.Fields(ms[6].Data)["elapsed_s"])
	assert.Equal(t, 12.25, facts.Fields(ms[8].Data)["elapsed_s"])
	assert.Equal(t, "target prefill CUDA graph", facts.Fields(ms[11].Data)["graph"])
	assert.Equal(t, 216.19, facts.Fields(ms[13].Data)["elapsed_s"])
	assert.Equal(t, 185897.0, facts.Fields(ms[14].Data)["max_total_num_tokens"])
	assert.Equal(t, wall("2026-08-01 23:43:47"), ms[16].Time)
	assert.Equal(t, "SIGTERM", facts.Fields(ms[17].Data)["signal"])
	assert.Equal(t, -15.0, facts.Fields(ms[18].Data)["exit_code"])
	assert.Equal(t, 394, lastEvent(l).Src.Line)
	assert.Equal(t, facts.EventSigquit, lastEvent(l).Type)
	// 57 Prefill and 56 Decode lines, as the source says.
	dec := findSeries(l, facts.EventStatDecode, "")
	pre := findSeries(l, facts.EventStatPrefill, "")
	require.NotNil(t, dec)
	require.NotNil(t, pre)
	assert.Equal(t, 56, dec.Count)
	assert.Equal(t, 57, pre.Count)
	assert.Equal(t, 2.75, dec.First.Values["accept_len"])
	req := findSeries(l, facts.EventRequest, "")
	require.NotNil(t, req)
	assert.Equal(t, 3.0, req.Total("client_error").Sum, "three HTTP 400 responses")
	assert.Equal(t, "kill_process_tree called: parent_pid=31319, include_parent=True, pid=31319", l.Procs[0].LastMsg)
	// Target then draft weights: two bars of the same description.
	require.GreaterOrEqual(t, len(l.Bars), 2)
	assert.Equal(t, "Multi-thread loading shards", l.Bars[0].Desc)
	assert.Equal(t, 15, l.Bars[0].N)
	assert.Equal(t, 1, l.Bars[1].Total)
}

func TestCorpusSGLangGLM5(t *testing.T) {
	out, issues, _ := parseFile(t, full+"sglang-glm5-tp8-mi355x-graphcrash/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineSGLang, l.Engine)
	assert.Equal(t, []string{"", "TP7", "TP3", "TP2", "TP6", "TP0", "TP5", "TP1", "TP4"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventServerArgs, ""}, step{facts.EventDistInitBegin, "TP0"}, step{facts.EventNCCLVersion, "TP0"},
		step{facts.EventDistInitEnd, "TP0"}, step{facts.EventLoadBegin, "TP0"}, step{facts.EventLoadProgress, "TP0"},
		step{facts.EventLoadEnd, "TP0"}, step{facts.EventKVCacheAlloc, "TP0"}, step{facts.EventGraphBegin, "TP0"},
		step{facts.EventGraphProgress, "TP0"}, step{facts.EventSchedulerCrash, "TP0"}, step{facts.EventSigquit, ""})
	require.Len(t, ms, 12)
	assert.Equal(t, 778.18, facts.Fields(ms[6].Data)["elapsed_s"])
	assert.Equal(t, 186.77, facts.Fields(ms[7].Data)["kv_size_gb"])
	assert.Equal(t, 0.0, facts.Fields(ms[9].Data)["n"], "capture stopped at 0/52")
	assert.Equal(t, 52.0, facts.Fields(ms[9].Data)["total"])
	crash := ms[10]
	require.NotNil(t, crash.Traceback)
	assert.Equal(t, "TypeError", crash.Traceback.ExcType)
	assert.Equal(t, "cannot unpack non-iterable ForwardMetadata object", crash.Traceback.ExcMsg)
	assert.Equal(t, 932, crash.Src.Line)
	assert.Equal(t, 987, crash.EndLine)
	require.Len(t, crash.Traceback.Frames, facts.MaxFrames)
	assert.Equal(t, facts.Frame{File: "/sgl-workspace/sglang/python/sglang/srt/models/deepseek_v2.py", Line: 2010, Func: "forward_absorb_fused_mla_rope_prepare", Code: "attn_logits, _, kv_indptr, kv_indices, _, _, _ = ("}, crash.Traceback.Frames[facts.MaxFrames-1])
	// Seven ranks raised (TP2 did not); every traceback is also a traceback event.
	assert.Equal(t, 7, count(l, facts.EventSchedulerCrash))
	assert.Equal(t, 7, count(l, facts.EventTraceback))
	assert.Equal(t, 7, count(l, facts.EventSigquit))
	last := lastEvent(l)
	assert.Equal(t, facts.EventSigquit, last.Type)
	assert.Equal(t, 1047, last.Src.Line)
	// Straggler ranks in weight loading.
	loads := map[string]float64{}
	for _, e := range l.EventsOf(facts.EventLoadEnd) {
		loads[e.Proc.Name] = facts.Fields(e.Data)["elapsed_s"].(float64)
	}
	assert.Equal(t, 228.09, loads["TP4"])
	assert.Equal(t, 887.93, loads["TP7"])
	assert.Len(t, loads, 8)
	tp2 := l.ProcLog("TP2")
	require.NotNil(t, tp2)
	assert.Equal(t, wall("2026-02-26 05:35:13"), tp2.LastTime)
}

func TestCorpusSGLangCaptureStall(t *testing.T) {
	out, issues, _ := parseFile(t, full+"sglang-spark-laguna-nvfp4-capture-stall/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineSGLang, l.Engine)
	assert.Equal(t, []string{""}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventServerArgs, ""}, step{facts.EventLoadBegin, ""}, step{facts.EventLoadProgress, ""},
		step{facts.EventLoadEnd, ""}, step{facts.EventLoadBegin, ""}, step{facts.EventLoadEnd, ""},
		step{facts.EventKVCacheAlloc, ""}, step{facts.EventMemPoolEnd, ""}, step{facts.EventGraphBegin, ""},
		step{facts.EventGraphProgress, ""})
	require.Len(t, ms, 10)
	assert.Equal(t, 49.0, facts.Fields(ms[2].Data)["total"])
	assert.Equal(t, 618.01, facts.Fields(ms[3].Data)["elapsed_s"])
	assert.Equal(t, 93.16, facts.Fields(ms[3].Data)["mem_usage_gb"])
	last := lastEvent(l)
	assert.Equal(t, facts.EventGraphProgress, last.Type)
	assert.Equal(t, 65, last.Src.Line)
	assert.Equal(t, false, facts.Fields(last.Data)["done"])
	assert.Equal(t, 0.0, facts.Fields(last.Data)["n"])
	assert.Equal(t, 58.0, facts.Fields(last.Data)["total"])
	assert.Equal(t, "num_tokens=8192 avail_mem=11.78 GB", facts.Fields(last.Data)["detail"])
	assert.True(t, last.Inherited)
	assert.Equal(t, wall("2026-08-01 21:51:16"), last.Time)
	assert.Zero(t, count(l, facts.EventReady))
	assert.Zero(t, count(l, facts.EventTraceback))
	// The bar is glued to the resource_tracker warning: both are read.
	require.Len(t, l.EventsOf(facts.EventPythonWarning), 2)
	assert.Equal(t, 65, l.EventsOf(facts.EventPythonWarning)[1].Src.Line)
}

func TestCorpusSGLangIncomplete(t *testing.T) {
	out, issues, _ := parseFile(t, full+"sglang-qwen3-14b-tp2-a4500-incomplete/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineSGLang, l.Engine)
	assert.Equal(t, 59, l.Lines, "58 newlines and a last line without one")
	assert.Equal(t, []string{"", "TP0", "TP1"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventAttentionBackend, ""}, step{facts.EventServerArgs, ""},
		step{facts.EventDistInitBegin, "TP0"}, step{facts.EventNCCLVersion, "TP0"}, step{facts.EventDistInitEnd, "TP0"},
		step{facts.EventLoadBegin, "TP0"}, step{facts.EventLoadProgress, "TP0"}, step{facts.EventLoadEnd, "TP0"},
		step{facts.EventKVCacheAlloc, "TP0"}, step{facts.EventMemPoolEnd, "TP0"}, step{facts.EventGraphBegin, "TP0"},
		step{facts.EventGraphProgress, "TP0"})
	require.Len(t, ms, 12)
	assert.Equal(t, facts.LevelInfo, ms[0].Level, "the 2026 main-process prefix prints the level")
	assert.Equal(t, 8.0, facts.Fields(ms[6].Data)["total"])
	assert.Equal(t, 139814.0, facts.Fields(ms[8].Data)["tokens"])
	last := lastEvent(l)
	assert.Equal(t, facts.EventGraphProgress, last.Type)
	assert.Equal(t, "TP0", last.Proc.Name)
	assert.Equal(t, 59, last.Src.Line)
	assert.Equal(t, "bs=1 avail_mem=5.89 GB", facts.Fields(last.Data)["detail"])
	assert.Equal(t, 1.0, facts.Fields(last.Data)["total"])
	tp1 := l.ProcLog("TP1")
	require.NotNil(t, tp1)
	assert.Equal(t, 58, tp1.LastSrc.Line)
	assert.Equal(t, "Capture cuda graph begin. This can take up to several minutes. avail mem=6.31 GB", tp1.LastMsg)
}

func TestCorpusVLLMDeepseek085(t *testing.T) {
	out, issues, kind := parseFile(t, full+"vllm-deepseek-r1-14b-v085/server.log")
	assert.Empty(t, issues)
	assert.Equal(t, facts.KindVLLMLog, kind)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.8.5.post1", l.Version)
	assert.Equal(t, []string{""}, procNames(l), "no process tags in 0.8.5")
	ms := inOrder(t, l,
		step{facts.EventVersion, ""}, step{facts.EventNonDefaultArgs, ""}, step{facts.EventEngineInit, ""},
		step{facts.EventRankAssigned, ""}, step{facts.EventAttentionBackend, ""}, step{facts.EventLoadBegin, ""},
		step{facts.EventLoadProgress, ""}, step{facts.EventLoadEnd, ""}, step{facts.EventLoadEnd, ""},
		step{facts.EventTorchCompile, ""}, step{facts.EventTorchCompileEnd, ""}, step{facts.EventKVCacheSize, ""},
		step{facts.EventMaxConcurrency, ""}, step{facts.EventGraphEnd, ""}, step{facts.EventInitEngineDone, ""},
		step{facts.EventHTTPStart, ""}, step{facts.EventReady, ""})
	require.Len(t, ms, 17)
	assert.Equal(t, true, facts.Fields(ms[1].Data)["all_args"], "args: Namespace(...) of this era")
	assert.Equal(t, "V1", facts.Fields(ms[2].Data)["engine_version"])
	assert.Equal(t, 3.83, facts.Fields(ms[7].Data)["elapsed_s"])
	assert.Equal(t, 27.5916, facts.Fields(ms[8].Data)["mem_gib"])
	assert.Equal(t, 32832.0, facts.Fields(ms[11].Data)["tokens"])
	assert.Equal(t, 57.31, facts.Fields(ms[14].Data)["elapsed_s"])
	assert.Equal(t, 61, ms[16].Src.Line)
	// No year in vLLM stamps: the placeholder year, marked in the clock.
	assert.Equal(t, wall("2000-05-12 02:46:33"), ms[16].Time)
	assert.Equal(t, facts.Clock{NoZone: true, NoYear: true, Latest: wall("2000-05-12 02:51:33")}, out.Clocks[l.Path])
	last := lastEvent(l)
	assert.Equal(t, facts.EventRequest, last.Type)
	assert.Equal(t, 88, last.Src.Line)
	s := findSeries(l, facts.EventStatThroughput, "")
	require.NotNil(t, s)
	assert.Equal(t, 10, s.Count)
	assert.Equal(t, 60.0, s.Last.Values["prefix_cache_hit_pct"])
	assert.Equal(t, 1, count(l, facts.EventError), "the 404 for an unknown model name")
}

func TestCorpusVLLMRayPlacementHang(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-qwen25-32b-tp4-ray-placement-hang/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, []string{""}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventCmdline, ""}, step{facts.EventVersion, ""}, step{facts.EventNonDefaultArgs, ""},
		step{facts.EventConfigWarning, ""}, step{facts.EventEngineInit, ""}, step{facts.EventConfigWarning, ""},
		step{facts.EventPlacementWait, ""}, step{facts.EventPlacementWait, ""}, step{facts.EventPlacementWait, ""},
		step{facts.EventPlacementWait, ""}, step{facts.EventSignal, ""}, step{facts.EventTraceback, ""},
		step{facts.EventTraceback, ""})
	require.Len(t, ms, 13)
	assert.Equal(t, "<set>", facts.Fields(ms[0].Data)["api_key"], "the --api-key value is not kept")
	assert.Equal(t, "V0", facts.Fields(ms[4].Data)["engine_version"])
	assert.Equal(t, 150.0, facts.Fields(ms[9].Data)["wait_s"])
	engine := ms[11]
	assert.Equal(t, "SystemExit", engine.Traceback.ExcType)
	assert.Equal(t, "15", engine.Traceback.ExcMsg)
	assert.Equal(t, 1, engine.Traceback.Chained)
	assert.Equal(t, "KeyboardInterrupt", facts.Fields(engine.Data)["first_exc_type"])
	assert.Equal(t, 89, engine.Src.Line)
	assert.Equal(t, 137, engine.EndLine)
	api := ms[12]
	assert.Equal(t, "KeyboardInterrupt", api.Traceback.ExcType)
	assert.Equal(t, "asyncio.exceptions.CancelledError", facts.Fields(api.Data)["first_exc_type"])
	assert.Equal(t, 139, api.Src.Line)
	assert.Equal(t, 188, api.EndLine)
	assert.Equal(t, api, lastEvent(l))
	// Ray's own lines carry the year: the vLLM lines take it.
	assert.Equal(t, wall("2025-05-26 18:53:34"), l.FirstTime)
	assert.Equal(t, facts.Clock{NoZone: true, Latest: wall("2025-05-26 18:58:11")}, out.Clocks[l.Path])
	for _, st := range out.Settings {
		if st.Key == "api_key" {
			assert.Equal(t, "<set>", st.Value)
		}
	}
	// The native stack dump after SIGTERM is not 35 errors.
	assert.Equal(t, 1, count(l, facts.EventError))
}

func TestCorpusVLLMRayMultiNode(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-gptoss120b-ray-4node-a100/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.10.1.1", l.Version)
	assert.Equal(t, []string{"", "APIServer", "EngineCore_0", "pid_1273", "pid_345@10.42.9.225", "RayWorkerWrapper_1273",
		"RayWorkerWrapper_345@10.42.11.243", "pid_343@10.42.9.224", "RayWorkerWrapper_343@10.42.9.224", "RayWorkerWrapper_345@10.42.9.225"}, procNames(l))
	w := l.ProcLog("RayWorkerWrapper_345@10.42.11.243")
	require.NotNil(t, w)
	assert.Equal(t, "10.42.11.243", w.Proc.Host)
	assert.Equal(t, 345, w.Proc.PID)
	ec := l.ProcLog("EngineCore_0")
	require.NotNil(t, ec)
	assert.Equal(t, 0, ec.Proc.Rank.DP)
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventNonDefaultArgs, "APIServer"}, step{facts.EventEngineInit, "EngineCore_0"},
		step{facts.EventLoadProgress, "RayWorkerWrapper_1273"}, step{facts.EventLoadBegin, "RayWorkerWrapper_345@10.42.11.243"},
		step{facts.EventLoadEnd, "RayWorkerWrapper_345@10.42.11.243"}, step{facts.EventKVCacheSize, "EngineCore_0"},
		step{facts.EventGraphProgress, "RayWorkerWrapper_1273"}, step{facts.EventGraphEnd, "RayWorkerWrapper_343@10.42.9.224"},
		step{facts.EventInitEngineDone, "EngineCore_0"}, step{facts.EventHTTPStart, "APIServer"}, step{facts.EventReady, "APIServer"})
	require.Len(t, ms, 12)
	assert.Equal(t, 1216.0, facts.Fields(ms[3].Data)["elapsed_s"], "the bar after a tag-only line belongs to that tag's worker")
	assert.Equal(t, 1216.75, facts.Fields(ms[5].Data)["elapsed_s"])
	assert.Equal(t, 4.0, facts.Fields(ms[1].Data)["tensor_parallel_size"])
	assert.Equal(t, 83.0, facts.Fields(ms[7].Data)["total"])
	assert.Equal(t, 141.56, facts.Fields(ms[9].Data)["elapsed_s"])
	assert.Equal(t, "http://0.0.0.0:8081", facts.Fields(ms[10].Data)["url"])
	last := lastEvent(l)
	assert.Equal(t, facts.EventReady, last.Type)
	assert.Equal(t, 329, last.Src.Line)
	// Ray's dedup suffix is taken off and counted.
	var repeated int
	for _, e := range l.Events {
		if e.Repeated > 0 {
			repeated++
		}
	}
	assert.Positive(t, repeated)
	ar := l.EventsOf(facts.EventCustomAllReduce)
	require.Len(t, ar, 2)
	assert.Zero(t, ar[0].Repeated)
	assert.Equal(t, 82, ar[1].Src.Line)
	assert.Equal(t, 3, ar[1].Repeated)
	assert.Equal(t, "this process group spans across nodes", facts.Fields(ar[1].Data)["reason"], "the dedup suffix is not part of the reason")
	assert.Equal(t, facts.Clock{NoZone: true, Latest: wall("2025-09-10 23:50:25")}, out.Clocks[l.Path])
}

func TestCorpusVLLMWSL(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-qwen2vl-2b-wsl/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.10.2", l.Version)
	assert.Equal(t, []string{"", "APIServer", "EngineCore_DP0"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventNonDefaultArgs, "APIServer"}, step{facts.EventEngineInit, "EngineCore_DP0"},
		step{facts.EventRankAssigned, "EngineCore_DP0"}, step{facts.EventLoadBegin, "EngineCore_DP0"}, step{facts.EventAttentionBackend, "EngineCore_DP0"},
		step{facts.EventLoadProgress, "EngineCore_DP0"}, step{facts.EventLoadEnd, "EngineCore_DP0"}, step{facts.EventLoadEnd, "EngineCore_DP0"},
		step{facts.EventTorchCompile, "EngineCore_DP0"}, step{facts.EventTorchCompileEnd, "EngineCore_DP0"}, step{facts.EventAvailableKV, "EngineCore_DP0"},
		step{facts.EventKVCacheSize, "EngineCore_DP0"}, step{facts.EventMaxConcurrency, "EngineCore_DP0"}, step{facts.EventGraphProgress, "EngineCore_DP0"},
		step{facts.EventGraphEnd, "EngineCore_DP0"}, step{facts.EventMemoryProfile, "EngineCore_DP0"}, step{facts.EventInitEngineDone, "EngineCore_DP0"},
		step{facts.EventHTTPStart, "APIServer"}, step{facts.EventReady, "APIServer"})
	require.Len(t, ms, 20)
	assert.Equal(t, 30, ms[6].Src.Line, "the bar sits after the tag on the same line, behind a \\r")
	assert.Equal(t, 5.97, facts.Fields(ms[11].Data)["gib"])
	assert.Equal(t, 4.15, facts.Fields(ms[16].Data)["weights_gib"])
	last := lastEvent(l)
	assert.Equal(t, facts.EventRequest, last.Type)
	assert.Equal(t, 175, last.Src.Line)
	s := findSeries(l, facts.EventStatThroughput, "")
	require.NotNil(t, s)
	assert.Equal(t, "APIServer", s.Proc.Name)
	assert.Equal(t, 44, s.Count)
	assert.Equal(t, 334.9, s.First.Values["prompt_throughput"])
}

func TestCorpusVLLMWorkerDeath(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-qwen3moe-tp2-runtime-workerdeath/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.13.0", l.Version)
	assert.Equal(t, []string{"", "APIServer", "EngineCore_DP0", "Worker_TP0", "Worker_TP1"}, procNames(l))
	assert.Equal(t, 1, l.ProcLog("Worker_TP1").Proc.Rank.TP)
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventEngineInit, "EngineCore_DP0"}, step{facts.EventDistInitBegin, ""},
		step{facts.EventNCCLVersion, ""}, step{facts.EventCustomAllReduce, ""}, step{facts.EventRankAssigned, ""},
		step{facts.EventLoadBegin, "Worker_TP0"}, step{facts.EventAttentionBackend, "Worker_TP0"}, step{facts.EventLoadEnd, "Worker_TP0"},
		step{facts.EventKVCacheSize, "EngineCore_DP0"}, step{facts.EventGraphEnd, "Worker_TP0"}, step{facts.EventInitEngineDone, "EngineCore_DP0"},
		step{facts.EventHTTPStart, "APIServer"}, step{facts.EventReady, "APIServer"}, step{facts.EventWorkerDied, "EngineCore_DP0"},
		step{facts.EventEngineDead, "EngineCore_DP0"}, step{facts.EventTraceback, "EngineCore_DP0"}, step{facts.EventTraceback, "APIServer"},
		step{facts.EventEngineDead, "APIServer"}, step{facts.EventShutdown, "APIServer"})
	require.Len(t, ms, 20)
	assert.Equal(t, 1737, ms[14].Src.Line)
	assert.Equal(t, "VllmWorker-0", facts.Fields(ms[14].Data)["worker"])
	fatal := ms[15]
	assert.Equal(t, 1738, fatal.Src.Line)
	require.NotNil(t, fatal.Traceback, "the logged traceback belongs to the fatal-error record")
	assert.Equal(t, "RuntimeError", fatal.Traceback.ExcType)
	assert.Equal(t, "Executor failed.", fatal.Traceback.ExcMsg)
	assert.Equal(t, 1748, fatal.EndLine)
	assert.Equal(t, "vllm.v1.engine.exceptions.EngineDeadError", ms[17].Traceback.ExcType)
	last := lastEvent(l)
	assert.Equal(t, facts.EventPythonWarning, last.Type)
	assert.Equal(t, 1780, last.Src.Line)
	req := findSeries(l, facts.EventRequest, "")
	require.NotNil(t, req)
	assert.Equal(t, 1562, req.Count, "every access line is counted")
	assert.Equal(t, maxReqEvents, count(l, facts.EventRequest), "only the first are events")
	st := findSeries(l, facts.EventStatThroughput, "")
	require.NotNil(t, st)
	assert.Equal(t, 79, st.Count)
	// The raw "Process EngineCore_DP0:" traceback repeats the tag, not the header.
	tbs := l.EventsOf(facts.EventTraceback)
	require.Len(t, tbs, 3)
	assert.Equal(t, 1750, tbs[1].Src.Line)
	assert.Equal(t, 1765, tbs[1].EndLine)
	assert.Len(t, tbs[1].Traceback.Frames, 7)
}

func TestCorpusVLLMLlama0171(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-llama31-8b-v0171/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.17.1", l.Version, "from the ASCII banner")
	assert.Equal(t, []string{"", "APIServer", "EngineCore_DP0"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventNonDefaultArgs, "APIServer"}, step{facts.EventEngineInit, "EngineCore_DP0"},
		step{facts.EventDistInitBegin, "EngineCore_DP0"}, step{facts.EventRankAssigned, "EngineCore_DP0"}, step{facts.EventLoadBegin, "EngineCore_DP0"},
		step{facts.EventAttentionBackend, "EngineCore_DP0"}, step{facts.EventLoadProgress, "EngineCore_DP0"}, step{facts.EventLoadEnd, "EngineCore_DP0"},
		step{facts.EventTorchCompile, "EngineCore_DP0"}, step{facts.EventTorchCompileEnd, "EngineCore_DP0"}, step{facts.EventKVCacheSize, "EngineCore_DP0"},
		step{facts.EventGraphProgress, "EngineCore_DP0"}, step{facts.EventGraphProgress, "EngineCore_DP0"}, step{facts.EventGraphEnd, "EngineCore_DP0"},
		step{facts.EventInitEngineDone, "EngineCore_DP0"}, step{facts.EventWarmup, "APIServer"}, step{facts.EventHTTPStart, "APIServer"},
		step{facts.EventReady, "APIServer"}, step{facts.EventTorchLog, ""}, step{facts.EventShutdown, "APIServer"})
	require.Len(t, ms, 21)
	assert.Equal(t, 3, ms[0].Src.Line)
	assert.Equal(t, "Capturing CUDA graphs (decode, FULL)", facts.Fields(ms[13].Data)["desc"])
	assert.Equal(t, wall("2000-05-16 21:40:38"), ms[19].Time.Truncate(time.Second), "c10d stamp with an unpadded month")
	last := lastEvent(l)
	assert.Equal(t, facts.EventShutdown, last.Type)
	assert.Equal(t, 136, last.Src.Line)
	// The SageMaker lines have a format of their own: counted, not events.
	assert.Equal(t, 106, l.ProcLog("APIServer").Lines)
}

func TestCorpusVLLMSparkNVFP4(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-spark-laguna-nvfp4/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, "0.25.1", l.Version)
	assert.Equal(t, []string{"", "APIServer", "EngineCore"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventEngineInit, "EngineCore"}, step{facts.EventLoadBegin, "EngineCore"},
		step{facts.EventLoadProgress, "EngineCore"}, step{facts.EventLoadEnd, "EngineCore"}, step{facts.EventLoadEnd, "EngineCore"},
		step{facts.EventTorchCompileEnd, "EngineCore"}, step{facts.EventAvailableKV, "EngineCore"}, step{facts.EventKVCacheSize, "EngineCore"},
		step{facts.EventJITBegin, "EngineCore"}, step{facts.EventJITEnd, "EngineCore"}, step{facts.EventGraphEnd, "EngineCore"},
		step{facts.EventInitEngineDone, "EngineCore"}, step{facts.EventHTTPStart, "APIServer"}, step{facts.EventReady, "APIServer"},
		step{facts.EventShutdown, "EngineCore"}, step{facts.EventTraceback, "APIServer"}, step{facts.EventEngineDead, "APIServer"},
		step{facts.EventShutdown, "APIServer"})
	require.Len(t, ms, 19)
	assert.Equal(t, 570.62, facts.Fields(ms[4].Data)["elapsed_s"])
	assert.Equal(t, 6.97, facts.Fields(ms[7].Data)["gib"])
	assert.Equal(t, 94135.0, facts.Fields(ms[8].Data)["tokens"])
	assert.Equal(t, "flashinfer-autotune", facts.Fields(ms[9].Data)["what"])
	assert.Equal(t, 867.33, facts.Fields(ms[12].Data)["elapsed_s"])
	assert.Equal(t, "http://0.0.0.0:8000", facts.Fields(ms[13].Data)["url"])
	assert.Equal(t, 491, ms[15].Src.Line, "the intentional shutdown comes before the EngineDeadError")
	last := lastEvent(l)
	assert.Equal(t, facts.EventPythonWarning, last.Type)
	assert.Equal(t, 517, last.Src.Line)
	st := findSeries(l, facts.EventStatThroughput, "")
	sd := findSeries(l, facts.EventStatSpecDecode, "")
	require.NotNil(t, st)
	require.NotNil(t, sd)
	assert.Equal(t, 65, st.Count)
	assert.Equal(t, 64, sd.Count)
	assert.Equal(t, 3.62, sd.First.Values["mean_acceptance_length"])
	assert.Equal(t, 17.5, sd.First.Values["acceptance_rate_pct"])
	assert.Equal(t, 0.793, sd.First.Values["acceptance_pos_0"])
	req := findSeries(l, facts.EventRequest, "")
	require.NotNil(t, req)
	assert.Equal(t, 3.0, req.Total("client_error").Sum)
	// The autotuner bars glued to flashinfer's log lines are read as both.
	var tuner int
	for _, b := range l.Bars {
		if b.Desc == "[AutoTuner]: Tuning trtllm::fused_moe::gemm1" {
			tuner++
			assert.Equal(t, 21, b.Total)
		}
	}
	assert.Equal(t, 2, tuner)
}

func TestCorpusVLLMOOMKill(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-spark-laguna-nvfp4-oomkill/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, []string{"", "APIServer", "EngineCore"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventEngineInit, "EngineCore"}, step{facts.EventLoadBegin, "EngineCore"},
		step{facts.EventLoadProgress, "EngineCore"}, step{facts.EventLoadEnd, "EngineCore"}, step{facts.EventLoadEnd, "EngineCore"},
		step{facts.EventLoadEnd, "EngineCore"}, step{facts.EventTorchCompile, "EngineCore"}, step{facts.EventTorchCompileEnd, "EngineCore"})
	require.Len(t, ms, 9)
	assert.Equal(t, 748.400124, facts.Fields(ms[6].Data)["elapsed_s"])
	last := lastEvent(l)
	assert.Equal(t, facts.EventTorchCompileEnd, last.Type)
	assert.Equal(t, 124, last.Src.Line)
	assert.Equal(t, 30.61, facts.Fields(last.Data)["elapsed_s"])
	assert.Zero(t, count(l, facts.EventReady))
	assert.Zero(t, count(l, facts.EventTraceback))
	assert.Zero(t, count(l, facts.EventError))
	assert.Equal(t, wall("2000-08-01 17:49:34"), l.LastTime)
	assert.Equal(t, "START 17:36:20", l.ProcLog("main").LastMsg)
}

func TestCorpusVLLMKVCacheAbort(t *testing.T) {
	out, issues, _ := parseFile(t, full+"vllm-spark-laguna-int4-kvcache-abort/server.log")
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineVLLM, l.Engine)
	assert.Equal(t, []string{"", "APIServer", "EngineCore"}, procNames(l))
	ms := inOrder(t, l,
		step{facts.EventVersion, "APIServer"}, step{facts.EventEngineInit, "EngineCore"}, step{facts.EventLoadBegin, "EngineCore"},
		step{facts.EventWeightsDownload, "EngineCore"}, step{facts.EventLoadProgress, "EngineCore"}, step{facts.EventLoadEnd, "EngineCore"},
		step{facts.EventAvailableKV, "EngineCore"}, step{facts.EventEngineInitFailed, "EngineCore"}, step{facts.EventTraceback, "EngineCore"},
		step{facts.EventKVInsufficient, "EngineCore"}, step{facts.EventTraceback, "APIServer"}, step{facts.EventEngineInitFailed, "APIServer"})
	require.Len(t, ms, 12)
	assert.Equal(t, 2389.512425, facts.Fields(ms[3].Data)["elapsed_s"])
	assert.Equal(t, 8.72, facts.Fields(ms[6].Data)["gib"])
	failed := ms[7]
	assert.Equal(t, 104, failed.Src.Line)
	require.NotNil(t, failed.Traceback)
	assert.Equal(t, "ValueError", failed.Traceback.ExcType)
	kv := ms[9]
	assert.Equal(t, 127, kv.Src.Line)
	assert.Equal(t, 18.35, facts.Fields(kv.Data)["needed_gib"])
	assert.Equal(t, 8.72, facts.Fields(kv.Data)["available_gib"])
	assert.Equal(t, 262144.0, facts.Fields(kv.Data)["max_seq_len"])
	last := lastEvent(l)
	assert.Equal(t, facts.EventEngineInitFailed, last.Type)
	assert.Equal(t, "APIServer", last.Proc.Name)
	assert.Equal(t, 223, last.Src.Line)
	assert.Equal(t, "{}", facts.Fields(last.Data)["failed_procs"])
}

const h200 = "../../fixtures/corpus/"

// The H200 captures parse with no issue at all.
func TestCorpusH200(t *testing.T) {
	for _, p := range []string{"h200-x2/jit-compile", "h200-x2/oom", "h200-x1/torch-compile", "h200-x1/cgroup-oom"} {
		t.Run(p, func(t *testing.T) {
			out, issues, kind := parseFile(t, h200+p+"/server.log")
			assert.Empty(t, issues)
			assert.Equal(t, facts.KindSGLangLog, kind)
			assert.Equal(t, facts.EngineSGLang, out.Logs[0].Engine)
		})
	}
}

func TestCorpusH200JITCompile(t *testing.T) {
	out, _, _ := parseFile(t, h200+"h200-x2/jit-compile/server.log")
	l := out.Logs[0]
	assert.Equal(t, 7, l.Lines)
	steps := l.EventsOf(facts.EventJITProgress)
	require.Len(t, steps, 3, "ninja's [1/3] [2/3] [3/3]")
	assert.Equal(t, "nvcc", facts.Fields(steps[1].Data)["tool"])
	assert.Equal(t, 3.0, facts.Fields(steps[2].Data)["total"])
	assert.True(t, steps[0].Inherited)
	assert.Equal(t, wall("2026-11-30 04:27:13"), steps[0].Time)
	assert.Equal(t, "jit scenario exit 0", l.ProcLog("main").LastMsg)
	assert.Equal(t, "result 2.0", l.ProcLog("TP0").LastMsg)
}

func TestCorpusH200OOM(t *testing.T) {
	out, _, _ := parseFile(t, h200+"h200-x2/oom/server.log")
	l := out.Logs[0]
	tbs := l.EventsOf(facts.EventTraceback)
	require.Len(t, tbs, 2, "printed twice, not chained")
	for _, tb := range tbs {
		assert.Equal(t, "torch.OutOfMemoryError", tb.Traceback.ExcType)
		assert.Zero(t, tb.Traceback.Chained)
		assert.Equal(t, []facts.Frame{{File: "/srv/repro/oom.py", Line: 11, Func: "<module>", Code: `more = torch.empty(int(free * 0.2), dtype=torch.uint8, device="cuda")`}}, tb.Traceback.Frames)
	}
	assert.Equal(t, 4, tbs[0].Src.Line)
	assert.Equal(t, 8, tbs[0].EndLine)
	ooms := l.EventsOf(facts.EventOOM)
	require.Len(t, ooms, 2)
	assert.Equal(t, map[string]any{"kind": "cuda", "tried_gib": 27.86, "gpu": 0.0, "total_gib": 139.80, "free_gib": 6.96,
		"in_use_gib": 132.83, "allocated_gib": 132.32, "reserved_unallocated_gib": 0.0}, facts.Fields(ooms[0].Data))
	assert.Equal(t, 8, ooms[0].Src.Line)
	assert.Equal(t, "oom scenario exit 1", l.ProcLog("main").LastMsg)
}

func TestCorpusH200TorchCompile(t *testing.T) {
	out, _, _ := parseFile(t, h200+"h200-x1/torch-compile/server.log")
	l := out.Logs[0]
	assert.Equal(t, 315, l.Lines)
	// glog lines repeat their header on every traceback line: grouped.
	tbs := l.EventsOf(facts.EventTraceback)
	require.Len(t, tbs, 6)
	// The record starts with "Exception ... for benchmark choice" (line 25),
	// whose header the traceback lines repeat.
	assert.Equal(t, 25, tbs[0].Src.Line)
	assert.Equal(t, 40, tbs[0].EndLine)
	intro := l.EventsOf(facts.EventTorchLog)[3]
	assert.Equal(t, 25, intro.Src.Line)
	assert.Same(t, tbs[0].Traceback, intro.Traceback)
	assert.Equal(t, "RuntimeError", tbs[0].Traceback.ExcType)
	assert.Contains(t, tbs[0].Traceback.ExcMsg, "No valid triton configs. OutOfMemoryError: out of resource: triton_mm")
	assert.Zero(t, count(l, facts.EventOOM), "out of resource (shared memory) is not a CUDA OOM")
	// The year-less glog stamps take the year of the SGLang lines.
	assert.Equal(t, wall("2026-11-30 04:55:09"), tbs[0].Time.Truncate(time.Second))
	assert.Equal(t, facts.Clock{NoZone: true, Latest: time.Date(2026, 11, 30, 4, 57, 23, 509000000, time.UTC)}, out.Clocks[l.Path])
	assert.Equal(t, "compile scenario exit 124", l.ProcLog("main").LastMsg)
	assert.Equal(t, 2, count(l, facts.EventPythonWarning))
}

func TestCorpusH200CgroupOOM(t *testing.T) {
	out, _, _ := parseFile(t, h200+"h200-x1/cgroup-oom/server.log")
	l := out.Logs[0]
	assert.Equal(t, []string{"", "TP0"}, procNames(l))
	assert.Equal(t, 7, l.ProcLog("TP0").Lines)
	assert.Equal(t, wall("2026-11-30 04:57:31"), l.ProcLog("TP0").LastTime)
	assert.Equal(t, "hog exit 137", l.ProcLog("main").LastMsg)
	assert.Equal(t, 8, l.LastSrc.Line)
	assert.Empty(t, l.Events)
}
