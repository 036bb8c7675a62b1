package serverlog

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseLog(t *testing.T, kind facts.Kind, lines ...string) (*facts.Facts, *facts.Log, []facts.Issue) {
	t.Helper()
	out, issues := parseText("t.log", strings.Join(lines, "\n")+"\n", kind)
	require.Len(t, out.Logs, 1)
	return out, out.Logs[0], issues
}

func TestTracebackChainedBare(t *testing.T) {
	_, l, issues := parseLog(t, facts.KindSGLangLog,
		"[2025-02-22 12:19:24 TP3] Scheduler hit an exception: Traceback (most recent call last):",
		`  File "/sgl/python/sglang/srt/managers/scheduler.py", line 100, in run`,
		"    self.step()",
		"KeyError: 'x'",
		"",
		"During handling of the above exception, another exception occurred:",
		"",
		"Traceback (most recent call last):",
		`  File "/sgl/a.py", line 1, in f`,
		"    g()",
		`  File "/sgl/b.py", line 2, in g`,
		"    raise ValueError('y')",
		"ValueError: y",
		"",
		"The above exception was the direct cause of the following exception:",
		"",
		"Traceback (most recent call last):",
		`  File "/sgl/c.py", line 3, in h`,
		"    ^^^^^^",
		"RuntimeError: CUDA error: an illegal memory access was encountered",
		"[2025-02-22 12:19:24] Received sigquit from a child process. It usually means the child failed.")
	assert.Empty(t, issues)
	crash := firstEvent(l, facts.EventSchedulerCrash)
	require.NotNil(t, crash)
	tb := firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	assert.Equal(t, "TP3", tb.Proc.Name, "the rank of the line that introduced it")
	assert.Equal(t, 1, tb.Src.Line)
	assert.Equal(t, 20, tb.EndLine)
	assert.Equal(t, "RuntimeError", tb.Traceback.ExcType)
	assert.Equal(t, "CUDA error: an illegal memory access was encountered", tb.Traceback.ExcMsg)
	assert.Equal(t, 2, tb.Traceback.Chained)
	assert.Equal(t, "KeyError", facts.Fields(tb.Data)["first_exc_type"])
	assert.Equal(t, "'x'", facts.Fields(tb.Data)["first_exc_msg"])
	assert.Equal(t, []facts.Frame{{File: "/sgl/c.py", Line: 3, Func: "h"}}, tb.Traceback.Frames, "frames of the last part")
	assert.Same(t, tb.Traceback, crash.Traceback)
	assert.Equal(t, 20, crash.EndLine)
	assert.Equal(t, facts.LevelError, tb.Level)
	assert.Equal(t, "RuntimeError: CUDA error: an illegal memory access was encountered", tb.Msg)
	assert.Equal(t, wall("2025-02-22 12:19:24"), tb.Time)
	// The traceback's lines are TP3's; the sigquit ends it.
	assert.Equal(t, 16, l.ProcLog("TP3").Lines, "20 lines minus the 4 blank ones")
	assert.Equal(t, facts.EventSigquit, lastEvent(l).Type)
}

func TestTracebackKeepsOuterAndInnerFrames(t *testing.T) {
	lines := []string{"Traceback (most recent call last):"}
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf(`  File "/x/f%d.py", line %d, in f%d`, i, i, i), "    pass")
	}
	lines = append(lines, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.10 GiB of which 1.19 GiB is free.")
	_, l, _ := parseLog(t, facts.KindServerLog, lines...)
	tb := firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	require.Len(t, tb.Traceback.Frames, facts.MaxFrames)
	assert.Equal(t, "/x/f1.py", tb.Traceback.Frames[0].File, "the outermost frames say what the engine was doing")
	assert.Equal(t, "/x/f8.py", tb.Traceback.Frames[facts.MaxOuterFrames-1].File)
	assert.Equal(t, "/x/f15.py", tb.Traceback.Frames[facts.MaxOuterFrames].File, "then the innermost ones")
	assert.Equal(t, "/x/f30.py", tb.Traceback.Frames[facts.MaxFrames-1].File)
	assert.Equal(t, 6, tb.Traceback.Elided, "30 frames, 24 kept")
	oom := firstEvent(l, facts.EventOOM)
	require.NotNil(t, oom, "the exception also means an OOM")
	assert.Equal(t, 62, oom.Src.Line)
	assert.Equal(t, 2.0, facts.Fields(oom.Data)["tried_gib"])
	assert.Equal(t, 3.0, facts.Fields(oom.Data)["gpu"])
	assert.Equal(t, 79.10, facts.Fields(oom.Data)["total_gib"])
	assert.Equal(t, 1.19, facts.Fields(oom.Data)["free_gib"])
	assert.Equal(t, "", tb.Proc.Name, "a bare traceback nobody introduced is the main process's")
}

