package procs

import (
	"github.com/coroner-dev/coroner/parser/facts"
)

// Memory is bounded by what is kept, not by what is read: a snapshot of
// ten million processes (a container host, a fork bomb) would take 5 GB as
// rows. The report needs the processes that matter and counts of the rest.
const (
	// MaxRows is how many rows of one snapshot are kept as they come.
	MaxRows = 10_000
	// MaxKept bounds the rows of one snapshot: past MaxRows, only the rows
	// that matter are kept, up to this many in all.
	MaxKept = 20_000
	// MaxSnapshots and MaxFileRows bound one file: a ps loop of a day
	// keeps at most MaxSnapshots snapshots, evenly spaced, and the last,
	// and at most MaxFileRows rows in all (past it, every other snapshot
	// goes).
	MaxSnapshots = 128
	MaxFileRows  = 100_000
)

// matters reports whether a row is kept past MaxRows: a server's process,
// a compiler or build tool, py-spy, another Python process, a child of a
// server process, or one stuck (D state) or dead (a zombie).
func (p *parser) matters(pr *facts.Process) bool {
	switch {
	case pr.Role.IsServer(), pr.Role.IsCompile(), pr.Role == facts.RolePySpy, pr.Role == facts.RolePython:
		return true
	case pr.State == 'D', pr.Defunct:
		return true
	}
	_, child := p.servers[pr.PPID]
	return child
}

// keepRow adds a row to the current snapshot, or counts it.
func (p *parser) keepRow(pr *facts.Process) {
	s := p.snap
	n := len(s.Procs)
	if n < MaxRows || n < MaxKept && p.matters(pr) {
		s.Procs = append(s.Procs, pr)
		if pr.Role.IsServer() {
			if p.servers == nil {
				p.servers = map[int]struct{}{}
			}
			p.servers[pr.PID] = struct{}{}
		}
		return
	}
	s.Omitted++
}

// snapThinner keeps a bounded, evenly spaced selection of a file's
// snapshots, and the last one.
type snapThinner struct {
	kept    []*facts.ProcSnapshot
	last    *facts.ProcSnapshot // the latest snapshot, when not on the stride
	rows    int                 // rows of kept
	stride  int
	seen    int
	dropped int // snapshots left out
}

func (t *snapThinner) add(s *facts.ProcSnapshot) {
	if t.stride == 0 {
		t.stride = 1
	}
	if t.last != nil {
		t.dropped++ // superseded by s
		t.last = nil
	}
	if t.seen%t.stride == 0 {
		t.kept = append(t.kept, s)
		t.rows += len(s.Procs)
	} else {
		t.last = s
	}
	t.seen++
	for len(t.kept) > 2 && (len(t.kept) > MaxSnapshots || t.rows > MaxFileRows) {
		// Every other snapshot goes; the first stays.
		n := 0
		for i, k := range t.kept {
			if i%2 == 0 {
				t.kept[n] = k
				n++
			} else {
				t.rows -= len(k.Procs)
				t.dropped++
			}
		}
		clear(t.kept[n:])
		t.kept = t.kept[:n]
		t.stride *= 2
	}
}

func (t *snapThinner) done() []*facts.ProcSnapshot {
	if t.last != nil {
		t.kept = append(t.kept, t.last)
		t.last = nil
	}
	return t.kept
}

// summarize says on the file what was counted, not kept.
func (p *parser) summarize(snaps []*facts.ProcSnapshot) {
	for _, s := range snaps {
		if s.Omitted > 0 {
			p.in.IssueAt(s.Src.Line, facts.IssueSummarized,
				"a snapshot of %d processes: kept the first %d rows and %d more that matter (server, compiler, Python and py-spy processes, children of the server, D state, zombies); the other %d were counted, not kept",
				len(s.Procs)+s.Omitted, min(len(s.Procs), MaxRows), max(len(s.Procs)-MaxRows, 0), s.Omitted)
		}
	}
	if t := &p.thin; t.dropped > 0 {
		p.in.IssueAt(0, facts.IssueSummarized, "%d snapshots: kept %d of them, evenly spaced, and the last (at most %d snapshots and %d rows a file)",
			t.seen, len(snaps), MaxSnapshots, MaxFileRows)
	}
}
