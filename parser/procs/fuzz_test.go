package procs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.txt")
	seeds = append(seeds, x2+"jit-compile/t12/top.txt", x2+"jit-compile/t27/ps_auxf.txt", x1+"defunct/t5/ps_eo.txt")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), false)
		f.Add(string(b), true)
	}
	f.Add("  PID STAT COMMAND\n    1 S  \\_ \\_ |   x\n", false)
	f.Add("USER PID\nroot 1 \\_", false)
	f.Fuzz(func(t *testing.T, text string, top bool) {
		kind := facts.KindPS
		if top {
			kind = facts.KindTop
		}
		Sniff("ps.txt", []byte(text))
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		var issues []facts.Issue
		in := textio.NewInput("f.txt", strings.NewReader(text), 4096, func(is facts.Issue) { issues = append(issues, is) })
		Parse(in, kind, out)
		lines := in.Line()
		for _, is := range issues {
			if is.Src.Line < 0 || is.Src.Line > lines {
				t.Fatalf("issue on line %d of %d: %v", is.Src.Line, lines, is)
			}
		}
		for _, s := range out.Procs {
			if s.Src.Line < 1 || s.Src.Line > lines {
				t.Fatalf("snapshot on line %d of %d", s.Src.Line, lines)
			}
			prev := s.Src.Line - 1
			for _, p := range s.Procs {
				if p.Src.Line <= prev || p.Src.Line > lines {
					t.Fatalf("process on line %d after line %d, of %d", p.Src.Line, prev, lines)
				}
				prev = p.Src.Line
				if p.PPID < -1 || p.Depth < -1 || p.Has == nil || p.CPUTime < 0 || p.Elapsed < 0 || p.VSZKB < 0 || p.RSSKB < 0 {
					t.Fatalf("bad process %+v", p)
				}
			}
			s.Descendants(1)
			s.Ancestors(1)
		}
		if len(out.Procs) > 1 {
			facts.Deltas(out.Procs[0], out.Procs[1])
		}
	})
}
