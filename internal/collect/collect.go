// Package collect snapshots a live, possibly hung, inference server machine:
// rounds of process and GPU snapshots and health probes spaced in time, the
// machine's one-time facts (GPU topology, kernel Xid and OOM lines, memory,
// disks, the server's environment and Python stack, py-spy dumps), and the
// head and tail of the server's logs. It returns the captures in memory
// with a record of how each was taken; cmd/coroner packs them.
//
// Every external command runs through one Runner, with a timeout, in a
// process group of its own that is killed whole: a hung nvidia-smi is
// evidence, not a reason for the collector to hang. A missing program is
// recorded as not found and the capture goes on.
package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coroner-dev/coroner/internal/envpolicy"
	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/manifest"
)

// Config says what to collect.
type Config struct {
	// Logs are the server's log files.
	Logs []string
	// PID selects the server by its main process; Match by engine
	// ("sglang" or "vllm"). With neither, processes of either are taken.
	PID   int
	Match string
	// URL is the server's base URL for health probes ("" for none).
	URL string
	// Count rounds of snapshots, Every apart.
	Count int
	Every time.Duration
	// Timeout bounds each external command (30 s if 0).
	Timeout time.Duration
	// Programs, by name or path (defaults: nvidia-smi, py-spy, python3,
	// ps, dmesg, df from PATH). Tests put stubs here. Python is the
	// collector's own, run isolated in an environment of its own (ownPython).
	NvidiaSMI, PySpy, Python, PS, Dmesg, Journalctl, DF string
	// RunServerPython lets the environment report run with the server's
	// own Python, as the server's user (see pyEnv).
	RunServerPython bool
	// LogHead and LogTail are how much of each log's start and end are
	// kept (1 MB and 50 MB if 0).
	LogHead, LogTail int64
	// ProcRoot is /proc.
	ProcRoot string
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// Progress receives one line per step ("round 2 of 3").
	Progress func(string)
	// Cluster, when set, collects from the nodes of a cluster through its
	// own tools instead of from this machine (see cluster.go).
	Cluster *Cluster
}

