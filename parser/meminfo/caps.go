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

// memCap keeps the first snapshots and, in a ring, the last.
type memCap struct {
	head, ring []*facts.MemSnapshot
	next       int
	dropped    int
}

func (c *memCap) add(m *facts.MemSnapshot) {
	switch {
	case len(c.head) < MaxMemSnapshots/2:
		c.head = append(c.head, m)
	case len(c.ring) < MaxMemSnapshots/2:
		c.ring = append(c.ring, m)
	default:
		c.ring[c.next] = m
		c.next = (c.next + 1) % len(c.ring)
		c.dropped++
	}
}

func (c *memCap) flush(in *textio.Input, out *facts.Facts) {
	out.Memory = append(out.Memory, c.head...)
	out.Memory = append(out.Memory, c.ring[c.next:]...)
	out.Memory = append(out.Memory, c.ring[:c.next]...)
	if c.dropped > 0 {
		in.IssueAt(0, facts.IssueSummarized, "%d memory snapshots: kept the first %d and the last %d; the %d between were counted, not kept",
			len(c.head)+len(c.ring)+c.dropped, len(c.head), len(c.ring), c.dropped)
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
