package pyspy

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

func parse(path, s string) (*facts.Facts, []facts.Issue) {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(s), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, facts.KindPySpy, out)
	return out, issues
}

type stack struct {
	line        int
	pid         int
	title       string
	tid, thread string
	idle, gil   bool
	nFrames     int
	first       facts.Frame // innermost Python frame
	last        facts.Frame // outermost
	native      []string
	err         string
}

func TestParse(t *testing.T) {
	cases := []struct {
		file   string
		stacks []stack
	}{
		{"testdata/sglang-native.txt", []stack{
			{line: 4, pid: 72309, title: "sglang::scheduler_TP0", tid: "72309", thread: "MainThread", nFrames: 13,
				first:  facts.Frame{File: "torch/distributed/distributed_c10d.py", Line: 2806, Func: "all_reduce"},
				last:   facts.Frame{File: "<string>", Line: 1, Func: "<module>"},
				native: []string{"ncclGroupEnd (libnccl.so.2)", "c10d::ProcessGroupNCCL::allreduce_impl(at::Tensor&, char const*, c10d::AllreduceOptions const&) (libtorch_cuda.so)"}},
			{line: 20, pid: 72309, title: "sglang::scheduler_TP0", tid: "72398", thread: "Thread-1 (_watchdog_thread)", idle: true, nFrames: 5,
				first:  facts.Frame{File: "sglang/srt/utils/watchdog.py", Line: 88, Func: "_watchdog_once"},
				last:   facts.Frame{File: "threading.py", Line: 1032, Func: "_bootstrap"},
				native: []string{"__futex_abstimed_wait_common (libc.so.6)", "clone3 (libc.so.6)"}},
			{line: 32, pid: 72310, title: "sglang::scheduler_TP1", tid: "72310", thread: "MainThread", gil: true, nFrames: 3,
				first:  facts.Frame{File: "torch/cuda/streams.py", Line: 224, Func: "synchronize"},
				last:   facts.Frame{File: "sglang/srt/managers/scheduler.py", Line: 947, Func: "event_loop_normal"},
				native: []string{"cudaStreamSynchronize (libcudart.so.12)"}},
		}},
		{"testdata/vllm-locals.txt", []stack{
			{line: 4, pid: 4123, title: "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B", tid: "4123",
				thread: "MainThread", idle: true, nFrames: 3,
				first: facts.Frame{File: "selectors.py", Line: 468, Func: "select"},
				last:  facts.Frame{File: "asyncio/base_events.py", Line: 641, Func: "run_forever"}},
			{line: 13, pid: 4123, title: "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B", tid: "0x7F3B9A7FE6C0",
				thread: "Thread-3 (process_input_sockets)", nFrames: 2,
				first: facts.Frame{File: "zmq/sugar/socket.py", Line: 802, Func: "recv_multipart"},
				last:  facts.Frame{File: "vllm/v1/engine/core.py", Line: 734, Func: "process_input_sockets"}},
			{line: 16, pid: 4123, title: "python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B", tid: "4177",
				idle: true, nFrames: 1,
				first: facts.Frame{File: "threading.py", Line: 359, Func: "wait"},
				last:  facts.Frame{File: "threading.py", Line: 359, Func: "wait"}},
		}},
		{"testdata/pyspy-72311.txt", []stack{
			{line: 2, pid: 72311, err: "Error: Failed to suspend process"},
			{line: 3, pid: 72311, err: "Permission Denied: Try running again with elevated permissions"},
		}},
		{"testdata/dump.json", []stack{
			{line: 1, pid: 9001, tid: "9001", thread: "MainThread", gil: true, nFrames: 1,
				first:  facts.Frame{File: "torch/cuda/__init__.py", Line: 985, Func: "synchronize"},
				last:   facts.Frame{File: "torch/cuda/__init__.py", Line: 985, Func: "synchronize"},
				native: []string{"cuStreamSynchronize (libcuda.so.580.159.04)"}},
			{line: 1, pid: 9001, tid: "0x7F364144F600", idle: true, nFrames: 1,
				first: facts.Frame{File: "threading.py", Line: 359, Func: "wait"},
				last:  facts.Frame{File: "threading.py", Line: 359, Func: "wait"}},
		}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			require.NoError(t, err)
			k, score := Sniff(filepath.Base(tc.file), b)
			assert.Equal(t, facts.KindPySpy, k)
			assert.GreaterOrEqual(t, score, 70)
			out, issues := parse(tc.file, string(b))
			assert.Empty(t, issues)
			require.Len(t, out.Stacks, len(tc.stacks))
			for i, w := range tc.stacks {
				s := out.Stacks[i]
				assert.Equal(t, facts.Source{File: tc.file, Line: w.line}, s.Src, "stack %d", i)
				assert.Equal(t, w.pid, s.PID, "stack %d", i)
				assert.Equal(t, w.title, s.Title, "stack %d", i)
				assert.Equal(t, w.tid, s.TID, "stack %d", i)
				assert.Equal(t, w.thread, s.Thread, "stack %d", i)
				assert.Equal(t, w.idle, s.Idle, "stack %d", i)
				assert.Equal(t, w.gil, s.GIL, "stack %d", i)
				assert.Equal(t, w.native, s.Native, "stack %d", i)
				if w.err != "" {
					assert.Contains(t, s.Error, w.err, "stack %d", i)
					assert.Empty(t, s.Frames)
					continue
				}
				assert.Empty(t, s.Error)
				require.Len(t, s.Frames, w.nFrames, "stack %d", i)
				assert.Equal(t, w.first, s.Frames[0], "stack %d", i)
				assert.Equal(t, w.last, s.Frames[len(s.Frames)-1], "stack %d", i)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		stacks int
		issue  facts.IssueKind
		line   int
	}{
		{"stray line", "Thread 1 (idle): \"MainThread\"\n    wait (threading.py:359)\nsomething else\n", 1, facts.IssueMalformed, 3},
		{"frame without location", "Thread 1 (idle)\n    wait threading.py\n", 1, facts.IssueMalformed, 2},
		{"broken json", "[{\"pid\": 1, \"frames\": [\n", 0, facts.IssueMalformed, 1},
		{"nothing", "hello\n", 0, facts.IssueMalformed, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, issues := parse("d.txt", tc.in)
			assert.Len(t, out.Stacks, tc.stacks)
			require.NotEmpty(t, issues)
			assert.Equal(t, tc.issue, issues[0].Kind)
			assert.Equal(t, tc.line, issues[0].Src.Line)
		})
	}
}

func TestSniff(t *testing.T) {
	for _, p := range []string{"../../fixtures/corpus/h200-x1/cgroup-oom/server.log", "../../fixtures/corpus/h200-x2/collect_env.txt",
		"../../fixtures/corpus/h200-x2/00-idle/ps_auxf.txt", "../../fixtures/corpus/fulllogs/sglang-qwq32b-tp4-l4/server.log"} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if len(b) > 8<<10 {
			b = b[:8<<10]
		}
		_, s := Sniff(filepath.Base(p), b)
		assert.Less(t, s, 30, p)
	}
	k, s := Sniff("pyspy.txt", nil)
	assert.Equal(t, facts.KindPySpy, k)
	assert.Less(t, s, 30)
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		Sniff("x", b)
		out, issues := parse("f", string(b))
		lines := strings.Count(string(b), "\n") + 1
		for _, s := range out.Stacks {
			if s.Src.Line < 1 || s.Src.Line > lines {
				t.Fatalf("stack cites line %d of %d", s.Src.Line, lines)
			}
			if len(s.Frames) > MaxFrames || len(s.Native) > MaxFrames {
				t.Fatalf("%d frames", len(s.Frames))
			}
		}
		for _, is := range issues {
			if is.Src.Line < 0 || is.Src.Line > lines {
				t.Fatalf("issue cites line %d of %d", is.Src.Line, lines)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	one, err := os.ReadFile("testdata/sglang-native.txt")
	require.NoError(b, err)
	var sb strings.Builder
	for sb.Len() < 8<<20 {
		sb.Write(one)
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		parse("bench", data)
	}
}
