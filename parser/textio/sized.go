package textio

import (
	"bufio"
	"io"

	"github.com/coroner-dev/coroner/parser/facts"
)

// NewInputSized is NewInput for an input whose size is known: its buffer is
// no larger than the input needs, so that a bundle of 100,000 tiny files
// does not allocate 100,000 full-size buffers.
func NewInputSized(path string, r io.Reader, maxLine int, size int64, issue func(facts.Issue)) *Input {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	buf := min(int64(256<<10), int64(max(maxLine, 16)))
	if size >= 0 && size+1 < buf {
		buf = max(size+1, 16)
	}
	if issue == nil {
		issue = func(facts.Issue) {}
	}
	sc := &Scanner{r: bufio.NewReaderSize(r, int(buf)), max: maxLine}
	return &Input{Scanner: sc, Path: path, issue: issue}
}
