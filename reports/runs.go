package reports

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/internal/escape"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/runs"
	"github.com/coroner-dev/coroner/rules"
)

// Run is one launch of the server in a bundle of several (runs.Split):
// its span, hosts and pieces of logs, and the verdict it gets alone.
type Run struct {
	ID       int            `json:"id"`
	Start    string         `json:"start,omitempty"`
	End      string         `json:"end,omitempty"`
	Hosts    []string       `json:"hosts,omitempty"`
	Sources  []string       `json:"sources"`
	Why      string         `json:"why"`
	Verdict  Verdict        `json:"verdict"`
	Timeline []TimelineSpan `json:"timeline"`
	// Selected marks the run the rest of the report is about.
	Selected bool `json:"selected,omitempty"`
}

// AnalyzedRun is a run with its analysis.
type AnalyzedRun struct {
	Run    *runs.Run
	Result *rules.Result
}

// BuildRuns writes the report of the selected run of a bundle of several:
// the report of that run alone, the bundle's every source, runs[] with each
// run's verdict and timeline, and an assumption that says which run the
// report is about.
func BuildRuns(all *facts.Facts, rs []AnalyzedRun, selected int, m Meta) *Report {
	sel := rs[selected]
	r := Build(sel.Run.Facts, sel.Result, m)
	r.Bundle.Sources = Build(&facts.Facts{Sources: all.Sources, Clocks: all.Clocks}, &rules.Result{}, m).Bundle.Sources
	for i, x := range rs {
		one := Build(x.Run.Facts, x.Result, m)
		run := Run{ID: x.Run.ID, Hosts: x.Run.Hosts, Why: x.Run.Why, Verdict: one.Verdict, Timeline: one.Timeline,
			Sources: []string{}, Selected: i == selected}
		if !x.Run.Start.IsZero() {
			run.Start = stampOf(x.Run.Start, r.YearUnknown)
		}
		if !x.Run.End.IsZero() {
			run.End = stampOf(x.Run.End, r.YearUnknown)
		}
		for _, p := range x.Run.Parts {
			run.Sources = append(run.Sources, p.String())
		}
		r.Runs = append(r.Runs, run)
	}
	which := "the latest"
	if selected != len(rs)-1 {
		which = "the one --run asked for"
	}
	r.Assumptions = append(r.Assumptions, fmt.Sprintf("the bundle holds %d runs (launches of the server); this report is about run %d, %s (its parts: %s); `--run N` selects another, and runs[] lists each with its own verdict",
		len(rs), sel.Run.ID, which, joinParts(sel.Run.Parts)))
	return r
}

func joinParts(ps []runs.Part) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}

// endingOf is what an open phase of a run means, by its outcome.
func endingOf(v Verdict) string { return openEnding(&Report{Verdict: v}) }

// mdRuns lists the runs of a bundle of several, each with its verdict and
// its own timeline.
func mdRuns(d *doc, r *Report) {
	if len(r.Runs) < 2 {
		return
	}
	sel := 0
	for i, x := range r.Runs {
		if x.Selected {
			sel = i
		}
	}
	d.p("## Runs\n\n")
	d.p("The bundle holds %d launches of the server. This report is about run %d; each run below is analyzed on its own evidence (`coroner analyze --run N` reports on another).\n\n",
		len(r.Runs), r.Runs[sel].ID)
	d.p("| run | start | end | hosts | logs | verdict |\n|---|---|---|---|---|---|\n")
	for _, x := range r.Runs {
		id := fmt.Sprint(x.ID)
		if x.Selected {
			id = "**" + id + "** (this report)"
		}
		d.p("| %s | %s | %s | %s | %s | %s |\n", id, escape.Markdown(orDash(showStamp(x.Start))), escape.Markdown(orDash(showStamp(x.End))),
			escape.Markdown(orDash(strings.Join(x.Hosts, ", "))), escape.Markdown(strings.Join(x.Sources, ", ")),
			mdRich(orDash(strings.TrimSpace(escape.Text(x.Verdict.Summary)))))
	}
	d.p("\n")
	for _, x := range r.Runs {
		if x.Selected || len(x.Timeline) == 0 {
			continue
		}
		d.p("### Run %d\n\n%s\n\n", x.ID, escape.Markdown(sentence(x.Why)))
		d.addChart(&chart{Groups: timelineGroups(x.Timeline), Ended: endingOf(x.Verdict)})
	}
}

// runs lists the runs of a bundle of several in the terminal report.
func (t *textWriter) runs(r *Report) {
	if len(r.Runs) < 2 {
		return
	}
	t.section("Runs")
	for _, x := range r.Runs {
		mark := "  "
		if x.Selected {
			mark = "> "
		}
		t.wrapped(fmt.Sprintf("%srun %d  ", mark, x.ID), fmt.Sprintf("%s - %s, %s", orDash(showStamp(x.Start)), orDash(showStamp(x.End)), strings.Join(x.Sources, ", ")), "")
		t.wrapped("         ", orDash(x.Verdict.Summary), "")
	}
}
