package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"

	"github.com/coroner-dev/coroner/internal/special"
	"github.com/coroner-dev/coroner/parser/facts"
)

// ErrStream marks read errors of a compressed or archived stream (truncated,
// corrupt, bomb, over a limit). The walk has already reported them as parse
// issues; a reader of entry content need not report them again.
var ErrStream = errors.New("bundle stream")

// Walk reads the bundle at path ("-" for stdin) and calls fn for each entry.
// It returns an error only when the bundle cannot be opened at all, or when
// fn returns one.
//
// Compression and containers are recognized by their magic bytes, never by
// the name. The bundle's own container is expanded, and so is one level
// below it: a compressed member is delivered decompressed, a tar or zip
// member is expanded under its own path. Anything deeper is delivered as is.
func Walk(path string, opts Options, fn WalkFunc) error {
	if path == "-" {
		return WalkReader("stdin", os.Stdin, opts, fn)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("open bundle: %w", err)
	}
	if st.IsDir() {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		// A folder that cannot be listed is a bundle that cannot be opened.
		d, err := os.Open(path)
		if err == nil {
			_, err = d.ReadDir(1)
			d.Close()
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("open bundle: %w", err)
		}
		w := newWalker(filepath.Base(abs), opts, fn)
		defer w.close()
		w.walkDir(path)
		return w.err
	}
	// Judged on the opened file, which open() does not wait for: a FIFO
	// without a writer, a device or a socket is no bundle.
	f, _, err := special.Open(path, true)
	if err != nil {
		var nr *special.NotRegularError
		if errors.As(err, &nr) {
			return fmt.Errorf("open bundle: %s is %s, not a file, folder or archive: not read (to read a stream, pipe it to coroner's stdin: ... | coroner analyze -)",
				filepath.Base(path), special.Describe(nr.Mode))
		}
		return fmt.Errorf("open bundle: %w", err)
	}
	defer f.Close()
	if special.Pseudo(f) {
		// /proc/meminfo, a cgroup's memory.events: no size to trust.
		name := filepath.Base(path)
		w := newWalker(name, opts, fn)
		defer w.close()
		r := w.bounded(name, f)
		top := &Entry{Path: name, Container: "file", Size: -1}
		rr, _ := w.stored(r, nil)
		w.open(parent{}, top, rr, nil, 0, true)
		return w.err
	}
	return WalkReader(filepath.Base(path), f, opts, fn)
}

// SkippedSuffix ends the issue of every entry left out because it is not a
// regular file (a FIFO, a socket, a device; in a folder or an archive).
const SkippedSuffix = ", not a regular file: skipped"

// bounded reads a file of /proc or /sys at most up to special.MaxPseudo
// bytes, and says so on the entry when that cut it.
func (w *walker) bounded(path string, f *os.File) io.Reader {
	return special.NewBounded(f, func() {
		w.issue(path, facts.IssueTruncated, "%s is a file of /proc, /sys or another kernel file system, which has no size: its first %d bytes were read",
			path, special.MaxPseudo)
	})
}

// WalkReader reads a bundle from r as Walk reads a file; name is the
// bundle's base name, which a single-file bundle's entry takes and
// archive-level issues cite. A zip needs random access: when r is a regular
// file it is read in place, otherwise it is held in memory up to
// opts.MaxInMemory.
func WalkReader(name string, r io.Reader, opts Options, fn WalkFunc) error {
	if name == "" {
		name = "stdin"
	}
	w := newWalker(name, opts, fn)
	defer w.close()
	top := &Entry{Path: name, Container: "file", Size: -1}
	var ra io.ReaderAt
	var size int64
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			top.ModTime = st.ModTime()
			if off, err := f.Seek(0, io.SeekCurrent); err == nil && off <= st.Size() {
				size = st.Size() - off
				ra = io.NewSectionReader(f, off, size)
				top.Size = size
			}
		}
	}
	r, ra = w.stored(r, ra)
	w.open(parent{}, top, r, ra, size, true)
	return w.err
}

func (o Options) withDefaults() Options {
	d := Defaults()
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = d.MaxTotalBytes
	}
	if o.MaxRatio <= 0 {
		o.MaxRatio = d.MaxRatio
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = d.MaxEntries
	}
	if o.MaxZstdWindow == 0 {
		o.MaxZstdWindow = d.MaxZstdWindow
	}
	o.MaxZstdWindow = min(max(o.MaxZstdWindow, zstd.MinWindowSize), 1<<41)
	if o.MaxXZDict == 0 {
		o.MaxXZDict = d.MaxXZDict
	}
	if o.MaxInMemory <= 0 {
		o.MaxInMemory = d.MaxInMemory
	}
	if o.Issue == nil {
		o.Issue = func(facts.Issue) {}
	}
	return o
}

