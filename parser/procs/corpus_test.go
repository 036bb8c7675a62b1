package procs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// parseFile sniffs and parses a file the way the bundle reader does.
func parseFile(t testing.TB, path string) (facts.Kind, *facts.Facts, []facts.Issue) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	head := b[:min(len(b), 8<<10)]
	kind, score := Sniff(filepath.Base(path), head)
	require.NotZero(t, score, "%s not recognized", path)
	return kind, parseAs(path, string(b), kind), issuesOf(path, string(b), kind)
}

func parseAs(path, text string, kind facts.Kind) *facts.Facts {
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(textio.Lines(path, text), kind, out)
	return out
}

func issuesOf(path, text string, kind facts.Kind) []facts.Issue {
	var got []facts.Issue
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	in := textio.NewInput(path, strings.NewReader(text), 0, func(is facts.Issue) { got = append(got, is) })
	Parse(in, kind, out)
	return got
}

func wall(s string) time.Time {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t
}

const x2 = "../../fixtures/corpus/h200-x2/"
const x1 = "../../fixtures/corpus/h200-x1/"

// Every ps and top file of the two-GPU corpus is detected with its kind and
// parses without a single issue.
func TestCorpusDetectAndParseClean(t *testing.T) {
	var files []string
	for _, pat := range []string{x2 + "*/ps_*.txt", x2 + "*/*/ps_*.txt", x2 + "*/top.txt", x2 + "*/*/top.txt",
		x1 + "*/*/ps_*.txt"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Len(t, files, 16+12, "h200-x2: 4 captures x (aux, auxf, eo, top); h200-x1: 4 captures x (aux, auxf, eo)")
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, "../../fixtures/corpus/"), func(t *testing.T) {
			kind, out, issues := parseFile(t, f)
			want := facts.KindPS
			if filepath.Base(f) == "top.txt" {
				want = facts.KindTop
			}
			assert.Equal(t, want, kind)
			assert.Empty(t, issues)
			require.Len(t, out.Procs, 1)
			s := out.Procs[0]
			assert.Greater(t, len(s.Procs), 150, "every row of the snapshot")
			wantFormat := map[string]string{"ps_aux.txt": "aux", "ps_auxf.txt": "auxf", "ps_eo.txt": "eo", "top.txt": "top"}[filepath.Base(f)]
			assert.Equal(t, wantFormat, s.Format)
			for _, p := range s.Procs {
				assert.Positive(t, p.PID)
				assert.NotEmpty(t, p.Args, "line %d", p.Src.Line)
				assert.NotZero(t, p.State, "line %d", p.Src.Line)
			}
		})
	}
}

// findPID returns the process or fails.
func findPID(t *testing.T, s *facts.ProcSnapshot, pid int) *facts.Process {
	t.Helper()
	p := s.ByPID(pid)
	require.NotNil(t, p, "pid %d", pid)
	return p
}

type wantProc struct {
	pid, ppid int
	state     byte
	stat      string
	cpu       time.Duration
	rssKB     int64
	name      string
	role      facts.Role
	line      int
}

func checkProcs(t *testing.T, s *facts.ProcSnapshot, want []wantProc) {
	t.Helper()
	for _, w := range want {
		p := findPID(t, s, w.pid)
		assert.Equal(t, w.ppid, p.PPID, "ppid of %d", w.pid)
		assert.Equal(t, string(w.state), string(p.State), "state of %d", w.pid)
		if w.stat != "" {
			assert.Equal(t, w.stat, p.Stat, "stat of %d", w.pid)
		}
		assert.Equal(t, w.cpu, p.CPUTime, "cpu of %d", w.pid)
		assert.Equal(t, w.rssKB, p.RSSKB, "rss of %d", w.pid)
		assert.Equal(t, w.name, p.Name, "name of %d", w.pid)
		assert.Equal(t, w.role, p.Role, "role of %d", w.pid)
		if w.line > 0 {
			assert.Equal(t, w.line, p.Src.Line, "line of %d", w.pid)
		}
	}
}