func TestTracebackVLLMInterleaved(t *testing.T) {
	_, l, _ := parseLog(t, facts.KindVLLMLog,
		"(EngineCore_DP0 pid=7) ERROR 02-03 22:43:35 [core.py:968] EngineCore failed to start.",
		"(EngineCore_DP0 pid=7) ERROR 02-03 22:43:35 [core.py:968] Traceback (most recent call last):",
		`(EngineCore_DP0 pid=7) ERROR 02-03 22:43:35 [core.py:968]   File "/v/core.py", line 5, in run`,
		"(APIServer pid=1) INFO 02-03 22:43:35 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 3 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%",
		"(EngineCore_DP0 pid=7) ERROR 02-03 22:43:35 [core.py:968]     self.x()",
		"(EngineCore_DP0 pid=7) ERROR 02-03 22:43:35 [core.py:968] ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration.",
		"(EngineCore_DP0 pid=7) ERROR 02-03 22:43:35 [core.py:968] Reason: ['head_size not supported']",
		"(EngineCore_DP0 pid=7) INFO 02-03 22:43:36 [core.py:100] Shutting down.",
	)
	failed := firstEvent(l, facts.EventEngineInitFailed)
	require.NotNil(t, failed)
	require.NotNil(t, failed.Traceback, "the record's traceback belongs to its first line")
	tb := firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	assert.Equal(t, "EngineCore_DP0", tb.Proc.Name)
	assert.Equal(t, 1, tb.Src.Line)
	assert.Equal(t, 7, tb.EndLine)
	assert.Equal(t, "ValueError", tb.Traceback.ExcType)
	assert.Equal(t, "Selected backend AttentionBackendEnum.FLASHINFER is not valid for this configuration.\nReason: ['head_size not supported']", tb.Traceback.ExcMsg, "the message continues on lines that repeat the header")
	assert.Equal(t, []facts.Frame{{File: "/v/core.py", Line: 5, Func: "run", Code: "self.x()"}}, tb.Traceback.Frames)
	s := findSeries(l, facts.EventStatThroughput, "")
	require.NotNil(t, s, "the API server's line in between is read as usual")
	assert.Equal(t, 3.0, s.First.Values["waiting"])
	assert.Equal(t, 8, l.ProcLog("EngineCore_DP0").LastSrc.Line)
}

func TestTracebackIncompleteAtEOF(t *testing.T) {
	_, l, issues := parseLog(t, facts.KindSGLangLog,
		"[2025-02-22 12:19:24 TP0] Scheduler hit an exception: Traceback (most recent call last):",
		`  File "/sgl/a.py", line 1, in f`)
	assert.Empty(t, issues)
	tb := firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	assert.Equal(t, true, facts.Fields(tb.Data)["incomplete"])
	assert.Equal(t, 2, tb.EndLine)
	assert.Equal(t, []facts.Frame{{File: "/sgl/a.py", Line: 1, Func: "f"}}, tb.Traceback.Frames)
}

func TestBarRewrites(t *testing.T) {
	_, l, _ := parseLog(t, facts.KindSGLangLog,
		"[2026-05-24 00:52:51] Load weight begin. avail mem=275.75 GB",
		"\rLoading safetensors checkpoint shards:   0% Completed | 0/3 [00:00<?, ?it/s]\rLoading safetensors checkpoint shards:  33% Completed | 1/3 [00:01<00:02,  1.0s/it]\rLoading safetensors checkpoint shards: 100% Completed | 3/3 [00:03<00:00,  1.0s/it]",
		"Loading safetensors checkpoint shards: 100% Completed | 3/3 [00:03<00:00,  1.0s/it]",
		"",
		"[2026-05-24 00:52:54] Capture cuda graph begin. This can take up to several minutes. avail mem=24.16 GB",
		"\r  0%|          | 0/52 [00:00<?, ?it/s]\rCapturing batches (bs=512 avail_mem=24.00 GB):   2%|▏         | 1/52 [00:01<00:51,  1.0s/it]",
		"Capturing batches (bs=256 avail_mem=23.90 GB):   4%|▍         | 2/52 [00:02<00:50,  1.0s/it][2026-05-24 00:52:57] Capture cuda graph end. Time elapsed: 3.00 s. mem usage=0.60 GB. avail mem=23.56 GB.",
		"\rLoading safetensors checkpoint shards:   0% Completed | 0/3 [00:00<?, ?it/s]",
	)
	require.Len(t, l.Bars, 3)
	w := l.Bars[0]
	assert.Equal(t, "Loading safetensors checkpoint shards", w.Desc)
	assert.Equal(t, 3, w.N)
	assert.Equal(t, 3, w.Total)
	assert.Equal(t, 3.0, w.Elapsed)
	assert.Equal(t, 4, w.Updates, "three \\r states and the repeated 100% line")
	assert.Equal(t, 2, w.FirstSrc.Line)
	assert.Equal(t, 3, w.Src.Line)
	assert.Equal(t, wall("2026-05-24 00:52:51"), w.Time, "a bar inherits the last stamp")
	c := l.Bars[1]
	assert.Equal(t, "Capturing batches", c.Desc, "the first state had no description yet")
	assert.Equal(t, "bs=256 avail_mem=23.90 GB", c.Detail)
	assert.Equal(t, 2, c.N)
	assert.Equal(t, 52, c.Total)
	assert.Equal(t, 3, c.Updates)
	assert.Equal(t, 6, c.FirstSrc.Line)
	// A restarted bar of the same description is a new bar.
	assert.Equal(t, 0, l.Bars[2].N)
	assert.Equal(t, 8, l.Bars[2].FirstSrc.Line)
	// The line glued after the bar is read.
	end := firstEvent(l, facts.EventGraphEnd)
	require.NotNil(t, end)
	assert.Equal(t, 7, end.Src.Line)
	assert.Equal(t, 3.0, facts.Fields(end.Data)["elapsed_s"])
	progress := l.EventsOf(facts.EventLoadProgress)
	require.Len(t, progress, 2)
	assert.Equal(t, true, facts.Fields(progress[0].Data)["done"])
	assert.Equal(t, false, facts.Fields(progress[1].Data)["done"])
	gp := firstEvent(l, facts.EventGraphProgress)
	require.NotNil(t, gp)
	assert.Equal(t, "Capturing batches: 2/52", gp.Msg)
	assert.True(t, gp.Inherited)
	assert.Equal(t, wall("2026-05-24 00:52:54"), gp.Time)
}

