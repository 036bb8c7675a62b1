package reports

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/coroner-dev/coroner/internal/escape"
)

// Markdown writes the postmortem as GitHub-flavored markdown that also reads
// well as plain text.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, bl := range postmortem(r).blocks {
		switch {
		case bl.details != nil:
			d := bl.details
			fc := fence(d.body)
			fmt.Fprintf(&b, "<details%s><summary>%s</summary>\n\n%stext\n%s%s\n\n</details>\n\n", openAttr(d.open), html.EscapeString(d.summary), fc, d.body, fc)
		case bl.chart != nil:
			b.WriteString(mermaidGantt(bl.chart))
		default:
			b.WriteString(bl.md)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// doc is the postmortem as a sequence of blocks, so that the markdown and
// HTML renderers share every word: markdown blocks go to both, evidence
// blocks become <details> (raw HTML in markdown, generated elements in
// HTML), and the chart becomes a Mermaid gantt in markdown and an SVG in
// HTML.
type doc struct {
	blocks []block
	cur    strings.Builder
}

type block struct {
	md      string
	details *details
	chart   *chart
}

// details is evidence shown folded: summary and body are plain text. The
// top cause's evidence is shown unfolded.
type details struct {
	summary string
	body    string
	open    bool
}

func openAttr(open bool) string {
	if open {
		return " open"
	}
	return ""
}

func (d *doc) p(format string, args ...any) { fmt.Fprintf(&d.cur, format, args...) }

func (d *doc) flush() {
	if d.cur.Len() > 0 {
		d.blocks = append(d.blocks, block{md: d.cur.String()})
		d.cur.Reset()
	}
}

func (d *doc) addDetails(summary, body string, open bool) {
	d.flush()
	d.blocks = append(d.blocks, block{details: &details{summary: summary, body: body, open: open}})
}

func (d *doc) addChart(c *chart) {
	d.flush()
	d.blocks = append(d.blocks, block{chart: c})
}

// postmortem lays out the report: the verdict and what to do first, then
// the reasoning (hypotheses, timeline, findings), then the material a
// reader checks it against (environment, sources, assumptions).
func postmortem(r *Report) *doc {
	d := &doc{}
	mdHeader(d, r)
	mdRuns(d, r)
	mdActions(d, r)
	mdHypotheses(d, r)
	mdTimeline(d, r)
	mdFindings(d, r)
	mdCollect(d, r)
	mdEnvironment(d, r)
	mdSources(d, r)
	mdAssumptions(d, r)
	d.p("---\n\n*Written by %s %s from %s. The same bundle gives the same report.*\n",
		escape.Markdown(r.Tool.Name), escape.Markdown(r.Tool.Version), plural(len(r.Bundle.Sources), "source", "sources"))
	d.flush()
	return d
}

func mdHeader(d *doc, r *Report) {
	d.p("# coroner postmortem: %s\n\n", escape.Markdown(r.Bundle.Path))
	d.p("**%s**\n\n", mdRich(headline(r)))
	d.p("| outcome | phase | silent for | engine | GPUs | sources |\n|---|---|---|---|---|---|\n")
	v := r.Verdict
	d.p("| %s | %s | %s | %s | %s | %d |\n\n", escape.Markdown(orDash(v.Outcome)), escape.Markdown(orDash(v.Phase)), silentFor(r),
		escape.Markdown(orDash(engineName(r))), escape.Markdown(orDash(gpuSummary(r))), len(r.Bundle.Sources))
}

func headline(r *Report) string {
	if s := strings.TrimSpace(escape.Text(r.Verdict.Summary)); s != "" {
		return s
	}
	return "No verdict: the bundle holds too little evidence."
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func silentFor(r *Report) string {
	if r.Verdict.StalledForS <= 0 {
		return "-"
	}
	return humanSeconds(float64(r.Verdict.StalledForS))
}

// engineName is "sglang 0.5.8", or "sglang" when the version is unknown.
func engineName(r *Report) string {
	e := r.Environment.Engine
	for _, it := range r.Environment.Software {
		if e != "" && it.Name == e && it.Value != "unknown" {
			return e + " " + it.Value
		}
	}
	return e
}

// gpuSummary is "8 × NVIDIA H200 (SM 9.0)" or a list of such.
func gpuSummary(r *Report) string {
	var parts []string
	for _, g := range r.Environment.GPUs {
		s := fmt.Sprintf("%d × %s", g.Count, orDash(g.Model))
		if g.ComputeCapability != "" {
			s += " (SM " + g.ComputeCapability + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// names reports whether f is the finding behind the cause: the same rule
// and, when the cause names one, the same category.
func (c Cause) names(f Finding) bool {
	return f.Rule == c.Rule && (c.Category == "" || f.Category == c.Category)
}

// action is one thing to do, from a ranked cause or a finding.
type action struct {
	For    string // the cause or finding title
	Rule   string
	Remedy string
	Cause  bool // from a ranked cause
}

// tag is what follows the i-th action's title.
func (a action) tag(i int) string {
	switch {
	case !a.Cause:
		return ""
	case i == 0:
		return " (most likely cause)"
	}
	return " (likely cause)"
}

// actions orders the remedies the way a reader should try them: the ranked
// causes' first (most likely first), then those of the other findings,
// most severe first; each remedy once.
func actions(r *Report) []action {
	var out []action
	seen := map[string]bool{}
	add := func(a action) {
		if strings.TrimSpace(escape.Text(a.Remedy)) == "" || seen[a.Remedy] {
			return
		}
		seen[a.Remedy] = true
		out = append(out, a)
	}
	for _, c := range r.Verdict.Causes {
		for _, f := range r.Findings {
			if c.names(f) {
				add(action{For: c.Title, Rule: c.Rule, Remedy: f.Remedy, Cause: true})
				break
			}
		}
	}
	for _, sev := range severities[:3] {
		for _, f := range r.Findings {
			if f.Severity == sev {
				add(action{For: f.Title, Rule: f.Rule, Remedy: f.Remedy})
			}
		}
	}
	return out
}

var severities = []string{"critical", "error", "warning", "info"}

func mdActions(d *doc, r *Report) {
	as := actions(r)
	if len(as) == 0 {
		return
	}
	d.p("## What to do\n\n")
	for i, a := range as {
		d.p("%d. **%s**%s: %s\n", i+1, escape.Markdown(a.For), a.tag(i), mdRich(a.Remedy))
	}
	d.p("\n")
}

func mdHypotheses(d *doc, r *Report) {
	causes, out := r.Verdict.Causes, r.RuledOut
	if len(causes) == 0 && len(out) == 0 {
		return
	}
	d.p("## Hypotheses\n\n")
	if len(causes) == 0 {
		d.p("No cause stands out: no rule that names a cause fired.\n\n")
	} else {
		d.p("Most likely first.\n\n")
	}
	for i, c := range causes {
		d.p("%d. **%s**: %s, confidence %.2f, rule %s", i+1, escape.Markdown(c.Title), escape.MarkdownCode(orDash(c.Category)), c.Confidence, escape.MarkdownCode(c.Rule))
		if c.Why != "" {
			d.p(": %s", mdRich(sentence(c.Why)))
		} else {
			d.p(".")
		}
		d.p("\n")
	}
	if len(causes) > 0 {
		d.p("\n")
	}
	if len(out) > 0 {
		d.p("Ruled out, with the evidence against them:\n\n")
		for _, ro := range out {
			cat := ""
			if ro.Category != "" {
				cat = escape.MarkdownCode(ro.Category) + ", "
			}
			d.p("- **%s** (%srule %s): %s", escape.Markdown(ro.Title), cat, escape.MarkdownCode(ro.Rule), mdRich(sentence(ro.Why)))
			if len(ro.Evidence) > 0 {
				var cites []string
				for _, e := range ro.Evidence {
					cites = append(cites, escape.Markdown(loc(e.File, e.Line)))
				}
				d.p(" Evidence: %s.", strings.Join(cites, ", "))
			}
			d.p("\n")
		}
		d.p("\n")
	}
}

// sentence ends s with a period. It leaves the first letter alone: rule
// prose often starts with a lower-case name (flashinfer, ps).
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

func mdTimeline(d *doc, r *Report) {
	if len(r.Timeline) == 0 {
		return
	}
	groups := timelineGroups(r.Timeline)
	cf := newClockFormat(timelineStamps(r)...)
	d.p("## Timeline\n\n")
	when := "Times are UTC"
	if cf.sameDay {
		when += ", on " + cf.day
	}
	d.p("%s. Each process's phases as its log shows them; an open phase (the run never left it) ends at the latest evidence", when)
	if r.EvidenceEnd != nil {
		d.p(" (%s, %s)", cf.show(r.EvidenceEnd.At), escape.Markdown(loc(r.EvidenceEnd.File, r.EvidenceEnd.Line)))
	}
	d.p(". Processes whose phases match within %d s share one row group.\n\n", int(sameTolerance.Seconds()))
	d.addChart(&chart{Groups: groups, Ended: openEnding(r), Snapshots: r.Snapshots, End: r.EvidenceEnd})
	shown := groups[:min(len(groups), maxGroups)]
	for _, g := range shown {
		d.p("### %s\n\n| phase | start | end | duration | evidence |\n|---|---|---|---|---|\n", escape.Markdown(g.Title()))
		for _, s := range g.Spans {
			end := cf.show(s.End)
			if s.Open {
				end += " (open)"
				if w := openEnding(r); w != "" {
					end = cf.show(s.End) + " (open: " + w + ")"
				}
			}
			dur := "-"
			if s.DurationS > 0 || s.End != "" {
				dur = humanSeconds(s.DurationS)
			}
			if s.Cut {
				// The log skips here: the phase lasted at least this long.
				end += " (gap in the log)"
				dur = "≥ " + dur
			}
			ev := loc(s.Evidence.File, s.Evidence.Line)
			if g.Collapsed() {
				ev += " (" + g.Members[0] + ")"
			}
			d.p("| %s | %s | %s | %s | %s |\n", escape.Markdown(s.Phase), escape.Markdown(cf.show(s.Start)), escape.Markdown(end), dur, escape.Markdown(ev))
		}
		d.p("\n")
	}
	if n := len(groups) - len(shown); n > 0 {
		d.p("%s more not shown here; `coroner timeline` lists every process.\n\n", plural(n, "row group", "row groups"))
	}
}

// openEnding says what an open phase means: "stalled" in a hung run,
// "crashed" in a crashed one (the phase the run died in), "" when the run
// may still be moving through it.
func openEnding(r *Report) string {
	switch r.Verdict.Outcome {
	case "hung":
		return "stalled"
	case "crashed":
		return "crashed"
	}
	return ""
}

func mdFindings(d *doc, r *Report) {
	d.p("## Findings\n\n")
	if len(r.Findings) == 0 {
		d.p("No rule fired.\n\n")
		return
	}
	top := -1
	if len(r.Verdict.Causes) > 0 {
		c := r.Verdict.Causes[0]
		for i, f := range r.Findings {
			if c.names(f) {
				top = i
				break
			}
		}
	}
	for _, sev := range severities {
		var list []int
		for i, f := range r.Findings {
			if f.Severity == sev {
				list = append(list, i)
			}
		}
		if len(list) == 0 {
			continue
		}
		d.p("### %s (%d)\n\n", titleCase(sev), len(list))
		for _, i := range list {
			f := r.Findings[i]
			d.p("#### %s\n\n", escape.Markdown(f.Title))
			meta := []string{"rule " + escape.MarkdownCode(f.Rule)}
			if f.Category != "" {
				meta = append(meta, "category "+escape.MarkdownCode(f.Category))
			}
			if f.Confidence > 0 {
				meta = append(meta, fmt.Sprintf("confidence %.2f", f.Confidence))
			}
			d.p("%s\n\n", strings.Join(meta, " · "))
			if f.Message != "" {
				d.p("%s\n\n", blockSafe(mdRich(f.Message)))
			}
			if f.Remedy != "" {
				d.p("**Remedy:** %s\n\n", mdRich(f.Remedy))
			}
			if len(f.Evidence) > 0 {
				d.addDetails(fmt.Sprintf("Evidence (%d)", len(f.Evidence)), evidenceBody(f.Evidence), i == top)
			}
			if len(f.References) > 0 {
				d.p("References:\n\n")
				for _, ref := range f.References {
					d.p("- %s\n", escape.Markdown(ref))
				}
				d.p("\n")
			}
		}
	}
}

// evidenceBody is the cited lines, one per line: "file:line: text".
func evidenceBody(ev []Evidence) string {
	var b strings.Builder
	for _, e := range ev {
		text := strings.ReplaceAll(escape.Text(e.Text), "\n", "\n    ")
		fmt.Fprintf(&b, "%s: %s\n", loc(e.File, e.Line), text)
	}
	return b.String()
}

func mdCollect(d *doc, r *Report) {
	if len(r.Inconclusive) == 0 {
		return
	}
	d.p("## What to collect next\n\n")
	d.p("These rules could not decide for lack of evidence; collecting it makes the next analysis sharper.\n\n")
	for _, in := range r.Inconclusive {
		d.p("- rule %s misses %s. Collect: %s\n", escape.MarkdownCode(in.Rule), mdRich(strings.Join(in.Missing, "; ")), mdRich(in.Collect))
	}
	d.p("\n")
}

func mdEnvironment(d *doc, r *Report) {
	e := r.Environment
	if e.empty() {
		return
	}
	d.p("## Environment\n\n")
	if len(e.GPUs) > 0 {
		d.p("| GPUs | model | compute capability | memory | source |\n|---|---|---|---|---|\n")
		for _, g := range e.GPUs {
			mem := "-"
			if g.MemoryMiB > 0 {
				mem = fmt.Sprintf("%.1f GiB", g.MemoryMiB/1024)
			}
			cc := orDash(g.ComputeCapability)
			if g.ComputeCapability != "" {
				cc = "SM " + g.ComputeCapability
				if g.Arch != "" {
					cc += " (" + g.Arch + ")"
				}
			}
			d.p("| %s | %s | %s | %s | %s |\n", gpuCount(g), escape.Markdown(orDash(g.Model)), escape.Markdown(cc), mem, escape.Markdown(loc(g.Source.File, g.Source.Line)))
		}
		d.p("\n")
	}
	items := func(title string, list []Item) {
		if len(list) == 0 {
			return
		}
		d.p("| %s | value | source |\n|---|---|---|\n", title)
		for _, it := range list {
			v := escape.MarkdownCode(truncate(it.Value, 160))
			if it.Note != "" {
				v += " (" + escape.Markdown(it.Note) + ")"
			}
			d.p("| %s | %s | %s |\n", escape.Markdown(it.Name), v, escape.Markdown(loc(it.Source.File, it.Source.Line)))
		}
		d.p("\n")
	}
	items("software", e.Software)
	items("server argument", e.ServerArgs)
	items("environment variable", e.EnvVars)
	items("system", e.System)
}

func gpuCount(g GPUGroup) string {
	if len(g.Indexes) == 0 || len(g.Indexes) != g.Count {
		return fmt.Sprint(g.Count)
	}
	names := make([]string, len(g.Indexes))
	for i, n := range g.Indexes {
		names[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%s)", g.Count, rangeLabel(names))
}

func mdSources(d *doc, r *Report) {
	d.p("## Sources\n\n")
	if len(r.Bundle.Sources) == 0 {
		d.p("The bundle holds no files.\n\n")
		return
	}
	d.p("| path | kind | size | lines | captured | parse issues |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Bundle.Sources {
		d.p("| %s | %s | %s | %d | %s | %s |\n", escape.Markdown(s.Path), escape.Markdown(s.Kind), HumanBytes(s.Bytes), s.Lines,
			escape.Markdown(orDash(showStamp(s.CapturedAt))), escape.Markdown(issueSummary(s.Issues, 3)))
	}
	d.p("\n")
}

// issueSummary lists the first n issues of a source and counts the rest.
func issueSummary(issues []Issue, n int) string {
	if len(issues) == 0 {
		return "-"
	}
	var parts []string
	for i, is := range issues {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(issues)-n))
			break
		}
		at := ""
		if is.Line > 0 {
			at = fmt.Sprintf(" (line %d)", is.Line)
		}
		parts = append(parts, fmt.Sprintf("%s%s: %s", is.Kind, at, truncate(is.Detail, 160)))
	}
	return strings.Join(parts, "; ")
}

func mdAssumptions(d *doc, r *Report) {
	if len(r.Assumptions) == 0 {
		return
	}
	d.p("## Assumptions\n\n")
	for _, a := range r.Assumptions {
		d.p("- %s\n", escape.Markdown(a))
	}
	d.p("\n")
}