// The JIT compile at t12: python -> ninja -> sh -> nvcc -> sh -> cudafe++,
// and ninja -> sh -> g++-real -> cc1plus, from the PPID column of ps -eo.
func TestCorpusJITTreeT12FromPPID(t *testing.T) {
	_, out, _ := parseFile(t, x2+"jit-compile/t12/ps_eo.txt")
	s := out.Procs[0]
	checkProcs(t, s, []wantProc{
		{pid: 924, ppid: 923, state: 'S', stat: "Sl", cpu: 8 * time.Second, rssKB: 517776, name: "python3", role: facts.RolePython},
		{pid: 969, ppid: 924, state: 'S', stat: "S", cpu: 0, rssKB: 4240, name: "ninja", role: facts.RoleBuildTool},
		{pid: 970, ppid: 969, state: 'S', cpu: 0, rssKB: 1984, name: "sh", role: facts.RoleShell},
		{pid: 971, ppid: 969, state: 'S', cpu: 0, rssKB: 1980, name: "sh", role: facts.RoleShell},
		{pid: 972, ppid: 970, state: 'S', cpu: 0, rssKB: 3196, name: "g++-real", role: facts.RoleCompiler},
		{pid: 973, ppid: 971, state: 'S', cpu: 0, rssKB: 4752, name: "nvcc", role: facts.RoleCompiler},
		{pid: 974, ppid: 972, state: 'R', stat: "R", cpu: 7 * time.Second, rssKB: 808376, name: "cc1plus", role: facts.RoleCompiler},
		{pid: 983, ppid: 973, state: 'S', cpu: 0, rssKB: 1984, name: "sh", role: facts.RoleShell},
		{pid: 984, ppid: 983, state: 'R', stat: "R", cpu: 3 * time.Second, rssKB: 945644, name: "cudafe++", role: facts.RoleCompiler},
	})
	// The compilers hang under the Python process.
	var names []string
	for _, d := range s.Descendants(924) {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"ninja", "sh", "g++-real", "cc1plus", "sh", "nvcc", "sh", "cudafe++"}, names)
	var anc []int
	for _, a := range s.Ancestors(984) {
		anc = append(anc, a.PID)
	}
	assert.Equal(t, []int{983, 973, 971, 969, 924, 923, 921, 553, 552, 551, 547, 1}, anc)

	py := findPID(t, s, 924)
	assert.Equal(t, int64(21462344), py.VSZKB, "VSZ overflowing its column")
	assert.Equal(t, 33, py.NLWP)
	assert.Equal(t, "python3", py.Comm)
	assert.Equal(t, "python3 /srv/repro/jit_compile.py", py.Args)
	assert.Equal(t, wall("2026-11-30 04:27:08"), py.Start)
	assert.Equal(t, 12*time.Second, py.Elapsed)
	assert.Equal(t, -1, py.Depth)

	k := findPID(t, s, 961)
	assert.Equal(t, "vidmem lazy fre", k.Comm, "comm with spaces")
	assert.Equal(t, "[vidmem lazy free]", k.Args)
	assert.Equal(t, facts.RoleKernelThread, k.Role)
	init := findPID(t, s, 1)
	assert.Equal(t, "init", init.Comm, "pid 1's comm is padded short")
	assert.Equal(t, "/sbin/init", init.Args)
	assert.Equal(t, 0, init.PPID)

	// lstart + etimes of every row agree on the snapshot time.
	assert.Equal(t, wall("2026-11-30 04:27:20"), s.At)
	assert.Equal(t, "lstart+etimes", s.AtFrom)
	assert.Equal(t, facts.Clock{NoZone: true, Latest: wall("2026-11-30 04:27:20")}, out.Clocks[x2+"jit-compile/t12/ps_eo.txt"])
	assert.Equal(t, []string{"etime", "lstart", "nlwp", "pid", "ppid", "rss", "start", "stat", "time", "vsz", "comm", "args"},
		hasKeys(py.Has, "etime", "lstart", "nlwp", "pid", "ppid", "rss", "start", "stat", "time", "vsz", "comm", "args", "user", "pcpu"))
}

func hasKeys(has map[string]bool, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if has[k] {
			out = append(out, k)
		}
	}
	return out
}

