package procs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// bigAux builds a ps auxf listing of n processes: kernel threads, and
// servers with compile children whose forest prefixes and commands are long.
func bigAux(n int) string {
	var b strings.Builder
	b.WriteString("USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n")
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "root     %7d  0.0  0.0      0     0 ?        I<   04:24   0:00 [kworker/%d:1H-kblockd]\n", i+3, i%64)
		case 1:
			fmt.Fprintf(&b, "root     %7d 98.7  3.9 198347776 82313412 pts/0 Rl+ Jun09 1234:56 sglang::scheduler_DP1_TP%d_EP%d\n", i+3, i%8, i%8)
		case 2:
			fmt.Fprintf(&b, "root     %7d  0.0  0.0   7116  4240 ?        S    04:27   0:00  \\_ ninja -v\n", i+3)
		case 3:
			fmt.Fprintf(&b, "root     %7d  0.0  0.0   2816  1984 ?        S    04:27   0:00      \\_ /bin/sh -c /usr/local/cuda/bin/nvcc -MD -MF cuda.cuda.o.d -ccbin /opt/gcc/bin/gcc -DTORCH_EXTENSION_NAME=axpy_ext -c cuda.cu -o cuda.cuda.o\n", i+3)
		default:
			fmt.Fprintf(&b, "root     %7d 99.5  0.3 949912 944096 ?        R    04:27   1:03          \\_ cudafe++ --c++17 --static-host-stub --device-hidden-visibility --gnu_version=130300 --orig_src_file_name /tmp/torch_ext/axpy_ext/cuda.cu -o /tmp/x%d.cudafe1.cpp\n", i+3, i)
		}
	}
	return b.String()
}

func bigEo(n int) string {
	var b strings.Builder
	b.WriteString("  PID  PPID                  STARTED ELAPSED     TIME   RSS    VSZ STAT NLWP COMMAND         COMMAND\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%5d   924 Mon Nov 30 04:27:%02d 2026 %7d %8d 517776 21462344 Sl  33 python3         /opt/torch/.venv/bin/python3 /opt/torch/.venv/lib/python3.12/site-packages/torch/_inductor/compile_worker/__main__.py --workers=16\n",
			i+1000, i%60, 60-i%60, i%100)
	}
	return b.String()
}

func bigTop(n int) string {
	var b strings.Builder
	b.WriteString("top - 04:27:21 up 3 min,  0 user,  load average: 1.16, 0.53, 0.21\nTasks: 308 total,   3 running, 305 sleeping,   0 stopped,   0 zombie\n%Cpu(s):  5.6 us,  0.9 sy,  0.0 ni, 93.5 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\nMiB Mem : 257811.0 total, 252873.9 free,   2774.1 used,   2407.3 buff/cache\nMiB Swap:      0.0 total,      0.0 free,      0.0 used. 255036.9 avail Mem\n\n  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%5d root      20   0   20.5g 517776 228736 S   0.0   0.2   0:08.16 python3\n", i+1)
	}
	return b.String()
}

func benchParse(b *testing.B, text string, kind facts.Kind) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		issues := 0
		in := textio.NewInput("big.txt", strings.NewReader(text), 0, func(facts.Issue) { issues++ })
		Parse(in, kind, out)
		if len(out.Procs) != 1 || issues > 0 {
			b.Fatalf("%d snapshots, %d issues", len(out.Procs), issues)
		}
	}
}

func BenchmarkParseAuxf(b *testing.B) { benchParse(b, bigAux(100000), facts.KindPS) }
func BenchmarkParseEo(b *testing.B)   { benchParse(b, bigEo(100000), facts.KindPS) }
func BenchmarkParseTop(b *testing.B)  { benchParse(b, bigTop(100000), facts.KindTop) }
