package facts

import (
	"strings"
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
	// Src is the file and the line where the snapshot starts (its header,
	// or top's first line), so that several snapshots of one file differ.
	Src Source `json:"src"`

	// Host is the node it was taken on, when the bundle holds several
	// (set by parser/runs).
	Host string `json:"host,omitempty"`

	// At is the capture time; AtFrom says what evidence gave it.
	At     time.Time  `json:"at,omitzero"`
	AtFrom string     `json:"at_from,omitempty"`
	Format string     `json:"format"` // "aux", "auxf", "eo", "ef", "top"
	Procs  []*Process `json:"procs"`
	// Omitted counts the rows read but not kept: a snapshot keeps at most
	// procs.MaxRows rows as they come, then only the ones that matter.
	Omitted int `json:"omitted,omitempty"`
	// Host facts top prints in its header (load average, uptime, memory), if any.
	Uptime  time.Duration `json:"uptime,omitempty"`
	LoadAvg [3]float64    `json:"load_avg,omitempty"`
	// TimeOfDay is the wall-clock time top prints in its first line
	// ("04:27:21"), as printed. It has no date and no zone, so At stays zero
	// unless other evidence (a capture stamp, a date line) gives the day.
	TimeOfDay string `json:"time_of_day,omitempty"`
	// Users is the user count of top's first line: set in top frames only,
	// -1 when that line lacks it.
	Users int `json:"users,omitempty"`
	// Tasks, CPU and Mem are top's summary lines; nil when absent.
	Tasks *TaskCounts `json:"tasks,omitempty"`
	CPU   *CPUSummary `json:"cpu,omitempty"`
	Mem   *MemSummary `json:"mem,omitempty"`
}

// TaskCounts is top's "Tasks:" line. DSleep is -1 before procps 4.0.5, which
// counted D-state tasks among the sleeping ones.
type TaskCounts struct {
	Total    int `json:"total"`
	Running  int `json:"running"`
	Sleeping int `json:"sleeping"`
	DSleep   int `json:"d_sleep"`
	Stopped  int `json:"stopped"`
	Zombie   int `json:"zombie"`
}

// CPUSummary is top's "%Cpu(s):" line, in percent of all CPUs.
type CPUSummary struct {
	User    float64 `json:"us"`
	System  float64 `json:"sy"`
	Nice    float64 `json:"ni"`
	Idle    float64 `json:"id"`
	IOWait  float64 `json:"wa"`
	HardIRQ float64 `json:"hi"`
	SoftIRQ float64 `json:"si"`
	Steal   float64 `json:"st"`
}

