package nvsmi

import (
	"bytes"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// field is a GPU fact that several formats print under different names. The
// -q text, XML and CSV tables below map their keys to fields, so that one
// function (apply) knows how to read each value.
type field uint8

const (
	fNone field = iota
	fName
	fArch
	fUUID
	fBusID
	fIndex
	fCC
	fPersist
	fMIG
	fComputeMode
	fReset
	fDrain
	fRecovery
	fGenCur
	fGenMax
	fWidthCur
	fWidthMax
	fReplays
	fPState
	fReason     // arg: reason name; value Active / Not Active
	fReasonMask // the CSV hex bitmask
	fCounter    // arg: reason name; value in us
	fMemTotal
	fMemUsed
	fUtilGPU
	fUtilMem
	fECCVol      // a part of the volatile uncorrected count, summed
	fECCVolTotal // the volatile uncorrected total, when printed
	fECCAgg
	fECCAggTotal
	fRetiredPending
	fRemapPending
	fRetiredDBE
	fRemapUncorr
	fRemapFailure
	fTemp
	fPowerDraw // "Power Draw", "Average Power Draw": the same reading in two eras
	fPowerInst
	fLimitEnforced
	fLimit // the requested limit, used only when the enforced one is absent
	fSMClock
	fMemClock
	fSMClockMax
	fFabricState
	fFabricStatus
	// CSV only: snapshot and process columns.
	fDriver
	fTime
	fPID
	fProcName
	fProcMem
	fGPUName // compute-apps gpu_name: not stored, known so that it is no "unknown column"
)

type spec struct {
	f   field
	arg string
}

// The clock event reasons: bit, name (research §4).
var reasonBits = [...]struct {
	bit  uint64
	name string
}{
	{0x001, "gpu_idle"},
	{0x002, "applications_clocks_setting"},
	{0x004, "sw_power_cap"},
	{0x008, "hw_slowdown"},
	{0x010, "sync_boost"},
	{0x020, "sw_thermal_slowdown"},
	{0x040, "hw_thermal_slowdown"},
	{0x080, "hw_power_brake_slowdown"},
	{0x100, "display_clocks_setting"},
}

// gpuB builds one GPU. It remembers which of two competing keys set a value,
// so that the better one wins whatever the order of the dump.
type gpuB struct {
	g           *facts.GPU
	powerPrio   int8
	limitPrio   int8
	eccVolTotal bool
	eccAggTotal bool
}

func newGPU(src facts.Source) *gpuB {
	return &gpuB{g: &facts.GPU{Src: src, Index: -1}}
}

// apply reads the value v of field sp into the GPU. label names the key in
// issue details and ReadErrors (the caller's key, path or column); it is a
// byte slice so that it costs nothing unless something is wrong.
func (b *gpuB) apply(r *rep, line int, sp spec, label []byte, v []byte) {
	g := b.g
	if special(v) == valReadErr {
		b.readErr(r, line, label, v)
		return
	}
	switch sp.f {
	case fName:
		if s := r.str(v); s != "" {
			g.Name = s
		}
	case fArch:
		if s := r.str(v); s != "" {
			g.Arch = s
		}
	case fUUID:
		if s := r.str(v); s != "" {
			g.UUID = s
		}
	case fBusID:
		if special(v) != valOK {
			return
		}
		if id := r.bus(v); id != "" {
			g.BusID = id
		} else {
			r.at(line, facts.IssueMalformed, "%s: %q is not a PCI bus id", label, v)
		}
	case fIndex:
		if special(v) != valOK {
			return
		}
		if n, ok := atoi(bytes.TrimSpace(v)); ok {
			g.Index = n
		} else {
			r.at(line, facts.IssueMalformed, "%s: %q is not a GPU index", label, v)
		}
	case fCC:
		if special(v) != valOK {
			return
		}
		v = bytes.TrimSpace(v)
		if isCC(v) {
			g.CC, g.CCFrom = r.intern(v), "dump"
		} else {
			r.at(line, facts.IssueMalformed, "%s: %q is not a compute capability", label, v)
		}
	case fPersist:
		switch {
		case special(v) != valOK:
		case yes(v):
			g.Persist = "Enabled"
		default:
			g.Persist = "Disabled"
		}
	case fMIG:
		if special(v) == valOK {
			g.MIG = yes(v)
		}
	case fComputeMode:
		if s := r.str(v); s != "" {
			g.ComputeMode = computeMode(s)
		}
	case fReset:
		b.flag(r, line, label, v, &g.ResetRequired)
	case fDrain:
		b.flag(r, line, label, v, &g.DrainRecommended)
	case fRecovery:
		s := r.intern(bytes.TrimSpace(unbracket(v)))
		if st := special(v); st == valReadErr {
			b.readErr(r, line, label, v)
			return
		}
		if s == "" || strings.EqualFold(s, "N/A") {
			return
		}
		g.RecoveryAction = s
		l := strings.ToLower(s)
		if strings.Contains(l, "reset") || strings.Contains(l, "reboot") {
			g.ResetRequired = true
		}
		if strings.Contains(l, "drain") {
			g.DrainRecommended = true
		}
	case fGenCur:
		b.num(r, line, label, v, &g.PCIeGenCur)
	case fGenMax:
		b.num(r, line, label, v, &g.PCIeGenMax)
	case fWidthCur:
		b.num(r, line, label, v, &g.PCIeWidthCur)
	case fWidthMax:
		b.num(r, line, label, v, &g.PCIeWidthMax)
	case fReplays:
		b.num(r, line, label, v, &g.PCIeReplays)
	case fPState:
		if s := r.str(v); s != "" {
			g.PState = s
		}
	case fReason:
		var on bool
		if b.flag(r, line, label, v, &on) && on {
			b.reason(sp.arg)
		}
	case fReasonMask:
		if st := special(v); st != valOK {
			if st == valReadErr {
				b.readErr(r, line, label, v)
			}
			return
		}
		t := bytes.TrimSpace(unbracket(v))
		if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
			if m, ok := parseHex(t[2:]); ok {
				for _, r := range reasonBits {
					if m&r.bit != 0 {
						b.reason(r.name)
					}
				}
				return
			}
		}
		r.at(line, facts.IssueMalformed, "%s: %q is not a hex bitmask", label, v)
	case fCounter:
		var x facts.Val
		if b.num(r, line, label, v, &x) {
			if g.ClockEventsUS == nil {
				g.ClockEventsUS = make(map[string]float64, 5)
			}
			g.ClockEventsUS[sp.arg] = x.V
		}
	case fMemTotal:
		b.num(r, line, label, v, &g.MemTotalMiB)
	case fMemUsed:
		b.num(r, line, label, v, &g.MemUsedMiB)
	case fUtilGPU:
		b.num(r, line, label, v, &g.UtilGPU)
	case fUtilMem:
		b.num(r, line, label, v, &g.UtilMem)
	case fECCVol, fECCAgg:
		total, dst := &b.eccVolTotal, &g.ECCVolatileUncorr
		if sp.f == fECCAgg {
			total, dst = &b.eccAggTotal, &g.ECCAggregateUncorr
		}
		var x facts.Val
		if b.num(r, line, label, v, &x) && !*total {
			dst.V += x.V
			dst.OK = true
		}
	case fECCVolTotal, fECCAggTotal:
		total, dst := &b.eccVolTotal, &g.ECCVolatileUncorr
		if sp.f == fECCAggTotal {
			total, dst = &b.eccAggTotal, &g.ECCAggregateUncorr
		}
		var x facts.Val
		if b.num(r, line, label, v, &x) {
			*dst, *total = x, true
		}
	case fRetiredPending:
		b.flag(r, line, label, v, &g.RetiredPagesPending)
	case fRemapPending:
		b.flag(r, line, label, v, &g.RemapPending)
	case fRetiredDBE:
		b.num(r, line, label, v, &g.RetiredPagesDBE)
	case fRemapUncorr:
		b.num(r, line, label, v, &g.RemappedRowsUncorr)
	case fRemapFailure:
		b.flag(r, line, label, v, &g.RemapFailure)
	case fTemp:
		b.num(r, line, label, v, &g.TempC)
	case fPowerDraw, fPowerInst:
		prio := int8(1)
		if sp.f == fPowerInst {
			prio = 2
		}
		var x facts.Val
		if b.num(r, line, label, v, &x) && (b.powerPrio == 0 || prio <= b.powerPrio) {
			g.PowerW, b.powerPrio = x, prio
		}
	case fLimitEnforced, fLimit:
		prio := int8(1)
		if sp.f == fLimit {
			prio = 2
		}
		var x facts.Val
		if b.num(r, line, label, v, &x) && (b.limitPrio == 0 || prio <= b.limitPrio) {
			g.PowerLimitW, b.limitPrio = x, prio
		}
	case fSMClock:
		b.num(r, line, label, v, &g.SMClockMHz)
	case fMemClock:
		b.num(r, line, label, v, &g.MemClockMHz)
	case fSMClockMax:
		b.num(r, line, label, v, &g.SMClockMaxMHz)
	case fFabricState:
		if s := r.str(v); s != "" {
			g.FabricState = s
		}
	case fFabricStatus:
		if s := r.str(v); s != "" {
			g.FabricStatus = s
		}
	}
}

