package procs

import (
	"bytes"
)

// colKind is what a column holds, whatever its header says.
type colKind uint8

const (
	colOther   colKind = iota // a known or unknown column read as one word
	colUser                   // USER, UID (ps -f prints the name), RUSER ...
	colPID                    // PID
	colPPID                   // PPID
	colPCPU                   // %CPU
	colC                      // C: integer %CPU of ps -f
	colPMEM                   // %MEM
	colVSZ                    // VSZ, VSIZE, top VIRT
	colRSS                    // RSS, RSZ, top RES
	colSHR                    // top SHR
	colTTY                    // TTY, TT
	colStat                   // STAT (state and flags)
	colState                  // S: state letter alone
	colStart                  // START, STIME, STARTED: start_time, bsdstart, start, lstart
	colElapsed                // ELAPSED: etime or etimes
	colTime                   // TIME, TIME+: bsdtime, time, times, top's M:SS.hh
	colNLWP                   // NLWP, THCNT, top nTH
	colNice                   // NI
	colPri                    // PRI, PR
	colComm                   // a COMMAND/CMD column that is not the last one: comm
	colArgs                   // the last COMMAND/CMD column: args (or top's command)
)

// column is one header word with its place on the header line; positions
// help where words have spaces in them (comm, args, forest prefixes).
type column struct {
	kind  colKind
	key   string // the ps keyword recorded in Process.Has
	start int    // byte offset of the header word, -1 when there is no header line
	end   int
}

type headerWord struct {
	kind colKind
	key  string
}

// psHeaders maps ps and top header words to what they hold. Words that are
// ambiguous (TIME, ELAPSED, STARTED, START) are told apart by their values.
var psHeaders = map[string]headerWord{
	"USER": {colUser, "user"}, "UID": {colUser, "user"}, "RUSER": {colUser, "user"},
	"EUSER": {colUser, "user"}, "RUID": {colUser, "user"}, "EUID": {colUser, "user"},
	"PID": {colPID, "pid"}, "PPID": {colPPID, "ppid"},
	"%CPU": {colPCPU, "pcpu"}, "C": {colC, "c"}, "%MEM": {colPMEM, "pmem"},
	"VSZ": {colVSZ, "vsz"}, "VSIZE": {colVSZ, "vsz"}, "VIRT": {colVSZ, "vsz"},
	"RSS": {colRSS, "rss"}, "RSZ": {colRSS, "rss"}, "RES": {colRSS, "rss"},
	"SHR": {colSHR, "shr"},
	"TTY": {colTTY, "tty"}, "TT": {colTTY, "tty"},
	"STAT": {colStat, "stat"}, "S": {colState, "stat"},
	"START": {colStart, "start"}, "STIME": {colStart, "start"}, "STARTED": {colStart, "start"},
	"ELAPSED": {colElapsed, "etime"},
	"TIME":    {colTime, "time"}, "TIME+": {colTime, "time"},
	"NLWP": {colNLWP, "nlwp"}, "THCNT": {colNLWP, "nlwp"}, "nTH": {colNLWP, "nlwp"},
	"NI": {colNice, "ni"}, "PRI": {colPri, "pri"}, "PR": {colPri, "pri"},
	"COMMAND": {colArgs, "args"}, "CMD": {colArgs, "args"}, "ARGS": {colArgs, "args"},
	"COMM": {colArgs, "args"}, "UCMD": {colArgs, "args"},
	// One-word columns kept only in Has.
	"F": {colOther, "f"}, "ADDR": {colOther, "addr"}, "SZ": {colOther, "sz"},
	"WCHAN": {colOther, "wchan"}, "PGID": {colOther, "pgid"}, "PGRP": {colOther, "pgid"},
	"SID": {colOther, "sid"}, "SESS": {colOther, "sid"}, "TPGID": {colOther, "tpgid"},
	"PSR": {colOther, "psr"}, "P": {colOther, "psr"}, "LWP": {colOther, "lwp"},
	"TID": {colOther, "lwp"}, "SPID": {colOther, "lwp"}, "GROUP": {colOther, "group"},
	"RGROUP": {colOther, "group"}, "LABEL": {colOther, "label"}, "CGROUP": {colOther, "cgroup"},
	"CLS": {colOther, "cls"}, "RTPRIO": {colOther, "rtprio"}, "POL": {colOther, "policy"},
	"MAJFL": {colOther, "majflt"}, "MINFL": {colOther, "minflt"}, "PSS": {colOther, "pss"},
	"USS": {colOther, "uss"}, "OOM": {colOther, "oom"}, "OOMADJ": {colOther, "oomadj"},
	"SWAP": {colOther, "swap"}, "CODE": {colOther, "code"}, "DATA": {colOther, "data"},
	"USED": {colOther, "used"}, "%CUC": {colOther, "cuc"}, "%CUU": {colOther, "cuu"},
	"nMaj": {colOther, "majflt"}, "nMin": {colOther, "minflt"}, "nDRT": {colOther, "ndrt"},
	"Flags": {colOther, "flags"}, "SUPGIDS": {colOther, "supgid"}, "IPCNS": {colOther, "ipcns"},
	"MNTNS": {colOther, "mntns"}, "NETNS": {colOther, "netns"}, "PIDNS": {colOther, "pidns"},
	"CPUID": {colOther, "cpuid"}, "NU": {colOther, "nu"}, "%MEM+": {colOther, "pmem"},
}

