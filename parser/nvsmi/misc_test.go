package nvsmi

import (
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
)

func TestNormalizeBusID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"00000000:19:00.0", "00000000:19:00.0"},
		{"00000000:3B:00.0", "00000000:3b:00.0"},   // -q, XML: upper-case hex
		{"0000:9b:00", "00000000:9b:00.0"},         // NVRM Xid: no function
		{"PCI:0000:9b:00", "00000000:9b:00.0"},     // NVRM Xid prefix
		{"pci:0000:9B:00", "00000000:9b:00.0"},     // any case
		{"0000:01:00.0", "00000000:01:00.0"},       // R375, NVRM GPU lines
		{"0000000F:01:00.0", "0000000f:01:00.0"},   // GB10
		{"19:00.0", "00000000:19:00.0"},            // no domain
		{" 00000000:00:06.0 ", "00000000:00:06.0"}, // padded cell
		{"GPU-00000000-1111", ""},                  // a UUID
		{"000000000:19:00.0", ""},                  // 9-digit domain
		{"0000:1g:00.0", ""},                       // not hex
		{"0000:19:00.10", ""},                      // function of two digits
		{"19", ""},                                 // bus alone
		{"", ""},
		{"N/A", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, NormalizeBusID(tc.in), "%q", tc.in)
	}
}

