// Package pyspy reads `py-spy dump` output: one PyStack per thread of each
// dumped process, with --native frames and --locals blocks, several
// processes per file, and the JSON form of `py-spy dump --json`.
//
//	Process 72309: sglang::scheduler_TP0
//	Python v3.12.3 (/usr/bin/python3.12)
//
//	Thread 72309 (active+gil): "MainThread"
//	    synchronize (torch/cuda/__init__.py:985)
//	    cuStreamSynchronize (libcuda.so.580.159.04)
//	Thread 72401 (idle): "Thread-1 (_read_thread)"
//	    wait (threading.py:355)
//
// Python frames (a file with a line) go to PyStack.Frames and native ones
// (a function in a shared library) to PyStack.Native, each list innermost
// first. When py-spy could not dump a process ("Permission Denied", the
// process gone), the error becomes a PyStack with Error set.
package pyspy

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// MaxFrames bounds the frames kept per thread (Python and native each).
const MaxFrames = 256

// A dump keeps at most MaxStacks threads as they come, then only the
// active ones and the errors, up to MaxKeptStacks; the rest are counted. A
// vLLM TP8 server has a few hundred threads.
const (
	MaxStacks     = 1024
	MaxKeptStacks = 2048
)

// maxJSON bounds the size of a --json dump read whole.
const maxJSON = 32 << 20

var (
	processRe = regexp.MustCompile(`^Process (\d+): ?(.*)$`)
	threadRe  = regexp.MustCompile(`^Thread (0x[0-9A-Fa-f]+|\d+) \(([a-z+]+)\)(?:: "(.*)")?$`)
	pythonRe  = regexp.MustCompile(`^Python v\d`)
	sglangRe  = regexp.MustCompile(`Pyspy dump for PID (\d+)`)
	errorRe   = regexp.MustCompile(`^(?:Error: .*|Permission Denied: .*|.*[Pp]ermission denied.*|Failed to .*|Process \d+ not found.*)$`)
	namePIDRe = regexp.MustCompile(`(?:pid|py-?spy)[-_.]?(\d+)`)
	ansiRe    = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
)

// Sniff recognizes py-spy dumps.
func Sniff(name string, head []byte) (facts.Kind, int) {
	n := strings.ToLower(name)
	nameHint := strings.Contains(n, "pyspy") || strings.Contains(n, "py-spy") || strings.Contains(n, "py_spy")
	proc, py, threads, frames, header := false, false, 0, 0, false
	for _, l := range bytes.Split(head, []byte{'\n'}) {
		l = bytes.TrimRight(l, "\r")
		if bytes.IndexByte(l, 0x1b) >= 0 {
			l = ansiRe.ReplaceAll(l, nil)
		}
		switch {
		case processRe.Match(l):
			proc = true
		case pythonRe.Match(l):
			py = true
		case threadRe.Match(l):
			threads++
		case sglangRe.Match(l) || bytes.HasPrefix(l, []byte("Permission Denied: Try running again with elevated permissions")):
			header = true
		case bytes.HasPrefix(l, []byte("    ")) && bytes.HasSuffix(l, []byte(")")) && bytes.Contains(l, []byte(" (")):
			frames++
		}
	}
	score := 0
	t := bytes.TrimSpace(head)
	switch {
	case proc && py:
		score = 95
	case threads > 0 && frames > 0 && threads+frames >= 3:
		score = 80
	case len(t) > 0 && (t[0] == '[' || t[0] == '{') && bytes.Contains(head, []byte(`"thread_id"`)) && bytes.Contains(head, []byte(`"frames"`)):
		score = 85
	case header:
		score = 75
	case threads > 0:
		score = 40
	}
	if nameHint {
		if score == 0 {
			return facts.KindPySpy, 25
		}
		score = min(score+5, 100)
	}
	if score == 0 {
		return "", 0
	}
	return facts.KindPySpy, score
}

type parser struct {
	in    *textio.Input
	out   *facts.Facts
	pid   int
	title string
	cur   *facts.PyStack
	any   bool
	// json collects a --json dump.
	json    []byte
	jsonAt  int
	jsonBig bool
	// kept counts the stacks kept, dropped those counted only.
	kept, dropped int
}

