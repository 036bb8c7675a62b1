package bundlewrite

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Expand turns one file given to `coroner bundle` into what the bundle
// packs: the file itself when it is text; its content when it is
// compressed (gzip, zstd, xz, bzip2, several times over: .gz.gz); its
// members, under a folder named like it, when it is a tar or zip archive
// (nested archives too, to MaxDepth); UTF-16 text (with a byte order mark)
// decoded to UTF-8. What cannot be read as text (binary content, formats
// without a decoder among coroner's dependencies such as lz4, 7z or rar,
// links and devices inside archives) comes back as a skipped entry that
// says why, or, with KeepBinary, as an entry packed as is.
//
// Nothing is rewritten in place: a compressed or archived file is never
// packed as bytes that redaction could change (a tar's header checksum
// breaks, and the analyzer then loses every member); its text is packed
// decompressed, each member on its own, so that every byte packed was read
// as text and redacted.
func Expand(p, name string, mod time.Time, opts ExpandOptions) []Entry {
	opts = opts.withDefaults()
	x := &expander{opts: opts, source: p}
	st, err := os.Lstat(p)
	if err != nil {
		return []Entry{{Name: name, Skipped: "unreadable: " + err.Error()}}
	}
	x.expand(node{
		open: func() (io.ReadCloser, error) { return OpenNoFollow(p) },
		size: st.Size(), name: name, folder: name, mod: mod, onDisk: true,
	})
	return x.out
}

// ExpandOptions bound what Expand reads.
type ExpandOptions struct {
	// KeepBinary packs what is not text as is (--no-redact) instead of
	// leaving it out.
	KeepBinary bool
	// MaxDepth bounds nesting: each decompression and each archive
	// counts one level (6 if 0: logs.tar.gz holding a .log.gz is 3).
	MaxDepth int
	// MaxDecompressed bounds one decompressed stream (4 GiB if 0).
	MaxDecompressed int64
	// MaxBuffered bounds the members of archives held in memory, all
	// together (64 MiB if 0: under coroner's soft memory limit of 100 MiB,
	// where the collector would run without pause); MaxMember, one of them
	// (8 MiB if 0). A larger member is read again from its archive each
	// time it is opened, which MaxReread bounds per bundle (64 if 0).
	MaxBuffered, MaxMember int64
	MaxReread              int
	// MaxMembers bounds the entries read from archives (100,000 if 0).
	MaxMembers int
}

func (o ExpandOptions) withDefaults() ExpandOptions {
	if o.MaxDepth <= 0 {
		o.MaxDepth = 6
	}
	if o.MaxDecompressed <= 0 {
		o.MaxDecompressed = 4 << 30
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = 64 << 20
	}
	if o.MaxMember <= 0 {
		o.MaxMember = 8 << 20
	}
	if o.MaxReread <= 0 {
		o.MaxReread = 64
	}
	if o.MaxMembers <= 0 {
		o.MaxMembers = 100_000
	}
	return o
}

// Entry is one file Expand found: an item to pack, or what was left out
// and why.
type Entry struct {
	// Name is the slash path in the bundle: the file's name, a
	// decompressed file's name without its suffix, a member's
	// ARCHIVE/member.
	Name string
	// Size is exactly how many bytes Open yields.
	Size int64
	Open func() (io.ReadCloser, error)
	// Text is false for content packed as is (KeepBinary).
	Text bool
	// Note says how the content was reached, for the manifest:
	// "decompressed from gzip", "member of logs.tar.gz (tar > gzip)".
	Note string
	// Skipped, when set, says why nothing is packed for Name.
	Skipped string
	ModTime time.Time
}

type expander struct {
	opts     ExpandOptions
	source   string
	out      []Entry
	buffered int64
	rereads  int
	members  int
}

// node is a stream to recognize: how to open it, its size (-1: not
// known), the name its content takes and the folder its members go in
// (a compressed archive's members go under its own name: logs.tar.gz/...).
type node struct {
	open   func() (io.ReadCloser, error)
	size   int64
	name   string
	folder string
	mod    time.Time
	depth  int
	via    []string // the containers above, outermost first
	onDisk bool     // the file itself, which a zip reader can read in place
}