func TestTagOnlyLineOwnsTheBar(t *testing.T) {
	_, l, _ := parseLog(t, facts.KindVLLMLog,
		"(EngineCore_0 pid=1159) (RayWorkerWrapper pid=1273) ",
		"Loading safetensors checkpoint shards:   7% Completed | 1/15 [00:00<00:08,  1.56it/s]",
		"(EngineCore_0 pid=1159) (RayWorkerWrapper pid=1273) ",
		"Loading safetensors checkpoint shards: 100% Completed | 15/15 [20:16<00:00, 87.33s/it]",
		"Loading safetensors checkpoint shards: 100% Completed | 15/15 [20:16<00:00, 81.11s/it]",
		"(EngineCore_0 pid=1159) INFO 09-10 23:48:39 [kv_cache_utils.py:1013] GPU KV cache size: 2,640,144 tokens",
		"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|          | 0/83 [00:00<?, ?it/s]",
	)
	require.Len(t, l.Bars, 2)
	assert.Equal(t, "RayWorkerWrapper_1273", l.Bars[0].Proc.Name)
	assert.Equal(t, 15, l.Bars[0].N)
	assert.Equal(t, 1216.0, l.Bars[0].Elapsed)
	assert.Equal(t, "", l.Bars[1].Proc.Name, "after a log line the tag no longer applies")
	assert.Equal(t, 5, l.ProcLog("RayWorkerWrapper_1273").Lines, "two tag lines and the three bar lines after them")
}

func TestClockJumps(t *testing.T) {
	_, l, issues := parseLog(t, facts.KindVLLMLog,
		"(APIServer pid=1) INFO 05-19 10:13:11 [loggers.py:271] a",
		"(EngineCore pid=2) INFO 05-19 10:00:00 [core.py:1] another process's clock is its own",
		"(APIServer pid=1) INFO 05-19 10:12:00 [loggers.py:271] one minute back: interleaving",
		"(APIServer pid=1) INFO 05-19 09:50:00 [loggers.py:271] twenty-two minutes back",
		"(APIServer pid=1) INFO 05-19 09:51:00 [loggers.py:271] forward again",
		"(APIServer pid=1) INFO 05-19 08:00:00 [loggers.py:271] back again",
	)
	require.Len(t, issues, 2)
	assert.Equal(t, facts.IssueClockJump, issues[0].Kind)
	assert.Equal(t, 4, issues[0].Src.Line)
	assert.Equal(t, "the clock of APIServer goes back 22m0s, from 2000-05-19 10:12:00 to 2000-05-19 09:50:00", issues[0].Detail)
	assert.Equal(t, 6, issues[1].Src.Line)
	assert.Equal(t, wall("2000-05-19 08:00:00"), l.FirstTime)
	assert.Equal(t, wall("2000-05-19 10:13:11"), l.LastTime)
}

func TestYearRollover(t *testing.T) {
	out, l, issues := parseLog(t, facts.KindVLLMLog,
		"INFO 12-31 23:59:50 [loggers.py:271] last of the year",
		"INFO 01-01 00:00:10 [loggers.py:271] first of the next",
	)
	assert.Empty(t, issues)
	require.Len(t, l.Procs, 1)
	assert.Equal(t, wall("2000-12-31 23:59:50"), l.Procs[0].FirstTime)
	assert.Equal(t, wall("2001-01-01 00:00:10"), l.Procs[0].LastTime)
	assert.Equal(t, facts.Clock{NoZone: true, NoYear: true, Latest: wall("2001-01-01 00:00:10")}, out.Clocks["t.log"])
}

