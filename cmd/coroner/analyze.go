package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coroner-dev/coroner/internal/atomicfile"
	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/labels"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/runs"
	"github.com/coroner-dev/coroner/reports"
	"github.com/coroner-dev/coroner/rules"
)

type analyzeCmd struct {
	bundleFlags
	// The values and their help come from the format registry
	// (reports.Formats) through kong's variables (main.go).
	Format string `short:"f" enum:"${formats}" default:"${default_format}" help:"Report format: ${format_help}."`
	Brief  bool   `help:"Write the issue-sized brief: the same as --format github."`
	Color  string `enum:"auto,always,never" default:"auto" help:"Colour of --format text: auto (on a terminal, unless NO_COLOR is set), always, never."`
	Output string `short:"o" placeholder:"FILE" help:"Write the report to FILE instead of stdout."`
	FailOn string `name:"fail-on" enum:"critical,error,warning,info,never" default:"error" help:"Exit 1 when a finding is at least this severe (critical, error, warning, info, never)."`
	// User rules and suppressions (README: User rules).
	Rules    []string `name:"rules" placeholder:"FILE" sep:"none" help:"Also run the signatures and rules of a user rule pack (YAML; coroner rules explain describes it). Repeatable."`
	Suppress []string `name:"suppress" placeholder:"FILE" sep:"none" help:"Drop the findings a suppression file lists (YAML: rule, file, match, reason); entries that match nothing are reported. Repeatable."`
	Labels   string   `name:"labels" placeholder:"TABLE" help:"Map the verdict to a repository's labels through a label table: sglang, vllm (built in) or a YAML file (README: The GitHub Action). The brief of an issue suggests them; the JSON report lists them."`
	RunN     int      `name:"run" placeholder:"N" help:"In a bundle of several runs (launches of the server), report on run N (1 is the earliest); the latest by default."`
}

func (c *analyzeCmd) Run(e *env) error {
	opts, sup, err := engineOptions(c.Rules, c.Suppress)
	if err != nil {
		return err
	}
	if err := checkOutput(e, c.Output, c.Paths); err != nil {
		return err
	}
	c.watch = rules.LineWatch(opts.Catalog)
	f, err := c.parse(e)
	if err != nil {
		return err
	}
	if !parser.HasEvidence(f) && !parser.IsIssue(f) {
		return noEvidence(c.Paths, f)
	}
	res, rep, err := analyzeRuns(f, opts, c.RunN, reports.Meta{Path: bundleName(c.Paths), Version: version})
	if err != nil {
		return err
	}
	if sup != nil && !c.Quiet && sup.Suppressed() > 0 {
		fmt.Fprintf(e.stderr, "coroner: %d finding(s) suppressed by %s\n", sup.Suppressed(), strings.Join(c.Suppress, ", "))
	}
	if err := suggestLabels(rep, c.Labels); err != nil {
		return err
	}
	format := c.Format
	if c.Brief {
		format = "github"
	}
	out, err := renderReport(e, format, useColor(e, c.Color, c.Output), textWidth(e, c.Output), rep, c.Paths, c.MaxBytes)
	if err != nil {
		return err
	}
	if err := writeOutput(e, c.Output, out); err != nil {
		return err
	}
	if failing(res.Findings, c.FailOn) {
		return &exitError{code: exitFindings, err: fmt.Errorf("")}
	}
	return nil
}

// suggestLabels maps the verdict to a repository's labels through the
// table --labels names, if any.
func suggestLabels(rep *reports.Report, table string) error {
	if table == "" {
		return nil
	}
	t, err := labels.Load(table)
	if err != nil {
		return fail(exitUsage, "--labels %s", escape.Line(err.Error()))
	}
	rep.Labels = t.For(rep.LabelInput())
	return nil
}

// failing reports whether a finding reaches the --fail-on severity.
func failing(fs []rules.Finding, failOn string) bool {
	if failOn == "never" {
		return false
	}
	min := rules.Severity(failOn).Rank()
	for _, f := range fs {
		if f.Severity.Rank() >= min {
			return true
		}
	}
	return false
}

// checkOutput refuses, before the work, an -o that would not be written:
// one that is not a regular file (atomicfile says why), or one that is an
// input, which the report would replace. An input is a bundle named on the
// command line, a file inside a bundle folder, or stdin redirected from a
// file; they are compared as files (os.SameFile), so a hard link or another
// spelling of the path is caught too. A missing -o is no input.
func checkOutput(e *env, out string, inputs []string) error {
	if out == "" || out == "-" {
		return nil
	}
	if err := atomicfile.Check(out); err != nil {
		return fail(exitInternal, "-o %v; name a file, or -o - for stdout", err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		if in == "-" {
			if f, ok := e.stdin.(*os.File); ok {
				if ist, err := f.Stat(); err == nil && os.SameFile(st, ist) {
					return fail(exitInternal, "-o %s is the bundle read from stdin: coroner does not write over its evidence; name another file", out)
				}
			}
			continue
		}
		ist, err := os.Stat(in)
		if err != nil {
			continue // the parse says why
		}
		if os.SameFile(st, ist) {
			return fail(exitInternal, "-o %s is the bundle %s: coroner does not write over its evidence; name another file", out, in)
		}
		if !ist.IsDir() {
			continue
		}
		// The bundle walk follows no links, so neither does this one: a
		// link inside the folder to the output is not read as evidence.
		var inside string
		_ = filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if fst, err := d.Info(); err == nil && os.SameFile(st, fst) {
				inside = p
				return filepath.SkipAll
			}
			return nil
		})
		if inside != "" {
			return fail(exitInternal, "-o %s is %s, inside the bundle %s: coroner does not write over its evidence; name another file", out, inside, in)
		}
	}
	return nil
}

