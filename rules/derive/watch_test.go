package derive

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func packSig(t testing.TB, pattern string) *Signature {
	t.Helper()
	s := &Signature{ID: "acme-x", Pattern: pattern, Category: CatConfig, Confidence: 0.5, Title: "x", Remedy: "y"}
	require.Empty(t, s.Check())
	return s
}

// The watch wants every line its signatures' regexps match, whatever the
// case (Unicode's too), and allocates nothing.
func TestLineWatchWantsWhatTheRegexpMatches(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{`acmefs: stale file handle`, []string{"[x] ERROR acmefs: stale file handle on /models"}, []string{"acmefs: fresh handle", "ACMEFS: STALE FILE HANDLE"}},
		{`(?i)widget (degraded|lost)`, []string{"WIDGET LOST", "a Widget degraded"}, []string{"gadget ok"}},
		{`(?i)kernel panic`, []string{"KERNEL PANIC", "\u212aernel panic"}, []string{"kernel ok"}},
		{`\d+ retries`, []string{"after 3 retries"}, []string{"no retry"}},
	} {
		w := LineWatch([]*Signature{packSig(t, c.pattern)})
		require.NotNil(t, w, c.pattern)
		re := regexp.MustCompile(c.pattern)
		for _, l := range c.yes {
			require.True(t, re.MatchString(l), "%s should match %q", c.pattern, l)
			assert.True(t, w.Want([]byte(l)), "%s: the watch left out %q", c.pattern, l)
		}
		for _, l := range c.no {
			assert.False(t, w.Want([]byte(l)), "%s: the watch wanted %q", c.pattern, l)
		}
	}
	assert.Nil(t, LineWatch(BuiltinCatalog()), "the built-in catalog watches nothing")
	w := LineWatch([]*Signature{packSig(t, `(?i)widget (degraded|lost)`)})
	line := []byte(strings.Repeat("Decode batch. #running-req: 1, ", 8))
	assert.Zero(t, testing.AllocsPerRun(100, func() { w.Want(line) }))
}

func BenchmarkLineWatch(b *testing.B) {
	w := LineWatch([]*Signature{packSig(b, `acmefs: stale file handle`), packSig(b, `(?i)widget (degraded|lost)`)})
	line := []byte("[2025-10-28 12:00:01 TP0] Decode batch. #running-req: 137, #token: 123456, token usage: 0.45, accept len: 2.31, gen throughput (token/s): 4321.12, #queue-req: 0")
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		w.Want(line)
	}
}