// The same tree from the forest of ps auxf, which has no PPID column.
func TestCorpusJITTreeT12FromForest(t *testing.T) {
	_, out, _ := parseFile(t, x2+"jit-compile/t12/ps_auxf.txt")
	s := out.Procs[0]
	checkProcs(t, s, []wantProc{
		{pid: 924, ppid: 923, state: 'S', stat: "Sl", cpu: 8 * time.Second, rssKB: 517776, name: "python3", role: facts.RolePython, line: 299},
		{pid: 969, ppid: 924, state: 'S', cpu: 0, rssKB: 4240, name: "ninja", role: facts.RoleBuildTool, line: 300},
		{pid: 970, ppid: 969, state: 'S', cpu: 0, rssKB: 1984, name: "sh", role: facts.RoleShell},
		{pid: 972, ppid: 970, state: 'S', cpu: 0, rssKB: 3196, name: "g++-real", role: facts.RoleCompiler},
		{pid: 974, ppid: 972, state: 'R', cpu: 7 * time.Second, rssKB: 806368, name: "cc1plus", role: facts.RoleCompiler},
		{pid: 971, ppid: 969, state: 'S', cpu: 0, rssKB: 1980, name: "sh", role: facts.RoleShell},
		{pid: 973, ppid: 971, state: 'S', cpu: 0, rssKB: 4752, name: "nvcc", role: facts.RoleCompiler},
		{pid: 983, ppid: 973, state: 'S', cpu: 0, rssKB: 1984, name: "sh", role: facts.RoleShell},
		{pid: 984, ppid: 983, state: 'R', stat: "R", cpu: 3 * time.Second, rssKB: 944096, name: "cudafe++", role: facts.RoleCompiler, line: 307},
		// Kernel threads hang under kthreadd; before procps 4.0.6 the
		// forest does not nest under pid 1, so bash is a root.
		{pid: 3, ppid: 2, state: 'S', cpu: 0, rssKB: 0, name: "pool_workqueue_release", role: facts.RoleKernelThread},
		{pid: 547, ppid: -1, state: 'S', cpu: 0, rssKB: 4024, name: "bash", role: facts.RoleShell},
		{pid: 1, ppid: -1, state: 'S', stat: "SLl", cpu: time.Second, rssKB: 6568, name: "init", role: facts.RoleOther},
	})
	assert.Equal(t, 7, findPID(t, s, 969).Depth)
	assert.Equal(t, 11, findPID(t, s, 984).Depth)
	assert.Equal(t, 0, findPID(t, s, 2).Depth)
	assert.Equal(t, "cudafe++ --c++17", findPID(t, s, 984).Args[:16], "forest prefix stripped")
	cc := findPID(t, s, 974)
	assert.InDelta(t, 96.5, cc.CPUPct, 1e-9)
	assert.InDelta(t, 0.3, cc.MemPct, 1e-9)
	assert.Equal(t, int64(925780), cc.VSZKB)
	assert.Equal(t, "04:27", cc.StartRaw)
	assert.Equal(t, "?", cc.TTY)
	assert.Equal(t, "root", cc.User)
	assert.True(t, s.At.IsZero(), "ps aux has no time of its own")
	assert.Empty(t, out.Clocks)
}

// At t27 the CUDA front end cicc runs under nvcc, in both listings.
func TestCorpusJITTreeT27(t *testing.T) {
	for _, f := range []string{"ps_eo.txt", "ps_auxf.txt"} {
		t.Run(f, func(t *testing.T) {
			_, out, _ := parseFile(t, x2+"jit-compile/t27/"+f)
			s := out.Procs[0]
			rss := map[string]int64{"ps_eo.txt": 668432, "ps_auxf.txt": 666044}[f]
			checkProcs(t, s, []wantProc{
				{pid: 969, ppid: 924, state: 'S', cpu: 0, rssKB: 4316, name: "ninja", role: facts.RoleBuildTool},
				{pid: 971, ppid: 969, state: 'S', cpu: 0, rssKB: 1980, name: "sh", role: facts.RoleShell},
				{pid: 973, ppid: 971, state: 'S', cpu: 0, rssKB: 4752, name: "nvcc", role: facts.RoleCompiler},
				{pid: 1015, ppid: 973, state: 'S', cpu: 0, rssKB: 1984, name: "sh", role: facts.RoleShell},
				{pid: 1016, ppid: 1015, state: 'R', stat: "R", cpu: 2 * time.Second, rssKB: rss, name: "cicc", role: facts.RoleCompiler},
			})
			compilers := s.Filter(func(p *facts.Process) bool { return p.Role.IsCompile() })
			var pids []int
			for _, p := range compilers {
				pids = append(pids, p.PID)
			}
			assert.ElementsMatch(t, []int{969, 973, 1016}, pids)
		})
	}
	_, out, _ := parseFile(t, x2+"jit-compile/t27/ps_eo.txt")
	// ps itself started in the snapshot second; init's row says a second
	// less (its start is truncated): the later one is the tighter bound.
	assert.Equal(t, wall("2026-11-30 04:27:37"), out.Procs[0].At)
}

