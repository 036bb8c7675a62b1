package parser

import (
	"fmt"
	"io"

	"github.com/coroner-dev/coroner/parser/bundle"
)

// WalkFunc returns a walk of the bundles that visits each file under the
// name Parse gives it (InputNames, then bundle.Entry.Under), for reading
// lines of the sources again after the analysis (the brief's excerpts).
// Stdin ("-") is skipped: it was read once, by Parse.
func WalkFunc(paths []string, opts bundle.Options) func(visit func(name string, r io.Reader) error) error {
	return func(visit func(string, io.Reader) error) error {
		names := InputNames(paths)
		for i, bp := range paths {
			if bp == "-" {
				continue
			}
			err := bundle.Walk(bp, opts, func(en *bundle.Entry, r io.Reader) error {
				return visit(en.Under(names[i]), r)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", bp, err)
			}
		}
		return nil
	}
}
