package pyspy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// A dump of more threads than MaxStacks keeps the first ones and, up to
// MaxKeptStacks, the active ones; the rest are counted (issue 18, item 3:
// a million frames took 420 MB).
func TestHugeDump(t *testing.T) {
	var b strings.Builder
	b.WriteString("Process 4123: python3 -m sglang.launch_server\nPython v3.12.8 (/usr/bin/python3.12)\n\n")
	const n = MaxKeptStacks * 3
	for i := range n {
		state := "idle"
		if i == n-1 {
			state = "active"
		}
		fmt.Fprintf(&b, "Thread %d (%s): \"Thread-%d\"\n    wait (threading.py:359)\n    run (worker.py:%d)\n", 5000+i, state, i, i)
	}
	out, issues := parse("py-spy.txt", b.String())
	require.Len(t, out.Stacks, MaxStacks+1)
	assert.Equal(t, fmt.Sprint(5000+n-1), out.Stacks[MaxStacks].TID, "the active thread past the cap")
	var sum []string
	for _, is := range issues {
		if is.Kind == facts.IssueSummarized {
			sum = append(sum, is.Detail)
		}
	}
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], fmt.Sprintf("%d threads", n))
}
