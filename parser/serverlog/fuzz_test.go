package serverlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// FuzzParse feeds arbitrary input to Sniff and Parse: no panic, and the
// facts stay consistent with the input (lines cited exist, events are in
// line order and bounded, kept text is valid UTF-8).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.log")
	more, _ := filepath.Glob("../../fixtures/corpus/fulllogs/*/server.log")
	seeds = append(seeds, more...)
	more, _ = filepath.Glob("../../fixtures/corpus/h200-x*/*/server.log")
	seeds = append(seeds, more...)
	// Pastes: prefixes, gutters, headless tracebacks, fragments.
	more, _ = filepath.Glob("../../fixtures/incidents*/cases/*/server.log")
	seeds = append(seeds, more...)
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if len(b) > 8192 {
			b = b[:8192] // keep the fuzzer fast; the head has the prefixes
		}
		f.Add(b)
	}
	for _, c := range append(append([]lineCase{}, sglangLines...), vllmLines...) {
		f.Add([]byte(c.line + "\n"))
	}
	// Colour codes a paste cut the ESC from.
	f.Add([]byte("[36m(RayWorkerWrapper pid=1)[0m INFO 01-14 15:48:51 ray_utils.py:183] x\nESC[33m(autoscaler +2m)ESC[0m Error: y\n^[[1m[5m]\n"))
	// IPython's traceback form, and one cut inside a frame line.
	f.Add([]byte("OutOfMemoryError                          Traceback (most recent call last)\nCell In[3], line 1\n----> 1 llm = LLM(m)\n\nFile ~/x/llm.py:93, in LLM.__init__(self, model)\n     92 a\n---> 93 b\n\nOutOfMemoryError: CUDA out of memory.\n"))
	f.Add([]byte("RuntimeError   Traceback (most recent call last)\n/x/w.py in f(\n---> \nFile :, in (\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, score := Sniff("server.log", data)
		if score < 0 || score > 100 {
			t.Fatalf("score %d", score)
		}
		if kind == "" {
			kind = facts.KindServerLog
		}
		in := textio.NewInput("f.log", strings.NewReader(string(data)), 4096, nil)
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		Parse(in, kind, out)
		if len(out.Logs) != 1 {
			t.Fatalf("%d logs", len(out.Logs))
		}
		l := out.Logs[0]
		lines := l.Lines
		within := func(what string, n int) {
			if n < 1 || n > lines {
				t.Fatalf("%s cites line %d of %d", what, n, lines)
			}
		}
		if len(l.Events) > maxEvents {
			t.Fatalf("%d events", len(l.Events))
		}
		prev := 0
		for _, e := range l.Events {
			within(string(e.Type), e.Src.Line)
			if e.EndLine != 0 && (e.EndLine < e.Src.Line || e.EndLine > lines) {
				t.Fatalf("%s ends at %d, starts at %d, of %d", e.Type, e.EndLine, e.Src.Line, lines)
			}
			if e.Src.Line < prev {
				t.Fatalf("events out of line order: %d after %d", e.Src.Line, prev)
			}
			prev = e.Src.Line
			if !utf8.ValidString(e.Msg) || len(e.Msg) > facts.MaxMsg {
				t.Fatalf("bad message %q", e.Msg)
			}
			if e.Traceback != nil && len(e.Traceback.Frames) > facts.MaxFrames {
				t.Fatalf("%d frames", len(e.Traceback.Frames))
			}
			if !utf8.ValidString(e.Proc.Name) || !utf8.ValidString(e.Proc.Host) {
				t.Fatalf("bad process %+v", e.Proc)
			}
			if msg := payloadMismatch(e); msg != "" {
				t.Fatal(msg)
			}
			for k, v := range facts.Fields(e.Data) {
				if s, ok := v.(string); ok && !utf8.ValidString(s) {
					t.Fatalf("field %s: %q", k, s)
				}
			}
		}
		for _, p := range l.Procs {
			if p.Lines < 1 || p.Lines > lines {
				t.Fatalf("proc %q wrote %d of %d lines", p.Proc.Name, p.Lines, lines)
			}
			within("proc first", p.FirstSrc.Line)
			within("proc last", p.LastSrc.Line)
			if !utf8.ValidString(p.LastMsg) {
				t.Fatalf("bad last message %q", p.LastMsg)
			}
		}
		for _, b := range l.Bars {
			if !utf8.ValidString(b.Desc) || !utf8.ValidString(b.Detail) {
				t.Fatalf("bad bar %q %q", b.Desc, b.Detail)
			}
			within("bar", b.Src.Line)
			within("bar first", b.FirstSrc.Line)
			if b.N < 0 || b.Total < 0 || b.Updates < 1 {
				t.Fatalf("bar %+v", b)
			}
		}
		for _, s := range l.Series {
			within("series", s.First.Src.Line)
			within("series", s.Last.Src.Line)
			if len(s.Buckets) > facts.MaxBuckets {
				t.Fatalf("%d buckets", len(s.Buckets))
			}
		}
		for _, s := range out.Settings {
			within("setting", s.Src.Line)
			if !utf8.ValidString(s.Key) || !utf8.ValidString(s.Value) {
				t.Fatalf("bad setting %q=%q", s.Key, s.Value)
			}
		}
		if c, ok := out.Clocks["f.log"]; ok && c.Latest.IsZero() {
			t.Fatal("a clock without a latest time")
		}
		if l.LastSrc.Line > lines {
			t.Fatalf("last line %d of %d", l.LastSrc.Line, lines)
		}
	})
}
