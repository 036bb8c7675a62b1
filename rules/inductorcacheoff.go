package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(inductorCacheOffRule) }

var inductorCacheOffRule = &Rule{
	ID:       "inductor-cache-off",
	Title:    "vLLM's compile found no Inductor cache entry for a graph it compiled",
	Severity: SeverityCritical,
	Category: CatJITCompile,
	Needs:    []facts.Kind{facts.KindVLLMLog, facts.KindServerLog},
	Doc: `vLLM compiles the model's graphs through TorchInductor and keeps each
compiled graph in its own cache under the key Inductor's FX graph cache
gives it. On torch before 2.8 (vLLM's InductorAdaptor) a compile that
returns no key while vLLM's cache is on raises "vLLM failed to compile the
model. The most likely reason for this is that a previous compilation
failed, leading to a corrupted compilation artifact" (vllm/compilation/
compiler_interface.py). Inductor returns no key when its FX graph cache
does not run: TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 or
TORCHINDUCTOR_FX_GRAPH_CACHE=0 in the server's environment turn it off
(fixed by torch 2.8, where vLLM compiles standalone); otherwise a
compilation that failed before left a broken entry in the cache.

The rule names the setting when the environment or the launch command has
one (a configuration cause), and the stale cache otherwise.`,
	References: []string{
		"https://github.com/vllm-project/vllm/blob/main/vllm/compilation/compiler_interface.py",
		"https://github.com/vllm-project/vllm/issues/21858",
		"https://docs.vllm.ai/en/latest/design/debug_vllm_compile.html",
	},
	Run: runInductorCacheOff,
}

// inductorCacheVars turn Inductor's FX graph cache off, with the value that
// does it.
var inductorCacheVars = []struct{ name, off string }{
	{"TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1"},
	{"TORCHINDUCTOR_FX_GRAPH_CACHE", "0"},
}

func runInductorCacheOff(p *Pass) {
	idx := p.Index
	ms := idx.LiveMatches(p.Rule.ID)
	if len(ms) == 0 {
		return
	}
	m := ms[0]
	ev := []Evidence{{Src: m.Src, Text: m.Text}}
	for _, v := range inductorCacheVars {
		e, ok := idx.Env(v.name)
		if !ok || strings.TrimSpace(e.Value) != v.off {
			continue
		}
		ev = append(ev, Evidence{Src: e.Src, Text: v.name + "=" + e.Value})
		p.Report(Finding{
			Message: fmt.Sprintf("vLLM could not compile the model (%s) because %s=%s (%s) turns Inductor's FX graph cache off: the compile then returns no cache key, which vLLM's Inductor integration before torch 2.8 takes for a broken compilation.",
				m.Src, v.name, e.Value, e.Src),
			Remedy:     fmt.Sprintf("Unset %s, or run without vLLM's compilation (-O0 or --enforce-eager), or use torch 2.8 or newer with a vLLM built for it.", v.name),
			Evidence:   ev,
			Category:   CatConfig,
			Confidence: 0.8,
			Outcome:    OutcomeCrashed,
			Phase:      PhaseTorchCompile,
			Cause:      true,
			Why:        v.name + " turns Inductor's cache off",
		})
		return
	}
	p.Report(Finding{
		Message: fmt.Sprintf("vLLM could not compile the model (%s): Inductor returned no cache entry for a compiled graph, which a compilation that failed earlier and left a broken artifact in vLLM's compile cache causes; no setting that turns Inductor's cache off is in the evidence.",
			m.Src),
		Remedy:     "Remove vLLM's compile cache (~/.cache/vllm/torch_compile_cache, or VLLM_CACHE_ROOT's) and start again to see the first error; run with --enforce-eager to start without compiling.",
		Evidence:   ev,
		Confidence: 0.5,
		Outcome:    OutcomeCrashed,
		Phase:      PhaseTorchCompile,
		Cause:      true,
		Why:        "vLLM's compile found no cache entry",
	})
}
