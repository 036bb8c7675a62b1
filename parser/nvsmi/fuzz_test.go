package nvsmi

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// The fuzz targets call the format parsers directly, not Parse, whose
// recover would hide a panic.

type parseFunc func(in *textio.Input, out *facts.Facts)

func seed(f *testing.F, globs ...string) {
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			if isDir(file) {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

func fuzzOne(t *testing.T, data []byte, parse parseFunc) {
	var issues []facts.Issue
	in := textio.NewInput("f", strings.NewReader(string(data)), 4096, func(i facts.Issue) { issues = append(issues, i) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	parse(in, out)
	checkInvariants(t, out, issues, in.Line())
}

func checkInvariants(t *testing.T, out *facts.Facts, issues []facts.Issue, lines int) {
	t.Helper()
	line := func(what string, src facts.Source) {
		if src.Line < 1 || src.Line > lines {
			t.Fatalf("%s cites line %d of %d", what, src.Line, lines)
		}
	}
	val := func(what string, v facts.Val) {
		if v.OK && (math.IsNaN(v.V) || math.IsInf(v.V, 0)) {
			t.Fatalf("%s is %v", what, v.V)
		}
		if !v.OK && v.V != 0 {
			t.Fatalf("%s is absent but holds %v", what, v.V)
		}
	}
	if len(out.GPUs) > MaxSnapshots+1 {
		t.Fatalf("%d snapshots kept, more than %d", len(out.GPUs), MaxSnapshots+1)
	}
	for _, s := range out.GPUs {
		line("snapshot", s.Src)
		for _, g := range s.GPUs {
			line("gpu", g.Src)
			if g.BusID != "" && NormalizeBusID(g.BusID) != g.BusID {
				t.Fatalf("bus id %q is not normalized", g.BusID)
			}
			if g.Index < -1 {
				t.Fatalf("index %d", g.Index)
			}
			for name, v := range map[string]facts.Val{
				"mem total": g.MemTotalMiB, "mem used": g.MemUsedMiB, "util": g.UtilGPU, "util mem": g.UtilMem,
				"temp": g.TempC, "power": g.PowerW, "limit": g.PowerLimitW, "sm": g.SMClockMHz, "mem clock": g.MemClockMHz,
				"ecc vol": g.ECCVolatileUncorr, "ecc agg": g.ECCAggregateUncorr, "gen": g.PCIeGenCur, "width": g.PCIeWidthCur,
			} {
				val(name, v)
			}
		}
		for _, p := range s.Procs {
			line("process", p.Src)
			val("proc mem", p.MemMiB)
		}
		for _, e := range s.Errors {
			line("error", e.Src)
		}
	}
	for _, tp := range out.Topo {
		line("topology", tp.Src)
		for _, row := range tp.Links {
			if len(row) != len(tp.GPUs) {
				t.Fatalf("topology row of %d links for %d GPUs", len(row), len(tp.GPUs))
			}
		}
	}
	for _, e := range out.GPUList {
		line("list entry", e.Src)
	}
	if len(issues) > maxIssues+1 {
		t.Fatalf("%d issues reported, more than %d", len(issues), maxIssues+1)
	}
	for _, is := range issues {
		if is.Src.Line < 0 || is.Src.Line > lines {
			t.Fatalf("issue %v cites line %d of %d", is, is.Src.Line, lines)
		}
	}
}

func FuzzParseQ(f *testing.F) {
	seed(f, "testdata/q-*", corpus+"h200-x2/*/nvidia-smi-q.txt", corpus+"h200-x2/nvidia-smi-q-d.txt")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, data, parseQ) })
}

func FuzzParseXML(f *testing.F) {
	seed(f, "testdata/xml-*", corpus+"h200-x2/00-idle/nvidia-smi-q.xml")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, data, parseXML) })
}

func FuzzParseCSV(f *testing.F) {
	seed(f, "testdata/csv-*", corpus+"h200-x2/oom/t20/*.csv")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, data, parseCSV) })
}

func FuzzParseTable(f *testing.F) {
	seed(f, "testdata/table-*", corpus+"h200-x2/*/nvidia-smi.txt")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, data, parseTable) })
}

func FuzzParseMon(f *testing.F) {
	seed(f, "testdata/dmon-*", "testdata/pmon-*")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOne(t, data, func(in *textio.Input, out *facts.Facts) { parseMon(in, facts.KindNvidiaSMIDmon, out) })
	})
}

func FuzzParseTopo(f *testing.F) {
	seed(f, "testdata/topo-*", corpus+"h200-x2/topo.txt")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, data, parseTopo) })
}

func FuzzParseList(f *testing.F) {
	seed(f, "testdata/list-*", corpus+"h200-x2/nvidia-smi-L.txt")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzOne(t, data, parseList) })
}

// FuzzParse drives detection and the parser it picks, as the orchestrator
// does, on every seed of every format.
func FuzzParse(f *testing.F) {
	seed(f, "testdata/*", corpus+"h200-x2/*/*", corpus+"h200-x2/*.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		head := data
		if len(head) > 8<<10 {
			head = head[:8<<10]
		}
		kind, score := Sniff("nvidia-smi.txt", head)
		if score < 0 || score > 100 {
			t.Fatalf("score %d", score)
		}
		if kind == "" {
			kind = facts.KindNvidiaSMIQ
		}
		var issues []facts.Issue
		in := textio.NewInput("f", strings.NewReader(string(data)), 4096, func(i facts.Issue) { issues = append(issues, i) })
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, kind, out)
		for _, is := range issues {
			if is.Kind == facts.IssueCorrupt {
				t.Fatalf("the parser panicked: %v", is)
			}
		}
		checkInvariants(t, out, issues, in.Line())
	})
}
