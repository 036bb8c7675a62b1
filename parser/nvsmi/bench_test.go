package nvsmi

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Each benchmark parses a generated capture of about 100k lines, the size
// of a day of looping nvidia-smi output.

func benchParse(b *testing.B, text string, kind facts.Kind) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		in := textio.NewInput("bench", strings.NewReader(text), 0, nil)
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, kind, out)
		if len(out.GPUs) == 0 {
			b.Fatal("no snapshot")
		}
	}
}

func repeatFile(b *testing.B, path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	n := max(1, lines/strings.Count(string(data), "\n"))
	return strings.Repeat(string(data), n)
}

func BenchmarkParseQ(b *testing.B) {
	benchParse(b, repeatFile(b, corpus+"h200-x2/oom/t20/nvidia-smi-q.txt", 100_000), facts.KindNvidiaSMIQ)
}

func BenchmarkParseXML(b *testing.B) {
	benchParse(b, repeatFile(b, corpus+"h200-x2/oom/t20/nvidia-smi-q.xml", 100_000), facts.KindNvidiaSMIXML)
}

func BenchmarkParseTable(b *testing.B) {
	benchParse(b, repeatFile(b, corpus+"h200-x2/oom/t20/nvidia-smi.txt", 100_000), facts.KindNvidiaSMITable)
}

func BenchmarkParseCSV(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("timestamp, index, name, pci.bus_id, compute_cap, driver_version, pstate, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W], clocks.current.sm [MHz], clocks.current.memory [MHz], clocks_event_reasons.active\n")
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&sb, "2026/11/30 04:%02d:%02d.%03d, %d, NVIDIA H200, 00000000:00:0%d.0, 9.0, 580.159.04, P0, %d %%, 0 %%, 136025 MiB, 143771 MiB, 37, 121.63 W, 1980 MHz, 3201 MHz, 0x0000000000000001\n",
			i/2/60%60, i/2%60, i%1000, i%2, 6+i%2, i%101)
	}
	benchParse(b, sb.String(), facts.KindNvidiaSMICSV)
}

func BenchmarkParseDmon(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk \n# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz \n")
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&sb, "    %d    %3d     53     41    %3d      8      0      0      0      0   3201   1980 \n", i%8, 100+i%500, i%101)
	}
	benchParse(b, sb.String(), facts.KindNvidiaSMIDmon)
}
