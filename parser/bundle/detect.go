package bundle

import (
	"bytes"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// headLen is how much of a stream is peeked to recognize it: one tar header
// block, and room for an xz block header after the stream header.
const headLen = 1024

// compression is a compressed stream format, recognized by magic bytes.
type compression int

const (
	noCompression compression = iota
	gzipped
	zstded
	xzed
)

// name is the compression's container label.
func (c compression) name() string {
	switch c {
	case gzipped:
		return "gzip"
	case zstded:
		return "zstd"
	case xzed:
		return "xz"
	}
	return ""
}

// ext is the suffix a compressed tar carries in its container label.
func (c compression) ext() string {
	switch c {
	case gzipped:
		return "gz"
	case zstded:
		return "zst"
	case xzed:
		return "xz"
	}
	return ""
}

var (
	magicGzip    = []byte{0x1f, 0x8b}
	magicZstd    = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicXz      = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicZip     = []byte{'P', 'K', 0x03, 0x04}
	magicZipEmpt = []byte{'P', 'K', 0x05, 0x06}
)

func compressionOf(h []byte) compression {
	switch {
	case bytes.HasPrefix(h, magicGzip):
		return gzipped
	case bytes.HasPrefix(h, magicZstd):
		return zstded
	case bytes.HasPrefix(h, magicXz):
		return xzed
	}
	return noCompression
}

func isZip(h []byte) bool {
	return bytes.HasPrefix(h, magicZip) || bytes.HasPrefix(h, magicZipEmpt)
}

// isTar recognizes a tar header block: the ustar magic of POSIX and GNU tar,
// or, for old v7 archives that have no magic, a header checksum that adds up.
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
	want, ok := parseOctal(h[148:156])
	if !ok {
		return false
	}
	// The checksum is the sum of the header bytes with its own field read
	// as spaces; some old writers summed signed bytes.
	var unsigned, signed int64
	for i, b := range h[:512] {
		if i >= 148 && i < 156 {
			b = ' '
		}
		unsigned += int64(b)
		signed += int64(int8(b))
	}
	return want == unsigned || want == signed
}

// parseOctal reads a tar numeric field: octal digits, padded with spaces or
// NULs. An empty field is not a number.
func parseOctal(f []byte) (int64, bool) {
	f = bytes.Trim(f, " \x00")
	if len(f) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range f {
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n<<3 | int64(c-'0')
	}
	return n, true
}

// xzDictCap reads the dictionary size that the first block of an xz stream
// asks for. The decoder allocates it whole, so a hostile stream could ask
// for gigabytes. ok is false when the head does not show it (an empty
// stream, an unusual header): the decoder's own checks then apply.
func xzDictCap(h []byte) (uint64, bool) {
	// Stream header (12 bytes), then the block header: size byte, flags,
	// optional sizes, then the filter flags; LZMA2 is the last filter.
	if len(h) < 14 || h[12] == 0 {
		return 0, false
	}
	end := 12 + (int(h[12])+1)*4
	if end > len(h) {
		return 0, false
	}
	blk := h[13:end]
	flags := blk[0]
	nfilters := int(flags&0x03) + 1
	p := 1
	varint := func() (uint64, bool) {
		var v uint64
		for i := 0; i < 9; i++ {
			if p >= len(blk) {
				return 0, false
			}
			b := blk[p]
			p++
			v |= uint64(b&0x7f) << (7 * i)
			if b&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	if flags&0x40 != 0 {
		if _, ok := varint(); !ok {
			return 0, false
		}
	}
	if flags&0x80 != 0 {
		if _, ok := varint(); !ok {
			return 0, false
		}
	}
	for i := 0; i < nfilters; i++ {
		id, ok := varint()
		if !ok {
			return 0, false
		}
		size, ok := varint()
		if !ok || size > uint64(len(blk)-p) {
			return 0, false
		}
		props := blk[p : p+int(size)]
		p += int(size)
		if id == 0x21 && len(props) == 1 {
			b := props[0]
			if b > 40 {
				return 0, false
			}
			if b == 40 {
				return 1<<32 - 1, true
			}
			return uint64(2|b&1) << (b/2 + 11), true
		}
	}
	return 0, false
}

// compressedSuffixes map a compressed file's suffix to what the name becomes
// once decompressed.
var compressedSuffixes = []struct{ suffix, repl string }{
	{".tgz", ".tar"}, {".tzst", ".tar"}, {".txz", ".tar"},
	{".gz", ""}, {".gzip", ""}, {".zst", ""}, {".zstd", ""}, {".xz", ""},
}

// stripCompressed drops a compression suffix from a name, whatever the
// content turned out to be: extensions lie, and a name is only a label.
func stripCompressed(name string) string {
	base := path.Base(name)
	lower := strings.ToLower(base)
	for _, s := range compressedSuffixes {
		if strings.HasSuffix(lower, s.suffix) && len(base) > len(s.suffix) {
			return name[:len(name)-len(s.suffix)] + s.repl
		}
	}
	return name
}

// cleanPath turns an archive entry name into a safe relative slash path.
// why is empty for a safe name, or says what made it unsafe. Names are kept
// readable: an absolute name loses its root, a ".." cannot climb above the
// bundle.
func cleanPath(name string) (clean, why string) {
	if isCleanRel(name) {
		return name, ""
	}
	n := name
	if strings.Contains(n, `\`) {
		// Zips written on Windows separate with backslashes.
		n = strings.ReplaceAll(n, `\`, "/")
	}
	var reasons []string
	if len(n) >= 2 && n[1] == ':' && isASCIILetter(n[0]) {
		n = n[2:]
		reasons = append(reasons, "drive letter")
	}
	if strings.HasPrefix(n, "/") {
		reasons = append(reasons, "absolute path")
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			reasons = append(reasons, "parent-directory reference")
			break
		}
	}
	clean = strings.TrimPrefix(path.Clean("/"+n), "/")
	if clean == "" {
		clean = "unnamed"
		if len(reasons) == 0 {
			reasons = append(reasons, "empty name")
		}
	}
	return clean, strings.Join(reasons, ", ")
}

// isCleanRel is the common case, checked without allocating: a relative
// name that path.Clean leaves alone and that does not climb.
func isCleanRel(s string) bool {
	if s == "" || s == "." || s == ".." || s[0] == '/' || strings.HasPrefix(s, "../") || strings.ContainsRune(s, '\\') {
		return false
	}
	if len(s) >= 2 && s[1] == ':' && isASCIILetter(s[0]) {
		return false
	}
	return path.Clean(s) == s
}

func isASCIILetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// quote renders a name from the archive as is when it is plain, quoted when
// it holds anything that could confuse a reader of the report.
func quote(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == utf8.RuneError || r == '"' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
