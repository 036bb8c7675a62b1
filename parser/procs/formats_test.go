package procs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

const td = "testdata/"

// An 8-GPU SGLang server seen with the recommended ps -eo column set: one
// scheduler per rank (comm cut to "sglang::schedul", rank in args), one in
// D state, a flashinfer JIT (ninja -> sh -> nvcc -> cicc) under TP3, a
// zombie child of the launcher.
func TestSGLangTP8LstartEtimes(t *testing.T) {
	kind, out, issues := parseFile(t, td+"ps_eo_sglang_tp8.txt")
	assert.Equal(t, facts.KindPS, kind)
	assert.Empty(t, issues)
	require.Len(t, out.Procs, 1)
	s := out.Procs[0]
	assert.Equal(t, "eo", s.Format)
	assert.Len(t, s.Procs, 22)
	assert.Equal(t, wall("2025-06-10 09:12:41"), s.At)
	assert.Equal(t, "lstart+etimes", s.AtFrom)
	assert.Equal(t, facts.Clock{NoZone: true, Latest: wall("2025-06-10 09:12:41")}, out.Clocks[td+"ps_eo_sglang_tp8.txt"])

	launcher := findPID(t, s, 20514)
	assert.Equal(t, facts.RoleSGLangLauncher, launcher.Role)
	assert.Equal(t, "Sl+", launcher.Stat)
	assert.Equal(t, 87, launcher.NLWP)
	assert.Equal(t, wall("2025-06-10 08:40:03"), launcher.Start)
	assert.Equal(t, 1958*time.Second, launcher.Elapsed)
	assert.Equal(t, 212*time.Second, launcher.CPUTime)

	scheds := s.ByRole(facts.RoleSGLangScheduler)
	require.Len(t, scheds, 8)
	for i, p := range scheds {
		assert.Equal(t, 20601+i, p.PID)
		assert.Equal(t, 20514, p.PPID)
		assert.Equal(t, "sglang::schedul", p.Comm)
		assert.Equal(t, i, p.Rank.TP)
		assert.Equal(t, -1, p.Rank.DP)
		assert.Equal(t, facts.Rank{DP: -1, PP: -1, CP: -1, MoeDP: -1, TP: i, EP: -1}, p.Rank)
		assert.Equal(t, "TP"+string(rune('0'+i)), p.RankTag)
		assert.Equal(t, 143, p.NLWP)
		assert.Equal(t, int64(125829120), p.VSZKB)
	}
	tp5 := findPID(t, s, 20606)
	assert.Equal(t, byte('D'), tp5.State)
	assert.Equal(t, "Dl", tp5.Stat)
	assert.Equal(t, 1311*time.Second, tp5.CPUTime)
	assert.Equal(t, int64(10290532), tp5.RSSKB)

	detok := findPID(t, s, 20609)
	assert.Equal(t, facts.RoleSGLangDetokenizer, detok.Role)
	assert.Equal(t, "sglang::detoken", detok.Comm)

	z := findPID(t, s, 20650)
	assert.True(t, z.Defunct)
	assert.Equal(t, byte('Z'), z.State)
	assert.Equal(t, "python3", z.Name)

	// The JIT under the TP3 scheduler.
	var chain []string
	for _, d := range s.Descendants(20604) {
		chain = append(chain, d.Name)
	}
	assert.Equal(t, []string{"ninja", "sh", "nvcc", "cicc"}, chain)
	cicc := findPID(t, s, 20716)
	assert.Equal(t, 20712, cicc.PPID)
	assert.Equal(t, byte('R'), cicc.State)
	assert.Equal(t, 139*time.Second, cicc.CPUTime)
	assert.Equal(t, int64(2811440), cicc.RSSKB)
	assert.Equal(t, int64(2969532), cicc.VSZKB)

	kt := findPID(t, s, 1187)
	assert.Equal(t, "nvidia-modeset/", kt.Comm, "comm of exactly 15 bytes")
	assert.Equal(t, "[nvidia-modeset/kthread_q]", kt.Args)
	assert.Equal(t, facts.RoleKernelThread, kt.Role)
	sshd := findPID(t, s, 20380)
	assert.Equal(t, "sshd", sshd.Name)
	assert.Equal(t, "sshd: root@pts/3", sshd.Args)
	assert.Equal(t, facts.RoleShell, findPID(t, s, 20413).Role, "login shell -bash")
}

