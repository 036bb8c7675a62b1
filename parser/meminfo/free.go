package meminfo

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"regexp"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// free prints a header of column names and one row per memory kind:
//
//	               total        used        free      shared  buff/cache   available
//	Mem:          257811         612      255373           7        2054      257198
//	Swap:              0           0           0
//
// procps before 3.3.10 printed "buffers cached" and a "-/+ buffers/cache:"
// row, -w splits buff/cache, -t adds "Total:", -l "Low:"/"High:". The numbers
// carry no unit unless -h was given (251Gi, 3.8G, 0B): the unit comes from an
// echoed command, the file name, or the size of the machine.

func sniffFree(lines [][]byte) int {
	var buf [16][]byte
	header := false
	for _, l := range lines {
		f := fields(l, buf[:0])
		if len(f) == 0 {
			continue
		}
		if isFreeHeader(f) {
			header = true
			continue
		}
		if header && string(f[0]) == "Mem:" {
			return 95
		}
	}
	return 0
}

func isFreeHeader(f [][]byte) bool {
	if len(f) < 3 || string(f[0]) != "total" {
		return false
	}
	for _, w := range f[1:] {
		if string(w) == "used" || string(w) == "free" {
			return true
		}
	}
	return false
}

// unitKiB are the free unit flags and their size in KiB.
var unitKiB = map[string]float64{
	"b": 1.0 / 1024, "bytes": 1.0 / 1024,
	"k": 1, "kibi": 1, "m": 1024, "mebi": 1024, "g": 1 << 20, "gibi": 1 << 20, "tebi": 1 << 30, "pebi": 1 << 40,
	"kilo": 1000.0 / 1024, "mega": 1e6 / 1024, "giga": 1e9 / 1024, "tera": 1e12 / 1024, "peta": 1e15 / 1024,
}

var unitNames = map[float64]string{1.0 / 1024: "bytes (free -b)", 1: "KiB (free -k, the default)", 1024: "MiB (free -m)", 1 << 20: "GiB (free -g)"}

// freeNameRe finds a unit flag in a file name: free-m.txt, free_-g.out.
var freeNameRe = regexp.MustCompile(`free[-_ ]*-?-?(b|k|m|g|bytes|kibi|mebi|gibi|tebi)(?:[^a-z]|$)`)

// unitFromCommand reads the unit flags of an echoed `free` command.
func unitFromCommand(line string) (float64, bool) {
	f := strings.Fields(strings.TrimLeft(line, "$# "))
	if len(f) == 0 || path.Base(f[0]) != "free" {
		return 0, false
	}
	unit, found, si := 1.0, false, false
	for _, a := range f[1:] {
		switch {
		case a == "--si":
			si = true
		case strings.HasPrefix(a, "--"):
			if u, ok := unitKiB[a[2:]]; ok {
				unit, found = u, true
			}
		case strings.HasPrefix(a, "-"):
			for _, c := range a[1:] {
				if u, ok := unitKiB[string(c)]; ok {
					unit, found = u, true
				}
			}
		}
	}
	if si && found {
		// --si makes -k/-m/-g count in powers of 1000.
		switch unit {
		case 1:
			unit = unitKiB["kilo"]
		case 1024:
			unit = unitKiB["mega"]
		case 1 << 20:
			unit = unitKiB["giga"]
		}
	}
	return unit, true
}

type freeParser struct {
	kept memCap
	in   *textio.Input
	out  *facts.Facts
	cols []string // column names of the current header
	cur  *facts.MemSnapshot
	unit float64 // KiB per printed number; 0 until known
	// hint is the unit an echoed command or the file name gave.
	hint float64
}

func parseFree(in *textio.Input, out *facts.Facts) {
	p := &freeParser{in: in, out: out}
	if m := freeNameRe.FindStringSubmatch(strings.ToLower(path.Base(in.Path))); m != nil {
		p.hint = unitKiB[m[1]]
	}
	var buf [16][]byte
	for in.Scan() {
		line := in.Bytes()
		f := fields(line, buf[:0])
		if len(f) == 0 {
			continue
		}
		switch {
		case isFreeHeader(f):
			p.cols = p.cols[:0]
			for _, w := range f {
				p.cols = append(p.cols, string(w))
			}
			p.cur = nil
		case len(f) >= 2 && string(f[0]) == "-/+" && string(f[1]) == "buffers/cache:":
			p.row("BuffersCache", f[2:], []string{"used", "free"})
		case f[0][len(f[0])-1] == ':' && len(f) >= 2:
			if p.cols == nil {
				in.Issuef(facts.IssueMalformed, "a free row before any header line")
				continue
			}
			label := string(f[0][:len(f[0])-1])
			if label == "Mem" {
				p.cur = &facts.MemSnapshot{Src: in.Src(), Format: facts.KindFree, Fields: map[string]int64{}}
				p.kept.add(p.cur)
			}
			p.row(label, f[1:], p.cols)
		default:
			if u, ok := unitFromCommand(string(line)); ok {
				p.hint = u
				continue
			}
			in.Issuef(facts.IssueMalformed, "not a free header or row")
		}
	}
	p.kept.flush(in, out)
	for _, m := range p.out.Memory {
		if m.Format == facts.KindFree {
			finishFree(m)
		}
	}
}

