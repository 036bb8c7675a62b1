package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/termtext"
)

// TextOptions shape the terminal rendering.
type TextOptions struct {
	// Color adds ANSI colour and bold. The caller decides: on for a
	// terminal, off when piped or when NO_COLOR is set.
	Color bool
	// Width wraps prose and the header (default 100 columns). The CLI
	// passes the terminal's width when it writes to one, 100 otherwise, so
	// that a file or a pipe does not depend on the window.
	Width int
}

// Text writes the postmortem for a terminal: the verdict first, then what to
// do, the hypotheses, the timeline, the findings with their first evidence
// lines, and a short account of the environment and the sources.
func Text(w io.Writer, r *Report, o TextOptions) error {
	if o.Width <= 0 {
		o.Width = 100
	}
	t := &textWriter{o: o}
	t.header(r)
	t.runs(r)
	t.actions(r)
	t.hypotheses(r)
	t.timeline(r)
	t.findings(r)
	t.collect(r)
	t.environment(r)
	t.sources(r)
	t.assumptions(r)
	_, err := io.WriteString(w, t.b.String())
	return err
}

type textWriter struct {
	o TextOptions
	b strings.Builder
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiCyan   = "\x1b[36m"
)

// c wraps s in a style when colour is on.
func (t *textWriter) c(style, s string) string {
	if !t.o.Color || s == "" || style == "" {
		return s
	}
	return style + s + ansiReset
}

func (t *textWriter) line(s string) { t.b.WriteString(s + "\n") }

func (t *textWriter) section(title string) {
	t.line("")
	t.line(t.c(ansiBold, strings.ToUpper(title)))
}

// wrapped writes prose wrapped at the width, the first line after prefix and
// the others indented to line up under it. The prose is one paragraph: a
// line break in it can only come from the bundle (a member's name cited in
// a message), where it would forge a line.
func (t *textWriter) wrapped(prefix, text, style string) {
	indent := strings.Repeat(" ", utf8.RuneCountInString(escape.Text(prefix)))
	for i, l := range wrap(escape.Line(text), t.o.Width-utf8.RuneCountInString(indent)) {
		if i == 0 {
			t.line(prefix + t.c(style, l))
		} else {
			t.line(indent + t.c(style, l))
		}
	}
}

func outcomeStyle(o string) string {
	switch o {
	case "hung", "crashed":
		return ansiRed
	case "slow", "unknown":
		return ansiYellow
	case "ready":
		return ansiGreen
	}
	return ansiBlue
}

func severityStyle(s string) string {
	switch s {
	case "critical", "error":
		return ansiRed
	case "warning":
		return ansiYellow
	}
	return ansiBlue
}

func (t *textWriter) header(r *Report) {
	v := r.Verdict
	t.line(t.c(ansiBold, "coroner postmortem: "+escape.Text(r.Bundle.Path)))
	t.line("")
	state := strings.ToUpper(escape.Text(orDash(v.Outcome)))
	facts := []string{}
	if v.Phase != "" {
		facts = append(facts, "in "+v.Phase)
	}
	if v.StalledForS > 0 {
		facts = append(facts, "silent "+humanSeconds(float64(v.StalledForS)))
	}
	if e := engineName(r); e != "" {
		facts = append(facts, e)
	}
	if g := gpuSummary(r); g != "" {
		facts = append(facts, g)
	}
	facts = append(facts, plural(len(r.Bundle.Sources), "source", "sources"))
	// The state, then what is known of the run, wrapped at the width
	// between facts, never inside one.
	prefix := t.c(ansiBold+outcomeStyle(v.Outcome), state) + "  "
	indent := strings.Repeat(" ", utf8.RuneCountInString(state)+2)
	cur, n := prefix, len(state)+2
	for i, f := range facts {
		f = escape.Line(f)
		if i > 0 {
			if n+3+utf8.RuneCountInString(f) > t.o.Width {
				t.line(cur + " ·")
				cur, n = indent, len(indent)
			} else {
				cur += " · "
				n += 3
			}
		}
		cur += f
		n += utf8.RuneCountInString(f)
	}
	t.line(cur)
	t.wrapped("", headline(r), ansiBold)
}

