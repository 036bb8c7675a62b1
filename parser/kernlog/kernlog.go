// Package kernlog reads kernel logs: dmesg (plain, -T, -x, --time-format
// iso), syslog and journalctl -k (short, short-iso, short-precise,
// short-monotonic). It keeps the lines that matter to a GPU server: NVIDIA
// Xid and SXid errors, other NVRM lines, OOM kills (one event per kill, from
// the many lines the kernel prints), segfaults and traps of user processes,
// and hung tasks.
package kernlog

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// MaxEvents bounds the events kept per file: the first half and the last
// half survive, so a flood of Xid 45 keeps both its start and its end.
const MaxEvents = 20000

// maxText bounds the text kept per event.
const maxText = 1024

// Sniff recognizes a kernel log by its line prefixes and its messages.
func Sniff(name string, head []byte) (facts.Kind, int) {
	lines, stamped, kstamped, journal, marks := 0, 0, 0, 0, 0
	nvrm := false
	for len(head) > 0 && lines < 200 {
		var line []byte
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			// The last line may be cut by the head limit; judge it anyway.
			line, head = head, nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(line, []byte("-- ")) {
			continue
		}
		lines++
		st, msg := splitPrefix(line)
		if st.hadKey {
			stamped++
			// A wall-clock stamp alone is any program's (docker logs -t, CI
			// gutters, Rust tracing); only dmesg's own stamps and a journal
			// line of the kernel say "kernel".
			switch {
			case st.kind == stampUptime || st.kind == stampWall || (st.kind == stampZoned && !st.isIso) || st.kind == stampNone:
				kstamped++
			case bytes.Contains(line, []byte(" kernel: ")):
				kstamped++
				journal++
			case st.dmesgISO:
				kstamped++
			}
		}
		// Without a time prefix a mark counts only where the kernel puts
		// it, so prose that quotes a kernel line is not a kernel log.
		switch {
		case bytes.HasPrefix(msg, []byte("NVRM: ")) || st.hadKey && bytes.Contains(msg, []byte("NVRM: ")):
			nvrm = true
			marks++
		case bytes.HasPrefix(msg, []byte("Out of memory")) || bytes.HasPrefix(msg, []byte("Memory cgroup out of memory")) ||
			bytes.HasPrefix(msg, []byte("INFO: task ")) || bytes.HasPrefix(msg, []byte("oom-kill:")):
			marks++
		case bytes.Contains(msg, []byte(" invoked oom-killer: ")) || bytes.Contains(msg, []byte("]: segfault at ")):
			if st.hadKey || len(msg) > 0 && msg[0] != ' ' && msg[0] != '-' && msg[0] != '`' && msg[0] != '*' {
				marks++
			}
		}
	}
	n := strings.ToLower(name)
	nameHint := strings.Contains(n, "dmesg") || strings.Contains(n, "kern") || strings.Contains(n, "syslog") || strings.Contains(n, "journal")
	score := 0
	switch {
	case lines == 0:
	case stamped*10 >= lines*6 && stamped >= 2 && (nvrm || marks > 0):
		score = 92
	case kstamped*10 >= lines*6 && kstamped >= 2:
		score = 75
		if journal > 0 && journal*2 < stamped {
			// A syslog of many daemons: it is a kernel log only in part.
			score = 55
		}
	case nvrm && marks >= 1:
		score = 70
	case marks >= 2:
		score = 50
	case marks == 1:
		score = 35
	}
	if nameHint {
		if score == 0 {
			return facts.KindKernelLog, 20
		}
		score = min(score+5, 100)
	}
	if score == 0 {
		return "", 0
	}
	return facts.KindKernelLog, score
}

