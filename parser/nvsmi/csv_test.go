package nvsmi

import (
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCSVComputeApps(t *testing.T) {
	path := "testdata/csv-r590-h200-apps.csv"
	p := sniffParse(t, path)
	assert.Equal(t, facts.KindNvidiaSMICSV, p.kind)
	assert.Empty(t, p.issues)
	require.Len(t, p.out.GPUs, 1)
	s := p.out.GPUs[0]
	assert.True(t, s.ProcsListed)
	assert.Equal(t, time.Date(2026, 7, 3, 22, 11, 9, 916e6, time.UTC), s.At)
	uuid := "GPU-00000000-0000-0000-0000-000000000000"
	want := []facts.GPUProcess{
		{Src: facts.Source{File: path, Line: 2}, GPU: -1, BusID: "00000000:83:00.0", UUID: uuid, PID: 10291, Name: "/root/tools/memhog", MemMiB: facts.V(2566)},
		{Src: facts.Source{File: path, Line: 3}, GPU: -1, BusID: "00000000:83:00.0", UUID: uuid, PID: 10293, Name: "/root/tools/memhog", MemMiB: facts.V(1542)},
		{Src: facts.Source{File: path, Line: 4}, GPU: -1, BusID: "00000000:83:00.0", UUID: uuid, PID: 10309, Name: "./gpu_burn", MemMiB: facts.V(28234)},
	}
	var got []facts.GPUProcess
	for _, pr := range s.Procs {
		got = append(got, *pr)
	}
	assert.Equal(t, want, got)
}

func TestCSVQueryGPU(t *testing.T) {
	tests := []struct {
		file   string
		issues []facts.IssueKind
		check  func(t *testing.T, out *facts.Facts)
	}{
		{
			// 590.48.01, the exporter's wide query: units, [N/A], an empty
			// last cell, unread fields (histogram, fabric.health).
			file: "csv-r590-h200-wide.csv",
			check: func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.GPUs, 1)
				g := out.GPUs[0].GPUs[0]
				assert.Equal(t, "00000000:83:00.0", g.BusID)
				assert.Equal(t, facts.V(5), g.PCIeGenCur)
				assert.Equal(t, facts.V(16), g.PCIeWidthCur)
				assert.Equal(t, "P0", g.PState)
				assert.Empty(t, g.ClockReasons)
				assert.Equal(t, map[string]float64{"sw_power_cap": 0}, g.ClockEventsUS)
				assert.Equal(t, facts.V(143771), g.MemTotalMiB)
				assert.Equal(t, facts.V(32362), g.MemUsedMiB)
				assert.Equal(t, "9.0", g.CC)
				assert.Equal(t, "dump", g.CCFrom)
				assert.Equal(t, facts.V(100), g.UtilGPU)
				assert.Equal(t, facts.V(52), g.TempC)
				assert.Equal(t, facts.V(627.40), g.PowerW)
				assert.Equal(t, facts.V(1980), g.SMClockMHz)
				assert.False(t, g.RemapPending)
				assert.Equal(t, "Completed", g.FabricState)
			},
		},
		{
			// DGX Spark: unified memory, "[N/A]" for memory.used.
			file: "csv-gb10.csv",
			check: func(t *testing.T, out *facts.Facts) {
				s := out.GPUs[0]
				assert.Equal(t, time.Date(2025, 11, 24, 14, 8, 55, 751e6, time.UTC), s.At)
				g := s.GPUs[0]
				assert.Equal(t, facts.V(0), g.UtilGPU)
				assert.Equal(t, facts.Val{}, g.MemUsedMiB, "[N/A] is absent, not 0")
				assert.Equal(t, facts.V(38), g.TempC)
				assert.Equal(t, -1, g.Index)
			},
		},
		{
			// nounits, the pre-535 clocks_throttle_reasons names, an
			// [Unknown Error] and an ERR! cell, and a cut last row.
			file:   "csv-r530-throttle-nounits.csv",
			issues: []facts.IssueKind{facts.IssueUnreadable, facts.IssueUnreadable, facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.GPUs, 2, "a snapshot per sample of the loop")
				s0, s1 := out.GPUs[0], out.GPUs[1]
				assert.Equal(t, "525.85.12", s0.Driver)
				assert.Equal(t, time.Date(2023, 5, 2, 10, 15, 1, 120e6, time.UTC), s0.At)
				assert.Equal(t, time.Date(2023, 5, 2, 10, 15, 2, 131e6, time.UTC), s1.At)
				require.Len(t, s0.GPUs, 2)
				a, b := s0.GPUs[0], s0.GPUs[1]
				assert.Equal(t, "NVIDIA A100-SXM4-40GB", a.Name)
				assert.Equal(t, "8.0", a.CC)
				assert.Equal(t, "name", a.CCFrom)
				assert.Equal(t, facts.V(99), a.UtilGPU)
				assert.Equal(t, facts.V(38211), a.MemUsedMiB)
				assert.Equal(t, facts.V(40960), a.MemTotalMiB)
				assert.Equal(t, facts.V(388.21), a.PowerW)
				assert.Equal(t, facts.V(400), a.PowerLimitW)
				assert.Equal(t, []string{"hw_slowdown", "hw_power_brake_slowdown"}, a.ClockReasons, "0x88, and hw_slowdown Active")
				assert.Equal(t, facts.V(0), a.ECCVolatileUncorr)
				assert.False(t, a.RetiredPagesPending)
				assert.Equal(t, facts.Val{}, b.UtilGPU)
				assert.Equal(t, facts.Val{}, b.PowerW)
				assert.Equal(t, []string{"utilization.gpu", "power.draw"}, b.ReadErrors)
				assert.Equal(t, []string{"sw_power_cap"}, b.ClockReasons)
				assert.Equal(t, facts.V(2), b.ECCVolatileUncorr)
				assert.True(t, b.RetiredPagesPending)
				require.Len(t, s1.GPUs, 2)
				cut := s1.GPUs[1]
				assert.Equal(t, 1, cut.Index)
				assert.Equal(t, "00000000:0f:00.0", cut.BusID, "what the cut row holds is kept")
				assert.False(t, cut.UtilGPU.OK)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p := sniffParse(t, "testdata/"+tc.file)
			assert.Equal(t, facts.KindNvidiaSMICSV, p.kind)
			var kinds []facts.IssueKind
			for _, is := range p.issues {
				kinds = append(kinds, is.Kind)
			}
			assert.Equal(t, tc.issues, kinds)
			tc.check(t, p.out)
		})
	}
}

