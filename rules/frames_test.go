package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

func TestBuiltinFramesParse(t *testing.T) {
	m, err := ParseFrames(builtinFrames, "catalog/frames.yaml")
	require.NoError(t, err)
	assert.NotEmpty(t, m.Phases)
	assert.NotEmpty(t, m.Libraries)
}

func TestParseFramesRejects(t *testing.T) {
	_, err := ParseFrames([]byte("phases:\n  - phase: nowhere\n    funcs: ['*']\n"), "x.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `phase "nowhere" is not in the taxonomy`)
	assert.Contains(t, err.Error(), "funcs '*' needs files")
	assert.Contains(t, err.Error(), "no references")
}

// Real frames from upstream tracebacks (fixtures/incidents and the corpus).
func TestTracebackPhase(t *testing.T) {
	m := BuiltinFrames()
	cases := []struct {
		name   string
		frames []facts.Frame
		want   Phase
		lib    string
	}{
		{"SGLang capture (flashinfer-1892)", []facts.Frame{
			{File: "/x/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 485, Func: "capture"},
			{File: "/x/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", Line: 661, Func: "capture_one_batch_size"},
			{File: "/x/sglang/python/sglang/srt/models/llama.py", Line: 469, Func: "forward"},
		}, PhaseCUDAGraphCapture, "cuda-graph"},
		{"vLLM V0 KV cache sizing (vllm-2785)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", Line: 114, Func: "__init__"},
			{File: "/usr/local/lib/python3.10/dist-packages/vllm/engine/llm_engine.py", Line: 331, Func: "_init_cache"},
		}, PhaseKVCache, ""},
		{"vLLM capture inside the piecewise backend (vllm-19186)", []facts.Frame{
			{File: "/usr/local/lib/python3.10/site-packages/vllm/compilation/backends.py", Line: 681, Func: "__call__"},
			{File: "/usr/local/lib/python3.10/site-packages/torch/cuda/graphs.py", Line: 186, Func: "__exit__"},
			{File: "/usr/local/lib/python3.10/site-packages/torch/cuda/graphs.py", Line: 84, Func: "capture_end"},
		}, PhaseCUDAGraphCapture, "cuda-graph"},
		{"vLLM quantization scheme chosen while building the model (vllm-29707)", []facts.Frame{
			{File: "/h/site-packages/vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py", Line: 117, Func: "get_quant_method"},
		}, PhaseWeightsLoading, "quantization"},
		{"vLLM symmetric-memory communicator (vllm-26925)", []facts.Frame{
			{File: "/h/vllm/distributed/parallel_state.py", Line: 363, Func: "__init__"},
			{File: "/h/vllm/distributed/device_communicators/symm_mem.py", Line: 94, Func: "__init__"},
		}, PhaseDistributedInit, "nccl"},
		{"SGLang pool sizing named only by the source line", []facts.Frame{
			{File: "/usr/local/lib/python3.12/dist-packages/sglang/srt/model_executor/model_runner.py", Line: 512, Func: "initialize", Code: "self.init_memory_pool()"},
		}, PhaseKVCache, ""},
		{"TGI warmup (tgi-755)", []facts.Frame{
			{File: "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", Line: 727, Func: "warmup"},
			{File: "/opt/conda/lib/python3.9/site-packages/torch/nn/modules/module.py", Line: 1501, Func: "_call_impl"},
		}, PhaseWarmup, ""},
		{"a model's forward alone places nothing", []facts.Frame{
			{File: "/h/vllm/model_executor/models/llama.py", Line: 300, Func: "forward"},
			{File: "/h/torch/nn/modules/module.py", Line: 1747, Func: "_call_impl"},
		}, "", ""},
		{"Dynamo's run-time wrapper is not compile time", []facts.Frame{
			{File: "/h/torch/_dynamo/eval_frame.py", Line: 632, Func: "_fn"},
		}, "", "torch-inductor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ph, _, _ := m.TracebackPhase(&facts.Traceback{Frames: c.frames})
			assert.Equal(t, c.want, ph)
			lib, _, _ := m.InnermostLibrary(&facts.Traceback{Frames: c.frames})
			assert.Equal(t, c.lib, lib)
		})
	}
}
