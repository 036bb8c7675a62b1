package procs

import (
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

// commLen is the longest comm the kernel keeps (TASK_COMM_LEN - 1); a title
// seen through comm is cut there ("sglang::schedul").
const commLen = 15

// classify sets Name, Role, Rank, RankTag and Defunct from the command.
func classify(p *facts.Process) {
	text := p.Args
	if text == "" {
		text = p.Comm
	}
	p.Role, p.Name, p.Rank, p.RankTag = facts.RoleOther, "", facts.NoRank, ""
	if t, ok := strings.CutSuffix(text, "<defunct>"); ok {
		text = strings.TrimSpace(t)
		p.Defunct = true
		if p.State == 0 {
			p.State = 'Z'
		}
	}
	if p.State == 'Z' {
		p.Defunct = true
	}
	if len(text) >= 2 && text[0] == '[' && text[len(text)-1] == ']' {
		text = text[1 : len(text)-1]
		if !p.Defunct {
			p.Name, p.Role = text, facts.RoleKernelThread
			return
		}
	} else if !p.Defunct && (p.PID == 2 || p.PPID == 2 || p.Has["vsz"] && p.Has["rss"] && p.VSZKB == 0 && p.RSSKB == 0) {
		// top and ps -o comm print kernel threads without brackets; they
		// own no memory (zombies neither, but they were handled above).
		p.Name, p.Role = text, facts.RoleKernelThread
		return
	}
	argv0, rest, _ := strings.Cut(text, " ")
	if title(p, argv0) {
		return
	}
	base := argv0
	if i := strings.LastIndexByte(base, '/'); i >= 0 && i < len(base)-1 {
		base = base[i+1:]
	}
	// A login shell's argv[0] is "-bash"; daemons title themselves "sshd:".
	if len(base) > 1 {
		base = strings.TrimPrefix(base, "-")
		base = strings.TrimSuffix(base, ":")
	}
	p.Name = base
	p.Role = roleOf(base, rest)
}

// title recognizes the process titles SGLang and vLLM set with
// setproctitle, whole (args) or cut to 15 bytes (comm, top).
func title(p *facts.Process, t string) bool {
	prefix, name, ok := strings.Cut(t, "::")
	if !ok || prefix == "" || name == "" {
		return false
	}
	cut := len(t) == commLen
	// has reports name starting with want, or a cut title that want extends.
	has := func(want string) (string, bool) {
		if s, ok := strings.CutPrefix(name, want); ok {
			return s, true
		}
		if cut && strings.HasPrefix(want, name) {
			return "", true
		}
		return "", false
	}
	p.Name = t
	if prefix == "sglang" || prefix == "sgl_diffusion" {
		if s, ok := has("scheduler"); ok {
			p.Role = facts.RoleSGLangScheduler
			if r, ok := sglangRank(s); ok && !cut {
				p.Rank, p.RankTag = r, r.String()
			}
			return true
		}
		for _, r := range []struct {
			name string
			role facts.Role
		}{
			{"detokenizer", facts.RoleSGLangDetokenizer},
			{"data_parallel_controller", facts.RoleSGLangDPCtrl},
			{"tokenizer", facts.RoleSGLangTokenizer},
		} {
			if _, ok := has(r.name); ok {
				p.Role = r.role
				return true
			}
		}
		p.Role = facts.RolePython
		return true
	}
	// vLLM titles are "<VLLM_PROCESS_NAME_PREFIX>::<name>[_<suffix>]".
	for _, r := range []struct {
		name string
		role facts.Role
	}{
		{"EngineCore", facts.RoleVLLMEngineCore},
		{"DPEngineCore", facts.RoleVLLMEngineCore},
		{"StageEngineCoreProc", facts.RoleVLLMEngineCore},
		{"Worker", facts.RoleVLLMWorker},
		{"APIServer", facts.RoleVLLMAPIServer},
		{"ApiServer", facts.RoleVLLMAPIServer},
	} {
		s, ok := has(r.name)
		if !ok || s != "" && s[0] != '_' {
			continue
		}
		p.Role = r.role
		if !cut {
			// The tag reads as vLLM's log prefixes do: "Worker_TP2",
			// "EngineCore_DP0".
			p.RankTag = name
			p.Rank = vllmRank(r.name, s)
		}
		return true
	}
	p.Name = ""
	return false
}

// sglangRank reads the suffix of "sglang::scheduler_DP0_TP3_EP3".
func sglangRank(s string) (facts.Rank, bool) {
	r := facts.NoRank
	if s == "" {
		return r, false
	}
	if s[0] != '_' {
		return r, false
	}
	any := false
	for s != "" {
		s = strings.TrimPrefix(s, "_")
		var dst *int
		for _, k := range []struct {
			tag string
			dst *int
		}{{"ATTN_CP", &r.CP}, {"MOE_DP", &r.MoeDP}, {"DP", &r.DP}, {"PP", &r.PP}, {"TP", &r.TP}, {"EP", &r.EP}} {
			if rest, ok := strings.CutPrefix(s, k.tag); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
				dst, s = k.dst, rest
				break
			}
		}
		if dst == nil {
			return facts.NoRank, false
		}
		n := 0
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20 {
			n = n*10 + int(s[i]-'0')
			i++
		}
		*dst, s = n, s[i:]
		any = true
	}
	return r, any
}