// Exact headers of the standard formats.
var (
	auxHeader    = []byte("USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND")
	efHeader     = []byte("UID PID PPID C STIME TTY TIME CMD")
	eFHeader     = []byte("UID PID PPID C SZ RSS PSR STIME TTY TIME CMD")
	lHeader      = []byte("F S UID PID PPID C PRI NI ADDR SZ WCHAN TTY TIME CMD")
	defHeader    = []byte("PID TTY TIME CMD")
	busyboxHead  = []byte("PID USER TIME COMMAND")
	busyboxHead2 = []byte("PID USER VSZ STAT COMMAND")
)

// span is a word of a line: [start, end).
type span struct{ start, end int }

// words splits line at runs of spaces and tabs into dst (reused).
func words(line []byte, dst []span) []span {
	dst = dst[:0]
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		dst = append(dst, span{i, j})
		i = j
	}
	return dst
}

// header is a parsed column header line.
type header struct {
	cols   []column
	format string // aux, ef, eF, l, default, busybox, eo; top for top's table
	top    bool   // a top table header (VIRT/RES/SHR/TIME+ ...)
}

// parseHeader reads a header line, or returns ok false when the line is not
// one: every word must be a known header word, PID among them.
func parseHeader(line []byte) (h header, ok bool) {
	var buf [32]span
	ws := words(line, buf[:0])
	if len(ws) < 2 || len(ws) > 40 {
		return h, false
	}
	hasPID := false
	for _, w := range ws {
		hw, known := psHeaders[string(line[w.start:w.end])]
		if !known {
			return h, false
		}
		if hw.kind == colPID {
			hasPID = true
		}
	}
	if !hasPID {
		return h, false
	}
	h.cols = make([]column, len(ws))
	for i, w := range ws {
		word := string(line[w.start:w.end])
		hw := psHeaders[word]
		c := column{kind: hw.kind, key: hw.key, start: w.start, end: w.end}
		switch word {
		case "VIRT", "RES", "SHR", "TIME+", "PR", "nTH":
			h.top = true
		}
		if c.kind == colArgs && i < len(ws)-1 {
			c.kind, c.key = colComm, "comm"
		}
		h.cols[i] = c
	}
	norm := normalizeSpaces(line)
	switch {
	case h.top:
		h.format = "top"
	case bytes.Equal(norm, auxHeader):
		h.format = "aux"
	case bytes.Equal(norm, efHeader):
		h.format = "ef"
	case bytes.Equal(norm, eFHeader):
		h.format = "eF"
	case bytes.Equal(norm, lHeader):
		h.format = "l"
	case bytes.Equal(norm, defHeader):
		h.format = "default"
	case bytes.Equal(norm, busyboxHead), bytes.Equal(norm, busyboxHead2):
		h.format = "busybox"
	default:
		h.format = "eo"
	}
	return h, true
}

// normalizeSpaces collapses runs of blanks to one space and trims the ends.
func normalizeSpaces(line []byte) []byte {
	out := make([]byte, 0, len(line))
	space := false
	for _, c := range line {
		if c == ' ' || c == '\t' {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, c)
	}
	return out
}

// auxColumns and efColumns stand in for the header of a capture that has
// none (`ps aux | grep sglang`).
func auxColumns() header {
	h, _ := parseHeader(auxHeader)
	for i := range h.cols {
		h.cols[i].start, h.cols[i].end = -1, -1
	}
	return h
}

func efColumns() header {
	h, _ := parseHeader(efHeader)
	for i := range h.cols {
		h.cols[i].start, h.cols[i].end = -1, -1
	}
	return h
}

// looksLikeAuxRow reports a line shaped like a `ps aux` row: user, pid,
// %cpu, %mem, vsz, rss, tty, stat, start, time (M:SS), then a command.
func looksLikeAuxRow(line []byte, ws []span) bool {
	if len(ws) < 11 {
		return false
	}
	w := func(i int) []byte { return line[ws[i].start:ws[i].end] }
	if _, ok := parseUint(w(1)); !ok {
		return false
	}
	if _, ok := parseFloat(w(2)); !ok {
		return false
	}
	if _, ok := parseFloat(w(3)); !ok {
		return false
	}
	if _, ok := parseUint(w(4)); !ok {
		return false
	}
	if _, ok := parseUint(w(5)); !ok {
		return false
	}
	if !validStat(w(7)) {
		return false
	}
	t := w(9)
	if bytes.IndexByte(t, ':') < 0 {
		return false
	}
	_, ok := parseCPUTime(t)
	return ok
}

// looksLikeEfRow reports a line shaped like a `ps -ef` row: uid, pid, ppid,
// c, stime, tty, time ([DD-]HH:MM:SS), then a command.
func looksLikeEfRow(line []byte, ws []span) bool {
	if len(ws) < 8 {
		return false
	}
	w := func(i int) []byte { return line[ws[i].start:ws[i].end] }
	for _, i := range []int{1, 2, 3} {
		if _, ok := parseUint(w(i)); !ok {
			return false
		}
	}
	t := w(6)
	if bytes.Count(t, []byte{':'}) != 2 {
		return false
	}
	_, ok := parseCPUTime(t)
	return ok
}