// `ps aux | grep sglang` of a DP2 x TP8 server with DP attention: no header,
// START an earlier day, TIME in minutes beyond 999, the grep itself.
func TestSGLangGrepHeaderless(t *testing.T) {
	kind, out, issues := parseFile(t, td+"ps_aux_grep_sglang_dp2.txt")
	assert.Equal(t, facts.KindPS, kind)
	assert.Empty(t, issues)
	require.Len(t, out.Procs, 1)
	s := out.Procs[0]
	assert.Equal(t, "aux", s.Format)
	assert.Equal(t, 2, s.Src.Line, "the first row; line 1 is the command")
	require.Len(t, s.Procs, 12)
	tags := []string{}
	for _, p := range s.ByRole(facts.RoleSGLangScheduler) {
		tags = append(tags, p.RankTag)
	}
	assert.Equal(t, []string{"DP0 TP0 EP0", "DP0 TP1 EP1", "DP0 TP2 EP2", "DP0 TP3 EP3",
		"DP1 TP4 EP4", "DP1 TP5 EP5", "DP1 TP6 EP6", "DP1 TP7 EP7"}, tags)
	tp6 := findPID(t, s, 4408)
	assert.Equal(t, facts.Rank{DP: 1, PP: -1, CP: -1, MoeDP: -1, TP: 6, EP: 6}, tp6.Rank)
	assert.Equal(t, 17*time.Minute+2*time.Second, tp6.CPUTime)
	assert.Equal(t, byte('S'), tp6.State)
	tp0 := findPID(t, s, 4402)
	assert.Equal(t, 1234*time.Minute+56*time.Second, tp0.CPUTime)
	assert.Equal(t, "Rl+", tp0.Stat)
	assert.InDelta(t, 99.8, tp0.CPUPct, 1e-9)
	assert.Equal(t, int64(82313412), tp0.RSSKB)
	assert.Equal(t, int64(198347776), tp0.VSZKB)
	assert.Equal(t, "Jun09", tp0.StartRaw)
	assert.Equal(t, "pts/0", tp0.TTY)
	assert.Equal(t, -1, tp0.PPID)
	assert.Equal(t, facts.RoleSGLangDPCtrl, findPID(t, s, 4391).Role)
	assert.Equal(t, facts.RoleSGLangLauncher, findPID(t, s, 4117).Role)
	assert.Equal(t, facts.RoleSGLangDetokenizer, findPID(t, s, 4410).Role)
	g := findPID(t, s, 98213)
	assert.Equal(t, "grep", g.Name)
	assert.Equal(t, facts.RoleOther, g.Role, "grep sglang is not a server")
	assert.Equal(t, "10:02", g.StartRaw)
}

// A ps auxww listing copied from a 100-column terminal: long rows continue on
// the next lines. Each continuation is joined and reported.
func TestWrappedRows(t *testing.T) {
	_, out, issues := parseFile(t, td+"ps_auxww_wrapped_vllm.txt")
	require.Len(t, out.Procs, 1)
	s := out.Procs[0]
	require.Len(t, s.Procs, 9)
	var lines []int
	for _, is := range issues {
		assert.Equal(t, facts.IssueMalformed, is.Kind)
		assert.Contains(t, is.Detail, "wrapped")
		lines = append(lines, is.Src.Line)
	}
	assert.Equal(t, []int{3, 5, 6, 8}, lines)
	assert.Equal(t, "/bin/bash /usr/local/bin/entrypoint.sh", findPID(t, s, 1).Args)
	srv := findPID(t, s, 7)
	assert.Equal(t, "/usr/bin/python3 /usr/local/bin/vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 --max-model-len 32768 --gpu-memory-utilization 0.92 --port 8000", srv.Args)
	assert.Equal(t, facts.RoleVLLMServer, srv.Role, "classified once joined")
	assert.Equal(t, 4, srv.Src.Line)
	ec := findPID(t, s, 187)
	assert.Equal(t, facts.RoleVLLMEngineCore, ec.Role)
	assert.Equal(t, "EngineCore_DP0", ec.RankTag)
	assert.Equal(t, 0, ec.Rank.DP)
	var workers []string
	for _, w := range s.ByRole(facts.RoleVLLMWorker) {
		workers = append(workers, w.RankTag)
		assert.Equal(t, w.PID-301, w.Rank.TP)
	}
	assert.Equal(t, []string{"Worker_TP0", "Worker_TP1", "Worker_TP2", "Worker_TP3"}, workers)
	w2 := findPID(t, s, 303)
	assert.Equal(t, byte('D'), w2.State)
	assert.Equal(t, 49*time.Second, w2.CPUTime)
	assert.InDelta(t, 100, findPID(t, s, 301).CPUPct, 1e-9)
}

