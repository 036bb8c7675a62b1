package meminfo

import (
	"bytes"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// cgroupKeys are the counters of memory.events (v2) and memory.oom_control (v1).
var cgroupKeys = map[string]bool{
	"low": true, "high": true, "max": true, "oom": true, "oom_kill": true, "oom_group_kill": true,
	"sock_throttled": true, "oom_kill_disable": true, "under_oom": true,
}

// cgroupLine splits "oom_kill 1".
func cgroupLine(b []byte) (key []byte, v int64, ok bool) {
	b = bytes.TrimSpace(b)
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 {
		return nil, 0, false
	}
	key = b[:sp]
	v, ok = atoi64(bytes.TrimSpace(b[sp+1:]))
	return key, v, ok
}

func sniffCgroup(lines [][]byte, name string) int {
	n, known, oom := 0, 0, false
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		n++
		key, _, ok := cgroupLine(l)
		if !ok {
			return 0
		}
		if cgroupKeys[string(key)] {
			known++
		}
		oom = oom || string(key) == "oom_kill" || string(key) == "oom"
	}
	switch {
	case n >= 3 && known == n && oom:
		return 90
	case n >= 2 && known == n:
		s := 50
		if name == "memory.events" || name == "memory.events.local" || name == "memory.oom_control" {
			s = 80
		}
		return s
	}
	return 0
}

func parseCgroup(in *textio.Input, out *facts.Facts) {
	var cg *facts.CgroupMemory
	for in.Scan() {
		line := in.Bytes()
		if isBlank(line) {
			continue
		}
		key, v, ok := cgroupLine(line)
		if !ok {
			in.Issuef(facts.IssueMalformed, "not a memory.events line (name count)")
			continue
		}
		if cg == nil {
			cg = &facts.CgroupMemory{Src: in.Src(), Events: map[string]int64{}}
			out.Cgroups = append(out.Cgroups, cg)
		}
		cg.Events[string(key)] = v
	}
}