func TestYearFromDatedNeighbours(t *testing.T) {
	// A vLLM line before the first SGLang line takes that line's year, and a
	// December line next to a January one takes the year before.
	out, l, _ := parseLog(t, facts.KindSGLangLog,
		"INFO 12-31 23:59:58 __init__.py:190] Automatically detected platform cuda.",
		"[2026-01-01 00:00:02] server_args=ServerArgs(model_path='m')",
		"INFO 01-01 00:00:03 __init__.py:190] Automatically detected platform cuda.",
	)
	assert.Equal(t, wall("2025-12-31 23:59:58"), l.FirstTime)
	assert.Equal(t, wall("2026-01-01 00:00:03"), l.LastTime)
	assert.Equal(t, facts.Clock{NoZone: true, Latest: wall("2026-01-01 00:00:03")}, out.Clocks["t.log"])
}

func TestZonedWrapper(t *testing.T) {
	out, l, issues := parseLog(t, facts.KindVLLMLog,
		"2026-05-12T08:01:39.331095044Z (APIServer pid=1) INFO 05-12 10:01:39 [api_server.py:1] vLLM API server version 0.20.0",
		"(APIServer pid=1) INFO 05-12 10:01:45 [api_server.py:2] Starting vLLM server on http://0.0.0.0:8000",
		"2026-05-12T08:02:00+00:00 (APIServer pid=1) INFO:     Application startup complete.",
	)
	assert.Empty(t, issues)
	v := firstEvent(l, facts.EventVersion)
	require.NotNil(t, v)
	assert.Equal(t, time.Date(2026, 5, 12, 8, 1, 39, 331095044, time.UTC), v.Time, "the wrapper's instant")
	h := firstEvent(l, facts.EventHTTPStart)
	require.NotNil(t, h)
	assert.Equal(t, wall("2026-05-12 08:01:45"), h.Time, "a line without the wrapper: its own clock minus the learned two hours")
	assert.False(t, out.Clocks["t.log"].NoZone)
	assert.False(t, out.Clocks["t.log"].NoYear)
	assert.Contains(t, out.Assumptions, "t.log: lines without the collector's zoned stamp were placed by their own clock, which runs 2h0m0s from it")
}

func TestJournaldWrapper(t *testing.T) {
	_, l, _ := parseLog(t, facts.KindVLLMLog,
		"2025-08-19T18:34:30+0200 gpu1 vllm[8707]: INFO 08-19 18:34:30 [api_server.py:1880] vLLM API server version 0.10.1",
		"Aug 19 18:34:31 gpu1 vllm[8707]: (APIServer pid=8707) INFO:     Application startup complete.",
	)
	v := firstEvent(l, facts.EventVersion)
	require.NotNil(t, v)
	assert.Equal(t, "0.10.1", facts.Fields(v.Data)["version"])
	assert.Equal(t, wall("2025-08-19 16:34:30"), v.Time)
	r := firstEvent(l, facts.EventReady)
	require.NotNil(t, r)
	assert.Equal(t, "APIServer", r.Proc.Name)
}

func TestSGLangTimeOnlyStamps(t *testing.T) {
	out, l, issues := parseLog(t, facts.KindSGLangLog,
		"[23:59:50 TP0] Init torch distributed begin.",
		"[00:00:20 TP0] Load weight begin. avail mem=70.00 GB",
	)
	assert.Empty(t, issues)
	ev := l.EventsOf(facts.EventDistInitBegin, facts.EventLoadBegin)
	require.Len(t, ev, 2)
	assert.Equal(t, 30*time.Second, ev[1].Time.Sub(ev[0].Time), "midnight passes")
	assert.True(t, out.Clocks["t.log"].NoYear)
	require.Len(t, out.Assumptions, 1)
	assert.Contains(t, out.Assumptions[0], "carry no date")
	assert.NotContains(t, out.Assumptions[0], "2000", "no placeholder year (issue 18, item 8)")
}

func TestCRLFAndInvalidUTF8(t *testing.T) {
	out, issues := parseText("t.log", "[2026-05-24 00:52:50] Init torch distributed begin.\r\n[2026-05-24 00:52:51] Load weight begin. avail mem=1.00 GB \xff\xfe\r\n", facts.KindSGLangLog)
	assert.Empty(t, issues)
	l := out.Logs[0]
	lb := firstEvent(l, facts.EventLoadBegin)
	require.NotNil(t, lb)
	assert.Equal(t, 1.0, facts.Fields(lb.Data)["avail_mem_gb"])
	assert.True(t, utf8.ValidString(lb.Msg))
	assert.Equal(t, "Load weight begin. avail mem=1.00 GB \uFFFD", lb.Msg, "a run of invalid bytes becomes one replacement character")
	assert.True(t, utf8.ValidString(l.Procs[0].LastMsg))
	assert.Equal(t, 2, l.Lines)
}

