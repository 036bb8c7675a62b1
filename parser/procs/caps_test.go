package procs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// A snapshot of more rows than MaxRows keeps the first MaxRows and, up to
// MaxKept, the rows that matter (here the server's scheduler far down the
// list and a compiler under it); the rest are counted and said (issue 18,
// item 3: 10 million rows took 4.8 GB).
func TestHugeSnapshotKeepsWhatMatters(t *testing.T) {
	var b strings.Builder
	b.WriteString("    PID    PPID STAT COMMAND\n")
	n := MaxRows + 30_000
	for i := range n {
		args := "/bin/bash -c sleep infinity"
		switch i {
		case MaxRows + 20_000:
			args = "sglang::scheduler_TP0"
		case MaxRows + 20_001:
			args = "/bin/sh -c make -j8" // a child of the scheduler
		}
		ppid := 1
		if i == MaxRows+20_001 {
			ppid = 1000 + MaxRows + 20_000
		}
		state := "S"
		if i == MaxRows+25_000 {
			state = "D"
		}
		fmt.Fprintf(&b, "%7d %7d %-4s %s\n", 1000+i, ppid, state, args)
	}
	text := b.String()
	out := parseAs("ps.txt", text, facts.KindPS)
	require.Len(t, out.Procs, 1)
	s := out.Procs[0]
	assert.Len(t, s.Procs, MaxRows+3)
	assert.Equal(t, n-MaxRows-3, s.Omitted)
	sched := s.ByPID(1000 + MaxRows + 20_000)
	require.NotNil(t, sched)
	assert.Equal(t, facts.RoleSGLangScheduler, sched.Role)
	assert.NotNil(t, s.ByPID(1000+MaxRows+20_001), "the server's child")
	assert.NotNil(t, s.ByPID(1000+MaxRows+25_000), "the D-state process")
	var sum []string
	for _, is := range issuesOf("ps.txt", text, facts.KindPS) {
		if is.Kind == facts.IssueSummarized {
			sum = append(sum, is.Detail)
		}
	}
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], fmt.Sprintf("a snapshot of %d processes", n))
}

// A file of many snapshots keeps at most MaxSnapshots of them, evenly
// spaced, and the last, and at most MaxFileRows rows.
func TestManySnapshotsThinned(t *testing.T) {
	var b strings.Builder
	const snaps, rows = 1000, 300
	for s := range snaps {
		b.WriteString("    PID    PPID     TIME COMMAND\n")
		for r := range rows {
			fmt.Fprintf(&b, "%7d %7d %8d /usr/bin/python3 worker.py --round %d\n", 1000+r, 1, s, s)
		}
	}
	text := b.String()
	out := parseAs("ps-loop.txt", text, facts.KindPS)
	require.LessOrEqual(t, len(out.Procs), MaxSnapshots+1)
	require.Greater(t, len(out.Procs), 2)
	total := 0
	for _, s := range out.Procs {
		total += len(s.Procs)
	}
	assert.LessOrEqual(t, total, MaxFileRows+rows)
	assert.Equal(t, 1, out.Procs[0].Src.Line, "the first snapshot stays")
	assert.Equal(t, (snaps-1)*(rows+1)+1, out.Procs[len(out.Procs)-1].Src.Line, "the last snapshot stays")
	for i := 1; i < len(out.Procs); i++ {
		assert.Less(t, out.Procs[i-1].Src.Line, out.Procs[i].Src.Line, "file order")
	}
	var sum []string
	for _, is := range issuesOf("ps-loop.txt", text, facts.KindPS) {
		if is.Kind == facts.IssueSummarized {
			sum = append(sum, is.Detail)
		}
	}
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], "1000 snapshots: kept")
}
