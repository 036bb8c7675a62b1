package reports

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNaturalOrder(t *testing.T) {
	names := []string{"TP10", "TP2", "main", "DP1 TP0", "TP0", "DP0 TP1", "APIServer", "DP0 TP0", "TP1"}
	sort.SliceStable(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	assert.Equal(t, []string{"APIServer", "main", "DP0 TP0", "DP0 TP1", "DP1 TP0", "TP0", "TP1", "TP2", "TP10"}, names)
}

func TestRangeLabel(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"TP0"}, "TP0"},
		{[]string{"TP1", "TP2", "TP3", "TP4", "TP5", "TP6", "TP7"}, "TP1-TP7"},
		{[]string{"TP1", "TP2"}, "TP1, TP2"},
		{[]string{"TP1", "TP3", "TP4", "TP5"}, "TP1, TP3-TP5"},
		{[]string{"DP0 TP0", "DP0 TP1", "DP0 TP2", "DP1 TP0"}, "DP0 TP0-DP0 TP2, DP1 TP0"},
		{[]string{"main", "TP0"}, "main, TP0"},
		{[]string{"0", "1", "2", "3"}, "0-3"},
		{[]string{"a1", "b1", "c1", "d1", "e1", "f1", "g1"}, "a1, b1, c1, d1, e1 and 2 more"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, rangeLabel(tc.names), "%v", tc.names)
	}
}

// rankSpans builds a rank's three phases: launch, weights-loading and an
// open post-weights, shifted by skew.
func rankSpans(name string, skew time.Duration, loadEnd string) []TimelineSpan {
	at := func(s string) string {
		t, _ := time.Parse(time.RFC3339, s)
		return t.Add(skew).UTC().Format(time.RFC3339)
	}
	return []TimelineSpan{
		{Process: name, Phase: "launch", Start: at("2026-02-10T00:28:13Z"), End: at("2026-02-10T00:28:19Z"), Evidence: Location{File: "server.log", Line: 1}},
		{Process: name, Phase: "weights-loading", Start: at("2026-02-10T00:28:19Z"), End: at(loadEnd), Evidence: Location{File: "server.log", Line: 2}},
		{Process: name, Phase: "post-weights", Start: at(loadEnd), End: "2026-02-10T01:55:12Z", Open: true, Evidence: Location{File: "server.log", Line: 3}},
	}
}

func TestTimelineGroups(t *testing.T) {
	var spans []TimelineSpan
	spans = append(spans, TimelineSpan{Process: "main", Phase: "launch", Start: "2026-02-10T00:28:05Z", End: "2026-02-10T01:55:12Z", Open: true})
	// TP0 finished loading ten minutes before the others: a group of its own.
	spans = append(spans, rankSpans("TP0", 0, "2026-02-10T00:38:01Z")...)
	// TP1-TP7 log the same milestones a few seconds apart: one group.
	for i := 7; i >= 1; i-- {
		spans = append(spans, rankSpans(fmt.Sprintf("TP%d", i), time.Duration(i)*time.Second, "2026-02-10T00:48:00Z")...)
	}
	groups := timelineGroups(spans)
	require.Len(t, groups, 3)
	assert.Equal(t, "main", groups[0].Label)
	assert.Equal(t, "TP0", groups[1].Label)
	g := groups[2]
	assert.Equal(t, "TP1-TP7", g.Label)
	assert.Equal(t, "TP1-TP7 (7 processes, same phases)", g.Title())
	assert.Equal(t, []string{"TP1", "TP2", "TP3", "TP4", "TP5", "TP6", "TP7"}, g.Members)
	// The group's phases run from the earliest start (TP1, 1 s skew) to the
	// latest end (TP7, 7 s skew).
	require.Len(t, g.Spans, 3)
	assert.Equal(t, "2026-02-10T00:28:20Z", g.Spans[1].Start)
	assert.Equal(t, "2026-02-10T00:48:07Z", g.Spans[1].End)
	assert.Equal(t, 1187.0, g.Spans[1].DurationS)
	assert.True(t, g.Spans[2].Open)
}

// TestTimelineGroupsTolerance: 10 s apart still match, 11 s do not.
func TestTimelineGroupsTolerance(t *testing.T) {
	base := rankSpans("TP0", 0, "2026-02-10T00:48:00Z")
	for _, tc := range []struct {
		skew   time.Duration
		groups int
	}{{0, 1}, {10 * time.Second, 1}, {11 * time.Second, 2}} {
		spans := append(append([]TimelineSpan{}, base...), rankSpans("TP1", tc.skew, "2026-02-10T00:48:00Z")...)
		assert.Len(t, timelineGroups(spans), tc.groups, "skew %s", tc.skew)
	}
	// A different phase sequence never matches.
	other := rankSpans("TP1", 0, "2026-02-10T00:48:00Z")[:2]
	assert.Len(t, timelineGroups(append(append([]TimelineSpan{}, base...), other...)), 2)
}

// TestTimelineGroups512 collapses a 512-rank run where every rank walked the
// same phases into one row group, and keeps one straggler apart.
func TestTimelineGroups512(t *testing.T) {
	var spans []TimelineSpan
	for i := 0; i < 512; i++ {
		end := "2026-02-10T00:48:00Z"
		if i == 300 {
			end = "2026-02-10T01:10:00Z"
		}
		spans = append(spans, rankSpans(fmt.Sprintf("TP%d", i), time.Duration(i%5)*time.Second, end)...)
	}
	groups := timelineGroups(spans)
	require.Len(t, groups, 2)
	assert.Equal(t, "TP0-TP299, TP301-TP511", groups[0].Label)
	assert.Len(t, groups[0].Members, 511)
	assert.Equal(t, "TP300", groups[1].Label)
}
