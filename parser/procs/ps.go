package procs

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/capture"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// maxIssues is how many unreadable lines a file reports one by one; a file
// of a foreign format must not bury the report in issues.
const maxIssues = 50

// parser holds the state of one file: the current snapshot and its header.
type parser struct {
	in   *textio.Input
	kind facts.Kind
	out  *facts.Facts
	ws   []span

	snap         *facts.ProcSnapshot
	hdr          header
	has          map[string]bool
	table        bool // rows follow (a header, or headerless rows)
	forest       bool // a forest prefix was seen
	stack        []int
	last         *facts.Process // the previous row, which a wrapped line continues
	lastAt       int            // its line
	lastLen      int            // the length of that line as read
	lastComplete bool           // it had every column
	wrapWidth    int            // the terminal width of the first wrap seen

	// lstart+etime of every row that has both, in Unix seconds.
	sums []int64

	// top frame state: the summary lines before the table.
	topSummary bool

	// A `date` line waiting for the next snapshot.
	pending      time.Time
	pendingZoned bool
	pendingLine  int

	strs    map[string]string // interned short values
	badUTF8 bool              // the current line is not valid UTF-8

	// servers are the pids of the server's processes in the current
	// snapshot: their children are kept past MaxRows.
	servers map[int]struct{}
	thin    snapThinner

	latest     time.Time // latest zone-less time of the file
	noZone     bool
	issues     int
	suppressed int
	lastIssue  int
}

func (p *parser) issuef(line int, kind facts.IssueKind, format string, args ...any) {
	p.issues++
	if p.issues > maxIssues {
		p.suppressed++
		return
	}
	p.lastIssue = line
	p.in.IssueAt(line, kind, format, args...)
}

