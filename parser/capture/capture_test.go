package capture

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

func TestParseStamp(t *testing.T) {
	tests := []struct {
		in    string
		want  time.Time
		zoned bool
	}{
		// The corpus's captured_at.txt (date -u +%FT%T.%3NZ).
		{"2026-11-30T04:24:37.811Z", time.Date(2026, 11, 30, 4, 24, 37, 811e6, time.UTC), true},
		{"2026-11-30T06:24:37+02:00", time.Date(2026, 11, 30, 4, 24, 37, 0, time.UTC), true},
		// date(1) in UTC and in another zone, whose offset time.Parse cannot know.
		{"Mon Nov 30 04:24:37 UTC 2026", time.Date(2026, 11, 30, 4, 24, 37, 0, time.UTC), true},
		{"Mon Nov 30 05:24:37 CET 2026", time.Date(2026, 11, 30, 5, 24, 37, 0, time.UTC), false},
		{"Mon Nov  2 04:24:37 2026", time.Date(2026, 11, 2, 4, 24, 37, 0, time.UTC), false},
		{"2026-11-30 04:24:37", time.Date(2026, 11, 30, 4, 24, 37, 0, time.UTC), false},
	}
	for _, tc := range tests {
		got, zoned, ok := ParseStamp(tc.in)
		require.True(t, ok, tc.in)
		assert.True(t, tc.want.Equal(got), "%s: got %s", tc.in, got)
		assert.Equal(t, tc.zoned, zoned, tc.in)
	}
	for _, bad := range []string{"", "yesterday", "2026-13-45T99:99:99Z", "04:24:37"} {
		_, _, ok := ParseStamp(bad)
		assert.False(t, ok, bad)
	}
}

func TestSniff(t *testing.T) {
	k, score := Sniff("captured_at.txt", []byte("2026-11-30T04:24:37.811Z\n"))
	assert.Equal(t, facts.KindCaptureTime, k)
	assert.Equal(t, 95, score)
	_, score = Sniff("x", []byte("2026-11-30T04:24:37.811Z\n"))
	assert.Equal(t, 75, score, "content alone still recognizes a stamp")
	_, score = Sniff("captured_at.txt", []byte("2026-11-30T04:24:37.811Z\nmore\n"))
	assert.Zero(t, score, "a stamp file holds one line")
	_, score = Sniff("date.txt", []byte("not a time\n"))
	assert.Zero(t, score)
}

func TestParseScopesTheStampToItsDirectory(t *testing.T) {
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(textio.Lines("jit-compile/t12/captured_at.txt", "\n2026-11-30T04:27:24.070Z\n"), facts.KindCaptureTime, out)
	require.Len(t, out.Capture, 1)
	c := out.Capture[0]
	assert.Equal(t, "jit-compile/t12", c.Scope)
	assert.Equal(t, 2, c.Src.Line)
	assert.True(t, c.Zoned)
	assert.Empty(t, out.Clocks, "a zoned stamp needs no normalization")

	out = &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(textio.Lines("captured_at.txt", "Mon Nov  2 04:24:37 2026\n"), facts.KindCaptureTime, out)
	require.Len(t, out.Capture, 1)
	assert.Equal(t, "", out.Capture[0].Scope)
	assert.True(t, out.Clocks["captured_at.txt"].NoZone)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2026-11-30T04:24:37.811Z\n", "Mon Nov 30 04:24:37 UTC 2026", "garbage", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := &facts.Facts{Clocks: map[string]facts.Clock{}}
		in := textio.Lines("captured_at.txt", s)
		Parse(in, facts.KindCaptureTime, out)
		for _, c := range out.Capture {
			if c.Src.Line < 1 || c.Src.Line > strings.Count(s, "\n")+1 {
				t.Fatalf("stamp cites line %d of a %d-line input", c.Src.Line, strings.Count(s, "\n")+1)
			}
		}
		_, _ = Sniff("captured_at.txt", []byte(s))
	})
}
