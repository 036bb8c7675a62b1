package meminfo

import (
	"bytes"
	"math"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// df prints a header whose size column names the block size
// ("1K-blocks", "1024-blocks" with -P, "1M-blocks", "Size" with -h/-H) and
// one row per file system; -T adds a Type column. A long device name may
// sit alone on its line with the numbers on the next (old coreutils), and a
// mount point may contain blanks.

type dfCol uint8

const (
	dfOther dfCol = iota
	dfFS
	dfType
	dfSize
	dfUsed
	dfAvail
	dfMount
	dfInodes
)

func sniffDF(lines [][]byte) int {
	var buf [16][]byte
	for i, l := range lines {
		f := fields(l, buf[:0])
		if len(f) == 0 {
			continue
		}
		cols, _, ok := dfHeader(f)
		if !ok {
			continue
		}
		inodes := false
		for _, c := range cols {
			inodes = inodes || c == dfInodes
		}
		if inodes {
			return 0 // an inode listing holds no sizes
		}
		if i+1 < len(lines) {
			return 95
		}
		return 60
	}
	return 0
}

// dfHeader reads a header line: its column roles and the KiB per block of
// the size columns (0 for human sizes).
func dfHeader(f [][]byte) (cols []dfCol, perKiB float64, ok bool) {
	if len(f) < 4 || string(f[0]) != "Filesystem" {
		return nil, 0, false
	}
	mount := false
	for i := 0; i < len(f); i++ {
		w := string(f[i])
		switch {
		case w == "Filesystem":
			cols = append(cols, dfFS)
		case w == "Type":
			cols = append(cols, dfType)
		case w == "Size":
			cols = append(cols, dfSize)
		case strings.HasSuffix(w, "-blocks") || w == "blocks":
			per, good := blockKiB(strings.TrimSuffix(strings.TrimSuffix(w, "blocks"), "-"))
			if !good {
				return nil, 0, false
			}
			cols, perKiB = append(cols, dfSize), per
		case w == "Used":
			cols = append(cols, dfUsed)
		case w == "Avail" || w == "Available":
			cols = append(cols, dfAvail)
		case w == "Mounted" && i+1 < len(f) && string(f[i+1]) == "on":
			cols, mount = append(cols, dfMount), true
			i++
		case w == "Inodes" || w == "IUsed" || w == "IFree" || w == "IUse%":
			cols = append(cols, dfInodes)
		default:
			cols = append(cols, dfOther)
		}
	}
	return cols, perKiB, mount
}

// blockKiB reads a block size: "1K", "1024", "1M", "1B", "512", "1kB".
func blockKiB(s string) (float64, bool) {
	if s == "" {
		return 1, true // "blocks": 1 KiB on Linux
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, _ := atoi64([]byte(s[:i]))
	if s[i:] == "" {
		return float64(n) / 1024, true
	}
	per, ok := suffixKiB[s[i:]]
	return float64(n) * per, ok
}

func parseDF(in *textio.Input, out *facts.Facts) {
	var (
		cols    []dfCol
		perKiB  float64
		inodes  bool
		pending []byte // a device name printed alone on its line
		pendAt  int
		buf     [24][]byte
		kept    diskCap
	)
	defer kept.report(in)
	for in.Scan() {
		line := in.Bytes()
		f := fields(line, buf[:0])
		if len(f) == 0 {
			continue
		}
		if c, per, ok := dfHeader(f); ok {
			cols, perKiB, inodes, pending = c, per, false, nil
			for _, x := range c {
				inodes = inodes || x == dfInodes
			}
			continue
		}
		if bytes.HasPrefix(line, []byte("df: ")) {
			continue // df's own complaint about one mount; the others stand
		}
		if cols == nil {
			in.Issuef(facts.IssueMalformed, "a df row before any header line")
			continue
		}
		if inodes {
			continue
		}
		if len(f) == 1 && pending == nil && len(cols) > 1 {
			pending, pendAt = append([]byte(nil), f[0]...), in.Line()
			continue
		}
		if pending != nil {
			f = append([][]byte{pending}, f...)
			pending = nil
		}
		d, ok := dfRow(in, f, cols, perKiB)
		if !ok {
			continue
		}
		if kept.keep(d) {
			out.Disks = append(out.Disks, d)
		}
	}
	if pending != nil {
		in.IssueAt(pendAt, facts.IssueIncomplete, "file system %q without its sizes", pending)
	}
}

func dfRow(in *textio.Input, f [][]byte, cols []dfCol, perKiB float64) (*facts.DiskUsage, bool) {
	if len(f) < len(cols) {
		in.Issuef(facts.IssueMalformed, "%d fields under %d columns", len(f), len(cols))
		return nil, false
	}
	d := &facts.DiskUsage{Src: in.Src()}
	for i, c := range cols {
		v := f[i]
		switch c {
		case dfFS:
			d.Filesystem = string(v)
		case dfType:
			d.Type = string(v)
		case dfMount:
			// The mount point is the rest of the line, blanks and all.
			if i == len(cols)-1 {
				d.Mount = string(bytes.Join(f[i:], []byte{' '}))
			} else {
				d.Mount = string(v)
			}
		case dfSize, dfUsed, dfAvail:
			kib, ok := dfSize2KiB(v, perKiB)
			if !ok {
				in.Issuef(facts.IssueMalformed, "not a size: %q", v)
				return nil, false
			}
			switch c {
			case dfSize:
				d.SizeKB = kib
			case dfUsed:
				d.UsedKB = kib
			default:
				d.AvailKB = kib
			}
		}
	}
	return d, true
}

// dfSize2KiB reads a df size cell: a count of blocks, a human size, or "-"
// (a pseudo file system under df -a).
func dfSize2KiB(v []byte, perKiB float64) (int64, bool) {
	if string(v) == "-" {
		return 0, true
	}
	x, per, ok := parseSize(v)
	if !ok {
		return 0, false
	}
	if per == 0 {
		per = perKiB
		if per == 0 {
			per = 1.0 / 1024 // a bare number under "Size" is bytes
		}
	}
	return int64(math.Round(x * per)), true
}
