package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/coroner-dev/coroner/parser/facts"
)

// ratioFloor is the decompressed size below which the ratio limit is not
// checked: small files of repeated lines compress very well and are no
// threat.
const ratioFloor = 1 << 20

// Work is bounded per input byte, not only per output byte: every line
// costs a parser the same whatever its length, so a small stream of
// newlines under the ratio limit (2.5 MB of gzip expanding to 1 GB of
// empty lines) would keep the analyzer busy for minutes. A compressed
// stream may yield at most maxLinesPerByte lines per compressed byte, once
// past linesFloor lines. Real logs hold well under one line per compressed
// byte (the benchmark's SGLang log in zstd: 0.04).
const (
	linesFloor      = 4 << 20
	maxLinesPerByte = 8
)

// streamError is a failure of a compressed or archived stream. It is
// reported once as a parse issue, by whoever meets it first, and then
// travels up through every reader stacked on the broken stream.
type streamError struct {
	kind     facts.IssueKind
	msg      string
	reported bool
}

func (e *streamError) Error() string { return e.msg }

// Unwrap makes every stream failure an ErrStream.
func (e *streamError) Unwrap() error { return ErrStream }

// counter counts the bytes read through it and keeps the first error other
// than io.EOF, so that a reader on top can tell its own failure from that of
// the stream below it.
type counter struct {
	r   io.Reader
	n   int64
	err error
}

// storedReader counts what is read from a stored file into Options.Stored.
type storedReader struct {
	r io.Reader
	n *atomic.Int64
}

func (s storedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n.Add(int64(n))
	return n, err
}

type storedReaderAt struct {
	r io.ReaderAt
	n *atomic.Int64
}

func (s storedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.r.ReadAt(p, off)
	s.n.Add(int64(n))
	return n, err
}

// stored wraps a file's readers so that Options.Stored counts them.
func (w *walker) stored(r io.Reader, ra io.ReaderAt) (io.Reader, io.ReaderAt) {
	if w.opts.Stored == nil {
		return r, ra
	}
	r = storedReader{r, w.opts.Stored}
	if ra != nil {
		ra = storedReaderAt{ra, w.opts.Stored}
	}
	return r, ra
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// stage is one decoding step: a decompressor, or the content of a tar or zip
// entry. It turns every failure into a streamError that says which stream
// broke and where, and stops a stream whose output outgrows its input by
// more than the ratio limit.
type stage struct {
	r io.Reader
	// src is the input the stage consumes, when it is counted.
	src *counter
	// in returns the input bytes consumed so far; nil disables the ratio check.
	in       func() int64
	format   string // gzip, zstd, xz, tar, zip
	what     string // the stream's name in the bundle
	out      int64
	maxRatio float64
	window   uint64 // the zstd window limit, for its message
	err      error
	// dense counts lines, for a stream that decompresses: its lines are
	// bounded per compressed byte.
	dense bool
	lines int64
}

func (s *stage) Read(p []byte) (n int, err error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err = s.read(p)
	s.out += int64(n)
	if s.in != nil && s.out > ratioFloor {
		in := max(s.in(), 1)
		if float64(s.out) > s.maxRatio*float64(in) {
			s.err = &streamError{kind: facts.IssueBomb, msg: s.bombMsg(in)}
			return n, s.err
		}
	}
	if s.dense && s.in != nil {
		s.lines += int64(bytes.Count(p[:n], newline))
		if s.lines > linesFloor {
			if in := max(s.in(), 1); s.lines > maxLinesPerByte*in {
				s.err = &streamError{kind: facts.IssueBomb, msg: s.denseMsg(in)}
				return n, s.err
			}
		}
	}
	if err != nil && err != io.EOF {
		s.err = s.fail(err)
		return n, s.err
	}
	return n, err
}

// read calls the decoder, turning a panic in it into a corrupt stream: a bug
// in a decoder must cost one stream, never the walk.
func (s *stage) read(p []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("decoder failed: %v", r)
		}
	}()
	return s.r.Read(p)
}

var newline = []byte{'\n'}

func (s *stage) denseMsg(in int64) string {
	what := s.format + " stream of " + s.what
	if s.format == "zip" {
		what = "zip entry " + s.what
	}
	return fmt.Sprintf("%s holds more than %d lines per compressed byte (%d lines from %d bytes): content that dense is built to keep a parser busy, not a log: stopped there",
		what, maxLinesPerByte, s.lines, in)
}

func (s *stage) bombMsg(in int64) string {
	switch s.format {
	case "tar":
		return fmt.Sprintf("tar entry %s expands %d bytes of archive to more than %d bytes (over %g:1, a sparse-file bomb?): stopped there",
			s.what, in, s.out, s.maxRatio)
	case "zip":
		return fmt.Sprintf("zip entry %s expands %d compressed bytes to more than %d bytes (over %g:1): stopped there",
			s.what, in, s.out, s.maxRatio)
	}
	return fmt.Sprintf("%s stream of %s expands %d compressed bytes to more than %d bytes (over %g:1): stopped there",
		s.format, s.what, in, s.out, s.maxRatio)
}