// Two snapshots of the same processes: the python process burned no CPU
// between t12 and t27 while cc1plus finished and cicc took over.
func TestCorpusDeltasT12T27(t *testing.T) {
	_, a, _ := parseFile(t, x2+"jit-compile/t12/ps_eo.txt")
	_, b, _ := parseFile(t, x2+"jit-compile/t27/ps_eo.txt")
	ds := facts.Deltas(a.Procs[0], b.Procs[0])
	byPID := map[int]facts.ProcDelta{}
	for _, d := range ds {
		byPID[d.PID] = d
	}
	require.Contains(t, byPID, 924)
	assert.Equal(t, time.Duration(0), byPID[924].CPU)
	assert.Equal(t, 17*time.Second, byPID[924].Wall)
	assert.False(t, byPID[924].StateChanged)
	assert.NotContains(t, byPID, 974, "cc1plus is gone at t27")
	assert.NotContains(t, byPID, 1016, "cicc is new at t27")
	require.Contains(t, byPID, 969)
	assert.Equal(t, "ninja", byPID[969].After.Name)
}

func TestCorpusTopJIT(t *testing.T) {
	_, out, _ := parseFile(t, x2+"jit-compile/t12/top.txt")
	s := out.Procs[0]
	assert.Equal(t, "top", s.Format)
	assert.Equal(t, "04:27:21", s.TimeOfDay)
	assert.True(t, s.At.IsZero())
	assert.Equal(t, 3*time.Minute, s.Uptime)
	assert.Equal(t, 0, s.Users)
	assert.Equal(t, [3]float64{1.16, 0.53, 0.21}, s.LoadAvg)
	assert.Equal(t, &facts.TaskCounts{Total: 308, Running: 3, Sleeping: 305, DSleep: -1}, s.Tasks)
	assert.Equal(t, &facts.CPUSummary{User: 5.6, System: 0.9, Idle: 93.5}, s.CPU)
	assert.Equal(t, &facts.MemSummary{TotalKB: 263998464, FreeKB: 258942874, UsedKB: 2840678, BuffCacheKB: 2465075,
		AvailKB: 261157786, SwapTotalKB: 0, SwapFreeKB: 0, SwapUsedKB: 0}, s.Mem)
	require.Len(t, s.Procs, 308)
	cf := s.Procs[0]
	assert.Equal(t, 984, cf.PID)
	assert.Equal(t, 8, cf.Src.Line)
	assert.Equal(t, "cudafe++", cf.Name)
	assert.Equal(t, facts.RoleCompiler, cf.Role)
	assert.Equal(t, byte('R'), cf.State)
	assert.InDelta(t, 100.0, cf.CPUPct, 1e-9)
	assert.Equal(t, 4210*time.Millisecond, cf.CPUTime)
	assert.Equal(t, int64(976700), cf.RSSKB)
	assert.Equal(t, int64(982824), cf.VSZKB)
	assert.Equal(t, int64(8492), cf.SHRKB)
	assert.Equal(t, "20", cf.Priority)
	assert.Equal(t, -1, cf.PPID)
	py := findPID(t, s, 924)
	assert.Equal(t, int64(20.5*1024*1024), py.VSZKB, "VIRT 20.5g")
	assert.Equal(t, 8160*time.Millisecond, py.CPUTime)
	kw := findPID(t, s, 4)
	assert.Equal(t, -20, kw.Nice)
	assert.Equal(t, "0", kw.Priority)
	assert.Equal(t, facts.RoleKernelThread, kw.Role)
	assert.Equal(t, "rt", findPID(t, s, 18).Priority)

	_, out27, _ := parseFile(t, x2+"jit-compile/t27/top.txt")
	cicc := out27.Procs[0].Procs[0]
	assert.Equal(t, 1016, cicc.PID)
	assert.Equal(t, "cicc", cicc.Name)
	assert.Equal(t, 2950*time.Millisecond, cicc.CPUTime)
	assert.Equal(t, int64(711684), cicc.RSSKB)
}

