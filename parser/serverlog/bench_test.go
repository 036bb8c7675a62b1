package serverlog

import (
	"bytes"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// genSGLang writes an SGLang TP8 log: a startup, then decode stat lines of
// every rank's DP group mixed with unrecognized scheduler lines and access
// lines, as a long serving run prints them.
func genSGLang(lines int) []byte {
	var b bytes.Buffer
	b.WriteString("[2026-05-27 09:59:00] server_args=ServerArgs(model_path='m', tp_size=8, api_key=None)\n")
	for r := 0; r < 8; r++ {
		fmt.Fprintf(&b, "[2026-05-27 09:59:10 TP%d] Load weight begin. avail mem=70.00 GB\n", r)
	}
	for i := 0; b.Len() > 0 && i < lines; i++ {
		s := i % 60
		m := (i / 60) % 60
		h := 10 + (i/3600)%12
		switch i % 10 {
		case 0, 1, 2, 3, 4, 5:
			fmt.Fprintf(&b, "[2026-05-27 %02d:%02d:%02d DP%d TP%d] Decode batch, #running-req: %d, #token: %d, token usage: 0.%02d, accept len: 3.12, accept rate: 0.71, cuda graph: True, gen throughput (token/s): %d.%02d, #queue-req: %d\n",
				h, m, s, i%8, i%8, i%64, 50000+i%1000, i%100, 2000+i%500, i%100, i%7)
		case 6, 7:
			fmt.Fprintf(&b, "[2026-05-27 %02d:%02d:%02d DP%d TP%d] Prefill batch, #new-seq: 1, #new-token: %d, #cached-token: 64, token usage: 0.41, #running-req: 31, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 3071.55\n",
				h, m, s, i%8, i%8, 100+i%900)
		case 8:
			fmt.Fprintf(&b, "[2026-05-27 %02d:%02d:%02d DP%d TP%d] Cache flushed successfully after %d requests in queue %d\n", h, m, s, i%8, i%8, i%31, i%5)
		case 9:
			fmt.Fprintf(&b, "[2026-05-27 %02d:%02d:%02d] INFO:     127.0.0.1:%d - \"POST /generate HTTP/1.1\" 200 OK\n", h, m, s, 40000+i%20000)
		}
	}
	return b.Bytes()
}

// genVLLM writes a vLLM V1 log with process tags: stat lines from the API
// server, access lines, and worker lines no rule looks at.
func genVLLM(lines int) []byte {
	var b bytes.Buffer
	b.WriteString("(APIServer pid=1) INFO 05-19 09:00:00 [api_server.py:1882] vLLM API server version 0.10.2\n")
	for i := 0; i < lines; i++ {
		s := i % 60
		m := (i / 60) % 60
		h := 10 + (i/3600)%12
		switch i % 8 {
		case 0, 1, 2:
			fmt.Fprintf(&b, "(APIServer pid=1) INFO 05-19 %02d:%02d:%02d [loggers.py:271] Engine 000: Avg prompt throughput: %d.%d tokens/s, Avg generation throughput: %d.%d tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %d.%d%%, Prefix cache hit rate: %d.%d%%\n",
				h, m, s, i%20000, i%10, i%3000, i%10, i%64, i%40, i%100, i%10, i%100, i%10)
		case 3:
			fmt.Fprintf(&b, "(APIServer pid=1) INFO 05-19 %02d:%02d:%02d [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.%02d, Accepted throughput: 15.60 tokens/s, Drafted throughput: 38.99 tokens/s, Accepted: %d tokens, Drafted: %d tokens, Per-position acceptance rate: 0.615, 0.415, 0.169, Avg Draft acceptance rate: 40.0%%\n",
				h, m, s, i%100, i%200, 195+i%100)
		case 4, 5:
			fmt.Fprintf(&b, "(APIServer pid=1) INFO:     127.0.0.1:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n", 40000+i%20000)
		case 6:
			fmt.Fprintf(&b, "(Worker_TP%d pid=%d) INFO 05-19 %02d:%02d:%02d [gpu_model_runner.py:2000] Some routine worker message number %d\n", i%4, 100+i%4, h, m, s, i)
		case 7:
			fmt.Fprintf(&b, "(APIServer pid=1) INFO 05-19 %02d:%02d:%02d [logger.py:39] Received request chatcmpl-%08x: prompt: 'hello', params: SamplingParams(n=1)\n", h, m, s, i)
		}
	}
	return b.Bytes()
}

func benchParse(b *testing.B, data []byte, kind facts.Kind) {
	lines := bytes.Count(data, []byte{'\n'})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	// The machines this runs on are shared: CPU time tells the parser's
	// speed apart from the load of others.
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	n := 0
	b.ResetTimer()
	for b.Loop() {
		in := textio.NewInput("bench.log", bytes.NewReader(data), 0, nil)
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, kind, out)
		n++
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) * time.Nanosecond
	if cpu > 0 {
		b.ReportMetric(float64(n*len(data))/1e6/cpu.Seconds(), "MB/cpu-s")
	}
	b.ReportMetric(float64(lines), "lines/op")
}

func BenchmarkSGLangTP8Decode(b *testing.B) { benchParse(b, genSGLang(400000), facts.KindSGLangLog) }
func BenchmarkVLLMV1Tagged(b *testing.B)    { benchParse(b, genVLLM(400000), facts.KindVLLMLog) }

// The same on one goroutine, without the read-ahead: what a file under
// aheadAfter costs, and what the second goroutine gains.
func BenchmarkSGLangTP8DecodeOneGoroutine(b *testing.B) {
	defer func(a int64) { aheadAfter = a }(aheadAfter)
	aheadAfter = -1
	benchParse(b, genSGLang(400000), facts.KindSGLangLog)
}

func BenchmarkVLLMV1TaggedOneGoroutine(b *testing.B) {
	defer func(a int64) { aheadAfter = a }(aheadAfter)
	aheadAfter = -1
	benchParse(b, genVLLM(400000), facts.KindVLLMLog)
}

// TestSteadyStateAllocs checks that stat lines and unrecognized lines cost no
// allocation once the parser is warm: doubling the input adds (almost) none.
func TestSteadyStateAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  func(int) []byte
		kind facts.Kind
	}{{"sglang", genSGLang, facts.KindSGLangLog}, {"vllm", genVLLM, facts.KindVLLMLog}} {
		t.Run(tc.name, func(t *testing.T) {
			measure := func(n int) float64 {
				data := tc.gen(n)
				return testing.AllocsPerRun(3, func() {
					in := textio.NewInput("a.log", bytes.NewReader(data), 0, nil)
					Parse(in, tc.kind, &facts.Facts{Clocks: map[string]facts.Clock{}})
				})
			}
			small, large := measure(50000), measure(100000)
			perLine := (large - small) / 50000
			t.Logf("%s: %.0f allocs for 50k lines, %.0f for 100k: %.4f allocs per added line", tc.name, small, large, perLine)
			if perLine > 0.05 {
				t.Errorf("%.4f allocations per line in the steady state", perLine)
			}
		})
	}
}

// BenchmarkScanOnly reads the SGLang input with the line scanner alone: the
// floor that parsing is compared against (DESIGN §10, "close to wc -l").
func BenchmarkScanOnly(b *testing.B) {
	data := genSGLang(400000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := textio.NewInput("bench.log", bytes.NewReader(data), 0, nil)
		for in.Scan() {
			in.CheckUTF8()
		}
	}
}
