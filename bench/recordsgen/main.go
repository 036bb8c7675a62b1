// Command recordsgen writes the many-records inputs of issue 18 (item 3):
// evidence whose size is in records, not in line length: a ps snapshot of
// 10 million processes, an env dump of a million variables, a million rows
// of nvidia-smi --query-gpu CSV, a million health probes, a py-spy dump of
// a million frames, a df of a million mounts, 100,000 meminfo captures, a
// million Xid lines, and a folder of 200,000 small files. bench/records.sh
// times `coroner analyze` on each and prints its peak RSS.
//
// Output is deterministic, so that one run is comparable with the next.
//
//	go run ./bench/recordsgen -out bench/out/records
//	go run ./bench/recordsgen -out DIR -what ps,env -scale 0.1
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The inputs and their sizes in records at -scale 1 (issue 18).
var kinds = []struct {
	name, file string
	n          int
	write      func(w io.Writer, n int) error
}{
	{"ps", "ps_eo.txt", 10_000_000, psRows},
	{"env", "env.txt", 1_000_000, envLines},
	{"csv", "query-gpu.csv", 1_000_000, csvRows},
	{"apps", "compute-apps.csv", 1_000_000, appRows},
	{"probe", "probes.jsonl", 1_000_000, probeLines},
	{"pyspy", "py-spy.txt", 1_000_000, pyspyFrames},
	{"df", "df.txt", 1_000_000, dfRows},
	{"meminfo", "meminfo.txt", 100_000, meminfos},
	{"dmesg", "dmesg.txt", 1_000_000, xidLines},
}

