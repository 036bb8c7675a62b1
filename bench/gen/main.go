// Command gen writes large, realistic inputs for coroner's benchmarks: a
// SGLang TP8 log that starts up and then serves for days (Prefill and Decode
// stat lines with accept len and throughput), a vLLM V1 log with process tags
// and stat lines, 100 ps snapshots, 100 `nvidia-smi -q -x` snapshots, and a
// bundle of 512 rank logs from 64 nodes; the bundles also as tar.zst.
//
// Output is deterministic (a fixed-seed generator), so a benchmark run is
// comparable with the next.
//
//	go run ./bench/gen -out bench/out -size 1GB
package main

import (
	"archive/tar"
	"bufio"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

func main() {
	out := flag.String("out", "bench/out", "output directory")
	size := flag.String("size", "1GB", "size of each of the two big logs (e.g. 100MB, 1GB, 3GB)")
	what := flag.String("what", "all", "comma list: sglang,vllm,snapshots,ranks,pack (all = every one)")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil {
		log.Fatalf("-size: %v", err)
	}
	want := map[string]bool{}
	for _, w := range strings.Split(*what, ",") {
		want[strings.TrimSpace(w)] = true
	}
	all := want["all"]
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	if all || want["sglang"] {
		must(writeFile(filepath.Join(*out, "sglang-tp8.log"), func(w io.Writer) error { return sglangLog(w, n) }))
	}
	if all || want["vllm"] {
		must(writeFile(filepath.Join(*out, "vllm-v1.log"), func(w io.Writer) error { return vllmLog(w, n) }))
	}
	if all || want["snapshots"] {
		must(snapshots(filepath.Join(*out, "snapshots")))
	}
	if all || want["ranks"] {
		must(rankLogs(filepath.Join(*out, "ranks")))
	}
	if all || want["pack"] {
		for _, p := range []struct{ src, dst string }{
			{"sglang-tp8.log", "sglang-tp8.tar.zst"},
			{"snapshots", "snapshots.tar.zst"},
			{"ranks", "ranks.tar.zst"},
		} {
			src := filepath.Join(*out, p.src)
			if _, err := os.Stat(src); err == nil {
				must(pack(src, filepath.Join(*out, p.dst)))
			}
		}
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func parseSize(s string) (int64, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return int64(v * float64(mult)), err
}

func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countingWriter stops generators at a size.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var t0 = time.Date(2026, 2, 10, 0, 28, 0, 0, time.UTC)

// sglangLog writes a TP8 startup of SGLang 0.5.8 and then serving stats.
func sglangLog(w io.Writer, size int64) error {
	cw := &countingWriter{w: w}
	r := rand.New(rand.NewPCG(1, 2))
	ts := func(t time.Time) string { return t.Format("2006-01-02 15:04:05") }
	t := t0
	fmt.Fprintf(cw, "[%s] server_args=ServerArgs(model_path='/models/Kimi-K2.5-INT4', tp_size=8, attention_backend='triton', speculative_algorithm='EAGLE3', speculative_num_steps=3, mem_fraction_static=0.85, api_key=None, port=30000)\n", ts(t))
	for rank := 0; rank < 8; rank++ {
		fmt.Fprintf(cw, "[%s TP%d] Init torch distributed begin.\n", ts(t.Add(9*time.Second)), rank)
	}
	for rank := 0; rank < 8; rank++ {
		fmt.Fprintf(cw, "[%s TP%d] Init torch distributed ends. mem usage=1.19 GB\n", ts(t.Add(12*time.Second)), rank)
		fmt.Fprintf(cw, "[%s TP%d] Load weight begin. avail mem=93.47 GB\n", ts(t.Add(13*time.Second)), rank)
	}
	for n := 0; n <= 64; n++ {
		fmt.Fprintf(cw, "Loading safetensors checkpoint shards: %3d%% Completed | %d/64 [%02d:%02d<%02d:%02d,  9.08s/it]\n",
			n*100/64, n, n*9/60, n*9%60, (64-n)*9/60, (64-n)*9%60)
	}
	t = t.Add(10 * time.Minute)
	for rank := 0; rank < 8; rank++ {
		fmt.Fprintf(cw, "[%s TP%d] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=24.61 GB, mem usage=68.86 GB.\n", ts(t), rank)
		fmt.Fprintf(cw, "[%s TP%d] KV Cache is allocated. #tokens: 412893, KV size: 10.38 GB\n", ts(t), rank)
		fmt.Fprintf(cw, "[%s TP%d] Memory pool end. avail mem=13.71 GB\n", ts(t), rank)
		fmt.Fprintf(cw, "[%s TP%d] Capture cuda graph begin. This can take up to several minutes. avail mem=13.64 GB\n", ts(t), rank)
	}
	t = t.Add(42 * time.Second)
	for rank := 0; rank < 8; rank++ {
		fmt.Fprintf(cw, "[%s TP%d] Capture cuda graph end. Time elapsed: 42.17 s. mem usage=0.72 GB. avail mem=12.92 GB.\n", ts(t), rank)
	}
	fmt.Fprintf(cw, "[%s TP0] max_total_num_tokens=412893, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=2048, context_len=262144, available_gpu_mem=12.92 GB\n", ts(t))
	fmt.Fprintf(cw, "[%s] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n", ts(t))
	fmt.Fprintf(cw, "[%s] The server is fired up and ready to roll!\n", ts(t.Add(3*time.Second)))
	tok := 0
	for cw.n < size {
		t = t.Add(time.Duration(200+r.IntN(800)) * time.Millisecond)
		run := 1 + r.IntN(64)
		if r.IntN(10) == 0 {
			fmt.Fprintf(cw, "[%s TP0] Prefill batch, #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: 0.%02d, #running-req: %d, #queue-req: %d, #pending-token: 0, cuda graph: False, input throughput (token/s): %d.%02d\n",
				ts(t), 1+r.IntN(4), 64+r.IntN(4000), r.IntN(2000), r.IntN(99), run, r.IntN(8), 1000+r.IntN(9000), r.IntN(100))
			continue
		}
		tok += 40 * run
		fmt.Fprintf(cw, "[%s TP0] Decode batch, #running-req: %d, #token: %d, token usage: 0.%02d, accept len: %d.%02d, accept rate: 0.%02d, cuda graph: True, gen throughput (token/s): %d.%02d, #queue-req: %d\n",
			ts(t), run, tok%400000, r.IntN(99), 2+r.IntN(2), r.IntN(100), 50+r.IntN(40), 60*run+r.IntN(40), r.IntN(100), r.IntN(4))
	}
	return nil
}

// vllmLog writes a vLLM V1 startup with process tags and serving stats.
func vllmLog(w io.Writer, size int64) error {
	cw := &countingWriter{w: w}
	r := rand.New(rand.NewPCG(3, 4))
	ts := func(t time.Time) string { return t.Format("01-02 15:04:05") }
	t := t0
	fmt.Fprintf(cw, "(APIServer pid=4120) INFO %s [api_server.py:1805] vLLM API server version 0.11.0\n", ts(t))
	fmt.Fprintf(cw, "(APIServer pid=4120) INFO %s [utils.py:233] non-default args: {'model': '/models/Kimi-K2.5', 'tensor_parallel_size': 8, 'gpu_memory_utilization': 0.9}\n", ts(t))
	fmt.Fprintf(cw, "(EngineCore_DP0 pid=4301) INFO %s [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: model='/models/Kimi-K2.5'\n", ts(t.Add(8*time.Second)))
	for rank := 0; rank < 8; rank++ {
		fmt.Fprintf(cw, "(Worker_TP%d pid=%d) INFO %s [gpu_model_runner.py:2602] Starting to load model /models/Kimi-K2.5...\n", rank, 4400+rank, ts(t.Add(20*time.Second)))
	}
	for rank := 0; rank < 8; rank++ {
		fmt.Fprintf(cw, "(Worker_TP%d pid=%d) INFO %s [default_loader.py:267] Loading weights took 512.31 seconds\n", rank, 4400+rank, ts(t.Add(9*time.Minute)))
		fmt.Fprintf(cw, "(Worker_TP%d pid=%d) INFO %s [gpu_model_runner.py:2653] Model loading took 68.51 GiB and 520.02 seconds\n", rank, 4400+rank, ts(t.Add(9*time.Minute)))
	}
	t = t.Add(12 * time.Minute)
	fmt.Fprintf(cw, "(EngineCore_DP0 pid=4301) INFO %s [kv_cache_utils.py:1087] GPU KV cache size: 412,896 tokens\n", ts(t))
	fmt.Fprintf(cw, "(EngineCore_DP0 pid=4301) INFO %s [core.py:210] init engine (profile, create kv cache, warmup model) took 95.31 seconds\n", ts(t))
	fmt.Fprintf(cw, "(APIServer pid=4120) INFO %s [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000\n", ts(t))
	fmt.Fprintf(cw, "(APIServer pid=4120) INFO:     Application startup complete.\n")
	for cw.n < size {
		t = t.Add(10 * time.Second)
		run := r.IntN(64)
		fmt.Fprintf(cw, "(APIServer pid=4120) INFO %s [loggers.py:123] Engine 000: Avg prompt throughput: %d.%d tokens/s, Avg generation throughput: %d.%d tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %d.%d%%, Prefix cache hit rate: %d.%d%%\n",
			ts(t), r.IntN(5000), r.IntN(10), 80*run+r.IntN(80), r.IntN(10), run, r.IntN(5), r.IntN(99), r.IntN(10), r.IntN(90), r.IntN(10))
		if r.IntN(3) == 0 {
			fmt.Fprintf(cw, "(APIServer pid=4120) INFO:     10.0.%d.%d:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n", r.IntN(255), r.IntN(255), 30000+r.IntN(30000))
		}
	}
	return nil
}

// snapshots writes 100 rounds of ps -eo and nvidia-smi -q -x of a TP8 server.
func snapshots(dir string) error {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100; i++ {
		at := t0.Add(time.Duration(i) * 30 * time.Second)
		rd := filepath.Join(dir, fmt.Sprintf("round-%03d", i+1))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(rd, "captured_at.txt"), []byte(at.Format(time.RFC3339)+"\n"), 0o644); err != nil {
			return err
		}
		var ps strings.Builder
		ps.WriteString("    PID    PPID                  STARTED ELAPSED     TIME   RSS STAT NLWP COMMAND\n")
		for p := 1; p <= 600; p++ {
			fmt.Fprintf(&ps, "%7d %7d %s %7d %8d %5d S       1 [kworker/%d:%d-events]\n", p, 2, t0.Add(-time.Hour).Format("Mon Jan _2 15:04:05 2006"), 3600+30*i, 0, 0, p%64, p%4)
		}
		fmt.Fprintf(&ps, "%7d %7d %s %7d %8d %5d Sl    212 python3 -m sglang.launch_server --model-path /models/Kimi-K2.5-INT4 --tp 8\n", 72169, 1, t0.Format("Mon Jan _2 15:04:05 2006"), 30*i, 41+i, 1014392)
		for rank := 0; rank < 8; rank++ {
			fmt.Fprintf(&ps, "%7d %7d %s %7d %8d %5d Rl    188 sglang::scheduler_TP%d\n", 72309+rank, 72169, t0.Format("Mon Jan _2 15:04:05 2006"), 30*i, 30*i-r.IntN(3), 256901120, rank)
		}
		if err := os.WriteFile(filepath.Join(rd, "ps_eo.txt"), []byte(ps.String()), 0o644); err != nil {
			return err
		}
		var x strings.Builder
		fmt.Fprintf(&x, "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n<nvidia_smi_log>\n\t<timestamp>%s</timestamp>\n\t<driver_version>580.105.08</driver_version>\n\t<cuda_version>13.0</cuda_version>\n\t<attached_gpus>8</attached_gpus>\n", at.Format("Mon Jan _2 15:04:05 2006"))
		for g := 0; g < 8; g++ {
			fmt.Fprintf(&x, "\t<gpu id=\"00000000:%02X:00.0\">\n\t\t<product_name>NVIDIA RTX PRO 6000 Blackwell Server Edition</product_name>\n\t\t<product_architecture>Blackwell</product_architecture>\n\t\t<minor_number>%d</minor_number>\n\t\t<pci>\n\t\t\t<pci_bus_id>00000000:%02X:00.0</pci_bus_id>\n\t\t</pci>\n\t\t<fb_memory_usage>\n\t\t\t<total>97887 MiB</total>\n\t\t\t<used>%d MiB</used>\n\t\t\t<free>%d MiB</free>\n\t\t</fb_memory_usage>\n\t\t<utilization>\n\t\t\t<gpu_util>%d %%</gpu_util>\n\t\t\t<memory_util>%d %%</memory_util>\n\t\t</utilization>\n\t\t<temperature>\n\t\t\t<gpu_temp>%d C</gpu_temp>\n\t\t</temperature>\n\t</gpu>\n",
				0x01+0x20*g, g, 0x01+0x20*g, 79000+r.IntN(100), 18000, 90+r.IntN(10), 20+r.IntN(10), 55+r.IntN(10))
		}
		x.WriteString("</nvidia_smi_log>\n")
		if err := os.WriteFile(filepath.Join(rd, "nvidia-smi-q.xml"), []byte(x.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rankLogs writes 512 rank logs of 64 nodes (DP64 x TP8 scheduler logs).
func rankLogs(dir string) error {
	r := rand.New(rand.NewPCG(7, 8))
	for node := 0; node < 64; node++ {
		for rank := 0; rank < 8; rank++ {
			p := filepath.Join(dir, fmt.Sprintf("node%02d", node), fmt.Sprintf("dp%d-tp%d.log", node, rank))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			err := writeFile(p, func(w io.Writer) error {
				t := t0
				ts := func() string { return t.Format("2006-01-02 15:04:05") }
				tag := fmt.Sprintf("DP%d TP%d", node, rank)
				for _, m := range []string{"Init torch distributed begin.", "Init torch distributed ends. mem usage=1.19 GB", "Load weight begin. avail mem=93.47 GB"} {
					fmt.Fprintf(w, "[%s %s] %s\n", ts(), tag, m)
					t = t.Add(time.Second)
				}
				t = t.Add(9 * time.Minute)
				fmt.Fprintf(w, "[%s %s] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=24.61 GB, mem usage=68.86 GB.\n", ts(), tag)
				fmt.Fprintf(w, "[%s %s] Capture cuda graph begin. This can take up to several minutes. avail mem=13.64 GB\n", ts(), tag)
				t = t.Add(40 * time.Second)
				fmt.Fprintf(w, "[%s %s] Capture cuda graph end. Time elapsed: 40.00 s. mem usage=0.72 GB. avail mem=12.92 GB.\n", ts(), tag)
				for i := 0; i < 4000; i++ {
					t = t.Add(time.Duration(500+r.IntN(500)) * time.Millisecond)
					fmt.Fprintf(w, "[%s %s] Decode batch, #running-req: %d, #token: %d, token usage: 0.%02d, cuda graph: True, gen throughput (token/s): %d.%02d, #queue-req: 0\n",
						ts(), tag, 1+r.IntN(32), r.IntN(400000), r.IntN(99), 60+r.IntN(2000), r.IntN(100))
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// pack writes src (a file or a directory) as a tar.zst, entries sorted.
func pack(src, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	var files []string
	base := filepath.Dir(src)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: st.Size(), ModTime: t0, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, in)
		in.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
