package parser

import (
	"io/fs"

	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/facts"
)

// ParseFS reads a bundle held in an fs.FS (a txtar fixture, an embedded
// bundle) the way Parse reads a directory. It is for fixtures: no archive
// handling, no limits beyond the line length.
func ParseFS(fsys fs.FS, opts Options) (*facts.Facts, error) {
	p := newRun(opts)
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := fsys.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		return p.entry(&bundle.Entry{Path: name, Container: "fs", Size: -1}, f)
	})
	p.finish()
	if err != nil {
		return nil, err
	}
	normalizeTimes(p.out, nil, opts)
	return p.out, nil
}
