package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "```"},
		{"a ` b", "```"},
		{"a ``` b", "````"},
		{"`````", "``````"},
	}
	for _, tc := range tests {
		f := fence(tc.in)
		assert.Equal(t, tc.want, f, tc.in)
		assert.NotContains(t, tc.in, f, "the fence must not occur in the text")
	}
}

func TestMdInline(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ps_aux.txt", "ps_aux.txt"},
		{"sglang::scheduler_TP0", "sglang::scheduler_TP0"},
		{"__init__", `\_\_init\_\_`},
		{"_em_", `\_em\_`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"a | b", `a \| b`},
		{"[x](javascript:alert(3))", `\[x\](javascript:alert(3))`},
		{"**bold** `code`", "\\*\\*bold\\*\\* \\`code\\`"},
		{"&lt; & x", `\&lt; & x`},
		{"line1\nline2\r\n", "line1 line2 "},
		{"~~gone~~ $x$", `\~\~gone\~\~ \$x\$`},
		{"red \x1b[31mtext\x1b[0m", "red text"},
		{"#running-req: 5", "#running-req: 5"},
		{"a ## b #", `a \#\# b \#`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, mdInline(tc.in), "%q", tc.in)
	}
}

func TestMdRich(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Restart with `--attention-backend triton`.", "Restart with `--attention-backend triton`."},
		{"a `<script>` b", "a `<script>` b"},
		{"<b>x</b> `ok`", `\<b\>x\</b\> ` + "`ok`"},
		{"unpaired ` tick", "unpaired \\` tick"},
		{"``a ` b`` c", "``a ` b`` c"},
		{"`a|b`", "`a\\|b`"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, mdRich(tc.in), "%q", tc.in)
	}
}

func TestBlockSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"# not a heading", `\# not a heading`},
		{"> not a quote", `\> not a quote`},
		{"- not a list", `\- not a list`},
		{"12. not a list", `12\. not a list`},
		{"3) not a list", `3\) not a list`},
		{"    not code", "not code"},
		{"2026-02-10 is a date", "2026-02-10 is a date"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, blockSafe(tc.in), "%q", tc.in)
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"\x1b[1;31mERROR\x1b[0m boom", "ERROR boom"},
		{"title \x1b]0;owned\x07done", "title done"},
		{"bar  10%\rbar  50%\rbar 100%\r", "bar 100%"},
		{"nul\x00byte", "nul\uFFFDbyte"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"bidi \u202eevil", "bidi \uFFFDevil"},
		{"tab\tand\nnewline", "tab\tand\nnewline"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, cleanText(tc.in), "%q", tc.in)
	}
}

func TestHumanSeconds(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{0, "0 s"}, {1, "1.0 s"}, {45, "45 s"}, {119, "119 s"}, {600, "10 min"}, {4631, "77 min"}, {3 * 3600, "3.0 h"}}
	for _, tc := range tests {
		assert.Equal(t, tc.want, humanSeconds(tc.in))
	}
}

func TestWrap(t *testing.T) {
	lines := wrap(strings.Repeat("word ", 30), 24)
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), 24)
	}
	assert.Equal(t, 30, len(strings.Fields(strings.Join(lines, " "))))
	assert.Equal(t, []string{strings.Repeat("x", 40)}, wrap(strings.Repeat("x", 40), 24), "a long word keeps its own line")
}