func (t *textWriter) actions(r *Report) {
	as := actions(r)
	if len(as) == 0 {
		return
	}
	t.section("What to do")
	for i, a := range as {
		p := fmt.Sprintf("  %d. ", i+1)
		t.wrapped(p, a.For+a.tag(i), ansiBold)
		t.wrapped(strings.Repeat(" ", len(p)), a.Remedy, "")
	}
}

func (t *textWriter) hypotheses(r *Report) {
	if len(r.Verdict.Causes) == 0 && len(r.RuledOut) == 0 {
		return
	}
	t.section("Hypotheses")
	if len(r.Verdict.Causes) == 0 {
		t.line("  no cause stands out: no rule that names a cause fired")
	}
	for i, c := range r.Verdict.Causes {
		p := fmt.Sprintf("  %d. %.2f  ", i+1, c.Confidence)
		t.wrapped(p, c.Title+" ("+orDash(c.Category)+")", ansiBold)
		if c.Why != "" {
			t.wrapped(strings.Repeat(" ", len(p)), sentence(c.Why), "")
		}
	}
	if len(r.RuledOut) > 0 {
		t.line("  ruled out:")
		for _, ro := range r.RuledOut {
			why := ro.Title + ": " + sentence(ro.Why)
			if len(ro.Evidence) > 0 {
				var cites []string
				for _, e := range ro.Evidence {
					cites = append(cites, loc(e.File, e.Line))
				}
				why += " [" + strings.Join(cites, ", ") + "]"
			}
			t.wrapped("  - ", why, ansiDim)
		}
	}
}

func (t *textWriter) timeline(r *Report) {
	if len(r.Timeline) == 0 {
		return
	}
	cf := newClockFormat(timelineStamps(r)...)
	title := "Timeline (UTC"
	if cf.sameDay {
		title += ", " + cf.day
	}
	t.section(title + ")")
	groups := timelineGroups(r.Timeline)
	shown := groups[:min(len(groups), maxGroups)]
	rows := [][]string{{"PROCESS", "PHASE", "START", "END", "DURATION", "EVIDENCE"}}
	var styles []string
	for _, g := range shown {
		for i, s := range g.Spans {
			name := ""
			if i == 0 {
				name = g.Label
			}
			end := cf.show(s.End)
			style := ""
			if s.Open {
				end += " open"
				if w := openEnding(r); w != "" {
					end = cf.show(s.End) + " " + w
					style = ansiRed
				}
			}
			rows = append(rows, []string{name, s.Phase, cf.show(s.Start), end, humanSeconds(s.DurationS), loc(s.Evidence.File, s.Evidence.Line)})
			styles = append(styles, style)
		}
	}
	t.table(rows, styles)
	if n := len(groups) - len(shown); n > 0 {
		t.line(fmt.Sprintf("  %s more; `coroner timeline` lists every process", plural(n, "row group", "row groups")))
	}
}

// table writes rows with aligned columns; the first row is the header. A
// table wider than the width narrows its widest columns and wraps their
// cells (termtext.Columns).
func (t *textWriter) table(rows [][]string, styles []string) {
	for _, r := range rows {
		for i, c := range r {
			r[i] = escape.Line(c)
		}
	}
	width := 0 // no limit: a listing (TimelineTable)
	if t.o.Width > 0 {
		width = t.o.Width - 2
	}
	for ri, r := range termtext.Columns(rows, width) {
		for _, l := range r {
			s := strings.TrimRight("  "+l, " ")
			switch {
			case ri == 0:
				s = t.c(ansiDim, s)
			case styles != nil && styles[ri-1] != "":
				s = t.c(styles[ri-1], s)
			}
			t.line(s)
		}
	}
}

// textEvidence is how many evidence lines a finding shows in the terminal.
const textEvidence = 4

func (t *textWriter) findings(r *Report) {
	t.section("Findings")
	if len(r.Findings) == 0 {
		t.line("  no rule fired")
		return
	}
	for fi, f := range r.Findings {
		if fi > 0 {
			t.line("")
		}
		sev := fmt.Sprintf("%-8s", strings.ToUpper(escape.Text(f.Severity)))
		head := f.Title + "  [" + f.Rule
		if f.Confidence > 0 {
			head += fmt.Sprintf(", %.2f", f.Confidence)
		}
		head += "]"
		t.wrapped("  "+t.c(severityStyle(f.Severity)+ansiBold, sev)+" ", head, ansiBold)
		ind := strings.Repeat(" ", 11)
		if f.Message != "" {
			t.wrapped(ind, f.Message, "")
		}
		if f.Remedy != "" {
			t.wrapped(ind+"remedy: ", f.Remedy, "")
		}
		for i, e := range f.Evidence {
			if i == textEvidence {
				t.line(ind + t.c(ansiDim, "… "+plural(len(f.Evidence)-textEvidence, "more evidence line", "more evidence lines")))
				break
			}
			l := strings.ReplaceAll(escape.Text(loc(e.File, e.Line)+"  "+e.Text), "\n", " ")
			l = truncate(l, t.o.Width-len(ind))
			t.line(ind + t.c(ansiCyan, l))
		}
	}
}

