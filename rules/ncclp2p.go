package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(ncclRule) }

var ncclRule = &Rule{
	ID:       "nccl-p2p",
	Title:    "NCCL transport problem: peer-to-peer or shared memory",
	Severity: SeverityError,
	Category: CatNCCLP2P,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog, facts.KindNvidiaSMITopo, facts.KindDF, facts.KindCmdline},
	Doc: `NCCL moves tensors between GPUs over NVLink, PCIe peer-to-peer (P2P), or
host shared memory (SHM, /dev/shm). Each can break:

- PCIe P2P through a switch or root complex with ACS enabled, or an IOMMU in
  the way, hangs or corrupts transfers: the classic symptom is a hang at the
  first collective after "NCCL version" on PCIe-only machines (nvidia-smi
  topo -m without NV# links) with tensor parallelism >= 2;
- shared memory: Docker's default /dev/shm is 64 MB, far below what NCCL and
  the engines' broadcast queues need ("ncclShmOpen", "unable to allocate
  shared memory", "Bus error");
- "unhandled system error", "ncclSystemError", "NCCL WARN" lines name the
  transport that failed.

Reported as the cause when NCCL errors are logged; as a hypothesis when a
PCIe-only topology with TP >= 2 hangs in distributed init or the first
collective after it. A warning that GPUs have no peer access to each other
(TensorRT-LLM's allocator) is a hint, reported only when the run failed. An
NCCL error trace through its socket and bootstrap code alone is the ranks
failing to reach each other over the network NCCL picked (config).`,
	References: []string{
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html",
		"https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-p2p-disable",
		"https://docs.vllm.ai/en/latest/usage/troubleshooting.html",
	},
	Run: runNCCL,
}

func runNCCL(p *Pass) {
	idx, st := p.Index, &p.Index.State
	// Hints say the machine has no P2P path (a warning, no outcome): they
	// explain a failure, they are none.
	var ms, hints []SigMatch
	for _, m := range idx.LiveMatches(p.Rule.ID) {
		if m.Sig.Outcome == "" && m.Sig.Severity == SeverityWarning {
			hints = append(hints, m)
		} else {
			ms = append(ms, m)
		}
	}
	warns := idx.Events(facts.EventNCCLWarn)
	if len(ms) == 0 && len(warns) == 0 {
		if e := bootstrapFailure(idx); e != nil {
			// NCCL's bootstrap could not connect its ranks' sockets: the
			// network it picked (NCCL_SOCKET_IFNAME), not a GPU transport.
			p.Report(Finding{
				Title:      "NCCL's ranks could not reach each other over the network it chose for bootstrap",
				Category:   CatConfig,
				Message:    fmt.Sprintf("NCCL's error trace runs through its socket and bootstrap code (%s: %s): the ranks' bootstrap connections failed, before any GPU transport was set up. The usual cause is the interface NCCL picked (a link the peers cannot route to, an InfiniBand or Docker interface), a firewall, or a host name that resolves to the wrong address.", e.Src, derive.NCCLChain(e)),
				Remedy:     "Set NCCL_SOCKET_IFNAME to the interface the nodes reach each other on (and GLOO_SOCKET_IFNAME with it), open the ports between them, and run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to see the address each rank binds.",
				Evidence:   []Evidence{Ev(e)},
				Confidence: 0.5,
				Outcome:    OutcomeCrashed,
				Phase:      PhaseDistributedInit,
				Cause:      true,
				Why:        "NCCL's bootstrap sockets failed",
			})
			return
		}
	}
	shm := smallSHM(idx)
	if len(ms) > 0 || len(warns) > 0 {
		var ev []Evidence
		cat, title := CatNCCLP2P, "NCCL failed"
		outcome := Outcome("")
		conf := 0.5
		for i, m := range ms {
			if i < 4 {
				ev = append(ev, Evidence{Src: m.Src, Text: m.Text})
			}
			if m.Sig.Category == CatSHMExhausted {
				cat, title = CatSHMExhausted, m.Sig.Title
			}
			outcome = m.Sig.Outcome
			conf = max(conf, m.Sig.Confidence)
		}
		for i, w := range warns {
			if i < 4 {
				ev = append(ev, Ev(w))
			}
			if strings.Contains(w.Msg, "shm") || strings.Contains(w.Msg, "SHM") || strings.Contains(w.Msg, "shared memory") {
				cat, title = CatSHMExhausted, "NCCL could not use shared memory"
			}
		}
		if shm != nil {
			ev = append(ev, *shm)
			if cat == CatSHMExhausted {
				conf = min(0.95, conf+0.1)
			}
		}
		if len(ms) == 0 && st.Ready != nil && !st.Failed() {
			// NCCL's advisories (iommu=pt, a fallback transport) in a run
			// that works are not a problem of this run.
			p.RuleOut(fmt.Sprintf("%d NCCL WARN line(s), yet the server came up and served", len(warns)), ev[0])
			return
		}
		phase := idx.RunPhase()
		if len(ms) > 0 {
			phase = idx.MatchPhase(ms[0], phase)
		}
		// An NCCL failure of no transport of its own (a CUDA call, a
		// socket, an internal check) names no transport cause: the class
		// of its message does.
		named := cat == CatSHMExhausted || transportWarn(warns) || shm != nil
		p.Report(Finding{
			Title:      title,
			Category:   cat,
			Message:    period(fmt.Sprintf("%s (%s): %s", capitalize(title), ev[0].Src, trimText(ev[0].Text, 200))),
			Remedy:     ncclRemedy(cat),
			Evidence:   ev,
			Confidence: conf,
			Outcome:    outcome,
			Phase:      phase,
			Cause:      named,
			Why:        "NCCL reported the failure itself",
		})
		return
	}
	if len(hints) > 0 && (st.Failed() || idx.SignatureFailed()) {
		h := hints[0]
		ev := []Evidence{{Src: h.Src, Text: h.Text}}
		if root := RootFailure(st); root != nil {
			ev = append(ev, Ev(root))
		}
		p.Report(Finding{
			Title:      h.Sig.Title,
			Category:   CatNCCLP2P,
			Message:    fmt.Sprintf("%s (%s, %d such line(s)), and the run failed after it: whatever needs P2P (a custom all-reduce, NCCL's P2P transport) cannot work on these GPUs.", capitalize(h.Sig.Title), h.Src, len(hints)),
			Remedy:     h.Sig.Remedy,
			References: h.Sig.References,
			Evidence:   ev,
			Confidence: h.Sig.Confidence,
			Phase:      idx.MatchPhase(h, idx.RunPhase()),
			Cause:      true,
			Why:        "the GPUs report no peer access and the run failed",
		})
	}
	if shm != nil && !(st.Ready != nil && !st.Failed()) {
		p.Report(Finding{
			Title:      "/dev/shm is too small for NCCL",
			Category:   CatSHMExhausted,
			Severity:   SeverityWarning,
			Message:    fmt.Sprintf("%s: NCCL and the engines' broadcast queues need far more shared memory; a container's default of 64 MB breaks them.", shm.Text),
			Remedy:     ncclRemedy(CatSHMExhausted),
			Evidence:   []Evidence{*shm},
			Confidence: 0.4,
			Cause:      true,
			Why:        "/dev/shm is small",
		})
	}
	// PCIe-only topology with TP >= 2, stalled at the first collective.
	topo := firstTopo(idx)
	tp := tensorParallel(idx)
	if topo == nil || tp < 2 {
		return
	}
	if topo.NVLinked() {
		p.RuleOut("the GPUs are connected by NVLink (nvidia-smi topo -m), so PCIe P2P is not on the path",
			Evidence{Src: topo.Src, Text: "NV# links between GPUs"})
		return
	}
	phase := idx.RunPhase()
	if st.Ready != nil || st.Silence == 0 || len(st.Alive) == 0 || (phase != PhaseDistributedInit && phase != PhaseLaunch) {
		p.RuleOut(fmt.Sprintf("the GPUs talk over PCIe only (%s), but the run got past distributed init, where a broken P2P path hangs", topo.Src),
			Evidence{Src: topo.Src, Text: linkSummary(topo)})
		return
	}
	p.Report(Finding{
		Title:      "hang at the first collective on a PCIe-only topology",
		Message:    fmt.Sprintf("The GPUs talk over PCIe only (%s: %s) with tensor parallelism %d, and the run hangs in %s: the classic broken PCIe peer-to-peer path (ACS or an IOMMU between the GPUs).", topo.Src, linkSummary(topo), tp, phase),
		Remedy:     ncclRemedy(CatNCCLP2P),
		Evidence:   []Evidence{{Src: topo.Src, Text: linkSummary(topo)}, {Src: st.Last.Src, Text: "last sign of life: " + st.Last.Text}},
		Confidence: 0.6,
		Cause:      true,
		Why:        "PCIe-only GPUs hang in their first collective when P2P is broken",
	})
}