// fail classifies an error of the stage's reader. A failure of the stream
// underneath is passed on unchanged, so that it is reported once, as what it
// is.
func (s *stage) fail(err error) error {
	var se *streamError
	if s.src != nil && errors.As(s.src.err, &se) {
		return se
	}
	if errors.As(err, &se) {
		return se
	}
	if s.src != nil && s.src.err != nil {
		return &streamError{kind: facts.IssueUnreadable,
			msg: fmt.Sprintf("reading %s failed after %d bytes: %v", s.what, s.src.n, s.src.err)}
	}
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return &streamError{kind: facts.IssueSizeLimit,
			msg: fmt.Sprintf("zstd stream of %s needs a window larger than the limit of %d bytes: not decompressed past byte %d",
				s.what, s.window, s.out)}
	}
	var te trailingError
	if errors.As(err, &te) {
		return &streamError{kind: facts.IssueCorrupt,
			msg: fmt.Sprintf("gzip stream of %s is followed by data that is not gzip, after byte %d of its decompressed output: ignored",
				s.what, s.out)}
	}
	kind, verb := facts.IssueCorrupt, "is corrupt"
	if errors.Is(err, io.ErrUnexpectedEOF) {
		kind, verb = facts.IssueTruncated, "is truncated"
	}
	switch s.format {
	case "tar", "zip":
		return &streamError{kind: kind,
			msg: fmt.Sprintf("%s entry %s %s at byte %d (%v)", s.format, s.what, verb, s.out, err)}
	}
	return &streamError{kind: kind,
		msg: fmt.Sprintf("%s stream of %s %s at byte %d of its decompressed output (%v)", s.format, s.what, verb, s.out, err)}
}

// entryReader is what the callback reads: it counts the bundle's total,
// reports the first failure of the streams below naming the entry and the
// offset in it, and returns errors that wrap ErrStream.
type entryReader struct {
	w    *walker
	path string
	r    io.Reader
	off  int64
	err  error
	// tail is set when the reader drains a container past its last entry.
	tail bool
	// uncounted bytes do not count against MaxTotalBytes: a zip held in
	// memory is bounded by MaxInMemory, and its entries count when read.
	uncounted bool
}

func (er *entryReader) Read(p []byte) (int, error) {
	if er.err != nil {
		return 0, er.err
	}
	w := er.w
	left := w.opts.MaxTotalBytes - w.total
	if er.uncounted {
		left = int64(len(p))
	}
	if left < 0 {
		left = 0
	}
	// One byte more than the budget tells a stream that ends right at the
	// limit from one that goes past it.
	if lim := left + 1; int64(len(p)) > lim {
		p = p[:lim]
	}
	n, err := er.r.Read(p)
	if int64(n) > left {
		n = int(left)
		w.total += int64(n)
		er.off += int64(n)
		w.stop = true
		er.fail(&streamError{kind: facts.IssueSizeLimit,
			msg: fmt.Sprintf("the bundle's decompressed size passed the limit of %d bytes in entry %s at byte %d: reading stopped there; the entries before it were delivered",
				w.opts.MaxTotalBytes, er.path, er.off)})
		return n, er.err
	}
	if !er.uncounted {
		w.total += int64(n)
	}
	er.off += int64(n)
	if err != nil && err != io.EOF {
		er.fail(err)
		return n, er.err
	}
	return n, err
}

// fail reports err once, on the entry, and makes it the reader's sticky
// error.
func (er *entryReader) fail(err error) {
	var se *streamError
	if !errors.As(err, &se) {
		se = &streamError{kind: facts.IssueUnreadable,
			msg: fmt.Sprintf("reading %s failed at byte %d: %v", er.path, er.off, err)}
	}
	if !se.reported {
		se.reported = true
		msg := se.msg
		switch {
		case er.tail:
			msg += fmt.Sprintf("; it broke after the last entry of %s, all entries were read", er.path)
		case se.kind != facts.IssueSizeLimit && se.kind != facts.IssueUnreadable:
			msg += fmt.Sprintf("; in entry %s it broke at byte %d, the bytes before were kept", er.path, er.off)
		}
		er.w.issue(er.path, se.kind, "%s", msg)
	}
	er.err = fmt.Errorf("%s: %w", er.path, se)
}

// errReader fails at once; it is the content of an entry that exists but
// cannot be read, so that the entry is still listed with its issue.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// gzipMembers reads concatenated gzip members as one stream, as gzip(1)
// does (rotated logs are often joined with cat), and tells data after the
// last member apart from a cut member.
type gzipMembers struct {
	zr *gzip.Reader
	br *bufio.Reader
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF || n > 0 {
			if err == io.EOF {
				err = nil // the next call looks for another member
			}
			return n, err
		}
		head, _ := g.br.Peek(len(magicGzip))
		switch {
		case len(head) == 0:
			return 0, io.EOF
		case bytes.Equal(head, magicGzip):
			if err := g.zr.Reset(g.br); err != nil {
				return 0, err
			}
			g.zr.Multistream(false)
		default:
			return 0, trailing(g.br)
		}
	}
}

// trailingError is data after the last gzip member that is not gzip.
type trailingError struct{}

func (trailingError) Error() string { return "data after the last member is not gzip" }

// maxPadding bounds the zero padding read after the last gzip member.
const maxPadding = 1 << 20

// trailing reads what follows the last gzip member. Zero padding, which
// some writers add to fill a block, is no error.
func trailing(r io.Reader) error {
	var buf [4096]byte
	var n int
	for n <= maxPadding {
		k, err := r.Read(buf[:])
		n += k
		if slices.ContainsFunc(buf[:k], func(b byte) bool { return b != 0 }) {
			return trailingError{}
		}
		if err != nil {
			return err
		}
	}
	return trailingError{}
}
