package collect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/internal/escape"
)

// Summary says what a collect captured, what failed and what it skipped,
// the way nvidia-bug-report ends: printed always, so that a collect that
// could not do something never looks like one that did.
type Summary struct {
	// Captured counts the files written (the manifest aside).
	Captured int
	// Failed and Skipped are one line each, like captures (a program on
	// one node, failing the same way) counted once with their number.
	Failed, Skipped []string
	// Replaced counts the failed captures that a fallback made good (ps
	// written from /proc, journalctl for dmesg): not failures. Empty
	// counts the commands that ran well and printed nothing to keep (a
	// kernel log without a GPU, OOM or hung-task line).
	Replaced, Empty int
	// FailedN and SkippedN count the captures behind the lines.
	FailedN, SkippedN int
}

// summarize reads the records: a capture that failed is a failure unless
// a later record of the same file was written.
func (c *collector) summarize() Summary {
	var s Summary
	written := map[string]bool{}
	for _, k := range c.arts {
		if k.a.Path != "" {
			written[k.key] = true
			s.Captured++
		}
	}
	failed, skipped := map[string]int{}, map[string]int{}
	var fOrder, sOrder []string
	add := func(m map[string]int, order *[]string, line string) {
		if m[line] == 0 {
			*order = append(*order, line)
		}
		m[line]++
	}
	for _, k := range c.arts {
		a := k.a
		if a.Path != "" && a.Error == "" && a.ExitCode == 0 {
			continue
		}
		where := ""
		if rest, ok := strings.CutPrefix(k.key, "nodes/"); ok {
			node, _, _ := strings.Cut(rest, "/")
			where = node + ": "
		}
		what := a.Program
		if what == "" || what == "coroner" {
			what = a.Command
		}
		switch {
		case a.Skipped != "":
			s.SkippedN++
			add(skipped, &sOrder, where+what+": "+a.Skipped)
			continue
		case a.Path == "" && written[k.key]:
			s.Replaced++
			continue
		case a.Path == "" && a.ExitCode == 0 && a.Error == "" && !a.NotFound && !a.TimedOut:
			s.Empty++
			continue
		}
		s.FailedN++
		switch {
		case a.NotFound:
			add(failed, &fOrder, where+what+": not found")
		case a.TimedOut:
			add(failed, &fOrder, fmt.Sprintf("%s%s: timed out after %gs", where, what, a.TimeoutS))
		case a.Path == "" || a.Error != "":
			why := a.Error
			if a.Stderr != "" {
				why += ": " + firstLine(a.Stderr)
			}
			if why == "" {
				why = "no output"
			}
			add(failed, &fOrder, where+what+": "+why)
		}
	}
	count := func(m map[string]int, order []string) []string {
		var out []string
		for _, l := range order {
			if n := m[l]; n > 1 {
				l += fmt.Sprintf(" (%d times)", n)
			}
			out = append(out, l)
		}
		return out
	}
	s.Failed, s.Skipped = count(failed, fOrder), count(skipped, sOrder)
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Lines renders the summary of a capture for stderr, one finding a line:
// the server or cluster, what was captured, each node's state, each
// failure and skip (at most max of each, then a count).
func (c *Capture) Lines(max int) []string {
	var out []string
	switch {
	case c.Cluster != nil:
		ok := 0
		for _, n := range c.Nodes {
			if n.Status != "failed" {
				ok++
			}
		}
		out = append(out, fmt.Sprintf("%s through %s: %d of %d nodes answered", c.Cluster.Kind, c.Cluster.Tool, ok, len(c.Nodes)))
		nodes := append(c.Nodes[:0:0], c.Nodes...)
		sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
		for _, n := range nodes {
			l := "  node " + n.Name
			if n.Host != "" && n.Host != n.Name {
				l += " (" + n.Host + ")"
			}
			l += ": " + n.Status
			if n.Error != "" {
				l += ": " + n.Error
			}
			out = append(out, l)
		}
	case c.Target != nil && len(c.Target.PIDs) > 0:
		l := fmt.Sprintf("server: %s, %d %s", orDefault(c.Target.Engine, "engine unknown"), len(c.Target.PIDs), plural(len(c.Target.PIDs), "process", "processes"))
		if c.Target.MainPID > 0 {
			l += fmt.Sprintf(", main pid %d", c.Target.MainPID)
		}
		out = append(out, l+" ("+c.Target.How+")")
	}
	if c.Missing != "" {
		out = append(out, "not there: "+c.Missing)
	}
	s := c.Summary
	l := fmt.Sprintf("captured %d files", s.Captured)
	if s.Replaced > 0 {
		l += fmt.Sprintf("; %d failed first %s made good by a fallback", s.Replaced, plural(s.Replaced, "try was", "tries were"))
	}
	if s.Empty > 0 {
		l += fmt.Sprintf("; %d %s printed nothing to keep", s.Empty, plural(s.Empty, "command", "commands"))
	}
	out = append(out, l)
	list := func(head string, n int, items []string) {
		if len(items) == 0 {
			return
		}
		out = append(out, fmt.Sprintf("%s %d:", head, n))
		for i, it := range items {
			if i == max {
				out = append(out, fmt.Sprintf("  and %d more (the manifest lists every capture)", len(items)-max))
				break
			}
			out = append(out, "  "+it)
		}
	}
	list("failed", s.FailedN, s.Failed)
	list("skipped", s.SkippedN, s.Skipped)
	// Node errors, stderr and program names come from other users and
	// other machines: each line is one line of plain text on a terminal.
	for i, l := range out {
		out[i] = escape.Line(l)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
