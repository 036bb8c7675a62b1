package reports

import (
	"fmt"
	"io"
	"strings"
)

// A Format is one way to write a report. Formats is the one table of them:
// the CLI's --format flag takes its values and its help from it, the CLI
// renders through it, and the golden test renders every entry, so that a
// new format is its renderer and one row here.
type Format struct {
	// Name is the --format value; Aliases are other values that mean the
	// same format (markdown for md).
	Name    string
	Aliases []string
	// Doc says in a few words what the format is for, in --format's help.
	Doc string
	// Ext is the suffix of a file that holds a report in this format, the
	// golden files' too (seed.md, seed.github.md).
	Ext string
	// Sources marks a format that quotes the bundle's own lines around
	// the cited ones: the caller reads them again from the sources
	// (ExcerptWants, ReadExcerpts) and passes them in RenderOptions.
	Sources bool
	// Color marks a format that can colour its output (--color).
	Color bool
	// Render writes the report.
	Render func(w io.Writer, r *Report, o RenderOptions) error
}

// RenderOptions are what a format's renderer may need beyond the report.
type RenderOptions struct {
	// Color turns on colour in a format that has it (Format.Color).
	Color bool
	// Width is the width a format for a terminal wraps at (0: 100).
	Width int
	// Excerpts are the cited lines with their context, for a format that
	// quotes its sources (Format.Sources).
	Excerpts Excerpts
}

// Formats lists the report formats, the default first, in the order
// --format's help names them.
var Formats = []Format{
	{Name: "md", Aliases: []string{"markdown"}, Doc: "markdown postmortem", Ext: "md",
		Render: func(w io.Writer, r *Report, _ RenderOptions) error { return Markdown(w, r) }},
	{Name: "html", Doc: "one self-contained page", Ext: "html",
		Render: func(w io.Writer, r *Report, _ RenderOptions) error { return HTML(w, r) }},
	{Name: "json", Doc: "the JSON contract of the README, schema_version 1", Ext: "json",
		Render: func(w io.Writer, r *Report, _ RenderOptions) error { return JSON(w, r) }},
	{Name: "text", Doc: "for a terminal", Ext: "txt", Color: true,
		Render: func(w io.Writer, r *Report, o RenderOptions) error {
			return Text(w, r, TextOptions{Color: o.Color, Width: o.Width})
		}},
	{Name: "github", Doc: "an issue-sized brief", Ext: "github.md", Sources: true,
		Render: func(w io.Writer, r *Report, o RenderOptions) error { return GitHub(w, r, o.Excerpts) }},
}

// LookupFormat finds a format by its name or an alias.
func LookupFormat(name string) (*Format, error) {
	for i := range Formats {
		f := &Formats[i]
		if f.Name == name {
			return f, nil
		}
		for _, a := range f.Aliases {
			if a == name {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("no report format %q; the formats are %s", name, strings.Join(FormatValues(), ", "))
}

// FormatValues are the values --format accepts: each format's name, then
// its aliases.
func FormatValues() []string {
	var out []string
	for _, f := range Formats {
		out = append(out, f.Name)
		out = append(out, f.Aliases...)
	}
	return out
}

// FormatHelp describes the formats for --format's help: "md (markdown
// postmortem), html (one self-contained page), ...".
func FormatHelp() string {
	parts := make([]string, len(Formats))
	for i, f := range Formats {
		parts[i] = fmt.Sprintf("%s (%s)", f.Name, f.Doc)
	}
	return strings.Join(parts, ", ")
}
