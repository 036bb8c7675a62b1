package compare

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestText: coroner diff --format text says what the markdown says, as
// plain text that fits the width: no markdown marks, tables as columns
// (issue 18, item 9).
func TestText(t *testing.T) {
	d := Compare(load(t, "seed/triton-sm120-ready"), load(t, "seed/flashinfer-sm120-hang"), "test")
	for _, width := range []int{100, 80} {
		var b bytes.Buffer
		require.NoError(t, Text(&b, d, width))
		out := b.String()
		assert.True(t, strings.HasPrefix(out, "CORONER DIFF\n\nA is fixtures/seed/triton-sm120-ready, B is"), out[:min(len(out), 200)])
		assert.Contains(t, out, "\nPHASES\n")
		assert.Regexp(t, `\n  weights-loading +10 min +10 min +−3\.0 s\n`, out)
		for _, mark := range []string{"**", "|---", "\n#", "`"} {
			assert.NotContains(t, out, mark)
		}
		for _, l := range strings.Split(out, "\n") {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), width, "%q", l)
		}
	}
}

func TestPlain(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"`tp_size`", "tp_size"},
		{"``a`b``", "a`b"},
		{"`` `x` ``", "`x`"},
		{`a \| b \_c\_ \<x\>`, "a | b _c_ <x>"},
		{"**Slower.**", "Slower."},
		{"`a\\|b`", "a|b"},
		{"no\x1b[31mcolor", "nocolor"},
	} {
		assert.Equal(t, tc.want, plain(tc.in), tc.in)
	}
	assert.Equal(t, []string{"a", "b|c", "d"}, tableCells("| a | `b\\|c` | d |"))
}
