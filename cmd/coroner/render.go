package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/reports"
)

// formatVars hands the format registry to kong: analyze's --format takes
// its values, its default and its help from reports.Formats.
func formatVars() kong.Vars {
	return kong.Vars{
		"formats":        strings.Join(reports.FormatValues(), ","),
		"default_format": reports.Formats[0].Name,
		"format_help":    reports.FormatHelp(),
	}
}

// renderReport renders the report in a format of the registry. A format
// that quotes its sources (the GitHub brief) gets the cited lines with
// their context, read again from the bundles.
func renderReport(e *env, format string, color bool, rep *reports.Report, paths []string, maxBytes string) ([]byte, error) {
	f, err := reports.LookupFormat(format)
	if err != nil {
		return nil, fail(exitUsage, "--format: %v", err)
	}
	o := reports.RenderOptions{Color: color && f.Color}
	if f.Sources {
		ex, xerr := readExcerpts(paths, maxBytes, reports.ExcerptWants(rep))
		if xerr != nil {
			// The brief quotes the cited text alone then; say why.
			fmt.Fprintf(e.stderr, "coroner: reading evidence context: %s\n", escape.Line(xerr.Error()))
		}
		o.Excerpts = ex
	}
	var buf bytes.Buffer
	if err := f.Render(&buf, rep, o); err != nil {
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

// readExcerpts reads the wanted lines from the bundles, each file under
// the name parser.Parse gave it (parser.Walk); stdin was read once already
// and is skipped.
func readExcerpts(paths []string, maxBytes string, want map[string][]int) (reports.Excerpts, error) {
	if len(want) == 0 {
		return reports.Excerpts{}, nil
	}
	opts := bundle.Defaults()
	if n, err := parseSize(maxBytes); err == nil {
		opts.MaxTotalBytes = n
	}
	return reports.ReadExcerpts(parser.WalkFunc(paths, opts), want)
}
