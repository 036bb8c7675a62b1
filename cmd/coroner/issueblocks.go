package main

import (
	"io"
	"strings"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/labels"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/issue"
	"github.com/coroner-dev/coroner/reports"
)

// issueBlocks wraps a walk of the bundles so that an issue document the
// analysis cut into blocks (issue.md#1, issue.md#2, ...) is visited as
// those blocks, by their names, for the brief to quote their lines. Other
// files pass as they are.
func issueBlocks(walk func(func(string, io.Reader) error) error, want map[string][]int) func(func(string, io.Reader) error) error {
	return func(visit func(string, io.Reader) error) error {
		return walk(func(name string, r io.Reader) error {
			for w := range want {
				if strings.HasPrefix(w, name+"#") {
					return issue.Visit(name, r, visit)
				}
			}
			return visit(name, r)
		})
	}
}

// isIssue reports an analysis of an issue document: it is answered even
// when it holds no evidence, since its brief then asks for the evidence.
func isIssue(f *facts.Facts) bool {
	for _, s := range f.Sources {
		switch s.Kind {
		case facts.KindMarkdown, facts.KindGitHubIssue, facts.KindGitHubEvent:
			return true
		}
	}
	return false
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
