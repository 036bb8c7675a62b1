package redact

import (
	"bytes"
	"math"
)

// isPlaceholderWord reports a word that stands for a secret without being
// one (None, redacted, ...), in any case: masking it would only add noise
// to the report and hide that none was set.
func isPlaceholderWord(v []byte) bool {
	if len(v) > 16 {
		return false
	}
	var buf [16]byte
	switch string(asciiLower(buf[:0], v)) {
	case "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "redacted", "[redacted]", "(redacted)",
		"<redacted>", "hidden", "unset", "undefined", "...", "-", "(set, not shown)", "[]", "{}", "''", `""`:
		return true
	}
	return false
}

// isPlaceholder reports a value that is not a secret: empty, a word above,
// a variable reference ($VAR, ${VAR}, %VAR%, {{ .Values.x }}), a template
// (<your-key>), or a value masked before (****, x's, hf_****): bundling a
// redacted bundle again leaves it as it is.
func isPlaceholder(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	if isPlaceholderWord(v) {
		return true
	}
	switch {
	case isVarRef(v),
		v[0] == '<' && v[len(v)-1] == '>' && bytes.IndexByte(v[1:], '<') < 0,
		v[0] == '%' && v[len(v)-1] == '%' && len(v) > 2,
		bytes.HasPrefix(v, []byte("{{")) && bytes.HasSuffix(v, []byte("}}")):
		return true
	}
	if len(v) >= 3 && (allByte(v, 'x') || allByte(v, 'X')) {
		return true
	}
	return alreadyMasked(v)
}

// isVarRef reports $NAME, ${...} and $(...): a reference to a secret kept
// elsewhere. A value like $ecretPass is not one: shell variables that hold
// secrets are named in capitals.
func isVarRef(v []byte) bool {
	if len(v) < 2 || v[0] != '$' {
		return false
	}
	if v[1] == '{' || v[1] == '(' {
		return true
	}
	return isEnvName(v[1:])
}

func allByte(v []byte, c byte) bool {
	for _, b := range v {
		if b != c {
			return false
		}
	}
	return true
}

// alreadyMasked reports a value that a redaction masked before: masks,
// after at most a token's readable prefix (hf_****, sk-ant-****).
func alreadyMasked(v []byte) bool {
	rest := bytes.TrimRight(v, string(Mask))
	return len(rest) < len(v) && (len(rest) == 0 || len(v)-len(rest) >= 4 && len(rest) <= 11)
}

// isNumberOrBool reports 4096, -1, 0.9, 1e-5: the value of a counter or
// a ratio, never of a token.
func isNumberOrBool(v []byte) bool {
	if len(v) <= 5 && isPlaceholderWord(v) {
		return true
	}
	digits := 0
	for i, c := range v {
		switch {
		case isDigit(c):
			digits++
		case c == '.' || c == 'e' || c == 'E' || c == '_':
		case (c == '-' || c == '+') && (i == 0 || v[i-1] == 'e' || v[i-1] == 'E'):
		default:
			return false
		}
	}
	return digits > 0
}

// isOpaque reports a value that looks like a key or a token by shape: at
// least 16 bytes with no white space, not a path, letters of two cases or
// letters and digits, and at least 3 bits of entropy per byte. A word, a
// path, a model name or a host name is not; a 32-digit hex key, a base64
// secret or a UUID is.
func isOpaque(v []byte) bool {
	if len(v) < 16 || v[0] == '/' || v[0] == '~' || v[0] == '.' || bytes.Contains(v, []byte("://")) {
		return false
	}
	var lower, upper, digit, slash int
	for _, c := range v {
		switch {
		case isLower(c):
			lower++
		case isUpper(c):
			upper++
		case isDigit(c):
			digit++
		case c == '/':
			slash++
		case c <= ' ' || c >= 0x7f:
			return false
		}
	}
	classes := 0
	for _, n := range []int{lower, upper, digit} {
		if n > 0 {
			classes++
		}
	}
	if classes < 2 || slash > 2 {
		return false
	}
	return entropy(v) >= 3.0
}

// entropy is the Shannon entropy of v's bytes, in bits per byte.
func entropy(v []byte) float64 {
	var counts [256]int
	for _, c := range v {
		counts[c]++
	}
	h := 0.0
	n := float64(len(v))
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
