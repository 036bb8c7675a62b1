package serverlog

import (
	"bytes"
	"github.com/coroner-dev/coroner/parser/facts"
	"strconv"
	"strings"
)

// parseNum reads a decimal number at b[0]: an optional sign, digits with
// optional thousands separators ("1,587,648"), an optional fraction and
// exponent. It returns the value and the bytes used; n is 0 when b does not
// start with a number. Plain decimals are computed without strconv.
func parseNum(b []byte) (v float64, n int) {
	// Most numbers of a log are short plain decimals: read them in one
	// pass, and leave signs, thousands separators, exponents and long
	// mantissas to the general reading below, which gives the same value
	// for the short ones (their mantissa is exact).
	var m uint64
	i := 0
	for i < len(b) && b[i]-'0' < 10 {
		m = m*10 + uint64(b[i]-'0')
		i++
	}
	if i == 0 && (len(b) == 0 || b[0] != '-' && b[0] != '+') {
		return 0, 0 // "True", a word: no number
	}
	if i > 0 && i <= 14 {
		if i == len(b) {
			return float64(m), i
		}
		switch c := b[i]; {
		case c == '.' && i+1 < len(b) && b[i+1]-'0' < 10:
			j := i + 1
			for j < len(b) && b[j]-'0' < 10 {
				m = m*10 + uint64(b[j]-'0')
				j++
			}
			if j-1 <= 14 && (j == len(b) || (b[j] != 'e' && b[j] != 'E')) {
				return float64(m) / pow10[j-i-1], j
			}
		case c == ',':
			// Not a thousands separator unless digits follow.
			if i+1 == len(b) || b[i+1]-'0' >= 10 {
				return float64(m), i
			}
		case c != 'e' && c != 'E':
			return float64(m), i
		}
	}
	return parseNumSlow(b)
}

func parseNumSlow(b []byte) (v float64, n int) {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var ip uint64
	digs := 0
	for i < len(b) {
		c := b[i]
		if isDigit(c) {
			ip = ip*10 + uint64(c-'0')
			digs++
			i++
			continue
		}
		// "1,587,648": a comma followed by exactly three digits.
		if c == ',' && digs > 0 && i+3 < len(b) && isDigit(b[i+1]) && isDigit(b[i+2]) && isDigit(b[i+3]) &&
			(i+4 >= len(b) || !isDigit(b[i+4])) {
			i++
			continue
		}
		break
	}
	if i == start {
		return 0, 0
	}
	if digs > 18 {
		return slowNum(b[:i], neg), i
	}
	v = float64(ip)
	if i+1 < len(b) && b[i] == '.' && isDigit(b[i+1]) {
		i++
		// mantissa/10^fd is correctly rounded while the mantissa is exact.
		m := ip
		fd := 0
		exact := true
		for i < len(b) && isDigit(b[i]) {
			if exact && fd < 15 && m < 1<<49 {
				m = m*10 + uint64(b[i]-'0')
				fd++
			} else {
				exact = false
			}
			i++
		}
		v = float64(m) / pow10[fd]
	}
	if i+1 < len(b) && (b[i] == 'e' || b[i] == 'E') && (isDigit(b[i+1]) || ((b[i+1] == '-' || b[i+1] == '+') && i+2 < len(b) && isDigit(b[i+2]))) {
		j := i + 2
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		f, err := strconv.ParseFloat(string(bytes.ReplaceAll(b[start:j], []byte(","), nil)), 64)
		if err == nil {
			v = f
			i = j
		}
	}
	if neg {
		v = -v
	}
	return v, i
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

func slowNum(b []byte, neg bool) float64 {
	s := string(bytes.ReplaceAll(bytes.TrimLeft(b, "+-"), []byte(","), nil))
	f, _ := strconv.ParseFloat(s, 64)
	if neg {
		f = -f
	}
	return f
}

// numAfter finds key in b and reads the number that follows it, after
// spaces, '=' or ':'.
func numAfter(b []byte, key string) (float64, bool) {
	k := strings.Index(bstr(b), key)
	if k < 0 {
		return 0, false
	}
	rest := b[k+len(key):]
	i := 0
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '=' || rest[i] == ':') {
		i++
	}
	v, n := parseNum(rest[i:])
	return v, n > 0
}

// wordAfter finds key and returns the token after it, up to a space, comma
// or closing bracket.
func wordAfter(b []byte, key string) []byte {
	k := strings.Index(bstr(b), key)
	if k < 0 {
		return nil
	}
	rest := b[k+len(key):]
	i := 0
	for i < len(rest) && rest[i] != ' ' && rest[i] != ',' && rest[i] != ')' && rest[i] != ']' {
		i++
	}
	w := rest[:i]
	for len(w) > 0 && w[len(w)-1] == '.' {
		w = w[:len(w)-1]
	}
	return w
}

// unitSuffix maps a unit printed after a number to a key suffix.
func unitSuffix(u []byte) string {
	switch string(u) {
	case "GB":
		return "_gb"
	case "GiB":
		return "_gib"
	case "MB":
		return "_mb"
	case "MiB":
		return "_mib"
	case "s", "sec", "secs", "seconds":
		return "_s"
	case "ms":
		return "_ms"
	case "%":
		return "_pct"
	}
	return ""
}

// normKey turns a printed key into snake_case: "avail mem" -> "avail_mem",
// "#running-req" -> "running_req", "gen throughput (token/s)" ->
// "gen_throughput".
func normKey(dst []byte, k []byte) []byte {
	under := false
	depth := 0
	for _, c := range k {
		switch {
		case c == '(':
			depth++
			continue
		case c == ')':
			if depth > 0 {
				depth--
			}
			continue
		case depth > 0:
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case (c >= 'a' && c <= 'z') || isDigit(c):
		default:
			if len(dst) > 0 {
				under = true
			}
			continue
		}
		if under {
			dst = append(dst, '_')
			under = false
		}
		dst = append(dst, c)
	}
	return dst
}

// kvEq reads "key=value" items separated by ", " into the payload's fields
// of those names: numbers with a unit get the unit in the name ("avail
// mem=47.80 GB" -> avail_mem_gb). An item the payload has no field for is
// left out.
func kvEq(b []byte, f facts.Payload) {
	for len(b) > 0 {
		depth := 0
		end := len(b)
	scan:
		for i := 0; i < len(b); i++ {
			switch b[i] {
			case '[', '(', '{':
				depth++
			case ']', ')', '}':
				if depth > 0 {
					depth--
				}
			case ',':
				if depth == 0 && i+1 < len(b) && b[i+1] == ' ' {
					end = i
					break scan
				}
			}
		}
		item := b[:end]
		if end < len(b) {
			b = b[end+2:]
		} else {
			b = nil
		}
		eq := bytes.IndexByte(item, '=')
		if eq <= 0 {
			continue
		}
		key := normKey(nil, item[:eq])
		if len(key) == 0 {
			continue
		}
		val := bytes.TrimSpace(item[eq+1:])
		val = bytes.TrimSuffix(val, []byte("."))
		if v, n := parseNum(val); n > 0 && n == len(val) {
			facts.SetField(f, string(key), v)
		} else if n > 0 && val[n] == ' ' {
			if suf := unitSuffix(bytes.TrimSpace(val[n:])); suf != "" {
				facts.SetField(f, string(key)+suf, v)
			} else {
				facts.SetField(f, string(key), string(val))
			}
		} else if bytes.Equal(val, []byte("True")) || bytes.Equal(val, []byte("False")) {
			facts.SetField(f, string(key), val[0] == 'T')
		} else {
			facts.SetField(f, string(key), string(val))
		}
	}
}