// text keeps the words of a line as a string, invalid UTF-8 replaced (the
// scanner counts such lines for the file's issue).
func (p *parser) text(b []byte) string {
	if p.badUTF8 {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	return string(b)
}

// intern returns a shared string for the short values that repeat on
// every row (user, tty, stat, start, comm), sparing an allocation each.
func (p *parser) intern(b []byte) string {
	if p.badUTF8 {
		return p.text(b)
	}
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(p.strs) < 4096 && len(b) <= 32 {
		if p.strs == nil {
			p.strs = make(map[string]string)
		}
		p.strs[s] = s
	}
	return s
}

// monthDay renders START's "Nov29" form in English.
func (p *parser) monthDay(m time.Month, d int) string {
	var buf [5]byte
	copy(buf[:3], m.String())
	buf[3], buf[4] = byte('0'+d/10), byte('0'+d%10)
	return p.intern(buf[:])
}

func trimBlank(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (p *parser) line(raw []byte) {
	line := trimBlank(raw)
	if len(line) == 0 {
		return
	}
	p.badUTF8 = !p.in.CheckUTF8()
	if bytes.HasPrefix(line, []byte("top - ")) {
		p.startTop(line)
		return
	}
	if bytes.Contains(line, []byte("PID")) {
		if h, ok := parseHeader(line); ok {
			p.startTable(h)
			return
		}
	}
	if p.topSummary {
		p.topLine(line)
		return
	}
	if p.table {
		if p.row(line) {
			return
		}
		p.nonRow(line)
		return
	}
	// No header yet: a headerless `ps aux | grep` capture.
	p.ws = words(line, p.ws)
	if p.kind != facts.KindTop {
		if looksLikeAuxRow(line, p.ws) {
			p.startHeaderless(auxColumns())
			p.row(line)
			return
		}
		if looksLikeEfRow(line, p.ws) {
			p.startHeaderless(efColumns())
			p.row(line)
			return
		}
	}
	p.nonRow(line)
}

// nonRow handles a line that is not a row of the current table: a date
// stamp, the echo of a command, the rest of a wrapped row, or junk.
func (p *parser) nonRow(line []byte) {
	n := p.in.Line()
	if len(line) <= 64 && bytes.IndexByte(line, ':') >= 0 {
		if t, zoned, ok := capture.ParseStamp(string(line)); ok {
			p.endSnapshot()
			p.table = false
			p.pending, p.pendingZoned, p.pendingLine = t, zoned, n
			return
		}
	}
	if isPrompt(line) {
		p.endSnapshot()
		p.table = false
		return
	}
	if p.wrapped(n) {
		// A terminal wrapped a long row; the rest of its command is here.
		p.last.Args += p.text(line)
		p.lastAt = n
		p.wrapWidth = p.lastLen
		p.lastLen = len(p.in.Bytes())
		classify(p.last)
		p.issuef(n, facts.IssueMalformed, "line continues the command of pid %d (a row wrapped at the terminal width); joined to it", p.last.PID)
		return
	}
	if p.snap == nil {
		p.issuef(n, facts.IssueUnrecognized, "not a ps or top line before any header: %q", clip(line))
		return
	}
	p.issuef(n, facts.IssueMalformed, "not a row of the %s table: %q", p.snap.Format, clip(line))
}

// wrapped reports whether line n continues the row above it: the row above
// is complete, ends with the command, and filled a terminal's width (the
// same width as every earlier wrap).
func (p *parser) wrapped(n int) bool {
	if p.last == nil || !p.table || p.lastAt != n-1 || !p.lastComplete || p.last.Args == "" {
		return false
	}
	if c := p.hdr.cols; len(c) == 0 || c[len(c)-1].kind != colArgs {
		return false
	}
	if p.wrapWidth > 0 {
		return p.lastLen == p.wrapWidth
	}
	return p.lastLen >= 80
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// startTable begins a snapshot at a header line; inside a top frame the
// header starts the frame's table instead.
func (p *parser) startTable(h header) {
	if p.snap != nil && p.snap.Format == "top" && p.topSummary {
		p.topSummary = false
		p.hdr = h
		p.table = true
		p.initHas()
		return
	}
	p.endSnapshot()
	p.newSnapshot(h.format)
	p.hdr = h
	p.table = true
	p.initHas()
}

func (p *parser) startHeaderless(h header) {
	p.endSnapshot()
	p.newSnapshot(h.format)
	p.hdr = h
	p.table = true
	p.initHas()
}

func (p *parser) initHas() {
	p.has = make(map[string]bool, len(p.hdr.cols)+2)
	for _, c := range p.hdr.cols {
		p.has[c.key] = true
	}
}

func (p *parser) newSnapshot(format string) {
	p.snap = &facts.ProcSnapshot{Src: p.in.Src(), Format: format}
	if format == "top" {
		p.snap.Users = -1
	}
	p.forest = false
	p.stack = p.stack[:0]
	p.sums = p.sums[:0]
	p.last = nil
	if !p.pending.IsZero() {
		p.snap.At = p.pending
		p.snap.AtFrom = fmt.Sprintf("date line %s", p.in.Src().At(p.pendingLine))
		if !p.pendingZoned {
			p.noteZoneless(p.pending)
		}
		p.pending = time.Time{}
	}
}

func (p *parser) noteZoneless(t time.Time) {
	p.noZone = true
	if t.After(p.latest) {
		p.latest = t
	}
}

// endSnapshot completes the current snapshot: its time, its format name,
// the depths of a flat listing.
func (p *parser) endSnapshot() {
	s := p.snap
	if s == nil {
		return
	}
	p.snap = nil
	p.table = false
	p.topSummary = false
	if p.forest {
		switch s.Format {
		case "aux":
			s.Format = "auxf"
		case "top":
		default:
			s.Format += "-forest"
		}
	} else {
		for _, pr := range s.Procs {
			pr.Depth = -1
		}
	}
	p.snapshotTime(s)
	clear(p.servers)
	p.thin.add(s)
}

// snapshotTime sets At from lstart+etime. Start times are truncated to the
// second and elapsed times floored, so the true time lies within two seconds
// above each row's sum; the largest sum near the median is the tightest.
func (p *parser) snapshotTime(s *facts.ProcSnapshot) {
	if len(p.sums) == 0 {
		return
	}
	sorted := slices.Clone(p.sums)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	best, off := med, 0
	for _, v := range sorted {
		if v < med-2 || v > med+2 {
			off++
			continue
		}
		best = max(best, v)
	}
	at := time.Unix(best, 0).UTC()
	if off > 0 {
		p.issuef(s.Src.Line, facts.IssueClockJump, "%d of %d rows disagree by more than 2 s on the snapshot time (start + elapsed); the wall clock was likely stepped after they started; took %s from the others",
			off, len(sorted), at.Format(time.DateTime))
	}
	// A date line is a later stamp than the rows' own time only if zoned;
	// lstart is the evidence that matches the rows.
	s.At, s.AtFrom = at, "lstart+etimes"
	p.noteZoneless(at)
}

func (p *parser) finish() {
	p.endSnapshot()
	snaps := p.thin.done()
	p.out.Procs = append(p.out.Procs, snaps...)
	p.summarize(snaps)
	if p.noZone {
		c := p.out.Clocks[p.in.Path]
		c.NoZone = true
		if p.latest.After(c.Latest) {
			c.Latest = p.latest
		}
		p.out.Clocks[p.in.Path] = c
	}
}

// row parses one table row. It returns false, having added nothing, when the
// line has no pid where the header puts it: such a line is not a row.
func (p *parser) row(line []byte) bool {
	p.ws = words(line, p.ws)
	ws := p.ws
	cols := p.hdr.cols
	n := p.in.Line()
	pr := &facts.Process{Src: p.in.Src(), PPID: -1, Depth: -1, Rank: facts.NoRank, Has: p.has}
	word := func(i int) []byte { return line[ws[i].start:ws[i].end] }
	wi := 0  // next word
	pos := 0 // end of the last word read
	pid := false
	var bad []string // columns whose value could not be read
	missing := -1    // first column without a value
	var lstart time.Time
	var elapsed time.Duration
	hasElapsed := false

	for ci := 0; ci < len(cols); ci++ {
		c := cols[ci]
		if c.kind == colArgs && ci == len(cols)-1 {
			start := 0
			if pos > 0 {
				start = min(pos+1, len(line))
			}
			if c.start > start && c.start <= len(line) && isBlank(line[start:c.start]) {
				start = c.start
			}
			if start >= len(line) {
				if missing < 0 {
					missing = ci
				}
				break
			}
			p.setArgs(pr, line[start:])
			wi = len(ws)
			break
		}
		if wi >= len(ws) {
			if missing < 0 {
				missing = ci
			}
			break
		}
		if c.kind == colComm {
			end, next := commSpan(line, ws[wi].start, cols, ci)
			pr.Comm = p.intern(line[ws[wi].start:end])
			pos = end
			if ci+1 < len(cols) && cols[ci+1].kind == colArgs && ci+1 == len(cols)-1 {
				if next < len(line) {
					p.setArgs(pr, line[next:])
				} else if missing < 0 {
					missing = ci + 1
				}
				wi = len(ws)
				break
			}
			for wi < len(ws) && ws[wi].start < end {
				wi++
			}
			continue
		}
		w := word(wi)
		used := 1
		ok := true
		switch c.kind {
		case colPID:
			v, good := parseUint(w)
			if !good || v > 1<<31 {
				return false
			}
			pr.PID, pid = int(v), true
		case colPPID:
			v, good := parseInt(w)
			ok = good && v >= -1 && v <= 1<<31
			if ok {
				pr.PPID = int(v)
			}
		case colUser:
			pr.User = p.intern(w)
		case colPCPU, colC:
			pr.CPUPct, ok = parseFloat(w)
		case colPMEM:
			pr.MemPct, ok = parseFloat(w)
		case colVSZ:
			pr.VSZKB, ok = parseKB(w)
		case colRSS:
			pr.RSSKB, ok = parseKB(w)
		case colSHR:
			pr.SHRKB, ok = parseKB(w)
		case colTTY:
			pr.TTY = p.intern(w)
		case colStat, colState:
			pr.Stat = p.intern(w)
			if validStat(w) {
				pr.State = w[0]
			} else {
				ok = false
			}
		case colStart:
			used, lstart, ok = p.start(pr, line, ws[wi:])
		case colElapsed:
			elapsed, ok = parseCPUTime(w)
			if ok {
				pr.Elapsed, hasElapsed = elapsed, true
			} else if _, num := parseUint(w); num {
				// A number of seconds past a century: procps computes
				// etimes from the boot clock and the process's start
				// tick, and a process born while ps runs (or a clock of
				// another namespace) comes out as garbage. The row is
				// sound; its age is unknown.
				ok = true
			}
		case colTime:
			pr.CPUTime, ok = parseCPUTime(w)
		case colNLWP:
			var v int64
			v, ok = parseUint(w)
			ok = ok && v < 1<<31
			pr.NLWP = int(v)
		case colNice:
			var v int64
			v, ok = parseInt(w)
			ok = ok && v >= -100 && v <= 100
			pr.Nice = int(v)
		case colPri:
			pr.Priority = p.intern(w)
		case colArgs: // a command column that is not the last: one word
			pr.Args = p.text(w)
		}
		if !ok && !(len(w) == 1 && w[0] == '-') {
			bad = append(bad, fmt.Sprintf("%s %q", c.key, w))
		}
		wi += used
		pos = ws[wi-1].end
	}
	if !pid {
		return false
	}
	if wi < len(ws) {
		p.issuef(n, facts.IssueMalformed, "row has %d word(s) past its last column; ignored", len(ws)-wi)
	}
	if missing >= 0 {
		names := make([]string, 0, len(cols)-missing)
		for _, c := range cols[missing:] {
			names = append(names, c.key)
		}
		p.issuef(n, facts.IssueMalformed, "row of pid %d ends early: no value for %s; kept the columns before", pr.PID, strings.Join(names, ", "))
	}
	if len(bad) > 0 {
		p.issuef(n, facts.IssueMalformed, "row of pid %d: unreadable %s", pr.PID, strings.Join(bad, ", "))
	}
	if !lstart.IsZero() {
		pr.Start = lstart
		p.noteZoneless(lstart)
		if hasElapsed && len(p.sums) < MaxKept {
			// A sample is enough for the snapshot's time: the first rows.
			p.sums = append(p.sums, lstart.Unix()+int64(elapsed/time.Second))
		}
	}
	p.place(pr, n)
	classify(pr)
	p.keepRow(pr)
	p.last, p.lastAt, p.lastLen, p.lastComplete = pr, n, len(p.in.Bytes()), missing < 0
	return true
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// setArgs reads the last column: a forest prefix, then the command.
func (p *parser) setArgs(pr *facts.Process, raw []byte) {
	depth, rest := forestPrefix(raw)
	if depth > 0 {
		p.forest = true
	}
	pr.Depth = depth
	pr.Args = p.text(bytes.TrimLeft(rest, " \t"))
}

// forestPrefix counts the 4-byte units of a `ps f` prefix: "    " and " |  "
// for each ancestor level, " \_ " for the process itself.
func forestPrefix(raw []byte) (int, []byte) {
	d := 0
	for i := 0; i+4 <= len(raw); i += 4 {
		u := raw[i : i+4]
		switch string(u) {
		case ` \_ `:
			return d + 1, raw[i+4:]
		case "    ", " |  ":
			d++
			continue
		}
		break
	}
	// The row may sit a few bytes right of where its header says (an
	// overflowing column before it, a multi-byte month name in lstart):
	// the marker then ends the first run of blanks and pipes, and the
	// depth is the number of 4-byte units that run spans, rounded down.
	k := 0
	for k < len(raw) && (raw[k] == ' ' || raw[k] == '|') {
		k++
	}
	if bytes.HasPrefix(raw[k:], []byte(`\_ `)) {
		return max(1, (k+3)/4), raw[k+3:]
	}
	return 0, raw
}

// place records the forest position of a row and, when the format has no
// PPID column, its parent: the nearest row above it one level up.
func (p *parser) place(pr *facts.Process, line int) {
	d := max(pr.Depth, 0)
	if d > len(p.stack) {
		if len(p.stack) == 0 {
			p.issuef(line, facts.IssueMalformed, "forest prefix of pid %d is %d levels deep with no row above it; read as a root", pr.PID, d)
		} else {
			p.issuef(line, facts.IssueMalformed, "forest prefix of pid %d is %d levels deep under a row %d deep; took the row above as its parent", pr.PID, d, len(p.stack)-1)
		}
		d = len(p.stack)
		pr.Depth = d
	}
	p.stack = append(p.stack[:d], pr.PID)
	if d > 0 && !p.has["ppid"] {
		pr.PPID = p.stack[d-1]
	}
}

// commSpan finds where a comm value ends. comm is at most 15 bytes (the
// kernel's TASK_COMM_LEN) and may hold spaces ("UVM GPU1 BH"); ps pads it to
// its column, though not always the full width (pid 1's row in the corpus).
// So it ends at the first run of two blanks, or after 15 bytes followed by a
// blank. next is where the following column's text starts.
func commSpan(line []byte, s int, cols []column, ci int) (end, next int) {
	width := 15
	if ci+1 < len(cols) && cols[ci].start >= 0 && cols[ci+1].start > cols[ci].start {
		width = max(width, cols[ci+1].start-cols[ci].start-1)
	}
	r := line[s:]
	end = -1
	for k := 1; k+1 < len(r) && k <= width; k++ {
		if r[k] == ' ' && r[k+1] == ' ' {
			end = k
			break
		}
	}
	if end < 0 {
		switch {
		case len(r) <= width:
			end = len(r)
			if i := bytes.IndexByte(r, ' '); i > 0 && ci+1 < len(cols) {
				end = i
			}
		case r[width] == ' ':
			end = width
		default:
			end = bytes.IndexByte(r, ' ')
			if end < 0 {
				end = len(r)
			}
		}
	}
	end += s
	next = end
	for next < len(line) && line[next] == ' ' {
		next++
	}
	// Keep a forest prefix whole: start at the args column when the gap up
	// to it is padding.
	if ci+1 < len(cols) {
		if hs := cols[ci+1].start; hs >= end && hs < next {
			next = hs
		} else if next > end && next < len(line) && (line[next] == '\\' || line[next] == '|') {
			next--
		}
	}
	return end, next
}

// start reads a start column: lstart (5 words), "Mmm dd" of start/bsdstart
// (2 words), or one word (HH:MM, HH:MM:SS, MonDD, YYYY).
func (p *parser) start(pr *facts.Process, line []byte, ws []span) (used int, lstart time.Time, ok bool) {
	w := func(i int) []byte { return line[ws[i].start:ws[i].end] }
	if len(ws) >= 5 {
		if _, isMonth := monthOf(w(1)); isMonth {
			if t, good := parseLstart([5][]byte{w(0), w(1), w(2), w(3), w(4)}); good {
				if !p.has["lstart"] {
					p.has["lstart"] = true
				}
				return 5, t, true
			}
		}
	}
	if len(ws) >= 2 {
		if m, isMonth := monthOf(w(0)); isMonth {
			if d, good := parseUint(w(1)); good && d >= 1 && d <= 31 && len(w(1)) <= 2 {
				pr.StartRaw = p.monthDay(m, int(d))
				return 2, time.Time{}, true
			}
		}
	}
	v := w(0)
	switch {
	case len(v) == 5 && v[2] == ':':
		_, ok1 := parseUint(v[:2])
		_, ok2 := parseUint(v[3:])
		ok = ok1 && ok2
	case len(v) == 8 && v[2] == ':':
		_, _, _, ok = parseClock(v)
	case len(v) == 4:
		_, ok = parseUint(v)
	default:
		if m, d, good := splitMonthDay(v); good {
			// Month names of other locales are written in English so the
			// bundle's time pass can read them.
			pr.StartRaw = p.monthDay(m, d)
			return 1, time.Time{}, true
		}
	}
	if ok {
		pr.StartRaw = p.intern(v)
	}
	return 1, time.Time{}, ok
}
