package nvsmi

import (
	"bytes"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// Sections of the default table.
const (
	secNone = iota
	secGPUHead
	secGPU
	secProcHead
	secProc
	secMIG
)

// Labels of the table cells, for issues and ReadErrors.
var (
	lblECC      = []byte("volatile uncorr. ecc")
	lblFan      = []byte("fan")
	lblTemp     = []byte("temp")
	lblPower    = []byte("power usage")
	lblCap      = []byte("power cap")
	lblMemUsed  = []byte("memory used")
	lblMemTotal = []byte("memory total")
	lblMemUsage = []byte("memory-usage")
	lblUtil     = []byte("gpu-util")
)

// tableParser reads the default `nvidia-smi` table, both layouts (79 columns
// up to R525, 91 columns since), with or without the MIG M. row, the
// Processes table with or without GI/CI and Type columns, and any number of
// tables in a row (`nvidia-smi -l`).
type tableParser struct {
	in   *textio.Input
	r    *rep
	out  *facts.Facts
	thin thinner

	snap    *facts.GPUSnapshot
	section int
	gpu     *gpuB
	row     int
	migRow  bool // the header has the third row, MIG M.
	hasGICI bool
	hasType bool
	cells   [][]byte
	sp      []span
	fs      [][]byte
}

func parseTable(in *textio.Input, out *facts.Facts) {
	p := &tableParser{in: in, r: &rep{in: in}, out: out, hasType: true}
	for in.Scan() {
		p.line(trimRight(in.Bytes()))
	}
	p.finishSnap()
	p.thin.flush(out, in)
	p.r.done()
}

func (p *tableParser) ensureSnap() {
	if p.snap == nil {
		p.snap = &facts.GPUSnapshot{Src: p.in.Src(), Format: facts.KindNvidiaSMITable}
	}
}

func (p *tableParser) line(l []byte) {
	if len(bytes.TrimSpace(l)) == 0 {
		return
	}
	if l[0] != '|' && l[0] != '+' {
		if t, ok := ctimeLine(l); ok {
			if s := p.snap; s != nil && (len(s.GPUs) > 0 || s.Driver != "" || !s.At.IsZero() || s.ProcsListed) {
				p.finishSnap()
			}
			p.ensureSnap()
			p.snap.At, p.snap.AtFrom = t, "nvidia-smi timestamp"
			clock(p.out, p.in.Path, t)
			return
		}
		if _, ok := errorLine(l); ok {
			p.ensureSnap()
			addError(p.snap, p.in.Src(), l)
			return
		}
		p.r.here(facts.IssueMalformed, "unexpected line in an nvidia-smi table: %s", describe(l))
		return
	}
	if bytes.HasPrefix(l, []byte("| NVIDIA-SMI ")) {
		if p.snap != nil && (len(p.snap.GPUs) > 0 || p.snap.Driver != "") {
			p.finishSnap()
		}
		p.ensureSnap()
		p.snap.Driver = afterLabel(l, "Driver Version:")
		p.snap.CUDA = afterLabel(l, "CUDA Version:")
		p.section = secGPUHead
		p.migRow = false
		return
	}
	if l[0] == '+' || bytes.HasPrefix(l, []byte("|-")) || bytes.HasPrefix(l, []byte("|=")) {
		p.finishGPU()
		if bytes.HasPrefix(l, []byte("|=")) {
			switch p.section {
			case secGPUHead:
				p.section = secGPU
			case secProcHead:
				p.section = secProc
			}
		} else if p.section == secProc {
			p.section = secNone
		}
		return
	}
	inner := bytes.TrimSpace(l[1:])
	if bytes.HasPrefix(inner, []byte("Processes:")) {
		p.finishGPU()
		p.ensureSnap()
		p.snap.ProcsListed = true
		p.section = secProcHead
		p.hasGICI, p.hasType = false, false
		return
	}
	if bytes.HasPrefix(inner, []byte("MIG devices:")) {
		p.finishGPU()
		p.section = secMIG
		return
	}
	switch p.section {
	case secGPUHead:
		if bytes.Contains(l, []byte("MIG M.")) {
			p.migRow = true
		}
	case secGPU:
		p.gpuRow(l)
	case secProcHead:
		if bytes.Contains(l, []byte("PID")) {
			p.hasGICI = bytes.Contains(l, []byte(" GI "))
			p.hasType = bytes.Contains(l, []byte("Type"))
		}
	case secProc:
		p.procRow(l)
	case secMIG:
	default:
		p.r.here(facts.IssueMalformed, "table row outside the GPU and Processes tables: %s", describe(l))
	}
}

// afterLabel returns the word after label in line ("Driver Version: 580.1").
func afterLabel(l []byte, label string) string {
	i := bytes.Index(l, []byte(label))
	if i < 0 {
		return ""
	}
	f := bytes.Fields(l[i+len(label):])
	if len(f) == 0 || f[0][0] == '|' {
		return ""
	}
	return str(f[0])
}

func (p *tableParser) splitCells(l []byte) [][]byte {
	p.cells = p.cells[:0]
	l = bytes.TrimSuffix(l[1:], []byte("|"))
	for {
		i := bytes.IndexByte(l, '|')
		if i < 0 {
			return append(p.cells, l)
		}
		p.cells = append(p.cells, l[:i])
		l = l[i+1:]
	}
}

func (p *tableParser) gpuRow(l []byte) {
	cells := p.splitCells(l)
	if len(cells) < 3 {
		p.r.here(facts.IssueMalformed, "GPU table row has %d cells, not 3: %s", len(cells), describe(l))
		return
	}
	a, b, c := cells[0], cells[1], cells[2]
	p.sp = spans(p.sp[:0], a, false)
	if len(p.sp) > 0 {
		if _, ok := atoi(a[p.sp[0].s:p.sp[0].e]); ok {
			if bf := bytes.Fields(b); len(bf) > 0 && NormalizeBusID(string(bf[0])) != "" {
				p.finishGPU()
				p.gpuRow1(a, p.sp, bf, c)
				return
			}
		}
	}
	if p.gpu == nil {
		p.r.here(facts.IssueMalformed, "GPU table row without its GPU: %s", describe(l))
		return
	}
	p.row++
	switch p.row {
	case 2:
		p.gpuRow2(a, b, c)
	case 3:
		if p.migRow {
			if v := bytes.TrimSpace(c); special(v) == valOK {
				p.gpu.g.MIG = yes(v)
			}
		}
	}
}

func (p *tableParser) gpuRow1(a []byte, af []span, bf [][]byte, c []byte) {
	line := p.in.Line()
	p.gpu = newGPU(p.in.Src())
	p.row = 1
	g := p.gpu.g
	g.Index, _ = atoi(a[af[0].s:af[0].e])
	nameEnd := len(af)
	if last := af[len(af)-1]; len(af) > 2 {
		switch string(a[last.s:last.e]) {
		case "On":
			g.Persist, nameEnd = "Enabled", len(af)-1
		case "Off":
			g.Persist, nameEnd = "Disabled", len(af)-1
		case "WDDM", "TCC", "N/A":
			nameEnd = len(af) - 1
		}
	}
	if nameEnd > 1 {
		g.Name = p.r.intern(a[af[1].s:af[nameEnd-1].e])
	}
	g.BusID = p.r.bus(bf[0])
	ecc := bytes.TrimSpace(c)
	if f, st := number(ecc); st == valOK {
		g.ECCVolatileUncorr = facts.V(f)
	} else if st == valReadErr {
		p.gpu.readErr(p.r, line, lblECC, ecc)
	}
}

func (p *tableParser) gpuRow2(a, b, c []byte) {
	line := p.in.Line()
	g := p.gpu
	af := bytes.Fields(a)
	if len(af) >= 6 && string(af[4]) == "/" {
		if special(af[0]) == valReadErr {
			g.readErr(p.r, line, lblFan, af[0])
		}
		g.num(p.r, line, lblTemp, af[1], &g.g.TempC)
		if s := p.r.str(af[2]); s != "" {
			g.g.PState = s
		}
		g.num(p.r, line, lblPower, af[3], &g.g.PowerW)
		g.num(p.r, line, lblCap, af[5], &g.g.PowerLimitW)
	} else {
		p.r.here(facts.IssueMalformed, "GPU table cell %s is not Fan Temp Perf Pwr:Usage/Cap", describe(bytes.TrimSpace(a)))
	}
	bf := bytes.Fields(b)
	switch {
	case len(bf) == 3 && string(bf[1]) == "/":
		g.num(p.r, line, lblMemUsed, bf[0], &g.g.MemUsedMiB)
		g.num(p.r, line, lblMemTotal, bf[2], &g.g.MemTotalMiB)
	case special(bytes.TrimSpace(b)) == valReadErr:
		g.readErr(p.r, line, lblMemUsage, bytes.TrimSpace(b))
	case special(bytes.TrimSpace(b)) == valAbsent:
	default:
		p.r.here(facts.IssueMalformed, "GPU table cell %s is not used / total memory", describe(bytes.TrimSpace(b)))
	}
	p.sp = spans(p.sp[:0], c, false)
	if len(p.sp) >= 1 {
		g.num(p.r, line, lblUtil, c[p.sp[0].s:p.sp[0].e], &g.g.UtilGPU)
	}
	if len(p.sp) >= 2 {
		if m := bytes.TrimSpace(c[p.sp[1].s:]); special(m) == valOK {
			g.g.ComputeMode = computeMode(string(m))
		}
	}
}

func (p *tableParser) finishGPU() {
	if p.gpu == nil {
		return
	}
	p.ensureSnap()
	addGPU(p.snap, p.gpu.finish(p.r))
	p.gpu = nil
	p.row = 0
}

func (p *tableParser) procRow(l []byte) {
	inner := bytes.TrimSpace(bytes.TrimSuffix(l[1:], []byte("|")))
	if bytes.HasPrefix(inner, []byte("No running processes found")) {
		return
	}
	p.sp = spans(p.sp[:0], inner, false)
	p.fs = p.fs[:0]
	for _, s := range p.sp {
		p.fs = append(p.fs, inner[s.s:s.e])
	}
	f := p.fs
	lead := 2 // GPU PID
	if p.hasGICI {
		lead += 2
	}
	if p.hasType {
		lead++
	}
	n := len(f)
	memEnd := n - 1
	if n > 0 && string(f[n-1]) == "MiB" {
		memEnd = n - 2
	}
	if memEnd <= lead {
		p.r.here(facts.IssueMalformed, "process row has too few columns: %s", describe(inner))
		return
	}
	pr := &facts.GPUProcess{Src: p.in.Src(), GPU: -1}
	if v, ok := atoi(f[0]); ok {
		pr.GPU = v
	}
	pidAt := 1
	if p.hasGICI {
		pidAt = 3
	}
	if v, ok := atoi(f[pidAt]); ok {
		pr.PID = v
	} else if special(f[pidAt]) == valOK {
		p.r.here(facts.IssueMalformed, "process row PID %s is not a number", describe(f[pidAt]))
		return
	}
	if p.hasType {
		pr.Type = string(f[pidAt+1])
	}
	pr.Name = p.r.intern(inner[p.sp[lead].s:p.sp[memEnd-1].e])
	mem := f[memEnd]
	if bytes.HasSuffix(mem, []byte("...")) {
		// The column was too narrow: the number is cut, so it is unknown.
	} else if v, st := number(mem); st == valOK {
		pr.MemMiB = facts.V(v)
	} else if st == valBad {
		p.r.here(facts.IssueMalformed, "process row memory %s is not a number", describe(mem))
	}
	for _, g := range p.snap.GPUs {
		if g.Index == pr.GPU {
			pr.BusID, pr.UUID = g.BusID, g.UUID
		}
	}
	addProcs(p.snap, pr)
}

func (p *tableParser) finishSnap() {
	p.finishGPU()
	if p.snap == nil {
		return
	}
	p.thin.add(p.snap)
	p.snap = nil
	p.section = secNone
}