func TestCapability(t *testing.T) {
	tests := []struct{ name, arch, cc string }{
		// Every row of the research table, as nvidia-smi names the parts.
		{"Tesla V100-SXM2-16GB", "Volta", "7.0"},
		{"Tesla V100S-PCIE-32GB", "Volta", "7.0"},
		{"TITAN V", "Volta", "7.0"},
		{"Quadro GV100", "Volta", "7.0"},
		{"Tesla T4", "Turing", "7.5"},
		{"NVIDIA GeForce RTX 2080 SUPER", "Turing", "7.5"},
		{"Quadro RTX 8000", "Turing", "7.5"},
		{"Quadro RTX 4000", "Turing", "7.5"},
		{"NVIDIA TITAN RTX", "Turing", "7.5"},
		{"GeForce GTX 1660 Ti", "Turing", "7.5"},
		{"NVIDIA T1000", "Turing", "7.5"},
		{"NVIDIA A100-SXM4-80GB", "Ampere", "8.0"},
		{"NVIDIA A100 80GB PCIe", "Ampere", "8.0"},
		{"A100-SXM4-40GB", "Ampere", "8.0"},
		{"NVIDIA A800-SXM4-80GB", "Ampere", "8.0"},
		{"NVIDIA A30", "Ampere", "8.0"},
		{"NVIDIA A10", "Ampere", "8.6"},
		{"NVIDIA A10G", "Ampere", "8.6"},
		{"NVIDIA A40", "Ampere", "8.6"},
		{"NVIDIA A16", "Ampere", "8.6"},
		{"NVIDIA A2", "Ampere", "8.6"},
		{"NVIDIA RTX A6000", "Ampere", "8.6"},
		{"NVIDIA RTX A4500", "Ampere", "8.6"},
		{"NVIDIA GeForce RTX 3090", "Ampere", "8.6"},
		{"NVIDIA GeForce RTX 3090 Ti", "Ampere", "8.6"},
		{"NVIDIA Jetson AGX Orin", "Ampere", "8.7"},
		{"NVIDIA L4", "Ada Lovelace", "8.9"},
		{"NVIDIA L40", "Ada Lovelace", "8.9"},
		{"NVIDIA L40S", "Ada Lovelace", "8.9"},
		{"NVIDIA L20", "Ada Lovelace", "8.9"},
		{"NVIDIA RTX 6000 Ada Generation", "Ada Lovelace", "8.9"},
		{"NVIDIA RTX 4000 SFF Ada Generation", "Ada Lovelace", "8.9"},
		{"NVIDIA GeForce RTX 4090", "Ada Lovelace", "8.9"},
		{"NVIDIA GeForce RTX 4080 SUPER", "Ada Lovelace", "8.9"},
		{"NVIDIA H100 80GB HBM3", "Hopper", "9.0"},
		{"NVIDIA H100 PCIe", "Hopper", "9.0"},
		{"NVIDIA H100 NVL", "Hopper", "9.0"},
		{"NVIDIA H200", "Hopper", "9.0"},
		{"NVIDIA H200 NVL", "Hopper", "9.0"},
		{"NVIDIA GH200 480GB", "Hopper", "9.0"},
		{"NVIDIA H20", "Hopper", "9.0"},
		{"NVIDIA H800", "Hopper", "9.0"},
		{"NVIDIA B200", "Blackwell", "10.0"},
		{"NVIDIA GB200", "Blackwell", "10.0"},
		{"NVIDIA B300 SXM6 AC", "Blackwell", "10.3"},
		{"NVIDIA GB300", "Blackwell", "10.3"},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "Blackwell", "12.0"},
		{"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "Blackwell", "12.0"},
		{"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "Blackwell", "12.0"},
		{"NVIDIA RTX PRO 5000 Blackwell", "Blackwell", "12.0"},
		{"NVIDIA RTX PRO 4500 Blackwell", "Blackwell", "12.0"},
		{"NVIDIA RTX PRO 2000 Blackwell", "Blackwell", "12.0"},
		{"NVIDIA RTX PRO 6000 Blac", "Blackwell", "12.0"}, // cut by the table
		{"NVIDIA GeForce RTX 5090", "Blackwell", "12.0"},
		{"NVIDIA GeForce RTX 5080", "Blackwell", "12.0"},
		{"NVIDIA GeForce RTX 5070 Ti", "Blackwell", "12.0"},
		{"NVIDIA GB10", "Blackwell", "12.1"},
		{"Tesla P100-PCIE-16GB", "Pascal", "6.0"},
		{"Tesla P40", "Pascal", "6.1"},
		{"NVIDIA GeForce GTX 1080 Ti", "Pascal", "6.1"},
		{"Tesla M60", "Maxwell", "5.2"},
		{"Tesla K80", "Kepler", "3.7"},
	}
	for _, tc := range tests {
		arch, cc, ok := Capability(tc.name)
		assert.True(t, ok, tc.name)
		assert.Equal(t, tc.arch, arch, tc.name)
		assert.Equal(t, tc.cc, cc, tc.name)
	}
	for _, name := range []string{"", "NVIDIA GeForce ...", "AMD Instinct MI355X", "NVIDIA Graphics Device", "Intel Data Center GPU Max 1550"} {
		_, _, ok := Capability(name)
		assert.False(t, ok, name)
	}
}

func TestArchOnlyCapability(t *testing.T) {
	// A name the table does not know, with the architecture printed.
	g := &facts.GPU{Name: "NVIDIA Graphics Device", Arch: "Hopper"}
	finishGPU(g)
	assert.Equal(t, "9.0", g.CC)
	assert.Equal(t, "arch", g.CCFrom)
	g = &facts.GPU{Name: "NVIDIA Graphics Device", Arch: "Blackwell"}
	finishGPU(g)
	assert.Empty(t, g.CC, "Blackwell spans 10.0 to 12.1")
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name, head string
		kind       facts.Kind
		min, max   int
	}{
		{"x.txt", "\n==============NVSMI LOG==============\n\nTimestamp : x\n", facts.KindNvidiaSMIQ, 90, 100},
		{"x.txt", "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v13.dtd\">\n<nvidia_smi_log>\n", facts.KindNvidiaSMIXML, 90, 100},
		{"x.txt", "Mon Nov 30 04:24:38 2026       \n+----+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n", facts.KindNvidiaSMITable, 90, 100},
		{"x.txt", "# gpu    pwr  gtemp\n# Idx      W      C\n    0    630     53\n", facts.KindNvidiaSMIDmon, 90, 100},
		{"x.txt", "# gpu         pid   type     sm\n# Idx           #    C/G      %\n", facts.KindNvidiaSMIPmon, 90, 100},
		{"x.txt", "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\x1b[0m\nGPU0\t X \tNV18\t0-31\n", facts.KindNvidiaSMITopo, 90, 100},
		{"x.txt", "GPU 0: NVIDIA H200 (UUID: GPU-00000000-1111-2222-3333-000000000001)\n", facts.KindNvidiaSMIList, 90, 100},
		{"x.txt", "index, name, memory.used [MiB]\n0, NVIDIA H200, 0 MiB\n", facts.KindNvidiaSMICSV, 90, 100},
		{"x.txt", "pid, process_name, used_gpu_memory [MiB]\n", facts.KindNvidiaSMICSV, 90, 100},
		{"x.csv", "0, NVIDIA H200, 00000000:00:06.0, 0 MiB\n", facts.KindNvidiaSMICSV, 30, 69},
		{"nvidia-smi-q.txt", "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.\n", facts.KindNvidiaSMIQ, 70, 80},
		{"gpu.txt", "No devices were found\n", facts.KindNvidiaSMITable, 70, 80},
		// Names alone.
		{"nvidia-smi-topo.txt", "", facts.KindNvidiaSMITopo, 1, 29},
		{"nvidia-smi.xml", "garbage", facts.KindNvidiaSMIXML, 1, 29},
		{"dmon.log", "", facts.KindNvidiaSMIDmon, 1, 29},
		// Not nvidia-smi.
		{"server.log", "[2025-07-01 12:00:00 TP0] Load weight begin. avail mem=78.3 GB, took 1.2 s\n", "", 0, 0},
		{"ps.txt", "USER  PID %CPU %MEM    VSZ   RSS TTY STAT START   TIME COMMAND\n", "", 0, 0},
		{"notes.csv", "a,b,c\n1,2,3\n", "", 0, 0},
		{"check_env.txt", "Python: 3.12\nCUDA available: True\nNVIDIA Topology: \n\tGPU0\tGPU1\tCPU Affinity\n", "", 0, 0},
	}
	for _, tc := range tests {
		kind, score := Sniff(tc.name, []byte(tc.head))
		assert.Equal(t, tc.kind, kind, "%s %q", tc.name, tc.head)
		assert.GreaterOrEqual(t, score, tc.min, "%s %q", tc.name, tc.head)
		assert.LessOrEqual(t, score, tc.max, "%s %q", tc.name, tc.head)
	}
}

func TestParseCSVTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026/11/30 04:24:38.750", time.Date(2026, 11, 30, 4, 24, 38, 750e6, time.UTC), true},
		{" 2025/11/24 14:08:55.751 ", time.Date(2025, 11, 24, 14, 8, 55, 751e6, time.UTC), true},
		{"2024/02/29 23:59:59", time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC), true},
		{"2023/02/29 00:00:00.000", time.Time{}, false},
		{"2026/13/01 00:00:00.000", time.Time{}, false},
		{"2026/11/30 24:00:00.000", time.Time{}, false},
		{"2026/11/30 04:24:38.", time.Time{}, false},
		{"2026/11/30 04:24:38,750", time.Time{}, false},
		{"2026-11-30 04:24:38.750", time.Time{}, false},
		{"[N/A]", time.Time{}, false},
	}
	for _, tc := range tests {
		got, ok := parseCSVTime([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}
