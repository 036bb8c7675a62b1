package meminfo

import (
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// What one file keeps is bounded by records, not lines: a loop of
// `free` or /proc/meminfo captures keeps its first and last
// MaxMemSnapshots/2 snapshots; a df of a host with thousands of container
// mounts keeps its first MaxDisks/2 rows and, up to MaxDisks, the mounts
// that matter (/, /dev/shm, /tmp and the usual model and data folders).
// The rest are counted and said on the file.
const (
	MaxMemSnapshots = 256
	MaxDisks        = 4096
)

// memCap keeps the first snapshots and the last.
type memCap struct {
	facts.FirstLast[*facts.MemSnapshot]
}

func (c *memCap) add(m *facts.MemSnapshot) {
	c.Max = MaxMemSnapshots
	c.Add(m)
}

func (c *memCap) flush(in *textio.Input, out *facts.Facts) {
	out.Memory = append(out.Memory, c.All()...)
	if c.Dropped > 0 {
		first, last := c.Kept()
		in.IssueAt(0, facts.IssueSummarized, "%d memory snapshots: kept the first %d and the last %d; the %d between were counted, not kept",
			first+last+c.Dropped, first, last, c.Dropped)
	}
}

// diskCap keeps a df's first rows and the mounts that matter.
type diskCap struct {
	kept, dropped int
}

func (c *diskCap) keep(d *facts.DiskUsage) bool {
	if c.kept < MaxDisks/2 || c.kept < MaxDisks && mountMatters(d.Mount) {
		c.kept++
		return true
	}
	c.dropped++
	return false
}

func (c *diskCap) report(in *textio.Input) {
	if c.dropped > 0 {
		in.IssueAt(0, facts.IssueSummarized, "%d file systems: kept the first %d and %d more of /, /dev/shm, /tmp and model or data folders; the other %d were counted, not kept",
			c.kept+c.dropped, min(c.kept, MaxDisks/2), max(c.kept-MaxDisks/2, 0), c.dropped)
	}
}

func mountMatters(m string) bool {
	switch m {
	case "/", "/dev/shm", "/tmp", "/var", "/home", "/root":
		return true
	}
	for _, p := range []string{"/data", "/models", "/model", "/mnt", "/raid", "/scratch", "/nfs", "/workspace", "/cache", "/home/", "/root/"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return strings.Contains(m, "huggingface") || strings.Contains(m, "hf_")
}
