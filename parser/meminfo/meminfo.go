// Package meminfo reads the host memory and disk snapshots of a bundle:
// /proc/meminfo (and the per-node files under /sys/devices/system/node),
// `free` in every procps layout and unit, `df` (-h, -k, -T, -P, -B), and a
// cgroup's memory.events (v2) or memory.oom_control (v1).
package meminfo

import (
	"bytes"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Sniff recognizes the four formats by content; the name only breaks ties
// and gives a weak guess for empty or unreadable content.
func Sniff(name string, head []byte) (facts.Kind, int) {
	n := strings.ToLower(name)
	lines := headLines(head, 64)
	if k, s := sniffMeminfo(lines); s > 0 {
		return k, s
	}
	if s := sniffFree(lines); s > 0 {
		return facts.KindFree, s
	}
	if s := sniffDF(lines); s > 0 {
		return facts.KindDF, s
	}
	if s := sniffCgroup(lines, n); s > 0 {
		return facts.KindCgroupMemory, s
	}
	switch {
	case strings.Contains(n, "meminfo"):
		return facts.KindMeminfo, 20
	case strings.HasPrefix(n, "free"):
		return facts.KindFree, 15
	case strings.HasPrefix(n, "df"):
		return facts.KindDF, 15
	case strings.HasPrefix(n, "memory.events") || strings.HasPrefix(n, "memory.oom_control"):
		return facts.KindCgroupMemory, 25
	}
	return "", 0
}

// Parse reads one of the four formats, as sniffed.
func Parse(in *textio.Input, kind facts.Kind, out *facts.Facts) {
	switch kind {
	case facts.KindMeminfo:
		parseMeminfo(in, out)
	case facts.KindFree:
		parseFree(in, out)
	case facts.KindDF:
		parseDF(in, out)
	case facts.KindCgroupMemory:
		parseCgroup(in, out)
	default:
		in.IssueAt(0, facts.IssueUnrecognized, "the meminfo parser does not read kind %q", kind)
	}
}

// headLines splits the first lines of head, without a last line the head
// limit may have cut (unless it is the only one).
func headLines(head []byte, max int) [][]byte {
	var out [][]byte
	for len(head) > 0 && len(out) < max {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			if len(out) == 0 || len(head) < 8<<10 {
				out = append(out, bytes.TrimRight(head, "\r"))
			}
			break
		}
		out = append(out, bytes.TrimRight(head[:i], "\r"))
		head = head[i+1:]
	}
	return out
}

// fields splits on runs of blanks without allocating more than the slice.
func fields(b []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	i := 0
	for i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\t' {
			j++
		}
		if j > i {
			dst = append(dst, b[i:j])
		}
		i = j
	}
	return dst
}

// atoi64 reads a decimal without sign; ok is false for anything else.
func atoi64(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func isBlank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }
