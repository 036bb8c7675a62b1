// Package textio reads evidence files line by line with bounded memory.
//
// bufio.Scanner fails on a line longer than its buffer and stops; evidence
// files have lines of many megabytes (a ServerArgs dump, a tqdm bar never
// ended by a newline, a binary blob), so this scanner cuts such a line at a
// limit, skips the rest, and says so, then carries on.
package textio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// DefaultMaxLine is the longest line kept whole (1 MiB).
const DefaultMaxLine = 1 << 20

// Scanner yields the lines of a reader without their "\n" or "\r\n".
type Scanner struct {
	r       *bufio.Reader
	max     int
	buf     []byte
	line    []byte
	n       int
	bytes   int64
	cut     bool
	cutLen  int64
	err     error
	done    bool
	nuls    int
	nulLine int
	badUTF8 int
	badLine int
	// counted is BytesRead at the end of the last line returned, to tell a
	// final empty line from the end of input.
	counted int64
	// watch, if set, sees every line as it is read (see Watch).
	watch func(line []byte, n int)
}

// Watch makes fn see every line the scanner reads, with its number, on the
// goroutine that reads it (the read-ahead's, when one is open). The line is
// valid only during the call. Each physical line is seen once, whoever
// asks for it and however often.
func (s *Scanner) Watch(fn func(line []byte, n int)) { s.watch = fn }

// NewScanner returns a scanner that keeps at most maxLine bytes of a line
// (DefaultMaxLine when maxLine <= 0).
func NewScanner(r io.Reader, maxLine int) *Scanner {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	size := 256 << 10
	if maxLine < size {
		size = max(maxLine, 16)
	}
	return &Scanner{r: bufio.NewReaderSize(r, size), max: maxLine}
}

// Scan advances to the next line. It returns false at the end of input or on
// a read error (see Err).
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	s.cut = false
	s.cutLen = 0
	s.buf = s.buf[:0]
	var chunk []byte
	var err error
	for {
		chunk, err = s.r.ReadSlice('\n')
		s.bytes += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			s.keep(chunk)
			continue
		}
		break
	}
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
		s.done = true
	}
	if err != nil {
		s.done = true
	}
	// The newline does not count against the limit.
	chunk = bytes.TrimSuffix(chunk, []byte{'\n'})
	if len(s.buf) == 0 && !s.cut && len(chunk) <= s.max {
		// Fast path: the whole line sits in the reader's buffer.
		s.line = chunk
	} else {
		s.keep(chunk)
		s.line = s.buf
	}
	if len(s.line) == 0 && !s.cut && s.done && s.bytes == s.counted {
		return false
	}
	s.counted = s.bytes
	s.line = bytes.TrimSuffix(s.line, []byte{'\r'})
	s.n++
	if i := bytes.IndexByte(s.line, 0); i >= 0 {
		if s.nuls == 0 {
			s.nulLine = s.n
		}
		s.nuls += bytes.Count(s.line, []byte{0})
	}
	if s.watch != nil {
		s.watch(s.line, s.n)
	}
	return true
}

func (s *Scanner) keep(chunk []byte) {
	room := s.max - len(s.buf)
	if room >= len(chunk) {
		s.buf = append(s.buf, chunk...)
		return
	}
	if room > 0 {
		// Cut on a rune boundary so the kept part stays valid UTF-8.
		k := room
		for k > 0 && k < len(chunk) && !utf8.RuneStart(chunk[k]) {
			k--
		}
		s.buf = append(s.buf, chunk[:k]...)
		s.cutLen += int64(len(chunk) - k)
	} else {
		s.cutLen += int64(len(chunk))
	}
	s.cut = true
}

// Bytes returns the current line. It is valid until the next Scan.
func (s *Scanner) Bytes() []byte { return s.line }

// Text returns the current line as a string.
func (s *Scanner) Text() string { return string(s.line) }

// Line returns the 1-based number of the current line.
func (s *Scanner) Line() int { return s.n }

// Truncated reports whether the current line was cut at the limit, and how
// many bytes were dropped.
func (s *Scanner) Truncated() (bool, int64) { return s.cut, s.cutLen }

// BytesRead returns the bytes consumed so far.
func (s *Scanner) BytesRead() int64 { return s.bytes }

// NULs returns how many NUL bytes were seen and the first line holding one.
func (s *Scanner) NULs() (count, firstLine int) { return s.nuls, s.nulLine }

// Err returns the read error that ended the scan, if any (not io.EOF).
func (s *Scanner) Err() error { return s.err }

// CheckUTF8 counts the current line if it is not valid UTF-8; callers that
// keep text call it so the file's issue says how many lines were repaired.
func (s *Scanner) CheckUTF8() bool {
	if utf8.Valid(s.line) {
		return true
	}
	if s.badUTF8 == 0 {
		s.badLine = s.n
	}
	s.badUTF8++
	return false
}

// BadUTF8 returns how many lines CheckUTF8 found invalid and the first one.
func (s *Scanner) BadUTF8() (count, firstLine int) { return s.badUTF8, s.badLine }