// addStack keeps a thread's stack or an error, or counts it past the caps.
func (p *parser) addStack(st *facts.PyStack) {
	if p.kept < MaxStacks || p.kept < MaxKeptStacks && (!st.Idle || st.Error != "") {
		p.out.Stacks = append(p.out.Stacks, st)
		p.kept++
		return
	}
	p.dropped++
}

// Parse reads a dump.
func Parse(in *textio.Input, _ facts.Kind, out *facts.Facts) {
	p := &parser{in: in, out: out}
	if m := namePIDRe.FindStringSubmatch(strings.ToLower(path.Base(in.Path))); m != nil {
		p.pid, _ = strconv.Atoi(m[1])
	}
	for in.Scan() {
		p.line(in.Bytes())
	}
	p.flush()
	if p.json != nil {
		p.decodeJSON()
	}
	if !p.any && in.Line() > 0 {
		in.IssueAt(0, facts.IssueUnrecognized, "no py-spy process, thread or error line found")
	}
	if p.dropped > 0 {
		in.IssueAt(0, facts.IssueSummarized, "%d threads: kept the first %d and %d more that were active; the other %d were counted, not kept",
			p.kept+p.dropped, min(p.kept, MaxStacks), max(p.kept-MaxStacks, 0), p.dropped)
	}
}

func (p *parser) line(raw []byte) {
	if bytes.IndexByte(raw, 0x1b) >= 0 {
		raw = ansiRe.ReplaceAll(raw, nil)
	}
	if p.json != nil {
		p.addJSON(raw)
		return
	}
	t := bytes.TrimRight(raw, " \t")
	if len(bytes.TrimSpace(t)) == 0 {
		return
	}
	if p.cur == nil && !p.any && (t[0] == '[' || t[0] == '{') {
		p.json, p.jsonAt = []byte{}, p.in.Line()
		p.addJSON(raw)
		return
	}
	// Frames: four spaces; --locals adds deeper lines under a frame.
	if bytes.HasPrefix(t, []byte("    ")) {
		if bytes.HasPrefix(t, []byte("        ")) || p.cur == nil {
			return
		}
		p.frame(string(t[4:]))
		return
	}
	s := p.text(t)
	if m := processRe.FindStringSubmatch(s); m != nil {
		p.flush()
		p.pid, _ = strconv.Atoi(m[1])
		p.title = m[2]
		p.any = true
		return
	}
	if m := threadRe.FindStringSubmatch(s); m != nil {
		p.flush()
		status := m[2]
		p.cur = &facts.PyStack{Src: p.in.Src(), PID: p.pid, Title: p.title, TID: m[1], Thread: m[3],
			Idle: strings.Contains(status, "idle"), GIL: strings.Contains(status, "gil")}
		return
	}
	if pythonRe.MatchString(s) {
		return
	}
	if m := sglangRe.FindStringSubmatch(s); m != nil {
		// SGLang's watchdog prefixes each dump with its PID.
		p.flush()
		p.pid, _ = strconv.Atoi(m[1])
		p.title = ""
		if strings.Contains(s, "failed") || strings.Contains(s, "Error") {
			p.failure(s)
		}
		return
	}
	if errorRe.MatchString(s) {
		p.flush()
		p.failure(s)
		return
	}
	p.in.Issuef(facts.IssueMalformed, "not a py-spy process, thread or frame line")
}

func (p *parser) failure(s string) {
	p.addStack(&facts.PyStack{Src: p.in.Src(), PID: p.pid, Title: p.title, Error: s})
	p.any = true
}

