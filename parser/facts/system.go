package facts

import "time"

// KernelEventType names what a kernel log line says.
type KernelEventType string

// Kernel event types.
const (
	KernelXid      KernelEventType = "xid"
	KernelSXid     KernelEventType = "sxid" // NVSwitch errors
	KernelOOMKill  KernelEventType = "oom-kill"
	KernelSegfault KernelEventType = "segfault"
	KernelNVRM     KernelEventType = "nvrm" // another NVRM line (GPU fallen off the bus ...)
	KernelHungTask KernelEventType = "hung-task"
)

// KernelEvent is one meaningful kernel log line.
type KernelEvent struct {
	Src  Source          `json:"src"`
	Type KernelEventType `json:"type"`
	// Time is the wall time when the line has one (dmesg -T, journald);
	// Uptime the seconds since boot printed by plain dmesg.
	Time   time.Time     `json:"time,omitzero"`
	Uptime time.Duration `json:"uptime,omitempty"`
	// Xid fields.
	Code  int    `json:"code,omitempty"`
	BusID string `json:"bus_id,omitempty"` // normalized like GPU.BusID
	GPU   int    `json:"gpu"`              // index in the inventory, -1 unknown
	// PID and Comm of the process named by the line (Xid pid=, OOM victim, segfault).
	PID  int    `json:"pid,omitempty"`
	Comm string `json:"comm,omitempty"`
	// RSSKB is the OOM victim's resident memory (anon+file+shmem).
	RSSKB int64  `json:"rss_kb,omitempty"`
	Text  string `json:"text"`
	// Xid is what the Xid catalog says about Code (nil for other lines), so
	// that rules read the meaning from the fact, not from the parser.
	Xid *XidMeaning `json:"xid,omitempty"`
	// Cgroup is set for a memory-cgroup OOM (constraint=CONSTRAINT_MEMCG).
	Cgroup string `json:"cgroup,omitempty"`
	// Constraint is the OOM killer's constraint (CONSTRAINT_NONE,
	// CONSTRAINT_MEMCG, CONSTRAINT_CPUSET, CONSTRAINT_MEMORY_POLICY).
	Constraint string `json:"constraint,omitempty"`
	// UUID is the GPU's UUID when the line names it (NVRM: GPU at PCI:... GPU-...).
	UUID string `json:"uuid,omitempty"`
	// Fatal is set for an SXid or NVLink line that says "Fatal".
	Fatal bool `json:"fatal,omitempty"`
}

// MemSnapshot is /proc/meminfo or `free`. Values in KiB; absent ones are not OK.
type MemSnapshot struct {
	Src       Source    `json:"src"`
	At        time.Time `json:"at,omitzero"`
	Format    Kind      `json:"format"`
	TotalKB   Val       `json:"total_kb"`
	FreeKB    Val       `json:"free_kb"`
	AvailKB   Val       `json:"available_kb"`
	CachedKB  Val       `json:"cached_kb"`
	ShmemKB   Val       `json:"shmem_kb"`
	SwapTotal Val       `json:"swap_total_kb"`
	SwapFree  Val       `json:"swap_free_kb"`
	// Fields holds every meminfo key, for rules that need more.
	Fields map[string]int64 `json:"-"`
}

// DiskUsage is one line of `df`.
type DiskUsage struct {
	Src        Source `json:"src"`
	Filesystem string `json:"filesystem"`
	Type       string `json:"type,omitempty"`
	SizeKB     int64  `json:"size_kb"`
	UsedKB     int64  `json:"used_kb"`
	AvailKB    int64  `json:"avail_kb"`
	Mount      string `json:"mount"`
}

// EnvVar is one environment variable from an env dump, a launch command or
// an env report.
type EnvVar struct {
	Src   Source `json:"src"`
	Name  string `json:"name"`
	Value string `json:"value"`
	// From is "env", "cmdline", "collect-env", "check-env", "manifest".
	From string `json:"from"`
}

// EnvReport is `python -m torch.utils.collect_env`, `vllm collect-env` or
// `python -m sglang.check_env`: versions and hardware as the Python stack sees them.
type EnvReport struct {
	Src    Source `json:"src"`
	Format Kind   `json:"format"`
	// Versions maps a component (torch, cuda, cudnn, nccl, driver, python,
	// vllm, sglang, flashinfer, triton, transformers, os ...) to its version,
	// and Where to the line it was read from.
	Versions map[string]string `json:"versions"`
	Where    map[string]Source `json:"-"`
	// GPUs are the GPU model lines ("GPU 0: NVIDIA H200").
	GPUs []string `json:"gpus,omitempty"`
	// Topology is the GPU topology block, if printed (the lines as is).
	Topology []string `json:"topology,omitempty"`
}