func (n node) note() string {
	if len(n.via) == 0 {
		return ""
	}
	return strings.Join(n.via, ", ")
}

func (x *expander) skip(n node, format string, args ...any) {
	x.out = append(x.out, Entry{Name: n.name, Skipped: fmt.Sprintf(format, args...), ModTime: n.mod})
}

// expand recognizes a stream by its first bytes and delivers it.
func (x *expander) expand(n node) {
	head, err := readHead(n.open)
	if err != nil {
		x.skip(n, "unreadable: %v", err)
		return
	}
	f := sniff(head)
	if f.container() && n.depth >= x.opts.MaxDepth {
		x.binary(n, fmt.Sprintf("a %s nested deeper than %d levels", f, x.opts.MaxDepth))
		return
	}
	switch f {
	case fGzip, fZstd, fXz, fBzip2:
		x.decompressed(n, f)
	case fTar:
		x.tar(n)
	case fZip:
		x.zip(n)
	case fUTF16LE, fUTF16BE:
		x.utf16(n, f)
	case fText:
		x.out = append(x.out, Entry{Name: n.name, Size: n.size, Open: n.open, Text: true, Note: n.note(), ModTime: n.mod})
	default:
		x.binary(n, f.String())
	}
}

// binary delivers content that is not text: as is with KeepBinary, else
// as a skipped entry saying what it is.
func (x *expander) binary(n node, what string) {
	if x.opts.KeepBinary {
		x.out = append(x.out, Entry{Name: n.name, Size: n.size, Open: n.open, Note: n.note(), ModTime: n.mod})
		return
	}
	why := what + ": it cannot be read as text, so it cannot be redacted (or pass --no-redact)"
	if hint := formatHints[what]; hint != "" {
		why = what + ": " + hint
	}
	x.skip(n, "%s", why)
}

// formatHints say what to do with a format coroner cannot read.
var formatHints = map[string]string{
	"lz4 stream":   "coroner has no lz4 decoder; decompress it (lz4 -d) and bundle the result",
	"7z archive":   "coroner cannot read 7z; extract it and bundle the folder",
	"rar archive":  "coroner cannot read rar; extract it and bundle the folder",
	"lzip stream":  "coroner has no lzip decoder; decompress it (lzip -d) and bundle the result",
	"lzop stream":  "coroner has no lzop decoder; decompress it (lzop -d) and bundle the result",
	".Z stream":    "coroner cannot read compress(1) streams; decompress it (uncompress) and bundle the result",
	"snappy frame": "coroner has no snappy framing decoder; decompress it and bundle the result",
}

// decompressed measures the decompressed stream and expands it.
func (x *expander) decompressed(n node, f format) {
	dec := func() (io.ReadCloser, error) {
		rc, err := n.open()
		if err != nil {
			return nil, err
		}
		d, err := decoder(f, rc)
		if err != nil {
			rc.Close()
			return nil, err
		}
		return d, nil
	}
	size, err := measure(dec, x.opts.MaxDecompressed)
	if err != nil {
		x.skip(n, "a %s that could not be decompressed: %v", f, err)
		return
	}
	inner := n
	inner.open, inner.size, inner.depth = dec, size, n.depth+1
	inner.name = stripSuffix(n.name)
	inner.via = append(append([]string(nil), n.via...), "decompressed from "+f.short())
	inner.onDisk = false
	// An archive's members go under the name as given (logs.tar.gz/a.log),
	// the same path the analyzer gives them when it reads the file.
	inner.folder = n.folder
	x.expand(inner)
}

// tar expands the members of a tar archive.
func (x *expander) tar(n node) {
	rc, err := n.open()
	if err != nil {
		x.skip(n, "unreadable: %v", err)
		return
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			x.skip(n, "a tar archive that could not be read to its end (after %d members): %v; the members before are packed", i, err)
			return
		}
		if !x.member() {
			x.skip(n, "more than %d members in archives: the rest of this one is not packed", x.opts.MaxMembers)
			return
		}
		m := x.child(n, h.Name, h.ModTime)
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeGNUSparse:
		case tar.TypeDir:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			x.skip(m, "a link in %s (to %s): links are recorded, never followed", n.folder, h.Linkname)
			continue
		default:
			x.skip(m, "not a regular file in %s (tar type %q)", n.folder, h.Typeflag)
			continue
		}
		index := i
		reopen := func() (io.ReadCloser, error) {
			rc, err := n.open()
			if err != nil {
				return nil, err
			}
			tr := tar.NewReader(rc)
			for k := 0; ; k++ {
				h, err := tr.Next()
				if err != nil {
					rc.Close()
					return nil, fmt.Errorf("member %d of %s: %w", index, n.folder, err)
				}
				if k == index {
					return readCloser{io.LimitReader(tr, h.Size), rc.Close}, nil
				}
			}
		}
		m.size = h.Size
		x.memberContent(m, h.Size, tr, reopen)
	}
}