// frame reads "func (file.py:123)" or a native "func (libfoo.so)".
func (p *parser) frame(s string) {
	if !strings.HasSuffix(s, ")") {
		p.in.Issuef(facts.IssueMalformed, "a py-spy frame without its (file:line)")
		return
	}
	i := strings.LastIndex(s, " (")
	if i < 0 {
		p.in.Issuef(facts.IssueMalformed, "a py-spy frame without its (file:line)")
		return
	}
	fn, loc := s[:i], s[i+2:len(s)-1]
	file, line := loc, 0
	if j := strings.LastIndexByte(loc, ':'); j > 0 {
		if n, err := strconv.Atoi(loc[j+1:]); err == nil {
			file, line = loc[:j], n
		}
	}
	c := p.cur
	if isPythonFile(file, line) {
		if len(c.Frames) < MaxFrames {
			c.Frames = append(c.Frames, facts.Frame{File: file, Line: line, Func: fn})
		}
		return
	}
	if len(c.Native) < MaxFrames {
		c.Native = append(c.Native, s)
	}
}

// isPythonFile tells a Python frame from a native one: native frames name a
// shared library, or a C/C++/CUDA source when debug info gave a line.
func isPythonFile(file string, line int) bool {
	switch {
	case strings.HasSuffix(file, ".py") || strings.HasSuffix(file, ".pyx") || strings.HasPrefix(file, "<"):
		return true
	case strings.Contains(file, ".so") || line == 0:
		return false
	}
	switch path.Ext(file) {
	case ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".rs", ".S", ".s":
		return false
	}
	return true
}

func (p *parser) flush() {
	if p.cur == nil {
		return
	}
	if p.cur.Frames == nil {
		p.cur.Frames = []facts.Frame{}
	}
	p.addStack(p.cur)
	p.cur = nil
	p.any = true
}

func (p *parser) text(b []byte) string {
	if !p.in.CheckUTF8() {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

func (p *parser) addJSON(b []byte) {
	if len(p.json)+len(b) > maxJSON {
		p.jsonBig = true
		return
	}
	p.json = append(p.json, b...)
	p.json = append(p.json, '\n')
}

// jsonThread is a thread of `py-spy dump --json`.
type jsonThread struct {
	PID        int    `json:"pid"`
	ThreadID   uint64 `json:"thread_id"`
	ThreadName string `json:"thread_name"`
	OSThreadID uint64 `json:"os_thread_id"`
	Active     bool   `json:"active"`
	OwnsGIL    bool   `json:"owns_gil"`
	Frames     []struct {
		Name          string `json:"name"`
		Filename      string `json:"filename"`
		ShortFilename string `json:"short_filename"`
		Line          int    `json:"line"`
	} `json:"frames"`
}

func (p *parser) decodeJSON() {
	if p.jsonBig {
		p.in.IssueAt(p.jsonAt, facts.IssueSizeLimit, "a py-spy JSON dump over %d MiB: not read", maxJSON>>20)
		return
	}
	var threads []jsonThread
	if err := json.Unmarshal(p.json, &threads); err != nil {
		var one jsonThread
		if err2 := json.Unmarshal(p.json, &one); err2 != nil {
			p.in.IssueAt(p.jsonAt, facts.IssueMalformed, "not a py-spy JSON dump: %v", err)
			return
		}
		threads = []jsonThread{one}
	}
	src := facts.Source{File: p.in.Path, Line: p.jsonAt}
	for _, t := range threads {
		st := &facts.PyStack{Src: src, PID: t.PID, Thread: t.ThreadName, Idle: !t.Active, GIL: t.OwnsGIL, Frames: []facts.Frame{}}
		if st.PID == 0 {
			st.PID = p.pid
		}
		if t.OSThreadID != 0 {
			st.TID = strconv.FormatUint(t.OSThreadID, 10)
		} else {
			st.TID = "0x" + strings.ToUpper(strconv.FormatUint(t.ThreadID, 16))
		}
		for _, f := range t.Frames {
			file := f.ShortFilename
			if file == "" {
				file = f.Filename
			}
			if isPythonFile(file, f.Line) {
				if len(st.Frames) < MaxFrames {
					st.Frames = append(st.Frames, facts.Frame{File: file, Line: f.Line, Func: f.Name})
				}
			} else if len(st.Native) < MaxFrames {
				st.Native = append(st.Native, f.Name+" ("+file+")")
			}
		}
		p.addStack(st)
		p.any = true
	}
}
