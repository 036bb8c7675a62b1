package kernlog

import (
	"bytes"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// stampKind says what a line's time prefix gives.
type stampKind uint8

const (
	stampNone   stampKind = iota
	stampUptime           // plain dmesg: seconds since boot
	stampWall             // dmesg -T: wall clock without zone
	stampNoYear           // syslog / journalctl short: no year, no zone
	stampZoned            // dmesg --time-format iso, journalctl -o short-iso
)

// stamp is the time prefix of one line.
type stamp struct {
	kind  stampKind
	t     time.Time
	up    time.Duration
	hasUp bool
	month time.Month // for stampNoYear, to detect a year rollover
	isIso bool
	// dmesgISO marks dmesg --time-format iso (a comma before the fraction),
	// which no other program writes.
	dmesgISO bool
	hadKey   bool // the line had a recognized kernel-log prefix
}

// splitPrefix separates a kernel log line into its time prefix and the
// message. It understands plain dmesg, dmesg -T, dmesg -x, dmesg
// --time-format iso/reltime, syslog and journalctl short / short-iso /
// short-monotonic. It never allocates.
func splitPrefix(line []byte) (st stamp, msg []byte) {
	line = stripFacility(line)
	msg = line
	switch {
	case len(line) > 2 && line[0] == '[':
		end := bytes.IndexByte(line, ']')
		if end < 0 {
			return st, msg
		}
		inner := line[1:end]
		rest := line[end+1:]
		if len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		if up, ok := parseUptime(inner); ok {
			st.kind, st.up, st.hasUp, st.hadKey = stampUptime, up, true, true
			return st, stripHostKernel(rest)
		}
		if t, ok := parseCtime(inner); ok {
			st.kind, st.t, st.hadKey = stampWall, t, true
			return st, stripHostKernel(rest)
		}
		if isReltime(inner) {
			st.hadKey = true
			return st, rest
		}
		return st, msg
	case len(line) >= 20 && isDigit(line[0]) && line[4] == '-' && line[10] == 'T':
		t, n, comma, ok := parseISO(line)
		if !ok || n >= len(line) || line[n] != ' ' {
			return st, msg
		}
		st.kind, st.t, st.isIso, st.hadKey = stampZoned, t, true, true
		rest := line[n+1:]
		if comma {
			// dmesg --time-format iso: the message follows directly.
			st.dmesgISO = true
			return st, rest
		}
		return st, journalRest(&st, rest)
	case len(line) >= 16 && line[3] == ' ' && monthOf(line[:3]) != 0:
		t, n, ok := parseSyslogTime(line)
		if !ok || n >= len(line) || line[n] != ' ' {
			return st, msg
		}
		st.kind, st.t, st.month, st.hadKey = stampNoYear, t, t.Month(), true
		return st, journalRest(&st, line[n+1:])
	}
	return st, msg
}

// journalRest strips "host ident[pid]: " of a syslog or journal line, and
// the "[uptime] " that syslog keeps inside kernel messages.
func journalRest(st *stamp, rest []byte) []byte {
	sp := bytes.IndexByte(rest, ' ')
	if sp < 0 {
		return rest
	}
	var msg []byte
	if sp > 1 && rest[sp-1] == ':' {
		// "kernel: NVRM: ...": the host was left out (a paste that hid
		// it); a host name never ends in a colon, the ident does.
		msg = rest[sp+1:]
	} else {
		after := rest[sp+1:]
		colon := bytes.Index(after, []byte(": "))
		if colon < 0 || bytes.IndexByte(after[:colon], ' ') >= 0 {
			return rest
		}
		msg = after[colon+2:]
	}
	if len(msg) > 2 && msg[0] == '[' {
		if end := bytes.IndexByte(msg, ']'); end > 0 {
			if up, ok := parseUptime(msg[1:end]); ok {
				st.up, st.hasUp = up, true
				msg = bytes.TrimPrefix(msg[end+1:], []byte{' '})
			}
		}
	}
	return msg
}

// stripHostKernel removes the "host kernel: " that journalctl -o
// short-monotonic puts after the bracketed time.
func stripHostKernel(rest []byte) []byte {
	sp := bytes.IndexByte(rest, ' ')
	if sp > 0 && bytes.HasPrefix(rest[sp+1:], []byte("kernel: ")) {
		return rest[sp+1+len("kernel: "):]
	}
	return rest
}

// stripFacility removes dmesg -x's "kern  :warn  : ".
func stripFacility(line []byte) []byte {
	i := 0
	for pass := 0; pass < 2; pass++ {
		j := i
		for j < len(line) && line[j] >= 'a' && line[j] <= 'z' {
			j++
		}
		if j == i || j-i > 8 {
			return line
		}
		for j < len(line) && line[j] == ' ' {
			j++
		}
		if j >= len(line) || line[j] != ':' {
			return line
		}
		i = j + 1
	}
	if i < len(line) && line[i] == ' ' {
		return line[i+1:]
	}
	return line
}

// parseUptime reads "  227.480016" (seconds since boot).
func parseUptime(b []byte) (time.Duration, bool) {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	start := i
	var sec int64
	for i < len(b) && isDigit(b[i]) {
		if i-start > 12 {
			return 0, false
		}
		sec = sec*10 + int64(b[i]-'0')
		i++
	}
	if i == start || i >= len(b) || b[i] != '.' {
		return 0, false
	}
	i++
	var frac int64
	digits := 0
	for i < len(b) && isDigit(b[i]) {
		if digits < 9 {
			frac = frac*10 + int64(b[i]-'0')
			digits++
		}
		i++
	}
	if digits == 0 || i != len(b) {
		return 0, false
	}
	for ; digits < 9; digits++ {
		frac *= 10
	}
	return time.Duration(sec)*time.Second + time.Duration(frac), true
}

// parseCtime reads "Mon Nov 30 04:57:31 2026" (the day may be space-padded).
func parseCtime(b []byte) (time.Time, bool) {
	if len(b) < 20 || !isAlpha(b[0]) {
		return time.Time{}, false
	}
	i := skipWord(b, 0)
	i = skipSpaces(b, i)
	if i+3 > len(b) {
		return time.Time{}, false
	}
	mon := monthOf(b[i : i+3])
	if mon == 0 {
		return time.Time{}, false
	}
	i = skipSpaces(b, i+3)
	day, i, ok := readInt(b, i, 2)
	if !ok {
		return time.Time{}, false
	}
	i = skipSpaces(b, i)
	h, m, s, i, ok := readClock(b, i)
	if !ok {
		return time.Time{}, false
	}
	i = skipSpaces(b, i)
	year, i, ok := readInt(b, i, 4)
	if !ok || i != len(b) || year < 1970 {
		return time.Time{}, false
	}
	return mkTime(year, mon, day, h, m, s, 0)
}

// parseSyslogTime reads "Oct  3 17:59:17" / "Oct 03 17:59:17" and returns
// the time in year facts.BaseYear and the bytes consumed.
func parseSyslogTime(b []byte) (time.Time, int, bool) {
	mon := monthOf(b[:3])
	i := skipSpaces(b, 4)
	day, i, ok := readInt(b, i, 2)
	if !ok || i >= len(b) || b[i] != ' ' {
		return time.Time{}, 0, false
	}
	h, m, s, i, ok := readClock(b, i+1)
	if !ok {
		return time.Time{}, 0, false
	}
	// short-precise adds microseconds.
	ns := 0
	if i < len(b) && b[i] == '.' {
		ns, i = readFrac(b, i+1)
	}
	t, ok := mkTime(facts.BaseYear, mon, day, h, m, s, ns)
	return t, i, ok
}

// parseISO reads "2025-02-23T16:24:18,123456+00:00", "...T17:59:17+0000",
// "...T17:59:17.123456Z". It returns the instant in UTC, the bytes consumed
// and whether a comma separated the fraction (dmesg's iso format).
func parseISO(b []byte) (t time.Time, n int, comma bool, ok bool) {
	year, i, ok1 := readInt(b, 0, 4)
	if !ok1 || i != 4 || b[4] != '-' {
		return t, 0, false, false
	}
	mon, i, ok1 := readInt(b, 5, 2)
	if !ok1 || i != 7 || b[7] != '-' {
		return t, 0, false, false
	}
	day, i, ok1 := readInt(b, 8, 2)
	if !ok1 || i != 10 || b[10] != 'T' {
		return t, 0, false, false
	}
	h, m, s, i, ok1 := readClock(b, 11)
	if !ok1 {
		return t, 0, false, false
	}
	ns := 0
	if i < len(b) && (b[i] == '.' || b[i] == ',') {
		comma = b[i] == ','
		ns, i = readFrac(b, i+1)
	}
	off := 0
	switch {
	case i < len(b) && b[i] == 'Z':
		i++
	case i < len(b) && (b[i] == '+' || b[i] == '-'):
		sign := 1
		if b[i] == '-' {
			sign = -1
		}
		oh, j, ok2 := readInt(b, i+1, 2)
		if !ok2 || j != i+3 {
			return t, 0, false, false
		}
		if j < len(b) && b[j] == ':' {
			j++
		}
		om, k, ok2 := readInt(b, j, 2)
		if !ok2 || k != j+2 {
			return t, 0, false, false
		}
		off = sign * (oh*3600 + om*60)
		i = k
	default:
		return t, 0, false, false
	}
	if mon < 1 || mon > 12 {
		return t, 0, false, false
	}
	t, ok = mkTime(year, time.Month(mon), day, h, m, s, ns)
	if !ok {
		return t, 0, false, false
	}
	return t.Add(-time.Duration(off) * time.Second), i, comma, true
}

// isReltime recognizes dmesg --time-format reltime: "Feb23 16:24" or "  +0.000123".
func isReltime(b []byte) bool {
	i := skipSpaces(b, 0)
	if i < len(b) && b[i] == '+' {
		_, ok := parseUptime(b[i+1:])
		return ok
	}
	return len(b) >= 11 && monthOf(b[i:min(i+3, len(b))]) != 0 && i+3 < len(b) && isDigit(b[i+3])
}

func mkTime(year int, mon time.Month, day, h, m, s, ns int) (time.Time, bool) {
	if day < 1 || day > 31 || h > 23 || m > 59 || s > 60 {
		return time.Time{}, false
	}
	return time.Date(year, mon, day, h, m, s, ns, time.UTC), true
}

func readClock(b []byte, i int) (h, m, s, next int, ok bool) {
	if i+8 > len(b) || b[i+2] != ':' || b[i+5] != ':' {
		return 0, 0, 0, i, false
	}
	var ok1, ok2, ok3 bool
	h, _, ok1 = readInt(b, i, 2)
	m, _, ok2 = readInt(b, i+3, 2)
	s, _, ok3 = readInt(b, i+6, 2)
	return h, m, s, i + 8, ok1 && ok2 && ok3
}

// readInt reads up to max digits at i.
func readInt(b []byte, i, max int) (v, next int, ok bool) {
	start := i
	for i < len(b) && i-start < max && isDigit(b[i]) {
		v = v*10 + int(b[i]-'0')
		i++
	}
	return v, i, i > start
}

func readFrac(b []byte, i int) (ns, next int) {
	digits := 0
	for i < len(b) && isDigit(b[i]) {
		if digits < 9 {
			ns = ns*10 + int(b[i]-'0')
			digits++
		}
		i++
	}
	for ; digits < 9 && digits > 0; digits++ {
		ns *= 10
	}
	return ns, i
}

func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

func skipWord(b []byte, i int) int {
	for i < len(b) && b[i] != ' ' {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

var monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func monthOf(b []byte) time.Month {
	if len(b) != 3 {
		return 0
	}
	for i, n := range monthNames {
		if b[0] == n[0] && b[1] == n[1] && b[2] == n[2] {
			return time.Month(i + 1)
		}
	}
	return 0
}
