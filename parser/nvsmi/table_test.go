package nvsmi

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	tests := []struct {
		file   string
		issues []facts.IssueKind
		check  func(t *testing.T, path string, s *facts.GPUSnapshot)
	}{
		{
			// The old 79-column layout (R525): cut names, an ERR! fan,
			// "E. Process", an ECC cell of N/A.
			file:   "table-r525-old.txt",
			issues: []facts.IssueKind{facts.IssueUnreadable},
			check: func(t *testing.T, path string, s *facts.GPUSnapshot) {
				assert.Equal(t, time.Date(2023, 8, 23, 16, 35, 42, 0, time.UTC), s.At)
				assert.Equal(t, "525.125.06", s.Driver)
				assert.Equal(t, "12.0", s.CUDA)
				require.Len(t, s.GPUs, 2)
				g0, g1 := s.GPUs[0], s.GPUs[1]
				assert.Equal(t, "NVIDIA GeForce ...", g0.Name)
				assert.Empty(t, g0.CC, "a cut name matches no product")
				assert.Equal(t, "Disabled", g0.Persist)
				assert.Equal(t, "00000000:01:00.0", g0.BusID)
				assert.Equal(t, facts.V(0), g0.ECCVolatileUncorr)
				assert.Equal(t, []string{"fan"}, g0.ReadErrors)
				assert.Equal(t, facts.V(38), g0.TempC)
				assert.Equal(t, "P5", g0.PState)
				assert.Equal(t, facts.V(49), g0.PowerW)
				assert.Equal(t, facts.V(450), g0.PowerLimitW)
				assert.Equal(t, facts.V(2021), g0.MemUsedMiB)
				assert.Equal(t, facts.V(23028), g0.MemTotalMiB)
				assert.Equal(t, facts.V(0), g0.UtilGPU)
				assert.Equal(t, "Exclusive_Process", g0.ComputeMode)
				assert.False(t, g1.ECCVolatileUncorr.OK)
				assert.Equal(t, facts.V(24564), g1.MemTotalMiB)
				assert.Equal(t, "Default", g1.ComputeMode)
				require.Len(t, s.Procs, 1)
				assert.Equal(t, facts.GPUProcess{Src: facts.Source{File: path, Line: 23}, GPU: 0, BusID: "00000000:01:00.0", PID: 2341, Type: "C", Name: "python", MemMiB: facts.V(2018)}, *s.Procs[0])
			},
		},
		{
			file: "table-r590-h200.txt",
			check: func(t *testing.T, path string, s *facts.GPUSnapshot) {
				assert.Equal(t, "590.48.01", s.Driver)
				assert.Equal(t, "13.1", s.CUDA)
				require.Len(t, s.GPUs, 1)
				g := s.GPUs[0]
				assert.Equal(t, 0, g.Index)
				assert.Equal(t, "NVIDIA H200", g.Name)
				assert.Equal(t, "9.0", g.CC)
				assert.Equal(t, facts.V(52), g.TempC)
				assert.Equal(t, facts.V(628), g.PowerW)
				assert.Equal(t, facts.V(32362), g.MemUsedMiB)
				assert.Equal(t, facts.V(100), g.UtilGPU)
				assert.False(t, g.MIG)
				var names []string
				var mem []float64
				for _, pr := range s.Procs {
					names = append(names, pr.Name)
					mem = append(mem, pr.MemMiB.V)
					assert.Equal(t, "00000000:83:00.0", pr.BusID)
				}
				assert.Equal(t, []string{"/root/tools/memhog", "/root/tools/memhog", "./gpu_burn"}, names)
				assert.Equal(t, []float64{2566, 1542, 28234}, mem)
				assert.Equal(t, 10309, s.Procs[2].PID)
			},
		},
		{
			// DGX Spark: memory "Not Supported", no power cap.
			file: "table-gb10.txt",
			check: func(t *testing.T, path string, s *facts.GPUSnapshot) {
				g := s.GPUs[0]
				assert.Equal(t, "NVIDIA GB10", g.Name)
				assert.Equal(t, "0000000f:01:00.0", g.BusID)
				assert.Equal(t, "Blackwell", g.Arch)
				assert.Equal(t, "12.1", g.CC)
				assert.Equal(t, facts.V(3), g.PowerW)
				assert.False(t, g.PowerLimitW.OK)
				assert.False(t, g.MemUsedMiB.OK)
				assert.False(t, g.MemTotalMiB.OK)
				assert.Equal(t, "P8", g.PState)
				require.Len(t, s.Procs, 2)
				assert.Equal(t, "sglang::scheduler_DP0_TP0_EP0", s.Procs[1].Name)
				assert.Equal(t, 2505781, s.Procs[1].PID)
				assert.Equal(t, facts.V(100998), s.Procs[1].MemMiB)
				assert.Equal(t, "G", s.Procs[0].Type)
			},
		},
		{
			// R550 with a lost GPU: the complaint comes first, the table
			// shows the GPUs that still answer.
			file: "table-lost.txt",
			check: func(t *testing.T, path string, s *facts.GPUSnapshot) {
				assert.Equal(t, time.Date(2024, 6, 28, 2, 17, 55, 0, time.UTC), s.At)
				require.Len(t, s.Errors, 1)
				assert.Equal(t, "00000000:3b:00.0", s.Errors[0].BusID)
				assert.Equal(t, 1, s.Errors[0].Src.Line)
				require.Len(t, s.GPUs, 1)
				assert.Equal(t, "NVIDIA H100 80GB HBM3", s.GPUs[0].Name)
				assert.Equal(t, facts.V(4), s.GPUs[0].MemUsedMiB)
				assert.Equal(t, facts.V(81559), s.GPUs[0].MemTotalMiB)
				assert.True(t, s.ProcsListed)
				assert.Empty(t, s.Procs)
			},
		},
		{
			file: "table-nodriver.txt",
			check: func(t *testing.T, path string, s *facts.GPUSnapshot) {
				assert.Empty(t, s.GPUs)
				require.Len(t, s.Errors, 1)
				assert.True(t, strings.HasPrefix(s.Errors[0].Text, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."))
				assert.Empty(t, s.Errors[0].BusID)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := "testdata/" + tc.file
			p := sniffParse(t, path)
			assert.Equal(t, facts.KindNvidiaSMITable, p.kind)
			var kinds []facts.IssueKind
			for _, is := range p.issues {
				kinds = append(kinds, is.Kind)
			}
			assert.Equal(t, tc.issues, kinds)
			require.Len(t, p.out.GPUs, 1)
			tc.check(t, path, p.out.GPUs[0])
		})
	}
}

// TestTableLoop reads `nvidia-smi -l`: a table per sample.
func TestTableLoop(t *testing.T) {
	data, err := os.ReadFile(corpus + "h200-x2/00-idle/nvidia-smi.txt")
	require.NoError(t, err)
	oom, err := os.ReadFile(corpus + "h200-x2/oom/t20/nvidia-smi.txt")
	require.NoError(t, err)
	p := parseString("loop.txt", string(data)+string(oom), facts.KindNvidiaSMITable)
	assert.Empty(t, p.issues)
	require.Len(t, p.out.GPUs, 2)
	assert.Equal(t, facts.V(0), p.out.GPUs[0].GPUs[0].MemUsedMiB)
	assert.Equal(t, facts.V(136025), p.out.GPUs[1].GPUs[0].MemUsedMiB)
	assert.Empty(t, p.out.GPUs[0].Procs)
	assert.Len(t, p.out.GPUs[1].Procs, 1)
	assert.Equal(t, 25, p.out.GPUs[1].Src.Line, "the second table starts after the 24 lines of the first")
}

func TestTableBadInput(t *testing.T) {
	data, err := os.ReadFile("testdata/table-r590-h200.txt")
	require.NoError(t, err)
	tests := []struct {
		name   string
		text   string
		issues []facts.IssueKind
		check  func(t *testing.T, out *facts.Facts)
	}{
		{
			name:   "garbled cells",
			text:   strings.Replace(string(data), "| N/A   52C    P0            628W /  700W |   32362MiB / 143771MiB |", "| N/A   52C    P0            628W  |   32362MiB of 143771MiB |", 1),
			issues: []facts.IssueKind{facts.IssueMalformed, facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				g := out.GPUs[0].GPUs[0]
				assert.False(t, g.TempC.OK)
				assert.False(t, g.MemUsedMiB.OK)
				assert.Equal(t, facts.V(100), g.UtilGPU, "the rest of the row is read")
			},
		},
		{
			name:   "cut in the GPU rows",
			text:   strings.Join(strings.Split(string(data), "\n")[:10], "\n") + "\n",
			issues: nil,
			check: func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.GPUs[0].GPUs, 1)
				assert.Equal(t, facts.V(32362), out.GPUs[0].GPUs[0].MemUsedMiB)
				assert.False(t, out.GPUs[0].ProcsListed)
			},
		},
		{
			name:   "junk line",
			text:   string(data) + "Segmentation fault (core dumped)\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				assert.Len(t, out.GPUs[0].Procs, 3)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseString("t.txt", tc.text, facts.KindNvidiaSMITable)
			var kinds []facts.IssueKind
			for _, is := range p.issues {
				kinds = append(kinds, is.Kind)
			}
			assert.Equal(t, tc.issues, kinds)
			require.NotEmpty(t, p.out.GPUs)
			tc.check(t, p.out)
		})
	}
}

