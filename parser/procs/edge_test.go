package procs

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

const eoHeader = "  PID  PPID                  STARTED ELAPSED     TIME STAT COMMAND\n"

// A row whose start + elapsed disagrees with the others (the wall clock was
// stepped after it started) is outvoted and reported.
func TestClockJump(t *testing.T) {
	text := eoHeader +
		"    1     0 Mon Nov 30 04:24:04 2026     196        1 Ss   /sbin/init\n" +
		"  547     1 Mon Nov 30 04:22:29 2026     171        0 S    bash -c /srv/repro/run.sh\n" +
		"  924   547 Mon Nov 30 04:27:08 2026      12        8 Sl   python3 x.py\n"
	out := parseAs("j.txt", text, facts.KindPS)
	s := out.Procs[0]
	assert.Equal(t, wall("2026-11-30 04:27:20"), s.At)
	is := issuesOf("j.txt", text, facts.KindPS)
	require.Len(t, is, 1)
	assert.Equal(t, facts.IssueClockJump, is[0].Kind)
	assert.Equal(t, 1, is[0].Src.Line)
	assert.Contains(t, is[0].Detail, "1 of 3 rows disagree")
	assert.Equal(t, wall("2026-11-30 04:22:29"), s.ByPID(547).Start, "the row keeps its own start")
}

// ps -ef | grep vllm: no header, -f shaped rows.
func TestHeaderlessEf(t *testing.T) {
	text := "root      530020      81 25 06:14 pts/1    00:02:01 python3 -m vllm.entrypoints.openai.api_server --model m\n" +
		"root      530284  530020 23 06:15 pts/1    00:01:50 VLLM::EngineCore_DP0\n" +
		"root      531001  529998  0 06:20 pts/2    00:00:00 grep --color=auto vllm\n"
	kind, score := Sniff("grep.txt", []byte(text))
	assert.Equal(t, facts.KindPS, kind)
	assert.Equal(t, 45, score)
	out := parseAs("grep.txt", text, kind)
	assert.Empty(t, issuesOf("grep.txt", text, kind))
	require.Len(t, out.Procs, 1)
	s := out.Procs[0]
	assert.Equal(t, "ef", s.Format)
	require.Len(t, s.Procs, 3)
	ec := s.ByPID(530284)
	assert.Equal(t, 530020, ec.PPID)
	assert.Equal(t, "EngineCore_DP0", ec.RankTag)
	assert.Equal(t, 110*time.Second, ec.CPUTime)
	assert.Equal(t, facts.RoleVLLMServer, s.ByPID(530020).Role)
	assert.Equal(t, []*facts.Process{ec}, s.Children(530020))
}

// A pid reused by another program between two snapshots is not paired.
func TestDeltasPIDReuse(t *testing.T) {
	a := parseAs("a.txt", eoHeader+
		"  924   547 Mon Nov 30 04:27:08 2026      12        8 Sl   python3 x.py\n"+
		"  969   924 Mon Nov 30 04:27:13 2026       7        0 S    ninja -v\n", facts.KindPS).Procs[0]
	b := parseAs("b.txt", eoHeader+
		"  924   547 Mon Nov 30 04:27:08 2026      32       20 Rl   python3 x.py\n"+
		"  969   924 Mon Nov 30 04:27:39 2026       1        0 S    cicc --c++17\n", facts.KindPS).Procs[0]
	ds := facts.Deltas(a, b)
	require.Len(t, ds, 1)
	assert.Equal(t, 924, ds[0].PID)
	assert.Equal(t, 12*time.Second, ds[0].CPU)
	assert.Equal(t, 20*time.Second, ds[0].Wall)
	assert.True(t, ds[0].StateChanged)
	assert.False(t, facts.SameProcess(a.ByPID(969), b.ByPID(969)))
}

// Lines of invalid UTF-8 keep their text with replacement characters.
func TestInvalidUTF8(t *testing.T) {
	text := eoHeader + "  924   547 Mon Nov 30 04:27:08 2026      12        8 Sl   python3 caf\xe9.py\n"
	s := parseAs("u.txt", text, facts.KindPS).Procs[0]
	assert.Equal(t, "python3 caf\uFFFD.py", s.ByPID(924).Args)
}

// A file of junk does not bury the report: 50 issues one by one, then one
// that counts the rest.
func TestIssueCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND\n")
	for i := range 80 {
		fmt.Fprintf(&b, "junk line %d\n", i)
	}
	is := issuesOf("junk.txt", b.String(), facts.KindPS)
	require.Len(t, is, 51)
	assert.Equal(t, 51, is[49].Src.Line)
	assert.Equal(t, "30 more unreadable lines after this one were not listed one by one", is[50].Detail)
	assert.Equal(t, 51, is[50].Src.Line)
}

// Command echoes and unknown lines around the table.
func TestPromptsAndJunk(t *testing.T) {
	text := "# ps aux\n" +
		"USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n" +
		"root         1  0.5  0.0  93140  6568 ?        SLl  04:24   0:01 /sbin/init\n" +
		"$ top -b -n1\n" +
		"top - 04:27:21 up 3 min,  0 user,  load average: 1.16, 0.53, 0.21\n" +
		"Something top never prints\n" +
		"\n" +
		"  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n" +
		"    1 root      20   0   93140   6568   5568 S   0.0   0.0   0:01.11 init\n"
	out := parseAs("mix.txt", text, facts.KindPS)
	require.Len(t, out.Procs, 2)
	assert.Equal(t, "aux", out.Procs[0].Format)
	assert.Len(t, out.Procs[0].Procs, 1)
	assert.Equal(t, "top", out.Procs[1].Format)
	assert.Len(t, out.Procs[1].Procs, 1)
	is := issuesOf("mix.txt", text, facts.KindPS)
	require.Len(t, is, 1)
	assert.Equal(t, 6, is[0].Src.Line)
	assert.Equal(t, facts.IssueUnrecognized, is[0].Kind)

	is = issuesOf("j.txt", "hello world\n", facts.KindPS)
	require.Len(t, is, 1)
	assert.Equal(t, `not a ps or top line before any header: "hello world"`, is[0].Detail)
}

