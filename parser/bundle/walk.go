package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/coroner-dev/coroner/parser/facts"
)

// ErrStream marks read errors of a compressed or archived stream (truncated,
// corrupt, bomb, over a limit). The walk has already reported them as parse
// issues; a reader of entry content need not report them again.
var ErrStream = errors.New("bundle stream")

// Walk reads the bundle at path ("-" for stdin) and calls fn for each entry.
// It returns an error only when the bundle cannot be opened at all, or when
// fn returns one.
func Walk(path string, opts Options, fn WalkFunc) error {
	opts = opts.withDefaults()
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("open bundle: %w", err)
	}
	if st.IsDir() {
		return walkDir(path, opts, fn)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open bundle: %w", err)
	}
	defer f.Close()
	return fn(&Entry{Path: filepath.Base(path), Container: "file", Size: st.Size(), ModTime: st.ModTime()}, f)
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
	if o.MaxInMemory <= 0 {
		o.MaxInMemory = d.MaxInMemory
	}
	if o.Issue == nil {
		o.Issue = func(facts.Issue) {}
	}
	return o
}

func walkDir(root string, opts Options, fn WalkFunc) error {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			return nil
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		e := &Entry{Path: rel, Container: "dir", Size: st.Size(), ModTime: st.ModTime()}
		if st.Mode()&os.ModeSymlink != 0 {
			e.Link, _ = os.Readlink(p)
			if err := fn(e, nil); err != nil {
				return err
			}
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		err = fn(e, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
