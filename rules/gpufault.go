package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(gpuFaultRule) }

var gpuFaultRule = &Rule{
	ID:       "gpu-fault",
	Title:    "GPU hardware or driver fault",
	Severity: SeverityCritical,
	Category: CatGPUFault,
	Needs: []facts.Kind{facts.KindKernelLog, facts.KindNvidiaSMIQ, facts.KindNvidiaSMIXML, facts.KindNvidiaSMICSV,
		facts.KindNvidiaSMITable, facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `GPUs fail in ways the application cannot fix: the driver reports an Xid in
the kernel log (79 fallen off the bus, 48 double-bit ECC, 94/95 contained and
uncontained ECC errors, 119/120 GSP timeouts, 13/31/43 engine exceptions and
MMU faults that are usually the application's own bug), ECC counters show
uncorrectable errors, row remapping failed or waits for a reset, nvidia-smi
says "Reset Required", or the PCIe link runs below its maximum width or
generation while the GPU works.

The rule reads the Xid catalog's meaning, severity and action for each code
(the kernel-log parser attaches it), maps the PCI address to the GPU of the
inventory, and reports the first Xid of a burst (later ones are often its
consequences). Xid 13, 31 and 43 point to the application (an illegal memory
access in a kernel) rather than the hardware, and are reported so.

An idle GPU drops its PCIe link to a lower generation to save power; that is
not a fault, so the link check needs the GPU busy.`,
	References: []string{
		"https://docs.nvidia.com/deploy/xid-errors/index.html",
		"https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html",
	},
	Run: runGPUFault,
}

var sevOrder = map[string]int{"critical": 3, "error": 2, "warning": 1, "info": 0}

func runGPUFault(p *Pass) {
	idx := p.Index
	inv := idx.Inventory()
	gpuOf := func(bus string) string {
		for _, g := range inv {
			if g.BusID != "" && strings.EqualFold(g.BusID, bus) {
				return fmt.Sprintf("GPU %d (%s, %s)", g.Index, g.Name, bus)
			}
		}
		if bus == "" {
			return "a GPU"
		}
		return "the GPU at " + bus
	}

	// Xids, grouped by code; the first of the burst leads.
	var xids []*facts.KernelEvent
	for _, k := range idx.Facts.Kernel {
		if k.Type == facts.KernelXid {
			xids = append(xids, k)
		}
	}
	if len(xids) > 0 {
		byCode := map[int][]*facts.KernelEvent{}
		var codes []int
		for _, x := range xids {
			if _, ok := byCode[x.Code]; !ok {
				codes = append(codes, x.Code)
			}
			byCode[x.Code] = append(byCode[x.Code], x)
		}
		first := xids[0]
		sort.SliceStable(codes, func(i, j int) bool { return byCode[codes[i]][0].Src.Line < byCode[codes[j]][0].Src.Line })
		for _, code := range codes {
			list := byCode[code]
			x := list[0]
			m := x.Xid
			sev, name, meaning, action := "error", fmt.Sprintf("Xid %d", code), "not in coroner's Xid catalog", "Look the code up in NVIDIA's Xid catalog and check `nvidia-smi -q` for the GPU's state."
			if m != nil {
				sev, name, meaning, action = orDefault(m.Severity, sev), fmt.Sprintf("Xid %d (%s)", code, m.Name), m.Meaning, m.Action
			}
			app := code == 13 || code == 31 || code == 43
			var ev []Evidence
			for i, k := range list {
				if i < 4 {
					ev = append(ev, Evidence{Src: k.Src, Text: k.Text})
				}
			}
			msg := period(fmt.Sprintf("%s on %s, %d time(s), first at %s: %s", name, gpuOf(x.BusID), len(list), x.Src, meaning))
			if x != first && m != nil && m.Secondary {
				msg += fmt.Sprintf(" It usually follows another Xid; the burst started with Xid %d at %s.", first.Code, first.Src)
			}
			if x.PID > 0 {
				if x.Comm != "" {
					msg += fmt.Sprintf(" The driver names pid %d (%s).", x.PID, x.Comm)
				} else {
					msg += fmt.Sprintf(" The driver names pid %d.", x.PID)
				}
			}
			f := Finding{
				Title:      name + " on " + gpuOf(x.BusID),
				Severity:   Severity(sev),
				Message:    msg,
				Remedy:     action,
				Evidence:   ev,
				Confidence: 0.5 + 0.15*float64(sevOrder[sev]),
				Cause:      sevOrder[sev] >= 2,
				Why:        "the driver logged " + name,
			}
			if app {
				f.Category = CatKernelBug
				f.Why = name + " comes from a kernel's own fault, not the hardware"
			}
			if sevOrder[sev] >= 3 {
				f.Outcome = OutcomeCrashed
			}
			p.Report(f)
		}
	}

	// The GPUs' own state.
	seen := map[string]bool{}
	for _, s := range idx.GPUSnapshots() {
		for _, g := range s.GPUs {
			key := fmt.Sprintf("%s/%d", g.BusID, g.Index)
			name := fmt.Sprintf("GPU %d (%s)", g.Index, shortGPU(g.Name))
			var probs []string
			if g.ResetRequired {
				probs = append(probs, "nvidia-smi says a reset is required")
			}
			if g.ECCVolatileUncorr.OK && g.ECCVolatileUncorr.V > 0 {
				probs = append(probs, fmt.Sprintf("%.0f uncorrectable ECC error(s) since the driver loaded", g.ECCVolatileUncorr.V))
			}
			if g.RemapFailure {
				probs = append(probs, "row remapping failed (the GPU needs service)")
			}
			if g.RemapPending {
				probs = append(probs, "a row remap waits for a GPU reset")
			}
			if g.RetiredPagesPending {
				probs = append(probs, "retired pages wait for a reboot")
			}
			if len(probs) == 0 || seen[key] {
				continue
			}
			seen[key] = true
			p.Report(Finding{
				Title:      name + ": " + probs[0],
				Message:    fmt.Sprintf("%s at %s: %s.", name, g.Src, strings.Join(probs, "; ")),
				Remedy:     "Drain the node and reset the GPU (`nvidia-smi -r -i N` with nothing running on it, or a reboot); if uncorrectable errors or remap failures return, the GPU needs replacement.",
				Evidence:   []Evidence{{Src: g.Src, Text: strings.Join(probs, "; ")}},
				Confidence: 0.8,
				Cause:      true,
				Why:        "nvidia-smi reports the GPU's own error state",
			})
		}
	}
	// PCIe link below its maximum while the GPU works.
	if s := idx.LatestGPUs(); s != nil {
		for _, g := range s.GPUs {
			if !g.UtilGPU.OK || g.UtilGPU.V < 50 {
				continue
			}
			var what []string
			if g.PCIeWidthCur.OK && g.PCIeWidthMax.OK && g.PCIeWidthCur.V < g.PCIeWidthMax.V {
				what = append(what, fmt.Sprintf("width x%.0f of x%.0f", g.PCIeWidthCur.V, g.PCIeWidthMax.V))
			}
			if g.PCIeGenCur.OK && g.PCIeGenMax.OK && g.PCIeGenCur.V < g.PCIeGenMax.V {
				what = append(what, fmt.Sprintf("generation %.0f of %.0f", g.PCIeGenCur.V, g.PCIeGenMax.V))
			}
			if len(what) == 0 {
				continue
			}
			p.Report(Finding{
				Title:      fmt.Sprintf("GPU %d's PCIe link runs below its maximum", g.Index),
				Severity:   SeverityWarning,
				Message:    fmt.Sprintf("GPU %d (%s) runs its PCIe link at %s while %.0f%% busy (%s): a degraded link (riser, slot, cable) slows every host transfer and collective over PCIe.", g.Index, shortGPU(g.Name), strings.Join(what, " and "), g.UtilGPU.V, g.Src),
				Remedy:     "Check the slot and riser (`lspci -vv` LnkSta against LnkCap), reseat the card, and compare with the other GPUs of the node.",
				Evidence:   []Evidence{{Src: g.Src, Text: strings.Join(what, ", ")}},
				Confidence: 0.4,
			})
		}
	}
	// A fallen-off-the-bus text in the logs.
	for _, m := range idx.Matches(p.Rule.ID) {
		if m.AfterShutdown || (m.Event == nil && len(xids) > 0) {
			continue // a kernel line the Xid reading above already reported
		}
		p.Report(Finding{
			Title:      m.Sig.Title,
			Message:    fmt.Sprintf("%s at %s: %s.", m.Sig.Title, m.Src, trimText(m.Text, 200)),
			Remedy:     "Drain the node: a GPU that fell off the bus needs a reboot (often a power cycle) and, if it recurs, service.",
			Evidence:   []Evidence{{Src: m.Src, Text: m.Text}},
			Confidence: m.Sig.Confidence,
			Outcome:    OutcomeCrashed,
			Cause:      true,
			Why:        "the driver says the GPU is gone",
		})
		break
	}
}
