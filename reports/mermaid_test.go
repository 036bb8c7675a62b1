package reports

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	mermaidBlock = regexp.MustCompile("(?s)```mermaid\n(.*?)```")
	mermaidTask  = regexp.MustCompile(`^    ([A-Za-z0-9 _.,()/+-]+) :(done|active|crit), (g\d+s\d+), (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d), (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)$`)
)

// gantt is a parsed Mermaid gantt block.
type gantt struct {
	header   []string
	sections []string
	tasks    map[string][]ganttTask // by section
}

type ganttTask struct {
	name, tag, id string
	start, end    time.Time
}

// parseGantt reads the gantt this package writes, failing on any line it
// does not expect: a directive, a section, or a task with start and end.
func parseGantt(t *testing.T, block string) gantt {
	t.Helper()
	g := gantt{tasks: map[string][]ganttTask{}}
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	require.Equal(t, "gantt", lines[0])
	section := ""
	ids := map[string]bool{}
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "    section "):
			section = strings.TrimPrefix(l, "    section ")
			g.sections = append(g.sections, section)
		case mermaidTask.MatchString(l):
			require.NotEmpty(t, section, "task before any section: %q", l)
			m := mermaidTask.FindStringSubmatch(l)
			start, err := time.Parse("2006-01-02T15:04:05", m[4])
			require.NoError(t, err)
			end, err := time.Parse("2006-01-02T15:04:05", m[5])
			require.NoError(t, err)
			assert.False(t, end.Before(start), "task ends before it starts: %q", l)
			assert.False(t, ids[m[3]], "duplicate task id %s", m[3])
			ids[m[3]] = true
			g.tasks[section] = append(g.tasks[section], ganttTask{name: m[1], tag: m[2], id: m[3], start: start, end: end})
		default:
			require.Empty(t, g.sections, "unexpected line after the first section: %q", l)
			g.header = append(g.header, strings.TrimSpace(l))
		}
	}
	return g
}

// TestMermaidGanttSeed checks the seed's gantt: the directives, one section
// per row group (main, TP0 and the seven ranks that match), tasks with
// explicit start and end, and the stall marked crit.
func TestMermaidGanttSeed(t *testing.T) {
	r := analyze(t, "seed", "../fixtures/seed/flashinfer-sm120-hang")
	var buf bytes.Buffer
	require.NoError(t, Markdown(&buf, r))
	blocks := mermaidBlock.FindAllStringSubmatch(buf.String(), -1)
	require.Len(t, blocks, 1, "one mermaid block")
	g := parseGantt(t, blocks[0][1])

	assert.Contains(t, g.header, "dateFormat YYYY-MM-DDTHH:mm:ss")
	assert.Contains(t, g.header, "axisFormat %H:%M")
	assert.Equal(t, []string{"main", "TP0-TP7"}, g.sections)

	// Every process of the timeline lies in exactly one section.
	covered := map[string]int{}
	for _, grp := range timelineGroups(r.Timeline) {
		for _, m := range grp.Members {
			covered[m]++
		}
	}
	for _, s := range r.Timeline {
		assert.Equal(t, 1, covered[s.Process], s.Process)
	}

	tp0 := g.tasks["TP0-TP7"]
	require.Len(t, tp0, 4)
	var names []string
	for _, task := range tp0 {
		names = append(names, task.name)
	}
	assert.Equal(t, []string{"launch", "distributed-init", "weights-loading", "post-weights (stalled)"}, names)
	at := func(s string) time.Time { v, _ := time.Parse("2006-01-02T15:04:05", s); return v }
	// Weights loaded 00:28:19-00:38:01 (server.log:144 to :225); the log then
	// stays silent to the ps snapshot at 01:55:12: that open span is the stall.
	assert.Equal(t, ganttTask{name: "weights-loading", tag: "done", id: "g1s2", start: at("2026-02-10T00:28:19"), end: at("2026-02-10T00:38:01")}, tp0[2])
	assert.Equal(t, ganttTask{name: "post-weights (stalled)", tag: "crit", id: "g1s3", start: at("2026-02-10T00:38:01"), end: at("2026-02-10T01:55:12")}, tp0[3])
	for _, task := range g.tasks["main"] {
		assert.Equal(t, "done", task.tag, "the launcher handed off to its schedulers: no stall of its own")
	}
}

