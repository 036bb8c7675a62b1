package main

import (
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
)

// noEvidence is the error for input without evidence (parser.HasEvidence):
// exit 3, with what was found and what coroner reads instead.
func noEvidence(paths []string, f *facts.Facts) error {
	return fail(exitInput, "%s", parser.NoEvidence(bundleName(paths), f))
}
