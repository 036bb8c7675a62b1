package kernlog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// TestManyEventsAreSummarized: a kernel log of more events than MaxEvents
// keeps the first and last halves and says so as a summary, not as the
// size limit, which stops the reading and asks for --max-bytes (every
// line was read here).
func TestManyEventsAreSummarized(t *testing.T) {
	var b strings.Builder
	n := MaxEvents + 500
	for i := range n {
		fmt.Fprintf(&b, "[%d.123456] NVRM: Xid (PCI:0000:18:00): 79, pid=%d, GPU has fallen off the bus.\n", i, i)
	}
	out, issues := parseString("dmesg.txt", b.String())
	require.Len(t, out.Kernel, MaxEvents)
	require.Len(t, issues, 1)
	assert.Equal(t, facts.IssueSummarized, issues[0].Kind)
	assert.Equal(t, fmt.Sprintf("%d kernel events: kept the first %d and the last %d; the 500 between were counted, not kept", n, MaxEvents/2, MaxEvents/2), issues[0].Detail)
}
