package textio

import (
	"fmt"
	"io"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Input is what a parser reads: the lines of one bundle file, with the
// file's path for citing evidence and a sink for parse issues. Lines cut at
// the length limit are reported here, once per line, so that no parser can
// forget to.
type Input struct {
	*Scanner
	Path  string
	issue func(facts.Issue)
	// ahead is the open read-ahead, if any (see Ahead); pin the line to
	// report after it was closed, until the next Scan.
	ahead aheadSource
	pin   int
}

// NewInput wraps r. issue receives every parse issue; it may be nil.
func NewInput(path string, r io.Reader, maxLine int, issue func(facts.Issue)) *Input {
	if issue == nil {
		issue = func(facts.Issue) {}
	}
	return &Input{Scanner: NewScanner(r, maxLine), Path: path, issue: issue}
}

// Scan advances to the next line, reporting a cut line as a parse issue.
func (in *Input) Scan() bool {
	in.pin = 0
	if a := in.ahead; a != nil {
		if !a.next() {
			in.ahead = nil
			return false
		}
		if l := a.line(); l.cut {
			in.Issuef(facts.IssueLineTooLong, "line longer than %d bytes: kept the first %d, dropped %d", in.max, l.end-l.start, l.cutLen)
		}
		return true
	}
	if !in.Scanner.Scan() {
		return false
	}
	if cut, n := in.Scanner.Truncated(); cut {
		in.Issuef(facts.IssueLineTooLong, "line longer than %d bytes: kept the first %d, dropped %d", in.max, len(in.line), n)
	}
	return true
}

// Bytes returns the current line. It is valid until the next Scan.
func (in *Input) Bytes() []byte {
	if in.ahead != nil {
		return in.ahead.bytes()
	}
	return in.Scanner.Bytes()
}

// Text returns the current line as a string.
func (in *Input) Text() string { return string(in.Bytes()) }

// Line returns the 1-based number of the current line.
func (in *Input) Line() int {
	switch {
	case in.ahead != nil:
		if l := in.ahead.line(); l != nil {
			return l.n
		}
		return 0
	case in.pin > 0:
		return in.pin
	}
	return in.Scanner.Line()
}

// Truncated reports whether the current line was cut at the limit, and how
// many bytes were dropped.
func (in *Input) Truncated() (bool, int64) {
	if in.ahead != nil {
		if l := in.ahead.line(); l != nil {
			return l.cut, l.cutLen
		}
		return false, 0
	}
	return in.Scanner.Truncated()
}

// CheckUTF8 reports whether the current line is valid UTF-8, counting it
// if not (see Scanner.CheckUTF8; a read-ahead checked and counted it).
func (in *Input) CheckUTF8() bool {
	if in.ahead != nil {
		l := in.ahead.line()
		return l == nil || !l.bad
	}
	return in.Scanner.CheckUTF8()
}

// Src cites the current line.
func (in *Input) Src() facts.Source { return facts.Source{File: in.Path, Line: in.Line()} }

// Issuef reports a parse issue at the current line.
func (in *Input) Issuef(kind facts.IssueKind, format string, args ...any) {
	in.issue(facts.Issue{Src: in.Src(), Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// IssueAt reports a parse issue at a given line of this input.
func (in *Input) IssueAt(line int, kind facts.IssueKind, format string, args ...any) {
	in.issue(facts.Issue{Src: facts.Source{File: in.Path, Line: line}, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// Lines returns the lines of s as an Input, for tests and small helpers.
func Lines(path, s string) *Input {
	return NewInput(path, stringsReader(s), 0, nil)
}
