package nvsmi

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCorpusKindsAndNoIssues is the acceptance test of issue 4: every
// nvidia-smi file of the real H200 captures is detected as the right kind and
// parses without a single parse issue.
func TestCorpusKindsAndNoIssues(t *testing.T) {
	want := map[string]facts.Kind{
		"h200-x2/nvidia-smi-L.txt":                facts.KindNvidiaSMIList,
		"h200-x2/nvidia-smi-q-d.txt":              facts.KindNvidiaSMIQ,
		"h200-x2/topo.txt":                        facts.KindNvidiaSMITopo,
		"h200-x1/cgroup-oom/t2/query-gpu.csv":     facts.KindNvidiaSMICSV,
		"h200-x1/defunct/t5/query-gpu.csv":        facts.KindNvidiaSMICSV,
		"h200-x1/torch-compile/t15/query-gpu.csv": facts.KindNvidiaSMICSV,
		"h200-x1/torch-compile/t30/query-gpu.csv": facts.KindNvidiaSMICSV,
	}
	for _, dir := range []string{"00-idle", "jit-compile/t12", "jit-compile/t27", "oom/t20"} {
		d := "h200-x2/" + dir + "/"
		want[d+"nvidia-smi.txt"] = facts.KindNvidiaSMITable
		want[d+"nvidia-smi-q.txt"] = facts.KindNvidiaSMIQ
		want[d+"nvidia-smi-q.xml"] = facts.KindNvidiaSMIXML
		want[d+"query-gpu.csv"] = facts.KindNvidiaSMICSV
		want[d+"compute-apps.csv"] = facts.KindNvidiaSMICSV
	}
	for file, kind := range want {
		t.Run(file, func(t *testing.T) {
			p := sniffParse(t, corpus+file)
			assert.Equal(t, kind, p.kind)
			assert.GreaterOrEqual(t, p.score, 70, "content must be unmistakable")
			assert.Empty(t, p.issues)
			n := len(p.out.GPUs) + len(p.out.Topo) + len(p.out.GPUList)
			assert.Positive(t, n, "no facts")
		})
	}
}

