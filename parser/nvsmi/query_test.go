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

// TestQueryEras reads -q text dumps of five driver eras, each built from the
// research notes' quoted examples: R418 (Volta, Single/Double Bit ECC, page
// retirement), R470 (Clocks Throttle Reasons, Power Readings, no Product
// Architecture), R535 (Clocks Event Reasons, GPU Power Readings, GPU Reset
// Status), R535 in MIG mode, R590 (55-column keys, Average/Instantaneous
// Power Draw, counters, GPU Recovery Action, a Processes list).
func TestQueryEras(t *testing.T) {
	type gpuWant struct {
		index                                 int
		bus, name, arch, cc, ccFrom, pstate   string
		memTotal, memUsed, util, utilMem      facts.Val
		temp, power, limit, sm, smMax, mem    facts.Val
		genCur, genMax, widthCur, widthMax    facts.Val
		replays, eccVol, eccAgg               facts.Val
		reasons                               []string
		retiredPending, remapPending, resetRq bool
		mig                                   bool
		persist, recovery, fabric             string
	}
	tests := []struct {
		file   string
		at     time.Time
		driver string
		cuda   string
		procs  []facts.GPUProcess
		listed bool
		gpus   []gpuWant
	}{
		{
			file: "q-r418-v100-ecc.txt", at: time.Date(2019, 11, 7, 3, 15, 52, 0, time.UTC),
			driver: "418.87.01", cuda: "10.1", listed: true,
			gpus: []gpuWant{{
				index: 0, bus: "00000000:00:1e.0", name: "Tesla V100-SXM2-16GB", arch: "Volta", cc: "7.0", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(16130), memUsed: facts.V(0), util: facts.V(0), utilMem: facts.V(0),
				temp: facts.V(33), power: facts.V(24.84), limit: facts.V(300), sm: facts.V(135), smMax: facts.V(1530), mem: facts.V(877),
				genCur: facts.V(3), genMax: facts.V(3), widthCur: facts.V(16), widthMax: facts.V(16),
				replays: facts.V(0), eccVol: facts.V(2), eccAgg: facts.V(3),
				reasons: []string{"gpu_idle"}, retiredPending: true, persist: "Enabled",
			}},
		},
		{
			file: "q-r470-a100.txt", at: time.Date(2022, 3, 15, 9, 41, 27, 0, time.UTC),
			driver: "470.103.01", cuda: "11.4", listed: true,
			procs: []facts.GPUProcess{{Src: facts.Source{Line: 152}, GPU: 0, BusID: "00000000:07:00.0", UUID: "GPU-6a1f3e2b-7c44-b0e9-1d2f-c3a4b5c6d7e8", PID: 23801, Type: "C", Name: "python3", MemMiB: facts.V(78111)}},
			gpus: []gpuWant{{
				index: 0, bus: "00000000:07:00.0", name: "NVIDIA A100-SXM4-80GB", arch: "Ampere", cc: "8.0", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(81251), memUsed: facts.V(78113), util: facts.V(97), utilMem: facts.V(61),
				temp: facts.V(63), power: facts.V(398.05), limit: facts.V(400), sm: facts.V(1080), smMax: facts.V(1410), mem: facts.V(1593),
				genCur: facts.V(4), genMax: facts.V(4), widthCur: facts.V(16), widthMax: facts.V(16),
				replays: facts.V(0), eccVol: facts.V(0), eccAgg: facts.V(0),
				reasons: []string{"sw_power_cap"}, persist: "Disabled",
			}},
		},
		{
			file: "q-r535-h100.txt", at: time.Date(2024, 7, 31, 11, 22, 39, 0, time.UTC),
			driver: "535.161.08", cuda: "12.2", listed: true,
			gpus: []gpuWant{{
				index: 0, bus: "00000000:19:00.0", name: "NVIDIA H100 80GB HBM3", arch: "Hopper", cc: "9.0", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(81559), memUsed: facts.V(0), util: facts.V(0), utilMem: facts.V(0),
				temp: facts.V(29), power: facts.V(67.74), limit: facts.V(700), sm: facts.V(345), smMax: facts.V(1980), mem: facts.V(2619),
				genCur: facts.V(5), genMax: facts.V(5), widthCur: facts.V(16), widthMax: facts.V(16),
				replays: facts.V(67), eccVol: facts.V(0), eccAgg: facts.V(0),
				reasons: []string{"hw_slowdown", "hw_power_brake_slowdown"}, persist: "Enabled", fabric: "Completed",
			}, {
				index: 1, bus: "00000000:3b:00.0", name: "NVIDIA H100 80GB HBM3", arch: "Hopper", cc: "9.0", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(81559), memUsed: facts.V(0), util: facts.V(0), utilMem: facts.V(0),
				temp: facts.V(31), power: facts.V(70.11), limit: facts.V(700), sm: facts.V(345), smMax: facts.V(1980), mem: facts.V(2619),
				genCur: facts.V(5), genMax: facts.V(5), widthCur: facts.V(16), widthMax: facts.V(16),
				replays: facts.V(0), eccVol: facts.V(0), eccAgg: facts.V(0),
				reasons: []string{"gpu_idle"}, persist: "Enabled", fabric: "Completed",
			}},
		},
		{
			file: "q-r535-a100-mig.txt", at: time.Date(2024, 2, 12, 8, 30, 5, 0, time.UTC),
			driver: "535.129.03", cuda: "12.2", listed: true,
			gpus: []gpuWant{{
				// The MIG devices' own memory and ECC counts are not the GPU's.
				index: 0, bus: "00000000:17:00.0", name: "NVIDIA A100-SXM4-80GB", arch: "Ampere", cc: "8.0", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(81920), memUsed: facts.V(49), eccVol: facts.V(0), eccAgg: facts.V(0),
				mig: true, persist: "Enabled",
			}},
		},
		{
			file: "q-r590-h200.txt", at: time.Date(2026, 7, 3, 22, 11, 9, 0, time.UTC),
			driver: "590.48.01", cuda: "13.1", listed: true,
			procs: []facts.GPUProcess{
				{Src: facts.Source{Line: 135}, GPU: 0, BusID: "00000000:83:00.0", UUID: "GPU-00000000-0000-0000-0000-000000000000", PID: 10291, Type: "C", Name: "/root/tools/memhog", MemMiB: facts.V(2566)},
				{Src: facts.Source{Line: 141}, GPU: 0, BusID: "00000000:83:00.0", UUID: "GPU-00000000-0000-0000-0000-000000000000", PID: 10293, Type: "C", Name: "/root/tools/memhog", MemMiB: facts.V(1542)},
				{Src: facts.Source{Line: 147}, GPU: 0, BusID: "00000000:83:00.0", UUID: "GPU-00000000-0000-0000-0000-000000000000", PID: 10309, Type: "C", Name: "./gpu_burn", MemMiB: facts.V(28234)},
			},
			gpus: []gpuWant{{
				index: 0, bus: "00000000:83:00.0", name: "NVIDIA H200", arch: "Hopper", cc: "9.0", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(143771), memUsed: facts.V(32362), util: facts.V(100), utilMem: facts.V(7),
				temp: facts.V(52), power: facts.V(627.32), limit: facts.V(700), sm: facts.V(1980), smMax: facts.V(1980), mem: facts.V(3201),
				genCur: facts.V(5), genMax: facts.V(5), widthCur: facts.V(16), widthMax: facts.V(16),
				replays: facts.V(0), eccVol: facts.V(0), eccAgg: facts.V(0),
				persist: "Enabled", recovery: "None",
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := "testdata/" + tc.file
			p := sniffParse(t, path)
			assert.Equal(t, facts.KindNvidiaSMIQ, p.kind)
			assert.Empty(t, p.issues)
			require.Len(t, p.out.GPUs, 1)
			s := p.out.GPUs[0]
			assert.Equal(t, facts.KindNvidiaSMIQ, s.Format)
			assert.Equal(t, tc.at, s.At)
			assert.Equal(t, tc.driver, s.Driver)
			assert.Equal(t, tc.cuda, s.CUDA)
			assert.Equal(t, tc.listed, s.ProcsListed)
			assert.False(t, s.Incomplete)
			require.Len(t, s.GPUs, len(tc.gpus))
			for i, w := range tc.gpus {
				g := s.GPUs[i]
				assert.Equal(t, w.index, g.Index)
				assert.Equal(t, w.bus, g.BusID)
				assert.Equal(t, w.name, g.Name)
				assert.Equal(t, w.arch, g.Arch)
				assert.Equal(t, w.cc, g.CC)
				assert.Equal(t, w.ccFrom, g.CCFrom)
				assert.Equal(t, w.pstate, g.PState)
				assert.Equal(t, w.memTotal, g.MemTotalMiB, "mem total")
				assert.Equal(t, w.memUsed, g.MemUsedMiB, "mem used")
				assert.Equal(t, w.util, g.UtilGPU, "util")
				assert.Equal(t, w.utilMem, g.UtilMem, "util mem")
				assert.Equal(t, w.temp, g.TempC, "temp")
				assert.Equal(t, w.power, g.PowerW, "power")
				assert.Equal(t, w.limit, g.PowerLimitW, "limit")
				assert.Equal(t, w.sm, g.SMClockMHz, "sm clock")
				assert.Equal(t, w.smMax, g.SMClockMaxMHz, "sm clock max")
				assert.Equal(t, w.mem, g.MemClockMHz, "mem clock")
				assert.Equal(t, w.genCur, g.PCIeGenCur, "gen cur")
				assert.Equal(t, w.genMax, g.PCIeGenMax, "gen max")
				assert.Equal(t, w.widthCur, g.PCIeWidthCur, "width cur")
				assert.Equal(t, w.widthMax, g.PCIeWidthMax, "width max")
				assert.Equal(t, w.replays, g.PCIeReplays, "replays")
				assert.Equal(t, w.eccVol, g.ECCVolatileUncorr, "ecc volatile")
				assert.Equal(t, w.eccAgg, g.ECCAggregateUncorr, "ecc aggregate")
				assert.Equal(t, w.reasons, g.ClockReasons)
				assert.Equal(t, w.retiredPending, g.RetiredPagesPending)
				assert.Equal(t, w.remapPending, g.RemapPending)
				assert.Equal(t, w.resetRq, g.ResetRequired)
				assert.Equal(t, w.mig, g.MIG)
				assert.Equal(t, w.persist, g.Persist)
				assert.Equal(t, w.recovery, g.RecoveryAction)
				assert.Equal(t, w.fabric, g.FabricState)
			}
			var procs []facts.GPUProcess
			for _, pr := range s.Procs {
				procs = append(procs, *pr)
			}
			for i := range tc.procs {
				tc.procs[i].Src.File = path
			}
			assert.Equal(t, tc.procs, procs)
		})
	}
}

func TestQueryCounters(t *testing.T) {
	g := sniffParse(t, "testdata/q-r590-h200.txt").out.GPUs[0].GPUs[0]
	assert.Equal(t, map[string]float64{"sw_power_cap": 0, "sync_boost": 0, "sw_thermal_slowdown": 0, "hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0}, g.ClockEventsUS)
	g = sniffParse(t, "testdata/q-r535-h100.txt").out.GPUs[0].GPUs[0]
	assert.Nil(t, g.ClockEventsUS, "R535 has no counters")
}

func TestQueryTruncated(t *testing.T) {
	p := sniffParse(t, "testdata/q-truncated.txt")
	require.Len(t, p.out.GPUs, 1)
	s := p.out.GPUs[0]
	assert.True(t, s.Incomplete)
	require.Len(t, s.GPUs, 1)
	g := s.GPUs[0]
	assert.Equal(t, 0, g.Index, "a cut dump still lists GPUs in index order")
	assert.Equal(t, "NVIDIA H100 80GB HBM3", g.Name)
	assert.Equal(t, facts.V(67), g.PCIeReplays, "what was printed is kept")
	assert.False(t, g.MemTotalMiB.OK)
	require.Len(t, p.issues, 1)
	assert.Equal(t, facts.IssueIncomplete, p.issues[0].Kind)
	assert.Equal(t, 44, p.issues[0].Src.Line)
	assert.Contains(t, p.issues[0].Detail, "1 of 8 GPUs")
}

// TestQueryCutInSecondBlock cuts a two-GPU dump after any line of the second
// block: every cut but the last line is Incomplete.
func TestQueryCutInSecondBlock(t *testing.T) {
	data, err := os.ReadFile("testdata/q-r535-h100.txt")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	second := 0
	for i, l := range lines {
		if l == "GPU 00000000:3B:00.0" {
			second = i
		}
	}
	require.NotZero(t, second)
	for cut := second + 1; cut <= len(lines); cut++ {
		p := parseString("q.txt", strings.Join(lines[:cut], "\n")+"\n", facts.KindNvidiaSMIQ)
		require.Len(t, p.out.GPUs, 1)
		s := p.out.GPUs[0]
		require.Len(t, s.GPUs, 2)
		if cut == len(lines) {
			assert.False(t, s.Incomplete, "whole dump")
			assert.Empty(t, p.issues)
		} else {
			assert.True(t, s.Incomplete, "cut after line %d", cut)
			require.Len(t, p.issues, 1)
			assert.Equal(t, facts.IssueIncomplete, p.issues[0].Kind)
		}
	}
}

func TestQueryGPULost(t *testing.T) {
	p := sniffParse(t, "testdata/q-gpu-lost.txt")
	assert.Equal(t, facts.KindNvidiaSMIQ, p.kind)
	require.Len(t, p.out.GPUs, 1)
	s := p.out.GPUs[0]
	require.Len(t, s.Errors, 1)
	assert.Equal(t, facts.GPUError{Src: facts.Source{File: "testdata/q-gpu-lost.txt", Line: 1}, BusID: "00000000:3b:00.0",
		Text: "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error"}, *s.Errors[0])
	require.Len(t, s.GPUs, 1)
	g := s.GPUs[0]
	assert.Equal(t, -1, g.Index, "one of two GPUs printed: the block order says nothing of the index")
	assert.True(t, g.ResetRequired)
	assert.Equal(t, facts.V(81559), g.MemTotalMiB)
	assert.False(t, g.MemUsedMiB.OK)
	assert.False(t, g.TempC.OK)
	assert.Empty(t, g.PState)
	assert.Equal(t, []string{"performance state", "fb memory usage/used", "fb memory usage/free", "temperature/gpu current temp"}, g.ReadErrors)
	var lines []int
	for _, is := range p.issues {
		assert.Equal(t, facts.IssueUnreadable, is.Kind)
		lines = append(lines, is.Src.Line)
	}
	assert.Equal(t, []int{21, 25, 26, 31}, lines)
	assert.False(t, s.Incomplete)
}

// TestQueryLoop reads `nvidia-smi -q -l`: one snapshot per dump.
func TestQueryLoop(t *testing.T) {
	data, err := os.ReadFile("testdata/q-r590-h200.txt")
	require.NoError(t, err)
	second := strings.Replace(string(data), "Fri Jul  3 22:11:09 2026", "Fri Jul  3 22:11:14 2026", 1)
	second = strings.Replace(second, "32362 MiB", "32400 MiB", 1)
	p := parseString("loop.txt", string(data)+second, facts.KindNvidiaSMIQ)
	assert.Empty(t, p.issues)
	require.Len(t, p.out.GPUs, 2)
	assert.Equal(t, time.Date(2026, 7, 3, 22, 11, 9, 0, time.UTC), p.out.GPUs[0].At)
	assert.Equal(t, time.Date(2026, 7, 3, 22, 11, 14, 0, time.UTC), p.out.GPUs[1].At)
	assert.Equal(t, facts.V(32362), p.out.GPUs[0].GPUs[0].MemUsedMiB)
	assert.Equal(t, facts.V(32400), p.out.GPUs[1].GPUs[0].MemUsedMiB)
	assert.Len(t, p.out.GPUs[1].Procs, 3)
	assert.Equal(t, time.Date(2026, 7, 3, 22, 11, 14, 0, time.UTC), p.out.Clocks["loop.txt"].Latest)
}

func TestQueryBadInput(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		issues []facts.IssueKind
		check  func(t *testing.T, out *facts.Facts)
	}{
		{
			name:   "not a number",
			text:   "==============NVSMI LOG==============\nAttached GPUs : 1\nGPU 00000000:01:00.0\n    Product Name : NVIDIA L4\n    FB Memory Usage\n        Total : lots MiB\n        Used : 12 MiB\n    Processes : None\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				g := out.GPUs[0].GPUs[0]
				assert.False(t, g.MemTotalMiB.OK)
				assert.Equal(t, facts.V(12), g.MemUsedMiB)
				assert.Equal(t, "8.9", g.CC)
			},
		},
		{
			name:   "banner only",
			text:   "\n==============NVSMI LOG==============\n\nTimestamp : Sat Jul  6 15:09:26 2024\n",
			issues: []facts.IssueKind{facts.IssueIncomplete},
			check: func(t *testing.T, out *facts.Facts) {
				assert.True(t, out.GPUs[0].Incomplete)
				assert.Empty(t, out.GPUs[0].GPUs)
			},
		},
		{
			name:   "stray line",
			text:   "==============NVSMI LOG==============\nAttached GPUs : 1\nGPU 00000000:01:00.0\n    Product Name : NVIDIA L4\n    Processes : None\nKilled\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				assert.Len(t, out.GPUs[0].GPUs, 1)
			},
		},
		{
			name:   "bad timestamp",
			text:   "==============NVSMI LOG==============\nTimestamp : yesterday\nAttached GPUs : 0\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				assert.True(t, out.GPUs[0].At.IsZero())
				assert.False(t, out.GPUs[0].Incomplete, "no GPU attached")
			},
		},
		{
			name: "CRLF and tabs",
			text: "==============NVSMI LOG==============\r\nAttached GPUs : 1\r\nGPU 00000000:01:00.0\r\n\tProduct Name : NVIDIA L4\r\n\tUtilization\r\n\t\tGpu : 42 %\r\n\tProcesses : None\r\n",
			check: func(t *testing.T, out *facts.Facts) {
				assert.Equal(t, facts.V(42), out.GPUs[0].GPUs[0].UtilGPU)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseString("q.txt", tc.text, facts.KindNvidiaSMIQ)
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

func TestRetiredAndRemapped(t *testing.T) {
	v100 := sniffParse(t, "testdata/q-r418-v100-ecc.txt").out.GPUs[0].GPUs[0]
	assert.Equal(t, facts.V(1), v100.RetiredPagesDBE)
	assert.False(t, v100.RemappedRowsUncorr.OK, "Volta has no row remapping")
	h100 := sniffParse(t, "testdata/q-r535-h100.txt").out.GPUs[0].GPUs[0]
	assert.False(t, h100.RetiredPagesDBE.OK, "N/A on Hopper")
	assert.Equal(t, facts.V(0), h100.RemappedRowsUncorr)
	x := sniffParse(t, corpus+"h200-x2/oom/t20/nvidia-smi-q.xml").out.GPUs[0].GPUs[1]
	assert.Equal(t, facts.V(0), x.RemappedRowsUncorr)
	assert.False(t, x.RetiredPagesDBE.OK)
	p := parseString("r.csv", "index, retired_pages.dbe, remapped_rows.uncorrectable, remapped_rows.failure\n0, [N/A], 3, Yes\n", facts.KindNvidiaSMICSV)
	g := p.out.GPUs[0].GPUs[0]
	assert.Equal(t, facts.V(3), g.RemappedRowsUncorr)
	assert.True(t, g.RemapFailure)
	assert.False(t, g.RetiredPagesDBE.OK)
}

// An excerpt of a GPU block, pasted without the banner and the "GPU
// 0000:..." header (the reset and ECC part, as people paste it), is still
// nvidia-smi -q and still says what state the GPU is in.
func TestQExcerptWithoutBanner(t *testing.T) {
	excerpt := strings.Join([]string{
		"    Product Name                          : NVIDIA H100 80GB HBM3",
		"    Product Architecture                  : Hopper",
		"    ECC Errors",
		"        Volatile",
		"            SRAM Correctable              : 0",
		"            SRAM Uncorrectable            : 2",
		"    Remapped Rows",
		"        Correctable Error                 : 0",
		"        Uncorrectable Error               : 1",
		"        Pending                           : Yes",
	}, "\n") + "\n"
	kind, score := Sniff("gpu.txt", []byte(excerpt))
	require.Equal(t, facts.KindNvidiaSMIQ, kind)
	assert.GreaterOrEqual(t, score, 70)
	p := parseString("gpu.txt", excerpt, kind)
	assert.Empty(t, p.issues, "an excerpt is not an incomplete dump")
	require.Len(t, p.out.GPUs, 1)
	require.Len(t, p.out.GPUs[0].GPUs, 1)
	g := p.out.GPUs[0].GPUs[0]
	assert.Equal(t, "NVIDIA H100 80GB HBM3", g.Name)

	// Indented "Key : value" prose that is not -q is not taken for it.
	k, _ := Sniff("notes.txt", []byte("    Name : value\n    Other : thing\n    Third : x\n"))
	assert.NotEqual(t, facts.KindNvidiaSMIQ, k)
}
