package bundle

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"

	"github.com/coroner-dev/coroner/parser/facts"
)

// walkTar delivers the members of a tar stream in archive order. It returns
// true when the archive ended properly.
func (w *walker) walkTar(r io.Reader, p parent) bool {
	src := &counter{r: r}
	tr := tar.NewReader(src)
	last := ""
	for !w.stop {
		hdr, err := nextTar(tr)
		if err == io.EOF {
			return true
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			w.tarFailed(p, src, err, last)
			return false
		}
		switch hdr.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		}
		name, why := cleanPath(hdr.Name)
		path := p.prefix + name
		last = path
		if !w.count(path) {
			return false
		}
		if why != "" {
			w.unsafePath(path, hdr.Name, why)
		}
		e := &Entry{Path: path, Container: p.label, Size: hdr.Size, ModTime: hdr.ModTime}
		switch hdr.Typeflag {
		case tar.TypeSymlink:
			e.Size = 0
			w.link(e, true, hdr.Linkname)
		case tar.TypeLink:
			e.Size = 0
			w.link(e, false, hdr.Linkname)
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			w.issue(path, facts.IssueUnreadable, "%s is a %s"+SkippedSuffix, path, tarTypeName(hdr.Typeflag))
		default:
			// Regular files, and by POSIX any type tar does not know. The
			// ratio check catches sparse entries that expand from nothing.
			start := src.n
			st := &stage{r: tr, src: src, in: func() int64 { return src.n - start }, format: "tar", what: path,
				maxRatio: w.opts.MaxRatio}
			w.open(p, e, st, nil, hdr.Size, false)
			w.drain(st, path, st.out)
			var se *streamError
			if errors.As(st.err, &se) && se.kind != facts.IssueBomb {
				// The archive broke inside this entry: it was reported there.
				return false
			}
		}
	}
	return false
}

// nextTar is tr.Next, with a panic in the reader turned into an error.
func nextTar(tr *tar.Reader) (hdr *tar.Header, err error) {
	defer func() {
		if r := recover(); r != nil {
			hdr, err = nil, fmt.Errorf("tar reader failed: %v", r)
		}
	}()
	return tr.Next()
}

func tarTypeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "fifo"
	}
	return fmt.Sprintf("type %q entry", t)
}

// tarFailed reports why a tar archive could not be read on, unless the
// stream below already failed and was reported.
func (w *walker) tarFailed(p parent, src *counter, err error, last string) {
	where := "before its first entry"
	if last != "" {
		where = "after entry " + last
	}
	var se *streamError
	if errors.As(src.err, &se) || errors.As(err, &se) {
		if !se.reported {
			se.reported = true
			w.issue(p.name, se.kind, "%s; it broke in the tar archive %s %s, the rest was not read", se.msg, p.name, where)
		}
		return
	}
	if src.err != nil {
		w.issue(p.name, facts.IssueUnreadable, "reading the tar archive %s failed %s, at byte %d (%v): the rest was not read",
			p.name, where, src.n, src.err)
		return
	}
	kind, what := facts.IssueCorrupt, "has a bad header"
	if errors.Is(err, io.ErrUnexpectedEOF) {
		kind, what = facts.IssueTruncated, "is truncated inside a header"
	}
	w.issue(p.name, kind, "tar archive %s %s %s, at byte %d of the tar stream (%v): the rest was not read",
		p.name, what, where, src.n, err)
}
