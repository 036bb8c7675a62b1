package reports

import (
	"fmt"
	"strings"
	"time"
)

// chart is the timeline the markdown draws as a Mermaid gantt and the HTML
// as an SVG.
type chart struct {
	Groups []procGroup
	// Ended is what open phases mean: "stalled" (hung), "crashed", or ""
	// while the run may still move on.
	Ended     string
	Snapshots []Snapshot
	End       *Instant
}

// mermaidGantt writes a gantt with one section per row group and one task
// per phase, each with an explicit start and end (UTC, to the second).
// Closed phases are "done"; an open phase is "crit" when the run is hung
// (the stall) or crashed (where it died), "active" while it is under way.
//
// Mermaid needs dates. When the evidence gives no year (yearless), the
// tasks are dated by month and day alone (dateFormat MM-DDTHH:mm:ss),
// which Mermaid places in the reader's current year; the axis shows only
// times, so no year is ever drawn. A Feb 29 or a New Year inside such a
// run cannot be placed that way: the chart is then left out, and the
// sentence that says so points at the tables, which hold every phase.
func mermaidGantt(c *chart) string {
	groups := c.Groups[:min(len(c.Groups), maxGroups)]
	layout, format := "2006-01-02T15:04:05", "YYYY-MM-DDTHH:mm:ss"
	if noYear, placeable := ganttYear(groups); noYear {
		if !placeable {
			return "The chart is left out: the evidence gives no year, and Mermaid, which needs one, cannot place a Feb 29 or a New Year without it; the tables list every phase.\n\n"
		}
		layout, format = "01-02T15:04:05", "MM-DDTHH:mm:ss"
	}
	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n")
	b.WriteString("    title Phases per process (UTC)\n")
	b.WriteString("    dateFormat " + format + "\n")
	b.WriteString("    axisFormat %H:%M\n")
	b.WriteString("    todayMarker off\n")
	for gi, g := range groups {
		var tasks []string
		for si, s := range g.Spans {
			start, end, ok := parseSpan(s)
			if !ok {
				continue
			}
			tag := "done"
			name := s.Phase
			if s.Open {
				tag = "active"
				name += " (open)"
				if c.Ended != "" {
					tag = "crit"
					name = s.Phase + " (" + c.Ended + ")"
				}
			}
			tasks = append(tasks, fmt.Sprintf("    %s :%s, g%ds%d, %s, %s\n", mermaidText(name), tag, gi, si, start.UTC().Format(layout), end.UTC().Format(layout)))
		}
		if len(tasks) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    section %s\n", mermaidText(g.Label))
		for _, t := range tasks {
			b.WriteString(t)
		}
	}
	b.WriteString("```\n\n")
	return b.String()
}

// ganttYear reports whether the chart's times carry no year (yearless),
// and then whether month-day dates place them all: none on Feb 29, all
// in one year.
func ganttYear(groups []procGroup) (noYear, placeable bool) {
	year := -1
	placeable = true
	for _, g := range groups {
		for _, s := range g.Spans {
			start, end, ok := parseSpan(s)
			if !ok || !yearless(start) {
				continue
			}
			noYear = true
			for _, t := range []time.Time{start.UTC(), end.UTC()} {
				if year < 0 {
					year = t.Year()
				}
				if t.Year() != year || t.Month() == time.February && t.Day() == 29 {
					placeable = false
				}
			}
		}
	}
	return noYear, placeable
}

// mermaidText keeps what Mermaid reads as text in a section or task name:
// letters, digits, spaces and a few marks. ":" ends a task name, "#" and
// ";" start comments and statements, and quotes or brackets can open
// strings or shapes, so those become spaces.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '_' || r == '.' || r == ',' || r == '(' || r == ')' || r == '/' || r == '+':
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if out == "" {
		return "unnamed"
	}
	return out
}
