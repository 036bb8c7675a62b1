package facts

import (
	"time"
)

// Role is what a process is, recognized from its title and arguments.
type Role string

// Process roles.
const (
	RoleOther             Role = ""
	RoleSGLangLauncher    Role = "sglang-launcher"  // python -m sglang.launch_server, sglang serve
	RoleSGLangScheduler   Role = "sglang-scheduler" // sglang::scheduler_TP0
	RoleSGLangDetokenizer Role = "sglang-detokenizer"
	RoleSGLangDPCtrl      Role = "sglang-dp-controller"
	RoleSGLangTokenizer   Role = "sglang-tokenizer"
	RoleVLLMServer        Role = "vllm-server"      // vllm serve, python -m vllm.entrypoints...
	RoleVLLMAPIServer     Role = "vllm-api-server"  // VLLM::APIServer_N
	RoleVLLMEngineCore    Role = "vllm-engine-core" // VLLM::EngineCore[_DPn]
	RoleVLLMWorker        Role = "vllm-worker"      // VLLM::Worker_TPn
	RoleCompiler          Role = "compiler"         // nvcc, cicc, ptxas, cudafe++, gcc, cc1plus, g++, clang, ld
	RoleBuildTool         Role = "build-tool"       // ninja, make, cmake
	RoleCompileWorker     Role = "compile-worker"   // torch inductor / triton compile workers
	RolePySpy             Role = "py-spy"
	RolePython            Role = "python" // another python process
	RoleShell             Role = "shell"
	RoleKernelThread      Role = "kernel-thread"
)

// IsServer reports whether the role is a process of an inference server.
func (r Role) IsServer() bool {
	switch r {
	case RoleSGLangLauncher, RoleSGLangScheduler, RoleSGLangDetokenizer, RoleSGLangDPCtrl,
		RoleSGLangTokenizer, RoleVLLMServer, RoleVLLMAPIServer, RoleVLLMEngineCore, RoleVLLMWorker:
		return true
	}
	return false
}

// IsCompile reports whether the role does compilation work.
func (r Role) IsCompile() bool {
	return r == RoleCompiler || r == RoleBuildTool || r == RoleCompileWorker
}

// ProcSnapshot is one `ps` or `top` capture.
type ProcSnapshot struct {
	Src Source `json:"src"` // the file, line 0
	// At is the capture time; AtFrom says what evidence gave it.
	At     time.Time  `json:"at,omitzero"`
	AtFrom string     `json:"at_from,omitempty"`
	Format string     `json:"format"` // "aux", "auxf", "eo", "ef", "top"
	Procs  []*Process `json:"procs"`
	// Host facts top prints in its header (load average, uptime, memory), if any.
	Uptime  time.Duration `json:"uptime,omitempty"`
	LoadAvg [3]float64    `json:"load_avg,omitempty"`
}

// Process is one row of a process snapshot. Fields the format lacks are zero;
// Has says which were present.
type Process struct {
	Src    Source  `json:"src"`
	PID    int     `json:"pid"`
	PPID   int     `json:"ppid"` // -1 when unknown
	User   string  `json:"user,omitempty"`
	CPUPct float64 `json:"cpu_pct"`
	MemPct float64 `json:"mem_pct"`
	VSZKB  int64   `json:"vsz_kb"`
	RSSKB  int64   `json:"rss_kb"`
	TTY    string  `json:"tty,omitempty"`
	// Stat is the raw STAT column; State its first letter (R, S, D, Z, T, I, X).
	Stat  string `json:"stat"`
	State byte   `json:"-"`
	// Start is the start time when the format gives one precise enough
	// (lstart, or START as HH:MM/MonDD resolved against the snapshot day).
	Start time.Time `json:"start,omitzero"`
	// StartRaw is START/STIME as printed ("04:27", "Nov29", "2025") when the
	// format has no lstart; the bundle's time pass resolves it against the
	// snapshot's day into Start.
	StartRaw string        `json:"start_raw,omitempty"`
	Elapsed  time.Duration `json:"elapsed,omitempty"`
	CPUTime  time.Duration `json:"cpu_time"`
	NLWP     int           `json:"nlwp,omitempty"`
	Comm     string        `json:"comm,omitempty"`
	Args     string        `json:"args"`
	// Depth is the forest indentation level (ps auxf, ps -eo ... f), -1 if none.
	Depth int  `json:"depth"`
	Role  Role `json:"role,omitempty"`
	// Rank is parsed from the title (sglang::scheduler_DP0_TP3, VLLM::Worker_TP2).
	Rank    Rank   `json:"-"`
	RankTag string `json:"rank,omitempty"`
	Defunct bool   `json:"defunct,omitempty"`
	// Has lists the columns the snapshot had, by ps keyword (pid, ppid, rss...).
	Has map[string]bool `json:"-"`
}

// ByPID returns the process with the given pid, or nil.
func (s *ProcSnapshot) ByPID(pid int) *Process {
	for _, p := range s.Procs {
		if p.PID == pid {
			return p
		}
	}
	return nil
}

// Children returns the direct children of pid.
func (s *ProcSnapshot) Children(pid int) []*Process {
	var out []*Process
	for _, p := range s.Procs {
		if p.PPID == pid && p.PID != pid {
			out = append(out, p)
		}
	}
	return out
}

// Descendants returns every process below pid, depth first, in snapshot order.
func (s *ProcSnapshot) Descendants(pid int) []*Process {
	var out []*Process
	seen := map[int]bool{pid: true}
	var walk func(int)
	walk = func(p int) {
		for _, c := range s.Children(p) {
			if seen[c.PID] {
				continue // a ppid cycle in corrupt input
			}
			seen[c.PID] = true
			out = append(out, c)
			walk(c.PID)
		}
	}
	walk(pid)
	return out
}

// Ancestors returns the chain of parents of pid, nearest first.
func (s *ProcSnapshot) Ancestors(pid int) []*Process {
	var out []*Process
	seen := map[int]bool{pid: true}
	p := s.ByPID(pid)
	for p != nil && p.PPID > 0 && !seen[p.PPID] {
		seen[p.PPID] = true
		p = s.ByPID(p.PPID)
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}
