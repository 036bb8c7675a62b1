package probe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

func parse(path, s string) (*facts.Facts, []facts.Issue) {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(s), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, facts.KindProbe, out)
	return out, issues
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

type want struct {
	line     int
	url      string
	endpoint string
	status   int
	err      string // substring; "" means no error
	body     string // substring
	at       time.Time
	latency  time.Duration
	ok       bool
}

func TestParse(t *testing.T) {
	cases := []struct {
		file   string
		probes []want
		clock  *facts.Clock
	}{
		{"testdata/curl-health.txt", []want{
			{line: 2, url: "http://localhost:8000/health", endpoint: "/health", err: "SERVER NOT RESPONDING"},
			{line: 4, url: "http://localhost:8000/health", endpoint: "/health", err: "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused"},
			{line: 6, url: "http://127.0.0.1:8000/v1/models", endpoint: "/v1/models", err: "no HTTP response", latency: 512 * time.Microsecond},
			{line: 8, url: "http://localhost:8000/health_generate", endpoint: "/health_generate", err: "curl: (28) Operation timed out"},
		}, nil},
		{"testdata/curl-v.txt", []want{
			{line: 9, url: "http://localhost:30000/health", endpoint: "/health", status: 503},
			{line: 16, url: "http://localhost:30000/v1/models", endpoint: "/v1/models", status: 200, ok: true, body: `"id":"Qwen/Qwen3-8B"`},
		}, nil},
		{"testdata/curl-loop.txt", []want{
			{line: 3, url: "localhost:8000/health", endpoint: "/health", err: "no HTTP response", at: utc("2026-11-30T04:20:01Z")},
			{line: 5, url: "localhost:8000/health", endpoint: "/health", status: 503, at: utc("2026-11-30T04:20:13Z")},
			{line: 7, url: "localhost:8000/health", endpoint: "/health", status: 200, ok: true, at: utc("2026-11-30T04:20:25Z")},
		}, nil},
		{"testdata/probes.jsonl", []want{
			{line: 1, url: "http://127.0.0.1:8000/health", endpoint: "/health", err: "connection refused", at: utc("2026-11-30T04:24:37.811Z"), latency: 300 * time.Microsecond},
			{line: 2, url: "http://127.0.0.1:8000/health", endpoint: "/health", status: 503, at: utc("2026-11-30T04:24:42.815Z"), latency: 12400 * time.Microsecond},
			{line: 3, url: "http://127.0.0.1:8000/v1/models", endpoint: "/v1/models", status: 200, ok: true, body: `{"object":"list","data":[]}`, at: utc("2026-11-30T04:25:12.002Z"), latency: 4750 * time.Microsecond},
			{line: 4, url: "http://127.0.0.1:8000/health", endpoint: "/health", err: "context deadline exceeded", at: utc("2026-11-30T04:25:42.001Z"), latency: 5 * time.Second},
		}, nil},
		{"testdata/wget.txt", []want{
			{line: 4, url: "http://localhost:8000/health", endpoint: "/health", err: "failed: Connection refused.", at: utc("2026-11-30T04:22:10Z")},
		}, &facts.Clock{NoZone: true, Latest: utc("2026-11-30T04:22:10Z")}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			require.NoError(t, err)
			k, score := Sniff(filepath.Base(tc.file), b)
			assert.Equal(t, facts.KindProbe, k)
			assert.GreaterOrEqual(t, score, 70)
			out, issues := parse(tc.file, string(b))
			assert.Empty(t, issues)
			require.Len(t, out.Probes, len(tc.probes))
			for i, w := range tc.probes {
				p := out.Probes[i]
				assert.Equal(t, facts.Source{File: tc.file, Line: w.line}, p.Src, "probe %d", i)
				assert.Equal(t, w.url, p.URL, "probe %d", i)
				assert.Equal(t, w.endpoint, p.Endpoint, "probe %d", i)
				assert.Equal(t, w.status, p.Status, "probe %d", i)
				assert.Equal(t, w.ok, p.OK(), "probe %d", i)
				if w.err == "" {
					assert.Empty(t, p.Err, "probe %d", i)
				} else {
					assert.Contains(t, p.Err, w.err, "probe %d", i)
				}
				if w.body != "" {
					assert.Contains(t, p.Body, w.body, "probe %d", i)
				}
				assert.Equal(t, w.at, p.At, "probe %d", i)
				assert.Equal(t, w.latency, p.Latency, "probe %d", i)
			}
			if tc.clock != nil {
				assert.Equal(t, *tc.clock, out.Clocks[tc.file])
			} else {
				assert.Empty(t, out.Clocks)
			}
		})
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := Record{At: utc("2026-11-30T04:24:37.811Z"), URL: "http://u:secret@127.0.0.1:8000/health", Status: 200, LatencyMS: 2.5}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	out, issues := parse("p.jsonl", string(b)+"\n")
	assert.Empty(t, issues)
	require.Len(t, out.Probes, 1)
	p := out.Probes[0]
	assert.Equal(t, "/health", p.Endpoint)
	assert.Equal(t, 200, p.Status)
	assert.Equal(t, 2500*time.Microsecond, p.Latency)
	assert.NotContains(t, p.URL, "secret")
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		probes int
		issue  facts.IssueKind
		line   int
	}{
		{"broken record", `{"url": "http://x:1/health", "status": "two hundred"}` + "\n" + `{"url":"http://x:1/health","status":200}` + "\n", 1, facts.IssueMalformed, 1},
		{"record without url", `{"url":"","status":200}` + "\n", 1, facts.IssueMalformed, 1},
		{"nothing", "hello\n", 0, facts.IssueUnrecognized, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, issues := parse("p.txt", tc.in)
			assert.Len(t, out.Probes, tc.probes)
			require.Len(t, issues, 1)
			assert.Equal(t, tc.issue, issues[0].Kind)
			assert.Equal(t, tc.line, issues[0].Src.Line)
		})
	}
}

