package nvsmi

import (
	"bytes"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// qFields maps the -q text keys, as lower-case paths of the section tree
// below a GPU block ("fb memory usage/used"), to fields. Both names of every
// renamed key are listed (research §1a): Clocks Throttle Reasons (<= R530) and
// Clocks Event Reasons (R535+), Power Readings and GPU Power Readings, Power
// Draw and Average/Instantaneous Power Draw, Gpu and GPU (paths are lower
// case), GPU Reset Status and GPU Recovery Action, Double Bit totals (pre-
// Ampere ECC) and SRAM/DRAM counts.
var qFields = map[string]spec{
	"product name":                    {f: fName},
	"product architecture":            {f: fArch},
	"gpu uuid":                        {f: fUUID},
	"pci/bus id":                      {f: fBusID},
	"persistence mode":                {f: fPersist},
	"mig mode/current":                {f: fMIG},
	"compute mode":                    {f: fComputeMode},
	"gpu reset status/reset required": {f: fReset},
	"gpu reset status/drain and reset recommended": {f: fDrain},
	"gpu recovery action":                          {f: fRecovery},
	"pci/gpu link info/pcie generation/max":        {f: fGenMax},
	"pci/gpu link info/pcie generation/current":    {f: fGenCur},
	"pci/gpu link info/link width/max":             {f: fWidthMax},
	"pci/gpu link info/link width/current":         {f: fWidthCur},
	"pci/replays since reset":                      {f: fReplays},
	"performance state":                            {f: fPState},
	"fb memory usage/total":                        {f: fMemTotal},
	"fb memory usage/used":                         {f: fMemUsed},
	"utilization/gpu":                              {f: fUtilGPU},
	"utilization/memory":                           {f: fUtilMem},
	"retired pages/pending page blacklist":         {f: fRetiredPending},
	"retired pages/pending page retirement":        {f: fRetiredPending},
	"retired pages/pending":                        {f: fRetiredPending},
	"retired pages/double bit ecc":                 {f: fRetiredDBE},
	"remapped rows/uncorrectable error":            {f: fRemapUncorr},
	"remapped rows/pending":                        {f: fRemapPending},
	"remapped rows/remapping failure occurred":     {f: fRemapFailure},
	"temperature/gpu current temp":                 {f: fTemp},
	"power readings/power draw":                    {f: fPowerDraw},
	"power readings/average power draw":            {f: fPowerDraw},
	"power readings/instantaneous power draw":      {f: fPowerInst},
	"power readings/enforced power limit":          {f: fLimitEnforced},
	"power readings/current power limit":           {f: fLimitEnforced},
	"power readings/power limit":                   {f: fLimit},
	"gpu power readings/power draw":                {f: fPowerDraw},
	"gpu power readings/average power draw":        {f: fPowerDraw},
	"gpu power readings/instantaneous power draw":  {f: fPowerInst},
	"gpu power readings/current power limit":       {f: fLimitEnforced},
	"gpu power readings/enforced power limit":      {f: fLimitEnforced},
	"gpu power readings/requested power limit":     {f: fLimit},
	"clocks/sm":     {f: fSMClock},
	"clocks/memory": {f: fMemClock},
	"max clocks/sm": {f: fSMClockMax},
	"fabric/state":  {f: fFabricState},
	"fabric/status": {f: fFabricStatus},
	"clocks event reasons counters/sw power capping":    {f: fCounter, arg: "sw_power_cap"},
	"clocks event reasons counters/sync boost":          {f: fCounter, arg: "sync_boost"},
	"clocks event reasons counters/sw thermal slowdown": {f: fCounter, arg: "sw_thermal_slowdown"},
	"clocks event reasons counters/hw thermal slowdown": {f: fCounter, arg: "hw_thermal_slowdown"},
	"clocks event reasons counters/hw power braking":    {f: fCounter, arg: "hw_power_brake_slowdown"},
}

func init() {
	for _, sec := range []string{"clocks event reasons", "clocks throttle reasons"} {
		for k, name := range map[string]string{
			"idle":                                "gpu_idle",
			"applications clocks setting":         "applications_clocks_setting",
			"user defined clocks":                 "applications_clocks_setting",
			"sw power cap":                        "sw_power_cap",
			"hw slowdown":                         "hw_slowdown",
			"hw slowdown/hw thermal slowdown":     "hw_thermal_slowdown",
			"hw slowdown/hw power brake slowdown": "hw_power_brake_slowdown",
			"hw thermal slowdown":                 "hw_thermal_slowdown",
			"hw power brake slowdown":             "hw_power_brake_slowdown",
			"sync boost":                          "sync_boost",
			"sw thermal slowdown":                 "sw_thermal_slowdown",
			"display clock setting":               "display_clocks_setting",
		} {
			qFields[sec+"/"+k] = spec{f: fReason, arg: name}
		}
	}
	for _, sec := range []string{"volatile", "aggregate"} {
		part, total := fECCVol, fECCVolTotal
		if sec == "aggregate" {
			part, total = fECCAgg, fECCAggTotal
		}
		for _, k := range []string{"sram uncorrectable", "sram uncorrectable parity", "sram uncorrectable sec-ded", "dram uncorrectable"} {
			qFields["ecc errors/"+sec+"/"+k] = spec{f: part}
		}
		qFields["ecc errors/"+sec+"/double bit/total"] = spec{f: total}
	}
}

const maxDepth = 16

var (
	nvsmiLog = []byte("NVSMI LOG")
	sepKV    = []byte(" : ")
)

// qParser reads `nvidia-smi -q` text, the full dump or a `-d` selection, of
// any driver era: an indentation tree of "key : value" lines under one
// "GPU <bus id>" block per GPU. Keys are matched by their path in the tree,
// never by position, as key widths and order change between drivers.
type qParser struct {
	in   *textio.Input
	r    *rep
	out  *facts.Facts
	thin thinner

	snap     *facts.GPUSnapshot
	attached int // -1: not printed
	lastLine int // the last non-blank line of the dump

	cur       *gpuB // the GPU block being read
	proc      *facts.GPUProcess
	procs     []*facts.GPUProcess // of the current dump
	firstLast []byte              // the last section of the first GPU block
	lastTop   []byte              // the last section of the current block
	nTop      int
	hasName   bool
	hasProcs  bool
	anyProcs  bool // some block of the dump has a Processes section
	started   bool // the dump has more than error lines
	excerpt   bool // a part of a GPU block, without banner or header
	stray     int  // a column-0 line that is neither a key nor a section with children

	path  []byte
	ends  [maxDepth]int
	depth int
}

func parseQ(in *textio.Input, out *facts.Facts) {
	p := &qParser{in: in, r: &rep{in: in}, out: out, attached: -1}
	for in.Scan() {
		p.line(in.Bytes())
	}
	p.endStray()
	p.finishDump()
	p.thin.flush(out, in)
	p.r.done()
}

func (p *qParser) ensureSnap() {
	if p.snap == nil {
		p.snap = &facts.GPUSnapshot{Src: p.in.Src(), Format: facts.KindNvidiaSMIQ}
		p.attached = -1
	}
}

func (p *qParser) line(raw []byte) {
	line := trimRight(raw)
	if len(line) == 0 {
		return
	}
	indent := 0
	for _, c := range line {
		if c == ' ' {
			indent++
		} else if c == '\t' {
			indent += 4
		} else {
			break
		}
	}
	content := bytes.TrimLeft(line, " \t")
	level := indent / 4

	if level == 0 && bytes.Contains(content, nvsmiLog) && content[0] == '=' {
		p.endStray()
		if p.snap != nil && p.started {
			p.finishDump()
		}
		p.ensureSnap()
		p.started = true
		p.lastLine = p.in.Line()
		return
	}
	if _, ok := errorLine(content); ok {
		p.endStray()
		p.ensureSnap()
		addError(p.snap, p.in.Src(), content)
		p.lastLine = p.in.Line()
		return
	}

	var key, val []byte
	hasVal := false
	if i := bytes.Index(content, sepKV); i >= 0 {
		key, val, hasVal = bytes.TrimSpace(content[:i]), bytes.TrimSpace(content[i+len(sepKV):]), true
	} else if bytes.HasSuffix(content, []byte(" :")) {
		key, val, hasVal = bytes.TrimSpace(content[:len(content)-2]), nil, true
	} else {
		key = content
	}

	if level == 0 {
		p.endStray()
		p.top(key, val, hasVal)
		return
	}
	p.stray = 0
	p.lastLine = p.in.Line()
	if p.cur == nil && !p.started && (p.snap == nil || len(p.snap.GPUs) == 0) {
		// An excerpt of a GPU block, pasted without the banner and the
		// "GPU 00000000:..." header: one GPU, of unknown bus.
		p.ensureSnap()
		p.started, p.excerpt = true, true
		p.startBlock("")
	}
	if p.cur == nil {
		// Children of a top-level section other than a GPU block (vGPU
		// capabilities) carry nothing we read.
		return
	}
	p.descend(level, key)
	if level == 1 {
		p.lastTop = append(p.lastTop[:0], p.path...)
		p.nTop++
		switch string(p.path) {
		case "product name":
			p.hasName = true
		case "processes":
			p.hasProcs, p.anyProcs = true, true
		}
	}
	if bytes.HasPrefix(p.path, []byte("processes/")) {
		p.process(val, hasVal)
		return
	}
	if !hasVal {
		return
	}
	if sp, ok := qFields[string(p.path)]; ok {
		p.cur.apply(p.r, p.in.Line(), sp, p.path, val)
	} else if special(val) == valReadErr {
		p.cur.readErr(p.r, p.in.Line(), p.path, val)
	}
}

// descend sets the path to the key at level (>= 1).
func (p *qParser) descend(level int, key []byte) {
	if level >= maxDepth {
		level = maxDepth - 1
	}
	for k := p.depth + 1; k < level; k++ {
		p.ends[k] = p.ends[p.depth]
	}
	p.path = p.path[:p.ends[level-1]]
	if len(p.path) > 0 {
		p.path = append(p.path, '/')
	}
	p.path = lowerInto(p.path, key)
	p.ends[level] = len(p.path)
	p.depth = level
}

// top reads a column-0 line: a GPU block header or a dump-level key.
func (p *qParser) top(key, val []byte, hasVal bool) {
	line := p.in.Line()
	if !hasVal {
		if len(key) > 4 && bytes.HasPrefix(key, []byte("GPU ")) {
			if id := NormalizeBusID(string(key[4:])); id != "" {
				p.ensureSnap()
				p.startBlock(id)
				p.lastLine = line
				return
			}
		}
		// Another top-level section (vGPU Driver Capability) or a stray line:
		// which one shows when the next line is, or is not, indented.
		p.finishBlock()
		p.stray = line
		return
	}
	var lk [32]byte
	switch string(lowerInto(lk[:0], key)) {
	case "timestamp":
		if p.snap != nil && (len(p.snap.GPUs) > 0 || p.cur != nil) {
			// A second dump without its banner.
			p.finishDump()
		}
		p.ensureSnap()
		p.started = true
		if t, ok := parseCtime(val); ok {
			p.snap.At, p.snap.AtFrom = t, "nvidia-smi timestamp"
			clock(p.out, p.in.Path, t)
		} else if special(val) == valOK {
			p.r.here(facts.IssueMalformed, "Timestamp %q is not a ctime date", val)
		}
	case "driver version":
		p.ensureSnap()
		p.snap.Driver = p.r.str(val)
	case "cuda version":
		p.ensureSnap()
		p.snap.CUDA = p.r.str(val)
	case "attached gpus":
		p.ensureSnap()
		if n, ok := atoi(val); ok {
			p.attached = n
		} else if special(val) == valOK {
			p.r.here(facts.IssueMalformed, "Attached GPUs %q is not a count", val)
		}
	default:
		// Top-level keys this parser does not use (vGPU lines) end a block.
		p.finishBlock()
		if p.snap == nil {
			p.r.here(facts.IssueMalformed, "line before the NVSMI LOG banner: %q", clip(key))
			return
		}
	}
	p.lastLine = line
}

func (p *qParser) endStray() {
	if p.stray > 0 {
		p.r.at(p.stray, facts.IssueMalformed, "unexpected line in an nvidia-smi -q dump")
		p.stray = 0
	}
}

func (p *qParser) startBlock(busID string) {
	p.finishBlock()
	p.cur = newGPU(p.in.Src())
	p.cur.g.BusID = busID
	p.cur.g.Index = len(p.snap.GPUs)
	p.lastTop = p.lastTop[:0]
	p.nTop = 0
	p.hasName, p.hasProcs = false, false
	p.path = p.path[:0]
	p.depth = 0
}

func (p *qParser) finishBlock() {
	if p.cur == nil {
		return
	}
	p.flushProc()
	addGPU(p.snap, p.cur.g)
	if len(p.snap.GPUs) == 1 {
		p.firstLast = append(p.firstLast[:0], p.lastTop...)
	}
	p.cur = nil
}

// process reads a line of the Processes section. A process starts at its
// "GPU instance ID" (R450+) or at its "Process ID" (older drivers).
func (p *qParser) process(val []byte, hasVal bool) {
	rel := p.path[len("processes/"):]
	switch {
	case string(rel) == "gpu instance id":
		p.flushProc()
		p.newProc()
	case string(rel) == "process id":
		if p.proc == nil || p.proc.PID != 0 {
			p.flushProc()
			p.newProc()
		}
		if n, ok := atoi(val); ok {
			p.proc.PID = n
		} else if special(val) == valOK {
			p.r.here(facts.IssueMalformed, "Process ID %q is not a number", val)
		}
	case !hasVal:
	case bytes.HasSuffix(rel, []byte("type")):
		if p.proc != nil {
			p.proc.Type = p.r.str(val)
		}
	case bytes.HasSuffix(rel, []byte("name")):
		if p.proc != nil {
			p.proc.Name = string(val)
		}
	case bytes.HasSuffix(rel, []byte("used gpu memory")):
		if p.proc != nil {
			f, st := number(val)
			switch st {
			case valOK:
				p.proc.MemMiB = facts.V(f)
			case valBad:
				p.r.here(facts.IssueMalformed, "Used GPU Memory %q is not a number", val)
			}
		}
	}
}

func (p *qParser) newProc() {
	g := p.cur.g
	p.proc = &facts.GPUProcess{Src: p.in.Src(), GPU: g.Index, BusID: g.BusID, UUID: g.UUID}
}

func (p *qParser) flushProc() {
	if p.proc != nil {
		if p.proc.UUID == "" && p.cur != nil {
			p.proc.UUID = p.cur.g.UUID
		}
		p.procs = append(p.procs, p.proc)
		p.proc = nil
	}
}

// finishDump ends one dump: it decides whether the dump is complete and
// which GPU indices it shows, then keeps the snapshot.
func (p *qParser) finishDump() {
	if p.snap == nil {
		return
	}
	lastOpen := p.cur != nil
	var lastTop []byte
	hasName, hasProcs, nTop := p.hasName, p.hasProcs, p.nTop
	if lastOpen {
		lastTop = append([]byte(nil), p.lastTop...)
	}
	p.finishBlock()
	s := p.snap
	nb := len(s.GPUs)
	incomplete := false
	switch {
	case nb == 0:
		// Only the banner and header lines: nvidia-smi stopped before the
		// first block, unless it said why.
		incomplete = p.attached != 0 && len(s.Errors) == 0
	case !lastOpen:
	case nTop == 0:
		incomplete = true
	case nb >= 2:
		// Every GPU block of one dump ends with the same section.
		incomplete = !bytes.Equal(lastTop, p.firstLast)
	default:
		// A whole dump (it has Product Name) ends with Processes or after it.
		incomplete = hasName && !hasProcs
	}
	if incomplete && !p.excerpt {
		s.Incomplete = true
		where := "before the first GPU block"
		if nb > 0 {
			where = "inside the block of GPU " + s.GPUs[nb-1].BusID
		}
		line := p.lastLine
		if line == 0 {
			line = p.in.Line()
		}
		p.r.at(line, facts.IssueIncomplete, "nvidia-smi -q dump stops %s (%d of %s GPUs printed)", where, nb, attachedText(p.attached))
	}
	if p.attached > nb && !incomplete {
		// A selection (-i): the block order says nothing of the index.
		for _, g := range s.GPUs {
			g.Index = -1
		}
		for _, pr := range p.procs {
			pr.GPU = -1
		}
	}
	for _, g := range s.GPUs {
		p.r.finishGPU(g)
	}
	s.Procs = p.procs
	s.ProcsListed = p.anyProcs
	p.procs = nil
	p.anyProcs = false
	p.thin.add(s)
	p.snap = nil
	p.started = false
	p.attached = -1
	p.firstLast = p.firstLast[:0]
	p.lastLine = 0
}

func attachedText(n int) string {
	if n < 0 {
		return "an unknown number of"
	}
	return itoa(n)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// clip shortens text quoted in an issue.
func clip(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}
