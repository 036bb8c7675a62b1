package procs

import (
	"bytes"
	"strconv"
	"time"
)

// parseUint reads a decimal integer without allocating; ok is false on any
// other byte or on overflow.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseInt reads an optionally signed decimal integer.
func parseInt(b []byte) (int64, bool) {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		n, ok := parseUint(b[1:])
		if b[0] == '-' {
			n = -n
		}
		return n, ok
	}
	return parseUint(b)
}

// parseFloat reads a decimal number; a decimal comma (top and ps under a
// German or French LC_NUMERIC) is read as a point.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 32 {
		return 0, false
	}
	// Fast path for what ps and top print ("99.8", "0,0", "100"): a mantissa
	// below 2^53 divided by an exact power of ten rounds as ParseFloat does.
	var m uint64
	digits, frac, sep := 0, 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if sep {
				frac++
			}
		case (c == '.' || c == ',') && !sep:
			sep = true
		default:
			digits = 99 // not plain: let strconv decide
		}
	}
	if digits > 0 && digits <= 15 {
		return float64(m) / pow10[frac], true
	}
	// Signed or long: strconv, after checking that it is a plain number
	// (ParseFloat also takes "NaN", "Inf", "1e5", hex).
	var buf [32]byte
	n := copy(buf[:], b)
	seen := false
	for i := 0; i < n; i++ {
		switch c := buf[i]; {
		case c >= '0' && c <= '9':
		case (c == '.' || c == ',') && !seen:
			seen = true
			buf[i] = '.'
		case (c == '-' || c == '+') && i == 0 && n > 1:
		default:
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(buf[:n]), 64)
	return f, err == nil
}

var pow10 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// maxSeconds bounds every duration read (a century), so that no
// multiplication overflows.
const maxSeconds = 100 * 366 * 24 * 3600