func TestCorpusIdleAndOOM(t *testing.T) {
	_, idle, _ := parseFile(t, x2+"00-idle/top.txt")
	s := idle.Procs[0]
	assert.Equal(t, "04:24:38", s.TimeOfDay)
	assert.Equal(t, time.Duration(0), s.Uptime, "up 0 min")
	assert.Equal(t, &facts.CPUSummary{Idle: 100}, s.CPU, "\"ni,100.0 id\" without a space")

	_, oom, _ := parseFile(t, x2+"oom/t20/ps_eo.txt")
	checkProcs(t, oom.Procs[0], []wantProc{
		{pid: 1069, ppid: 1068, state: 'S', stat: "Sl", cpu: 8 * time.Second, rssKB: 621676, name: "python3", role: facts.RolePython},
	})
	assert.Equal(t, int64(160977608), oom.Procs[0].ByPID(1069).VSZKB)
}

// The torch.compile capture: inductor compile workers under the Python
// process, ptxas under the workers and under Python (triton).
func TestCorpusTorchCompileWorkers(t *testing.T) {
	for _, f := range []string{"ps_eo.txt", "ps_auxf.txt", "ps_aux.txt"} {
		t.Run(f, func(t *testing.T) {
			_, out, issues := parseFile(t, x1+"torch-compile/t30/"+f)
			assert.Empty(t, issues)
			s := out.Procs[0]
			workers := s.ByRole(facts.RoleCompileWorker)
			assert.Len(t, workers, 17)
			ptxas := s.Filter(func(p *facts.Process) bool { return p.Name == "ptxas" })
			assert.NotEmpty(t, ptxas)
			for _, p := range ptxas {
				assert.Equal(t, facts.RoleCompiler, p.Role)
			}
			if f == "ps_aux.txt" {
				return
			}
			assert.Equal(t, 423, findPID(t, s, 462).PPID)
			assert.Equal(t, facts.RoleCompileWorker, findPID(t, s, 462).Role)
			assert.Equal(t, 462, findPID(t, s, 588).PPID)
			assert.Equal(t, 588, findPID(t, s, 801).PPID)
			assert.Equal(t, 423, findPID(t, s, 543).PPID)
			assert.Equal(t, "ptxas", findPID(t, s, 543).Name)
		})
	}
}

func TestCorpusDefunct(t *testing.T) {
	for _, f := range []string{"ps_eo.txt", "ps_auxf.txt", "ps_aux.txt"} {
		t.Run(f, func(t *testing.T) {
			_, out, _ := parseFile(t, x1+"defunct/t5/"+f)
			p := findPID(t, out.Procs[0], 1339)
			assert.True(t, p.Defunct)
			assert.Equal(t, byte('Z'), p.State)
			assert.Equal(t, "python3", p.Name)
			assert.Equal(t, facts.RolePython, p.Role)
			assert.Equal(t, "[python3] <defunct>", p.Args)
			if f != "ps_aux.txt" {
				assert.Equal(t, 1336, p.PPID)
			}
		})
	}
	_, out, _ := parseFile(t, x1+"cgroup-oom/t2/ps_eo.txt")
	checkProcs(t, out.Procs[0], []wantProc{
		{pid: 1320, ppid: 1319, state: 'S', stat: "S", cpu: 0, rssKB: 1588836, name: "python3", role: facts.RolePython},
	})
	assert.Equal(t, wall("2026-11-30 04:57:30"), out.Procs[0].At)
}
