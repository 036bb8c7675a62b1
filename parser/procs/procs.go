// Package procs reads process snapshots: `ps` in every common form (aux,
// auxf, -ef, -l, -eo with any column set, BusyBox) and `top -b`.
//
// Columns are found by the header, not by position: a ps row shifts right
// when a value overflows its column (a VSZ of 21462344 in a 6-wide column),
// so rows are split into words and only the columns that may hold spaces
// (lstart, start, comm, args) are read with the header's help. The forest
// prefixes of `ps f` (" \_ ", " |  ", "    ") give the depth, and from it
// the parent where there is no PPID column.
//
// A snapshot's time comes from the evidence in the file: lstart+etimes of
// its rows (they agree to the second when the clock did not jump), or a
// `date` line before it. Times printed without a zone are wall-clock
// readings stored as UTC, and the file's Clock says so.
package procs

import (
	"bytes"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Sniff recognizes ps and top output by its header lines, and headerless
// `ps aux | grep ...` or `ps -ef | grep ...` output by the shape of its rows.
func Sniff(name string, head []byte) (facts.Kind, int) {
	var buf [64]span
	lines, rows, efRows, other := 0, 0, 0, 0
	for len(head) > 0 && lines < 40 {
		var line []byte
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			line, head = head, nil
		} else {
			line, head = head[:i], head[i+1:]
		}
		line = bytes.TrimRight(line, " \t\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		lines++
		if bytes.HasPrefix(line, []byte("top - ")) && bytes.Contains(line, []byte(" up ")) {
			return facts.KindTop, 95
		}
		if bytes.HasPrefix(line, []byte("Tasks:")) && bytes.Contains(line, []byte(" total")) {
			return facts.KindTop, 80
		}
		if h, ok := parseHeader(line); ok {
			// Every word of the line is a ps header word, PID among them.
			switch {
			case h.top:
				return facts.KindTop, 85
			case h.format != "eo":
				return facts.KindPS, 95
			case len(h.cols) >= 3 && (h.cols[len(h.cols)-1].kind == colArgs):
				return facts.KindPS, 90
			default:
				return facts.KindPS, 70
			}
		}
		ws := words(line, buf[:0])
		switch {
		case looksLikeAuxRow(line, ws):
			rows++
		case looksLikeEfRow(line, ws):
			efRows++
		case rows+efRows == 0 && lines <= 3 && isPrompt(line):
			// The command line that produced the capture.
		default:
			other++
		}
	}
	if n := rows + efRows; n > 0 && other*4 <= n {
		if rows >= efRows {
			return facts.KindPS, 50
		}
		return facts.KindPS, 45
	}
	return sniffName(name)
}

// sniffName gives the weak hint of a file name: ps_aux.txt, ps-ef.log,
// processes.txt; top.txt, top-b.out.
func sniffName(name string) (facts.Kind, int) {
	n := strings.ToLower(name)
	fields := strings.FieldsFunc(n, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, f := range fields {
		switch f {
		case "ps", "psaux", "psauxf", "psef", "processes", "procs":
			return facts.KindPS, 15
		case "top":
			return facts.KindTop, 15
		}
	}
	return "", 0
}

// isPrompt reports the echo of the command that produced a capture
// ("$ ps aux", "# top -b -n1", "+ ps -ef" from set -x).
func isPrompt(line []byte) bool {
	t := bytes.TrimSpace(line)
	for _, p := range []string{"$ ", "# ", "+ ", "> "} {
		if bytes.HasPrefix(t, []byte(p)) {
			rest := bytes.TrimSpace(t[len(p):])
			for _, cmd := range []string{"ps", "top", "sudo", "date", "busybox"} {
				if bytes.HasPrefix(rest, []byte(cmd)) && (len(rest) == len(cmd) || rest[len(cmd)] == ' ') {
					return true
				}
			}
		}
	}
	return false
}

// Parse reads ps or top output. Each header (and each top frame) starts a
// snapshot, so a file that repeats `date; ps aux` yields a series.
func Parse(in *textio.Input, kind facts.Kind, out *facts.Facts) {
	p := &parser{in: in, kind: kind, out: out}
	for in.Scan() {
		p.line(in.Bytes())
	}
	p.finish()
	if p.suppressed > 0 {
		in.IssueAt(p.lastIssue, facts.IssueMalformed, "%d more unreadable lines after this one were not listed one by one", p.suppressed)
	}
}