// zip expands the members of a zip archive: read in place when it is the
// file itself, else from memory when it fits the buffer.
func (x *expander) zip(n node) {
	var ra io.ReaderAt
	var closer func() error
	switch {
	case n.onDisk:
		f, err := n.open()
		if err != nil {
			x.skip(n, "unreadable: %v", err)
			return
		}
		file, ok := f.(*os.File)
		if !ok {
			f.Close()
			x.skip(n, "a zip archive that cannot be read in place")
			return
		}
		ra, closer = file, file.Close
	case n.size >= 0 && n.size <= x.opts.MaxBuffered-x.buffered:
		data, err := readAll(n.open, n.size)
		if err != nil {
			x.skip(n, "unreadable zip archive: %v", err)
			return
		}
		x.buffered += int64(len(data))
		ra, closer = bytes.NewReader(data), func() error { return nil }
		n.size = int64(len(data))
	default:
		x.skip(n, "a zip archive inside a stream, larger than the %s coroner holds in memory; extract it and bundle the folder",
			humanSize(x.opts.MaxBuffered))
		return
	}
	defer closer()
	zr, err := zip.NewReader(ra, n.size)
	if err != nil {
		x.skip(n, "a zip archive that could not be read: %v", err)
		return
	}
	for i, zf := range zr.File {
		if !x.member() {
			x.skip(n, "more than %d members in archives: the rest of this one is not packed", x.opts.MaxMembers)
			return
		}
		m := x.child(n, zf.Name, zf.Modified)
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			continue
		case mode&os.ModeSymlink != 0:
			x.skip(m, "a link in %s: links are recorded, never followed", n.folder)
			continue
		case !mode.IsRegular():
			x.skip(m, "not a regular file in %s (%s)", n.folder, mode.Type())
			continue
		case zf.Method != zip.Store && zf.Method != zip.Deflate:
			x.skip(m, "a member of %s compressed with method %d, which coroner cannot read", n.folder, zf.Method)
			continue
		case zf.UncompressedSize64 > uint64(x.opts.MaxDecompressed):
			x.skip(m, "a member of %s of more than %s", n.folder, humanSize(x.opts.MaxDecompressed))
			continue
		}
		index := i
		reopen := func() (io.ReadCloser, error) {
			rc, err := n.open()
			if err != nil {
				return nil, err
			}
			var zra io.ReaderAt
			if f, ok := rc.(*os.File); ok && n.onDisk {
				zra = f
			} else {
				rc.Close()
				return nil, fmt.Errorf("member %d of %s: the archive is no longer at hand", index, n.folder)
			}
			zr, err := zip.NewReader(zra, n.size)
			if err != nil || index >= len(zr.File) {
				rc.Close()
				return nil, fmt.Errorf("member %d of %s: %v", index, n.folder, err)
			}
			mr, err := zr.File[index].Open()
			if err != nil {
				rc.Close()
				return nil, err
			}
			return readCloser{mr, func() error { mr.Close(); return rc.Close() }}, nil
		}
		size := int64(zf.UncompressedSize64)
		m.size = size
		r, err := zf.Open()
		if err != nil {
			x.skip(m, "a member of %s that could not be read: %v", n.folder, err)
			continue
		}
		if !n.onDisk {
			// The archive is in memory: every open is cheap.
			file := zf
			reopen = func() (io.ReadCloser, error) { return file.Open() }
		}
		x.memberContent(m, size, r, reopen)
		r.Close()
	}
}

