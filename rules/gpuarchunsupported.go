package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(archRule) }

var archRule = &Rule{
	ID:       "gpu-arch-unsupported",
	Title:    "binaries lack kernels for this GPU architecture",
	Severity: SeverityCritical,
	Category: CatGPUArchUnsupported,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `"no kernel image is available for execution on the device", "PTX .version
X does not support .target sm_120a", "sm_120 is not a supported
architecture", "requires sm75 or higher" and the like mean that a library was
built without code for this GPU's architecture, or that its compiler does not
know it, as does PyTorch's own warning at CUDA's initialization that the GPU
is too old for the build or of an architecture the build lacks. The rule
ties the message to the GPU's compute capability from the snapshots, so that
the report says which GPU and which architecture; it speaks from the
failure, with a capability warning beside it, and from the warning alone
when nothing failed yet.

New architectures are the usual victims: SM120 (RTX 50xx, RTX PRO 6000
Blackwell) and SM121 (GB10) need CUDA 12.8/12.9+ builds of torch, the engine's
kernels (sgl-kernel, vLLM's _C), flashinfer and Triton.`,
	References: []string{
		"https://github.com/sgl-project/sglang/issues/7249",
		"https://github.com/sgl-project/sglang/issues/12178",
		"https://github.com/vllm-project/vllm/issues/14452",
		"https://github.com/vllm-project/vllm/issues/16901",
	},
	Run: runArch,
}

func runArch(p *Pass) {
	idx := p.Index
	ms := idx.LiveMatches(p.Rule.ID)
	if len(ms) == 0 {
		return
	}
	if st := &idx.State; st.Ready != nil && !st.Failed() {
		return // the engine chose a fallback itself and came up
	}
	// The failure itself ("no kernel image ...") speaks for the finding; a
	// warning printed at CUDA's initialization (torch's capability checks)
	// is evidence beside it, and the finding when nothing failed.
	m := ms[0]
	for _, o := range ms {
		if o.Sig.Outcome != "" {
			m = o
			break
		}
	}
	ev := []Evidence{{Src: m.Src, Text: m.Text}}
	for _, o := range ms {
		if o.Sig != m.Sig && o.Sig.Outcome == "" && len(ev) < 3 {
			ev = append(ev, Evidence{Src: o.Src, Text: o.Text})
			break
		}
	}
	gpu := "the GPU"
	if inv := idx.Inventory(); len(inv) > 0 && inv[0].CC != "" {
		g := inv[0]
		gpu = fmt.Sprintf("%s (compute capability %s, sm_%d)", g.Name, g.CC, ccNumber(g.CC))
		ev = append(ev, Evidence{Src: g.Src, Text: gpu})
	}
	for _, e := range idx.Facts.Envs {
		for _, k := range []string{"torch", "cuda_build", "cuda_runtime"} {
			if v, ok := e.Versions[k]; ok {
				ev = append(ev, Evidence{Src: e.Where[k], Text: k + " " + v})
			}
		}
	}
	phase := idx.MatchPhase(m, idx.RunPhase())
	p.Report(Finding{
		Message:    fmt.Sprintf("%s at %s, on %s: a library was built without kernels for this architecture, or its compiler does not know it.", strings.TrimRight(trimText(m.Text, 200), "."), m.Src, gpu),
		Remedy:     m.Sig.Remedy,
		Evidence:   ev,
		Confidence: m.Sig.Confidence,
		Outcome:    m.Sig.Outcome,
		Phase:      phase,
		Cause:      true,
		Why:        "the CUDA runtime or compiler says so in its own words",
	})
}
