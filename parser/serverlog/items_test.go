package serverlog

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
	"github.com/stretchr/testify/require"
)

// eachItemRef is the first eachItem, two searches per item, kept as the
// reference that the one-pass scan and the memo fast path must agree with.
func eachItemRef(b []byte, fn func(pos int, key, val []byte)) {
	pos := 0
	for len(b) > 0 {
		end := len(b)
		for from := 0; ; {
			k := bytes.IndexByte(b[from:], ',')
			if k < 0 {
				break
			}
			k += from
			if k+1 < len(b) && b[k+1] == ' ' {
				end = k
				break
			}
			from = k + 1
		}
		item := b[:end]
		colon := -1
		for from := 0; ; {
			k := bytes.IndexByte(item[from:], ':')
			if k < 0 {
				break
			}
			k += from
			if k+1 < len(item) && item[k+1] == ' ' {
				colon = k
				break
			}
			from = k + 1
		}
		if colon >= 0 {
			fn(pos, item[:colon], item[colon+2:])
		} else {
			fn(pos, nil, item)
		}
		pos++
		if end+2 > len(b) {
			return
		}
		b = b[end+2:]
	}
}

// refSample reads a stat line's items the slow way: no memo, a fresh key
// name for every item, a repeated key keeping its last value.
func refSample(domain byte, b []byte) (keys []string, vals []float64) {
	eachItemRef(b, func(_ int, key, val []byte) {
		if len(key) == 0 || (domain == 's' && string(key) == "timestamp") {
			return
		}
		v, pct, ok := statValue(val)
		if !ok {
			return
		}
		k := statKey(domain, key, pct)
		for i := range keys {
			if keys[i] == k {
				vals[i] = v
				return
			}
		}
		keys = append(keys, k)
		vals = append(vals, v)
	})
	return keys, vals
}

// randomStatLine makes the items of a stat line: mostly the keys of the
// previous line with new values (the run that the memo speeds up), else a
// new mix of real keys, odd keys and values that are not numbers, that hold
// separators, units, percentages, thousands separators, spaces.
func randomStatLine(r *rand.Rand, prev []string) ([]string, string) {
	keyPool := []string{"#running-req", "#token", "token usage", "gen throughput (token/s)", "accept len", "cuda graph",
		"timestamp", "Running", "GPU KV cache usage", "Avg prompt throughput", "Pending", "Waiting", "x:y", "a, b", "k: v", "",
		"Token Usage", "token_usage", "new key", "#queue-req"}
	valPool := []string{"1", "31", "1,587,648", "0.71", "3.5%", "True", "False", " 12 ", "12 reqs", "41.7 tokens/s", "abc", "",
		"12, 13", "1e5", "-2", "5%", "7:", "1,58", "99.9%x", "1,587, 9", "0.0%", "+3", "2.5e-3%", "-", "1.", ".5", "7 ", "3% ", "8 reqs "}
	keys := prev
	if len(prev) == 0 || r.IntN(10) < 3 {
		keys = nil
		for range 1 + r.IntN(10) {
			keys = append(keys, keyPool[r.IntN(len(keyPool))])
		}
	}
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString([]string{", ", ", ", ", ", ",", ", ,"}[r.IntN(5)])
		}
		if k != "" || r.IntN(2) == 0 {
			b.WriteString(k)
			b.WriteString(": ")
		}
		if r.IntN(4) == 0 {
			b.WriteString(valPool[r.IntN(len(valPool))])
		} else {
			b.WriteString([]string{"7", "123", "0.93", "45.5%", "1,024", "99 reqs", "True"}[r.IntN(7)])
		}
	}
	if r.IntN(5) == 0 {
		b.WriteString(", ")
	}
	return keys, b.String()
}

func TestStatItemsMatchTheSlowWay(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	p := newParser(textio.Lines("a.log", ""), facts.KindSGLangLog, &facts.Facts{Clocks: map[string]facts.Clock{}})
	var prevS, prevV []string
	for i := range 40000 {
		if i%2 == 0 {
			var line string
			prevS, line = randomStatLine(r, prevS)
			wantK, wantV := refSample('s', []byte(line))
			ok := p.statSGLang(p.main, facts.EventStatDecode, []byte(", "+line))
			require.Equal(t, len(wantK) > 0, ok, "line %d %q", i, line)
			if ok {
				require.Equal(t, wantK, p.keys, "line %d %q", i, line)
				require.Equal(t, wantV, p.vals, "line %d %q", i, line)
			}
		} else {
			var line string
			prevV, line = randomStatLine(r, prevV)
			p.statVLLM(p.main, facts.EventStatThroughput, nil, []byte(line))
			wantK, wantV := refSample('v', bytes.TrimRight([]byte(line), ". "))
			if len(wantK) == 0 {
				wantK, wantV = []string{}, []float64{}
			}
			require.Equal(t, wantK, append([]string{}, p.keys...), "line %d %q", i, line)
			require.Equal(t, wantV, append([]float64{}, p.vals...), "line %d %q", i, line)
		}
	}
}

// FuzzParseNum checks that the one-pass reading of short decimals gives
// what the general reading gives, value and length.
func FuzzParseNum(f *testing.F) {
	for _, s := range []string{"0", "12", "3.14", "1,587,648", "1.5e3", "12%", "-4", "+2.5", "99999999999999", "123456789012345",
		"1234567.1234567", "1234567.12345678", "7.", ".5", "5e", "1,58", "0.000000000000001", "12.5E-3x", "42 reqs", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, n := parseNum([]byte(s))
		wv, wn := parseNumSlow([]byte(s))
		if n != wn || (v != wv && !(v != v && wv != wv)) {
			t.Fatalf("parseNum(%q) = %v, %d; the general reading gives %v, %d", s, v, n, wv, wn)
		}
	})
}

func TestParseNumShortDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 200000 {
		var b []byte
		for range 1 + r.IntN(20) {
			b = append(b, "0123456789.,eE%- x"[r.IntN(18)])
		}
		v, n := parseNum(b)
		wv, wn := parseNumSlow(b)
		require.Equal(t, wn, n, "%q", b)
		require.Equal(t, wv, v, "%q", b)
	}
}

// TestParseDateTimeMatchesItsParts checks the one-pass reading of
// "YYYY-MM-DD HH:MM:SS" against parseDate and parseClock.
func TestParseDateTimeMatchesItsParts(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	base := []byte("2025-12-31 23:59:59.123456")
	for range 200000 {
		b := append([]byte(nil), base[:19+r.IntN(8)]...)
		for range r.IntN(3) {
			b[r.IntN(len(b))] = "0123456789-: T.x/"[r.IntN(17)]
		}
		sep := byte(' ')
		if r.IntN(4) == 0 {
			sep = 'T'
		}
		got, n := parseDateTime(b, sep)
		var want stamp
		ok := len(b) >= 19 && b[10] == sep && parseDate(b, 0, &want) && parseClock(b, 11, &want)
		if !ok {
			require.False(t, got.ok, "%q", b)
			require.Zero(t, n, "%q", b)
			continue
		}
		i := 19
		if i+1 < len(b) && (b[i] == '.' || b[i] == ',') && b[i+1] >= '0' && b[i+1] <= '9' {
			want.nsec, i = fraction(b, i+1)
		}
		want.ok = want.valid()
		require.Equal(t, want, got, "%q", b)
		require.Equal(t, i, n, "%q", b)
	}
}