func TestLongLineIsCut(t *testing.T) {
	long := "[2025-09-11 10:24:10] server_args=ServerArgs(model_path='m', api_key='sk-secret', " + strings.Repeat("x=1, ", 300000) + "tp_size=8)"
	var issues []facts.Issue
	in := textio.NewInput("t.log", strings.NewReader(long+"\n[2025-09-11 10:24:20 TP0] Init torch distributed begin.\n"), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, facts.KindSGLangLog, out)
	require.Len(t, issues, 1)
	assert.Equal(t, facts.IssueLineTooLong, issues[0].Kind)
	l := out.Logs[0]
	sa := firstEvent(l, facts.EventServerArgs)
	require.NotNil(t, sa, "the part kept is read")
	assert.Equal(t, "m", facts.Fields(sa.Data)["model_path"])
	assert.Equal(t, "<set>", facts.Fields(sa.Data)["api_key"])
	assert.NotContains(t, sa.Msg, "sk-secret")
	assert.NotNil(t, firstEvent(l, facts.EventDistInitBegin))
	assert.Equal(t, 2, l.LastSrc.Line)
}

func TestEventsBounded(t *testing.T) {
	defer func(n int) { maxEvents = n }(maxEvents)
	maxEvents = 10
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, fmt.Sprintf("[2026-05-24 00:%02d:%02d TP0] Load weight begin. avail mem=%d.00 GB", i/60, i%60, i))
	}
	_, l, _ := parseLog(t, facts.KindSGLangLog, lines...)
	require.Len(t, l.Events, 10)
	assert.Equal(t, 90, l.DroppedEvents)
	var got []int
	for _, e := range l.Events {
		got = append(got, e.Src.Line)
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5, 96, 97, 98, 99, 100}, got, "the first half and the last half")
	assert.Equal(t, 100, l.ProcLog("TP0").Lines, "lines are counted whatever is dropped")
}

func TestSecretsAreNotKept(t *testing.T) {
	out, l, _ := parseLog(t, facts.KindVLLMLog,
		"INFO 05-12 02:45:15 [api_server.py:1044] args: Namespace(model_tag='m', api_key='token-abc', hf_token='hf_abcdef', allow_credentials=False, tokenizer='t', max_num_batched_tokens=2048, ssl_keyfile=None)",
		"[2026-05-24 00:52:40] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', api_key=None, admin_api_key='admin-secret', tp_size=1)",
	)
	ev := firstEvent(l, facts.EventNonDefaultArgs)
	require.NotNil(t, ev)
	assert.Equal(t, "<set>", facts.Fields(ev.Data)["api_key"])
	assert.Equal(t, "<set>", facts.Fields(ev.Data)["hf_token"])
	assert.Equal(t, false, facts.Fields(ev.Data)["allow_credentials"], "a flag is not a secret")
	assert.Equal(t, "t", facts.Fields(ev.Data)["tokenizer"], "tokenizer is not a token")
	assert.Equal(t, 2048.0, facts.Fields(ev.Data)["max_num_batched_tokens"])
	assert.NotContains(t, facts.Fields(ev.Data), "ssl_keyfile", "None is absent from fields")
	sa := firstEvent(l, facts.EventServerArgs)
	require.NotNil(t, sa)
	assert.Equal(t, false, facts.Fields(sa.Data)["api_key"], "None: no API key")
	assert.Equal(t, "<set>", facts.Fields(sa.Data)["admin_api_key"])
	for _, s := range out.Settings {
		assert.NotContains(t, s.Value, "token-abc")
		assert.NotContains(t, s.Value, "hf_abcdef")
		assert.NotContains(t, s.Value, "admin-secret")
		if s.Key == "ssl_keyfile" {
			assert.Equal(t, "None", s.Value, "the setting keeps None as printed")
		}
	}
	for _, e := range l.Events {
		assert.NotContains(t, e.Msg, "token-abc")
		assert.NotContains(t, e.Msg, "admin-secret")
	}
	assert.Equal(t, "args: <7 settings>", ev.Msg)
}

func TestLevelInference(t *testing.T) {
	_, l, _ := parseLog(t, facts.KindSGLangLog,
		"[2026-02-26 05:20:19 TP0] Failed to initialize QuickAllReduce: name 'amdsmi_shut_down' is not defined",
		"[2026-02-26 05:20:19 TP0] Load weight begin. avail mem=1.00 GB",
		"[2026-02-26 05:20:19 TP0] RuntimeError: something broke",
		"[2026-02-26 05:20:19 TP0] Capture cuda graph begin. Failed to reserve avail mem=1.00 GB",
	)
	assert.Len(t, l.Events, 3, "a benign 'Failed' line is not an error event")
	assert.Equal(t, facts.LevelInfo, l.Events[0].Level)
	assert.Equal(t, facts.EventTraceback, l.Events[1].Type, "an exception line is a failure of its own")
	assert.Equal(t, "RuntimeError", l.Events[1].Traceback.ExcType)
	assert.Equal(t, facts.LevelError, l.Events[1].Level)
	assert.Equal(t, facts.LevelWarning, l.Events[2].Level, "words of failure make an unlevelled event a warning")
}

