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
	if !in.Scanner.Scan() {
		return false
	}
	if cut, n := in.Truncated(); cut {
		in.Issuef(facts.IssueLineTooLong, "line longer than %d bytes: kept the first %d, dropped %d", in.max, len(in.line), n)
	}
	return true
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
