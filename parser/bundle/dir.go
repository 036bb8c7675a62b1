package bundle

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/coroner-dev/coroner/internal/special"
	"github.com/coroner-dev/coroner/parser/facts"
)

// walkDir delivers the files under root, depth first, each directory in
// name order, so that a walk is the same on every machine. Symlinks are
// recorded, never followed; what cannot be read is reported and skipped.
func (w *walker) walkDir(root string) {
	// The root itself may be a link to the bundle; nothing under it is
	// followed.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	p := parent{label: "dir", name: w.base}
	_ = filepath.WalkDir(root, func(fp string, d fs.DirEntry, err error) error {
		if w.stop {
			return filepath.SkipAll
		}
		rel, rerr := filepath.Rel(root, fp)
		if rerr != nil || rel == "." {
			rel = ""
		}
		path := filepath.ToSlash(rel)
		if err != nil {
			name := path
			if name == "" {
				name = w.base
			}
			w.issue(name, facts.IssueUnreadable, "cannot read %s (%v): skipped", name, err)
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !w.count(path) {
			return filepath.SkipAll
		}
		e := &Entry{Path: path, Container: "dir", Size: -1}
		if info, err := d.Info(); err == nil {
			e.Size, e.ModTime = info.Size(), info.ModTime()
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(fp)
			if err != nil {
				target = "(unreadable)"
			}
			e.Size = 0
			w.link(e, true, target)
		case !t.IsRegular():
			w.issue(path, facts.IssueUnreadable, "%s is %s"+SkippedSuffix, path, special.Describe(t))
		default:
			// What the file is, is judged again on the opened file, which
			// open() does not wait for: it may have been swapped for a
			// FIFO since the folder was listed.
			f, st, err := special.Open(fp, false)
			var nr *special.NotRegularError
			switch {
			case errors.As(err, &nr):
				w.issue(path, facts.IssueUnreadable, "%s is %s"+SkippedSuffix, path, special.Describe(nr.Mode))
				return nil
			case err != nil:
				w.unreadable(e, facts.IssueUnreadable, "cannot open %s (%v)", path, err)
				return nil
			}
			if special.Pseudo(f) {
				e.Size = -1
				r, _ := w.stored(w.bounded(path, f), nil)
				w.open(p, e, r, nil, -1, false)
			} else {
				e.Size, e.ModTime = st.Size(), st.ModTime()
				r, ra := w.stored(f, f)
				w.open(p, e, r, ra, e.Size, false)
			}
			_ = f.Close()
		}
		return nil
	})
}