// ps -eo ... --forest under LC_TIME=de_DE: lstart with German names ("Di Mär
// 3"), etime and time with days, forest prefixes after a left-aligned STAT.
func TestGermanLstartForest(t *testing.T) {
	_, out, issues := parseFile(t, td+"ps_eo_forest_de_locale.txt")
	assert.Empty(t, issues)
	s := out.Procs[0]
	assert.Equal(t, "eo-forest", s.Format)
	assert.Equal(t, wall("2026-03-04 16:20:00"), s.At)
	assert.Equal(t, "lstart+etimes", s.AtFrom)
	srv := findPID(t, s, 88310)
	assert.Equal(t, wall("2026-03-03 14:05:09"), srv.Start)
	assert.Equal(t, 26*time.Hour+14*time.Minute+51*time.Second, srv.Elapsed)
	assert.Equal(t, 27*time.Hour+5*time.Minute+12*time.Second, srv.CPUTime)
	assert.Equal(t, "kim", srv.User)
	assert.Equal(t, 88152, srv.PPID)
	assert.Equal(t, 4, srv.Depth)
	assert.Equal(t, facts.RoleVLLMServer, srv.Role)
	ec := findPID(t, s, 88502)
	assert.Equal(t, 5, ec.Depth)
	assert.Equal(t, 49*time.Hour, ec.CPUTime)
	assert.Equal(t, "EngineCore", ec.RankTag)
	assert.Equal(t, facts.NoRank, ec.Rank)
	w := findPID(t, s, 88641)
	assert.Equal(t, 6, w.Depth)
	assert.Equal(t, "VLLM::Worker_TP1", w.Args)
	assert.Equal(t, 1, w.Rank.TP)
	assert.Equal(t, 0, findPID(t, s, 1).Depth)
	assert.Equal(t, 1, findPID(t, s, 88120).Depth)
	assert.Equal(t, "sshd: kim [priv]", findPID(t, s, 88120).Args)
	assert.Equal(t, 4, findPID(t, s, 91544).Depth)
}

// A row pushed right of its header (pid 12345678 by two bytes) still yields
// its forest depth; the next row is aligned again.
func TestForestMisaligned(t *testing.T) {
	text := "  PID STAT COMMAND\n" +
		"    1 Ss   /sbin/init\n" +
		"   10 S     \\_ a\n" +
		"12345678 S       \\_ b\n" +
		"   12 S         |   \\_ c\n"
	out := parseAs("f.txt", text, facts.KindPS)
	s := out.Procs[0]
	assert.Equal(t, "eo-forest", s.Format)
	got := map[int][2]int{}
	for _, p := range s.Procs {
		got[p.PID] = [2]int{p.Depth, p.PPID}
	}
	assert.Equal(t, map[int][2]int{1: {0, -1}, 10: {1, 1}, 12345678: {2, 10}, 12: {3, 12345678}}, got)
	assert.Equal(t, "b", s.ByPID(12345678).Args)
}

