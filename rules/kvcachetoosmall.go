package rules

import (
	"fmt"
	"strconv"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(kvCacheTooSmallRule) }

var kvCacheTooSmallRule = &Rule{
	ID:       "kv-cache-too-small",
	Title:    "the KV cache cannot hold one request of the model's maximum length",
	Severity: SeverityCritical,
	Category: CatKVCacheInsufficent,
	Needs:    []facts.Kind{facts.KindVLLMLog, facts.KindServerLog},
	Doc: `After profiling memory, vLLM sizes the KV cache and logs it: V0 as
"# GPU blocks: N" (N blocks of block_size tokens, 16 unless --block-size
says otherwise), V1 as "GPU KV cache size: N tokens". Before it starts, it
checks that one request of max_model_len tokens fits, and raises when it
does not: "The model's max seq len (L) is larger than the maximum number of
tokens that can be stored in KV cache (N)" (V0's _init_cache, later the
workers' initialize_cache), or V1's "To serve at least one request with the models's max
seq len ..." (kv_cache_utils).

When a run's log shows that capacity below the maximum length the engine
was configured with, and the run failed after that line, the failure is
that check even when the paste cut the exception off.`,
	References: []string{
		"https://github.com/vllm-project/vllm/blob/v0.2.7/vllm/engine/llm_engine.py",
		"https://github.com/vllm-project/vllm/blob/main/vllm/v1/core/kv_cache_utils.py",
		"https://docs.vllm.ai/en/latest/configuration/conserving_memory.html",
	},
	Run: runKVCacheTooSmall,
}

// vllmBlockSize is vLLM's default KV block size on CUDA, in tokens.
const vllmBlockSize = 16

func runKVCacheTooSmall(p *Pass) {
	idx := p.Index
	if !idx.State.Failed() {
		return
	}
	for _, e := range idx.Events(facts.EventKVCacheSize) {
		capTok, how := kvCapacity(idx, e)
		if capTok <= 0 {
			continue
		}
		maxLen, lenSrc, key := maxModelLen(idx)
		if maxLen <= 0 || capTok >= maxLen {
			continue
		}
		var fail *facts.LogEvent
		for _, f := range idx.State.Failures {
			if f.Src.File == e.Src.File && f.Src.Line > e.Src.Line {
				fail = f
				break
			}
		}
		if fail == nil {
			continue
		}
		p.Report(Finding{
			Message: fmt.Sprintf("The KV cache holds %.0f tokens (%s, %s) and %s is %.0f (%s): one request of the maximum length does not fit, and vLLM refuses to start when it does not; the failure at %s is that check.",
				capTok, how, e.Src, key, maxLen, lenSrc, fail.Src),
			Remedy:     fmt.Sprintf("Lower --max-model-len to %.0f or less, or give the cache more memory (raise --gpu-memory-utilization, quantize the KV cache with --kv-cache-dtype fp8, or spread the model over more GPUs).", capTok),
			Evidence:   []Evidence{Ev(e), {Src: lenSrc, Text: fmt.Sprintf("%s %.0f", key, maxLen)}, Ev(fail)},
			Confidence: 0.8,
			Outcome:    OutcomeCrashed,
			Phase:      PhaseKVCache,
			Cause:      true,
			Why:        fmt.Sprintf("%.0f tokens of KV cache < %s %.0f", capTok, key, maxLen),
		})
		return
	}
}

// kvCapacity is the KV cache's size in tokens, and how it was read.
func kvCapacity(idx *Index, e *facts.LogEvent) (float64, string) {
	d, ok := e.Data.(*facts.KVCache)
	if !ok {
		return 0, ""
	}
	if v, ok := d.Tokens.Get(); ok {
		return v, "as logged"
	}
	blocks, ok := d.GPUBlocks.Get()
	if !ok {
		return 0, ""
	}
	size, from := float64(vllmBlockSize), "vLLM's default block size"
	if s, ok := idx.Setting("block_size"); ok {
		if v, err := strconv.ParseFloat(s.Value, 64); err == nil && v > 0 {
			size, from = v, "block_size at "+s.Src.String()
		}
	}
	return blocks * size, fmt.Sprintf("%.0f blocks of %.0f tokens, %s", blocks, size, from)
}

// maxModelLen is the maximum request length the engine was configured
// with: a setting, or the field of V0's "Initializing an LLM engine with
// config" line.
func maxModelLen(idx *Index) (float64, facts.Source, string) {
	if s, ok := idx.Setting("max_model_len", "max_seq_len"); ok {
		if v, err := strconv.ParseFloat(s.Value, 64); err == nil {
			return v, s.Src, s.Key
		}
	}
	for _, e := range idx.Events(facts.EventEngineInit) {
		d, ok := e.Data.(*facts.EngineConfig)
		if !ok {
			continue
		}
		for _, k := range []string{"max_model_len", "max_seq_len"} {
			if v, err := strconv.ParseFloat(facts.ValueText(d.Config[k]), 64); err == nil && v > 0 {
				return v, e.Src, k
			}
		}
	}
	return 0, facts.Source{}, ""
}
