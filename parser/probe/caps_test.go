package probe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// A file of more probes than MaxProbes keeps the first and the last halves,
// in file order, and counts the ones between (issue 18, item 3: a million
// probes took 752 MB).
func TestManyProbes(t *testing.T) {
	var b strings.Builder
	const n = MaxProbes * 5
	for i := range n {
		fmt.Fprintf(&b, `{"at":"2026-11-30T04:%02d:%02d.000Z","url":"http://127.0.0.1:8000/health","status":%d,"latency_ms":1}`+"\n",
			i/60%60, i%60, 200+i%2*303)
	}
	out, issues := parse("probes.jsonl", b.String())
	require.Len(t, out.Probes, MaxProbes)
	assert.Equal(t, 1, out.Probes[0].Src.Line)
	assert.Equal(t, MaxProbes/2, out.Probes[MaxProbes/2-1].Src.Line)
	assert.Equal(t, n-MaxProbes/2+1, out.Probes[MaxProbes/2].Src.Line, "the last half follows the first")
	assert.Equal(t, n, out.Probes[MaxProbes-1].Src.Line, "the last probe stays")
	var sum []string
	for _, is := range issues {
		if is.Kind == facts.IssueSummarized {
			sum = append(sum, is.Detail)
		}
	}
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], fmt.Sprintf("%d probes", n))
}
