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
func mermaidGantt(c *chart) string {
	var b strings.Builder
	b.WriteString("```mermaid\ngantt\n")
	b.WriteString("    title Phases per process (UTC)\n")
	b.WriteString("    dateFormat YYYY-MM-DDTHH:mm:ss\n")
	b.WriteString("    axisFormat %H:%M\n")
	b.WriteString("    todayMarker off\n")
	groups := c.Groups[:min(len(c.Groups), maxGroups)]
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
			tasks = append(tasks, fmt.Sprintf("    %s :%s, g%ds%d, %s, %s\n", mermaidText(name), tag, gi, si, mermaidTime(start), mermaidTime(end)))
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

func mermaidTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

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