// child is the node of a member of archive n.
func (x *expander) child(n node, member string, mod time.Time) node {
	clean := SafeName(member)
	if clean == "" {
		clean = "unnamed"
	}
	name := n.folder + "/" + clean
	return node{name: name, folder: name, mod: mod, depth: n.depth + 1, via: []string{"member of " + n.folder}}
}

func (x *expander) member() bool {
	x.members++
	return x.members <= x.opts.MaxMembers
}

// memberContent makes a member's opener: its bytes held in memory when
// they fit (one read of the archive for all its small members), else a
// new read of the archive up to the member each time it is opened.
func (x *expander) memberContent(m node, size int64, r io.Reader, reopen func() (io.ReadCloser, error)) {
	if size <= x.opts.MaxMember && x.buffered+size <= x.opts.MaxBuffered {
		data, err := io.ReadAll(io.LimitReader(r, size+1))
		if err != nil || int64(len(data)) != size {
			x.skip(m, "a member that could not be read whole (%d of %d bytes): %v", len(data), size, err)
			return
		}
		x.buffered += size
		m.open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		x.expand(m)
		return
	}
	x.rereads++
	if x.rereads > x.opts.MaxReread {
		x.skip(m, "a member of %s over the %s that coroner reads from an archive in one go, and more than %d such members; extract the archive and bundle the folder",
			humanSize(size), humanSize(x.opts.MaxMember), x.opts.MaxReread)
		return
	}
	m.open = reopen
	x.expand(m)
}

// utf16 decodes UTF-16 text to UTF-8, so that it is redacted and read as
// any other text.
func (x *expander) utf16(n node, f format) {
	dec := func() (io.ReadCloser, error) {
		rc, err := n.open()
		if err != nil {
			return nil, err
		}
		return readCloser{newUTF16Reader(rc, f == fUTF16BE), rc.Close}, nil
	}
	size, err := measure(dec, x.opts.MaxDecompressed)
	if err != nil {
		x.skip(n, "UTF-16 text that could not be decoded: %v", err)
		return
	}
	via := append(append([]string(nil), n.via...), "decoded from "+f.String())
	x.out = append(x.out, Entry{Name: n.name, Size: size, Open: dec, Text: true, Note: strings.Join(via, ", "), ModTime: n.mod})
}

// format is what a stream's first bytes show.
type format int

const (
	fText format = iota
	fBinary
	fGzip
	fZstd
	fXz
	fBzip2
	fTar
	fZip
	fUTF16LE
	fUTF16BE
	fLz4
	f7z
	fRar
	fLzip
	fLzop
	fCompress
	fSnappy
)

var formatNames = [...]string{fText: "text", fBinary: "binary content", fGzip: "gzip stream", fZstd: "zstd stream",
	fXz: "xz stream", fBzip2: "bzip2 stream", fTar: "tar archive", fZip: "zip archive", fUTF16LE: "UTF-16LE",
	fUTF16BE: "UTF-16BE", fLz4: "lz4 stream", f7z: "7z archive", fRar: "rar archive", fLzip: "lzip stream",
	fLzop: "lzop stream", fCompress: ".Z stream", fSnappy: "snappy frame"}

func (f format) String() string { return formatNames[f] }

// short is the format's name alone: gzip, bzip2.
func (f format) short() string { return strings.Fields(formatNames[f])[0] }

// container reports formats that hold other streams.
func (f format) container() bool {
	switch f {
	case fGzip, fZstd, fXz, fBzip2, fTar, fZip:
		return true
	}
	return false
}

var magics = []struct {
	f     format
	magic string
}{
	{fGzip, "\x1f\x8b"},
	{fZstd, "\x28\xb5\x2f\xfd"},
	{fXz, "\xfd7zXZ\x00"},
	{fBzip2, "BZh"},
	{fZip, "PK\x03\x04"},
	{fZip, "PK\x05\x06"},
	{fLz4, "\x04\x22\x4d\x18"},
	{fLz4, "\x02\x21\x4c\x18"},
	{f7z, "7z\xbc\xaf\x27\x1c"},
	{fRar, "Rar!\x1a\x07"},
	{fLzip, "LZIP"},
	{fLzop, "\x89LZO\x00"},
	{fCompress, "\x1f\x9d"},
	{fSnappy, "\xff\x06\x00\x00sNaPpY"},
	{fUTF16LE, "\xff\xfe"},
	{fUTF16BE, "\xfe\xff"},
}

