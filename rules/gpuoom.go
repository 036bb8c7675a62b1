package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(gpuOOMRule) }

var gpuOOMRule = &Rule{
	ID:       "gpu-oom",
	Title:    "GPU out of memory",
	Severity: SeverityCritical,
	Category: CatGPUOOM,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `A CUDA out-of-memory error (torch.OutOfMemoryError, "CUDA error: out of
memory") or an engine's own "not enough memory for the KV cache" check, with
the phase it happened in and the numbers the message gives (tried to allocate,
total, free, in use by this process).

The remedy depends on the phase:

- weights-loading: the model does not fit the GPUs: more tensor parallelism,
  a quantized checkpoint, or a smaller dtype;
- kv-cache (memory profiling, KV cache sizing): lower the fraction of GPU
  memory the engine claims (SGLang --mem-fraction-static, vLLM
  --gpu-memory-utilization), or the context length (--context-length /
  --max-model-len) and concurrency (--max-running-requests / --max-num-seqs);
  a KV cache that is too small for one request at the maximum length is
  kv-cache-insufficient;
- cuda-graph-capture: capture fewer or smaller batch sizes
  (--cuda-graph-max-bs / --max-cudagraph-capture-size) or leave more memory
  for graphs by lowering the memory fraction;
- serving: fewer concurrent requests or a smaller chunked prefill.

Other processes on the GPU (nvidia-smi's process list) shrink what is free.`,
	References: []string{
		"https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf",
		"https://docs.vllm.ai/en/latest/configuration/conserving_memory/",
		"https://docs.sglang.ai/advanced_features/hyperparameter_tuning.html",
	},
	Run: runGPUOOM,
}

func runGPUOOM(p *Pass) {
	idx := p.Index
	ms := idx.LiveMatches(p.Rule.ID)
	if len(ms) == 0 {
		return
	}
	m := ms[0]
	kv := m.Sig.Category == CatKVCacheInsufficent
	for _, x := range ms {
		if x.Sig.Category == CatKVCacheInsufficent {
			m, kv = x, true
			break
		}
	}
	phase := idx.MatchPhase(m, idx.RunPhase())
	ev := []Evidence{{Src: m.Src, Text: m.Text}}
	numbers := ""
	for _, e := range idx.Events(facts.EventOOM) {
		var parts []string
		if o, ok := e.Data.(*facts.OOM); ok {
			for _, k := range []struct {
				n     facts.Num
				label string
			}{
				{o.TriedGiB, "tried to allocate"}, {o.TotalGiB, "total"}, {o.FreeGiB, "free"}, {o.InUseGiB, "in use by the process"},
			} {
				if v, ok := k.n.Get(); ok {
					parts = append(parts, fmt.Sprintf("%s %.2f GiB", k.label, v))
				}
			}
		}
		if len(parts) > 0 {
			numbers = " (" + strings.Join(parts, ", ") + ")"
			if e.Src != m.Src {
				ev = append(ev, Ev(e))
			}
			break
		}
	}
	if g := idx.LatestGPUs(); g != nil {
		for _, pr := range g.Procs {
			if pr.MemMiB.OK {
				ev = append(ev, Evidence{Src: pr.Src, Text: fmt.Sprintf("GPU %d: pid %d %s holds %.0f MiB", pr.GPU, pr.PID, pr.Name, pr.MemMiB.V)})
			}
		}
	}
	for i, x := range ms {
		if i > 0 && i < 4 && x.Src != m.Src {
			ev = append(ev, Evidence{Src: x.Src, Text: x.Text})
		}
	}
	cat, title := CatGPUOOM, "GPU out of memory in "+string(phase)
	if kv {
		cat, title = CatKVCacheInsufficent, "KV cache does not fit in the memory left after the weights"
	}
	p.Report(Finding{
		Title:      title,
		Category:   cat,
		Message:    period(fmt.Sprintf("%s at %s%s during %s: %s", capitalize(m.Sig.Title), m.Src, numbers, phase, trimText(m.Text, 300))),
		Remedy:     oomRemedy(idx, phase, kv),
		Evidence:   ev,
		Confidence: m.Sig.Confidence,
		Outcome:    OutcomeCrashed,
		Phase:      phase,
		Cause:      true,
		Why:        "the error text is the CUDA allocator's (or the engine's) own out-of-memory message",
	})
}

func oomRemedy(idx *Index, ph Phase, kv bool) string {
	vllm := idx.Engine() == facts.EngineVLLM
	frac := "--mem-fraction-static (e.g. 0.8)"
	ctx, conc, graphs := "--context-length", "--max-running-requests", "--cuda-graph-max-bs"
	if vllm {
		frac, ctx, conc, graphs = "--gpu-memory-utilization (e.g. 0.85)", "--max-model-len", "--max-num-seqs", "--max-cudagraph-capture-size (or --enforce-eager to test)"
	}
	if kv {
		if vllm {
			return "Raise --gpu-memory-utilization if nothing else uses the GPU, or lower --max-model-len to what the memory allows (the message gives the estimate); more tensor parallelism or an FP8 KV cache (--kv-cache-dtype fp8) also helps."
		}
		return "Raise --mem-fraction-static if nothing else uses the GPU, lower --context-length, or use more tensor parallelism / an FP8 KV cache (--kv-cache-dtype fp8_e4m3)."
	}
	switch ph {
	case PhaseLaunch, PhaseDistributedInit, PhaseWeightsLoading:
		return "The weights do not fit: use more tensor parallelism (--tp), a quantized checkpoint, or make sure no other process holds the GPUs (`nvidia-smi`)."
	case PhaseCUDAGraphCapture:
		return fmt.Sprintf("Capture fewer or smaller batches (%s) or leave more memory for graphs by lowering %s.", graphs, frac)
	case PhaseServing:
		return fmt.Sprintf("Serve fewer requests at once (%s) or lower the chunked prefill size; lowering %s leaves more headroom for activations.", conc, frac)
	}
	return fmt.Sprintf("Lower %s, %s or %s; set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True when reserved-but-unallocated memory is large.", frac, ctx, conc)
}