func TestCSVIssueLines(t *testing.T) {
	p := sniffParse(t, "testdata/csv-r530-throttle-nounits.csv")
	require.Len(t, p.issues, 3)
	assert.Equal(t, 3, p.issues[0].Src.Line)
	assert.Equal(t, 3, p.issues[1].Src.Line)
	assert.Equal(t, 5, p.issues[2].Src.Line)
	assert.Equal(t, "CSV row has 5 fields, the header names 14", p.issues[2].Detail)
}

func TestCSVNoHeader(t *testing.T) {
	t.Run("query-gpu", func(t *testing.T) {
		p := sniffParse(t, "testdata/csv-noheader.csv")
		assert.Equal(t, facts.KindNvidiaSMICSV, p.kind)
		assert.GreaterOrEqual(t, p.score, 30)
		assert.Less(t, p.score, 90, "guessed content is never unmistakable")
		assert.Empty(t, p.issues)
		require.Len(t, p.out.GPUs, 1)
		s := p.out.GPUs[0]
		assert.Equal(t, "590.48.01", s.Driver)
		assert.Equal(t, time.Date(2026, 7, 3, 22, 11, 9, 763e6, time.UTC), s.At)
		g := s.GPUs[0]
		assert.Equal(t, 0, g.Index)
		assert.Equal(t, "NVIDIA H200", g.Name)
		assert.Equal(t, "00000000:83:00.0", g.BusID)
		assert.Equal(t, "P0", g.PState)
		assert.Equal(t, facts.V(100), g.UtilGPU)
		assert.Equal(t, facts.V(7), g.UtilMem)
		assert.Equal(t, facts.V(32362), g.MemUsedMiB)
		assert.Equal(t, facts.V(143771), g.MemTotalMiB)
		assert.Equal(t, facts.V(627.40), g.PowerW)
		assert.False(t, g.TempC.OK, "a bare number is not guessed")
		require.Len(t, p.out.Assumptions, 1)
		assert.Contains(t, p.out.Assumptions[0], "timestamp, index, name, pci.bus_id, driver_version, pstate, utilization.gpu, utilization.memory, memory.used, memory.total, ?, power.draw, clocks_event_reasons.active")
	})
	t.Run("compute-apps", func(t *testing.T) {
		path := "testdata/csv-noheader-apps.csv"
		p := sniffParse(t, path)
		assert.Equal(t, facts.KindNvidiaSMICSV, p.kind)
		assert.Empty(t, p.issues)
		require.Len(t, p.out.GPUs, 1)
		s := p.out.GPUs[0]
		assert.True(t, s.ProcsListed)
		require.Len(t, s.Procs, 2)
		assert.Equal(t, facts.GPUProcess{Src: facts.Source{File: path, Line: 1}, GPU: -1, BusID: "00000000:83:00.0", PID: 10291, Name: "/root/tools/memhog", MemMiB: facts.V(2566)}, *s.Procs[0])
		assert.Equal(t, 10309, s.Procs[1].PID)
		assert.Contains(t, p.out.Assumptions[0], "pci.bus_id, pid, process_name, used_memory")
	})
}

