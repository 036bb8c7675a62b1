package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/reports"
)

// renderReport renders the report in a format. The GitHub brief quotes the
// cited lines with context, so it reads the bundle a second time for them.
func renderReport(e *env, format string, color bool, rep *reports.Report, c *bundleFlags) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch format {
	case "json":
		err = reports.JSON(&buf, rep)
	case "html":
		err = reports.HTML(&buf, rep)
	case "text":
		err = reports.Text(&buf, rep, reports.TextOptions{Color: color})
	case "github":
		ex, xerr := readExcerpts(c, reports.ExcerptWants(rep))
		if xerr != nil {
			// The brief quotes the cited text alone then; say why.
			fmt.Fprintf(e.stderr, "coroner: reading evidence context: %s\n", escape.Line(xerr.Error()))
		}
		err = reports.GitHub(&buf, rep, ex)
	default:
		err = reports.Markdown(&buf, rep)
	}
	if err != nil {
		return nil, fail(exitInternal, "render %s: %v", format, err)
	}
	return buf.Bytes(), nil
}

// useColor decides colour for the text format: "always" and "never" say
// so; "auto" colours a terminal on stdout unless NO_COLOR is set
// (https://no-color.org: present and not empty).
func useColor(e *env, mode, output string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if output != "" && output != "-" {
		return false
	}
	if v, ok := os.LookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	return e.stdoutTTY
}

// readExcerpts reads the wanted lines from the bundles, naming each file the
// way parser.Parse does (each bundle's entries under its base name when
// several are given). Stdin was read once already and is skipped.
func readExcerpts(c *bundleFlags, want map[string][]int) (reports.Excerpts, error) {
	if len(want) == 0 {
		return reports.Excerpts{}, nil
	}
	opts := bundle.Defaults()
	if n, err := parseSize(c.MaxBytes); err == nil {
		opts.MaxTotalBytes = n
	}
	walk := func(visit func(string, io.Reader) error) error {
		names := bundle.InputNames(c.Paths)
		for i, bp := range c.Paths {
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
	return reports.ReadExcerpts(issueBlocks(walk, want), want)
}