func TestPlainPythonServerLog(t *testing.T) {
	data := "Starting my server\nTraceback (most recent call last):\n  File \"/srv/app.py\", line 3, in <module>\n    main()\nRuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error\n"
	kind, score := Sniff("app.log", []byte(data))
	assert.Equal(t, facts.KindServerLog, kind)
	assert.GreaterOrEqual(t, score, 30)
	out, issues := parseText("app.log", data, kind)
	assert.Empty(t, issues)
	l := out.Logs[0]
	assert.Equal(t, facts.EngineUnknown, l.Engine)
	tb := firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	assert.Equal(t, "RuntimeError", tb.Traceback.ExcType)
	assert.Empty(t, out.Clocks)
	assert.Equal(t, 5, l.Lines)
}

func TestGarbageIsHarmless(t *testing.T) {
	for _, s := range []string{
		"\x00\x01\x02\x03\n\xff\xfe\n",
		"[2025-99-99 99:99:99 TP0] x\n",
		"INFO 13-45 25:61:61 [a.py:1] x\n",
		"(APIServer pid=) INFO\n(pid=1\n((((((\n",
		"Traceback (most recent call last):\nTraceback (most recent call last):\n",
		"Capturing batches (bs=1): 100%|| 1/0 [\n",
		"  0%|          | 99999999999999999999/1 [00:00<?, ?it/s]\n",
		"server_args=ServerArgs(a='\n",
		"non-default args: {'a': [1, {'b': (2,\n",
		"Decode batch, #running-req: , : , ,: 1e999999,\n",
		"\r\r\r\r\n",
		"\x1b[\x1b[31\x1b",
	} {
		out, _ := parseText("g.log", s, facts.KindSGLangLog)
		require.Len(t, out.Logs, 1, "%q", s)
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		name, head string
		kind       facts.Kind
		min        int
	}{
		{"sglang.log", "[2025-03-08 12:29:11 TP3] Init torch distributed begin.\n", facts.KindSGLangLog, 70},
		{"server.log", "nohup: ignoring input\n/x/launch_server.py:56: UserWarning: old\n  warnings.warn(\n[2026-08-01 23:37:40] server_args=ServerArgs(model_path='m')\n", facts.KindSGLangLog, 90},
		{"out.txt", "python3.12 -m sglang.launch_server --model x\nINFO 03-07 12:29:02 __init__.py:190] Automatically detected platform cuda.\n[2025-03-08 12:29:04] server_args=ServerArgs(model_path='x')\n", facts.KindSGLangLog, 90},
		{"x.log", "INFO 05-12 02:45:10 [__init__.py:239] Automatically detected platform cuda.\nINFO 05-12 02:45:15 [api_server.py:1043] vLLM API server version 0.8.5.post1\n", facts.KindVLLMLog, 90},
		{"x.log", "\x1b[0;36m(APIServer pid=31)\x1b[0;0m INFO 02-03 19:00:05 [api_server.py:946] Starting vLLM API server 0 on http://0.0.0.0:8000\n", facts.KindVLLMLog, 80},
		{"pod.log", "2026-05-12T08:01:39.331095044Z (APIServer pid=1) INFO 05-12 08:01:39 [loggers.py:271] Engine 000: Avg prompt throughput: 1.0 tokens/s\n", facts.KindVLLMLog, 80},
		{"vllm.log", "START 20:59:05\n(APIServer pid=23283) INFO 08-01 20:59:09 [api_utils.py:339] x\n", facts.KindVLLMLog, 80},
		{"a.log", "gpu1:123:456 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", facts.KindServerLog, 30},
		{"sglang-run.txt", "hello\n", facts.KindSGLangLog, 1},
		{"vllm.out", "hello\n", facts.KindVLLMLog, 1},
		{"server.log", "hello\n", facts.KindServerLog, 1},
	} {
		k, score := Sniff(c.name, []byte(c.head))
		assert.Equal(t, c.kind, k, "%s: %q", c.name, c.head)
		assert.GreaterOrEqual(t, score, c.min, "%s: %q", c.name, c.head)
		if c.min < 30 {
			assert.Less(t, score, 30, "a name alone stays below content scores")
		}
	}
	// Other evidence is not claimed.
	for _, head := range []string{
		"USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nroot           1  0.0  0.0 167744 13036 ?        Ss   04:26   0:01 /sbin/init\n",
		"[    0.000000] Linux version 6.8.0-45-generic\n[ 1234.567] NVRM: Xid (PCI:0000:19:00): 79, pid=1234\n",
		"==============================\n        System Info\n==============================\nOS                           : Ubuntu 22.04\n",
		"timestamp, name, utilization.gpu [%]\n2026/11/30 04:27:13.123, NVIDIA H200, 0 %\n",
	} {
		k, score := Sniff("data.txt", []byte(head))
		assert.Zero(t, score, "%q sniffed as %s", head, k)
	}
}

