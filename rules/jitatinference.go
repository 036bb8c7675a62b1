package rules

import (
	"fmt"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(jitAtInferenceRule) }

var jitAtInferenceRule = &Rule{
	ID:       "jit-at-inference",
	Title:    "kernels compiled while serving",
	Severity: SeverityWarning,
	Category: CatJITCompile,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Kernel libraries that compile per shape (DeepGEMM's GEMMs, Triton kernels,
CuTe DSL kernels) compile a kernel the first time a request brings a shape
they have not seen. When that happens while the server serves, every request
of that batch waits for the compiler: seconds to minutes of latency, repeated
for each new shape, which reads as a slow or stuttering server. Engines warn
about it (vLLM's "Triton kernel JIT compilation during inference", SGLang's
"DeepGEMM JIT code generation ... Please wait.").

Reported when such a compilation is logged after the server was serving (a
ready line or a stat line before it). A burst of light Triton kernels right
after the first requests is the warm-up's cost, worth knowing but no slow
server: the server is called slow when it compiles with a heavyweight
compiler (DeepGEMM, ninja builds), or again later, in a burst more than a
minute after the first.`,
	References: []string{
		"https://github.com/sgl-project/sglang/issues/4773",
		"https://github.com/deepseek-ai/DeepGEMM#jit-compilation",
	},
	Run: runJITAtInference,
}

func runJITAtInference(p *Pass) {
	st := &p.Index.State
	serving := st.Ready
	if serving == nil {
		serving = st.Serving
	}
	if serving == nil || st.Failed() {
		return
	}
	var ev []Evidence
	n := 0
	heavy, later := false, false
	var first *facts.LogEvent
	for _, e := range p.Index.Events(facts.EventJITProgress, facts.EventJITBegin) {
		if e.Src.File != serving.Src.File || e.Src.Line < serving.Src.Line {
			continue
		}
		n++
		if len(ev) < 4 {
			ev = append(ev, Ev(e))
		}
		switch w := jitWhat(e); {
		case w == "deepgemm" || w == "ninja" || e.Type == facts.EventJITBegin:
			heavy = true
		case first != nil && !first.Time.IsZero() && e.Time.Sub(first.Time) > time.Minute:
			later = true
		}
		if first == nil {
			first = e
		}
	}
	if n == 0 {
		return
	}
	if !heavy && !later {
		p.Report(Finding{
			Severity: SeverityInfo,
			Message: fmt.Sprintf("%d light kernel compilation(s) right after the server began serving (first at %s): a one-time latency spike of the first requests, which a warm-up with production shapes avoids.",
				n, ev[0].Src),
			Evidence:   ev,
			Confidence: 0.5,
		})
		return
	}
	p.Report(Finding{
		Message: fmt.Sprintf("%d kernel compilation(s) logged while the server was serving (serving since %s; first at %s): each stalls the requests of its batch until the compiler is done, for every new shape.",
			n, serving.Src, ev[0].Src),
		Remedy:     "Compile ahead of time: DeepGEMM's and SGLang's pre-compile step (`python -m sglang.compile_deep_gemm --model ...`) or a warm-up with the shapes of production traffic; keep the compile caches (~/.cache, TRITON_CACHE_DIR) on a persistent disk.",
		Evidence:   ev,
		Outcome:    OutcomeSlow,
		Phase:      PhaseServing,
		Confidence: 0.6,
		Cause:      true,
		Why:        "kernels compiled while requests waited",
	})
}