// The ps -ef lines quoted in vllm-project/vllm#43060 (vLLM-Omni).
func TestPsEfVerbatim(t *testing.T) {
	kind, out, issues := parseFile(t, td+"ps_ef_vllm_omni.txt")
	assert.Equal(t, facts.KindPS, kind)
	assert.Empty(t, issues)
	s := out.Procs[0]
	assert.Equal(t, "ef", s.Format)
	require.Len(t, s.Procs, 4)
	srv := findPID(t, s, 530020)
	assert.Equal(t, 81, srv.PPID)
	assert.InDelta(t, 25, srv.CPUPct, 1e-9)
	assert.Equal(t, "06:14", srv.StartRaw)
	assert.Equal(t, "pts/1", srv.TTY)
	assert.Equal(t, 2*time.Minute+time.Second, srv.CPUTime)
	assert.Equal(t, facts.RoleVLLMServer, srv.Role)
	assert.Equal(t, "May12", findPID(t, s, 1).StartRaw)
	ec := findPID(t, s, 530284)
	assert.Equal(t, facts.RoleVLLMEngineCore, ec.Role)
	assert.Equal(t, "StageEngineCoreProc_DP0", ec.RankTag)
	assert.Equal(t, 0, ec.Rank.DP)
	assert.Equal(t, 110*time.Second, ec.CPUTime)
	assert.Equal(t, facts.RolePython, findPID(t, s, 530283).Role)
	assert.Equal(t, map[string]bool{"user": true, "pid": true, "ppid": true, "c": true, "start": true, "tty": true, "time": true, "args": true}, srv.Has)
	assert.Equal(t, byte(0), srv.State, "-f has no state")
}

// ps -el: numeric UID, nice, priority, SZ and WCHAN, the comm as CMD; cut
// vLLM titles give the role but no rank.
func TestPsLong(t *testing.T) {
	_, out, issues := parseFile(t, td+"ps_el_vllm.txt")
	assert.Empty(t, issues)
	s := out.Procs[0]
	assert.Equal(t, "l", s.Format)
	require.Len(t, s.Procs, 9)
	ec := findPID(t, s, 71990)
	assert.Equal(t, facts.RoleVLLMEngineCore, ec.Role)
	assert.Empty(t, ec.RankTag)
	assert.Equal(t, 30*time.Hour+52*time.Minute+11*time.Second, ec.CPUTime)
	assert.Equal(t, "1000", ec.User)
	assert.Equal(t, "80", ec.Priority)
	w := findPID(t, s, 72115)
	assert.Equal(t, facts.RoleVLLMWorker, w.Role)
	assert.Equal(t, byte('D'), w.State)
	assert.Equal(t, 71990, w.PPID)
	kw := findPID(t, s, 4)
	assert.Equal(t, -20, kw.Nice)
	assert.Equal(t, facts.RoleKernelThread, kw.Role, "child of kthreadd")
	z := findPID(t, s, 72302)
	assert.True(t, z.Defunct)
	assert.Equal(t, "python3", z.Name)
}

func TestBusyBox(t *testing.T) {
	_, out, issues := parseFile(t, td+"ps_busybox.txt")
	assert.Empty(t, issues)
	s := out.Procs[0]
	assert.Equal(t, "busybox", s.Format)
	require.Len(t, s.Procs, 6)
	assert.Equal(t, facts.RoleSGLangLauncher, findPID(t, s, 7).Role)
	sch := findPID(t, s, 88)
	assert.Equal(t, facts.RoleSGLangScheduler, sch.Role)
	assert.Empty(t, sch.RankTag, "single GPU: no rank in the title")
	assert.Equal(t, 51*time.Minute+7*time.Second, sch.CPUTime)
	assert.Equal(t, "tini", findPID(t, s, 1).Name)
}

