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
func renderReport(e *env, format string, color bool, width int, rep *reports.Report, paths []string, maxBytes string) ([]byte, error) {
	f, err := reports.LookupFormat(format)
	if err != nil {
		return nil, fail(exitUsage, "--format: %v", err)
	}
	o := reports.RenderOptions{Color: color && f.Color, Width: width}
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

// textWidth is the width --format text wraps at: the terminal's when the
// output goes to one (40 to 200 columns), else 100, so that a file or a
// pipe gets the same bytes wherever it was written.
func textWidth(e *env, output string) int {
	if (output == "" || output == "-") && e.stdoutTTY && e.stdoutWidth > 0 {
		return min(max(e.stdoutWidth, 40), 200)
	}
	return 100
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