// writeOutput writes to -o FILE or stdout. It writes nothing else anywhere:
// the file is written whole through a temporary file beside it, or left as
// it was.
func writeOutput(e *env, path string, data []byte) error {
	if path == "" || path == "-" {
		if _, err := e.stdout.Write(data); err != nil {
			return fail(exitInternal, "write stdout: %v", err)
		}
		return nil
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		if errors.Is(err, atomicfile.ErrNotRegular) {
			return fail(exitInternal, "-o %v; name a file, or -o - for stdout", err)
		}
		return fail(exitInternal, "%v", err)
	}
	return nil
}

func bundleName(paths []string) string { return strings.Join(paths, " ") }

type sourcesCmd struct {
	bundleFlags
	Format string `short:"f" enum:"table,json" default:"table" help:"Output format: table or json."`
	Output string `short:"o" placeholder:"FILE" help:"Write the list to FILE instead of stdout."`
}

func (c *sourcesCmd) Run(e *env) error {
	if err := checkOutput(e, c.Output, c.Paths); err != nil {
		return err
	}
	f, err := c.parse(e)
	if err != nil {
		return err
	}
	rep := reports.Build(f, rules.Run(f, rules.Options{Rules: []*rules.Rule{}}), reports.Meta{Path: bundleName(c.Paths), Version: version})
	var out bytes.Buffer
	if c.Format == "json" {
		err = reports.JSON(&out, &reports.Report{SchemaVersion: rep.SchemaVersion, Tool: rep.Tool, Bundle: rep.Bundle})
	} else {
		err = sourcesTable(&out, f)
	}
	if err != nil {
		return fail(exitInternal, "render the sources: %v", err)
	}
	return writeOutput(e, c.Output, out.Bytes())
}

func sourcesTable(w io.Writer, f *facts.Facts) error {
	tw := newTable(w, "PATH", "KIND", "BYTES", "LINES", "CAPTURED", "ISSUES")
	for _, s := range f.Sources {
		captured := "-"
		if !s.CapturedAt.IsZero() {
			captured = facts.FormatTime(s.CapturedAt.UTC(), "2006-01-02T15:04:05Z", f.YearUnknown())
		}
		issues := "-"
		if len(s.Issues) > 0 {
			issues = fmt.Sprintf("%d: %s", len(s.Issues), s.Issues[0].Kind)
			if s.Issues[0].Src.Line > 0 {
				issues += fmt.Sprintf(" (line %d)", s.Issues[0].Src.Line)
			}
			issues += " " + s.Issues[0].Detail
		}
		tw.row(s.Path, string(s.Kind), fmt.Sprint(s.Bytes), fmt.Sprint(s.Lines), captured, issues)
	}
	return tw.flush()
}

type timelineCmd struct {
	bundleFlags
	Format string `short:"f" enum:"table,json" default:"table" help:"Output format: table or json."`
	Output string `short:"o" placeholder:"FILE" help:"Write the timeline to FILE instead of stdout."`
	RunN   int    `name:"run" placeholder:"N" help:"In a bundle of several runs, the timeline of run N (1 is the earliest); the latest by default."`
}

func (c *timelineCmd) Run(e *env) error {
	if err := checkOutput(e, c.Output, c.Paths); err != nil {
		return err
	}
	f, err := c.parse(e)
	if err != nil {
		return err
	}
	if !parser.HasEvidence(f) {
		return noEvidence(c.Paths, f)
	}
	_, rep, err := analyzeRuns(f, rules.Options{Rules: []*rules.Rule{}}, c.RunN, reports.Meta{Path: bundleName(c.Paths), Version: version})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if c.Format == "json" {
		err = reports.JSON(&out, rep.Timeline)
	} else {
		err = reports.TimelineTable(&out, rep)
	}
	if err != nil {
		return fail(exitInternal, "render the timeline: %v", err)
	}
	return writeOutput(e, c.Output, out.Bytes())
}

// analyzeRuns analyzes a bundle: alone when it holds one run, else each run
// on its own evidence, the report being about run `want` (1-based; 0 the
// latest).
func analyzeRuns(f *facts.Facts, opts rules.Options, want int, m reports.Meta) (*rules.Result, *reports.Report, error) {
	rs := runs.Split(f)
	if want < 0 || want > len(rs) {
		return nil, nil, fail(exitUsage, "--run %d: the bundle holds %d run(s)", want, len(rs))
	}
	if len(rs) == 1 {
		res := rules.Run(f, opts)
		return res, reports.Build(f, res, m), nil
	}
	sel := len(rs) - 1
	if want > 0 {
		sel = want - 1
	}
	list := make([]reports.AnalyzedRun, len(rs))
	for i, r := range rs {
		list[i] = reports.AnalyzedRun{Run: r, Result: rules.Run(r.Facts, opts)}
	}
	return list[sel].Result, reports.BuildRuns(f, list, sel, m), nil
}