func TestMon(t *testing.T) {
	t.Run("dmon 590", func(t *testing.T) {
		p := sniffParse(t, "testdata/dmon-r590.txt")
		assert.Equal(t, facts.KindNvidiaSMIDmon, p.kind)
		assert.Empty(t, p.issues)
		require.Len(t, p.out.GPUs, 2, "two samples of two GPUs")
		s0, s1 := p.out.GPUs[0], p.out.GPUs[1]
		assert.Equal(t, facts.KindNvidiaSMIDmon, s0.Format)
		assert.True(t, s0.At.IsZero(), "dmon prints no time without -o T")
		require.Len(t, s0.GPUs, 2)
		g := s0.GPUs[0]
		assert.Equal(t, 0, g.Index)
		assert.Equal(t, facts.V(630), g.PowerW)
		assert.Equal(t, facts.V(53), g.TempC)
		assert.Equal(t, facts.V(100), g.UtilGPU)
		assert.Equal(t, facts.V(8), g.UtilMem)
		assert.Equal(t, facts.V(3201), g.MemClockMHz)
		assert.Equal(t, facts.V(1980), g.SMClockMHz)
		assert.Equal(t, facts.V(345), s0.GPUs[1].SMClockMHz)
		assert.Equal(t, facts.V(627), s1.GPUs[0].PowerW)
		assert.Equal(t, facts.Val{}, s1.GPUs[1].UtilGPU, "- is absent")
		assert.Equal(t, 6, s1.GPUs[1].Src.Line)
	})
	t.Run("dmon old -s u", func(t *testing.T) {
		p := sniffParse(t, "testdata/dmon-old-u.txt")
		assert.Equal(t, facts.KindNvidiaSMIDmon, p.kind)
		assert.Empty(t, p.issues)
		require.Len(t, p.out.GPUs, 3)
		var util []float64
		for _, s := range p.out.GPUs {
			require.Len(t, s.GPUs, 1)
			util = append(util, s.GPUs[0].UtilGPU.V)
			assert.False(t, s.GPUs[0].PowerW.OK)
		}
		assert.Equal(t, []float64{0, 12, 97}, util)
	})
	t.Run("dmon -o DT", func(t *testing.T) {
		p := sniffParse(t, "testdata/dmon-dt.txt")
		assert.Equal(t, facts.KindNvidiaSMIDmon, p.kind)
		assert.Empty(t, p.issues)
		require.Len(t, p.out.GPUs, 2)
		assert.Equal(t, time.Date(2024, 11, 5, 14, 2, 11, 0, time.UTC), p.out.GPUs[0].At)
		assert.Equal(t, time.Date(2024, 11, 5, 14, 2, 12, 0, time.UTC), p.out.GPUs[1].At)
		assert.Equal(t, facts.V(71234), p.out.GPUs[1].GPUs[0].MemUsedMiB, "fb")
		assert.Equal(t, facts.V(99), p.out.GPUs[1].GPUs[0].UtilGPU)
		assert.Equal(t, facts.Clock{NoZone: true, Latest: time.Date(2024, 11, 5, 14, 2, 12, 0, time.UTC)}, p.out.Clocks["testdata/dmon-dt.txt"])
	})
	t.Run("pmon 590", func(t *testing.T) {
		path := "testdata/pmon-r590.txt"
		p := sniffParse(t, path)
		assert.Equal(t, facts.KindNvidiaSMIPmon, p.kind)
		assert.Empty(t, p.issues)
		require.Len(t, p.out.GPUs, 2)
		s := p.out.GPUs[0]
		assert.True(t, s.ProcsListed)
		assert.Empty(t, s.GPUs)
		require.Len(t, s.Procs, 2, "GPU 1 is idle")
		assert.Equal(t, facts.GPUProcess{Src: facts.Source{File: path, Line: 3}, GPU: 0, PID: 10291, Type: "C", Name: "memhog"}, *s.Procs[0])
		assert.Equal(t, facts.GPUProcess{Src: facts.Source{File: path, Line: 4}, GPU: 0, PID: 10309, Type: "C", Name: "gpu_burn", SMUtil: facts.V(99)}, *s.Procs[1])
		assert.Equal(t, facts.V(98), p.out.GPUs[1].Procs[1].SMUtil)
	})
	t.Run("bad rows", func(t *testing.T) {
		p := parseString("d.txt", "    0  1  2\n# gpu   sm   mem\n# Idx   %   %\n    0   x   3\n    zero  1  1\n    1   5\n", facts.KindNvidiaSMIDmon)
		var lines []int
		for _, is := range p.issues {
			assert.Equal(t, facts.IssueMalformed, is.Kind)
			lines = append(lines, is.Src.Line)
		}
		assert.Equal(t, []int{1, 4, 5, 6}, lines)
		require.Len(t, p.out.GPUs, 1)
		require.Len(t, p.out.GPUs[0].GPUs, 2)
		assert.Equal(t, facts.V(3), p.out.GPUs[0].GPUs[0].UtilMem)
		assert.Equal(t, facts.V(5), p.out.GPUs[0].GPUs[1].UtilGPU)
	})
}

