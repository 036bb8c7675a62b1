package compare

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/reports"
)

// TestSamePhaseSameWords: a phase that coroner analyze says took "10 min"
// reads "10 min" in coroner diff too, not "9.8 min": both go through one
// formatter (issue 18, item 8).
func TestSamePhaseSameWords(t *testing.T) {
	run := load(t, "seed/flashinfer-sm120-hang")
	rep := reports.Build(run.Facts, run.Result, reports.Meta{Path: "hang", Version: "test"})
	var md bytes.Buffer
	require.NoError(t, reports.Markdown(&md, rep))
	var diff bytes.Buffer
	require.NoError(t, Markdown(&diff, Compare(load(t, "seed/triton-sm120-ready"), run, "test")))

	// The weights of the ranks, as the report's table and the diff's say.
	analyzed := ""
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(l, "| weights-loading |") {
			cells := strings.Split(l, " | ")
			analyzed = cells[3]
			break
		}
	}
	require.NotEmpty(t, analyzed)
	assert.Equal(t, "10 min", analyzed)
	assert.Contains(t, diff.String(), fmt.Sprintf("| weights-loading | %s | %s |", "10 min", analyzed))
}
