package serverlog

import "github.com/coroner-dev/coroner/parser/facts"

// Head takes a log line apart the way the parser does (wrappers, process
// tags, the header) and returns its level and its message, for readers of
// raw lines (facts.LineWatch). A line without a header has no level and is
// its own message.
func Head(b []byte) (facts.Level, []byte) {
	var l line
	l.reset(b)
	peel(&l)
	return l.level, l.body
}