func TestSeriesRecyclesCleanly(t *testing.T) {
	// Compaction hands merged buckets back for reuse: aggregates must not
	// leak from one bucket's keys to another's.
	var s facts.Series
	keys := []string{"a", "b"}
	for i := 0; i < facts.MaxBuckets*4; i++ {
		if i%2 == 0 {
			s.AddPairs(facts.Source{File: "x", Line: i + 1}, time.Time{}, keys, []float64{1, float64(i)})
		} else {
			s.Add(facts.Source{File: "x", Line: i + 1}, time.Time{}, map[string]float64{"a": 1})
		}
	}
	assert.Equal(t, facts.MaxBuckets*4, s.Count)
	assert.Equal(t, facts.MaxBuckets*4, s.Total("a").N)
	assert.Equal(t, facts.MaxBuckets*2, s.Total("b").N)
	assert.Equal(t, float64(facts.MaxBuckets*4-2), s.Total("b").Max)
	assert.Equal(t, map[string]float64{"a": 1}, s.Last.Values, "keys of earlier samples do not stay in Last")
	assert.Equal(t, []string{"a", "b"}, s.Keys())
	n := 0
	for _, b := range s.Buckets {
		n += b.N
		assert.Equal(t, b.N, b.Agg("a").N)
	}
	assert.Equal(t, s.Count, n)
}

func TestLongMessageCutOnARune(t *testing.T) {
	msg := strings.Repeat("é", facts.MaxMsg) // two bytes each
	_, l, _ := parseLog(t, facts.KindVLLMLog, "ERROR 05-12 02:45:30 [core.py:1] "+msg)
	ev := firstEvent(l, facts.EventError)
	require.NotNil(t, ev)
	assert.True(t, utf8.ValidString(ev.Msg))
	assert.LessOrEqual(t, len(ev.Msg), facts.MaxMsg)
	assert.Equal(t, facts.MaxMsg, len(ev.Msg))
	assert.True(t, utf8.ValidString(l.Procs[0].LastMsg))
	assert.Equal(t, facts.MaxMsg, len(l.Procs[0].LastMsg))
}

func TestTracebackLinesAfterBareException(t *testing.T) {
	_, l, issues := parseLog(t, facts.KindSGLangLog,
		"[2025-10-18 22:42:36] Scheduler hit an exception: Traceback (most recent call last):",
		`  File "/triton/backends/nvidia/compiler.py", line 425, in make_cubin`,
		`    raise PTXASError(f"{error}\n"`,
		"triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error",
		"`ptxas` stderr:",
		"ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'",
		"",
		"Repro command: ptxas -lineinfo -v --gpu-name sm_121a /tmp/x.ptx",
		"[2025-10-18 22:42:36] Received sigquit from a child process. It usually means the child failed.")
	assert.Empty(t, issues)
	tb := firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	assert.Equal(t, "PTXAS error: Internal Triton PTX codegen error", tb.Traceback.ExcMsg, "the message stays the exception line's")
	assert.Equal(t, []facts.TracebackLine{
		{Line: 5, Text: "`ptxas` stderr:"},
		{Line: 6, Text: "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'"},
	}, tb.Traceback.After, "up to the blank line")
	assert.Equal(t, 4, tb.EndLine, "the traceback does not claim the lines after it")

	// A progress bar is never part of a message.
	_, l, _ = parseLog(t, facts.KindSGLangLog,
		"[2025-10-18 22:42:36 TP0] Scheduler hit an exception: Traceback (most recent call last):",
		`  File "/a.py", line 1, in f`,
		"RuntimeError: boom",
		"Capturing batches (bs=1 avail_mem=10.28 GB): 100%|██████████| 23/23 [00:16<00:00,  1.42it/s]",
		"oom scenario exit 1")
	tb = firstEvent(l, facts.EventTraceback)
	require.NotNil(t, tb)
	assert.Empty(t, tb.Traceback.After)
	require.Len(t, l.Bars, 1)
}

func TestEmptyLogHasEmptyEvents(t *testing.T) {
	// Events is never nil, so that an empty log reads "events": [].
	for _, s := range []string{"", "\n \n"} {
		out, _ := parseText("empty.log", s, facts.KindServerLog)
		require.NotNil(t, out.Logs[0].Events)
		require.Empty(t, out.Logs[0].Events)
	}
}

