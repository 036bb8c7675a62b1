package bundle

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sort"

	"github.com/klauspost/compress/flate"

	"github.com/coroner-dev/coroner/internal/special"
	"github.com/coroner-dev/coroner/parser/facts"
)

// maxLinkTarget bounds what is read of a zip symlink's target.
const maxLinkTarget = 4096

// walkZipStream reads a zip that does not sit in a file. A zip is read from
// its end, so it is held in memory, within opts.MaxInMemory.
func (w *walker) walkZipStream(r io.Reader, p parent) {
	er := &entryReader{w: w, path: p.name, r: r, uncounted: true}
	buf, err := io.ReadAll(io.LimitReader(er, w.opts.MaxInMemory+1))
	if err != nil {
		return // reported by the entry reader
	}
	if int64(len(buf)) > w.opts.MaxInMemory {
		w.issue(p.name, facts.IssueSizeLimit,
			"zip archive %s does not sit in a file and is larger than the in-memory limit of %d bytes: skipped",
			p.name, w.opts.MaxInMemory)
		return
	}
	w.walkZipAt(bytes.NewReader(buf), int64(len(buf)), p)
}

func (w *walker) walkZipAt(ra io.ReaderAt, size int64, p parent) {
	zr, err := openZip(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		kind := facts.IssueCorrupt
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, zip.ErrFormat) {
			// A zip's directory sits at its end: a cut zip loses it first.
			kind = facts.IssueTruncated
		}
		w.issue(p.name, kind, "zip archive %s has no readable central directory (%v; cut or corrupt): its entries were read from their local headers",
			p.name, err)
		w.walkZipLocal(io.NewSectionReader(ra, 0, size), p)
		return
	}
	// The same format, decoded about twice as fast as compress/flate.
	zr.RegisterDecompressor(zip.Deflate, func(r io.Reader) io.ReadCloser { return flate.NewReader(r) })
	w.walkZip(zr, p)
}

func openZip(ra io.ReaderAt, size int64) (zr *zip.Reader, err error) {
	defer func() {
		if r := recover(); r != nil {
			zr, err = nil, fmt.Errorf("zip reader failed: %v", r)
		}
	}()
	return zip.NewReader(ra, size)
}

// walkZip delivers a zip's members in the order of its central directory.
func (w *walker) walkZip(zr *zip.Reader, p parent) {
	shared := overlapping(zr.File)
	for i, f := range zr.File {
		if w.stop {
			return
		}
		mode := f.Mode()
		if mode.IsDir() {
			continue
		}
		name, why := cleanPath(f.Name)
		path := p.prefix + name
		if !w.count(path) {
			return
		}
		if why != "" {
			w.unsafePath(path, f.Name, why)
		}
		if j, ok := shared[i]; ok {
			other, _ := cleanPath(zr.File[j].Name)
			w.issue(path, facts.IssueBomb, "zip entry %s shares its compressed data with entry %s: overlapping entries make a small zip expand without bound (a zip bomb): skipped",
				path, p.prefix+other)
			continue
		}
		size := int64(-1)
		if f.UncompressedSize64 <= math.MaxInt64 {
			size = int64(f.UncompressedSize64)
		}
		e := &Entry{Path: path, Container: p.label, Size: size, ModTime: f.Modified}
		switch {
		case mode&fs.ModeSymlink != 0:
			e.Size = 0
			w.link(e, true, zipLinkTarget(f))
		case !mode.IsRegular():
			w.issue(path, facts.IssueUnreadable, "%s is %s"+SkippedSuffix, path, special.Describe(mode))
		default:
			rc, err := openZipFile(f)
			if err != nil {
				kind := facts.IssueCorrupt
				if errors.Is(err, zip.ErrAlgorithm) {
					kind = facts.IssueUnreadable
				}
				w.unreadable(e, kind, "zip entry %s cannot be opened (%v)", path, err)
				continue
			}
			compressed := int64(math.MaxInt64)
			if f.CompressedSize64 <= math.MaxInt64 {
				compressed = int64(f.CompressedSize64)
			}
			st := &stage{r: rc, in: func() int64 { return compressed }, format: "zip", what: path, maxRatio: w.opts.MaxRatio,
				dense: f.Method != zip.Store}
			w.open(p, e, st, nil, size, false)
			_ = rc.Close()
		}
	}
}

func openZipFile(f *zip.File) (rc io.ReadCloser, err error) {
	defer func() {
		if r := recover(); r != nil {
			rc, err = nil, fmt.Errorf("zip reader failed: %v", r)
		}
	}()
	return f.Open()
}

// zipLinkTarget reads a zip symlink's target, which is its content.
func zipLinkTarget(f *zip.File) (target string) {
	defer func() {
		if r := recover(); r != nil {
			target = "(unreadable)"
		}
	}()
	rc, err := openZipFile(f)
	if err != nil {
		return "(unreadable)"
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, maxLinkTarget))
	return string(b)
}

// overlapping finds the entries whose data overlaps that of an earlier one
// in the archive (by offset): entry index -> the entry it overlaps. A zip
// whose directory points many entries at the same compressed bytes expands
// each of them again; only the first of each overlap is read.
func overlapping(files []*zip.File) map[int]int {
	type span struct {
		i          int
		start, end int64
	}
	spans := make([]span, 0, len(files))
	for i, f := range files {
		off, err := dataOffset(f)
		if err != nil || f.CompressedSize64 > math.MaxInt64-uint64(off) {
			continue // opening it fails, and says why
		}
		spans = append(spans, span{i, off, off + int64(f.CompressedSize64)})
	}
	sort.Slice(spans, func(a, b int) bool {
		if spans[a].start != spans[b].start {
			return spans[a].start < spans[b].start
		}
		return spans[a].i < spans[b].i
	})
	var out map[int]int
	owner, end := -1, int64(-1)
	for _, s := range spans {
		if owner >= 0 && s.start < end && s.end > s.start {
			if out == nil {
				out = map[int]int{}
			}
			out[s.i] = owner
			continue
		}
		if s.end > end {
			owner, end = s.i, s.end
		}
	}
	return out
}

func dataOffset(f *zip.File) (off int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			off, err = 0, fmt.Errorf("zip reader failed: %v", r)
		}
	}()
	return f.DataOffset()
}
