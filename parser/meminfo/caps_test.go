package meminfo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

func summarized(issues []facts.Issue) []string {
	var out []string
	for _, is := range issues {
		if is.Kind == facts.IssueSummarized {
			out = append(out, is.Detail)
		}
	}
	return out
}

// Files of many records keep a bounded view (issue 18, item 3): a loop of
// meminfo captures its first and last snapshots, a df of many mounts its
// first rows and the mounts that matter.
func TestManyRecords(t *testing.T) {
	var b strings.Builder
	const snaps = MaxMemSnapshots * 4
	for i := range snaps {
		fmt.Fprintf(&b, "MemTotal:       263855724 kB\nMemFree:        %d kB\nMemAvailable:   23456789 kB\n", i)
	}
	out, issues := parse("meminfo.txt", b.String(), facts.KindMeminfo)
	require.Len(t, out.Memory, MaxMemSnapshots)
	assert.Equal(t, float64(snaps-1), out.Memory[MaxMemSnapshots-1].FreeKB.V, "the last capture stays")
	require.Len(t, summarized(issues), 1)

	b.Reset()
	b.WriteString("Filesystem     1K-blocks      Used Available Use% Mounted on\n")
	const mounts = MaxDisks * 3
	for i := range mounts {
		fmt.Fprintf(&b, "/dev/loop%d 1000 500 500 50%% /snap/x%d\n", i, i)
	}
	b.WriteString("tmpfs 1000 999 1 99% /dev/shm\n")
	out, issues = parse("df.txt", b.String(), facts.KindDF)
	require.Len(t, out.Disks, MaxDisks/2+1)
	assert.Equal(t, "/dev/shm", out.Disks[MaxDisks/2].Mount)
	sum := summarized(issues)
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], fmt.Sprintf("%d file systems", mounts+1))
}