func TestBarFollowedBySpaces(t *testing.T) {
	// The spaces after a bar's state are not a record of their own.
	out, _ := parseText("bar.log", "Loading safetensors checkpoint shards: 100% Completed | 3/3 [00:01<00:00,  2.00it/s]   \n", facts.KindVLLMLog)
	l := out.Logs[0]
	require.Len(t, l.Bars, 1)
	require.Equal(t, 3, l.Bars[0].N)
	require.Len(t, l.Events, 1)
	require.Equal(t, facts.EventLoadProgress, l.Events[0].Type)
	require.Equal(t, 1, l.Procs[0].Lines)
}

// faulthandler prints every thread's stack at a fatal signal, its frames
// without the traceback's ", in" comma (Python/traceback.c, dump_frame):
// the abort is the failure, the stacks are not tracebacks of their own.
func TestFaulthandlerDumpIsNotATraceback(t *testing.T) {
	_, l, issues := parseLog(t, facts.KindServerLog,
		"Fatal Python error: Aborted",
		"",
		"Thread 0x000079e69b400640 (most recent call first):",
		`  File "/usr/lib/python3.10/threading.py", line 324 in wait`,
		`  File "/usr/lib/python3.10/threading.py", line 607 in wait`,
		`  File "/home/ubuntu/.local/lib/python3.10/site-packages/tqdm/_monitor.py", line 60 in run`,
		`  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner`,
		`  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap`)
	assert.Empty(t, issues)
	assert.Empty(t, l.EventsOf(facts.EventTraceback), "got %v", types(l))
	assert.True(t, isFrameLine([]byte(`  File "/a.py", line 1, in f`)))
	assert.False(t, isFrameLine([]byte(`  File "/a.py", line 1 in f`)))
}

// A warning whose message spans lines (torch's capability check prints
// "Found GPU1 ... / PyTorch no longer supports this GPU ..." on indented
// lines) keeps those lines visible to the catalog, at their own lines and
// as part of the warning; none of them is an event.
func TestMultilineWarningStaysVisible(t *testing.T) {
	log := "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:262: UserWarning: \n" +
		"    Found GPU1 Tesla V100-PCIE-16GB which is of cuda capability 7.0.\n" +
		"    PyTorch no longer supports this GPU because it is too old.\n" +
		"    The minimum cuda capability supported by this library is 7.5.\n" +
		"  \n" +
		"  warnings.warn(\n" +
		"INFO 06-04 22:38:10 [config.py:823] This model supports multiple tasks.\n"
	out, _ := parseText("server.log", log, facts.KindVLLMLog)
	require.Len(t, out.Logs, 1)
	l := out.Logs[0]
	assert.Equal(t, []facts.EventType{facts.EventPythonWarning}, types(l)[:1])
	var seen []int
	for _, e := range l.Unmatched {
		if strings.Contains(e.Msg, "PyTorch no longer supports") {
			assert.Equal(t, facts.LevelWarning, e.Level)
			seen = append(seen, e.Src.Line)
		}
	}
	assert.Equal(t, []int{3}, seen)
}

// Colour codes whose ESC a paste lost ("[36m"), or that a copy tool wrote
// as "ESC[" or "^[[", hide neither the process tag nor the line after it;
// text that only looks like one stays.
func TestPastedColourRemnants(t *testing.T) {
	tests := []struct {
		line, proc string
		typ        facts.EventType
	}{
		{"[36m(RayWorkerWrapper pid=95418)[0m INFO 01-14 15:48:51 ray_utils.py:183] Waiting for creating a placement group of specs for 30 seconds. specs=[{'GPU': 1.0}]. Check `ray status` to see if you have enough resources.", "RayWorkerWrapper", facts.EventPlacementWait},
		{"ESC[36m(RayWorkerWrapper pid=95418)ESC[0m INFO 01-14 15:48:51 ray_utils.py:183] Waiting for creating a placement group of specs for 30 seconds. specs=[{'GPU': 1.0}]. Check `ray status` to see if you have enough resources.", "RayWorkerWrapper", facts.EventPlacementWait},
		{"^[[36m(RayWorkerWrapper pid=95418)^[[0m INFO 01-14 15:48:51 ray_utils.py:183] Waiting for creating a placement group of specs for 30 seconds. specs=[{'GPU': 1.0}]. Check `ray status` to see if you have enough resources.", "RayWorkerWrapper", facts.EventPlacementWait},
	}
	for _, tc := range tests {
		out, _ := parseText("server.log", tc.line+"\n", facts.KindVLLMLog)
		require.Len(t, out.Logs, 1)
		ev := firstEvent(out.Logs[0], tc.typ)
		require.NotNil(t, ev, "%q: want a %s event, got %v", tc.line, tc.typ, types(out.Logs[0]))
		assert.Contains(t, ev.Proc.Name, tc.proc)
	}
	out, _ := parseText("server.log", "[5m] warmup took too long\n", facts.KindServerLog)
	require.Len(t, out.Logs, 1)
	for _, e := range out.Logs[0].Unmatched {
		assert.Equal(t, "[5m] warmup took too long", e.Msg)
	}
}