// TestCorpusNotMine checks that the other evidence of the corpus is left to
// its own parsers.
func TestCorpusNotMine(t *testing.T) {
	var files []string
	for _, pat := range []string{"h200-x*/*", "h200-x*/*/*", "h200-x*/*/*/*", "fulllogs/*/*"} {
		m, err := filepath.Glob(corpus + pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	for _, f := range files {
		base := filepath.Base(f)
		switch {
		case base == "topo.txt" || base == "nvidia-smi-L.txt" || base == "nvidia-smi-q-d.txt",
			base == "nvidia-smi.txt" || base == "nvidia-smi-q.txt" || base == "nvidia-smi-q.xml",
			base == "query-gpu.csv" || base == "compute-apps.csv":
			continue
		}
		if isDir(f) {
			continue
		}
		p := sniffOnly(t, f)
		assert.Less(t, p.score, 30, "%s sniffed as %s", f, p.kind)
	}
}

func TestCorpusFacts(t *testing.T) {
	oom := "h200-x2/oom/t20/"
	at := time.Date(2026, 11, 30, 4, 28, 26, 0, time.UTC)
	// The three full dumps of the OOM snapshot agree: GPU 0 holds 136025 MiB
	// of 143771 (python3, pid 1069, 136016 MiB), GPU 1 holds 4 MiB.
	for _, file := range []string{"nvidia-smi-q.txt", "nvidia-smi-q.xml", "nvidia-smi.txt"} {
		t.Run(file, func(t *testing.T) {
			p := sniffParse(t, corpus+oom+file)
			require.Len(t, p.out.GPUs, 1)
			s := p.out.GPUs[0]
			assert.Equal(t, at, s.At)
			assert.Equal(t, "nvidia-smi timestamp", s.AtFrom)
			assert.Equal(t, "580.159.04", s.Driver)
			assert.Equal(t, "13.0", s.CUDA)
			assert.False(t, s.Incomplete)
			assert.True(t, s.ProcsListed)
			require.Len(t, s.GPUs, 2)
			g0, g1 := s.GPUs[0], s.GPUs[1]
			for i, g := range s.GPUs {
				assert.Equal(t, i, g.Index)
				assert.Equal(t, "NVIDIA H200", g.Name)
				assert.Equal(t, "Hopper", g.Arch)
				assert.Equal(t, "9.0", g.CC)
				assert.Equal(t, facts.V(143771), g.MemTotalMiB)
				assert.Equal(t, facts.V(0), g.UtilGPU)
				assert.Equal(t, facts.V(37), g.TempC)
				assert.Equal(t, facts.V(700), g.PowerLimitW)
				assert.Equal(t, "P0", g.PState)
				assert.Equal(t, "Enabled", g.Persist)
				assert.Equal(t, facts.V(0), g.ECCVolatileUncorr)
			}
			assert.Equal(t, "00000000:00:06.0", g0.BusID)
			assert.Equal(t, "00000000:00:07.0", g1.BusID)
			assert.Equal(t, facts.V(136025), g0.MemUsedMiB)
			assert.Equal(t, facts.V(4), g1.MemUsedMiB)
			require.Len(t, s.Procs, 1)
			pr := s.Procs[0]
			assert.Equal(t, 0, pr.GPU)
			assert.Equal(t, "00000000:00:06.0", pr.BusID)
			assert.Equal(t, 1069, pr.PID)
			assert.Equal(t, "C", pr.Type)
			assert.Equal(t, "python3", pr.Name)
			if file == "nvidia-smi.txt" {
				// The table cut the number: "13601...".
				assert.False(t, pr.MemMiB.OK)
			} else {
				assert.Equal(t, facts.V(136016), pr.MemMiB)
			}
			assert.Equal(t, facts.Clock{NoZone: true, Latest: at}, p.out.Clocks[corpus+oom+file])
		})
	}

	t.Run("q text details", func(t *testing.T) {
		s := sniffParse(t, corpus+oom+"nvidia-smi-q.txt").out.GPUs[0]
		g0, g1 := s.GPUs[0], s.GPUs[1]
		assert.Equal(t, "GPU-00000000-1111-2222-3333-000000000001", g0.UUID)
		assert.Equal(t, "name", g0.CCFrom, "-q text prints no compute capability")
		assert.Equal(t, facts.V(121.56), g0.PowerW, "Average Power Draw")
		assert.Equal(t, facts.V(80.94), g1.PowerW)
		assert.Equal(t, facts.V(1980), g0.SMClockMHz)
		assert.Equal(t, facts.V(345), g1.SMClockMHz)
		assert.Equal(t, facts.V(1980), g0.SMClockMaxMHz)
		assert.Equal(t, facts.V(3201), g0.MemClockMHz)
		assert.Empty(t, g0.ClockReasons)
		assert.Equal(t, []string{"gpu_idle"}, g1.ClockReasons)
		assert.Equal(t, facts.V(5), g0.PCIeGenCur)
		assert.Equal(t, facts.V(5), g0.PCIeGenMax)
		assert.Equal(t, facts.V(16), g0.PCIeWidthCur)
		assert.Equal(t, facts.V(16), g0.PCIeWidthMax)
		assert.Equal(t, "None", g0.RecoveryAction)
		assert.False(t, g0.ResetRequired)
		assert.False(t, g0.RemapPending)
		assert.Equal(t, "Completed", g0.FabricState)
		assert.Equal(t, "Success", g0.FabricStatus)
		assert.Equal(t, map[string]float64{"sw_power_cap": 0, "sync_boost": 0, "sw_thermal_slowdown": 0, "hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0}, g0.ClockEventsUS)
		assert.Equal(t, 255, s.Procs[0].Src.Line)
		assert.Equal(t, 9, g0.Src.Line)
	})

	t.Run("query-gpu csv", func(t *testing.T) {
		p := sniffParse(t, corpus+oom+"query-gpu.csv")
		require.Len(t, p.out.GPUs, 1)
		s := p.out.GPUs[0]
		assert.Equal(t, time.Date(2026, 11, 30, 4, 28, 27, 131e6, time.UTC), s.At)
		assert.Equal(t, "580.159.04", s.Driver)
		assert.False(t, s.ProcsListed)
		require.Len(t, s.GPUs, 2)
		g0, g1 := s.GPUs[0], s.GPUs[1]
		assert.Equal(t, "dump", g0.CCFrom)
		assert.Equal(t, "9.0", g0.CC)
		assert.Equal(t, "Hopper", g0.Arch, "from the name table")
		assert.Equal(t, facts.V(136025), g0.MemUsedMiB)
		assert.Equal(t, facts.V(4), g1.MemUsedMiB)
		assert.Equal(t, facts.V(143771), g1.MemTotalMiB)
		assert.Equal(t, facts.V(121.63), g0.PowerW)
		assert.Equal(t, facts.V(1980), g0.SMClockMHz)
		assert.Equal(t, facts.V(345), g1.SMClockMHz)
		assert.Equal(t, facts.V(0), g0.UtilMem)
		assert.Empty(t, g0.ClockReasons, "0x0000000000000000")
		assert.Equal(t, []string{"gpu_idle"}, g1.ClockReasons, "0x0000000000000001")
		assert.Equal(t, 3, g1.Src.Line)
		assert.Equal(t, time.Date(2026, 11, 30, 4, 28, 27, 138e6, time.UTC), p.out.Clocks[corpus+oom+"query-gpu.csv"].Latest)
	})

	t.Run("compute-apps csv", func(t *testing.T) {
		s := sniffParse(t, corpus+oom+"compute-apps.csv").out.GPUs[0]
		assert.True(t, s.ProcsListed)
		assert.Empty(t, s.GPUs)
		require.Len(t, s.Procs, 1)
		assert.Equal(t, facts.GPUProcess{Src: facts.Source{File: corpus + oom + "compute-apps.csv", Line: 2}, GPU: -1, PID: 1069, Name: "python3", MemMiB: facts.V(136016)}, *s.Procs[0])

		idle := sniffParse(t, corpus+"h200-x2/00-idle/compute-apps.csv").out.GPUs
		require.Len(t, idle, 1)
		assert.True(t, idle[0].ProcsListed, "the header alone says: no compute process")
		assert.Empty(t, idle[0].Procs)
	})

	t.Run("idle table", func(t *testing.T) {
		s := sniffParse(t, corpus+"h200-x2/00-idle/nvidia-smi.txt").out.GPUs[0]
		assert.Equal(t, time.Date(2026, 11, 30, 4, 24, 38, 0, time.UTC), s.At)
		assert.True(t, s.ProcsListed)
		assert.Empty(t, s.Procs, "No running processes found")
		require.Len(t, s.GPUs, 2)
		assert.Equal(t, facts.V(0), s.GPUs[0].MemUsedMiB)
		assert.Equal(t, facts.V(79), s.GPUs[0].PowerW)
		assert.Equal(t, facts.V(81), s.GPUs[1].PowerW)
		assert.Equal(t, facts.V(38), s.GPUs[1].TempC)
		assert.Equal(t, "Default", s.GPUs[0].ComputeMode)
		assert.False(t, s.GPUs[0].MIG)
	})

	t.Run("q -d selection", func(t *testing.T) {
		s := sniffParse(t, corpus+"h200-x2/nvidia-smi-q-d.txt").out.GPUs[0]
		assert.Equal(t, time.Date(2026, 11, 30, 4, 24, 30, 0, time.UTC), s.At)
		assert.False(t, s.Incomplete)
		assert.False(t, s.ProcsListed, "PIDS was not selected")
		require.Len(t, s.GPUs, 2)
		for _, g := range s.GPUs {
			assert.Equal(t, []string{"gpu_idle"}, g.ClockReasons)
			assert.Equal(t, facts.V(345), g.SMClockMHz)
			assert.Empty(t, g.Name, "no Product Name in a -d PERFORMANCE,... dump")
			assert.Empty(t, g.CC)
		}
		assert.Equal(t, "00000000:00:07.0", s.GPUs[1].BusID)
	})

	t.Run("topology", func(t *testing.T) {
		p := sniffParse(t, corpus+"h200-x2/topo.txt")
		require.Len(t, p.out.Topo, 1)
		topo := p.out.Topo[0]
		assert.Equal(t, []string{"GPU0", "GPU1"}, topo.GPUs)
		assert.Equal(t, [][]string{{"X", "NV18"}, {"NV18", "X"}}, topo.Links)
		assert.True(t, topo.NVLinked())
		assert.Empty(t, topo.NICs)
		assert.Equal(t, []string{"0-31", "0-31"}, topo.CPUAffinity)
		assert.Equal(t, []string{"0", "0"}, topo.NUMAAffinity)
		assert.Equal(t, 1, topo.Src.Line)
	})

	t.Run("list", func(t *testing.T) {
		p := sniffParse(t, corpus+"h200-x2/nvidia-smi-L.txt")
		f := corpus + "h200-x2/nvidia-smi-L.txt"
		assert.Equal(t, []*facts.GPUListEntry{
			{Src: facts.Source{File: f, Line: 1}, Index: 0, Name: "NVIDIA H200", UUID: "GPU-00000000-1111-2222-3333-000000000001", Arch: "Hopper", CC: "9.0"},
			{Src: facts.Source{File: f, Line: 2}, Index: 1, Name: "NVIDIA H200", UUID: "GPU-00000000-1111-2222-3333-000000000002", Arch: "Hopper", CC: "9.0"},
		}, p.out.GPUList)
	})

	t.Run("h200-x1 query-gpu", func(t *testing.T) {
		s := sniffParse(t, corpus+"h200-x1/torch-compile/t30/query-gpu.csv").out.GPUs[0]
		require.Len(t, s.GPUs, 1)
		g := s.GPUs[0]
		assert.Equal(t, facts.V(1415), g.MemUsedMiB)
		assert.Equal(t, facts.V(120.75), g.PowerW)
		assert.Equal(t, facts.V(34), g.TempC)
		assert.False(t, g.UtilMem.OK, "not queried")
		assert.Equal(t, time.Date(2026, 11, 30, 4, 54, 39, 67e6, time.UTC), s.At)
	})
}
