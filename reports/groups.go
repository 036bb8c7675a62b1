package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Timeline groups. A TP8 run has nine processes and a 512-rank run 513, most
// of them walking through the same phases at the same moments. The
// renderers show one row group per distinct walk: processes whose phases are
// the same, in the same order, open or closed alike, and whose every phase
// starts and ends within sameTolerance of the group's first member collapse
// into one group labelled with their names ("TP1-TP7"). A group's phase runs
// from the earliest start to the latest end of its members, so the group
// never hides a member that took longer.

// sameTolerance is how far two ranks' phase boundaries may lie apart and
// still count as the same: ranks log the same milestone a few seconds apart.
const sameTolerance = 10 * time.Second

// maxGroups bounds the groups a report draws; the rest are counted.
const maxGroups = 24

// procGroup is one or more processes with the same phases.
type procGroup struct {
	Label   string   // "TP0", "TP1-TP7"
	Members []string // process names, in natural order
	Spans   []TimelineSpan
}

// Collapsed reports whether the group stands for more than one process.
func (g procGroup) Collapsed() bool { return len(g.Members) > 1 }

// Title is the label with a note on collapsing: "TP1-TP7 (7 processes, same phases)".
func (g procGroup) Title() string {
	if !g.Collapsed() {
		return g.Label
	}
	return fmt.Sprintf("%s (%d processes, same phases)", g.Label, len(g.Members))
}

// timelineGroups groups the report's timeline by process, in natural order
// of the process names (main and other unnumbered processes first), and
// collapses processes with the same phases.
func timelineGroups(spans []TimelineSpan) []procGroup {
	var order []string
	byProc := map[string][]TimelineSpan{}
	for _, s := range spans {
		if _, ok := byProc[s.Process]; !ok {
			order = append(order, s.Process)
		}
		byProc[s.Process] = append(byProc[s.Process], s)
	}
	sort.SliceStable(order, func(i, j int) bool { return naturalLess(order[i], order[j]) })
	var groups []procGroup
	var first [][]TimelineSpan // each group's first member's spans
	for _, p := range order {
		ss := byProc[p]
		placed := false
		for gi := range groups {
			if samePhases(first[gi], ss) {
				g := &groups[gi]
				g.Members = append(g.Members, p)
				g.Spans = mergeSpans(g.Spans, ss)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, procGroup{Members: []string{p}, Spans: append([]TimelineSpan(nil), ss...)})
			first = append(first, ss)
		}
	}
	for i := range groups {
		groups[i].Label = rangeLabel(groups[i].Members)
		for j := range groups[i].Spans {
			groups[i].Spans[j].Process = groups[i].Label
		}
	}
	return groups
}

func samePhases(a, b []TimelineSpan) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Phase != b[i].Phase || a[i].Open != b[i].Open ||
			!near(a[i].Start, b[i].Start) || !near(a[i].End, b[i].End) {
			return false
		}
	}
	return true
}

func near(a, b string) bool {
	if a == b {
		return true
	}
	ta, ea := time.Parse(time.RFC3339, a)
	tb, eb := time.Parse(time.RFC3339, b)
	if ea != nil || eb != nil {
		return false
	}
	d := ta.Sub(tb)
	return d <= sameTolerance && d >= -sameTolerance
}

// mergeSpans widens each of the group's spans to cover the member's.
func mergeSpans(g, m []TimelineSpan) []TimelineSpan {
	for i := range g {
		if m[i].Start != "" && (g[i].Start == "" || m[i].Start < g[i].Start) {
			g[i].Start = m[i].Start
		}
		if m[i].End > g[i].End {
			g[i].End = m[i].End
		}
		if s, e, ok := parseSpan(g[i]); ok {
			g[i].DurationS = round2(e.Sub(s).Seconds())
		}
	}
	return g
}

func parseSpan(s TimelineSpan) (time.Time, time.Time, bool) {
	a, err1 := time.Parse(time.RFC3339, s.Start)
	b, err2 := time.Parse(time.RFC3339, s.End)
	if err1 != nil || err2 != nil {
		return time.Time{}, time.Time{}, false
	}
	return a, b, true
}

// naturalLess orders names with numbers by value (TP2 before TP10), and
// names without a digit (main, launcher) before numbered ones.
func naturalLess(a, b string) bool {
	da, db := strings.ContainsAny(a, "0123456789"), strings.ContainsAny(b, "0123456789")
	if da != db {
		return !da
	}
	for a != "" && b != "" {
		ca, ra := chunk(a)
		cb, rb := chunk(b)
		if ca != cb {
			na, ea := strconv.Atoi(ca)
			nb, eb := strconv.Atoi(cb)
			if ea == nil && eb == nil && na != nb {
				return na < nb
			}
			return ca < cb
		}
		a, b = ra, rb
	}
	return len(a) < len(b)
}

// chunk splits off a leading run of digits or of non-digits.
func chunk(s string) (string, string) {
	digit := s[0] >= '0' && s[0] <= '9'
	i := 1
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
		i++
	}
	return s[:i], s[i:]
}

// rangeLabel names a set of processes compactly: consecutive numbers with
// the same prefix become a range ("TP1-TP7"), the rest are listed.
func rangeLabel(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	type num struct {
		prefix string
		n      int
	}
	var parts []string
	var run []num
	flush := func() {
		switch {
		case len(run) == 0:
		case len(run) <= 2:
			for _, r := range run {
				parts = append(parts, fmt.Sprintf("%s%d", r.prefix, r.n))
			}
		default:
			parts = append(parts, fmt.Sprintf("%s%d-%s%d", run[0].prefix, run[0].n, run[0].prefix, run[len(run)-1].n))
		}
		run = nil
	}
	for _, name := range names {
		prefix, n, ok := splitNumber(name)
		if !ok {
			flush()
			parts = append(parts, name)
			continue
		}
		if len(run) > 0 && (run[0].prefix != prefix || run[len(run)-1].n+1 != n) {
			flush()
		}
		run = append(run, num{prefix, n})
	}
	flush()
	if len(parts) > 6 {
		return strings.Join(parts[:5], ", ") + fmt.Sprintf(" and %d more", len(parts)-5)
	}
	return strings.Join(parts, ", ")
}

// splitNumber splits "DP0 TP12" into "DP0 TP" and 12.
func splitNumber(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return "", 0, false
	}
	return s[:i], n, true
}
