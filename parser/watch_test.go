package parser

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

type wantX struct{ calls int }

func (w *wantX) Want(b []byte) bool { w.calls++; return bytes.Contains(b, []byte("widget")) }

// Options.Watch sees every line of a server log once and keeps the ones it
// wants, with their level and message, bounded: the first quarter and the
// last three quarters of facts.MaxWatched.
func TestWatchKeepsWantedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString("[2025-10-28 12:00:00] server_args=ServerArgs(model_path='x', tp_size=1)\n")
	n := facts.MaxWatched + 1000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[2025-10-28 12:00:01 TP0] WARNING: widget %d\n", i)
		b.WriteString("[2025-10-28 12:00:01 TP0] Decode batch. #running-req: 1, #token: 10, token usage: 0.00, gen throughput (token/s): 5.0, #queue-req: 0\n")
	}
	w := &wantX{}
	f, err := ParseFS(fstest.MapFS{"server.log": {Data: []byte(b.String())}}, Options{Year: 2025, Watch: w})
	require.NoError(t, err)
	require.Len(t, f.Logs, 1)
	l := f.Logs[0]
	assert.Equal(t, 1+2*n, w.calls, "every line once")
	require.Len(t, l.Watched, facts.MaxWatched)
	assert.Equal(t, 1000, l.DroppedWatched)
	first, last := l.Watched[0], l.Watched[len(l.Watched)-1]
	assert.Equal(t, 2, first.Src.Line)
	assert.Equal(t, "widget 0", first.Msg)
	assert.Equal(t, facts.LevelWarning, first.Level)
	assert.Equal(t, fmt.Sprintf("widget %d", n-1), last.Msg)
	// The head, then the tail in order.
	assert.Equal(t, fmt.Sprintf("widget %d", facts.MaxWatched/4-1), l.Watched[facts.MaxWatched/4-1].Msg)
	assert.Equal(t, fmt.Sprintf("widget %d", n-facts.MaxWatched*3/4), l.Watched[facts.MaxWatched/4].Msg)
}

// Without a watch nothing is kept, and only server logs are watched.
func TestWatchOnlyServerLogs(t *testing.T) {
	w := &wantX{}
	fsys := fstest.MapFS{
		"server.log": {Data: []byte("[2025-10-28 12:00:00] server_args=ServerArgs(model_path='x')\n[2025-10-28 12:00:01] widget\n")},
		"ps.txt":     {Data: []byte("USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND\nroot 1 0.0 0.0 1 1 ? S 10:00 0:00 widget\n")},
	}
	f, err := ParseFS(fsys, Options{Year: 2025})
	require.NoError(t, err)
	assert.Empty(t, f.Logs[0].Watched)
	f, err = ParseFS(fsys, Options{Year: 2025, Watch: w})
	require.NoError(t, err)
	require.Len(t, f.Logs, 1)
	assert.Len(t, f.Logs[0].Watched, 1)
	assert.Equal(t, 2, w.calls, "the ps snapshot's lines are not watched")
}