// Cmdline is a launch command: a shell line or a script.
type Cmdline struct {
	Src Source `json:"src"`
	// Argv is the command split as a shell would, env assignments removed.
	Argv []string `json:"argv"`
	// Env are the VAR=value assignments and exports before or around it.
	Env map[string]string `json:"env,omitempty"`
	// Engine is recognized from the program and module.
	Engine Engine `json:"engine,omitempty"`
	// Flags maps a snake_case flag name to its value ("true" for a bare flag).
	Flags map[string]string `json:"flags,omitempty"`
	// EndLine is the last line of a command continued with backslashes.
	EndLine int `json:"end_line,omitempty"`
	// Container holds the `docker run` / `podman run` options that shape the
	// server's sandbox, snake_case (image, shm_size, ipc, gpus, network ...).
	Container map[string]string `json:"container,omitempty"`
}

// Probe is the result of one health probe of the server.
type Probe struct {
	Src      Source        `json:"src"`
	At       time.Time     `json:"at,omitzero"`
	URL      string        `json:"url"`
	Endpoint string        `json:"endpoint"` // /health, /v1/models ...
	Status   int           `json:"status"`   // HTTP status, 0 if none
	Err      string        `json:"error,omitempty"`
	Latency  time.Duration `json:"latency,omitempty"`
	Body     string        `json:"body,omitempty"`
}

// OK reports a 2xx answer.
func (p *Probe) OK() bool { return p.Status >= 200 && p.Status < 300 }

// PyStack is one thread of a `py-spy dump`.
type PyStack struct {
	Src    Source   `json:"src"`
	PID    int      `json:"pid"`
	Title  string   `json:"title,omitempty"` // the process line py-spy printed
	Thread string   `json:"thread"`
	Idle   bool     `json:"idle,omitempty"`
	Frames []Frame  `json:"frames"` // innermost first, as py-spy prints
	Native []string `json:"native,omitempty"`
	// TID is the thread id as py-spy printed it (decimal OS id or 0x... handle).
	TID string `json:"tid,omitempty"`
	// GIL is set when the thread held the GIL ("active+gil").
	GIL bool `json:"gil,omitempty"`
	// Error is what py-spy printed instead of a stack (permission denied,
	// process gone); Thread and Frames are then empty.
	Error string `json:"error,omitempty"`
}

// Artifact is one record of a coroner manifest: how an artifact was captured.
type Artifact struct {
	Src  Source `json:"src"`
	Path string `json:"path"`
	// Program is the plain name of the command's program (nvidia-smi).
	Program  string        `json:"program,omitempty"`
	Command  string        `json:"command,omitempty"`
	Round    int           `json:"round,omitempty"` // the snapshot round, 0 for one-time captures
	Skipped  string        `json:"skipped,omitempty"`
	Stderr   string        `json:"stderr,omitempty"`
	Start    time.Time     `json:"start,omitzero"`
	End      time.Time     `json:"end,omitzero"`
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	NotFound bool          `json:"not_found,omitempty"`
	Error    string        `json:"error,omitempty"`
	Bytes    int64         `json:"bytes"`
	Trimmed  bool          `json:"trimmed,omitempty"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	SHA256   string        `json:"sha256,omitempty"`
}

// CgroupMemory is a cgroup v2 memory.events file (or v1 memory.oom_control):
// counters of how often the cgroup hit its limits and killed.
type CgroupMemory struct {
	Src    Source           `json:"src"`
	Events map[string]int64 `json:"events"` // low, high, max, oom, oom_kill, oom_group_kill
}

// SystemInfo is what a system description says: uname, os-release, tool
// versions (nvidia-smi --version, ps --version).
type SystemInfo struct {
	Src      Source            `json:"src"`
	Hostname string            `json:"hostname,omitempty"`
	Kernel   string            `json:"kernel,omitempty"`
	OS       string            `json:"os,omitempty"`
	Versions map[string]string `json:"versions,omitempty"`
}

// XidMeaning is the catalog's reading of an Xid code.
type XidMeaning struct {
	Name     string `json:"name"`
	Meaning  string `json:"meaning"`
	Severity string `json:"severity"` // critical, error, warning, info
	Action   string `json:"action"`
	// Secondary codes usually follow another Xid; Hardware ones a failing part.
	Secondary bool `json:"secondary,omitempty"`
	Hardware  bool `json:"hardware,omitempty"`
}
