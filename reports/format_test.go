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
