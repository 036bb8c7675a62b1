package meminfo

import (
	"bytes"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// meminfoLine splits "MemTotal:       263998500 kB" (and the per-node form
// "Node 0 MemTotal: ..."). The value is KiB when unit is true, a count
// otherwise (HugePages_Total).
func meminfoLine(b []byte) (key []byte, v int64, kb bool, ok bool) {
	b = bytes.TrimSpace(b)
	if rest, found := bytes.CutPrefix(b, []byte("Node ")); found {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(rest) || rest[i] != ' ' {
			return nil, 0, false, false
		}
		b = bytes.TrimLeft(rest[i:], " ")
	}
	c := bytes.IndexByte(b, ':')
	if c <= 0 || bytes.IndexByte(b[:c], ' ') >= 0 {
		return nil, 0, false, false
	}
	key = b[:c]
	val := bytes.TrimSpace(b[c+1:])
	if num, found := bytes.CutSuffix(val, []byte(" kB")); found {
		val, kb = bytes.TrimSpace(num), true
	}
	v, ok = atoi64(val)
	return key, v, kb, ok
}

func sniffMeminfo(lines [][]byte) (facts.Kind, int) {
	n, match, total := 0, 0, false
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		n++
		if key, _, _, ok := meminfoLine(l); ok {
			match++
			if string(key) == "MemTotal" {
				total = true
			}
		}
	}
	switch {
	case n == 0:
		return "", 0
	case total && match >= 3 && match*10 >= n*8:
		return facts.KindMeminfo, 95
	case match >= 5 && match*10 >= n*9:
		return facts.KindMeminfo, 60
	}
	return "", 0
}

// parseMeminfo reads one or more meminfo dumps: a key seen twice starts a
// new snapshot (a file of several captures, or of several NUMA nodes).
func parseMeminfo(in *textio.Input, out *facts.Facts) {
	var cur *facts.MemSnapshot
	var kept memCap
	defer kept.flush(in, out)
	// A file of many snapshots repeats the same keys: allocate each once.
	names := map[string]string{}
	for in.Scan() {
		line := in.Bytes()
		if isBlank(line) {
			continue
		}
		key, v, _, ok := meminfoLine(line)
		if !ok {
			in.Issuef(facts.IssueMalformed, "not a meminfo line (Key: value [kB])")
			continue
		}
		if cur != nil {
			if _, dup := cur.Fields[string(key)]; dup {
				finishMem(cur)
				cur = nil
			}
		}
		if cur == nil {
			cur = &facts.MemSnapshot{Src: in.Src(), Format: facts.KindMeminfo, Fields: make(map[string]int64, 64)}
			kept.add(cur)
		}
		name, ok := names[string(key)]
		if !ok {
			name = string(key)
			names[name] = name
		}
		cur.Fields[name] = v
	}
	if cur != nil {
		finishMem(cur)
	}
}

// finishMem fills the named values from the fields.
func finishMem(m *facts.MemSnapshot) {
	get := func(k string) facts.Val {
		if v, ok := m.Fields[k]; ok {
			return facts.V(float64(v))
		}
		return facts.Val{}
	}
	m.TotalKB = get("MemTotal")
	m.FreeKB = get("MemFree")
	m.AvailKB = get("MemAvailable")
	m.CachedKB = get("Cached")
	m.ShmemKB = get("Shmem")
	m.SwapTotal = get("SwapTotal")
	m.SwapFree = get("SwapFree")
}
