package serverlog

import (
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// lineBuf keeps the first and the last lines that nothing recognized. The
// head is kept as events; the tail is a ring of slots whose text buffers
// are reused, so that a log of millions of unrecognized lines costs no
// allocation per line.
type lineBuf struct {
	head    []*facts.LogEvent
	ring    []lineSlot
	next    int
	dropped int
}

type lineSlot struct {
	typ       facts.EventType
	line      int
	t         time.Time
	inherited bool
	proc      facts.Proc
	level     facts.Level
	text      []byte
	bad       bool
}

const (
	headUnmatched = facts.MaxUnmatched / 4
	tailUnmatched = facts.MaxUnmatched - headUnmatched
)

func (b *lineBuf) add(p *parser, ps *procState, l *line, body []byte) {
	text := cutText(trimSpace(body), facts.MaxUnmatchedText)
	if len(text) == 0 {
		return
	}
	typ := facts.EventLine
	if l.kind == hdrNCCL {
		// An NCCL INFO line with no meaning of its own: still NCCL's.
		typ = facts.EventNCCLInfo
	}
	if len(b.head) < headUnmatched {
		ev := &facts.LogEvent{Src: facts.Source{File: p.in.Path, Line: p.lineNo}, Proc: ps.pl.Proc, Level: l.level,
			Type: typ, Msg: validString(text, p.bad)}
		if p.hasT || p.inherited {
			ev.Time, ev.Inherited = p.t, p.inherited
		}
		b.head = append(b.head, ev)
		return
	}
	var s *lineSlot
	if len(b.ring) < tailUnmatched {
		b.ring = append(b.ring, lineSlot{})
		s = &b.ring[len(b.ring)-1]
	} else {
		s = &b.ring[b.next]
		b.next = (b.next + 1) % tailUnmatched
		b.dropped++
	}
	s.typ, s.line, s.proc, s.level, s.bad = typ, p.lineNo, ps.pl.Proc, l.level, p.bad
	s.t, s.inherited = time.Time{}, false
	if p.hasT || p.inherited {
		s.t, s.inherited = p.t, p.inherited
	}
	s.text = append(s.text[:0], text...)
}

func (b *lineBuf) all(p *parser) ([]*facts.LogEvent, int) {
	out := make([]*facts.LogEvent, 0, len(b.head)+len(b.ring))
	out = append(out, b.head...)
	emit := func(s *lineSlot) {
		out = append(out, &facts.LogEvent{Src: facts.Source{File: p.in.Path, Line: s.line}, Time: s.t, Inherited: s.inherited,
			Proc: s.proc, Level: s.level, Type: s.typ, Msg: validString(s.text, s.bad)})
	}
	for i := b.next; i < len(b.ring); i++ {
		emit(&b.ring[i])
	}
	for i := 0; i < b.next; i++ {
		emit(&b.ring[i])
	}
	return out, b.dropped
}

// trimIndent drops the spaces and tabs that start b; bytes.TrimLeft builds
// its set of bytes on each call, a cost on every line.
func trimIndent(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func trimSpace(b []byte) []byte {
	b = trimIndent(b)
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// cutText cuts b to n bytes on a rune boundary.
func cutText(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && b[n]&0xC0 == 0x80 {
		n--
	}
	return b[:n]
}