// transportWarn reports an NCCL warning about its peer-to-peer or shared
// memory transport (transport/p2p.cc, transport/shm.cc, "peer access").
func transportWarn(warns []*facts.LogEvent) bool {
	for _, w := range warns {
		m := strings.ToLower(w.Msg)
		if strings.Contains(m, "p2p") || strings.Contains(m, "peer") || strings.Contains(m, "shm") || strings.Contains(m, "shared memory") {
			return true
		}
	}
	return false
}

// smallSHM finds a /dev/shm smaller than 1 GiB in df or the container options.
func smallSHM(idx *Index) *Evidence {
	for _, d := range idx.Facts.Disks {
		if d.Mount == "/dev/shm" && d.SizeKB > 0 && d.SizeKB < 1<<20 {
			return &Evidence{Src: d.Src, Text: fmt.Sprintf("/dev/shm is %s", derive.FormatKB(d.SizeKB))}
		}
	}
	for _, c := range idx.Facts.Cmds {
		if v, ok := c.Container["shm_size"]; ok {
			if kb := parseSizeKB(v); kb > 0 && kb < 1<<20 {
				return &Evidence{Src: c.Src, Text: "--shm-size " + v}
			}
		}
	}
	return nil
}

func firstTopo(idx *Index) *facts.Topology {
	if len(idx.Facts.Topo) == 0 {
		return nil
	}
	return idx.Facts.Topo[0]
}

func linkSummary(t *facts.Topology) string {
	kinds := map[string]int{}
	for i, row := range t.Links {
		for j, l := range row {
			if i < j {
				kinds[l]++
			}
		}
	}
	return fmt.Sprintf("%d GPUs, links %s", len(t.GPUs), countList(kinds))
}

// bootstrapFailure is an NCCL error trace through its bootstrap and socket
// code (bootstrap.cc, misc/socket.cc), with no warning that names another
// cause: the ranks could not connect to each other to begin with.
func bootstrapFailure(idx *Index) *facts.LogEvent {
	for _, e := range idx.Events(facts.EventNCCLError) {
		c := derive.NCCLChain(e)
		if strings.Contains(c, "bootstrap.cc") && strings.Contains(c, "socket.cc") {
			return e
		}
	}
	return nil
}