// MemSummary is top's memory and swap lines in KiB, whatever unit top
// printed (KiB, MiB, GiB ...). Fields top did not print are -1.
type MemSummary struct {
	TotalKB     int64 `json:"total_kb"`
	FreeKB      int64 `json:"free_kb"`
	UsedKB      int64 `json:"used_kb"`
	BuffCacheKB int64 `json:"buff_cache_kb"`
	AvailKB     int64 `json:"avail_kb"`
	SwapTotalKB int64 `json:"swap_total_kb"`
	SwapFreeKB  int64 `json:"swap_free_kb"`
	SwapUsedKB  int64 `json:"swap_used_kb"`
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
	// snapshot's day into Start. The two-word forms of start/bsdstart
	// ("Jun  6") are joined ("Jun06") and other locales' month names
	// written in English ("Mär05" -> "Mar05") so that one layout reads all.
	StartRaw string        `json:"start_raw,omitempty"`
	Elapsed  time.Duration `json:"elapsed,omitempty"`
	CPUTime  time.Duration `json:"cpu_time"`
	NLWP     int           `json:"nlwp,omitempty"`
	Comm     string        `json:"comm,omitempty"`
	Args     string        `json:"args"`
	// Depth is the forest indentation level (ps auxf, ps -eo ... f), -1 if none.
	Depth int  `json:"depth"`
	Role  Role `json:"role,omitempty"`
	// Name is the program: the base name of the first word of Args (a
	// kernel thread's name without brackets, a title such as
	// "sglang::scheduler_TP0" as is), or Comm when Args is absent.
	Name string `json:"name,omitempty"`
	// Nice, Priority (PR/PRI, "rt" for real-time) and SHRKB are set when the
	// format has them (top, ps -l, ps -o ni,pri).
	Nice     int    `json:"nice,omitempty"`
	Priority string `json:"priority,omitempty"`
	SHRKB    int64  `json:"shr_kb,omitempty"`
	// Rank is parsed from the title (sglang::scheduler_DP0_TP3, VLLM::Worker_TP2).
	Rank    Rank   `json:"-"`
	RankTag string `json:"rank,omitempty"`
	Defunct bool   `json:"defunct,omitempty"`
	// Has lists the columns the snapshot had, by ps keyword (pid, ppid, rss...).
	// All processes of a snapshot share one map: read it, never write it.
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

// Filter returns the processes for which keep is true, in snapshot order.
func (s *ProcSnapshot) Filter(keep func(*Process) bool) []*Process {
	var out []*Process
	for _, p := range s.Procs {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// ByRole returns the processes of the given roles, in snapshot order.
func (s *ProcSnapshot) ByRole(roles ...Role) []*Process {
	return s.Filter(func(p *Process) bool {
		for _, r := range roles {
			if p.Role == r {
				return true
			}
		}
		return false
	})
}

// ProcDelta is how one process changed between two snapshots.
type ProcDelta struct {
	PID           int
	Before, After *Process
	// CPU is the CPU time the process burned between the snapshots; Wall the
	// time between them (zero when either snapshot has no time).
	CPU  time.Duration
	Wall time.Duration
	// StateChanged is true when the state letter differs (S -> R, R -> D ...).
	StateChanged bool
}

// SameProcess reports whether two rows are the same process rather than a
// reused pid: the pid matches and so do the start time (or START column)
// and the command, where both rows have them. The start times agree within
// the coarser one's precision: a second for lstart or an elapsed time, a
// minute for START's HH:MM, a day for its MonDD (ps aux beside ps -eo of
// the same round, or two rounds of different formats).
func SameProcess(a, b *Process) bool {
	if a.PID != b.PID {
		return false
	}
	if !a.Start.IsZero() && !b.Start.IsZero() {
		tol := max(a.startPrecision(), b.startPrecision())
		d := a.Start.Sub(b.Start)
		if d < -tol || d > tol {
			return false
		}
	} else if a.StartRaw != "" && b.StartRaw != "" && a.StartRaw != b.StartRaw {
		return false
	}
	// A title set by setproctitle replaces argv, so a changed command alone
	// is no proof of reuse; a changed program name is.
	return a.Name == "" || b.Name == "" || a.Name == b.Name || a.Role.IsServer() || b.Role.IsServer()
}

// startPrecision is how precise Start is, from the form it was read in.
func (p *Process) startPrecision() time.Duration {
	switch {
	case p.StartRaw == "":
		return time.Second
	case strings.IndexByte(p.StartRaw, ':') >= 0:
		return time.Minute
	default:
		return 24 * time.Hour // "Nov29", or a year
	}
}

// Deltas pairs the processes of an earlier and a later snapshot that are the
// same process, in the order of the later snapshot. A CPU time that went
// down by more than a second (formats print it with different precision:
// top in hundredths, ps in seconds) means the pair is not the same process
// and is left out.
func Deltas(before, after *ProcSnapshot) []ProcDelta {
	idx := make(map[int]*Process, len(before.Procs))
	for _, p := range before.Procs {
		if _, dup := idx[p.PID]; !dup {
			idx[p.PID] = p
		}
	}
	var wall time.Duration
	if !before.At.IsZero() && !after.At.IsZero() {
		wall = after.At.Sub(before.At)
	}
	var out []ProcDelta
	for _, a := range after.Procs {
		b := idx[a.PID]
		if b == nil || !SameProcess(b, a) || a.CPUTime < b.CPUTime-time.Second {
			continue
		}
		out = append(out, ProcDelta{PID: a.PID, Before: b, After: a, CPU: max(a.CPUTime-b.CPUTime, 0),
			Wall: wall, StateChanged: a.State != b.State})
	}
	return out
}