func TestSniff(t *testing.T) {
	cases := []struct {
		name, head string
		min, max   int
	}{
		{"x", "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused\n", 70, 100},
		{"health.txt", "", 1, 29},
		{"x", "NCCL_PROTO=LL python3 -m sglang.launch_server --port 8000 &\nuntil curl -sf localhost:8000/health; do sleep 5; done\n", 1, 60},
		{"x", `[2026-07-01 12:00:00] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK` + "\n", 0, 0},
		{"x", "MemTotal:       263998500 kB\n", 0, 0},
	}
	for _, tc := range cases {
		k, s := Sniff(tc.name, []byte(tc.head))
		if tc.max == 0 {
			assert.Equal(t, 0, s, tc.head)
			continue
		}
		assert.Equal(t, facts.KindProbe, k)
		assert.GreaterOrEqual(t, s, tc.min, tc.head)
		assert.LessOrEqual(t, s, tc.max, tc.head)
	}
	for _, p := range []string{"../../fixtures/corpus/h200-x1/cgroup-oom/server.log", "../../fixtures/corpus/h200-x2/collect_env.txt",
		"../../fixtures/corpus/fulllogs/vllm-llama31-8b-v0171/server.log"} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		if len(b) > 8<<10 {
			b = b[:8<<10]
		}
		_, s := Sniff(filepath.Base(p), b)
		assert.Less(t, s, 30, p)
	}
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
		for _, p := range out.Probes {
			if p.Src.Line < 1 || p.Src.Line > lines {
				t.Fatalf("probe cites line %d of %d", p.Src.Line, lines)
			}
			if len(p.Body) > MaxBody || len(p.Err) > MaxBody {
				t.Fatalf("body %d, error %d bytes", len(p.Body), len(p.Err))
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
	var sb strings.Builder
	for _, p := range []string{"testdata/curl-health.txt", "testdata/curl-v.txt", "testdata/curl-loop.txt", "testdata/probes.jsonl"} {
		one, err := os.ReadFile(p)
		require.NoError(b, err)
		sb.Write(one)
	}
	unit := sb.String()
	sb.Reset()
	for sb.Len() < 4<<20 {
		sb.WriteString(unit)
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		parse("bench", data)
	}
}