var (
	xidRe      = regexp.MustCompile(`NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}(?:\.[0-7])?)\): (\d+)(?:,\s*(.*))?$`)
	sxidRe     = regexp.MustCompile(`SXid \((?:PCI:)?([0-9a-fA-F]{1,8}:[0-9a-fA-F]{1,2}:[0-9a-fA-F]{1,2}(?:\.[0-7])?)\): (\d+)(?:,\s*(.*))?$`)
	nvrmBusRe  = regexp.MustCompile(`(?:PCI:|GPU |GPU at |\()([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)`)
	uuidRe     = regexp.MustCompile(`GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	taskInRe   = regexp.MustCompile(`Task in (\S+) killed as a result of limit of (\S+)`)
	memcgRe    = regexp.MustCompile(`Memory cgroup stats for (\S+?):?$`)
	killedRe   = regexp.MustCompile(`Killed process (\d+) \((.*)\)`)
	crashRe    = regexp.MustCompile(`^(?:traps: )?(.+?)\[(\d+)\]:? (?:segfault at |general protection fault|trap )`)
	hungTaskRe = regexp.MustCompile(`task (.+):(\d+) blocked for more than \d+ seconds`)
)

// parser holds the state of one file.
type parser struct {
	in  *textio.Input
	out *facts.Facts

	events  []*facts.KernelEvent
	tail    []*facts.KernelEvent // ring of the latest events once MaxEvents/2 are kept
	tailAt  int
	dropped int

	// Clock of the file's wall-clock stamps.
	noZone, noYear bool
	latest         time.Time
	year           int
	lastMonth      time.Month

	oom oomState
	// prefixed counts lines with a recognized time prefix.
	prefixed int
}

// oomState gathers the lines of one OOM kill until its "Killed process".
type oomState struct {
	active     bool
	constraint string
	memcg      string // oom_memcg=, or the cgroup of "Memory cgroup stats for"
	task       string
	pid        int
	line       int // the oom-kill: line
	st         stamp
	text       string
}

// Parse reads a kernel log.
func Parse(in *textio.Input, _ facts.Kind, out *facts.Facts) {
	p := &parser{in: in, out: out, year: facts.BaseYear}
	for in.Scan() {
		p.line(in.Bytes())
	}
	p.flushOOM(true)
	p.finish()
}

func (p *parser) line(line []byte) {
	if bytes.HasPrefix(line, []byte("dmesg: ")) {
		// "dmesg: read kernel buffer failed: Operation not permitted": the
		// capture itself failed (kernel.dmesg_restrict, no root).
		p.prefixed++
		p.in.Issuef(facts.IssueUnreadable, "%s (capture dmesg as root, or journalctl -k)", p.text(line))
		return
	}
	st, msg := splitPrefix(line)
	if st.hadKey {
		p.prefixed++
		p.clock(&st)
	}
	if len(msg) < 8 {
		return
	}
	// Most kernel lines matter to no rule: dispatch on anchored prefixes and
	// as few substring searches as possible.
	switch c := msg[0]; {
	case bytes.Contains(msg, []byte("NVRM")):
		p.nvrm(st, msg)
	case c == 'n' && bytes.HasPrefix(msg, []byte("nvidia-nvswitch")) && bytes.Contains(msg, []byte("SXid (")):
		p.sxid(st, msg)
	case c == 'O' || c == 'M' || c == 'K' || c == 'T' || c == 'o':
		p.oomLine(st, msg)
	case c == 't' && bytes.HasPrefix(msg, []byte("traps: ")):
		p.crash(st, msg)
	case c == 'I' && bytes.HasPrefix(msg, []byte("INFO: task ")):
		p.hungTask(st, msg)
	case bytes.Contains(msg, []byte(" invoked oom-killer:")):
		p.oomLine(st, msg)
	case bytes.Contains(msg, []byte("]: segfault at ")):
		p.crash(st, msg)
	}
}

// clock places a stamp in the file's time line.
func (p *parser) clock(st *stamp) {
	switch st.kind {
	case stampWall:
		p.noZone = true
	case stampNoYear:
		p.noZone, p.noYear = true, true
		// Dec back to Jan: the log crossed New Year.
		if p.lastMonth != 0 && st.month < p.lastMonth && p.lastMonth-st.month >= 6 {
			p.year++
		}
		p.lastMonth = st.month
		if p.year != facts.BaseYear {
			st.t = st.t.AddDate(p.year-facts.BaseYear, 0, 0)
		}
	default:
		return
	}
	if st.t.After(p.latest) {
		p.latest = st.t
	}
}

func (p *parser) newEvent(st stamp, typ facts.KernelEventType, msg []byte) *facts.KernelEvent {
	e := &facts.KernelEvent{Src: p.in.Src(), Type: typ, GPU: -1, Text: p.text(msg)}
	if st.kind != stampNone && st.kind != stampUptime {
		e.Time = st.t
	}
	if st.hasUp {
		e.Uptime = st.up
	}
	return e
}

// text copies a message for keeping, cut to maxText on a rune boundary.
func (p *parser) text(msg []byte) string {
	msg = bytes.TrimRight(msg, " \t")
	if len(msg) > maxText {
		k := maxText
		for k > 0 && !utf8.RuneStart(msg[k]) {
			k--
		}
		msg = msg[:k]
	}
	if !utf8.Valid(msg) {
		p.in.CheckUTF8()
		// A replacement character is longer than the byte it replaces:
		// cut again so the bound holds.
		t := strings.ToValidUTF8(string(msg), "\uFFFD")
		for len(t) > maxText {
			_, n := utf8.DecodeLastRuneInString(t)
			t = t[:len(t)-n]
		}
		return t
	}
	return string(msg)
}

func (p *parser) add(e *facts.KernelEvent) {
	if len(p.events) < MaxEvents/2 {
		p.events = append(p.events, e)
		return
	}
	if len(p.tail) < MaxEvents/2 {
		p.tail = append(p.tail, e)
		return
	}
	p.tail[p.tailAt] = e
	p.tailAt = (p.tailAt + 1) % len(p.tail)
	p.dropped++
}

func (p *parser) finish() {
	out := p.events
	out = append(out, p.tail[p.tailAt:]...)
	out = append(out, p.tail[:p.tailAt]...)
	p.out.Kernel = append(p.out.Kernel, out...)
	if p.dropped > 0 {
		// A record cap, not the size limit (which stops the reading and
		// asks for --max-bytes): every line was read.
		p.in.IssueAt(0, facts.IssueSummarized, "%d kernel events: kept the first %d and the last %d; the %d between were counted, not kept",
			len(out)+p.dropped, len(p.events), len(p.tail), p.dropped)
	}
	if p.noZone && !p.latest.IsZero() {
		p.out.Clocks[p.in.Path] = facts.Clock{NoZone: true, NoYear: p.noYear, Latest: p.latest}
	}
	if p.prefixed == 0 && len(out) == 0 && p.in.Line() > 0 {
		p.in.IssueAt(1, facts.IssueUnrecognized, "no line of this file has a kernel log time prefix or a known kernel message")
	}
}

func (p *parser) nvrm(st stamp, msg []byte) {
	if bytes.Contains(msg, []byte("Xid (")) {
		m := xidRe.FindSubmatch(msg)
		if m == nil {
			p.in.Issuef(facts.IssueMalformed, "an NVRM Xid line without the (PCI:dddd:bb:dd): code part")
			return
		}
		e := p.newEvent(st, facts.KernelXid, msg)
		e.BusID, _ = NormalizeBusID(string(m[1]))
		e.Code = atoi(m[2])
		rest := m[3]
		if v, ok := bytes.CutPrefix(rest, []byte("pid=")); ok {
			val, r, _ := bytes.Cut(v, []byte(", "))
			e.PID = atoi(val) // '<unknown>' stays 0
			rest = r
		}
		if v, ok := bytes.CutPrefix(rest, []byte("name=")); ok {
			val, _, _ := bytes.Cut(v, []byte(", "))
			if !bytes.Equal(val, []byte("<unknown>")) {
				e.Comm = p.text(val)
			}
		}
		e.Fatal = saysFatal(rest)
		if x, ok := XidInfo(e.Code); ok {
			e.Xid = &facts.XidMeaning{Name: x.Name, Meaning: x.Meaning, Severity: string(x.Severity), Action: x.Action,
				Secondary: x.Secondary, Hardware: x.Hardware}
		}
		p.add(e)
		return
	}
	e := p.newEvent(st, facts.KernelNVRM, msg)
	if m := nvrmBusRe.FindSubmatch(msg); m != nil {
		e.BusID, _ = NormalizeBusID(string(m[1]))
	}
	if m := uuidRe.Find(msg); m != nil {
		e.UUID = string(m)
	}
	p.add(e)
}

func (p *parser) sxid(st stamp, msg []byte) {
	m := sxidRe.FindSubmatch(msg)
	if m == nil {
		p.in.Issuef(facts.IssueMalformed, "an SXid line without the (PCI:dddd:bb:dd.f): code part")
		return
	}
	e := p.newEvent(st, facts.KernelSXid, msg)
	e.BusID, _ = NormalizeBusID(string(m[1]))
	e.Code = atoi(m[2])
	e.Fatal = saysFatal(m[3])
	p.add(e)
}

// saysFatal reports a "Fatal" word that is not "Non-fatal"/"Nonfatal".
func saysFatal(b []byte) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("Fatal"))
		if j < 0 {
			return false
		}
		j += i
		if j == 0 || !isAlpha(b[j-1]) && b[j-1] != '-' {
			end := j + len("Fatal")
			if end == len(b) || !isAlpha(b[end]) {
				return true
			}
		}
		i = j + 1
	}
}

func (p *parser) oomLine(st stamp, msg []byte) {
	switch {
	case bytes.Contains(msg, []byte("invoked oom-killer:")):
		// A new kill starts; one cut before its Killed line ends here.
		p.flushOOM(false)
		p.oom = oomState{active: true}
	case bytes.HasPrefix(msg, []byte("oom-kill:")):
		p.oom.active = true
		p.oom.line, p.oom.st, p.oom.text = p.in.Line(), st, p.text(msg)
		for _, kv := range bytes.Split(msg[len("oom-kill:"):], []byte{','}) {
			k, v, ok := bytes.Cut(kv, []byte{'='})
			if !ok {
				continue
			}
			switch string(k) {
			case "constraint":
				p.oom.constraint = string(v)
			case "oom_memcg":
				p.oom.memcg = string(v)
			case "task":
				p.oom.task = p.text(v)
			case "pid":
				p.oom.pid = atoi(v)
			}
		}
	case bytes.HasPrefix(msg, []byte("Memory cgroup stats for ")):
		if m := memcgRe.FindSubmatch(msg); m != nil && p.oom.memcg == "" {
			p.oom.memcg = string(m[1])
		}
	case bytes.HasPrefix(msg, []byte("Task in ")):
		// Kernels before 4.19 name the cgroup whose limit was hit this way.
		if m := taskInRe.FindSubmatch(msg); m != nil {
			p.oom.active = true
			p.oom.memcg = string(m[2])
			if p.oom.constraint == "" {
				p.oom.constraint = "CONSTRAINT_MEMCG"
			}
		}
	case bytes.HasPrefix(msg, []byte("Memory cgroup out of memory: Kill process ")):
		if p.oom.constraint == "" {
			p.oom.constraint = "CONSTRAINT_MEMCG"
		}
	case bytes.HasPrefix(msg, []byte("Killed process ")) || bytes.HasPrefix(msg, []byte("Out of memory")) ||
		bytes.HasPrefix(msg, []byte("Memory cgroup out of memory: Killed process ")):
		if bytes.Contains(msg, []byte("Killed process ")) {
			p.killed(st, msg)
		}
	}
}

func (p *parser) killed(st stamp, msg []byte) {
	m := killedRe.FindSubmatchIndex(msg)
	if m == nil {
		p.in.Issuef(facts.IssueMalformed, "a Killed process line without a pid and (name)")
		return
	}
	e := p.newEvent(st, facts.KernelOOMKill, msg)
	e.PID = atoi(msg[m[2]:m[3]])
	comm := msg[m[4]:m[5]]
	// The name ends at the ')' before the counters; a name may hold ')'.
	if i := bytes.Index(comm, []byte(") ")); i >= 0 {
		comm = comm[:i]
	}
	e.Comm = p.text(comm)
	anon, okA := kbField(msg, "anon-rss:")
	file, okF := kbField(msg, "file-rss:")
	shmem, okS := kbField(msg, "shmem-rss:")
	if okA || okF || okS {
		e.RSSKB = anon + file + shmem
	}
	o := p.oom
	if o.pid == 0 || o.pid == e.PID {
		e.Constraint = o.constraint
	}
	if e.Constraint == "" && bytes.HasPrefix(msg, []byte("Memory cgroup out of memory")) {
		// Kernels before 4.19 print no oom-kill: summary.
		e.Constraint = "CONSTRAINT_MEMCG"
	}
	if e.Constraint == "CONSTRAINT_MEMCG" {
		e.Cgroup = o.memcg
	}
	p.add(e)
	p.oom = oomState{}
}

// flushOOM emits a kill whose "Killed process" line never came (the ring
// buffer was cut or the capture ended), from its oom-kill: summary line.
func (p *parser) flushOOM(atEOF bool) {
	o := p.oom
	p.oom = oomState{}
	if o.line == 0 {
		return
	}
	e := &facts.KernelEvent{Src: facts.Source{File: p.in.Path, Line: o.line}, Type: facts.KernelOOMKill, GPU: -1,
		PID: o.pid, Comm: o.task, Constraint: o.constraint, Text: o.text}
	if o.constraint == "CONSTRAINT_MEMCG" {
		e.Cgroup = o.memcg
	}
	if o.st.kind != stampNone && o.st.kind != stampUptime {
		e.Time = o.st.t
	}
	if o.st.hasUp {
		e.Uptime = o.st.up
	}
	p.add(e)
	where := "before the next OOM kill"
	if atEOF {
		where = "before the end of the file"
	}
	p.in.IssueAt(o.line, facts.IssueIncomplete, "OOM kill of pid %d: its Killed process line is missing %s; victim taken from the oom-kill summary", o.pid, where)
}

func (p *parser) crash(st stamp, msg []byte) {
	m := crashRe.FindSubmatch(msg)
	if m == nil {
		return // "traps:" lines of other shapes carry nothing we use
	}
	e := p.newEvent(st, facts.KernelSegfault, msg)
	e.Comm = p.text(m[1])
	e.PID = atoi(m[2])
	p.add(e)
}

func (p *parser) hungTask(st stamp, msg []byte) {
	m := hungTaskRe.FindSubmatch(msg)
	if m == nil {
		return
	}
	e := p.newEvent(st, facts.KernelHungTask, msg)
	e.Comm = p.text(m[1])
	e.PID = atoi(m[2])
	p.add(e)
}

// kbField reads "name:1234kB" anywhere in msg.
func kbField(msg []byte, name string) (int64, bool) {
	i := bytes.Index(msg, []byte(name))
	if i < 0 {
		return 0, false
	}
	b := msg[i+len(name):]
	var v int64
	j := 0
	for j < len(b) && isDigit(b[j]) && j < 18 {
		v = v*10 + int64(b[j]-'0')
		j++
	}
	return v, j > 0
}

func atoi(b []byte) int {
	v := 0
	for i, c := range b {
		if !isDigit(c) || i >= 10 {
			return v
		}
		v = v*10 + int(c-'0')
	}
	return v
}

// NormalizeBusID writes a PCI address the way nvidia-smi's 8-digit form
// does, in lower case with the function: "0000:9b:00" (dmesg Xid),
// "00000000:9B:00.0" (nvidia-smi) and "PCI:0000:9b:00" all become
// "00000000:9b:00.0". It reports false for anything else.
func NormalizeBusID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "PCI:")
	dom, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", false
	}
	bus, rest, ok := strings.Cut(rest, ":")
	if !ok {
		// Two parts: bus:device without a domain.
		bus, rest, dom = dom, bus, "0"
	}
	dev, fn, hasFn := strings.Cut(rest, ".")
	if !hasFn {
		fn = "0"
	}
	d, err1 := strconv.ParseUint(dom, 16, 32)
	b, err2 := strconv.ParseUint(bus, 16, 8)
	v, err3 := strconv.ParseUint(dev, 16, 8)
	f, err4 := strconv.ParseUint(fn, 16, 4)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(dom) > 8 || len(bus) > 2 || len(dev) > 2 || v > 0x1f || f > 7 {
		return "", false
	}
	const hexd = "0123456789abcdef"
	var out [16]byte
	for i := 7; i >= 0; i-- {
		out[i] = hexd[d&0xf]
		d >>= 4
	}
	out[8] = ':'
	out[9], out[10] = hexd[b>>4], hexd[b&0xf]
	out[11] = ':'
	out[12], out[13] = hexd[v>>4], hexd[v&0xf]
	out[14] = '.'
	out[15] = hexd[f]
	return string(out[:]), true
}