func TestCSVBadInput(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		issues []facts.IssueKind
		check  func(t *testing.T, out *facts.Facts)
	}{
		{
			name:   "process title with commas",
			text:   "pid, process_name, used_gpu_memory [MiB]\n4242, python -c import a,b, 100 MiB\n",
			issues: nil,
			check: func(t *testing.T, out *facts.Facts) {
				pr := out.GPUs[0].Procs[0]
				assert.Equal(t, "python -c import a,b", pr.Name)
				assert.Equal(t, facts.V(100), pr.MemMiB)
			},
		},
		{
			name:   "too many fields",
			text:   "index, memory.used [MiB]\n0, 5 MiB, 7\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				assert.Equal(t, facts.V(5), out.GPUs[0].GPUs[0].MemUsedMiB)
			},
		},
		{
			name:   "bad values",
			text:   "timestamp, index, memory.used [MiB], pci.bus_id, clocks_event_reasons.active, compute_cap\nnow, x, many MiB, nowhere, 0xZZ, nine\n",
			issues: []facts.IssueKind{facts.IssueMalformed, facts.IssueMalformed, facts.IssueMalformed, facts.IssueMalformed, facts.IssueMalformed, facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				g := out.GPUs[0].GPUs[0]
				assert.Equal(t, -1, g.Index)
				assert.False(t, g.MemUsedMiB.OK)
				assert.Empty(t, g.BusID)
				assert.Empty(t, g.CC)
				assert.True(t, out.GPUs[0].At.IsZero())
			},
		},
		{
			name:   "no header, nothing recognizable",
			text:   "1, 2, 3\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			check: func(t *testing.T, out *facts.Facts) {
				assert.Empty(t, out.GPUs, "no column was guessed, so nothing was read")
				assert.Empty(t, out.Assumptions)
			},
		},
		{
			name:   "driver failure",
			text:   "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.133\n",
			issues: nil,
			check: func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.GPUs, 1)
				require.Len(t, out.GPUs[0].Errors, 2)
				assert.Equal(t, "Failed to initialize NVML: Driver/library version mismatch", out.GPUs[0].Errors[0].Text)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseString("q.csv", tc.text, facts.KindNvidiaSMICSV)
			var kinds []facts.IssueKind
			for _, is := range p.issues {
				kinds = append(kinds, is.Kind)
			}
			assert.Equal(t, tc.issues, kinds)
			tc.check(t, p.out)
		})
	}
}
