package bundle

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/coroner-dev/coroner/parser/facts"
)

// A zip is read through its central directory, at its end. When that is
// gone (a cut upload) or broken, the entries are read front to back from
// their local headers instead, so that what was stored before the damage is
// kept.

const (
	sigLocal      = 0x04034b50
	sigCentral    = 0x02014b50
	sigEnd        = 0x06054b50
	sigEnd64      = 0x06064b50
	sigDescriptor = 0x08074b50

	flagEncrypted  = 0x1
	flagDescriptor = 0x8
)

// walkZipLocal reads a zip's entries from their local headers.
func (w *walker) walkZipLocal(r io.Reader, p parent) {
	src := &counter{r: r}
	br := bufio.NewReaderSize(src, 64<<10)
	pos := func() int64 { return src.n - int64(br.Buffered()) }
	last := ""
	where := func() string {
		if last == "" {
			return "before its first entry"
		}
		return "after entry " + last
	}
	for !w.stop {
		at := pos()
		var h [30]byte
		n, err := io.ReadFull(br, h[:])
		if n >= 4 {
			switch binary.LittleEndian.Uint32(h[:]) {
			case sigCentral, sigEnd, sigEnd64:
				return // every entry was read; the damage is in the directory
			}
		}
		if err != nil {
			if n == 0 && err == io.EOF {
				return
			}
			w.zipLocalFailed(p, src, facts.IssueTruncated, fmt.Sprintf("ends %s, at byte %d", where(), at+int64(n)))
			return
		}
		if binary.LittleEndian.Uint32(h[:]) != sigLocal {
			w.zipLocalFailed(p, src, facts.IssueCorrupt, fmt.Sprintf("has no entry header %s, at byte %d", where(), at))
			return
		}
		flags := binary.LittleEndian.Uint16(h[6:])
		method := binary.LittleEndian.Uint16(h[8:])
		mod := msDosTime(binary.LittleEndian.Uint16(h[12:]), binary.LittleEndian.Uint16(h[10:]))
		crc := binary.LittleEndian.Uint32(h[14:])
		csize := uint64(binary.LittleEndian.Uint32(h[18:]))
		usize := uint64(binary.LittleEndian.Uint32(h[22:]))
		nameLen := int(binary.LittleEndian.Uint16(h[26:]))
		extraLen := int(binary.LittleEndian.Uint16(h[28:]))
		rawName := make([]byte, nameLen)
		extra := make([]byte, extraLen)
		_, err = io.ReadFull(br, rawName)
		if err == nil {
			_, err = io.ReadFull(br, extra)
		}
		if err != nil {
			w.zipLocalFailed(p, src, facts.IssueTruncated, fmt.Sprintf("ends inside an entry header %s, at byte %d", where(), pos()))
			return
		}
		zip64 := false
		if c, u, t, ok := parseExtra(extra, csize, usize); ok {
			zip64 = c != csize || u != usize || zip64Extra(extra)
			csize, usize = c, u
			if !t.IsZero() {
				mod = t
			}
		}
		name := string(rawName)
		encrypted := flags&flagEncrypted != 0
		descriptor := flags&flagDescriptor != 0
		// Writers that stream put zero sizes in the local header and the
		// real ones in a descriptor after the data.
		sized := !descriptor || csize != 0
		isDir := len(name) > 0 && name[len(name)-1] == '/'
		clean, why := cleanPath(name)
		path := p.prefix + clean

		var data io.Reader
		switch {
		case sized:
			data = &exactReader{r: br, n: int64(min(csize, 1<<62))}
		case method == 8 && !encrypted:
			data = br // deflate knows where it ends
		default:
			w.zipLocalFailed(p, src, facts.IssueUnreadable,
				fmt.Sprintf("has entry %s whose end cannot be found without the directory (method %d, sizes in a trailing descriptor)", path, method))
			return
		}
		var cr *crcReader
		var st *stage
		if !isDir {
			last = path
			if !w.count(path) {
				return
			}
			if why != "" {
				w.unsafePath(path, name, why)
			}
			size := int64(-1)
			if sized && usize <= 1<<62 {
				size = int64(usize)
			}
			e := &Entry{Path: path, Container: p.label, Size: size, ModTime: mod}
			var content io.Reader
			switch {
			case encrypted:
				w.unreadable(e, facts.IssueUnreadable, "zip entry %s is encrypted", path)
			case method == 0:
				content = data
			case method == 8:
				content = flate.NewReader(data)
			default:
				w.unreadable(e, facts.IssueUnreadable, "zip entry %s cannot be opened (unsupported compression method %d)", path, method)
			}
			if content != nil {
				start := pos()
				cr = &crcReader{r: content, h: crc32.NewIEEE(), want: crc, check: !descriptor}
				st = &stage{r: cr, src: src, in: func() int64 { return pos() - start }, format: "zip", what: path,
					maxRatio: w.opts.MaxRatio, dense: method != 0}
				w.open(p, e, st, nil, size, false)
				w.drain(st, path, st.out)
			}
		} else if !sized {
			// A directory with deflated data of unknown size: pass over it.
			_, _ = io.Copy(io.Discard, io.LimitReader(flate.NewReader(data), 1<<20))
		}
		if w.stop {
			return
		}
		var se *streamError
		if st != nil && errors.As(st.err, &se) {
			if !sized || se.kind == facts.IssueTruncated || se.kind == facts.IssueUnreadable {
				return // reported on the entry; where the next one starts is unknown
			}
		}
		// Leave the reader at the end of the entry's data.
		if sized {
			if _, err := io.Copy(io.Discard, data); err != nil {
				w.zipLocalFailed(p, src, facts.IssueTruncated, fmt.Sprintf("ends inside entry %s, at byte %d", path, pos()))
				return
			}
		}
		if descriptor {
			want, err := readDescriptor(br, zip64)
			if err != nil {
				w.zipLocalFailed(p, src, facts.IssueTruncated, fmt.Sprintf("ends in the descriptor of entry %s, at byte %d", path, pos()))
				return
			}
			if cr != nil && st.err == nil && cr.h.Sum32() != want {
				w.issue(path, facts.IssueCorrupt, "zip entry %s is corrupt: its checksum does not match its content", path)
			}
		}
	}
}