func main() {
	out := flag.String("out", "bench/out/records", "output directory")
	what := flag.String("what", "all", "comma list: ps,env,csv,apps,probe,pyspy,df,meminfo,dmesg,dir (all = every one)")
	scale := flag.Float64("scale", 1, "multiply every record count by this")
	flag.Parse()
	want := map[string]bool{}
	for _, w := range strings.Split(*what, ",") {
		want[strings.TrimSpace(w)] = true
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, k := range kinds {
		if !want["all"] && !want[k.name] {
			continue
		}
		n := int(float64(k.n) * *scale)
		if err := writeFile(filepath.Join(*out, k.file), func(w io.Writer) error { return k.write(w, n) }); err != nil {
			log.Fatal(err)
		}
	}
	if want["all"] || want["dir"] {
		if err := manyFiles(filepath.Join(*out, "files"), int(200_000**scale)); err != nil {
			log.Fatal(err)
		}
	}
}

func writeFile(p string, fn func(io.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fn(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var start = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// psRows is `ps -eo pid,ppid,lstart,etimes,time,rss,vsz,stat,nlwp,comm,args`
// of a machine with n processes; one in a thousand is an SGLang scheduler.
func psRows(w io.Writer, n int) error {
	fmt.Fprintln(w, "    PID    PPID                  STARTED ELAPSED     TIME   RSS    VSZ STAT NLWP COMMAND         COMMAND")
	st := start.Format("Mon Jan _2 15:04:05 2006")
	for i := range n {
		pid := 1000 + i
		comm, args := "bash", "/bin/bash -c sleep infinity"
		if i%1000 == 0 {
			comm = "sglang::schedul"
			args = fmt.Sprintf("sglang::scheduler_TP%d", i/1000%8)
		}
		if _, err := fmt.Fprintf(w, "%7d %7d %s %7d %8d %5d %6d S    %4d %-15s %s\n",
			pid, 1, st, 86400, i%5000, 1024+i%4096, 8192+i%8192, 1+i%64, comm, args); err != nil {
			return err
		}
	}
	return nil
}

// envLines is an `env` dump of n variables, some of them ones coroner
// reads (NCCL_*, CUDA_*).
func envLines(w io.Writer, n int) error {
	fmt.Fprintln(w, "SHELL=/bin/bash")
	fmt.Fprintln(w, "NCCL_DEBUG=INFO")
	fmt.Fprintln(w, "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7")
	for i := range n {
		var err error
		switch i % 10 {
		case 0:
			_, err = fmt.Fprintf(w, "NCCL_TEST_VAR_%d=%d\n", i, i)
		case 1:
			_, err = fmt.Fprintf(w, "CUDA_TEST_VAR_%d=value-%d\n", i, i)
		default:
			_, err = fmt.Fprintf(w, "APP_SETTING_%d=/opt/app/%d/lib:/usr/lib\n", i, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// csvRows is `nvidia-smi --query-gpu=... --format=csv` of n GPUs, each
// row another GPU: one snapshot that names a million GPUs. (The rows of a
// -l loop over 8 GPUs are many snapshots, which were bounded already.)
func csvRows(w io.Writer, n int) error {
	fmt.Fprintln(w, "timestamp, index, name, pci.bus_id, utilization.gpu [%], memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W]")
	t := start.Format("2006/01/02 15:04:05.000")
	for i := range n {
		if _, err := fmt.Fprintf(w, "%s, %d, NVIDIA H200, %08X:%02X:%02X.0, %d %%, %d MiB, 143771 MiB, %d, %d.%02d W\n",
			t, i, i>>16, i>>8&0xff, i&0xff, i%101, 100000+i%40000, 30+i%50, 100+i%600, i%100); err != nil {
			return err
		}
	}
	return nil
}

// appRows is `nvidia-smi --query-compute-apps=pid,process_name,used_memory
// --format=csv` of n processes.
func appRows(w io.Writer, n int) error {
	fmt.Fprintln(w, "pid, process_name, used_gpu_memory [MiB]")
	for i := range n {
		if _, err := fmt.Fprintf(w, "%d, python3 -m sglang.launch_server, %d MiB\n", 1000+i, i%1000); err != nil {
			return err
		}
	}
	return nil
}

// probeLines is coroner collect's probes.jsonl: n probes of /health, five
// seconds apart, failing in bursts.
func probeLines(w io.Writer, n int) error {
	for i := range n {
		at := start.Add(time.Duration(i) * 5 * time.Second).Format("2006-01-02T15:04:05.000Z")
		var err error
		if i%7 == 3 {
			_, err = fmt.Fprintf(w, `{"at":"%s","url":"http://127.0.0.1:30000/health","endpoint":"/health","status":0,"error":"context deadline exceeded (Client.Timeout exceeded while awaiting headers)","latency_ms":5000}`+"\n", at)
		} else {
			_, err = fmt.Fprintf(w, `{"at":"%s","url":"http://127.0.0.1:30000/health","endpoint":"/health","status":200,"latency_ms":%d.%d}`+"\n", at, 1+i%40, i%10)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pyspyFrames is a `py-spy dump` of one process with many threads, n
// frames in all, 20 a thread.
func pyspyFrames(w io.Writer, n int) error {
	fmt.Fprintln(w, "Process 4123: python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 8")
	fmt.Fprintln(w, "Python v3.12.8 (/usr/local/bin/python3.12)")
	fmt.Fprintln(w)
	for i := 0; i < n; i += 20 {
		state := "idle"
		if i%400 == 0 {
			state = "active"
		}
		fmt.Fprintf(w, "Thread %d (%s): \"Thread-%d (worker)\"\n", 5000+i/20, state, i/20)
		for f := range min(20, n-i) {
			if _, err := fmt.Fprintf(w, "    fn_%d_%d (pkg/module_%d.py:%d)\n", i/20, f, f, 100+f); err != nil {
				return err
			}
		}
	}
	return nil
}

// dfRows is `df` of a host with n mounts (container overlays, snaps).
func dfRows(w io.Writer, n int) error {
	fmt.Fprintln(w, "Filesystem     1K-blocks      Used Available Use% Mounted on")
	for i := range n {
		if _, err := fmt.Fprintf(w, "/dev/loop%d 1000 500 500 50%% /snap/x%d\n", i, i); err != nil {
			return err
		}
	}
	return nil
}

// meminfos is n captures of /proc/meminfo one after the other.
func meminfos(w io.Writer, n int) error {
	for range n {
		if _, err := io.WriteString(w, "MemTotal:       263855724 kB\nMemFree:        12345678 kB\nMemAvailable:   23456789 kB\n"+
			"Cached:          3456789 kB\nShmem:            123456 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"); err != nil {
			return err
		}
	}
	return nil
}

// xidLines is a kernel log of n Xid 79 lines.
func xidLines(w io.Writer, n int) error {
	for i := range n {
		if _, err := fmt.Fprintf(w, "[%d.123456] NVRM: Xid (PCI:0000:18:00): 79, pid=%d, GPU has fallen off the bus.\n", i, i); err != nil {
			return err
		}
	}
	return nil
}

// manyFiles writes n small files in one folder: most unknown, some logs.
func manyFiles(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		body := fmt.Sprintf("note %d: nothing to see here\n", i)
		if i%1000 == 0 {
			body = fmt.Sprintf("[2026-03-04 05:06:%02d] server_args=ServerArgs(model_path='m', tp_size=1)\n", i%60)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d.txt", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
