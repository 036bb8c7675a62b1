package procs

import (
	"bytes"
	"regexp"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

// The summary lines of top. They are few, so regexps are affordable here.
var (
	// " 04:27:21 up 3 min,", "up 10 days,  3:02,", "up 1 day, 47 min,", "up  3:02,"
	topUptime = regexp.MustCompile(`\bup\s+(?:(\d+)\s+days?,\s*)?(?:(\d+):(\d\d)|(\d+)\s+min)?`)
	topUsers  = regexp.MustCompile(`(\d+)\s+users?\b`)
	// A decimal comma (LC_NUMERIC=de_DE) makes "1,16, 0,53, 0,21".
	topLoad  = regexp.MustCompile(`load average:\s*(\d+[.,]\d+),?\s+(\d+[.,]\d+),?\s+(\d+[.,]\d+)`)
	topTasks = regexp.MustCompile(`(\d+)\s+(total|running|sleeping|sleep|d-sleep|stopped|zombie)\b`)
	// "5.6 us," (procps-ng) or "5.6%us," (procps 3.2).
	topCPU = regexp.MustCompile(`(\d+(?:[.,]\d+)?)\s*%?\s*(us|sy|ni|id|wa|hi|si|st)\b`)
	// "257811.0 total," (procps-ng, unit in front) or "16333060k total," (3.2).
	topMem = regexp.MustCompile(`(\d+(?:[.,]\d+)?)(k)?\+?\s+(total|free|used|buff/cache|buffers|cached|avail)\b`)
)

// startTop begins a top frame at its first line:
// "top - 04:27:21 up 3 min,  0 user,  load average: 1.16, 0.53, 0.21".
func (p *parser) startTop(line []byte) {
	p.endSnapshot()
	p.newSnapshot("top")
	p.hdr = header{}
	p.topSummary = true
	s := p.snap
	rest := line[len("top - "):]
	read := false
	if len(rest) >= 8 {
		if _, _, _, ok := parseClock(rest[:8]); ok {
			s.TimeOfDay = string(rest[:8])
			read = true
		}
	}
	if m := topUptime.FindSubmatch(rest); m != nil && (m[1] != nil || m[2] != nil || m[4] != nil) {
		var d time.Duration
		if m[1] != nil {
			n, _ := parseUint(m[1])
			d += time.Duration(min(n, maxSeconds/86400)) * 24 * time.Hour
		}
		if m[2] != nil {
			h, _ := parseUint(m[2])
			mi, _ := parseUint(m[3])
			d += time.Duration(min(h, 1<<20))*time.Hour + time.Duration(mi)*time.Minute
		}
		if m[4] != nil {
			mi, _ := parseUint(m[4])
			d += time.Duration(min(mi, 1<<30)) * time.Minute
		}
		s.Uptime = d
		read = true
	}
	if m := topUsers.FindSubmatch(rest); m != nil {
		n, _ := parseUint(m[1])
		s.Users = int(min(n, 1<<30))
	}
	if m := topLoad.FindSubmatch(rest); m != nil {
		for i := range 3 {
			s.LoadAvg[i], _ = parseFloat(m[i+1])
		}
		read = true
	}
	if !read {
		p.issuef(p.in.Line(), facts.IssueMalformed, "top header without time, uptime or load average: %q", clip(line))
	}
}

// topLine reads a summary line of a top frame.
func (p *parser) topLine(line []byte) {
	s := p.snap
	t := bytes.TrimSpace(line)
	switch {
	case bytes.HasPrefix(t, []byte("Tasks:")):
		tc := &facts.TaskCounts{DSleep: -1}
		for _, m := range topTasks.FindAllSubmatch(t, -1) {
			n64, _ := parseUint(m[1])
			n := int(min(n64, 1<<30))
			switch string(m[2]) {
			case "total":
				tc.Total = n
			case "running":
				tc.Running = n
			case "sleeping", "sleep":
				tc.Sleeping = n
			case "d-sleep":
				tc.DSleep = n
			case "stopped":
				tc.Stopped = n
			case "zombie":
				tc.Zombie = n
			}
		}
		s.Tasks = tc
	case bytes.HasPrefix(t, []byte("Threads:")):
		// top -H counts threads here; the rows say more.
	case bytes.HasPrefix(t, []byte("%Cpu(s)")), bytes.HasPrefix(t, []byte("Cpu(s)")):
		c := &facts.CPUSummary{}
		for _, m := range topCPU.FindAllSubmatch(t, -1) {
			v, _ := parseFloat(m[1])
			switch string(m[2]) {
			case "us":
				c.User = v
			case "sy":
				c.System = v
			case "ni":
				c.Nice = v
			case "id":
				c.Idle = v
			case "wa":
				c.IOWait = v
			case "hi":
				c.HardIRQ = v
			case "si":
				c.SoftIRQ = v
			case "st":
				c.Steal = v
			}
		}
		s.CPU = c
	case bytes.HasPrefix(t, []byte("%Cpu")), bytes.HasPrefix(t, []byte("Cpu")), bytes.HasPrefix(t, []byte("%Node")):
		// Per-CPU and per-node lines (top's 1 and 3 toggles).
	case bytes.Contains(t, []byte("Mem")) || bytes.Contains(t, []byte("Swap")):
		p.topMemory(t)
	default:
		p.issuef(p.in.Line(), facts.IssueUnrecognized, "unrecognized line in top's summary: %q", clip(line))
	}
}

// topMemory reads "MiB Mem : 257811.0 total, 252873.9 free, ..." and the
// Swap line, converting the unit top printed to KiB.
func (p *parser) topMemory(t []byte) {
	s := p.snap
	if s.Mem == nil {
		s.Mem = &facts.MemSummary{TotalKB: -1, FreeKB: -1, UsedKB: -1, BuffCacheKB: -1, AvailKB: -1,
			SwapTotalKB: -1, SwapFreeKB: -1, SwapUsedKB: -1}
	}
	unit := 1.0
	switch {
	case bytes.HasPrefix(t, []byte("MiB")):
		unit = 1 << 10
	case bytes.HasPrefix(t, []byte("GiB")):
		unit = 1 << 20
	case bytes.HasPrefix(t, []byte("TiB")):
		unit = 1 << 30
	case bytes.HasPrefix(t, []byte("PiB")):
		unit = 1 << 40
	case bytes.HasPrefix(t, []byte("EiB")):
		unit = 1 << 50
	}
	colon := bytes.IndexByte(t, ':')
	if colon < 0 {
		p.issuef(p.in.Line(), facts.IssueUnrecognized, "unrecognized line in top's summary: %q", clip(t))
		return
	}
	swap := bytes.Contains(t[:colon], []byte("Swap"))
	m := s.Mem
	add := func(dst *int64, v int64) {
		if *dst < 0 {
			*dst = 0
		}
		*dst += v
	}
	for _, g := range topMem.FindAllSubmatch(t[colon:], -1) {
		f, ok := parseFloat(g[1])
		if !ok || f < 0 || f*unit > 1<<62 {
			continue
		}
		kb := int64(f*unit + 0.5)
		switch string(g[3]) {
		case "total":
			if swap {
				m.SwapTotalKB = kb
			} else {
				m.TotalKB = kb
			}
		case "free":
			if swap {
				m.SwapFreeKB = kb
			} else {
				m.FreeKB = kb
			}
		case "used":
			if swap {
				m.SwapUsedKB = kb
			} else {
				m.UsedKB = kb
			}
		case "buff/cache", "buffers", "cached":
			// procps 3.2 prints buffers on the Mem line, cached on the Swap line.
			add(&m.BuffCacheKB, kb)
		case "avail":
			m.AvailKB = kb
		}
	}
}