// parseCPUTime reads cumulative CPU or elapsed time in every form ps and top
// print it:
//
//	bsdtime   M:SS, MMM:SS             (ps aux TIME)
//	time      [DD-]HH:MM:SS            (ps -f TIME, -o time)
//	etime     [[DD-]hh:]mm:ss          (-o etime)
//	times     seconds                  (-o times, -o etimes)
//	TIME+     M:SS.hh                  (top)
//	top when the column is too narrow: H,MM (hours,minutes), Nh, Nd, Nw
func parseCPUTime(b []byte) (time.Duration, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if s, ok := parseUint(b); ok {
		if s > maxSeconds {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	switch b[len(b)-1] {
	case 'h', 'd', 'w':
		n, ok := parseUint(b[:len(b)-1])
		unit := int64(3600)
		switch b[len(b)-1] {
		case 'd':
			unit = 86400
		case 'w':
			unit = 7 * 86400
		}
		if !ok || n > maxSeconds/unit {
			return 0, false
		}
		return time.Duration(n*unit) * time.Second, true
	}
	if i := bytes.IndexByte(b, ','); i > 0 && bytes.IndexByte(b, ':') < 0 {
		h, ok1 := parseUint(b[:i])
		m, ok2 := parseUint(b[i+1:])
		if !ok1 || !ok2 || m > 59 || h > maxSeconds/3600 {
			return 0, false
		}
		return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, true
	}
	var days int64
	hasDays := false
	if i := bytes.IndexByte(b, '-'); i >= 0 {
		d, ok := parseUint(b[:i])
		if !ok {
			return 0, false
		}
		days, b, hasDays = d, b[i+1:], true
	}
	var frac time.Duration
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		f := b[i+1:]
		h, ok := parseUint(f)
		if !ok || len(f) > 9 {
			return 0, false
		}
		frac = time.Duration(h)
		for k := len(f); k < 9; k++ {
			frac *= 10
		}
		b = b[:i]
	}
	var parts [3]int64
	n := 0
	for len(b) > 0 {
		if n == 3 {
			return 0, false
		}
		i := bytes.IndexByte(b, ':')
		field := b
		if i >= 0 {
			field, b = b[:i], b[i+1:]
			if len(b) == 0 {
				return 0, false
			}
		} else {
			b = nil
		}
		v, ok := parseUint(field)
		if !ok {
			return 0, false
		}
		parts[n] = v
		n++
	}
	var d time.Duration
	switch n {
	case 2: // minutes:seconds, minutes unbounded
		if parts[1] > 59 {
			return 0, false
		}
		d = time.Duration(parts[0])*time.Minute + time.Duration(parts[1])*time.Second
	case 3:
		if parts[1] > 59 || parts[2] > 59 {
			return 0, false
		}
		d = time.Duration(parts[0])*time.Hour + time.Duration(parts[1])*time.Minute + time.Duration(parts[2])*time.Second
	default:
		return 0, false
	}
	if hasDays && n != 3 || days > maxSeconds/86400 || parts[0] > maxSeconds/60 {
		return 0, false
	}
	return time.Duration(days)*24*time.Hour + d + frac, true
}

// parseKB reads a memory size in KiB as top prints it: plain KiB, or scaled
// with a suffix (m, g, t, p, e; k for KiB) when the column is too narrow.
func parseKB(b []byte) (int64, bool) {
	if n, ok := parseUint(b); ok {
		return n, true
	}
	if len(b) < 2 {
		return 0, false
	}
	var scale float64
	switch b[len(b)-1] {
	case 'k', 'K':
		scale = 1
	case 'm', 'M':
		scale = 1 << 10
	case 'g', 'G':
		scale = 1 << 20
	case 't', 'T':
		scale = 1 << 30
	case 'p', 'P':
		scale = 1 << 40
	case 'e', 'E':
		scale = 1 << 50
	default:
		return 0, false
	}
	f, ok := parseFloat(b[:len(b)-1])
	if !ok || f < 0 || f*scale > 1<<62 {
		return 0, false
	}
	return int64(f*scale + 0.5), true
}

// validState reports a known process state letter: R S D Z T t I X, and the
// obsolete W, K, P, x, w that older kernels and procps print.
func validState(c byte) bool {
	switch c {
	case 'R', 'S', 'D', 'Z', 'T', 't', 'I', 'X', 'W', 'K', 'P', 'x', 'w':
		return true
	}
	return false
}

// validStat checks the STAT flags that follow the state letter.
func validStat(b []byte) bool {
	if len(b) == 0 || !validState(b[0]) {
		return false
	}
	for _, c := range b[1:] {
		switch c {
		case '<', 'N', 'L', 's', 'l', '+', 'W':
		default:
			return false
		}
	}
	return true
}

// months maps abbreviated month names of the locales ps is commonly run
// under (C/English, German, French, Spanish, Italian, Portuguese, Dutch) to
// months. Keys are lower case without a trailing dot.
var months = func() map[string]time.Month {
	m := map[string]time.Month{}
	add := func(mo time.Month, names ...string) {
		for _, n := range names {
			m[n] = mo
		}
	}
	add(time.January, "jan", "janv", "ene", "gen", "jän")
	add(time.February, "feb", "févr", "fevr", "fév", "fev")
	add(time.March, "mar", "mär", "mrz", "mars", "marzo", "mrt")
	add(time.April, "apr", "avr", "abr", "avril")
	add(time.May, "may", "mai", "mag", "mei", "maio")
	add(time.June, "jun", "juin", "giu")
	add(time.July, "jul", "juil", "lug")
	add(time.August, "aug", "août", "aout", "ago")
	add(time.September, "sep", "sept", "set")
	add(time.October, "oct", "okt", "ott", "out")
	add(time.November, "nov")
	add(time.December, "dec", "dez", "déc", "dic")
	return m
}()

// monthOf reads an abbreviated month name in any known locale.
func monthOf(b []byte) (time.Month, bool) {
	b = bytes.TrimSuffix(b, []byte{'.'})
	if len(b) < 3 || len(b) > 8 {
		return 0, false
	}
	var buf [8]byte
	n := copy(buf[:], b)
	for i := 0; i < n; i++ {
		if c := buf[i]; c >= 'A' && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	m, ok := months[string(buf[:n])]
	return m, ok
}

// splitMonthDay splits "Nov29" / "Mär05" (START/STIME of an earlier day)
// into a month and a day.
func splitMonthDay(b []byte) (time.Month, int, bool) {
	i := len(b)
	for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	if i == len(b) || len(b)-i > 2 {
		return 0, 0, false
	}
	m, ok := monthOf(b[:i])
	if !ok {
		return 0, 0, false
	}
	d, _ := parseUint(b[i:])
	if d < 1 || d > 31 {
		return 0, 0, false
	}
	return m, int(d), true
}

// parseClock reads HH:MM:SS.
func parseClock(b []byte) (h, m, s int, ok bool) {
	if len(b) != 8 || b[2] != ':' || b[5] != ':' {
		return 0, 0, 0, false
	}
	hh, ok1 := parseUint(b[0:2])
	mm, ok2 := parseUint(b[3:5])
	ss, ok3 := parseUint(b[6:8])
	if !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 60 {
		return 0, 0, 0, false
	}
	return int(hh), int(mm), int(ss), true
}

// parseLstart reads the five words of lstart ("Mon Nov 30 04:24:04 2026", in
// any locale's names) as a wall-clock reading stored in UTC. The weekday is
// not checked: it is redundant, and localized names are many.
func parseLstart(w [5][]byte) (time.Time, bool) {
	mo, ok := monthOf(w[1])
	if !ok {
		return time.Time{}, false
	}
	d, ok := parseUint(w[2])
	if !ok || d < 1 || d > 31 {
		return time.Time{}, false
	}
	h, mi, s, ok := parseClock(w[3])
	if !ok {
		return time.Time{}, false
	}
	y, ok := parseUint(w[4])
	if !ok || y < 1970 || y > 9999 || len(w[4]) != 4 {
		return time.Time{}, false
	}
	t := time.Date(int(y), mo, int(d), h, mi, s, 0, time.UTC)
	if t.Day() != int(d) { // Feb 30 and the like
		return time.Time{}, false
	}
	return t, true
}
