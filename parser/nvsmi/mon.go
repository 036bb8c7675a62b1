package nvsmi

import (
	"bytes"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Column kinds of dmon and pmon.
const (
	mNone = iota
	mDate
	mTime
	mGPU
	mPID
	mType
	mCommand
	mPower
	mTemp
	mSM
	mMem
	mMemClock
	mSMClock
	mFB
)

var monCols = map[string]int{
	"date":    mDate,
	"time":    mTime,
	"gpu":     mGPU,
	"pid":     mPID,
	"type":    mType,
	"command": mCommand,
	"pwr":     mPower,
	"gtemp":   mTemp,
	"sm":      mSM,
	"mem":     mMem,
	"mclk":    mMemClock,
	"pclk":    mSMClock,
	"fb":      mFB,
}

// monParser reads `nvidia-smi dmon` and `pmon`: "#" header lines naming the
// columns (then their units), one row per GPU (dmon) or process (pmon) per
// sample, "-" for no value, and with -o D/T leading Date and Time columns.
// The header decides which of the two a file is, whatever it was sniffed
// as. A sample ends when its time changes or, without a time column, when
// a GPU (dmon) or a GPU and process (pmon) shows up again.
type monParser struct {
	in   *textio.Input
	r    *rep
	out  *facts.Facts
	thin thinner

	kind    facts.Kind
	cols    []int
	cmdCol  int
	snap    *facts.GPUSnapshot
	lastGPU int
	stamp   []byte // the date and time of the current sample, as printed
	seen    map[[2]int]bool
	fields  [][]byte
	sp      []span
}

func parseMon(in *textio.Input, kind facts.Kind, out *facts.Facts) {
	p := &monParser{in: in, r: &rep{in: in}, out: out, kind: kind, cmdCol: -1, seen: map[[2]int]bool{}}
	for in.Scan() {
		p.line(trimRight(in.Bytes()))
	}
	p.finish()
	p.thin.flush(out, in)
	p.r.done()
}

func (p *monParser) line(l []byte) {
	t := bytes.TrimSpace(l)
	if len(t) == 0 {
		return
	}
	if t[0] == '#' {
		p.header(t)
		return
	}
	if _, ok := errorLine(t); ok {
		p.ensureSnap()
		addError(p.snap, p.in.Src(), t)
		return
	}
	if len(p.cols) == 0 {
		p.r.here(facts.IssueMalformed, "%s row before its # header", p.kind)
		return
	}
	p.sp = spans(p.sp[:0], t, true)
	p.fields = p.fields[:0]
	for _, s := range p.sp {
		p.fields = append(p.fields, t[s.s:s.e])
	}
	f := p.fields
	if len(f) > len(p.cols) && p.cmdCol == len(p.cols)-1 {
		// A command name with blanks.
		f[p.cmdCol] = t[p.sp[p.cmdCol].s:p.sp[len(p.sp)-1].e]
		f = f[:len(p.cols)]
	}
	if len(f) != len(p.cols) {
		p.r.here(facts.IssueMalformed, "%s row has %d fields, the header names %d", p.kind, len(f), len(p.cols))
		if len(f) > len(p.cols) {
			f = f[:len(p.cols)]
		}
	}
	p.row(f)
}

func (p *monParser) header(t []byte) {
	h := t[1:]
	p.sp = spans(p.sp[:0], h, true)
	p.fields = p.fields[:0]
	for _, s := range p.sp {
		p.fields = append(p.fields, h[s.s:s.e])
	}
	gpu := false
	for _, f := range p.fields {
		if eqFold(f, "gpu") {
			gpu = true
		}
	}
	if !gpu {
		// The units line ("# Idx  W  C ..."), or a comment.
		return
	}
	p.cols, p.cmdCol = p.cols[:0], -1
	kind := facts.KindNvidiaSMIDmon
	for i, f := range p.fields {
		var lk [16]byte
		c := mNone
		if len(f) <= len(lk) {
			c = monCols[string(lowerInto(lk[:0], f))]
		}
		switch c {
		case mPID:
			kind = facts.KindNvidiaSMIPmon
		case mCommand:
			p.cmdCol = i
		}
		p.cols = append(p.cols, c)
	}
	p.kind = kind
}

func (p *monParser) ensureSnap() {
	if p.snap == nil {
		p.snap = p.thin.get(p.in.Src(), p.kind)
		p.lastGPU = -1
		if p.kind == facts.KindNvidiaSMIPmon {
			p.snap.ProcsListed = true
		}
	}
}

func (p *monParser) row(f [][]byte) {
	line := p.in.Line()
	gpu := -1
	pid := 0
	var date, clk []byte
	for i, v := range f {
		switch p.cols[i] {
		case mGPU:
			if n, ok := atoi(v); ok {
				gpu = n
			}
		case mPID:
			if n, ok := atoi(v); ok {
				pid = n
			}
		case mDate:
			date = v
		case mTime:
			clk = v
		}
	}
	if gpu < 0 {
		p.r.here(facts.IssueMalformed, "%s row without a GPU index", p.kind)
		return
	}
	// Sample boundaries.
	var stamp [32]byte
	st := append(append(stamp[:0], date...), clk...)
	newSample := p.snap != nil && (len(st) > 0 && !bytes.Equal(st, p.stamp) ||
		len(st) == 0 && (gpu < p.lastGPU || p.seen[[2]int{gpu, pid}]))
	if newSample {
		p.finish()
	}
	if p.snap == nil {
		p.ensureSnap()
		p.stamp = append(p.stamp[:0], st...)
		if t, ok := monTime(date, clk); ok {
			p.snap.At, p.snap.AtFrom = t, "nvidia-smi timestamp"
			clock(p.out, p.in.Path, t)
		}
	}
	p.seen[[2]int{gpu, pid}] = true
	p.lastGPU = gpu
	src := p.in.Src()
	if p.kind == facts.KindNvidiaSMIPmon {
		if pid == 0 {
			return // an idle GPU: "-" for the pid
		}
		pr := nextProc(p.snap, src)
		pr.GPU, pr.PID = gpu, pid
		for i, v := range f {
			switch p.cols[i] {
			case mType:
				pr.Type = p.r.str(v)
			case mCommand:
				pr.Name = p.r.str(v)
			case mSM:
				p.val(line, i, v, &pr.SMUtil)
			case mFB:
				p.val(line, i, v, &pr.MemMiB)
			}
		}
		return
	}
	g := nextGPU(p.snap, src)
	g.Index = gpu
	for i, v := range f {
		var dst *facts.Val
		switch p.cols[i] {
		case mPower:
			dst = &g.PowerW
		case mTemp:
			dst = &g.TempC
		case mSM:
			dst = &g.UtilGPU
		case mMem:
			dst = &g.UtilMem
		case mMemClock:
			dst = &g.MemClockMHz
		case mSMClock:
			dst = &g.SMClockMHz
		case mFB:
			dst = &g.MemUsedMiB
		default:
			continue
		}
		p.val(line, i, v, dst)
	}
}

func (p *monParser) val(line, col int, v []byte, dst *facts.Val) {
	f, st := number(v)
	switch st {
	case valOK:
		*dst = facts.V(f)
	case valBad:
		p.r.at(line, facts.IssueMalformed, "%s column %d: %s is not a number", p.kind, col+1, describe(v))
	}
}

// monTime reads -o DT stamps: Date YYYYMMDD and Time HH:MM:SS. A time
// without a date is no instant, so it is not used.
func monTime(date, clk []byte) (time.Time, bool) {
	if len(date) != 8 || len(clk) != 8 {
		return time.Time{}, false
	}
	var b [17]byte
	s := append(append(append(b[:0], date...), ' '), clk...)
	t, err := time.Parse("20060102 15:04:05", string(s))
	return t, err == nil
}

func (p *monParser) finish() {
	if p.snap == nil {
		return
	}
	p.thin.add(p.snap)
	p.snap = nil
	clear(p.seen)
}