func (t *textWriter) collect(r *Report) {
	if len(r.Inconclusive) == 0 {
		return
	}
	t.section("What to collect next")
	for _, in := range r.Inconclusive {
		t.wrapped("  - ", in.Rule+" misses "+strings.Join(in.Missing, "; ")+". Collect: "+in.Collect, "")
	}
}

func (t *textWriter) environment(r *Report) {
	e := r.Environment
	if e.empty() {
		return
	}
	t.section("Environment")
	for _, g := range e.GPUs {
		s := fmt.Sprintf("%s × %s", gpuCount(g), orDash(g.Model))
		if g.ComputeCapability != "" {
			s += ", SM " + g.ComputeCapability
		}
		if g.MemoryMiB > 0 {
			s += fmt.Sprintf(", %.1f GiB", g.MemoryMiB/1024)
		}
		t.wrapped("  gpus      ", s+" ("+loc(g.Source.File, g.Source.Line)+")", "")
	}
	list := func(label string, items []Item) {
		if len(items) == 0 {
			return
		}
		var parts []string
		for _, it := range items {
			parts = append(parts, it.Name+"="+truncate(it.Value, 80))
		}
		t.wrapped(fmt.Sprintf("  %-10s", label), strings.Join(parts, " · "), "")
	}
	list("software", e.Software)
	list("args", e.ServerArgs)
	list("env", e.EnvVars)
	list("system", e.System)
}

func (t *textWriter) sources(r *Report) {
	t.section("Sources")
	issues := 0
	kinds := map[string]int{}
	var order []string
	for _, s := range r.Bundle.Sources {
		issues += len(s.Issues)
		if kinds[s.Kind] == 0 {
			order = append(order, s.Kind)
		}
		kinds[s.Kind]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	t.wrapped("  ", fmt.Sprintf("%s (%s), %s", plural(len(r.Bundle.Sources), "file", "files"), strings.Join(parts, ", "), plural(issues, "parse issue", "parse issues")), "")
	for _, s := range r.Bundle.Sources {
		if len(s.Issues) > 0 {
			t.wrapped("  - ", s.Path+": "+issueSummary(s.Issues, 2), ansiYellow)
		}
	}
}

func (t *textWriter) assumptions(r *Report) {
	if len(r.Assumptions) == 0 {
		return
	}
	t.section("Assumptions")
	for _, a := range r.Assumptions {
		t.wrapped("  - ", a, "")
	}
}

// wrap breaks prose at spaces to fit width (termtext.Wrap).
func wrap(text string, width int) []string { return termtext.Wrap(text, width) }

// TimelineTable writes every span of the timeline, one per line, with full
// RFC 3339 instants: what `coroner timeline` prints. Unlike the
// postmortem's tables it collapses nothing.
func TimelineTable(w io.Writer, r *Report) error {
	// A listing, one span a line whatever the width: never wrapped.
	t := &textWriter{}
	rows := [][]string{{"PROCESS", "PHASE", "START", "END", "DURATION", "EVIDENCE"}}
	for _, s := range r.Timeline {
		end := orDash(showStamp(s.End))
		dur := humanSeconds(s.DurationS)
		if s.Open {
			end += " (open)"
		}
		if s.Cut {
			end += " (gap)"
			dur = ">= " + dur
		}
		rows = append(rows, []string{s.Process, s.Phase, orDash(showStamp(s.Start)), end, dur, loc(s.Evidence.File, s.Evidence.Line)})
	}
	t.table(rows, nil)
	out := t.b.String()
	// The table's two-space margin suits the postmortem, not a listing.
	out = strings.ReplaceAll("\n"+out, "\n  ", "\n")[1:]
	_, err := io.WriteString(w, out)
	return err
}