// walker is the state of one walk. Everything runs on the caller's
// goroutine: entries are delivered one at a time, in bundle order.
type walker struct {
	opts    Options
	fn      WalkFunc
	base    string
	total   int64 // decompressed bytes read so far, for MaxTotalBytes
	entries int
	// stop ends the walk: a limit was reached or fn failed.
	stop bool
	err  error // fn's error, returned by Walk
	// Readers are reused per level (0: the bundle, 1: its members, 2: the
	// members of an archive inside it); one stream is open per level at a
	// time.
	bufs [3][2]*bufio.Reader
	zstd [3]*zstd.Decoder
	gzip [3]*gzip.Reader
}

// parent is a container whose members are being walked.
type parent struct {
	prefix string // joined before member names: "" or "logs.tar.gz/"
	label  string // the members' Entry.Container
	depth  int    // 0: the bundle's own container; 1: an archive inside it
	name   string // cited by the container's own issues
}

func newWalker(base string, opts Options, fn WalkFunc) *walker {
	return &walker{opts: opts.withDefaults(), fn: fn, base: base}
}

func (w *walker) close() {
	for _, d := range w.zstd {
		if d != nil {
			d.Close()
		}
	}
}

func (w *walker) issue(file string, kind facts.IssueKind, format string, args ...any) {
	w.opts.Issue(facts.Issue{Src: facts.Source{File: file}, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// count admits one more entry, or stops the walk at the entry limit.
func (w *walker) count(path string) bool {
	if w.stop {
		return false
	}
	w.entries++
	if w.entries > w.opts.MaxEntries {
		w.issue(w.base, facts.IssueEntryLimit,
			"the bundle has more than %d entries: stopped before entry %s; the rest was not read",
			w.opts.MaxEntries, path)
		w.stop = true
		return false
	}
	return true
}

// deliver hands an entry to fn. r is nil for links.
func (w *walker) deliver(e *Entry, r io.Reader) {
	if w.stop {
		return
	}
	var er io.Reader
	if r != nil {
		er = &entryReader{w: w, path: e.Path, r: r}
	}
	if err := w.fn(e, er); err != nil {
		w.err = err
		w.stop = true
	}
}

// unreadable delivers an entry that exists but whose content cannot be read
// at all, after reporting why: its reader fails at once, so the entry is
// still listed, with its issue.
func (w *walker) unreadable(e *Entry, kind facts.IssueKind, format string, args ...any) {
	se := &streamError{kind: kind, msg: fmt.Sprintf(format, args...), reported: true}
	w.issue(e.Path, kind, "%s", se.msg)
	w.deliver(e, errReader{err: fmt.Errorf("%s: %w", e.Path, se)})
}

func (w *walker) unsafePath(path, orig, why string) {
	w.issue(path, facts.IssueUnsafePath, "entry name %s is unsafe (%s): read as %s", quote(orig), why, path)
}

func (w *walker) link(e *Entry, symlink bool, target string) {
	what := "hard link"
	if symlink {
		what = "symlink"
	}
	e.Link = target
	w.issue(e.Path, facts.IssueLink, "%s to %s: recorded, not followed", what, quote(target))
	w.deliver(e, nil)
}

// buf returns the reusable peek buffer of a level, reset onto r.
func (w *walker) buf(level, slot int, r io.Reader) *bufio.Reader {
	b := w.bufs[level][slot]
	if b == nil {
		size := 64 << 10
		if level > 0 {
			size = 16 << 10
		}
		b = bufio.NewReaderSize(r, size)
		w.bufs[level][slot] = b
		return b
	}
	b.Reset(r)
	return b
}

func join(label, child string) string {
	if label == "" {
		return child
	}
	return label + " > " + child
}

// open recognizes one stream by its first bytes and delivers or expands it.
// top is the bundle itself; otherwise e is a member of p.
func (w *walker) open(p parent, e *Entry, r io.Reader, ra io.ReaderAt, size int64, top bool) {
	level := 0
	if !top {
		level = p.depth + 1
	}
	// The counter sits below the peek buffer: what a decoder consumed is
	// what was read less what is still buffered.
	src := &counter{r: r}
	br := w.buf(level, 0, src)
	head, _ := br.Peek(headLen)
	c := compressionOf(head)
	archive := isTar(head) || isZip(head)

	if !top && p.depth > 0 {
		if c != noCompression || archive {
			w.issue(e.Path, facts.IssueNested, "nested archive deeper than one level: not expanded (%s inside %s); delivered as is",
				describe(head), p.name)
		}
		w.deliver(e, br)
		return
	}
	child := func(label string) parent {
		if top {
			return parent{label: label, name: w.base}
		}
		return parent{prefix: e.Path + "/", label: join(p.label, label), depth: p.depth + 1, name: e.Path}
	}
	switch {
	case c == noCompression && isTar(head):
		w.walkTar(br, child("tar"))
		return
	case c == noCompression && isZip(head):
		if ra != nil {
			w.walkZipAt(ra, size, child("zip"))
		} else {
			w.walkZipStream(br, child("zip"))
		}
		return
	case c == noCompression:
		w.deliver(e, br)
		return
	}

	st, mod, err := w.decompress(c, br, src, head, e.Path, level)
	if err != nil {
		var se *streamError
		errors.As(err, &se)
		w.unreadable(e, se.kind, "%s: not decompressed", se.msg)
		return
	}
	dbr := w.buf(level, 1, st)
	dhead, _ := dbr.Peek(headLen)
	switch {
	case isTar(dhead):
		if w.walkTar(dbr, child("tar."+c.ext())) && !w.stop {
			// The tar ended; read the stream to its end so that a cut or
			// corrupt tail is still noticed.
			w.drainTail(dbr, e.Path)
		}
	case isZip(dhead):
		w.walkZipStream(dbr, child("zip."+c.ext()))
	default:
		de := &Entry{Path: stripCompressed(e.Path), Container: join(p.label, c.name()), Size: -1, ModTime: mod}
		if top {
			de.Container = c.name()
		}
		if mod.IsZero() && !top && p.label != "dir" {
			// An archive's record of the member; a file system's mtime
			// tells when the file was copied, not captured.
			de.ModTime = e.ModTime
		}
		if compressionOf(dhead) != noCompression {
			w.issue(de.Path, facts.IssueNested, "nested archive deeper than one level: not expanded (%s inside %s); delivered as is",
				describe(dhead), e.Path)
		}
		w.deliver(de, dbr)
	}
}

// describe names what a stream's head shows, for issue details.
func describe(h []byte) string {
	switch c := compressionOf(h); {
	case c != noCompression:
		return c.name() + " stream"
	case isTar(h):
		return "tar archive"
	case isZip(h):
		return "zip archive"
	}
	return "data"
}

// decompress opens a decoder of format c on br, which reads from src. A
// failure to start is a *streamError, not yet reported.
func (w *walker) decompress(c compression, br *bufio.Reader, src *counter, head []byte, what string, level int) (st *stage, mod time.Time, err error) {
	st = &stage{src: src, in: func() int64 { return src.n - int64(br.Buffered()) }, format: c.name(), what: what,
		maxRatio: w.opts.MaxRatio, window: w.opts.MaxZstdWindow, dense: true}
	defer func() {
		if r := recover(); r != nil {
			err = st.fail(fmt.Errorf("decoder failed: %v", r))
		}
	}()
	switch c {
	case gzipped:
		zr := w.gzip[level]
		if zr == nil {
			zr = new(gzip.Reader)
			w.gzip[level] = zr
		}
		if err := zr.Reset(br); err != nil {
			return nil, mod, st.fail(err)
		}
		zr.Multistream(false)
		mod = zr.ModTime
		st.r = &gzipMembers{zr: zr, br: br}
	case zstded:
		d := w.zstd[level]
		if d == nil {
			d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(w.opts.MaxZstdWindow), zstd.WithDecoderMaxMemory(w.opts.MaxZstdWindow))
			if err != nil {
				return nil, mod, st.fail(err)
			}
			w.zstd[level] = d
		}
		if err := d.Reset(br); err != nil {
			return nil, mod, st.fail(err)
		}
		st.r = d
	case xzed:
		if dict, ok := xzDictCap(head); ok && dict > w.opts.MaxXZDict {
			return nil, mod, &streamError{kind: facts.IssueSizeLimit,
				msg: fmt.Sprintf("xz stream of %s needs a dictionary of %d bytes, over the limit of %d", what, dict, w.opts.MaxXZDict)}
		}
		xr, err := xz.NewReader(br)
		if err != nil {
			return nil, mod, st.fail(err)
		}
		st.r = xr
	}
	return st, mod, nil
}

// drainTail reads what is left of a stream after its last entry, counting
// it against the limits and reporting a broken tail on the container.
func (w *walker) drainTail(r io.Reader, name string) {
	er := &entryReader{w: w, path: name, r: r, tail: true}
	_, _ = io.Copy(io.Discard, er)
}

// drain reads what fn left of an entry, counting it against the limits.
func (w *walker) drain(r io.Reader, path string, off int64) {
	if w.stop {
		return
	}
	er := &entryReader{w: w, path: path, r: r, off: off}
	_, _ = io.Copy(io.Discard, er)
}
