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

// TestXMLEras reads -q -x dumps of four DTD versions and driver eras: v10
// (R430: clocks_throttle_reasons, power_readings, no product_architecture),
// v11 (R515), v12 (R570: clocks_event_reasons, gpu_power_readings with
// average/instant power draw) and v13 (R580, the real H200 corpus).
func TestXMLEras(t *testing.T) {
	type gpuWant struct {
		bus, name, arch, cc, ccFrom, pstate string
		memTotal, memUsed, util, temp       facts.Val
		power, limit, sm, smMax             facts.Val
		genCur, genMax, widthCur, eccVol    facts.Val
		reasons                             []string
	}
	tests := []struct {
		file    string
		at      time.Time
		driver  string
		gpus    []gpuWant
		procs   []facts.GPUProcess
		srcLine int
	}{
		{
			file: "xml-v10-r430-gtx1660ti.xml", at: time.Date(2019, 9, 22, 14, 51, 27, 0, time.UTC), driver: "430.50",
			gpus: []gpuWant{{
				bus: "00000000:01:00.0", name: "GeForce GTX 1660 Ti", arch: "Turing", cc: "7.5", ccFrom: "name", pstate: "P8",
				memTotal: facts.V(5941), memUsed: facts.V(345), util: facts.V(0), temp: facts.V(40),
				power: facts.V(7.41), limit: facts.V(130), sm: facts.V(300), smMax: facts.V(2130),
				genCur: facts.V(1), genMax: facts.V(3), widthCur: facts.V(16),
				reasons: []string{"gpu_idle"},
			}},
			procs: []facts.GPUProcess{
				{Src: facts.Source{Line: 154}, GPU: 0, BusID: "00000000:01:00.0", UUID: "GPU-2e5ae5b6-7a61-7b53-7ca1-8c8a5b1f7e42", PID: 1181, Type: "G", Name: "/usr/lib/xorg/Xorg", MemMiB: facts.V(178)},
				{Src: facts.Source{Line: 160}, GPU: 0, BusID: "00000000:01:00.0", UUID: "GPU-2e5ae5b6-7a61-7b53-7ca1-8c8a5b1f7e42", PID: 1520, Type: "G", Name: "/usr/bin/gnome-shell", MemMiB: facts.V(163)},
			},
			srcLine: 3,
		},
		{
			file: "xml-v11-r515-a10g.xml", at: time.Date(2023, 3, 17, 13, 19, 35, 0, time.UTC), driver: "515.105.01",
			gpus: []gpuWant{{
				bus: "00000000:00:1e.0", name: "NVIDIA A10G", arch: "Ampere", cc: "8.6", ccFrom: "name", pstate: "P8",
				memTotal: facts.V(23028), memUsed: facts.V(22), util: facts.V(0), temp: facts.V(25),
				power: facts.V(25.65), limit: facts.V(300), sm: facts.V(210), smMax: facts.V(1710),
				genCur: facts.V(1), genMax: facts.V(4), widthCur: facts.V(8), eccVol: facts.V(0),
				reasons: []string{"gpu_idle"},
			}},
			procs: []facts.GPUProcess{
				{Src: facts.Source{Line: 123}, GPU: 0, BusID: "00000000:00:1e.0", UUID: "GPU-794a5d14-2c5f-7a1a-1f4e-3b08b1e4a6f0", PID: 725, Type: "G", Name: "/usr/lib/xorg/Xorg", MemMiB: facts.V(22)},
			},
			srcLine: 3,
		},
		{
			file: "xml-v12-r570-l40s.xml", at: time.Date(2025, 4, 10, 16, 2, 44, 0, time.UTC), driver: "570.124.04",
			gpus: []gpuWant{{
				bus: "00000000:4a:00.0", name: "NVIDIA L40S", arch: "Ada Lovelace", cc: "8.9", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(46068), memUsed: facts.V(42470), util: facts.V(98), temp: facts.V(61),
				power: facts.V(348.91), limit: facts.V(350), sm: facts.V(2175), smMax: facts.V(2520),
				genCur: facts.V(4), genMax: facts.V(4), widthCur: facts.V(16), eccVol: facts.V(0),
				reasons: []string{"sw_power_cap"},
			}, {
				bus: "00000000:61:00.0", name: "NVIDIA L40S", arch: "Ada Lovelace", cc: "8.9", ccFrom: "name", pstate: "P0",
				memTotal: facts.V(46068), memUsed: facts.V(42470), util: facts.V(97), temp: facts.V(61),
				power: facts.V(345.12), limit: facts.V(350), sm: facts.V(2205), smMax: facts.V(2520),
				genCur: facts.V(4), genMax: facts.V(4), widthCur: facts.V(16), eccVol: facts.V(0),
				reasons: []string{"sw_power_cap"},
			}},
			procs: []facts.GPUProcess{
				{Src: facts.Source{Line: 116}, GPU: 0, BusID: "00000000:4a:00.0", UUID: "GPU-a1b2c3d4-0000-4e5f-8a9b-0c1d2e3f4a50", PID: 48213, Type: "C", Name: "VLLM::Worker_TP0", MemMiB: facts.V(41836)},
				{Src: facts.Source{Line: 237}, GPU: 1, BusID: "00000000:61:00.0", UUID: "GPU-a1b2c3d4-0000-4e5f-8a9b-0c1d2e3f4a51", PID: 48214, Type: "C", Name: "VLLM::Worker_TP1", MemMiB: facts.V(41836)},
			},
			srcLine: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := "testdata/" + tc.file
			p := sniffParse(t, path)
			assert.Equal(t, facts.KindNvidiaSMIXML, p.kind)
			assert.Empty(t, p.issues)
			require.Len(t, p.out.GPUs, 1)
			s := p.out.GPUs[0]
			assert.Equal(t, tc.srcLine, s.Src.Line)
			assert.Equal(t, tc.at, s.At)
			assert.Equal(t, tc.driver, s.Driver)
			assert.True(t, s.ProcsListed)
			assert.False(t, s.Incomplete)
			require.Len(t, s.GPUs, len(tc.gpus))
			for i, w := range tc.gpus {
				g := s.GPUs[i]
				assert.Equal(t, i, g.Index)
				assert.Equal(t, w.bus, g.BusID)
				assert.Equal(t, w.name, g.Name)
				assert.Equal(t, w.arch, g.Arch)
				assert.Equal(t, w.cc, g.CC)
				assert.Equal(t, w.ccFrom, g.CCFrom)
				assert.Equal(t, w.pstate, g.PState)
				assert.Equal(t, w.memTotal, g.MemTotalMiB, "mem total")
				assert.Equal(t, w.memUsed, g.MemUsedMiB, "mem used")
				assert.Equal(t, w.util, g.UtilGPU, "util")
				assert.Equal(t, w.temp, g.TempC, "temp")
				assert.Equal(t, w.power, g.PowerW, "power")
				assert.Equal(t, w.limit, g.PowerLimitW, "limit")
				assert.Equal(t, w.sm, g.SMClockMHz, "sm")
				assert.Equal(t, w.smMax, g.SMClockMaxMHz, "sm max")
				assert.Equal(t, w.genCur, g.PCIeGenCur, "gen cur")
				assert.Equal(t, w.genMax, g.PCIeGenMax, "gen max")
				assert.Equal(t, w.widthCur, g.PCIeWidthCur, "width cur")
				assert.Equal(t, w.eccVol, g.ECCVolatileUncorr, "ecc")
				assert.Equal(t, w.reasons, g.ClockReasons)
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

func TestXMLv13Corpus(t *testing.T) {
	s := sniffParse(t, corpus+"h200-x2/00-idle/nvidia-smi-q.xml").out.GPUs[0]
	require.Len(t, s.GPUs, 2)
	for _, g := range s.GPUs {
		assert.Equal(t, "9.0", g.CC)
		assert.Equal(t, facts.V(0), g.MemUsedMiB)
		assert.Equal(t, []string{"gpu_idle"}, g.ClockReasons)
		assert.Equal(t, "None", g.RecoveryAction)
		assert.Equal(t, map[string]float64{"sw_power_cap": 0, "sync_boost": 0, "sw_thermal_slowdown": 0, "hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0}, g.ClockEventsUS)
	}
	assert.Empty(t, s.Procs)
	assert.True(t, s.ProcsListed)
	assert.Equal(t, 8, s.GPUs[0].Src.Line)
}

func TestXMLTruncated(t *testing.T) {
	p := sniffParse(t, "testdata/xml-v12-truncated.xml")
	require.Len(t, p.out.GPUs, 1)
	s := p.out.GPUs[0]
	assert.True(t, s.Incomplete)
	require.Len(t, s.GPUs, 2, "the cut block is kept")
	assert.Equal(t, facts.V(42470), s.GPUs[1].MemUsedMiB, "read before the cut")
	assert.False(t, s.GPUs[1].UtilGPU.OK, "after the cut")
	assert.Len(t, s.Procs, 1)
	require.Len(t, p.issues, 1)
	assert.Equal(t, facts.IssueIncomplete, p.issues[0].Kind)
	assert.Equal(t, 176, p.issues[0].Src.Line, "the last line")
}

func TestXMLBadInput(t *testing.T) {
	v11, err := os.ReadFile("testdata/xml-v11-r515-a10g.xml")
	require.NoError(t, err)
	tests := []struct {
		name   string
		text   string
		issues []facts.IssueKind
		lines  []int
		check  func(t *testing.T, s []*facts.GPUSnapshot)
	}{
		{
			name:   "mismatched tag",
			text:   strings.Replace(string(v11), "</fb_memory_usage>", "</fb_memory>", 1),
			issues: []facts.IssueKind{facts.IssueMalformed},
			lines:  []int{59},
			check: func(t *testing.T, s []*facts.GPUSnapshot) {
				require.Len(t, s, 1)
				require.Len(t, s[0].GPUs, 1)
				assert.Equal(t, facts.V(22), s[0].GPUs[0].MemUsedMiB)
				assert.False(t, s[0].GPUs[0].UtilGPU.OK)
			},
		},
		{
			name:   "unknown error values",
			text:   strings.Replace(string(v11), "<gpu_temp>25 C</gpu_temp>", "<gpu_temp>Unknown Error</gpu_temp>", 1),
			issues: []facts.IssueKind{facts.IssueUnreadable},
			lines:  []int{92},
			check: func(t *testing.T, s []*facts.GPUSnapshot) {
				g := s[0].GPUs[0]
				assert.False(t, g.TempC.OK)
				assert.Equal(t, []string{"temperature/gpu_temp"}, g.ReadErrors)
			},
		},
		{
			name:   "not nvidia-smi",
			text:   "<?xml version=\"1.0\"?>\n<html><body>hi</body></html>\n",
			issues: []facts.IssueKind{facts.IssueMalformed},
			lines:  []int{2},
			check: func(t *testing.T, s []*facts.GPUSnapshot) {
				require.Len(t, s, 1)
				assert.Empty(t, s[0].GPUs)
			},
		},
		{
			name:   "empty",
			text:   "",
			issues: []facts.IssueKind{facts.IssueMalformed},
			lines:  []int{0},
			check:  func(t *testing.T, s []*facts.GPUSnapshot) { assert.Empty(t, s) },
		},
		{
			name:   "selection of one GPU",
			text:   strings.Replace(string(v11), "<attached_gpus>1</attached_gpus>", "<attached_gpus>4</attached_gpus>", 1),
			issues: nil,
			check: func(t *testing.T, s []*facts.GPUSnapshot) {
				assert.Equal(t, -1, s[0].GPUs[0].Index)
				assert.Equal(t, -1, s[0].Procs[0].GPU)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseString("x.xml", tc.text, facts.KindNvidiaSMIXML)
			var kinds []facts.IssueKind
			var lines []int
			for _, is := range p.issues {
				kinds = append(kinds, is.Kind)
				lines = append(lines, is.Src.Line)
			}
			assert.Equal(t, tc.issues, kinds)
			assert.Equal(t, tc.lines, lines)
			tc.check(t, p.out.GPUs)
		})
	}
}

// TestXMLEmbeddedDTD reads `nvidia-smi -q -x --dtd`, whose DOCTYPE holds the
// whole DTD, pushing the root past the bytes kind detection sees.
func TestXMLEmbeddedDTD(t *testing.T) {
	v11, err := os.ReadFile("testdata/xml-v11-r515-a10g.xml")
	require.NoError(t, err)
	var dtd strings.Builder
	for i := 0; i < 300; i++ {
		dtd.WriteString("<!ELEMENT element_" + itoa(i) + " (#PCDATA)>\n")
	}
	text := strings.Replace(string(v11), `<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">`,
		"<!DOCTYPE nvidia_smi_log [\n<!ELEMENT nvidia_smi_log (timestamp, driver_version, gpu*)>\n<!ATTLIST gpu id CDATA #REQUIRED>\n"+dtd.String()+"]>", 1)
	kind, score := Sniff("smi.xml", []byte(text[:8<<10]))
	assert.Equal(t, facts.KindNvidiaSMIXML, kind)
	assert.GreaterOrEqual(t, score, 90)
	p := parseString("smi.xml", text, facts.KindNvidiaSMIXML)
	assert.Empty(t, p.issues)
	require.Len(t, p.out.GPUs, 1)
	assert.Equal(t, "NVIDIA A10G", p.out.GPUs[0].GPUs[0].Name)
	// <gpu> is line 8 of the file; the DOCTYPE line became 304 lines.
	assert.Equal(t, 8+303, p.out.GPUs[0].GPUs[0].Src.Line, "lines count through the DTD")
}
