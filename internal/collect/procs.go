package collect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// proc is what /proc says of one process.
type proc struct {
	pid, ppid   int
	comm        string
	argv        []string
	state       byte
	pgrp, sid   int
	tpgid       int
	nice        int
	threads     int
	startTicks  uint64
	utime       uint64
	stime       uint64
	vsizeBytes  uint64
	rssPages    int64
	kernelThing bool
}

// clockTicks is USER_HZ, 100 on every Linux ABI in use.
const clockTicks = 100

// readProcs reads every process under root (/proc). Processes that vanish
// while being read are skipped.
func readProcs(root string) []*proc {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []*proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p := readProc(root, pid); p != nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out
}

func readProc(root string, pid int) *proc {
	dir := filepath.Join(root, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return nil
	}
	// The comm field is in parentheses and may itself hold ") ".
	lp, rp := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if lp < 0 || rp < lp {
		return nil
	}
	p := &proc{pid: pid, comm: string(stat[lp+1 : rp])}
	f := strings.Fields(string(stat[rp+1:]))
	if len(f) < 22 {
		return nil
	}
	num := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	unum := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
	p.state = f[0][0]
	p.ppid = int(num(1))
	p.pgrp = int(num(2))
	p.sid = int(num(3))
	p.tpgid = int(num(5))
	p.utime, p.stime = unum(11), unum(12)
	p.nice = int(num(16))
	p.threads = int(num(17))
	p.startTicks = unum(19)
	p.vsizeBytes = unum(20)
	p.rssPages = num(21)
	if cl, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && len(cl) > 0 {
		for _, a := range bytes.Split(bytes.TrimRight(cl, "\x00"), []byte{0}) {
			p.argv = append(p.argv, string(a))
		}
	}
	p.kernelThing = len(p.argv) == 0 && (p.ppid == 2 || pid == 2)
	return p
}

// engineOf says which engine a process is a server of: a Python running
// the engine's module, the engine's own CLI, or a process title the engine
// set (sglang::scheduler_TP0, VLLM::EngineCore). A grep or a tail of the
// engine's log is none.
func engineOf(p *proc) string {
	if len(p.argv) == 0 {
		return ""
	}
	prog := filepath.Base(p.argv[0])
	title := strings.ToLower(p.argv[0])
	switch {
	case strings.HasPrefix(title, "sglang::") || prog == "sglang":
		return "sglang"
	case strings.HasPrefix(title, "vllm::") || prog == "vllm":
		return "vllm"
	case !strings.HasPrefix(prog, "python"):
		return ""
	}
	for _, a := range p.argv[1:] {
		a = strings.ToLower(a)
		switch {
		case strings.Contains(a, "sglang"):
			return "sglang"
		case strings.Contains(a, "vllm"):
			return "vllm"
		}
	}
	return ""
}

// target chooses the server's processes: --pid and its descendants, or
// every process of the --match engine (or of either, when neither flag is
// given). The collector and its children are never part of it.
type target struct {
	how     string
	engine  string
	mainPID int
	pids    []int
	procs   map[int]*proc
	model   string
}

