// Package bundle reads evidence bundles: a directory, a single file, a tar
// (plain, gzip, zstd, xz), a zip, a single compressed file, or stdin. It
// streams entries to a callback and never writes anything to disk.
//
// Every input is hostile until read: unsafe names, links, bombs, truncated
// streams and oversized inputs are reported as parse issues naming the entry,
// and the walk goes on with the rest of the bundle.
package bundle

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// Options bound what a walk may read.
type Options struct {
	// MaxTotalBytes caps the decompressed bytes of the whole bundle.
	MaxTotalBytes int64
	// MaxRatio caps decompressed/compressed bytes of any compressed stream.
	MaxRatio float64
	// MaxEntries caps the number of entries.
	MaxEntries int
	// MaxZstdWindow caps the zstd decoder's window (its memory).
	MaxZstdWindow uint64
	// MaxXZDict caps the dictionary an xz stream may ask for (its memory).
	MaxXZDict uint64
	// MaxInMemory caps what may be buffered to read a zip that does not sit
	// in a file (stdin, a zip inside a tar).
	MaxInMemory int64
	// Issue receives every parse issue found by the walk. It may be nil.
	Issue func(facts.Issue)
	// Stored, if set, counts the bytes read from the bundle's files as they
	// are stored (compressed, for a compressed file): what a progress line
	// compares with the files' sizes. Bytes a zip's index is read twice for
	// count twice.
	Stored *atomic.Int64
}

// Defaults are the documented limits.
func Defaults() Options {
	return Options{
		MaxTotalBytes: 20 << 30,
		MaxRatio:      1000,
		MaxEntries:    100_000,
		MaxZstdWindow: 128 << 20,
		MaxXZDict:     128 << 20,
		MaxInMemory:   256 << 20,
	}
}

// Entry is one file of the bundle.
type Entry struct {
	// Path is the cleaned slash-separated path inside the bundle: relative,
	// without "..", never absolute. A single-file bundle's entry is its base
	// name (without the compression suffix when it was decompressed).
	Path string
	// Container says how the entry was reached: "dir", "file", "tar",
	// "tar.gz", "tar.zst", "tar.xz", "zip", "gzip", "zstd", "xz", with " > "
	// between levels ("tar.zst > gzip").
	Container string
	// Size is the declared size in the archive, or -1.
	Size int64
	// ModTime is the entry's modification time as recorded, if any.
	ModTime time.Time
	// Link is the target of a symlink or hard link entry. Links are recorded,
	// never followed; such an entry has no content.
	Link string
}

// WalkFunc receives each entry in bundle order. r yields the decompressed
// content and is valid only during the call (it is nil for links); fn need
// not read it to the end. A non-nil error stops the walk and is returned.
type WalkFunc func(e *Entry, r io.Reader) error
