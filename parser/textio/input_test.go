package textio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

func scanAll(t *testing.T, in *Input) []string {
	t.Helper()
	var out []string
	for in.Scan() {
		out = append(out, in.Text())
	}
	return out
}

func TestScannerLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"lf", "a\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\nb\r\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"tqdm carriage returns stay inside a line", "bar 1/3\rbar 3/3\n", []string{"bar 1/3\rbar 3/3"}},
		{"empty lines count", "\n\nx\n", []string{"", "", "x"}},
		{"empty input", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInput("f", strings.NewReader(tc.in), 0, nil)
			assert.Equal(t, tc.want, scanAll(t, in))
			assert.Equal(t, int64(len(tc.in)), in.BytesRead())
		})
	}
}

func TestLongLinesAreCutAndReported(t *testing.T) {
	var issues []facts.Issue
	long := strings.Repeat("é", 100) // 200 bytes of 2-byte runes
	in := NewInput("server.log", strings.NewReader("short\n"+long+"\nafter\n"), 51, func(is facts.Issue) { issues = append(issues, is) })
	lines := scanAll(t, in)
	require.Len(t, lines, 3)
	assert.Equal(t, "short", lines[0])
	assert.LessOrEqual(t, len(lines[1]), 51)
	assert.True(t, strings.HasPrefix(long, lines[1]), "the cut keeps whole runes")
	assert.Equal(t, "after", lines[2], "the line after a cut one is read whole")
	require.Len(t, issues, 1)
	assert.Equal(t, facts.IssueLineTooLong, issues[0].Kind)
	assert.Equal(t, facts.Source{File: "server.log", Line: 2}, issues[0].Src)
}

func TestNULsAndInvalidUTF8AreCounted(t *testing.T) {
	in := NewInput("f", strings.NewReader("ok\nnul\x00here\x00\nbad \xff\n"), 0, nil)
	for in.Scan() {
		in.CheckUTF8()
	}
	n, first := in.NULs()
	assert.Equal(t, 2, n)
	assert.Equal(t, 2, first)
	n, first = in.BadUTF8()
	assert.Equal(t, 1, n)
	assert.Equal(t, 3, first)
}

var errBroken = errors.New("stream broke")

func TestReadErrorEndsTheScanAndKeepsWhatWasRead(t *testing.T) {
	r := io.MultiReader(strings.NewReader("one\ntwo\nthr"), errReader{})
	in := NewInput("f", r, 0, nil)
	assert.Equal(t, []string{"one", "two", "thr"}, scanAll(t, in))
	assert.ErrorIs(t, in.Err(), errBroken)
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

func TestSizedInputReadsTheSame(t *testing.T) {
	data := "a\nbb\n" + strings.Repeat("c", 3000) + "\n"
	a := scanAll(t, NewInput("f", strings.NewReader(data), 0, nil))
	b := scanAll(t, NewInputSized("f", bytes.NewReader([]byte(data)), 0, int64(len(data)), nil))
	assert.Equal(t, a, b)
}

func FuzzScanner(f *testing.F) {
	f.Add("a\nb\r\nc", 8)
	f.Add(strings.Repeat("x", 100)+"\n", 16)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		in := NewInput("f", strings.NewReader(s), max, nil)
		n := 0
		for in.Scan() {
			n++
			limit := max
			if limit <= 0 {
				limit = DefaultMaxLine
			}
			if len(in.Bytes()) > limit {
				t.Fatalf("line of %d bytes over the limit %d", len(in.Bytes()), limit)
			}
		}
		if in.BytesRead() != int64(len(s)) {
			t.Fatalf("read %d of %d bytes", in.BytesRead(), len(s))
		}
		if n > strings.Count(s, "\n")+1 {
			t.Fatalf("%d lines from %d newlines", n, strings.Count(s, "\n"))
		}
	})
}
