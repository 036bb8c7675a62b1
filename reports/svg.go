package reports

import (
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/rules"

	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/facts"
)

// The SVG timeline: one row per row group, one bar per phase, coloured by
// phase; the stall (an open phase of a hung or crashed run) is red and
// hatched; dashed lines mark the instants snapshots were taken and a solid
// one where the evidence ends. Drawn here, no script, no external font.

const (
	svgWidth  = 1100
	svgLabelW = 200 // the row labels' column
	svgRight  = 24
	svgTop    = 38 // room for the axis labels
	svgRowH   = 26
	svgBarH   = 16
)

// phaseColors are colour-blind-safe hues (Tableau 10), one per phase.
var phaseColors = map[string]string{
	"launch":             "#9aa5b1",
	"distributed-init":   "#76b7b2",
	"weights-loading":    "#4e79a7",
	"post-weights":       "#b07aa1",
	"kv-cache":           "#59a14f",
	"torch-compile":      "#edc948",
	"cuda-graph-capture": "#f28e2b",
	"warmup":             "#9c755f",
	"serving":            "#2f8f46",
	"shutdown":           "#6b6b6b",
}

func phaseColor(p string) string {
	if c, ok := phaseColors[p]; ok {
		return c
	}
	return "#bab0ac"
}

// svgTimeline draws the chart, or returns "" when no phase has times.
func svgTimeline(c *chart) string {
	groups := c.Groups[:min(len(c.Groups), maxGroups)]
	var t0, t1 time.Time
	widen := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if t0.IsZero() || t.Before(t0) {
			t0 = t
		}
		if t1.IsZero() || t.After(t1) { // a year-0000 time is before the zero time
			t1 = t
		}
	}
	for _, g := range groups {
		for _, s := range g.Spans {
			if a, b, ok := parseSpan(s); ok {
				widen(a)
				widen(b)
			}
		}
	}
	if t0.IsZero() {
		return ""
	}
	var snaps []Snapshot
	for _, s := range c.Snapshots {
		if t, err := time.Parse(time.RFC3339, s.At); err == nil && !t.Before(t0.Add(-time.Hour)) {
			widen(t)
			snaps = append(snaps, s)
		}
	}
	var end time.Time
	if c.End != nil {
		if t, err := time.Parse(time.RFC3339, c.End.At); err == nil && !t.Before(t0) {
			end = t
			widen(t)
		}
	}
	if !t1.After(t0) {
		t1 = t0.Add(time.Second)
	}
	cw := float64(svgWidth - svgLabelW - svgRight)
	x := func(t time.Time) float64 {
		return float64(svgLabelW) + cw*t.Sub(t0).Seconds()/t1.Sub(t0).Seconds()
	}
	rowsH := len(groups) * svgRowH
	snapRows := 0
	type mark struct {
		x     float64
		label string
		row   int
	}
	var marks []mark
	for _, s := range snaps {
		t, _ := time.Parse(time.RFC3339, s.At)
		mx := x(t)
		if n := len(marks); n > 0 && mx-marks[n-1].x < 3 {
			if !strings.Contains(marks[n-1].label, s.Kind) {
				marks[n-1].label += ", " + s.Kind
			}
			continue
		}
		marks = append(marks, mark{x: mx, label: s.Kind})
	}
	for i := range marks {
		if i > 0 && marks[i].x-marks[i-1].x < float64(len(marks[i-1].label))*6+8 {
			marks[i].row = (marks[i-1].row + 1) % 3
		}
		snapRows = max(snapRows, marks[i].row+1)
	}
	legendY := svgTop + rowsH + 18 + snapRows*13 + 10
	height := legendY + 22

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="tl-title" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">`, svgWidth, height, svgWidth, height)
	b.WriteString("\n")
	noYear := yearless(t0)
	fmt.Fprintf(&b, `<title id="tl-title">Phases per process, %s to %s UTC</title>`+"\n", facts.FormatTime(t0.UTC(), "2006-01-02 15:04:05", noYear), t1.UTC().Format("15:04:05"))
	b.WriteString(`<defs><pattern id="stall-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#d62728"/><line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-width="2" stroke-opacity="0.45"/></pattern></defs>` + "\n")

	// Axis: grid lines and labels.
	step := tickStep(t1.Sub(t0))
	layout := "15:04"
	if step < time.Minute {
		layout = "15:04:05"
	}
	if t0.UTC().Format("2006-01-02") != t1.UTC().Format("2006-01-02") {
		layout = "01-02 " + layout
	}
	first := t0.UTC().Truncate(step)
	if first.Before(t0) {
		first = first.Add(step)
	}
	for t := first; !t.After(t1); t = t.Add(step) {
		tx := x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e3e6ea"/>`, tx, svgTop-6, tx, svgTop+rowsH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#57606a">%s</text>`+"\n", tx, svgTop-12, t.UTC().Format(layout))
	}

	// Rows.
	for gi, g := range groups {
		y := svgTop + gi*svgRowH
		if gi%2 == 1 {
			fmt.Fprintf(&b, `<rect x="0" y="%d" width="%d" height="%d" fill="#f6f8fa"/>`, y, svgWidth, svgRowH)
		}
		fmt.Fprintf(&b, `<text x="8" y="%d" fill="#24292f">%s</text>`+"\n", y+svgRowH/2+4, svgText(truncate(g.Label, 28)))
		for _, s := range g.Spans {
			a, e, ok := parseSpan(s)
			if !ok {
				continue
			}
			x0, x1 := x(a), x(e)
			w := math.Max(x1-x0, 2)
			fill := phaseColor(s.Phase)
			extra := ""
			state := ""
			if s.Open {
				if c.Ended != "" {
					fill = "url(#stall-hatch)"
					state = ", open: " + c.Ended
				} else {
					extra = ` stroke="#24292f" stroke-dasharray="3 2"`
					state = ", open"
				}
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" rx="2" fill="%s"%s><title>%s</title></rect>`,
				x0, y+(svgRowH-svgBarH)/2, w, svgBarH, fill, extra,
				svgText(fmt.Sprintf("%s: %s, %s to %s (%s%s)", g.Label, s.Phase, clockOf(a), clockOf(e), humanSeconds(s.DurationS), state)))
			label := s.Phase
			switch {
			case s.Open && c.Ended == "stalled":
				label = "stalled in " + s.Phase + " for " + humanSeconds(s.DurationS)
			case s.Open && c.Ended == "crashed":
				label = "crashed in " + s.Phase + " after " + humanSeconds(s.DurationS)
			}
			if w > float64(len(label))*6.4+8 {
				color := "#fff"
				if (s.Phase == "torch-compile" || s.Phase == "launch") && !(s.Open && c.Ended != "") {
					color = "#24292f"
				}
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="%s" font-size="11" pointer-events="none">%s</text>`, x0+4, y+svgRowH/2+4, color, svgText(label))
			}
			b.WriteString("\n")
		}
	}

	// Snapshots and the end of the evidence.
	base := svgTop + rowsH
	for _, m := range marks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#0969da" stroke-dasharray="4 3"/>`, m.x, svgTop-4, m.x, base+4)
		anchor := "middle"
		if m.x > float64(svgWidth-svgRight-40) {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s" fill="#0969da" font-size="11">%s</text>`+"\n", m.x, base+16+m.row*13, anchor, svgText(m.label))
	}
	if !end.IsZero() {
		ex := x(end)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#24292f" stroke-width="1.5"><title>%s</title></line>`+"\n", ex, svgTop-6, ex, base+4,
			html.EscapeString("evidence ends "+facts.FormatTime(end.UTC(), "2006-01-02 15:04:05", noYear)+" UTC"))
	}

	// Legend: the phases drawn, in startup order, then the marks.
	lx := 8.0
	for _, ph := range rules.Phases {
		p := string(ph)
		if !chartHasPhase(groups, p) {
			continue
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="12" height="12" rx="2" fill="%s"/><text x="%.1f" y="%d" fill="#24292f">%s</text>`, lx, legendY, phaseColor(p), lx+16, legendY+10, p)
		lx += 16 + float64(len(p))*6.6 + 14
	}
	if c.Ended != "" && chartHasOpen(groups) {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="12" height="12" rx="2" fill="url(#stall-hatch)"/><text x="%.1f" y="%d" fill="#24292f">%s</text>`, lx, legendY, lx+16, legendY+10, c.Ended)
		lx += 16 + 7*6.6 + 14
	}
	if len(marks) > 0 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#0969da" stroke-dasharray="4 3"/><text x="%.1f" y="%d" fill="#24292f">snapshot</text>`, lx+6, legendY, lx+6, legendY+12, lx+12, legendY+10)
	}
	b.WriteString("\n</svg>")
	return b.String()
}

func chartHasPhase(groups []procGroup, p string) bool {
	for _, g := range groups {
		for _, s := range g.Spans {
			if s.Phase == p {
				return true
			}
		}
	}
	return false
}

func chartHasOpen(groups []procGroup) bool {
	for _, g := range groups {
		for _, s := range g.Spans {
			if s.Open {
				return true
			}
		}
	}
	return false
}

func clockOf(t time.Time) string { return t.UTC().Format("15:04:05") }

// tickStep picks a round interval that puts at most ten ticks on the axis.
func tickStep(d time.Duration) time.Duration {
	for _, s := range []time.Duration{
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
	} {
		if d/s <= 10 {
			return s
		}
	}
	return 24 * time.Hour * time.Duration(d/(240*time.Hour)+1)
}

// svgText is a label for the chart: process names come from the logs, so
// they are made one printable line before they are escaped for XML.
func svgText(s string) string { return html.EscapeString(escape.Line(s)) }
