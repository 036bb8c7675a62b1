package escape

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMarkdown(t *testing.T) {
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
		assert.Equal(t, tc.want, Markdown(tc.in), "%q", tc.in)
	}
}

func TestText(t *testing.T) {
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
		assert.Equal(t, tc.want, Text(tc.in), "%q", tc.in)
	}
}

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"server.log", "server.log"},
		{"a\nFORGED line", "a FORGED line"},
		{"tab\there", "tab here"},
		{"\x1b[2Jclear", "clear"},
		{"clip\x1b]52;c;cHduZWQ=\x07board", "clipboard"},
		{"\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"c1 \u009b31m csi", "c1 \uFFFD31m csi"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Line(tc.in), "%q", tc.in)
	}
}

func TestMarkdownCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"--tp 8", "`--tp 8`"},
		{"a|b", "`a\\|b`"},
		{"<svg onload=alert(1)>", "`<svg onload=alert(1)>`"},
		{"has ` tick", "has \\` tick"},
		{"two\nlines", "two lines"},
		{"\x1b[31mred", "`red`"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, MarkdownCode(tc.in), "%q", tc.in)
	}
}

func TestJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{"{\"a\":\"c1 \u009b31m\"}", `{"a":"c1 \u009b31m"}`},
		{"{\"a\":\"del \x7f, nel \u0085, é and ü stay\"}", `{"a":"del \u007f, nel \u0085, é and ü stay"}`},
		{"{\"a\":\"bidi \u202eevil\u2066\"}", `{"a":"bidi \u202eevil\u2066"}`},
	}
	for _, tc := range tests {
		got := string(JSON([]byte(tc.in)))
		assert.Equal(t, tc.want, got, "%q", tc.in)
		var in, out any
		assert.NoError(t, json.Unmarshal([]byte(tc.in), &in))
		assert.NoError(t, json.Unmarshal([]byte(got), &out))
		assert.Equal(t, in, out, "the value changed")
	}
}
