package nvsmi

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

// A CSV naming more GPUs than MaxGPUs, or more processes than MaxGPUProcs,
// in one snapshot keeps the first ones and counts the rest (issue 18, item
// 3: a million rows took 810 MB and over 5 minutes).
func TestHugeCSV(t *testing.T) {
	var b strings.Builder
	b.WriteString("index, name, pci.bus_id, utilization.gpu [%], memory.used [MiB]\n")
	const n = 20_000
	for i := range n {
		fmt.Fprintf(&b, "%d, NVIDIA H200, %08X:%02X:%02X.0, %d %%, %d MiB\n", i, i>>16, i>>8&0xff, i&0xff, i%101, i)
	}
	p := parseString("gpus.csv", b.String(), facts.KindNvidiaSMICSV)
	require.Len(t, p.out.GPUs, 1)
	s := p.out.GPUs[0]
	assert.Len(t, s.GPUs, MaxGPUs)
	assert.Equal(t, n-MaxGPUs, s.OmittedGPUs)
	sum := summarized(p.issues)
	require.Len(t, sum, 1)
	assert.Contains(t, sum[0], fmt.Sprintf("a snapshot of %d GPUs: kept the first %d", n, MaxGPUs))

	b.Reset()
	b.WriteString("pid, process_name, used_gpu_memory [MiB]\n")
	for i := range n {
		fmt.Fprintf(&b, "%d, python3, %d MiB\n", 1000+i, i%1000)
	}
	p = parseString("apps.csv", b.String(), facts.KindNvidiaSMICSV)
	require.Len(t, p.out.GPUs, 1)
	assert.Len(t, p.out.GPUs[0].Procs, MaxGPUProcs)
	assert.Equal(t, n-MaxGPUProcs, p.out.GPUs[0].OmittedProcs)
	require.Len(t, summarized(p.issues), 1)
}
