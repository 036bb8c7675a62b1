package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(attentionRule) }

var attentionRule = &Rule{
	ID:       "attention-backend",
	Title:    "attention backend does not fit the GPU",
	Severity: SeverityError,
	Category: CatAttentionBackend,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog, facts.KindCmdline},
	Doc: `Reads the attention backend the server ran with (the ServerArgs dump or
vLLM's non-default args, the launch command, VLLM_ATTENTION_BACKEND, or the
engine's own "Use X backend by default" / "Using X backend" line) and the GPUs'
compute capability (from nvidia-smi, or the product name), and checks the pair
against what each backend supports:

- flashinfer on compute capability 12.x (RTX 5090/5080, every RTX PRO 6000
  Blackwell edition, GB10): the consumer/workstation Blackwell GPUs lack the
  tcgen05/TMEM instructions flashinfer's SM100 paths use, and its JIT and
  sampler paths are known to hang there. A run stalled after loading weights or
  in graph capture with this pair most likely hangs in flashinfer.
- FlashAttention 3 (fa3) needs Hopper (9.0); FlashAttention 2 (vLLM's
  FLASH_ATTN, SGLang's fa) needs Ampere or newer (8.0+).
- trtllm_mha, trtllm_mla, cutedsl_mla, cutlass_mla, tokenspeed_mla and vLLM's
  FLASHINFER_MLA / CUTLASS_MLA use TRT-LLM-gen or CUTLASS kernels built for
  datacenter Blackwell (10.x) only.
- flashmla needs Hopper or datacenter Blackwell.

It reports the pair only when the run did not come up (stalled, not ready or
crashed); a pair that works is ruled out with the evidence.`,
	References: []string{
		"https://github.com/flashinfer-ai/flashinfer/issues/3612",
		"https://github.com/sgl-project/sglang/issues/18874",
		"https://github.com/sgl-project/sglang/pull/18758",
		"https://github.com/sgl-project/sglang/issues/24633",
		"https://github.com/vllm-project/vllm/issues/42987",
		"https://github.com/Dao-AILab/flash-attention/issues/1987",
	},
	Run: runAttention,
}

// backendUse is one attention backend the run used, and where that shows.
type backendUse struct {
	name string // lower case: flashinfer, triton, fa3, flash_attn, trtllm_mla ...
	ev   Evidence
}

// usedBackends returns the attention backends the evidence names.
func usedBackends(idx *Index) []backendUse {
	var out []backendUse
	add := func(name string, ev Evidence) {
		name = normBackend(name)
		if name == "" || name == "none" || name == "null" {
			return
		}
		out = append(out, backendUse{name: name, ev: ev})
	}
	for _, s := range idx.Settings("attention_backend", "decode_attention_backend", "prefill_attention_backend") {
		add(s.Value, Evidence{Src: s.Src, Text: fmt.Sprintf("%s = %s (%s)", s.Key, s.Value, s.From)})
	}
	if e, ok := idx.Env("VLLM_ATTENTION_BACKEND"); ok {
		add(e.Value, Evidence{Src: e.Src, Text: "VLLM_ATTENTION_BACKEND=" + e.Value})
	}
	for _, e := range idx.Events(facts.EventAttentionBackend) {
		name := ""
		if d, ok := e.Data.(*facts.AttentionBackend); ok {
			name = d.Backend
		}
		add(name, Ev(e))
	}
	return out
}

func normBackend(s string) string {
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), `'"`))
	s = strings.TrimPrefix(s, "attentionbackendenum.")
	switch s {
	case "flash_attn", "flash-attn", "fa", "fa2", "flashattention", "flash attention", "flash_attention", "flash-attention":
		return "flash_attn"
	case "triton_attn", "triton attention":
		return "triton"
	case "xformers":
		return "xformers"
	}
	return s
}

// backendProblem says why a backend does not fit a compute capability, and
// how confident that is as a cause when the run did not come up.
func backendProblem(backend string, major int) (string, float64) {
	switch backend {
	case "flashinfer":
		if major == 12 {
			return "flashinfer on compute capability 12.x (consumer/workstation Blackwell): its SM100 kernels need tcgen05/TMEM, which SM12x lacks, and its JIT and sampling paths are known to hang there", 0.8
		}
	case "fa3":
		// SGLang builds its FA3 for SM80-SM90 (its own check accepts 8.0 to 9.0).
		if major < 8 || major > 9 {
			return "SGLang's FlashAttention 3 build runs on compute capability 8.0 to 9.0 only", 0.85
		}
	case "flash_attn":
		if major < 8 {
			return "FlashAttention 2 needs Ampere (8.0) or newer", 0.85
		}
	case "trtllm_mha", "trtllm_mla", "cutedsl_mla", "cutlass_mla", "tokenspeed_mla", "flashinfer_mla":
		if major != 10 {
			return backend + " uses kernels built for datacenter Blackwell (10.x) only", 0.85
		}
	case "flashmla":
		if major != 9 && major != 10 {
			return "FlashMLA runs on Hopper and datacenter Blackwell only", 0.8
		}
	}
	return "", 0
}

