package reports

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes the postmortem as GitHub-flavored markdown that also reads
// well as plain text.
func Markdown(w io.Writer, r *Report) error {
	var b strings.Builder
	md := &mdWriter{b: &b}
	md.header(r)
	md.causes(r)
	md.remedies(r)
	md.findings(r)
	md.timeline(r)
	md.inconclusive(r)
	md.sources(r)
	md.assumptions(r)
	_, err := io.WriteString(w, b.String())
	return err
}

type mdWriter struct{ b *strings.Builder }

func (m *mdWriter) p(format string, args ...any) { fmt.Fprintf(m.b, format, args...) }

func (m *mdWriter) header(r *Report) {
	m.p("# coroner postmortem: %s\n\n", mdInline(r.Bundle.Path))
	v := r.Verdict
	m.p("**%s**\n\n", mdInline(v.Summary))
	m.p("| outcome | phase | silent for | sources |\n|---|---|---|---|\n")
	silent := "-"
	if v.StalledForS > 0 {
		silent = humanSeconds(float64(v.StalledForS))
	}
	phase := v.Phase
	if phase == "" {
		phase = "-"
	}
	m.p("| %s | %s | %s | %d |\n\n", v.Outcome, phase, silent, len(r.Bundle.Sources))
}

func (m *mdWriter) causes(r *Report) {
	if len(r.Verdict.Causes) == 0 && len(r.RuledOut) == 0 {
		return
	}
	m.p("## Hypotheses\n\n")
	for i, c := range r.Verdict.Causes {
		m.p("%d. **%s** (%s, confidence %.2f, rule `%s`)", i+1, mdInline(c.Title), c.Category, c.Confidence, c.Rule)
		if c.Why != "" {
			m.p(": %s", mdInline(c.Why))
		}
		m.p("\n")
	}
	if len(r.RuledOut) > 0 {
		if len(r.Verdict.Causes) > 0 {
			m.p("\n")
		}
		m.p("Ruled out:\n\n")
		for _, ro := range r.RuledOut {
			cat := ""
			if ro.Category != "" {
				cat = ro.Category + ", "
			}
			m.p("- **%s** (%srule `%s`): %s", mdInline(ro.Title), cat, ro.Rule, mdInline(ro.Why))
			for _, e := range ro.Evidence {
				m.p(" [%s]", mdInline(loc(e.File, e.Line)))
			}
			m.p("\n")
		}
	}
	m.p("\n")
}

func (m *mdWriter) remedies(r *Report) {
	var seen []string
	for _, f := range r.Findings {
		if f.Remedy == "" || contains(seen, f.Remedy) || (f.Severity != "critical" && f.Severity != "error" && f.Severity != "warning") {
			continue
		}
		seen = append(seen, f.Remedy)
	}
	if len(seen) == 0 {
		return
	}
	m.p("## What to do\n\n")
	for _, s := range seen {
		m.p("- %s\n", s)
	}
	m.p("\n")
}

func (m *mdWriter) findings(r *Report) {
	if len(r.Findings) == 0 {
		m.p("## Findings\n\nNo rule fired.\n\n")
		return
	}
	m.p("## Findings\n\n")
	for _, sev := range []string{"critical", "error", "warning", "info"} {
		var list []Finding
		for _, f := range r.Findings {
			if f.Severity == sev {
				list = append(list, f)
			}
		}
		if len(list) == 0 {
			continue
		}
		m.p("### %s\n\n", strings.ToUpper(sev[:1])+sev[1:])
		for _, f := range list {
			m.p("#### %s\n\n", mdInline(f.Title))
			meta := []string{"rule `" + f.Rule + "`"}
			if f.Category != "" {
				meta = append(meta, "category `"+f.Category+"`")
			}
			if f.Confidence > 0 {
				meta = append(meta, fmt.Sprintf("confidence %.2f", f.Confidence))
			}
			m.p("%s\n\n", strings.Join(meta, " · "))
			m.p("%s\n\n", mdInline(f.Message))
			if f.Remedy != "" {
				m.p("**Remedy:** %s\n\n", f.Remedy)
			}
			if len(f.Evidence) > 0 {
				var ev strings.Builder
				for _, e := range f.Evidence {
					fmt.Fprintf(&ev, "%s: %s\n", loc(e.File, e.Line), e.Text)
				}
				text := ev.String()
				fc := fence(text)
				m.p("<details><summary>Evidence (%d)</summary>\n\n%stext\n%s%s\n\n</details>\n\n", len(f.Evidence), fc, text, fc)
			}
			for _, ref := range f.References {
				m.p("- %s\n", mdInline(ref))
			}
			if len(f.References) > 0 {
				m.p("\n")
			}
		}
	}
}

func (m *mdWriter) timeline(r *Report) {
	if len(r.Timeline) == 0 {
		return
	}
	m.p("## Timeline\n\n| process | phase | start | end | duration | evidence |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Timeline {
		end := s.End
		if s.Open {
			end += " (open)"
		}
		m.p("| %s | %s | %s | %s | %s | %s |\n", mdInline(s.Process), s.Phase, s.Start, end,
			humanSeconds(s.DurationS), mdInline(loc(s.Evidence.File, s.Evidence.Line)))
	}
	m.p("\n")
}

func (m *mdWriter) inconclusive(r *Report) {
	if len(r.Inconclusive) == 0 {
		return
	}
	m.p("## What to collect next\n\n")
	for _, in := range r.Inconclusive {
		m.p("- rule `%s` misses %s. Collect: %s\n", in.Rule, mdInline(strings.Join(in.Missing, "; ")), in.Collect)
	}
	m.p("\n")
}

func (m *mdWriter) sources(r *Report) {
	m.p("## Sources\n\n| path | kind | bytes | lines | captured | issues |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Bundle.Sources {
		var issues []string
		for _, is := range s.Issues {
			issues = append(issues, fmt.Sprintf("%s (line %d): %s", is.Kind, is.Line, is.Detail))
		}
		cap := s.CapturedAt
		if cap == "" {
			cap = "-"
		}
		m.p("| %s | %s | %d | %d | %s | %s |\n", mdInline(s.Path), s.Kind, s.Bytes, s.Lines, cap, mdInline(strings.Join(issues, "; ")))
	}
	m.p("\n")
}

func (m *mdWriter) assumptions(r *Report) {
	if len(r.Assumptions) == 0 {
		return
	}
	m.p("## Assumptions\n\n")
	for _, a := range r.Assumptions {
		m.p("- %s\n", mdInline(a))
	}
	m.p("\n")
}

func loc(file string, line int) string {
	if line <= 0 {
		return file
	}
	return fmt.Sprintf("%s:%d", file, line)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