// `date; ps -eo ...` twice: two snapshots, each timed by its date line, and
// the CPU time each process burned in between.
func TestSeriesWithDateLines(t *testing.T) {
	_, out, issues := parseFile(t, td+"ps_series_date.txt")
	assert.Empty(t, issues)
	require.Len(t, out.Procs, 2)
	a, b := out.Procs[0], out.Procs[1]
	assert.Equal(t, time.Date(2025, 6, 10, 9, 12, 41, 0, time.UTC), a.At)
	assert.Equal(t, td+"ps_series_date.txt:1", a.AtFrom[len("date line "):])
	assert.Equal(t, 2, a.Src.Line)
	assert.Equal(t, 9, b.Src.Line)
	assert.Equal(t, time.Date(2025, 6, 10, 9, 12, 56, 0, time.UTC), b.At)
	assert.Empty(t, out.Clocks, "the date lines say UTC")
	d := map[int]facts.ProcDelta{}
	for _, x := range facts.Deltas(a, b) {
		d[x.PID] = x
	}
	require.Len(t, d, 5)
	assert.Equal(t, 15*time.Second, d[20601].CPU, "TP0 busy the whole 15 s")
	assert.Equal(t, time.Duration(0), d[20602].CPU, "TP1 stuck in D")
	assert.Equal(t, byte('D'), d[20602].After.State)
	assert.Equal(t, 15*time.Second, d[20602].Wall)
	assert.False(t, d[20602].StateChanged)
}

func TestTopProcps3(t *testing.T) {
	kind, out, issues := parseFile(t, td+"top_procps3_vllm.txt")
	assert.Equal(t, facts.KindTop, kind)
	assert.Empty(t, issues)
	s := out.Procs[0]
	assert.Equal(t, "09:41:17", s.TimeOfDay)
	assert.Equal(t, 10*24*time.Hour+3*time.Hour+2*time.Minute, s.Uptime)
	assert.Equal(t, 2, s.Users)
	assert.Equal(t, [3]float64{12.31, 11.87, 10.02}, s.LoadAvg)
	assert.Equal(t, &facts.TaskCounts{Total: 612, Running: 5, Sleeping: 606, DSleep: -1, Zombie: 1}, s.Tasks)
	assert.Equal(t, &facts.CPUSummary{User: 14.2, System: 2.1, Idle: 83.4, IOWait: 0.2, SoftIRQ: 0.1}, s.CPU)
	// "26405860+total": top cut the number to fit; it is not read.
	assert.Equal(t, &facts.MemSummary{TotalKB: -1, FreeKB: -1, UsedKB: 98765432, BuffCacheKB: 65059072, AvailKB: -1,
		SwapTotalKB: 8388604, SwapFreeKB: 8388604, SwapUsedKB: 0}, s.Mem)
	require.Len(t, s.Procs, 13)
	w := findPID(t, s, 23117)
	assert.Equal(t, facts.RoleVLLMWorker, w.Role)
	assert.Equal(t, "VLLM::Worker_TP", w.Name)
	assert.Equal(t, 521*time.Minute+7330*time.Millisecond, w.CPUTime)
	assert.Equal(t, int64(23488102), w.RSSKB, "22.4g")
	assert.Equal(t, int64(1153434), w.SHRKB, "1.1g")
	assert.Equal(t, byte('D'), findPID(t, s, 23119).State)
	assert.Equal(t, facts.RoleVLLMEngineCore, findPID(t, s, 23004).Role)
	assert.Equal(t, int64(612340), findPID(t, s, 23004).SHRKB)
	z := findPID(t, s, 23311)
	assert.True(t, z.Defunct)
	assert.NotEqual(t, facts.RoleKernelThread, z.Role)
	assert.Equal(t, "-51", findPID(t, s, 641).Priority)
	assert.Equal(t, facts.RoleKernelThread, findPID(t, s, 641).Role)
	assert.Equal(t, 19, findPID(t, s, 1893).Nice)
}