func runAttention(p *Pass) {
	idx, st := p.Index, &p.Index.State
	used := usedBackends(idx)
	if len(used) == 0 {
		return
	}
	inv := idx.Inventory()
	if len(inv) == 0 {
		if st.Ready == nil {
			p.Missing("`nvidia-smi -q` (or `nvidia-smi --query-gpu=index,name,compute_cap --format=csv`)",
				"the GPU model: whether the attention backend "+used[0].name+" supports it cannot be checked")
		}
		return
	}
	gpu := inv[0]
	major, ok := derive.CCMajor(gpu.CC)
	if !ok {
		return
	}
	sm := ccNumber(gpu.CC)
	gpuEv := Evidence{Src: gpu.Src, Text: fmt.Sprintf("%s: compute capability %s (SM%d)", gpu.Name, gpu.CC, sm)}
	came := st.Ready != nil && !st.Failed()
	for _, u := range dedupBackends(used) {
		why, conf := backendProblem(u.name, major)
		if why == "" {
			p.RuleOut(fmt.Sprintf("%s supports %s (compute capability %s)", u.name, gpu.Name, gpu.CC), u.ev, gpuEv)
			continue
		}
		if came {
			p.RuleOut(fmt.Sprintf("%s on %s is a known risk, but this run came up", u.name, gpu.Name), u.ev, gpuEv)
			continue
		}
		ev := []Evidence{}
		for _, x := range used {
			if x.name == u.name {
				ev = append(ev, x.ev)
			}
		}
		ev = append(ev, gpuEv)
		phase := idx.RunPhase()
		state := "did not come up"
		switch {
		case st.Failed():
			state = "crashed"
		case st.Silence > 0 && len(st.Alive) > 0:
			state = fmt.Sprintf("has been silent for %s in %s while alive", humanDuration(st.Silence), phase)
			ev = append(ev, Evidence{Src: st.Last.Src, Text: "last sign of life: " + st.Last.Text})
		}
		if t := compilersOf(st.PS); len(t.compilers) > 0 && !st.Failed() {
			// The GPU waits for a compiler: the build explains the silence;
			// the backend is at most why there is a build.
			conf = min(conf, 0.45)
			state += ", with a kernel build running under it"
		} else if u.name == "flashinfer" && major == 12 && !st.Failed() {
			switch phase {
			case PhasePostWeights, PhaseKVCache, PhaseCUDAGraphCapture, PhaseWarmup:
			default:
				conf = 0.5 // the hang is known after weights and in capture
			}
		}
		p.Report(Finding{
			Title: fmt.Sprintf("%s attention backend on %s (SM%d)", u.name, shortGPU(gpu.Name), sm),
			Message: fmt.Sprintf("The server ran the %s attention backend on %d × %s (compute capability %s) and %s: %s.",
				u.name, len(inv), gpu.Name, gpu.CC, state, why),
			Remedy:     remedyFor(idx, u.name, major),
			Evidence:   ev,
			Confidence: conf,
			Cause:      true,
			Why: fmt.Sprintf("%s does not fit compute capability %s, and the run %s; every source agrees: the backend from %s, the GPU from %s",
				u.name, gpu.CC, state, u.ev.Src.File, gpu.Src.File),
		})
	}
}

func dedupBackends(us []backendUse) []backendUse {
	var out []backendUse
	seen := map[string]bool{}
	for _, u := range us {
		if !seen[u.name] {
			seen[u.name] = true
			out = append(out, u)
		}
	}
	return out
}

// remedyFor names the flag that switches to a backend that fits.
func remedyFor(idx *Index, backend string, major int) string {
	if idx.Engine() == facts.EngineVLLM {
		if major >= 8 {
			return "Use `--attention-backend TRITON_ATTN` (or FLASH_ATTN) instead of " + strings.ToUpper(backend) + "; on older vLLM set `VLLM_ATTENTION_BACKEND=TRITON_ATTN`."
		}
		return "Use `--attention-backend TRITON_ATTN` (or XFORMERS on old vLLM): FlashAttention needs Ampere or newer."
	}
	return "Restart with `--attention-backend triton` (it runs on every CUDA GPU); keep `" + backend + "` for GPUs it supports."
}