// vllmRank reads "_DP1_TP3" of a vLLM title; EngineCore_N and
// DPEngineCore_N (2025 titles) carry the data-parallel rank bare.
func vllmRank(name, s string) facts.Rank {
	r := facts.NoRank
	for _, part := range strings.Split(strings.TrimPrefix(s, "_"), "_") {
		i := 0
		for i < len(part) && (part[i] < '0' || part[i] > '9') {
			i++
		}
		if i == len(part) || len(part)-i > 6 {
			continue
		}
		n := 0
		for _, c := range part[i:] {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n < 0 {
			continue
		}
		switch part[:i] {
		case "DP":
			r.DP = n
		case "PP":
			r.PP = n
		case "PCP":
			r.CP = n
		case "TP":
			r.TP = n
		case "EP":
			r.EP = n
		case "":
			if name != "APIServer" && name != "ApiServer" {
				r.DP = n
			}
		}
	}
	return r
}

var (
	compilers = map[string]bool{
		"nvcc": true, "cicc": true, "ptxas": true, "cudafe++": true, "fatbinary": true, "nvlink": true,
		"nvptxcompiler": true, "gcc": true, "g++": true, "cc": true, "c++": true, "cc1": true, "cc1plus": true,
		"collect2": true, "lto1": true, "lto-wrapper": true, "clang": true, "clang++": true, "ld": true,
		"ld.bfd": true, "ld.gold": true, "ld.lld": true, "lld": true, "as": true, "hipcc": true, "rustc": true,
	}
	buildTools = map[string]bool{"ninja": true, "make": true, "gmake": true, "cmake": true, "meson": true, "bazel": true}
	shells     = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true, "ash": true, "tcsh": true, "csh": true}
)

// compilerName strips what toolchains add around a compiler's name:
// "x86_64-linux-gnu-gcc-13" -> "gcc", "g++-real" -> "g++".
func compilerName(base string) string {
	if i := strings.Index(base, "-linux-gnu-"); i >= 0 {
		base = base[i+len("-linux-gnu-"):]
	}
	for {
		i := strings.LastIndexByte(base, '-')
		if i <= 0 {
			return base
		}
		suf := base[i+1:]
		if suf != "real" && strings.Trim(suf, "0123456789.") != "" {
			return base
		}
		base = base[:i]
	}
}

func isPython(base string) bool {
	if base == "pt_main_thread" || base == "pypy3" || base == "pypy" {
		return true
	}
	v, ok := strings.CutPrefix(base, "python")
	return ok && strings.Trim(v, "0123456789.") == ""
}

// roleOf classifies an ordinary program by its name and arguments.
func roleOf(base, rest string) facts.Role {
	switch {
	case isPython(base):
		return pythonRole(rest)
	case base == "sglang" && firstWord(rest) == "serve":
		return facts.RoleSGLangLauncher
	case base == "vllm" && firstWord(rest) == "serve":
		return facts.RoleVLLMServer
	case base == "py-spy":
		return facts.RolePySpy
	case buildTools[base]:
		return facts.RoleBuildTool
	case compilers[base] || compilers[compilerName(base)]:
		return facts.RoleCompiler
	case shells[base]:
		return facts.RoleShell
	}
	return facts.RoleOther
}

func firstWord(s string) string {
	s = strings.TrimLeft(s, " ")
	w, _, _ := strings.Cut(s, " ")
	return w
}

// pythonRole looks at what a Python interpreter runs: a module (-m), a
// script, or a console script such as /usr/local/bin/vllm. Only the first
// words are read; commands run long.
func pythonRole(rest string) facts.Role {
	next := func() string {
		rest = strings.TrimLeft(rest, " ")
		var w string
		w, rest, _ = strings.Cut(rest, " ")
		return w
	}
	// Skip interpreter options to find the module or script.
	target := next()
	for strings.HasPrefix(target, "-") && target != "-m" && target != "-c" {
		if target == "-X" || target == "-W" {
			next()
		}
		target = next()
	}
	switch target {
	case "":
		return facts.RolePython
	case "-c":
		return facts.RolePython
	case "-m":
		target = next()
	}
	target = strings.TrimSuffix(target, ".py")
	serve := next() == "serve"
	// Modules are dotted, scripts slashed: compare both spellings.
	is := func(mod string) bool {
		return target == mod || hasPathSuffix(target, mod)
	}
	switch {
	case is("sglang.launch_server"):
		return facts.RoleSGLangLauncher
	case is("sglang") || is("sglang.cli.main"):
		if serve {
			return facts.RoleSGLangLauncher
		}
	case strings.HasPrefix(target, "vllm.entrypoints.") && strings.HasSuffix(target, "api_server"):
		return facts.RoleVLLMServer
	case is("vllm") || is("vllm.entrypoints.cli.main") || is("vllm_omni.entrypoints.cli.main"):
		if serve {
			return facts.RoleVLLMServer
		}
	}
	if strings.Contains(target, "torch._inductor.compile_worker") || strings.Contains(target, "torch/_inductor/compile_worker") {
		return facts.RoleCompileWorker
	}
	return facts.RolePython
}

// hasPathSuffix reports whether a script path ends with a dotted module's
// path: ".../sglang/launch_server" for "sglang.launch_server".
func hasPathSuffix(path, mod string) bool {
	if len(path) <= len(mod) {
		return false
	}
	tail := path[len(path)-len(mod):]
	if c := path[len(path)-len(mod)-1]; c != '/' && c != '.' {
		return false
	}
	for i := 0; i < len(mod); i++ {
		c, m := tail[i], mod[i]
		if c != m && !(m == '.' && c == '/') {
			return false
		}
	}
	return true
}