// top -b -n 2 -c of procps 4.0.5+: d-sleep counted apart, GiB units, full
// command lines, two frames.
func TestTopProcps4TwoFrames(t *testing.T) {
	_, out, issues := parseFile(t, td+"top_procps4_sglang_n2.txt")
	assert.Empty(t, issues)
	require.Len(t, out.Procs, 2)
	a, b := out.Procs[0], out.Procs[1]
	assert.Equal(t, 1, a.Src.Line)
	assert.Equal(t, 16, b.Src.Line)
	assert.Equal(t, "11:02:45", a.TimeOfDay)
	assert.Equal(t, "11:02:48", b.TimeOfDay)
	assert.Equal(t, 26*time.Hour+13*time.Minute, a.Uptime)
	assert.Equal(t, &facts.TaskCounts{Total: 402, Running: 9, Sleeping: 388, DSleep: 1, Zombie: 4}, a.Tasks)
	assert.Equal(t, int64(2015.5*1024*1024), a.Mem.TotalKB)
	assert.Equal(t, int64(1926.5*1024*1024), a.Mem.AvailKB)
	require.Len(t, a.Procs, 7)
	require.Len(t, b.Procs, 7)
	tp2 := findPID(t, a, 310424)
	assert.Equal(t, "TP2", tp2.RankTag)
	assert.Equal(t, byte('D'), tp2.State)
	assert.Equal(t, facts.RoleSGLangLauncher, findPID(t, a, 310301).Role)
	assert.Equal(t, facts.RoleKernelThread, findPID(t, a, 2).Role)
	d := map[int]facts.ProcDelta{}
	for _, x := range facts.Deltas(a, b) {
		d[x.PID] = x
	}
	assert.Equal(t, 3010*time.Millisecond, d[310422].CPU, "95:12.40 -> 95:15.41")
	assert.Equal(t, time.Duration(0), d[310424].CPU)
}

// Rows with unreadable or missing values keep what could be read; every
// problem is an issue on its line.
func TestBadRows(t *testing.T) {
	_, out, issues := parseFile(t, td+"ps_aux_bad.txt")
	s := out.Procs[0]
	require.Len(t, s.Procs, 5)
	type iss struct {
		line   int
		kind   facts.IssueKind
		detail string
	}
	var got []iss
	for _, is := range issues {
		got = append(got, iss{is.Src.Line, is.Kind, is.Detail})
	}
	assert.Equal(t, []iss{
		{3, facts.IssueMalformed, `row of pid 4117: unreadable pcpu "x.y"`},
		{4, facts.IssueMalformed, `row of pid 4402: unreadable stat "Ql+"`},
		{5, facts.IssueMalformed, "row of pid 4403 ends early: no value for vsz, rss, tty, stat, start, time, args; kept the columns before"},
		{6, facts.IssueMalformed, `not a row of the aux table: "Segmentation fault (core dumped)"`},
		{7, facts.IssueMalformed, `row of pid 4404: unreadable time "1234:5x"`},
	}, got)
	p := findPID(t, s, 4117)
	assert.Equal(t, 0.0, p.CPUPct)
	assert.InDelta(t, 0.4, p.MemPct, 1e-9)
	assert.Equal(t, facts.RoleSGLangLauncher, p.Role)
	q := findPID(t, s, 4402)
	assert.Equal(t, "Ql+", q.Stat)
	assert.Equal(t, byte(0), q.State)
	short := findPID(t, s, 4403)
	assert.InDelta(t, 3.9, short.MemPct, 1e-9)
	assert.Empty(t, short.Args)
	de := findPID(t, s, 4404)
	assert.Equal(t, "Mar05", de.StartRaw, "German month written in English")
	assert.Equal(t, facts.RoleSGLangScheduler, de.Role)
}

// procps prints garbage etimes for a process born while ps runs (seen on a
// real collect: 4123168608 s); the row stays, with its age unknown.
func TestGarbageEtimesKeepsRow(t *testing.T) {
	text := "    PID    PPID                  STARTED ELAPSED     TIME   RSS    VSZ STAT NLWP COMMAND         COMMAND\n" +
		"      1       0 Mon Nov 30 04:10:01 2026    1200        3 12928 167740 Ss      1 init            /sbin/init\n" +
		"   3642       1 Mon Nov 30 04:30:01 2026 4123168608     0  3600  10172 R+      1 ps              ps -eo pid\n"
	out := parseAs("ps_eo.txt", text, facts.KindPS)
	assert.Empty(t, issuesOf("ps_eo.txt", text, facts.KindPS))
	require.Len(t, out.Procs, 1)
	s := out.Procs[0]
	require.Len(t, s.Procs, 2)
	assert.Equal(t, time.Duration(0), findPID(t, s, 3642).Elapsed)
	assert.Equal(t, 1200*time.Second, findPID(t, s, 1).Elapsed)
}