// row stores the values of one row under the names of its columns.
func (p *freeParser) row(label string, vals [][]byte, cols []string) {
	if p.cur == nil {
		p.in.Issuef(facts.IssueMalformed, "a %s row without a Mem: row before it", label)
		return
	}
	if len(vals) > len(cols) {
		p.in.Issuef(facts.IssueMalformed, "%d values under %d columns", len(vals), len(cols))
		vals = vals[:len(cols)]
	}
	for i, v := range vals {
		kib, ok := p.value(v, label == "Mem" && cols[i] == "total")
		if !ok {
			p.in.Issuef(facts.IssueMalformed, "%s %s: not a size: %q", label, cols[i], v)
			continue
		}
		p.cur.Fields[freeKey(label, cols[i])] = kib
	}
}

// value converts one number to KiB. The first Mem total fixes the unit of
// plain numbers when nothing else did.
func (p *freeParser) value(b []byte, memTotal bool) (int64, bool) {
	x, perKiB, ok := parseSize(b)
	if !ok {
		return 0, false
	}
	if perKiB == 0 {
		if p.unit == 0 {
			p.unit = p.hint
			if p.unit == 0 && memTotal {
				p.unit = guessUnit(x)
				p.out.Assumptions = append(p.out.Assumptions, fmt.Sprintf(
					"%s: free printed no unit; read its numbers as %s, which makes total memory %s",
					p.in.Src(), unitNames[p.unit], humanKiB(x*p.unit)))
			}
			if p.unit == 0 {
				p.unit = 1
			}
		}
		perKiB = p.unit
	}
	return int64(math.Round(x * perKiB)), true
}

// guessUnit picks the unit that puts a machine's total memory between 8 GiB
// and 8 TiB: the units are 1024 apart, so exactly one does.
func guessUnit(total float64) float64 {
	for _, u := range []float64{1.0 / 1024, 1, 1024, 1 << 20} {
		kib := total * u
		if kib >= 8<<20 && kib < 8<<30 {
			return u
		}
	}
	return 1
}

func humanKiB(kib float64) string {
	switch {
	case kib >= 1<<30:
		return fmt.Sprintf("%.1f TiB", kib/(1<<30))
	case kib >= 1<<20:
		return fmt.Sprintf("%.1f GiB", kib/(1<<20))
	case kib >= 1<<10:
		return fmt.Sprintf("%.1f MiB", kib/(1<<10))
	}
	return fmt.Sprintf("%.0f KiB", kib)
}

// freeKey names a value like /proc/meminfo does where it can.
func freeKey(label, col string) string {
	if label == "Mem" {
		switch col {
		case "total":
			return "MemTotal"
		case "used":
			return "MemUsed"
		case "free":
			return "MemFree"
		case "shared":
			return "Shmem"
		case "buffers":
			return "Buffers"
		case "cache", "cached":
			return "Cached"
		case "buff/cache":
			return "BuffCache"
		case "available":
			return "MemAvailable"
		}
	}
	switch col {
	case "buff/cache":
		col = "BuffCache"
	case "cache":
		col = "Cached"
	default:
		if col != "" {
			col = strings.ToUpper(col[:1]) + col[1:]
		}
	}
	return label + col
}

func finishFree(m *facts.MemSnapshot) {
	finishMem(m)
	// CachedKB is what free shows as cache: buff/cache since procps 3.3.10,
	// the cached column before.
	if v, ok := m.Fields["BuffCache"]; ok {
		m.CachedKB = facts.V(float64(v))
	}
}

// parseSize reads a plain number "257811" (perKiB 0: its unit is the
// caller's to know) or a human size "251Gi", "3.8G", "828Ki", "0B", "1,8T",
// "512kB" (x*perKiB is the size in KiB).
func parseSize(b []byte) (x, perKiB float64, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, 0, false
	}
	i := 0
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '.' || b[i] == ',') {
		i++
	}
	if i == 0 {
		return 0, 0, false
	}
	num := b[:i]
	var v float64
	var frac float64
	seenDot := false
	for _, c := range num {
		switch {
		case c == '.' || c == ',':
			if seenDot {
				return 0, 0, false
			}
			seenDot, frac = true, 1
		case seenDot:
			frac /= 10
			v += float64(c-'0') * frac
		default:
			v = v*10 + float64(c-'0')
		}
	}
	suffix := string(b[i:])
	if suffix == "" {
		if seenDot {
			return 0, 0, false // a fraction needs a unit
		}
		return v, 0, true
	}
	per, known := suffixKiB[suffix]
	if !known {
		return 0, 0, false
	}
	return v, per, true
}

// suffixKiB maps the suffixes of human sizes (free -h, df -h) to KiB. A bare
// letter is read as a power of 1024: old procps and df -h print it so.
var suffixKiB = map[string]float64{
	"B": 1.0 / 1024,
	"K": 1, "Ki": 1, "k": 1,
	"M": 1 << 10, "Mi": 1 << 10,
	"G": 1 << 20, "Gi": 1 << 20,
	"T": 1 << 30, "Ti": 1 << 30,
	"P": 1 << 40, "Pi": 1 << 40,
	"E": 1 << 50, "Ei": 1 << 50,
	"kB": 1000.0 / 1024, "MB": 1e6 / 1024, "GB": 1e9 / 1024, "TB": 1e12 / 1024, "PB": 1e15 / 1024,
}
