package procs

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
)

func TestClassify(t *testing.T) {
	nr := facts.NoRank
	rk := func(f func(*facts.Rank)) facts.Rank { r := facts.NoRank; f(&r); return r }
	for _, c := range []struct {
		args, comm string
		name       string
		role       facts.Role
		tag        string
		rank       facts.Rank
	}{
		// SGLang, whole titles and titles cut to 15 bytes by comm.
		{"python3 -m sglang.launch_server --model-path m --tp 8", "", "python3", facts.RoleSGLangLauncher, "", nr},
		{"/usr/bin/python3.12 -u -m sglang.launch_server --port 1", "", "python3.12", facts.RoleSGLangLauncher, "", nr},
		{"python /opt/sglang/python/sglang/launch_server.py --model-path m", "", "python", facts.RoleSGLangLauncher, "", nr},
		{"/venv/bin/sglang serve --model-path m", "", "sglang", facts.RoleSGLangLauncher, "", nr},
		{"/venv/bin/python3 /venv/bin/sglang serve --model-path m", "", "python3", facts.RoleSGLangLauncher, "", nr},
		{"sglang::scheduler_TP0", "", "sglang::scheduler_TP0", facts.RoleSGLangScheduler, "TP0", rk(func(r *facts.Rank) { r.TP = 0 })},
		{"sglang::scheduler_DP0_TP3_EP3", "", "sglang::scheduler_DP0_TP3_EP3", facts.RoleSGLangScheduler, "DP0 TP3 EP3",
			rk(func(r *facts.Rank) { r.DP, r.TP, r.EP = 0, 3, 3 })},
		{"sglang::scheduler_DP1_PP1_ATTN_CP2_MOE_DP3_TP5_EP5", "", "sglang::scheduler_DP1_PP1_ATTN_CP2_MOE_DP3_TP5_EP5", facts.RoleSGLangScheduler,
			"DP1 PP1 ATTN_CP2 MOE_DP3 TP5 EP5", rk(func(r *facts.Rank) { r.DP, r.PP, r.CP, r.MoeDP, r.TP, r.EP = 1, 1, 2, 3, 5, 5 })},
		{"sglang::scheduler", "", "sglang::scheduler", facts.RoleSGLangScheduler, "", nr},
		{"", "sglang::schedul", "sglang::schedul", facts.RoleSGLangScheduler, "", nr},
		{"sglang::detokenizer", "", "sglang::detokenizer", facts.RoleSGLangDetokenizer, "", nr},
		{"", "sglang::detoken", "sglang::detoken", facts.RoleSGLangDetokenizer, "", nr},
		{"sglang::data_parallel_controller", "", "sglang::data_parallel_controller", facts.RoleSGLangDPCtrl, "", nr},
		{"", "sglang::data_pa", "sglang::data_pa", facts.RoleSGLangDPCtrl, "", nr},
		{"sglang::tokenizer_worker:4412", "", "sglang::tokenizer_worker:4412", facts.RoleSGLangTokenizer, "", nr},
		// vLLM.
		{"vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2", "", "vllm", facts.RoleVLLMServer, "", nr},
		{"/usr/bin/python3 /usr/local/bin/vllm serve m", "", "python3", facts.RoleVLLMServer, "", nr},
		{"python3 -m vllm.entrypoints.openai.api_server --model m", "", "python3", facts.RoleVLLMServer, "", nr},
		{"python3 -m vllm.entrypoints.cli.main serve m", "", "python3", facts.RoleVLLMServer, "", nr},
		{"VLLM::EngineCore", "", "VLLM::EngineCore", facts.RoleVLLMEngineCore, "EngineCore", nr},
		{"VLLM::EngineCore_DP3", "", "VLLM::EngineCore_DP3", facts.RoleVLLMEngineCore, "EngineCore_DP3", rk(func(r *facts.Rank) { r.DP = 3 })},
		{"VLLM::DPEngineCore_1", "", "VLLM::DPEngineCore_1", facts.RoleVLLMEngineCore, "DPEngineCore_1", rk(func(r *facts.Rank) { r.DP = 1 })},
		{"", "VLLM::EngineCor", "VLLM::EngineCor", facts.RoleVLLMEngineCore, "", nr},
		{"VLLM::Worker_TP2", "", "VLLM::Worker_TP2", facts.RoleVLLMWorker, "Worker_TP2", rk(func(r *facts.Rank) { r.TP = 2 })},
		{"VLLM::Worker_DP1_PP1_TP3_EP7", "", "VLLM::Worker_DP1_PP1_TP3_EP7", facts.RoleVLLMWorker, "Worker_DP1_PP1_TP3_EP7",
			rk(func(r *facts.Rank) { r.DP, r.PP, r.TP, r.EP = 1, 1, 3, 7 })},
		{"", "VLLM::Worker_TP", "VLLM::Worker_TP", facts.RoleVLLMWorker, "", nr},
		{"VLLM::APIServer_1", "", "VLLM::APIServer_1", facts.RoleVLLMAPIServer, "APIServer_1", nr},
		{"MYAPP::Worker_TP1", "", "MYAPP::Worker_TP1", facts.RoleVLLMWorker, "Worker_TP1", rk(func(r *facts.Rank) { r.TP = 1 })},
		{"VLLM::WorkerX", "", "VLLM::WorkerX", facts.RoleOther, "", nr},
		// Compilers, build tools, workers, the rest.
		{"/usr/local/cuda/bin/../nvvm/bin/cicc --c++17", "", "cicc", facts.RoleCompiler, "", nr},
		{"/opt/torch/.venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo", "", "ptxas", facts.RoleCompiler, "", nr},
		{"/usr/lib/gcc/x86_64-linux-gnu/13/cc1plus -quiet", "", "cc1plus", facts.RoleCompiler, "", nr},
		{"x86_64-linux-gnu-g++-13 -c a.cpp", "", "x86_64-linux-gnu-g++-13", facts.RoleCompiler, "", nr},
		{"/opt/gcc/bin/g++-real -B/opt/gcc/bin/", "", "g++-real", facts.RoleCompiler, "", nr},
		{"cudafe++ --c++17", "", "cudafe++", facts.RoleCompiler, "", nr},
		{"fatbinary --create=x.fatbin", "", "fatbinary", facts.RoleCompiler, "", nr},
		{"/usr/bin/ld.lld -o x", "", "ld.lld", facts.RoleCompiler, "", nr},
		{"ninja -v", "", "ninja", facts.RoleBuildTool, "", nr},
		{"/usr/bin/cmake --build .", "", "cmake", facts.RoleBuildTool, "", nr},
		{"/v/bin/python3 /v/lib/python3.12/site-packages/torch/_inductor/compile_worker/__main__.py --pickler=x --workers=16", "", "python3",
			facts.RoleCompileWorker, "", nr},
		{"python3 -m torch._inductor.compile_worker --workers=8", "", "python3", facts.RoleCompileWorker, "", nr},
		{"/usr/local/bin/py-spy dump --pid 20601", "", "py-spy", facts.RolePySpy, "", nr},
		{"python3 -c from multiprocessing.resource_tracker import main;main(31)", "", "python3", facts.RolePython, "", nr},
		{"", "pt_main_thread", "pt_main_thread", facts.RolePython, "", nr},
		{"/bin/sh -c /usr/local/cuda/bin/nvcc -c x.cu", "", "sh", facts.RoleShell, "", nr},
		{"-bash", "", "bash", facts.RoleShell, "", nr},
		{"grep --color=auto sglang.launch_server", "", "grep", facts.RoleOther, "", nr},
		{"[kworker/0:0-events]", "", "kworker/0:0-events", facts.RoleKernelThread, "", nr},
		{"", "", "", facts.RoleOther, "", nr},
	} {
		p := &facts.Process{Args: c.args, Comm: c.comm, PID: 100, PPID: 1}
		classify(p)
		label := c.args + c.comm
		assert.Equal(t, c.name, p.Name, label)
		assert.Equal(t, c.role, p.Role, label)
		assert.Equal(t, c.tag, p.RankTag, label)
		assert.Equal(t, c.rank, p.Rank, label)
		assert.False(t, p.Defunct, label)
	}
}

func TestClassifyDefunctAndKernel(t *testing.T) {
	z := &facts.Process{Args: "[python3] <defunct>", PID: 1339, PPID: 1336}
	classify(z)
	assert.True(t, z.Defunct)
	assert.Equal(t, byte('Z'), z.State, "<defunct> implies Z where no STAT column says it")
	assert.Equal(t, "python3", z.Name)
	assert.Equal(t, facts.RolePython, z.Role)

	zt := &facts.Process{Args: "python3", State: 'Z', PID: 5, PPID: 4}
	classify(zt)
	assert.True(t, zt.Defunct, "top prints a zombie by state only")

	has := map[string]bool{"vsz": true, "rss": true}
	k := &facts.Process{Args: "kworker/R-rcu_gp", State: 'I', PID: 4, PPID: -1, Has: has}
	classify(k)
	assert.Equal(t, facts.RoleKernelThread, k.Role, "no memory: a kernel thread")
	assert.Equal(t, "kworker/R-rcu_gp", k.Name)

	u := &facts.Process{Args: "python3", State: 'S', PID: 7, PPID: -1, VSZKB: 10, RSSKB: 5, Has: has}
	classify(u)
	assert.Equal(t, facts.RolePython, u.Role)
}
