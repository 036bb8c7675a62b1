package nvsmi

import (
	"bytes"
	"math"
	"strconv"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// valueState says what a printed value is.
type valueState uint8

const (
	valOK      valueState = iota
	valAbsent             // N/A, [Not Supported], deprecated, -, empty: no value, and nothing wrong
	valReadErr            // ERR!, Unknown Error, GPU is lost: nvidia-smi could not read it
	valBad                // not a number where one belongs
)

// unbracket strips the CSV form of the special words, "[N/A]" -> "N/A".
func unbracket(v []byte) []byte {
	v = bytes.TrimSpace(v)
	if len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']' {
		return bytes.TrimSpace(v[1 : len(v)-1])
	}
	return v
}

// special classifies the words nvidia-smi prints instead of a value
// (research §0.2). It returns valOK when v is none of them.
func special(v []byte) valueState {
	if len(v) > 0 && '0' <= v[0] && v[0] <= '9' {
		return valOK // the common case: a number, already trimmed
	}
	v = unbracket(v)
	if len(v) == 0 {
		return valAbsent
	}
	switch v[0] {
	case 'N', 'n', 'R', 'r', '-', 'E', 'e', 'U', 'u', 'G', 'g', 'I', 'i', 'T', 't':
	default:
		return valOK
	}
	switch {
	case eqFold(v, "n/a"), eqFold(v, "not supported"), eqFold(v, "not available"),
		eqFold(v, "requested functionality has been deprecated"), eqFold(v, "not found"),
		eqFold(v, "none"), eqFold(v, "-"), eqFold(v, "insufficient permissions"),
		eqFold(v, "unknown"):
		return valAbsent
	case eqFold(v, "err!"), eqFold(v, "unknown error"), eqFold(v, "gpu is lost"),
		eqFold(v, "gpu requires reset"), eqFold(v, "timeout"):
		return valReadErr
	}
	return valOK
}

func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// number reads the number at the start of a value and ignores the unit after
// it: "136025 MiB", "100 %", "100.00%", "627.40 W", "16x", "37C", "-8 C",
// "3072 bank(s)", "0 us". Hex ("0x1F") is read as an integer.
func number(v []byte) (float64, valueState) {
	if len(v) == 0 || v[0] < '0' || v[0] > '9' {
		if st := special(v); st != valOK {
			return 0, st
		}
		v = unbracket(v)
	}
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		n, ok := parseHex(v[2:])
		if !ok {
			return 0, valBad
		}
		return float64(n), valOK
	}
	neg := false
	i := 0
	if i < len(v) && (v[i] == '-' || v[i] == '+') {
		neg = v[i] == '-'
		i++
	}
	var mant uint64
	digits, frac := 0, 0
	dot := false
	start := i
	for ; i < len(v); i++ {
		c := v[i]
		if c == '.' && !dot {
			dot = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		if digits < 18 {
			mant = mant*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		} else if !dot {
			// Too long to hold exactly: let strconv do it.
			return slowNumber(v[start:], neg)
		}
	}
	if digits == 0 {
		return 0, valBad
	}
	// What follows must be a unit, not more of a malformed number.
	if i < len(v) {
		c := v[i]
		if c != ' ' && c != '%' && !isLetter(c) {
			return 0, valBad
		}
	}
	f := float64(mant) / pow10[frac]
	if neg {
		f = -f
	}
	return f, valOK
}

func slowNumber(v []byte, neg bool) (float64, valueState) {
	end := 0
	for end < len(v) && (v[end] == '.' || '0' <= v[end] && v[end] <= '9') {
		end++
	}
	f, err := strconv.ParseFloat(string(v[:end]), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, valBad
	}
	if neg {
		f = -f
	}
	return f, valOK
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func parseHex(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return n, true
}

// atoi reads a whole non-negative decimal integer.
func atoi(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// yes reads the Yes/No, Enabled/Disabled, Active/Not Active flags.
func yes(v []byte) bool {
	v = unbracket(v)
	return eqFold(v, "yes") || eqFold(v, "active") || eqFold(v, "enabled") || eqFold(v, "on") || eqFold(v, "true")
}

// ctimeLayout is the C ctime() form of the -q Timestamp, the XML
// <timestamp> and the table's first line: local time, no zone.
const ctimeLayout = "Mon Jan _2 15:04:05 2006"

// parseCtime reads a ctime stamp as a wall-clock reading in UTC.
func parseCtime(v []byte) (time.Time, bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 20 || len(v) > 40 {
		return time.Time{}, false
	}
	t, err := time.Parse(ctimeLayout, string(v))
	if err != nil {
		// Some builds print the day zero-padded.
		t, err = time.Parse("Mon Jan 02 15:04:05 2006", string(v))
		if err != nil {
			return time.Time{}, false
		}
	}
	return t, true
}

// ctimeLine reads a line that is only a ctime stamp, with a cheap check
// first.
func ctimeLine(v []byte) (time.Time, bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 24 || len(v) > 26 || v[3] != ' ' || v[7] != ' ' {
		return time.Time{}, false
	}
	return parseCtime(v)
}

func isCtime(v []byte) bool {
	_, ok := ctimeLine(v)
	return ok
}

// parseCSVTime reads the CSV timestamp "2026/11/30 04:24:38.750". It is
// read by hand: a looping query prints one per row.
func parseCSVTime(v []byte) (time.Time, bool) {
	v = bytes.TrimSpace(v)
	if len(v) < 19 || len(v) > 29 || v[4] != '/' || v[7] != '/' || v[10] != ' ' || v[13] != ':' || v[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(v[0:4])
	month, ok2 := digits(v[5:7])
	day, ok3 := digits(v[8:10])
	hour, ok4 := digits(v[11:13])
	minute, ok5 := digits(v[14:16])
	sec, ok6 := digits(v[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if len(v) > 19 {
		frac := v[20:]
		if v[19] != '.' || len(frac) == 0 {
			return time.Time{}, false
		}
		n, ok := digits(frac)
		if !ok {
			return time.Time{}, false
		}
		for i := len(frac); i < 9; i++ {
			n *= 10
		}
		nsec = n
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// clock records that the source's times lack a zone, and the latest one.
func clock(out *facts.Facts, path string, t time.Time) {
	if t.IsZero() {
		return
	}
	c := out.Clocks[path]
	c.NoZone = true
	if t.After(c.Latest) {
		c.Latest = t
	}
	out.Clocks[path] = c
}