// TestMermaidGanttReady checks that a run that reached ready marks no stall.
func TestMermaidGanttReady(t *testing.T) {
	r := analyze(t, "ready", "../fixtures/seed/triton-sm120-ready")
	var buf bytes.Buffer
	require.NoError(t, Markdown(&buf, r))
	blocks := mermaidBlock.FindAllStringSubmatch(buf.String(), -1)
	require.Len(t, blocks, 1)
	g := parseGantt(t, blocks[0][1])
	for sec, tasks := range g.tasks {
		for _, task := range tasks {
			assert.NotEqual(t, "crit", task.tag, "%s: %s", sec, task.name)
		}
	}
}

func TestMermaidText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TP1-TP7", "TP1-TP7"},
		{"DP0 TP3", "DP0 TP3"},
		{"weights-loading (stalled)", "weights-loading (stalled)"},
		{"a:b#c;d", "a b c d"},
		{"%%{init: {\"theme\":\"dark\"}}%%", "init theme dark"},
		{"x\nsection pwn", "x section pwn"},
		{"<script>", "script"},
		{":#;", "unnamed"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, mermaidText(tc.in), tc.in)
	}
}

// TestMermaidHostileNames feeds process names that would break out of a
// section or a task and checks the gantt still parses line by line.
func TestMermaidHostileNames(t *testing.T) {
	spans := []TimelineSpan{
		{Process: "evil: crit, x, 2020-01-01, 1d\n    section pwn", Phase: "launch", Start: "2026-01-01T00:00:00Z", End: "2026-01-01T00:01:00Z", DurationS: 60},
		{Process: "```", Phase: "launch", Start: "2026-01-01T00:00:10Z", End: "2026-01-01T00:02:00Z", DurationS: 110},
	}
	out := mermaidGantt(&chart{Groups: timelineGroups(spans)})
	blocks := mermaidBlock.FindAllStringSubmatch(out, -1)
	require.Len(t, blocks, 1)
	g := parseGantt(t, blocks[0][1])
	assert.Len(t, g.sections, 2)
	for _, s := range g.sections {
		assert.NotContains(t, s, ":")
		assert.NotContains(t, s, "`")
	}
}

// TestMermaidGanttYearUnknown: a report whose year is unknown (its stamps
// are in year 0000) dates the gantt's tasks by month and day, with a
// matching dateFormat, and never writes a year; a Feb 29 or a New Year
// inside such a run leaves the chart out and says why (issue 18, item 8).
func TestMermaidGanttYearUnknown(t *testing.T) {
	span := func(start, end string) []TimelineSpan {
		return []TimelineSpan{{Process: "main", Phase: "launch", Start: start, End: end, DurationS: 60}}
	}
	tests := []struct {
		name       string
		spans      []TimelineSpan
		dateFormat string // "" when the chart is left out
		task       string
	}{
		{"a known year", span("2026-05-16T21:39:29Z", "2026-05-16T21:40:29Z"), "YYYY-MM-DDTHH:mm:ss", "2026-05-16T21:39:29, 2026-05-16T21:40:29"},
		{"no year", span("0000-05-16T21:39:29Z", "0000-05-16T21:40:29Z"), "MM-DDTHH:mm:ss", "05-16T21:39:29, 05-16T21:40:29"},
		{"no year, across months", span("0000-05-31T23:59:29Z", "0000-06-01T00:00:29Z"), "MM-DDTHH:mm:ss", "05-31T23:59:29, 06-01T00:00:29"},
		{"no year, Feb 29", span("0000-02-29T10:00:00Z", "0000-02-29T10:01:00Z"), "", ""},
		{"no year, across New Year", span("0000-12-31T23:59:29Z", "0001-01-01T00:00:29Z"), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := mermaidGantt(&chart{Groups: timelineGroups(tc.spans)})
			assert.NotContains(t, out, "0000")
			assert.NotContains(t, out, "0001-")
			if tc.dateFormat == "" {
				assert.NotContains(t, out, "```mermaid")
				assert.Contains(t, out, "The chart is left out: the evidence gives no year")
				return
			}
			assert.Contains(t, out, "    dateFormat "+tc.dateFormat+"\n")
			assert.Contains(t, out, "    launch :done, g0s0, "+tc.task+"\n")
		})
	}
}