// num reads a number into dst. It reports whether one was read.
func (b *gpuB) num(r *rep, line int, label, v []byte, dst *facts.Val) bool {
	f, st := number(v)
	switch st {
	case valOK:
		*dst = facts.V(f)
		return true
	case valReadErr:
		b.readErr(r, line, label, v)
	case valBad:
		r.at(line, facts.IssueMalformed, "%s: %q is not a number", label, v)
	}
	return false
}

// flag reads a Yes/No value. It reports whether one was read.
func (b *gpuB) flag(r *rep, line int, label, v []byte, dst *bool) bool {
	switch special(v) {
	case valOK:
		*dst = yes(v)
		return true
	case valReadErr:
		b.readErr(r, line, label, v)
	}
	return false
}

// readErr records a value nvidia-smi could not read: ERR!, Unknown Error.
// It is evidence about the GPU (kept on it) and a gap in the dump (an issue).
func (b *gpuB) readErr(r *rep, line int, label, v []byte) {
	name := string(label)
	for _, x := range b.g.ReadErrors {
		if x == name {
			return
		}
	}
	if len(b.g.ReadErrors) < 64 {
		b.g.ReadErrors = append(b.g.ReadErrors, name)
	}
	r.at(line, facts.IssueUnreadable, "nvidia-smi printed %q for %s", bytes.TrimSpace(v), label)
}

