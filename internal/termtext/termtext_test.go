package termtext

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 40, []string{""}},
		{"a b c", 40, []string{"a b c"}},
		{"one two three four five six", 20, []string{"one two three four", "five six"}},
		{"a verylongwordthatdoesnotfitatall b", 20, []string{"a", "verylongwordthatdoesnotfitatall", "b"}},
		{"first\nsecond", 40, []string{"first", "second"}},
		{"x y", 5, []string{"x y"}}, // at least 20
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Wrap(tc.text, tc.width), tc.text)
	}
}

// TestColumns: a table that fits keeps its columns as wide as their cells;
// one that does not narrows its widest columns and wraps their cells, every
// line within the width.
func TestColumns(t *testing.T) {
	rows := [][]string{
		{"component", "A", "B"},
		{"driver", "580.105.08 (nvidia-smi-q.txt:2)", "580.105.08 (nvidia-smi-q.txt:2)"},
	}
	assert.Equal(t, [][]string{
		{"component  A                                B"},
		{"driver     580.105.08 (nvidia-smi-q.txt:2)  580.105.08 (nvidia-smi-q.txt:2)"},
	}, Columns(rows, 0))
	got := Columns(rows, 56)
	assert.Equal(t, [][]string{
		{"component  A                     B"},
		{"driver     580.105.08            580.105.08", "           (nvidia-smi-q.txt:2)  (nvidia-smi-q.txt:2)"},
	}, got)
	for _, r := range got {
		for _, l := range r {
			assert.LessOrEqual(t, utf8.RuneCountInString(l), 56, l)
		}
	}
	// Too narrow for its words: a word stays whole and widens its column.
	assert.Equal(t, []string{"driver     580.105.08            580.105.08", "           (nvidia-smi-q.txt:2)  (nvidia-smi-q.txt:2)"}, Columns(rows, 30)[1])
}