func findTarget(ps []*proc, pid int, match string, self int) *target {
	byPID := map[int]*proc{}
	for _, p := range ps {
		byPID[p.pid] = p
	}
	t := &target{procs: map[int]*proc{}}
	mine := func(p *proc) bool {
		for q := p; q != nil; q = byPID[q.ppid] {
			if q.pid == self {
				return true
			}
			if q.ppid == q.pid || q.ppid == 0 {
				break
			}
		}
		return false
	}
	switch {
	case pid > 0:
		t.how = fmt.Sprintf("--pid %d", pid)
		if byPID[pid] != nil {
			t.procs[pid] = byPID[pid]
		}
	default:
		t.how = "auto (sglang or vllm processes)"
		if match != "" {
			t.how = "--match " + match
		}
		for _, p := range ps {
			if p.kernelThing || p.pid == self || mine(p) {
				continue
			}
			if e := engineOf(p); e != "" && (match == "" || e == match) {
				t.procs[p.pid] = p
			}
		}
	}
	// Descendants belong to the server (old vLLM workers are plain
	// multiprocessing children; a JIT build runs ninja and nvcc). Repeat
	// until nothing new is found: a child may have a lower pid after a wrap.
	for grew := true; grew; {
		grew = false
		for _, p := range ps {
			if t.procs[p.pid] == nil && t.procs[p.ppid] != nil && p.pid != self && !mine(p) {
				t.procs[p.pid] = p
				grew = true
			}
		}
	}
	for pid := range t.procs {
		t.pids = append(t.pids, pid)
	}
	sort.Ints(t.pids)
	// The main process is the first one whose parent is not in the set.
	for _, pid := range t.pids {
		if t.procs[t.procs[pid].ppid] == nil {
			t.mainPID = pid
			break
		}
	}
	// The engine is that of the lowest pid that shows one (a descendant
	// such as ninja shows none).
	for _, pid := range t.pids {
		if e := engineOf(t.procs[pid]); e != "" {
			t.engine = e
			break
		}
	}
	if m := t.procs[t.mainPID]; m != nil {
		t.model = modelOf(m.argv)
	}
	return t
}

// modelOf reads the model path from a launch command: --model-path,
// --model, or the argument after `vllm serve`.
func modelOf(argv []string) string {
	for i, a := range argv {
		for _, flag := range []string{"--model-path", "--model", "--model_path"} {
			if a == flag && i+1 < len(argv) {
				return argv[i+1]
			}
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				return v
			}
		}
		if a == "serve" && i > 0 && strings.Contains(filepath.Base(argv[i-1]), "vllm") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			return argv[i+1]
		}
	}
	return ""
}

// bootTime reads the boot time from /proc/stat.
func bootTime(root string) time.Time {
	data, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return time.Time{}
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0).UTC()
			}
		}
	}
	return time.Time{}
}

// psFromProc writes what `ps -eo pid,ppid,lstart,etimes,times,rss,vsz,stat,
// nlwp,comm,args` would, from /proc: the fallback where procps is not
// installed (slim containers). Times are in the host's local zone, as ps
// prints them.
func psFromProc(ps []*proc, boot, now time.Time, loc *time.Location) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%7s %7s %24s %7s %8s %8s %9s %-4s %4s %-15s %s\n",
		"PID", "PPID", "STARTED", "ELAPSED", "TIME", "RSS", "VSZ", "STAT", "NLWP", "COMMAND", "COMMAND")
	pageKB := int64(os.Getpagesize() / 1024)
	for _, p := range ps {
		start := boot.Add(time.Duration(p.startTicks) * time.Second / clockTicks)
		elapsed := int64(now.Sub(start) / time.Second)
		if elapsed < 0 {
			elapsed = 0
		}
		args := strings.Join(p.argv, " ")
		if args == "" {
			args = "[" + p.comm + "]"
		}
		comm := p.comm
		if len(comm) > 15 {
			comm = comm[:15]
		}
		fmt.Fprintf(&b, "%7d %7d %24s %7d %8d %8d %9d %-4s %4d %-15s %s\n",
			p.pid, p.ppid, start.In(loc).Format("Mon Jan _2 15:04:05 2006"), elapsed,
			(p.utime+p.stime)/clockTicks, p.rssPages*pageKB, p.vsizeBytes/1024, statFlags(p), p.threads, comm, args)
	}
	return b.Bytes()
}

// statFlags renders ps's STAT: the state, then <, N, s, l, + as procps does.
func statFlags(p *proc) string {
	s := string(p.state)
	switch {
	case p.nice < 0:
		s += "<"
	case p.nice > 0:
		s += "N"
	}
	if p.sid == p.pid {
		s += "s"
	}
	if p.threads > 1 {
		s += "l"
	}
	if p.tpgid > 0 && p.tpgid == p.pgrp {
		s += "+"
	}
	return s
}