// exactReader reads n bytes and fails with io.ErrUnexpectedEOF when the
// input ends before.
type exactReader struct {
	r io.Reader
	n int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF && e.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (w *walker) zipLocalFailed(p parent, src *counter, kind facts.IssueKind, what string) {
	var se *streamError
	if errors.As(src.err, &se) {
		if !se.reported {
			se.reported = true
			w.issue(p.name, se.kind, "%s; it broke in the zip archive %s", se.msg, p.name)
		}
		return
	}
	w.issue(p.name, kind, "zip archive %s, read from its entry headers, %s: the rest was not read", p.name, what)
}

// readDescriptor reads the data descriptor after an entry and returns its
// checksum. The signature is optional.
func readDescriptor(r io.Reader, zip64 bool) (uint32, error) {
	n := 12
	if zip64 {
		n = 20
	}
	var b [24]byte
	if _, err := io.ReadFull(r, b[:4]); err != nil {
		return 0, err
	}
	if binary.LittleEndian.Uint32(b[:]) == sigDescriptor {
		if _, err := io.ReadFull(r, b[:n]); err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint32(b[:]), nil
	}
	if _, err := io.ReadFull(r, b[4:n]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// parseExtra reads the zip64 sizes and the extended timestamp from a local
// header's extra fields.
func parseExtra(extra []byte, csize, usize uint64) (c, u uint64, mod time.Time, ok bool) {
	c, u = csize, usize
	for len(extra) >= 4 {
		tag := binary.LittleEndian.Uint16(extra)
		size := int(binary.LittleEndian.Uint16(extra[2:]))
		if size > len(extra)-4 {
			break
		}
		field := extra[4 : 4+size]
		extra = extra[4+size:]
		switch tag {
		case 0x0001: // zip64: the sizes that did not fit, in this order
			if usize == 0xffffffff && len(field) >= 8 {
				u = binary.LittleEndian.Uint64(field)
				field = field[8:]
			}
			if csize == 0xffffffff && len(field) >= 8 {
				c = binary.LittleEndian.Uint64(field)
			}
		case 0x5455: // extended timestamp: flags, then mtime
			if len(field) >= 5 && field[0]&1 != 0 {
				mod = time.Unix(int64(binary.LittleEndian.Uint32(field[1:])), 0).UTC()
			}
		}
	}
	return c, u, mod, true
}

func zip64Extra(extra []byte) bool {
	for len(extra) >= 4 {
		tag := binary.LittleEndian.Uint16(extra)
		size := int(binary.LittleEndian.Uint16(extra[2:]))
		if tag == 0x0001 {
			return true
		}
		if size > len(extra)-4 {
			break
		}
		extra = extra[4+size:]
	}
	return false
}

// msDosTime converts an MS-DOS date and time, as zip stores them.
func msDosTime(date, tm uint16) time.Time {
	if date == 0 {
		return time.Time{}
	}
	return time.Date(int(date>>9)+1980, time.Month(date>>5&0xf), int(date&0x1f),
		int(tm>>11), int(tm>>5&0x3f), int(tm&0x1f)*2, 0, time.UTC)
}

// crcReader checks an entry's checksum at its end when the local header
// holds it; with a descriptor the walk checks it after the data.
type crcReader struct {
	r     io.Reader
	h     hash.Hash32
	want  uint32
	check bool
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if err == io.EOF && c.check && c.h.Sum32() != c.want {
		return n, errors.New("zip: checksum error")
	}
	return n, err
}