func (b *gpuB) reason(name string) {
	for _, r := range b.g.ClockReasons {
		if r == name {
			return
		}
	}
	b.g.ClockReasons = append(b.g.ClockReasons, name)
}

// finish derives what the dump did not print.
func (b *gpuB) finish(r *rep) *facts.GPU {
	r.finishGPU(b.g)
	return b.g
}

// finishGPU fills the architecture and compute capability from the product
// name (or the architecture) when the dump lacks them.
func finishGPU(g *facts.GPU) {
	if g.CC != "" && g.Arch != "" {
		return
	}
	var c capResult
	c.arch, c.cc, c.ok = Capability(g.Name)
	applyCapability(g, c)
}

func applyCapability(g *facts.GPU, c capResult) {
	if c.ok {
		if g.Arch == "" {
			g.Arch = c.arch
		}
		if g.CC == "" {
			g.CC, g.CCFrom = c.cc, "name"
		}
		return
	}
	if g.CC == "" && g.Arch != "" {
		if cc, ok := archCapability(g.Arch); ok {
			g.CC, g.CCFrom = cc, "arch"
		}
	}
}

// str returns a string value, or "" for N/A and its kin.
func str(v []byte) string {
	if special(v) != valOK {
		return ""
	}
	return string(bytes.TrimSpace(unbracket(v)))
}

func isCC(v []byte) bool {
	i := bytes.IndexByte(v, '.')
	if i <= 0 || i > 2 || i == len(v)-1 || len(v)-i > 3 {
		return false
	}
	_, ok1 := atoi(v[:i])
	_, ok2 := atoi(v[i+1:])
	return ok1 && ok2
}

// computeMode stores the table's abbreviations under the -q names.
func computeMode(s string) string {
	switch s {
	case "E. Process":
		return "Exclusive_Process"
	case "E. Thread":
		return "Exclusive_Thread"
	}
	return s
}