// top under LC_NUMERIC=de_DE prints decimal commas everywhere.
func TestTopDecimalComma(t *testing.T) {
	text := "top - 04:27:21 up 10 days, 47 min,  3 users,  load average: 1,16, 0,53, 0,21\n" +
		"Tasks: 308 total,   3 running, 305 sleeping,   0 stopped,   0 zombie\n" +
		"%Cpu(s):  5,6 us,  0,9 sy,  0,0 ni, 93,5 id,  0,0 wa,  0,0 hi,  0,0 si,  0,0 st\n" +
		"MiB Mem : 257811,0 total, 252873,9 free,   2774,1 used,   2407,3 buff/cache\n" +
		"MiB Swap:      0,0 total,      0,0 free,      0,0 used. 255036,9 avail Mem\n" +
		"\n" +
		"  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n" +
		"  984 root      20   0  982824 976700   8492 R 100,0   0,4   0:04.21 cudafe++\n"
	out := parseAs("top.txt", text, facts.KindTop)
	assert.Empty(t, issuesOf("top.txt", text, facts.KindTop))
	s := out.Procs[0]
	assert.Equal(t, [3]float64{1.16, 0.53, 0.21}, s.LoadAvg)
	assert.Equal(t, 10*24*time.Hour+47*time.Minute, s.Uptime)
	assert.Equal(t, 3, s.Users)
	assert.Equal(t, 93.5, s.CPU.Idle)
	assert.Equal(t, int64(263998464), s.Mem.TotalKB)
	assert.Equal(t, 100.0, s.Procs[0].CPUPct)
	assert.Equal(t, 0.4, s.Procs[0].MemPct)
}

// procps 3.2's top: "Mem:" with k suffixes, buffers, and cached on the Swap
// line; "Cpu(s):" with percent signs.
func TestTopProcps32(t *testing.T) {
	text := "top - 15:09:26 up 10 days,  3:02,  1 user,  load average: 0.00, 0.01, 0.05\n" +
		"Tasks: 300 total,   1 running, 299 sleeping,   0 stopped,   0 zombie\n" +
		"Cpu(s):  0.3%us,  0.1%sy,  0.0%ni, 99.6%id,  0.0%wa,  0.0%hi,  0.0%si,  0.0%st\n" +
		"Mem:   8062196k total,  7891652k used,   170544k free,   239828k buffers\n" +
		"Swap:  4194300k total,    12345k used,  4181955k free,  3467100k cached\n" +
		"\n" +
		"  PID USER      PR  NI  VIRT  RES  SHR S %CPU %MEM    TIME+  COMMAND\n" +
		"    1 root      20   0 19232 1484 1204 S  0.0  0.0   0:01.64 init\n"
	out := parseAs("top.txt", text, facts.KindTop)
	assert.Empty(t, issuesOf("top.txt", text, facts.KindTop))
	s := out.Procs[0]
	assert.Equal(t, &facts.CPUSummary{User: 0.3, System: 0.1, Idle: 99.6}, s.CPU)
	assert.Equal(t, &facts.MemSummary{TotalKB: 8062196, FreeKB: 170544, UsedKB: 7891652, BuffCacheKB: 239828 + 3467100,
		AvailKB: -1, SwapTotalKB: 4194300, SwapFreeKB: 4181955, SwapUsedKB: 12345}, s.Mem)
	assert.Equal(t, 1640*time.Millisecond, s.Procs[0].CPUTime)
}

// Extra words on a row whose last column is not the command.
func TestExtraWords(t *testing.T) {
	text := "  PID   RSS\n    1  6568 junk\n"
	out := parseAs("x.txt", text, facts.KindPS)
	assert.Equal(t, int64(6568), out.Procs[0].Procs[0].RSSKB)
	is := issuesOf("x.txt", text, facts.KindPS)
	require.Len(t, is, 1)
	assert.Equal(t, "row has 1 word(s) past its last column; ignored", is[0].Detail)
}

// A forest that starts deep (a listing cut from the middle of ps f).
func TestForestCutListing(t *testing.T) {
	text := "  PID COMMAND\n    5      \\_ python3 x.py\n    6          \\_ ninja -v\n"
	out := parseAs("f.txt", text, facts.KindPS)
	s := out.Procs[0]
	assert.Equal(t, []int{0, 1}, []int{s.ByPID(5).Depth, s.ByPID(6).Depth})
	assert.Equal(t, []int{-1, 5}, []int{s.ByPID(5).PPID, s.ByPID(6).PPID})
	is := issuesOf("f.txt", text, facts.KindPS)
	require.Len(t, is, 2)
	assert.Equal(t, "forest prefix of pid 5 is 2 levels deep with no row above it; read as a root", is[0].Detail)
	assert.Equal(t, "forest prefix of pid 6 is 3 levels deep under a row 0 deep; took the row above as its parent", is[1].Detail)
}
