package textio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// linesOf makes n lines "line N" with every 7th one too long for a 40-byte
// limit and every 11th one invalid UTF-8.
func linesOf(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		switch {
		case i%7 == 0:
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 100))
		case i%11 == 0:
			fmt.Fprintf(&b, "line %d \xff\n", i)
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	return b.String()
}

type scanned struct {
	text   string
	line   int
	cut    bool
	utf8   bool
	issues int
}

// scanWith reads s with or without a read-ahead whose prep records each
// line's text, and returns what the caller saw line by line.
func scanWith(t *testing.T, s string, ahead bool) ([]scanned, []facts.Issue, *Input) {
	t.Helper()
	var issues []facts.Issue
	in := NewInput("f", strings.NewReader(s), 40, func(is facts.Issue) { issues = append(issues, is) })
	var a *Ahead[string]
	if ahead {
		a = ReadAhead(in, func(line []byte, slot *string, _ bool) { *slot = string(line) })
		defer a.Close()
	}
	var out []scanned
	for in.Scan() {
		cut, _ := in.Truncated()
		out = append(out, scanned{in.Text(), in.Line(), cut, in.CheckUTF8(), len(issues)})
		if a != nil {
			require.Equal(t, in.Text(), *a.Prepared(), "prep saw line %d", in.Line())
		}
	}
	return out, issues, in
}

func TestAheadReadsAsTheCallerWould(t *testing.T) {
	// Enough lines for several batches, by count and by size.
	for _, n := range []int{0, 1, 5, batchLines + 3, 3 * batchLines} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := linesOf(n)
			seq, seqIssues, a := scanWith(t, s, false)
			par, parIssues, b := scanWith(t, s, true)
			assert.Equal(t, seq, par)
			assert.Equal(t, seqIssues, parIssues, "cut lines are reported when the caller reaches them")
			assert.Equal(t, a.Line(), b.Line())
			assert.Equal(t, a.BytesRead(), b.BytesRead())
			n1, l1 := a.BadUTF8()
			n2, l2 := b.BadUTF8()
			assert.Equal(t, [2]int{n1, l1}, [2]int{n2, l2})
			assert.Equal(t, n, b.Line())
		})
	}
}

func TestAheadPanicIsRaisedAtItsLine(t *testing.T) {
	s := linesOf(5000)
	in := NewInput("f", strings.NewReader(s), 0, nil)
	var seen []int
	func() {
		defer func() {
			r := recover()
			require.NotNil(t, r)
			assert.Equal(t, "prep failed", r)
			assert.Equal(t, 3001, in.Line(), "after Close the failed line is the current one")
		}()
		a := ReadAhead(in, func(line []byte, slot *int, _ bool) {
			if string(line) == "line 3001" {
				panic("prep failed")
			}
		})
		defer a.Close()
		for in.Scan() {
			seen = append(seen, in.Line())
		}
	}()
	require.Len(t, seen, 3000, "the lines before the failed one were all read")
	assert.Equal(t, 3000, seen[len(seen)-1])
	// The input can be drained on the caller's goroutine afterwards.
	for in.Scan() {
	}
	assert.Equal(t, 5000, in.Line())
	assert.Equal(t, int64(len(s)), in.BytesRead())
}

func TestAheadClosedEarly(t *testing.T) {
	s := linesOf(20000)
	in := NewInput("f", strings.NewReader(s), 0, nil)
	a := ReadAhead(in, func([]byte, *struct{}, bool) {})
	for k := 0; k < 10 && in.Scan(); k++ {
	}
	a.Close()
	assert.Equal(t, 10, in.Line())
	a.Close() // twice is harmless
	// What was read ahead is dropped; the rest reads on.
	last := 0
	for in.Scan() {
		last = in.Line()
		require.Equal(t, fmt.Sprintf("line %d", last), strings.Fields(in.Text())[0]+" "+strings.Fields(in.Text())[1])
	}
	assert.Equal(t, 20000, last)
}
