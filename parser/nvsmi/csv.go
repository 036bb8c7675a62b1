package nvsmi

import (
	"bytes"
	"regexp"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// csvFields maps the --query-gpu field names, canonical and alias (the
// header echoes the canonical name, but hand-written headers and older
// drivers use the aliases), to fields. Names not listed are other valid
// fields that nothing reads; they are ignored, not reported.
var csvFields = map[string]spec{
	"timestamp":                              {f: fTime},
	"driver_version":                         {f: fDriver},
	"index":                                  {f: fIndex},
	"name":                                   {f: fName},
	"gpu_name":                               {f: fName},
	"uuid":                                   {f: fUUID},
	"gpu_uuid":                               {f: fUUID},
	"pci.bus_id":                             {f: fBusID},
	"gpu_bus_id":                             {f: fBusID},
	"compute_cap":                            {f: fCC},
	"pstate":                                 {f: fPState},
	"persistence_mode":                       {f: fPersist},
	"compute_mode":                           {f: fComputeMode},
	"pcie.link.gen.current":                  {f: fGenCur},
	"pcie.link.gen.max":                      {f: fGenMax},
	"pcie.link.width.current":                {f: fWidthCur},
	"pcie.link.width.max":                    {f: fWidthMax},
	"utilization.gpu":                        {f: fUtilGPU},
	"utilization.memory":                     {f: fUtilMem},
	"memory.total":                           {f: fMemTotal},
	"memory.used":                            {f: fMemUsed},
	"temperature.gpu":                        {f: fTemp},
	"power.draw":                             {f: fPowerDraw},
	"power.draw.average":                     {f: fPowerDraw},
	"gpu.power.draw.average":                 {f: fPowerDraw},
	"power.draw.instant":                     {f: fPowerInst},
	"enforced.power.limit":                   {f: fLimitEnforced},
	"gpu.power.current_limit":                {f: fLimitEnforced},
	"power.limit":                            {f: fLimit},
	"gpu.power.requested_limit":              {f: fLimit},
	"clocks.current.sm":                      {f: fSMClock},
	"clocks.sm":                              {f: fSMClock},
	"clocks.current.memory":                  {f: fMemClock},
	"clocks.mem":                             {f: fMemClock},
	"clocks.max.sm":                          {f: fSMClockMax},
	"clocks.max.streaming_multiprocessor":    {f: fSMClockMax},
	"clocks_event_reasons.active":            {f: fReasonMask},
	"clocks_throttle_reasons.active":         {f: fReasonMask},
	"ecc.errors.uncorrected.volatile.total":  {f: fECCVolTotal},
	"ecc.errors.uncorrected.volatile.dram":   {f: fECCVol},
	"ecc.errors.uncorrected.volatile.sram":   {f: fECCVol},
	"ecc.errors.uncorrected.aggregate.total": {f: fECCAggTotal},
	"ecc.errors.uncorrected.aggregate.dram":  {f: fECCAgg},
	"ecc.errors.uncorrected.aggregate.sram":  {f: fECCAgg},
	"retired_pages.pending":                  {f: fRetiredPending},
	"remapped_rows.pending":                  {f: fRemapPending},
	"remapped_rows.failure":                  {f: fRemapFailure},
	"retired_pages.double_bit.count":         {f: fRetiredDBE},
	"retired_pages.dbe":                      {f: fRetiredDBE},
	"remapped_rows.uncorrectable":            {f: fRemapUncorr},
	"remapped_rows.dbe":                      {f: fRemapUncorr},
	"mig.mode.current":                       {f: fMIG},
	"fabric.state":                           {f: fFabricState},
	"fabric.status":                          {f: fFabricStatus},
	"gpu_recovery_action":                    {f: fRecovery},
	"pcie.link.gen.gpucurrent":               {},
	"pcie.link.gen.gpumax":                   {},
	"pcie.link.gen.hostmax":                  {},
	"count":                                  {},
	"serial":                                 {},
	"gpu_serial":                             {},
	"vbios_version":                          {},
	"fan.speed":                              {},
	"memory.free":                            {},
	"memory.reserved":                        {},
	"utilization.encoder":                    {},
	"utilization.decoder":                    {},
	"utilization.jpeg":                       {},
	"utilization.ofa":                        {},
	"temperature.memory":                     {},
	"temperature.gpu.tlimit":                 {},
	"power.default_limit":                    {},
	"power.min_limit":                        {},
	"power.max_limit":                        {},
	"power.management":                       {},
	"clocks.current.graphics":                {},
	"clocks.gr":                              {},
	"clocks.current.video":                   {},
	"clocks.video":                           {},
	"clocks.max.graphics":                    {},
	"clocks.max.gr":                          {},
	"clocks.max.memory":                      {},
	"clocks.max.mem":                         {},
	"clocks_event_reasons.supported":         {},
	"clocks_throttle_reasons.supported":      {},
	"ecc.mode.current":                       {},
	"ecc.mode.pending":                       {},
	"mig.mode.pending":                       {},
	"gsp.mode.current":                       {},
	"display_mode":                           {},
	"display_active":                         {},
	"accounting.mode":                        {},
	"pci.domain":                             {},
	"pci.bus":                                {},
	"pci.device":                             {},
	"pci.device_id":                          {},
	"pci.sub_device_id":                      {},
	"retired_pages.single_bit_ecc.count":     {},
	"retired_pages.sbe":                      {},
	"remapped_rows.correctable":              {},
	"inforom.img":                            {},
	"addressing_mode":                        {},
	"platform.chassis_serial_number":         {},
}

// appFields are the --query-compute-apps fields.
var appFields = map[string]spec{
	"timestamp":       {f: fTime},
	"pid":             {f: fPID},
	"process_name":    {f: fProcName},
	"name":            {f: fProcName},
	"used_gpu_memory": {f: fProcMem},
	"used_memory":     {f: fProcMem},
	"gpu_bus_id":      {f: fBusID},
	"gpu_uuid":        {f: fUUID},
	"gpu_name":        {f: fGPUName},
	"gpu_serial":      {},
}

func init() {
	for _, r := range reasonBits {
		for _, pre := range []string{"clocks_event_reasons.", "clocks_throttle_reasons."} {
			csvFields[pre+r.name] = spec{f: fReason, arg: r.name}
		}
	}
	for _, n := range []string{"sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"} {
		csvFields["clocks_event_reasons_counters."+n] = spec{f: fCounter, arg: n}
	}
}

// headerName strips the blanks and the " [MiB]" unit from a header cell.
func headerName(f []byte) []byte {
	f = bytes.TrimSpace(f)
	if i := bytes.IndexByte(f, '['); i > 0 {
		f = bytes.TrimSpace(f[:i])
	}
	return f
}

type csvParser struct {
	in   *textio.Input
	r    *rep
	out  *facts.Facts
	thin thinner

	cols     []spec
	labels   [][]byte
	apps     bool
	nameCol  int // the process name column, which may hold commas
	haveHead bool

	snap *facts.GPUSnapshot
	// The GPUs (by index or id) and processes of the current snapshot.
	keyIdx  map[int]struct{}
	keyStr  map[string]struct{}
	keyProc map[procKey]struct{}
	buf     [][]byte
	pos     []span
}

func parseCSV(in *textio.Input, out *facts.Facts) {
	p := &csvParser{in: in, r: &rep{in: in}, out: out, nameCol: -1,
		keyIdx: map[int]struct{}{}, keyStr: map[string]struct{}{}, keyProc: map[procKey]struct{}{}}
	for in.Scan() {
		p.line(trimRight(in.Bytes()))
	}
	p.finish()
	p.thin.flush(out, in)
	p.r.done()
}

func (p *csvParser) line(l []byte) {
	if len(bytes.TrimSpace(l)) == 0 {
		return
	}
	if _, ok := errorLine(l); ok {
		p.ensureSnap()
		addError(p.snap, p.in.Src(), l)
		return
	}
	p.buf, p.pos = splitComma(p.buf[:0], p.pos[:0], l)
	fields := p.buf
	// Field names start with a lower-case letter; rows seldom do.
	if c := fields[0]; len(c) > 0 && 'a' <= c[0] && c[0] <= 'z' {
		if known, total := headerFieldsScore(fields); known > 0 && known*2 > total {
			p.header(fields)
			return
		}
	}
	if !p.haveHead {
		p.guess(fields)
	}
	if len(p.cols) == 0 {
		p.r.here(facts.IssueMalformed, "CSV row without a header naming nvidia-smi fields")
		return
	}
	if len(fields) > len(p.cols) && p.nameCol >= 0 {
		// A process title with commas: glue the extra cells back into it.
		extra := len(fields) - len(p.cols)
		fields[p.nameCol] = bytes.TrimSpace(l[p.pos[p.nameCol].s:p.pos[p.nameCol+extra].e])
		fields = append(fields[:p.nameCol+1], fields[p.nameCol+extra+1:]...)
	}
	if len(fields) != len(p.cols) {
		p.r.here(facts.IssueMalformed, "CSV row has %d fields, the header names %d", len(fields), len(p.cols))
		if len(fields) > len(p.cols) {
			fields = fields[:len(p.cols)]
		}
	}
	if p.apps {
		p.appRow(fields)
	} else {
		p.gpuRow(fields)
	}
}

func (p *csvParser) header(fields [][]byte) {
	apps := false
	for _, f := range fields {
		if string(headerName(f)) == "pid" {
			apps = true
		}
	}
	if p.haveHead && apps != p.apps || p.apps {
		// Another query, or the same query run again: a new snapshot.
		p.finish()
	}
	p.apps, p.haveHead = apps, true
	p.cols, p.labels, p.nameCol = p.cols[:0], p.labels[:0], -1
	table := csvFields
	if apps {
		table = appFields
	}
	for i, f := range fields {
		n := headerName(f)
		sp := table[string(n)]
		if sp.f == fProcName {
			p.nameCol = i
		}
		p.cols = append(p.cols, sp)
		p.labels = append(p.labels, []byte(string(n)))
	}
	if apps {
		// The header is printed even when no process runs: "none" is a fact.
		p.ensureSnap()
		p.snap.ProcsListed = true
	}
}

func (p *csvParser) ensureSnap() {
	if p.snap == nil {
		p.snap = p.thin.get(p.in.Src(), facts.KindNvidiaSMICSV)
	}
}

func (p *csvParser) stamp(t time.Time) {
	if p.snap.At.IsZero() {
		p.snap.At, p.snap.AtFrom = t, "nvidia-smi timestamp"
	}
	clock(p.out, p.in.Path, t)
}

func (p *csvParser) readTime(i int, v []byte) (time.Time, bool) {
	if special(v) != valOK {
		return time.Time{}, false
	}
	t, ok := parseCSVTime(v)
	if !ok {
		p.r.here(facts.IssueMalformed, "%s: %s is not a YYYY/MM/DD HH:MM:SS.mmm time", p.labels[i], describe(v))
	}
	return t, ok
}

type procKey struct {
	pid int
	gpu string
}

// rowKey finds the GPU a row is about: its index, else its bus id or UUID.
func (p *csvParser) rowKey(fields [][]byte) (int, string) {
	id := ""
	for i, v := range fields {
		switch p.cols[i].f {
		case fIndex:
			if n, ok := atoi(v); ok {
				return n, ""
			}
		case fBusID:
			if b := p.r.bus(v); b != "" {
				id = b
			}
		case fUUID:
			if id == "" {
				id = p.r.str(v)
			}
		}
	}
	return -1, id
}

func (p *csvParser) gpuRow(fields [][]byte) {
	line := p.in.Line()
	idx, id := p.rowKey(fields)
	if p.snap != nil {
		_, dupIdx := p.keyIdx[idx]
		_, dupStr := p.keyStr[id]
		if idx >= 0 && dupIdx || idx < 0 && id != "" && dupStr || len(p.snap.Procs) > 0 {
			p.finish()
		}
	}
	p.ensureSnap()
	switch {
	case len(p.snap.GPUs) >= MaxGPUs:
		// Not kept: its key is not kept either.
	case idx >= 0:
		p.keyIdx[idx] = struct{}{}
	case id != "":
		p.keyStr[id] = struct{}{}
	}
	b := gpuB{g: nextGPU(p.snap, p.in.Src())}
	var at time.Time
	driver := ""
	for i, v := range fields {
		sp := p.cols[i]
		switch sp.f {
		case fNone:
		case fTime:
			if t, ok := p.readTime(i, v); ok {
				at = t
			}
		case fDriver:
			driver = p.r.str(v)
		default:
			b.apply(p.r, line, sp, p.labels[i], v)
		}
	}
	if !at.IsZero() {
		p.stamp(at)
	}
	if driver != "" {
		p.snap.Driver = driver
	}
	b.finish(p.r)
}

func (p *csvParser) appRow(fields [][]byte) {
	proc := facts.GPUProcess{Src: p.in.Src(), GPU: -1}
	pr := &proc
	var at time.Time
	for i, v := range fields {
		switch p.cols[i].f {
		case fTime:
			if t, ok := p.readTime(i, v); ok {
				at = t
			}
		case fPID:
			if n, ok := atoi(bytes.TrimSpace(v)); ok {
				pr.PID = n
			} else if special(v) == valOK {
				p.r.here(facts.IssueMalformed, "%s: %s is not a process id", p.labels[i], describe(v))
			}
		case fProcName:
			pr.Name = p.r.intern(bytes.TrimSpace(v))
		case fProcMem:
			f, st := number(v)
			switch st {
			case valOK:
				pr.MemMiB = facts.V(f)
			case valBad:
				p.r.here(facts.IssueMalformed, "%s: %s is not a number", p.labels[i], describe(v))
			}
		case fBusID:
			if special(v) == valOK {
				if pr.BusID = p.r.bus(v); pr.BusID == "" {
					p.r.here(facts.IssueMalformed, "%s: %s is not a PCI bus id", p.labels[i], describe(v))
				}
			}
		case fUUID:
			pr.UUID = p.r.str(v)
		}
	}
	key := procKey{pr.PID, pr.BusID + pr.UUID}
	if p.snap != nil {
		if _, dup := p.keyProc[key]; dup || len(p.snap.GPUs) > 0 {
			p.finish()
		}
	}
	p.ensureSnap()
	p.snap.ProcsListed = true
	if len(p.snap.Procs) < MaxGPUProcs {
		p.keyProc[key] = struct{}{}
	}
	if !at.IsZero() {
		p.stamp(at)
	}
	*nextProc(p.snap, proc.Src) = proc
}

func (p *csvParser) finish() {
	if p.snap == nil {
		return
	}
	p.thin.add(p.snap)
	p.snap = nil
	clear(p.keyIdx)
	clear(p.keyStr)
	clear(p.keyProc)
}

// splitComma splits a CSV line on commas, and says where each cell is;
// nvidia-smi neither quotes nor escapes, so this is the whole grammar.
func splitComma(dst [][]byte, pos []span, l []byte) ([][]byte, []span) {
	start := 0
	for {
		i := bytes.IndexByte(l[start:], ',')
		end := start + i
		if i < 0 {
			end = len(l)
		}
		dst = append(dst, bytes.TrimSpace(l[start:end]))
		pos = append(pos, span{start, end})
		if i < 0 {
			return dst, pos
		}
		start = end + 1
	}
}

var (
	pstateRe  = regexp.MustCompile(`^P\d{1,2}$`)
	driverRe  = regexp.MustCompile(`^\d{3}\.\d{1,3}\.\d{1,3}$`)
	withUnit  = regexp.MustCompile(`^-?\d+(\.\d+)? ?(MiB|%|W|MHz)$`)
	plainInt  = regexp.MustCompile(`^\d+$`)
	gpuPrefix = regexp.MustCompile(`^(NVIDIA|Tesla|Quadro|GeForce|TITAN|GRID) `)
)

// guess names the columns of a CSV without a header from the shapes of the
// first row's values. nvidia-smi prints `--format=csv,noheader` rows with
// no clue but the values, so only unambiguous shapes are read:
//   - YYYY/MM/DD HH:MM:SS.mmm is the timestamp; dddd:bb:dd.f the bus id;
//     GPU-... the UUID; 0x + hex the active clock event reasons; P0..P15
//     the performance state; a three-part version (580.159.04) the driver;
//     d.d (9.0) the compute capability; a name starting NVIDIA, Tesla,
//     Quadro, GeForce, TITAN or GRID the GPU name; an integer below 256 in
//     the first column, or the second after the timestamp, the index.
//   - With units: the first "%" is utilization.gpu, the second
//     utilization.memory; the first "W" power.draw, the second power.limit;
//     of two or three "MiB" columns the largest is memory.total and the
//     first other one memory.used (nvidia-smi users write total,used,free or
//     used,total); a single MiB column is left unread, as used and total
//     cannot be told apart. MHz columns are left unread (graphics, SM and
//     memory clocks look alike).
//   - A row with a process-like text (not a GPU name), an integer and a MiB
//     value, and no % or W, is --query-compute-apps: the integer is the
//     pid, the text the process name, the MiB value the used memory.
//
// A row with none of these shapes is not read at all. What was guessed is
// stated in out.Assumptions.
func (p *csvParser) guess(fields [][]byte) {
	n := len(fields)
	cols := make([]spec, n)
	var pct, watt, mib, ints, texts []int
	hasName := false
	for i, f := range fields {
		switch {
		case csvTSRe.Match(f):
			cols[i] = spec{f: fTime}
		case bytes.HasPrefix(f, gpuUUIDs) || bytes.HasPrefix(f, []byte("MIG-")):
			cols[i] = spec{f: fUUID}
		case bytes.Count(f, []byte(":")) >= 1 && bytes.IndexByte(f, '.') > 0 && NormalizeBusID(string(f)) != "":
			cols[i] = spec{f: fBusID}
		case len(f) > 2 && f[0] == '0' && f[1] == 'x':
			cols[i] = spec{f: fReasonMask}
		case pstateRe.Match(f):
			cols[i] = spec{f: fPState}
		case driverRe.Match(f):
			cols[i] = spec{f: fDriver}
		case isCC(f):
			cols[i] = spec{f: fCC}
		case gpuPrefix.Match(f):
			if !hasName {
				cols[i] = spec{f: fName}
				hasName = true
			}
		case withUnit.Match(f):
			switch {
			case bytes.HasSuffix(f, []byte("MiB")):
				mib = append(mib, i)
			case bytes.HasSuffix(f, []byte("%")):
				pct = append(pct, i)
			case bytes.HasSuffix(f, []byte("W")):
				watt = append(watt, i)
			}
		case plainInt.Match(f):
			ints = append(ints, i)
		case special(f) == valOK && len(f) > 0 && !isNumberish(f):
			texts = append(texts, i)
		}
	}
	strong := hasName || len(pct)+len(watt)+len(mib) > 0
	for _, c := range cols {
		strong = strong || c.f != fNone
	}
	if !strong {
		// Nothing says this is nvidia-smi: read nothing rather than guess.
		return
	}
	apps := !hasName && len(pct) == 0 && len(watt) == 0 && len(mib) >= 1 && len(ints) >= 1 && len(texts) >= 1
	if apps {
		cols[ints[0]] = spec{f: fPID}
		cols[texts[0]] = spec{f: fProcName}
		cols[mib[0]] = spec{f: fProcMem}
		for i := range cols {
			if cols[i].f == fName {
				cols[i] = spec{f: fGPUName}
			}
		}
	} else {
		if len(ints) > 0 && (ints[0] == 0 || ints[0] == 1 && cols[0].f == fTime) {
			if v, _ := atoi(fields[ints[0]]); v < 256 {
				cols[ints[0]] = spec{f: fIndex}
			}
		}
		for k, i := range pct {
			if k < 2 {
				cols[i] = spec{f: []field{fUtilGPU, fUtilMem}[k]}
			}
		}
		for k, i := range watt {
			if k < 2 {
				cols[i] = spec{f: []field{fPowerDraw, fLimit}[k]}
			}
		}
		if len(mib) == 2 || len(mib) == 3 {
			big := mib[0]
			for _, i := range mib {
				a, _ := number(fields[i])
				b, _ := number(fields[big])
				if a > b {
					big = i
				}
			}
			cols[big] = spec{f: fMemTotal}
			for _, i := range mib {
				if i != big {
					cols[i] = spec{f: fMemUsed}
					break
				}
			}
		}
	}
	p.cols, p.apps, p.nameCol = cols, apps, -1
	p.labels = p.labels[:0]
	var names []string
	for i, c := range cols {
		name := guessName(c.f)
		if c.f == fProcName {
			p.nameCol = i
		}
		p.labels = append(p.labels, []byte("column "+itoa(i+1)+" ("+name+")"))
		names = append(names, name)
	}
	p.haveHead = true
	p.out.Assumptions = append(p.out.Assumptions, p.in.Path+" is nvidia-smi CSV without a header; its columns were read by the shape of their values as: "+strings.Join(names, ", "))
	if apps {
		p.ensureSnap()
		p.snap.ProcsListed = true
	}
}

func isNumberish(f []byte) bool {
	_, st := number(f)
	return st == valOK
}

func guessName(f field) string {
	switch f {
	case fTime:
		return "timestamp"
	case fUUID:
		return "uuid"
	case fBusID:
		return "pci.bus_id"
	case fReasonMask:
		return "clocks_event_reasons.active"
	case fPState:
		return "pstate"
	case fDriver:
		return "driver_version"
	case fCC:
		return "compute_cap"
	case fName:
		return "name"
	case fGPUName:
		return "gpu_name"
	case fIndex:
		return "index"
	case fUtilGPU:
		return "utilization.gpu"
	case fUtilMem:
		return "utilization.memory"
	case fPowerDraw:
		return "power.draw"
	case fLimit:
		return "power.limit"
	case fMemTotal:
		return "memory.total"
	case fMemUsed:
		return "memory.used"
	case fPID:
		return "pid"
	case fProcName:
		return "process_name"
	case fProcMem:
		return "used_memory"
	}
	return "?"
}