// sniff recognizes a stream by its first bytes.
func sniff(head []byte) format {
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.magic)) {
			if m.f == fBzip2 && (len(head) < 4 || head[3] < '1' || head[3] > '9') {
				continue // "BZh" then a block size digit; otherwise text
			}
			return m.f
		}
	}
	if isTar(head) {
		return fTar
	}
	if isBinary(head) {
		return fBinary
	}
	return fText
}

// isTar recognizes a tar header block: the ustar magic, or a header
// checksum that adds up (old v7 archives).
func isTar(h []byte) bool {
	if len(h) < 512 {
		return false
	}
	if bytes.Equal(h[257:262], []byte("ustar")) {
		return true
	}
	if h[0] == 0 {
		return false
	}
	f := bytes.Trim(h[148:156], " \x00")
	if len(f) == 0 {
		return false
	}
	var want int64
	for _, c := range f {
		if c < '0' || c > '7' {
			return false
		}
		want = want<<3 | int64(c-'0')
	}
	var sum int64
	for i, c := range h[:512] {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	return want == sum
}

// isBinary reports content that is not text: NUL bytes beyond a stray
// one, or more than one byte in ten that is a control character or not
// UTF-8 (compressed data of a format not listed above, a core file).
// Latin-1 logs and ANSI colours stay text.
func isBinary(head []byte) bool {
	nul := bytes.Count(head, []byte{0})
	if nul > 0 && (nul*20 > len(head) || nul > 64) {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\b' && c != 0x1b || c == 0x7f {
				bad++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 {
			if len(head)-i < utf8.UTFMax {
				break // a rune cut by the head's end
			}
			bad++
		}
		i += size
	}
	return bad*10 > len(head)
}

// stripSuffix drops a compression suffix from a decompressed file's name
// (.tgz becomes .tar).
func stripSuffix(name string) string {
	base := path.Base(name)
	lower := strings.ToLower(base)
	for _, s := range []struct{ suffix, repl string }{
		{".tgz", ".tar"}, {".tbz2", ".tar"}, {".tzst", ".tar"}, {".txz", ".tar"},
		{".gz", ""}, {".gzip", ""}, {".zst", ""}, {".zstd", ""}, {".xz", ""}, {".bz2", ""},
	} {
		if strings.HasSuffix(lower, s.suffix) && len(base) > len(s.suffix) {
			return name[:len(name)-len(s.suffix)] + s.repl
		}
	}
	return name
}

// decoder opens a decompressor of format f on rc; closing it closes rc.
func decoder(f format, rc io.ReadCloser) (io.ReadCloser, error) {
	switch f {
	case fGzip:
		z, err := gzip.NewReader(rc)
		if err != nil {
			return nil, err
		}
		return readCloser{z, func() error { z.Close(); return rc.Close() }}, nil
	case fZstd:
		z, err := zstd.NewReader(rc, zstd.WithDecoderMaxWindow(128<<20), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, err
		}
		return readCloser{z, func() error { z.Close(); return rc.Close() }}, nil
	case fXz:
		z, err := xz.NewReader(rc)
		if err != nil {
			return nil, err
		}
		return readCloser{z, rc.Close}, nil
	case fBzip2:
		return readCloser{bzip2.NewReader(rc), rc.Close}, nil
	}
	return nil, fmt.Errorf("no decoder for %s", f)
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// headLen is how much of a stream is read to recognize it.
const headLen = 8 << 10

func readHead(open func() (io.ReadCloser, error)) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	head := make([]byte, headLen)
	n, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head[:n], nil
}

// measure reads a stream once for its size, up to max bytes.
func measure(open func() (io.ReadCloser, error), max int64) (int64, error) {
	rc, err := open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(rc, max+1))
	if err != nil {
		return 0, err
	}
	if n > max {
		return 0, fmt.Errorf("more than %s decompressed", humanSize(max))
	}
	return n, nil
}

// readAll reads a stream of known size whole.
func readAll(open func() (io.ReadCloser, error), size int64) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("%d bytes where %d were expected", len(data), size)
	}
	return data, nil
}

// humanSize writes a size the way the manifest's notes do: 16 MiB.
func humanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
