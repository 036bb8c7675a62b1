package parser

import (
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/serverlog"
)

// watched keeps the lines of one server log that Options.Watch wants: the
// first quarter of facts.MaxWatched and a ring of the last three quarters.
type watched struct {
	w       facts.LineWatch
	path    string
	head    []*facts.LogEvent
	ring    []*facts.LogEvent
	next    int
	dropped int
}

const (
	headWatched = facts.MaxWatched / 4
	tailWatched = facts.MaxWatched - headWatched
)

func (wl *watched) line(b []byte, n int) {
	if !wl.w.Want(b) {
		return
	}
	lv, body := serverlog.Head(b)
	if len(body) > facts.MaxUnmatchedText {
		body = body[:facts.MaxUnmatchedText]
	}
	ev := &facts.LogEvent{Src: facts.Source{File: wl.path, Line: n}, Level: lv, Type: facts.EventLine, Msg: string(body)}
	switch {
	case len(wl.head) < headWatched:
		wl.head = append(wl.head, ev)
	case len(wl.ring) < tailWatched:
		wl.ring = append(wl.ring, ev)
	default:
		wl.ring[wl.next] = ev
		wl.next = (wl.next + 1) % tailWatched
		wl.dropped++
	}
}

// attach gives the log of the watched file its lines.
func (wl *watched) attach(part *facts.Facts) {
	for _, l := range part.Logs {
		if l.Path != wl.path {
			continue
		}
		l.Watched = append(append(append(l.Watched[:0], wl.head...), wl.ring[wl.next:]...), wl.ring[:wl.next]...)
		l.DroppedWatched = wl.dropped
	}
}

// isServerLog reports the kinds whose lines a LineWatch sees.
func isServerLog(k facts.Kind) bool {
	return k == facts.KindSGLangLog || k == facts.KindVLLMLog || k == facts.KindServerLog
}