func TestTopo(t *testing.T) {
	t.Run("pcie 4 gpus, 2 nics", func(t *testing.T) {
		p := sniffParse(t, "testdata/topo-pcie-4gpu.txt")
		assert.Equal(t, facts.KindNvidiaSMITopo, p.kind)
		assert.Empty(t, p.issues)
		require.Len(t, p.out.Topo, 1)
		topo := p.out.Topo[0]
		assert.Equal(t, []string{"GPU0", "GPU1", "GPU2", "GPU3"}, topo.GPUs)
		assert.Equal(t, [][]string{
			{"X", "PIX", "NODE", "SYS"},
			{"PIX", "X", "NODE", "SYS"},
			{"NODE", "NODE", "X", "SYS"},
			{"SYS", "SYS", "SYS", "X"},
		}, topo.Links)
		assert.False(t, topo.NVLinked())
		assert.Equal(t, []string{"NIC0", "NIC1"}, topo.NICs)
		assert.Equal(t, []string{"mlx5_0", "mlx5_1"}, topo.NICDevices)
		assert.Equal(t, [][]string{{"PIX", "SYS"}, {"PIX", "SYS"}, {"NODE", "SYS"}, {"SYS", "PIX"}}, topo.NICLinks)
		assert.Equal(t, []string{"0-15,32-47", "0-15,32-47", "0-15,32-47", "16-31,48-63"}, topo.CPUAffinity)
		assert.Equal(t, []string{"0", "0", "0", "1"}, topo.NUMAAffinity)
	})
	t.Run("old SOC, device-named NIC", func(t *testing.T) {
		p := sniffParse(t, "testdata/topo-old-soc.txt")
		assert.Equal(t, facts.KindNvidiaSMITopo, p.kind)
		assert.Empty(t, p.issues)
		topo := p.out.Topo[0]
		assert.Equal(t, [][]string{{"X", "SOC"}, {"SOC", "X"}}, topo.Links)
		assert.Equal(t, []string{"mlx5_0"}, topo.NICs)
		assert.Equal(t, []string{"mlx5_0"}, topo.NICDevices)
		assert.Equal(t, [][]string{{"PHB"}, {"SOC"}}, topo.NICLinks)
		assert.Equal(t, []string{"0-11", "12-23"}, topo.CPUAffinity)
		assert.Nil(t, topo.NUMAAffinity)
	})
	t.Run("pasted with spaces, DGX A100 row", func(t *testing.T) {
		text := "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n" +
			"GPU0     X      NV12    PXB     48-63,176-191   3               N/A\n" +
			"GPU1    NV12     X      PXB     48-63,176-191   3               N/A\n"
		p := parseString("topo.txt", text, facts.KindNvidiaSMITopo)
		assert.Empty(t, p.issues)
		topo := p.out.Topo[0]
		assert.Equal(t, [][]string{{"X", "NV12"}, {"NV12", "X"}}, topo.Links)
		assert.True(t, topo.NVLinked())
		assert.Equal(t, []string{"48-63,176-191", "48-63,176-191"}, topo.CPUAffinity)
		assert.Equal(t, []string{"3", "3"}, topo.NUMAAffinity)
	})
	t.Run("bad input", func(t *testing.T) {
		text := "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tWARP\t0-3\nGPU7\t X \nhello\n"
		p := parseString("topo.txt", text, facts.KindNvidiaSMITopo)
		var kinds []facts.IssueKind
		var lines []int
		for _, is := range p.issues {
			kinds = append(kinds, is.Kind)
			lines = append(lines, is.Src.Line)
		}
		assert.Equal(t, []facts.IssueKind{facts.IssueMalformed, facts.IssueMalformed, facts.IssueMalformed, facts.IssueIncomplete}, kinds)
		assert.Equal(t, []int{2, 3, 4, 4}, lines)
		require.Len(t, p.out.Topo, 1)
		assert.Equal(t, [][]string{{"X", "WARP"}, {"", ""}}, p.out.Topo[0].Links)
	})
	t.Run("p2p matrix is not a link matrix", func(t *testing.T) {
		text := "\tGPU0\tGPU1\nGPU0\tX\tOK\nGPU1\tOK\tX\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n"
		p := parseString("topo.txt", text, facts.KindNvidiaSMITopo)
		assert.Empty(t, p.out.Topo)
		require.Len(t, p.issues, 1)
		assert.Equal(t, facts.IssueUnrecognized, p.issues[0].Kind)
	})
}

func TestList(t *testing.T) {
	path := "testdata/list-mig.txt"
	p := sniffParse(t, path)
	assert.Equal(t, facts.KindNvidiaSMIList, p.kind)
	assert.Empty(t, p.issues)
	assert.Equal(t, []*facts.GPUListEntry{
		{Src: facts.Source{File: path, Line: 1}, Index: 0, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-4e1f7a2c-93d0-4b8e-a1c2-d3e4f5a6b7c8", Arch: "Ampere", CC: "8.0"},
		{Src: facts.Source{File: path, Line: 4}, Index: 1, Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", Arch: "Ampere", CC: "8.0"},
	}, p.out.GPUList)

	p = parseString("l.txt", "GPU 0: Tesla K80\nNo devices were found\nwhat\n", facts.KindNvidiaSMIList)
	require.Len(t, p.out.GPUList, 1)
	assert.Equal(t, "Tesla K80", p.out.GPUList[0].Name)
	assert.Empty(t, p.out.GPUList[0].UUID)
	require.Len(t, p.out.GPUs, 1)
	assert.Equal(t, "No devices were found", p.out.GPUs[0].Errors[0].Text)
	require.Len(t, p.issues, 1)
	assert.Equal(t, 3, p.issues[0].Src.Line)
}