func (c *Config) defaults() {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.NvidiaSMI, "nvidia-smi")
	def(&c.PySpy, "py-spy")
	def(&c.Python, "python3")
	def(&c.PS, "ps")
	def(&c.Dmesg, "dmesg")
	def(&c.Journalctl, "journalctl")
	def(&c.DF, "df")
	def(&c.ProcRoot, "/proc")
	if c.Count <= 0 {
		c.Count = 1
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.LogHead <= 0 {
		c.LogHead = 1 << 20
	}
	if c.LogTail <= 0 {
		c.LogTail = 50 << 20
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Progress == nil {
		c.Progress = func(string) {}
	}
}

// File is one captured file of the bundle.
type File struct {
	Name    string
	Data    []byte
	ModTime time.Time
	// Log marks a server log (trimmed first under a size cap).
	Log bool
}

// Capture is everything collected, in memory.
type Capture struct {
	Started, Finished time.Time
	Host              manifest.Host
	Target            *manifest.Target
	Rounds            []manifest.Round
	Files             []File
	// Artifacts hold one record per capture attempt, in bundle order.
	// Bytes, SHA256 and Kind are left to the writer.
	Artifacts []manifest.Artifact
	Notes     []string
	// Cluster and Nodes are set by a collect across a cluster.
	Cluster *manifest.Cluster
	Nodes   []manifest.Node
	// Missing says that the server asked about is not there: the process
	// was not found, the cluster's tool is missing, no node answered. The
	// bundle is still written, and the command exits non-zero.
	Missing string
	// Summary says what was captured, failed and skipped.
	Summary Summary
}

type collector struct {
	cfg    Config
	runner *Runner
	target *target
	boot   time.Time

	mu   sync.Mutex
	cap  *Capture
	arts []keyed
	env  []string // the server's environment, if it could be read
	// server is the environment with whom the server ran as when it was
	// read.
	server *serverCapture
	// jobUID and jobGID are the Slurm job's user and group (-1 unknown).
	jobUID, jobGID int
}

type keyed struct {
	key string
	seq int
	a   manifest.Artifact
}

// Run collects. It returns what it has when ctx is canceled (an
// interrupted collect still makes a bundle); the error is only for a
// configuration that cannot work.
func Run(ctx context.Context, cfg Config) (*Capture, error) {
	cfg.defaults()
	if cfg.Match != "" && cfg.Match != "sglang" && cfg.Match != "vllm" {
		return nil, fmt.Errorf("--match %q: want sglang or vllm", cfg.Match)
	}
	c := &collector{cfg: cfg, runner: &Runner{Now: cfg.Now}, cap: &Capture{}, jobUID: -1, jobGID: -1}
	c.cap.Started = c.now()
	c.boot = bootTime(cfg.ProcRoot)
	c.cap.Host = c.host()
	if cfg.Cluster != nil {
		if err := ValidateCluster(cfg.Cluster); err != nil {
			return nil, err
		}
		c.runCluster(ctx)
		c.cfg.Progress("reading the logs")
		c.logs()
		c.cap.Finished = c.now()
		c.finish()
		return c.cap, nil
	}
	c.target = findTarget(readProcs(cfg.ProcRoot), cfg.PID, cfg.Match, os.Getpid())
	c.cap.Target = &manifest.Target{Engine: c.target.engine, How: c.target.how, MainPID: c.target.mainPID, PIDs: c.target.pids,
		Model: escape.Text(c.target.model), URL: cfg.URL}
	switch {
	case cfg.PID > 0 && len(c.target.pids) == 0:
		c.cap.Missing = fmt.Sprintf("process %d was not found", cfg.PID)
		c.note("process %d was not found: no py-spy dumps, and the environment is the collector's own", cfg.PID)
	case len(c.target.pids) == 0:
		c.cap.Missing = fmt.Sprintf("no %s process was found", orEngines(cfg.Match))
		c.note("no %s process was found: no py-spy dumps, and the environment is the collector's own", orEngines(cfg.Match))
	}
	if m := c.target.mainPID; m > 0 {
		c.server = captureServer(cfg.ProcRoot, m)
		defer c.server.close()
		c.env = c.server.env
	}

	var once sync.WaitGroup
	start := c.now()
	for i := 1; i <= cfg.Count; i++ {
		if i > 1 {
			wait := start.Add(time.Duration(i-1) * cfg.Every).Sub(c.now())
			if wait > 0 {
				cfg.Progress(fmt.Sprintf("round %d of %d in %s", i, cfg.Count, wait.Round(time.Second)))
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
		}
		if ctx.Err() != nil {
			c.note("interrupted before round %d of %d", i, cfg.Count)
			break
		}
		cfg.Progress(fmt.Sprintf("round %d of %d", i, cfg.Count))
		c.round(ctx, i)
		if i == 1 {
			// The one-time captures are slow (collect_env, py-spy): they
			// run beside the later rounds, not between them.
			once.Go(func() { c.once(ctx) })
		}
	}
	cfg.Progress("waiting for the one-time captures")
	once.Wait()
	cfg.Progress("reading the logs")
	c.logs()
	c.cap.Finished = c.now()
	c.finish()
	return c.cap, nil
}

func orEngines(m string) string {
	if m == "" {
		return "sglang or vllm"
	}
	return m
}

func (c *collector) now() time.Time { return c.cfg.Now().UTC() }

func (c *collector) note(format string, args ...any) {
	c.mu.Lock()
	c.cap.Notes = append(c.cap.Notes, escape.Text(fmt.Sprintf(format, args...)))
	c.mu.Unlock()
}

// record adds a capture: its file when data is not empty, and its
// manifest record in any case. name is where the file goes; edit, if not
// nil, completes the record.
func (c *collector) record(name string, round int, res Result, data []byte, log bool, edit func(*manifest.Artifact)) {
	// The texts come from other users (a server's argv[0] names the
	// program, a pod's stderr fills Stderr) and are printed to the
	// terminal of whoever runs collect or reads the manifest: no escape
	// sequence of theirs goes through.
	a := manifest.Artifact{
		Program: escape.Line(res.Program), Command: escape.Text(res.Command), Round: round, Start: res.Start, End: res.End,
		ExitCode: res.ExitCode, TimedOut: res.TimedOut, NotFound: res.NotFound, Skipped: escape.Text(res.Skipped),
		Stderr: strings.TrimSpace(escape.Text(string(res.Stderr))), RunAs: res.RunAs,
	}
	if res.TimedOut {
		a.TimeoutS = res.Timeout.Seconds()
	}
	if res.Err != nil {
		a.Error = escape.Text(res.Err.Error())
	}
	if res.Stuck {
		a.Error += "; the process did not die after SIGKILL (uninterruptible sleep) and was left behind"
	}
	if res.Truncated {
		a.Truncated = &manifest.Cut{OriginalBytes: -1, HeadBytes: int64(len(data)), Reason: fmt.Sprintf("only the first %d bytes of the output were kept", len(data))}
	}
	if edit != nil {
		edit(&a)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(data) > 0 {
		a.Path = name
		mod := res.End
		if !a.ModTime.IsZero() {
			mod = a.ModTime
		}
		c.cap.Files = append(c.cap.Files, File{Name: name, Data: data, ModTime: mod, Log: log})
	}
	c.arts = append(c.arts, keyed{key: name, seq: len(c.arts), a: a})
}

func (c *collector) run(ctx context.Context, cmd Cmd) Result {
	if cmd.Timeout == 0 {
		cmd.Timeout = c.cfg.Timeout
	}
	return c.runner.Run(ctx, cmd)
}

// cEnv is the environment for tools whose output coroner parses: the C
// locale, so that dates and numbers read the same everywhere.
func cEnv() []string { return append(os.Environ(), "LC_ALL=C") }

// PSColumns are the ps -eo columns: lstart and etimes date every process
// (and the snapshot), times and nlwp show work, stat shows D and Z.
const PSColumns = "pid,ppid,lstart,etimes,times,rss,vsz,stat,nlwp,comm,args"

func (c *collector) round(ctx context.Context, i int) {
	dir := fmt.Sprintf("round-%02d", i)
	r := manifest.Round{Dir: dir, N: i, Start: c.now()}
	var wg sync.WaitGroup
	wg.Go(func() { c.ps(ctx, dir, i) })
	wg.Go(func() { c.gpus(ctx, dir, i) })
	if c.cfg.URL != "" {
		wg.Go(func() {
			res := Result{Program: "coroner", Command: "GET " + strings.TrimRight(c.cfg.URL, "/") + "{" + endpointList() + "}", Start: c.now()}
			data := probeAll(ctx, c.cfg.URL, c.cfg.Now)
			res.End = c.now()
			c.record(dir+"/probes.jsonl", i, res, data, false, nil)
		})
	}
	wg.Wait()
	r.End = c.now()
	c.mu.Lock()
	c.cap.Rounds = append(c.cap.Rounds, r)
	c.mu.Unlock()
}

func endpointList() string {
	var s []string
	for _, e := range Endpoints {
		s = append(s, e.Path)
	}
	return strings.Join(s, ",")
}

func (c *collector) ps(ctx context.Context, dir string, i int) {
	failed := func(r Result) bool { return !r.OK() && len(r.Stdout) == 0 && !r.TimedOut }
	res := c.run(ctx, Cmd{Path: c.cfg.PS, Args: []string{"-eo", PSColumns, "-ww"}, Env: cEnv()})
	if failed(res) && !res.NotFound {
		// procps before 3.3.13 has no times or etimes.
		c.record(dir+"/ps_eo.txt", i, res, nil, false, nil)
		res = c.run(ctx, Cmd{Path: c.cfg.PS, Args: []string{"-eo", "pid,ppid,lstart,etime,time,rss,vsz,stat,nlwp,comm,args", "-ww"}, Env: cEnv()})
	}
	if failed(res) {
		// Slim containers lack procps, BusyBox's ps knows none of these
		// columns: write the same listing from /proc.
		c.record(dir+"/ps_eo.txt", i, res, nil, false, nil)
		start := c.now()
		data := psFromProc(readProcs(c.cfg.ProcRoot), c.boot, start, time.Local)
		c.record(dir+"/ps_eo.txt", i, Result{Program: "coroner", Command: "read " + c.cfg.ProcRoot + " (ps failed; written as ps -eo " + PSColumns + " would)",
			Start: start, End: c.now()}, data, false, nil)
		if res.NotFound {
			return
		}
	} else {
		c.record(dir+"/ps_eo.txt", i, res, res.Stdout, false, nil)
	}
	res = c.run(ctx, Cmd{Path: c.cfg.PS, Args: []string{"auxfww"}, Env: cEnv()})
	c.record(dir+"/ps_auxf.txt", i, res, res.Stdout, false, nil)
}

// QueryGPU are the --query-gpu fields; QueryGPUBasic those every driver
// since R418 knows (compute_cap and clocks_event_reasons came later, and an
// unknown field fails the whole command).
const (
	QueryGPU      = "timestamp,index,name,pci.bus_id,uuid,compute_cap,driver_version,pstate,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,clocks.current.sm,clocks.current.memory,clocks_event_reasons.active"
	QueryGPUBasic = "timestamp,index,name,pci.bus_id,uuid,driver_version,pstate,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,clocks.sm,clocks.mem"
	QueryApps     = "timestamp,gpu_bus_id,gpu_uuid,pid,process_name,used_gpu_memory"
	QueryAppsBase = "pid,process_name,used_gpu_memory"
)

func (c *collector) smi(ctx context.Context, args ...string) Result {
	return c.run(ctx, Cmd{Path: c.cfg.NvidiaSMI, Args: args, SkipAfterTimeout: true})
}

// invalidField reports nvidia-smi refusing a query field.
func invalidField(r Result) bool {
	return !r.OK() && !r.TimedOut && (bytes.Contains(r.Stdout, []byte("is not a valid field")) || bytes.Contains(r.Stderr, []byte("is not a valid field")))
}

func (c *collector) gpus(ctx context.Context, dir string, i int) {
	res := c.smi(ctx, "-q", "-x")
	c.record(dir+"/nvidia-smi-q.xml", i, res, res.Stdout, false, nil)
	res = c.smi(ctx, "--query-gpu="+QueryGPU, "--format=csv")
	if invalidField(res) {
		c.record(dir+"/query-gpu.csv", i, res, nil, false, nil)
		res = c.smi(ctx, "--query-gpu="+QueryGPUBasic, "--format=csv")
	}
	c.record(dir+"/query-gpu.csv", i, res, res.Stdout, false, nil)
	res = c.smi(ctx, "--query-compute-apps="+QueryApps, "--format=csv")
	if invalidField(res) {
		c.record(dir+"/compute-apps.csv", i, res, nil, false, nil)
		res = c.smi(ctx, "--query-compute-apps="+QueryAppsBase, "--format=csv")
	}
	c.record(dir+"/compute-apps.csv", i, res, res.Stdout, false, nil)
}

// once captures what does not change between rounds.
func (c *collector) once(ctx context.Context) {
	const dir = "once"
	r := manifest.Round{Dir: dir, Start: c.now()}
	var wg sync.WaitGroup
	wg.Go(func() {
		res := c.smi(ctx, "topo", "-m")
		c.record(dir+"/topo.txt", 0, res, res.Stdout, false, nil)
		res = c.smi(ctx, "-L")
		c.record(dir+"/nvidia-smi-L.txt", 0, res, res.Stdout, false, nil)
	})
	wg.Go(func() {
		c.kernel(ctx, dir)
		c.readFile(dir+"/meminfo.txt", filepath.Join(c.cfg.ProcRoot, "meminfo"))
		c.df(ctx, dir)
		c.environment(dir)
	})
	wg.Go(func() {
		c.packages(dir)
		c.pyEnv(ctx, dir)
		c.pySpy(ctx, dir)
	})
	wg.Wait()
	r.End = c.now()
	c.mu.Lock()
	c.cap.Rounds = append(c.cap.Rounds, r)
	c.mu.Unlock()
}

// kernelLine keeps the kernel lines coroner reads: GPU errors (Xid, NVRM,
// NVLink, fallen off the bus, PCIe AER), OOM kills, segfaults and hung
// tasks. The rest of the kernel log is nobody's business.
var kernelLine = regexp.MustCompile(`NVRM|Xid|NVLink|nvidia|GPU has fallen|AER:|oom|Out of memory|Killed process|Memory cgroup|segfault|general protection|blocked for more than|INFO: task|hung_task`)

func (c *collector) kernel(ctx context.Context, dir string) {
	res := c.run(ctx, Cmd{Path: c.cfg.Dmesg, Args: []string{"-T"}, Env: cEnv()})
	if len(res.Stdout) == 0 && !res.TimedOut {
		// dmesg needs CAP_SYSLOG where dmesg_restrict is set; journald may
		// still let this user read the kernel's lines.
		c.record(dir+"/dmesg.txt", 0, res, nil, false, nil)
		res = c.run(ctx, Cmd{Path: c.cfg.Journalctl, Args: []string{"-k", "-b", "-o", "short-iso", "--no-pager", "-q"}, Env: cEnv()})
	}
	var kept bytes.Buffer
	lines, n := 0, 0
	for _, l := range bytes.SplitAfter(res.Stdout, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		lines++
		if kernelLine.Match(l) {
			kept.Write(l)
			n++
		}
	}
	c.record(dir+"/dmesg.txt", 0, res, kept.Bytes(), false, func(a *manifest.Artifact) {
		if lines > 0 {
			a.Truncated = &manifest.Cut{OriginalBytes: int64(len(res.Stdout)), RemovedBytes: int64(len(res.Stdout) - kept.Len()),
				Reason: fmt.Sprintf("kept %d of %d lines: GPU (NVRM, Xid, NVLink, AER), OOM, segfault and hung-task lines", n, lines)}
		}
	})
}

func (c *collector) readFile(name, p string) {
	res := Result{Program: "coroner", Command: "read " + p, Start: c.now()}
	data, err := os.ReadFile(p)
	res.End = c.now()
	if err != nil {
		res.Err, res.ExitCode = err, -1
	}
	c.record(name, 0, res, data, false, nil)
}

// df covers the file systems a server needs: the root, /dev/shm (NCCL's
// shared memory), /tmp (JIT caches) and the model's and HF cache's disks.
func (c *collector) df(ctx context.Context, dir string) {
	cands := []string{"/", "/dev/shm", "/tmp"}
	if m := c.target.model; m != "" && filepath.IsAbs(m) {
		cands = append(cands, m)
	}
	for _, kv := range c.serverEnv() {
		if v, ok := strings.CutPrefix(kv, "HF_HOME="); ok && filepath.IsAbs(v) {
			cands = append(cands, v)
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(v) {
			cands = append(cands, filepath.Join(v, ".cache", "huggingface"))
		}
	}
	var paths []string
	seen := map[string]bool{}
	for _, p := range cands {
		if _, err := os.Stat(p); err == nil && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	res := c.run(ctx, Cmd{Path: c.cfg.DF, Args: append([]string{"-kT"}, paths...), Env: cEnv()})
	c.record(dir+"/df.txt", 0, res, res.Stdout, false, nil)
}

func (c *collector) serverEnv() []string {
	if c.env != nil {
		return c.env
	}
	return os.Environ()
}

// relevantEnv reports the variables that shape an inference server, which
// collect keeps (envpolicy.Collect). Secret values among them are redacted
// when the bundle is written.
func relevantEnv(name string) bool { return envpolicy.Matters(name, envpolicy.Collect) }

func (c *collector) environment(dir string) {
	src := "the collector's own environment"
	env := os.Environ()
	if c.env != nil {
		src = fmt.Sprintf("/proc/%d/environ", c.target.mainPID)
		env = c.env
	}
	var keep []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && relevantEnv(name) {
			keep = append(keep, kv)
		}
	}
	sort.Strings(keep)
	var b bytes.Buffer
	for _, kv := range keep {
		b.WriteString(strings.ReplaceAll(kv, "\n", `\n`))
		b.WriteByte('\n')
	}
	now := c.now()
	c.record(dir+"/env.txt", 0, Result{Program: "coroner", Command: "read " + src + " (variables of CUDA, NCCL, torch, the engines, HF, paths)",
		Start: now, End: now}, b.Bytes(), false, nil)
}

func readEnviron(p string) []string {
	data, err := os.ReadFile(p)
	if err != nil || len(data) == 0 {
		return nil
	}
	var out []string
	for _, kv := range bytes.Split(bytes.TrimRight(data, "\x00"), []byte{0}) {
		out = append(out, string(kv))
	}
	return out
}

// pyEnv runs an environment report. The server's own Python knows its
// versions best, but running it runs code that whoever can write its
// interpreter, its virtualenv, its PYTHONPATH or its working directory
// controls: as root, a fake "sglang" process of any user would get its code
// run as root. So the server's Python runs only when asked
// (RunServerPython), only as whom the server ran as when its environment
// was read, only from files that nobody else can change, with a clean
// environment; otherwise the collector's own Python (--python) runs,
// isolated, and the server's versions come from its package metadata on
// disk (packages).
func (c *collector) pyEnv(ctx context.Context, dir string) {
	cmd := c.ownPython()
	server := false
	if c.target.mainPID > 0 {
		path, env, as, why := c.serverProbe()
		if why == "" {
			cmd = Cmd{Path: path, Env: env, As: as, Dir: "/", Timeout: cmd.Timeout}
			server = true
		} else {
			// Say in the manifest what was not run, and why.
			name := path
			if name == "" {
				name = "(the server's python)"
			}
			c.record(dir+"/"+c.engineReport(), 0, Result{Program: filepath.Base(name),
				Command: display(name, c.reportArgs()), Skipped: why, ExitCode: -1}, nil, false, nil)
		}
	}
	run := func(args []string) Result {
		if !server {
			// -I: no PYTHON* variable, no user site-packages, no script
			// folder on sys.path.
			cmd.Args = append([]string{"-I"}, args...)
			if exe, err := exec.LookPath(cmd.Path); err == nil && selfIdentity().root() {
				// The Runner checks the interpreter; its virtualenv is
				// Python's business, checked here.
				if abs, err := filepath.Abs(exe); err == nil {
					if err := trustedPython(abs, 0); err != nil {
						return Result{Program: filepath.Base(cmd.Path), Command: display(cmd.Path, cmd.Args), ExitCode: -1,
							Skipped: fmt.Sprintf("not run: %v; another user could change what it runs as root", err)}
					}
				}
			}
			return c.run(ctx, cmd)
		}
		// -s: no user site-packages (a .pth file there runs code at
		// start); PYTHONPATH, checked, is still read.
		cmd.Args = append([]string{"-s"}, args...)
		// Last, right before the run: the server must still be the
		// process whose environment this is, as the same user.
		if err := c.server.recheck(c.cfg.ProcRoot); err != nil {
			return Result{Program: filepath.Base(cmd.Path), Command: display(cmd.Path, cmd.Args), ExitCode: -1,
				Skipped: fmt.Sprintf("not run: %v", err)}
		}
		return c.run(ctx, cmd)
	}
	if m := c.reportArgs(); m[1] != "torch.utils.collect_env" {
		res := run(m)
		if res.OK() {
			c.record(dir+"/"+c.engineReport(), 0, res, res.Stdout, false, nil)
			return
		}
		c.record(dir+"/"+c.engineReport(), 0, res, nil, false, nil)
	}
	res := run([]string{"-m", "torch.utils.collect_env"})
	c.record(dir+"/collect_env.txt", 0, res, res.Stdout, false, nil)
}

// minimalPath is the PATH of the programs coroner runs with an
// environment of its own: the system's folders.
const minimalPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// ownPython is how the collector's own Python runs: in an environment of
// its own (the system's folders and its own on PATH, the C locale), not
// the collector's, which under sudo may still hold the invoking user's
// PYTHON* variables and HOME.
func (c *collector) ownPython() Cmd {
	path := minimalPath
	if exe, err := exec.LookPath(c.cfg.Python); err == nil {
		if abs, err := filepath.Abs(exe); err == nil {
			path = filepath.Dir(abs) + ":" + path
		}
	}
	return Cmd{Path: c.cfg.Python, Env: []string{"PATH=" + path, "LC_ALL=C"}, Dir: "/", Timeout: max(c.cfg.Timeout, 90*time.Second)}
}

// reportArgs are the arguments of the engine's own environment report.
func (c *collector) reportArgs() []string {
	switch c.target.engine {
	case "sglang":
		return []string{"-m", "sglang.check_env"}
	case "vllm":
		return []string{"-m", "vllm.collect_env"}
	}
	return []string{"-m", "torch.utils.collect_env"}
}

func (c *collector) engineReport() string {
	if c.target.engine == "sglang" {
		return "check_env.txt"
	}
	return "collect_env.txt"
}

// serverProbe decides whether the server's own Python may run, and how:
// its path, a clean environment, and whom it runs as (nil: the collector).
// why is set when it may not.
func (c *collector) serverProbe() (path string, env []string, as *identity, why string) {
	path = c.serverPython()
	if path == "" {
		return "", nil, nil, "the server's Python could not be found"
	}
	if !c.cfg.RunServerPython {
		return path, nil, nil, "the server's own Python runs only with --run-server-python: it runs code that the server's user controls; " +
			"the server's package versions were read from disk instead (packages.txt)"
	}
	s := c.server
	switch {
	case s == nil:
		return path, nil, nil, "not run: the server's environment was not read"
	case s.why != "":
		return path, nil, nil, "not run: " + s.why
	}
	// The identity the environment was read with, not the server's now.
	owner := s.state.id
	self, _ := os.Readlink(filepath.Join(c.cfg.ProcRoot, "self", "ns", "mnt"))
	switch {
	case self == "" || s.state.mnt == "":
		return path, nil, nil, fmt.Sprintf("not run: cannot tell whether process %d sees the collector's files (its mount namespace could not be read)", s.pid)
	case self != s.state.mnt:
		return path, nil, nil, fmt.Sprintf("not run: process %d runs in another mount namespace (a container): its paths name other files than they do here", s.pid)
	}
	me := selfIdentity()
	switch {
	case me.root():
		as = &owner
	case me.uid == owner.uid:
	default:
		return path, nil, nil, fmt.Sprintf("not run: coroner runs as uid %d and the server as uid %d; its Python would run that user's code as uid %d",
			me.uid, owner.uid, me.uid)
	}
	if err := trustedPython(path, owner.uid); err != nil {
		return path, nil, nil, fmt.Sprintf("not run: %v; another user could change what it runs", err)
	}
	env, dropped, err := probeEnv(s.env, owner.uid)
	if err != nil {
		return path, nil, nil, fmt.Sprintf("not run: %v; another user could change what it imports", err)
	}
	for _, d := range dropped {
		c.note("the server's environment report ran without %s", d)
	}
	return path, env, as, ""
}

// probeEnv keeps of the server's environment what its environment report
// needs to find its packages and libraries and to print the settings that
// matter (envpolicy.Probe); nothing that loads code by itself
// (LD_PRELOAD, PYTHONSTARTUP, PYTHONHOME, BASH_ENV). Every path it keeps
// must be one that nobody but uid and root can change: one that is not is
// dropped, and dropped says so, except PYTHONPATH's, which err refuses (a
// report without the server's own imports would describe another
// installation). For a server that runs as root, variables that make a
// program load code are dropped whatever they name: its environment may
// be one a user gave it before exec'ing a set-uid program.
func probeEnv(env []string, uid int) (out, dropped []string, err error) {
	out = []string{"LC_ALL=C"}
	havePath := false
	for _, kv := range env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !envpolicy.Matters(name, envpolicy.Probe) {
			continue
		}
		if uid == 0 && loadsCode(name) {
			dropped = append(dropped, name+" (it makes a program load code, and the server runs as root)")
			continue
		}
		if !pathValued(name, val) {
			out = append(out, kv)
			continue
		}
		kept, why := trustedPaths(val, uid)
		if name == "PYTHONPATH" && len(why) > 0 {
			return nil, nil, fmt.Errorf("PYTHONPATH: %s", why[0])
		}
		for _, w := range why {
			dropped = append(dropped, name+"'s "+w)
		}
		if len(kept) == 0 {
			continue
		}
		out = append(out, name+"="+strings.Join(kept, string(filepath.ListSeparator)))
		havePath = havePath || name == "PATH"
	}
	if !havePath {
		out = append(out, "PATH="+minimalPath)
	}
	return out, dropped, nil
}

// loadsCode reports the variables that make a program load code from
// where they say: the dynamic loader's, Python's own (PYTHONPATH aside,
// whose entries are checked), a logging configuration that names classes
// to import, plugins.
func loadsCode(name string) bool {
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "PYTHON") && name != "PYTHONPATH" ||
		name == "VLLM_LOGGING_CONFIG_PATH" || strings.Contains(name, "PLUGIN")
}

// pathValued reports a variable whose value names files: by its name
// (PATH, HOME, CUDA_HOME, TRITON_CACHE_DIR, VLLM_CONFIG_ROOT,
// VLLM_LOGGING_CONFIG_PATH, NCCL_TOPO_FILE ...) or by a value that looks
// like one.
func pathValued(name, val string) bool {
	switch name {
	case "PATH", "HOME", "PYTHONPATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX":
		return true
	}
	for _, suffix := range []string{"_PATH", "_DIR", "_DIRS", "_HOME", "_ROOT", "_PREFIX", "_FILE", "_CACHE"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return strings.Contains(name, "_CONFIG") || strings.Contains(name, "_PATH") || strings.ContainsAny(val, "/~")
}

// trustedPaths keeps the entries of a path or path list that nobody but
// uid and root can change, and says why each other one went. Entries that
// do not exist go without a word: they hold nothing to load.
func trustedPaths(val string, uid int) (kept, why []string) {
	for _, p := range filepath.SplitList(val) {
		switch {
		case p == "":
			why = append(why, "empty entry (the working folder)")
			continue
		case !filepath.IsAbs(p):
			why = append(why, fmt.Sprintf("entry %q (relative: its meaning depends on the working folder)", p))
			continue
		}
		if err := trustedFor(p, uid); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				why = append(why, fmt.Sprintf("entry %s (%v)", p, err))
			}
			continue
		}
		kept = append(kept, p)
	}
	return kept, why
}

// packages writes the server's Python package versions, read from its
// site-packages without running anything (see packages.go).
func (c *collector) packages(dir string) {
	pid := c.target.mainPID
	if pid <= 0 {
		return
	}
	start := c.now()
	// Whom the server ran as when its environment, which names some of
	// these folders, was read.
	owner := -1
	if s := c.server; s != nil && s.why == "" {
		owner = s.state.id.uid
	}
	// Every process of the server: the main one may be a launcher that
	// maps no torch library itself.
	var dirs []string
	seen := map[string]bool{}
	for _, p := range append([]int{pid}, c.target.pids...) {
		for _, d := range sitePackages(c.cfg.ProcRoot, p, c.env) {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	pkgs := listPackages(dirs)
	res := Result{Program: "coroner", Command: fmt.Sprintf("read the *.dist-info names in the site-packages of process %d", pid), Start: start, End: c.now()}
	var data []byte
	if len(pkgs) == 0 {
		res.Err, res.ExitCode = errors.New("no site-packages with package metadata found in the server's memory maps or environment"), -1
	} else {
		cuda := ""
		for _, p := range pkgs {
			if p.name == "torch" {
				cuda = torchCUDA(p.dir, owner)
			}
		}
		data = packagesFile(pid, dirs, pkgs, cuda)
	}
	c.record(dir+"/packages.txt", 0, res, data, false, nil)
}

// serverPython finds the Python the server runs under, as the server
// would find it: a virtualenv's python is a link to the system's, and only
// its own path (not /proc/PID/exe) makes it load the virtualenv's packages.
// The path the server was started with comes first, then $VIRTUAL_ENV,
// then its name in the server's PATH, then the executable; "" when none is
// a Python.
func (c *collector) serverPython() string {
	m := c.target.procs[c.target.mainPID]
	if m == nil || len(m.argv) == 0 {
		return ""
	}
	isPython := func(p string) bool { return strings.HasPrefix(filepath.Base(p), "python") }
	executable := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
	}
	pidDir := filepath.Join(c.cfg.ProcRoot, strconv.Itoa(m.pid))
	arg0 := m.argv[0]
	if isPython(arg0) && strings.Contains(arg0, "/") {
		if !filepath.IsAbs(arg0) {
			if cwd, err := os.Readlink(filepath.Join(pidDir, "cwd")); err == nil {
				arg0 = filepath.Join(cwd, arg0)
			}
		}
		if executable(arg0) {
			return arg0
		}
	}
	var path string
	for _, kv := range c.env {
		if v, ok := strings.CutPrefix(kv, "VIRTUAL_ENV="); ok && executable(filepath.Join(v, "bin", "python3")) {
			return filepath.Join(v, "bin", "python3")
		}
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	if isPython(arg0) && !strings.Contains(arg0, "/") {
		for _, dir := range filepath.SplitList(path) {
			if p := filepath.Join(dir, arg0); filepath.IsAbs(dir) && executable(p) {
				return p
			}
		}
	}
	if exe, err := os.Readlink(filepath.Join(pidDir, "exe")); err == nil && isPython(exe) {
		return exe
	}
	return ""
}

// maxPySpy bounds the dumps: a TP8 server has about a dozen processes.
const maxPySpy = 32

func (c *collector) pySpy(ctx context.Context, dir string) {
	pids := c.target.pids
	if len(pids) > maxPySpy {
		c.note("py-spy dumped %d of the %d server processes", maxPySpy, len(pids))
		pids = pids[:maxPySpy]
	}
	for _, pid := range pids {
		res := c.run(ctx, Cmd{Path: c.cfg.PySpy, Args: []string{"dump", "--pid", strconv.Itoa(pid)}, Timeout: min(c.cfg.Timeout, 20*time.Second)})
		c.record(fmt.Sprintf("%s/pyspy-%d.txt", dir, pid), 0, res, res.Stdout, false, nil)
		// Missing, or refused (a py-spy others can change): the same for
		// every process.
		if res.NotFound || res.Skipped != "" {
			return
		}
	}
}

// logs reads the head and tail of every log, last, so that the log is at
// least as recent as the snapshots.
func (c *collector) logs() {
	// Each log keeps its folders below the one the logs share
	// (logs/a/server.log, logs/b/server.log), and its rotated pieces their
	// names (logs/server.log.1).
	if c.cfg.Cluster != nil {
		return // read on each node (nodeOnce)
	}
	names := logNames(c.cfg.Logs)
	for i, p := range c.cfg.Logs {
		name := "logs/" + names[i]
		start := c.now()
		data, cut, st, err := ReadHeadTail(p, c.cfg.LogHead, c.cfg.LogTail)
		res := Result{Program: "coroner", Command: "read " + p, Start: start, End: c.now(), ExitCode: 0}
		readFailed(&res, err)
		c.record(name, 0, res, data, true, func(a *manifest.Artifact) {
			a.Source = p
			if st != nil {
				a.SourceBytes = st.Size()
				// The file's modification time is when the server last wrote it.
				a.ModTime = st.ModTime().UTC()
			}
			a.Truncated = cut
		})
	}
}

// logNames names the logs in the bundle's logs/ folder: each keeps its
// folders below the one the logs share (a/server.log, b/server.log), and
// its rotated pieces their names (server.log.1).
func logNames(logs []string) []string {
	names := bundle.InputNames(logs)
	for i, p := range logs {
		if names[i] == "" {
			names[i] = path.Base(filepath.ToSlash(p))
		}
	}
	return names
}

// finish orders the files and records deterministically: the records by
// round, then the one-time captures, then the logs, each in the order the
// captures were made; the files by name.
func (c *collector) finish() {
	sort.SliceStable(c.cap.Files, func(i, j int) bool { return c.cap.Files[i].Name < c.cap.Files[j].Name })
	phase := func(k keyed) string {
		key, node := k.key, ""
		if rest, ok := strings.CutPrefix(key, "nodes/"); ok {
			node, key, _ = strings.Cut(rest, "/")
		}
		switch {
		case strings.HasPrefix(k.key, "cluster/"):
			return ""
		case strings.HasPrefix(key, "round-"):
			return node + "\x000" + path.Dir(key)
		case strings.HasPrefix(key, "once/"):
			return node + "\x001"
		}
		return node + "\x002"
	}
	sort.SliceStable(c.arts, func(i, j int) bool {
		if pi, pj := phase(c.arts[i]), phase(c.arts[j]); pi != pj {
			return pi < pj
		}
		return c.arts[i].seq < c.arts[j].seq
	})
	for _, k := range c.arts {
		c.cap.Artifacts = append(c.cap.Artifacts, k.a)
	}
	sort.SliceStable(c.cap.Rounds, func(i, j int) bool {
		if a, b := c.cap.Rounds[i], c.cap.Rounds[j]; !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		return c.cap.Rounds[i].Dir < c.cap.Rounds[j].Dir
	})
	sort.SliceStable(c.cap.Nodes, func(i, j int) bool { return c.cap.Nodes[i].Name < c.cap.Nodes[j].Name })
	c.cap.Summary = c.summarize()
	c.cap.Missing = escape.Text(c.cap.Missing)
}

func (c *collector) host() manifest.Host {
	now := c.now()
	zone, off := now.In(time.Local).Zone()
	h := manifest.Host{Clock: now, Zone: zone, UTCOffsetS: off, TZ: tzName(), BootTime: c.boot, Arch: runtime.GOARCH, Root: os.Geteuid() == 0}
	h.Hostname, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		h.User = u.Username
	}
	if k, err := os.ReadFile(filepath.Join(c.cfg.ProcRoot, "sys/kernel/osrelease")); err == nil {
		h.Kernel = strings.TrimSpace(string(k))
	}
	h.OS = osRelease()
	return h
}

// tzName is the zone's name as the host states it.
func tzName() string {
	if tz := os.Getenv("TZ"); tz != "" {
		return tz
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		return strings.TrimSpace(string(b))
	}
	if l, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(l, "zoneinfo/"); ok {
			return name
		}
	}
	return ""
}

func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// readFailed records a read's error: a refusal (refusedError) as a
// capture skipped, saying why, any other as one that failed.
func readFailed(res *Result, err error) {
	var r *refusedError
	switch {
	case err == nil:
	case errors.As(err, &r):
		res.Skipped, res.ExitCode = err.Error(), -1
	default:
		res.Err, res.ExitCode = err, -1
	}
}

// ErrNotRegular is returned for a log that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")
