package kernlog

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

// parseFile runs the parser over a file and returns the facts and issues.
func parseFile(t testing.TB, path string) (*facts.Facts, []facts.Issue) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return parseString(path, string(b))
}

func parseString(path, s string) (*facts.Facts, []facts.Issue) {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(s), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, facts.KindKernelLog, out)
	return out, issues
}

// ev is the expectation of one kernel event: the fields a rule reads.
type ev struct {
	line       int
	typ        facts.KernelEventType
	code       int
	bus        string
	pid        int
	comm       string
	rss        int64
	constraint string
	cgroup     string
	uuid       string
	fatal      bool
	uptime     time.Duration
	at         time.Time
	text       string // a substring of Text
}

func up(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func TestParse(t *testing.T) {
	corpus := "../../fixtures/corpus/h200-x1/cgroup-oom/"
	cases := []struct {
		file   string
		events []ev
		clock  *facts.Clock
	}{
		{
			file: corpus + "dmesg.txt",
			events: []ev{{line: 109, typ: facts.KernelOOMKill, pid: 1320, comm: "python3", rss: 2092928 + 7440 + 0,
				constraint: "CONSTRAINT_MEMCG", cgroup: "/repro-oom", uptime: up("227.480184s"),
				text: "Memory cgroup out of memory: Killed process 1320 (python3)"}},
		},
		{
			file: corpus + "dmesg-T-oom.txt",
			events: []ev{{line: 109, typ: facts.KernelOOMKill, pid: 1320, comm: "python3", rss: 2100368,
				constraint: "CONSTRAINT_MEMCG", cgroup: "/repro-oom", at: utc("2026-11-30T04:57:31Z")}},
			clock: &facts.Clock{NoZone: true, Latest: utc("2026-11-30T04:57:31Z")},
		},
		{
			file: "testdata/dmesg-xid.txt",
			events: []ev{
				{line: 4, typ: facts.KernelNVRM, uptime: up("12.412845s"), text: "580.159.04"},
				{line: 5, typ: facts.KernelNVRM, bus: "00000000:9b:00.0", uuid: "GPU-509665ad-b600-ac93-3616-d754b23d636d"},
				{line: 6, typ: facts.KernelNVRM, text: "Board Serial Number"},
				{line: 7, typ: facts.KernelXid, code: 119, bus: "00000000:9b:00.0", pid: 2024380, comm: "nvidia-smi", uptime: up("911.022124s"), text: "Timeout after 6s"},
				{line: 8, typ: facts.KernelXid, code: 48, bus: "00000000:1b:00.0", pid: 30211, comm: "python3"},
				{line: 9, typ: facts.KernelXid, code: 63, bus: "00000000:1b:00.0", pid: 30211, text: "Row Remapper"},
				{line: 10, typ: facts.KernelXid, code: 94, bus: "00000000:1b:00.0", pid: 30377, comm: "pt_main_thread"},
				{line: 11, typ: facts.KernelXid, code: 13, bus: "00000000:43:00.0", uptime: up("93297.027938s"), text: "Graphics Exception"},
				{line: 12, typ: facts.KernelXid, code: 45, bus: "00000000:43:00.0"},
				{line: 13, typ: facts.KernelXid, code: 79, bus: "00000000:2b:00.0", text: "GPU has fallen off the bus."},
				{line: 14, typ: facts.KernelNVRM, bus: "00000000:2b:00.0", text: "fallen off the bus"},
				{line: 15, typ: facts.KernelNVRM, bus: "00000000:2b:00.0"},
				{line: 16, typ: facts.KernelXid, code: 154, bus: "00000009:01:00.0", text: "Drain and Reset"},
				{line: 17, typ: facts.KernelSXid, code: 20034, bus: "00000000:c6:00.0", fatal: true},
				{line: 18, typ: facts.KernelSXid, code: 12028, bus: "00000000:c6:00.0"},
				{line: 19, typ: facts.KernelSegfault, pid: 48213, comm: "python3", text: "libcuda.so.580.159.04"},
				{line: 21, typ: facts.KernelSegfault, pid: 51234, comm: "cicc"},
				{line: 22, typ: facts.KernelSegfault, pid: 3121, comm: "pt_main_thread", text: "general protection fault"},
				{line: 23, typ: facts.KernelHungTask, pid: 23817, comm: "python3"},
				{line: 33, typ: facts.KernelOOMKill, pid: 72309, comm: "sglang::schedul", rss: 250121408 + 2048,
					constraint: "CONSTRAINT_NONE", uptime: up("99123.4572s")},
			},
		},
		{
			file: "testdata/dmesg-T-xid.txt",
			events: []ev{
				{line: 1, typ: facts.KernelNVRM, bus: "00000000:9b:00.0", uuid: "GPU-509665ad-b600-ac93-3616-d754b23d636d", at: utc("2025-02-23T16:24:18Z")},
				{line: 2, typ: facts.KernelNVRM},
				{line: 3, typ: facts.KernelXid, code: 119, bus: "00000000:9b:00.0", pid: 2024380, comm: "nvidia-smi", at: utc("2025-02-23T16:24:18Z")},
				{line: 4, typ: facts.KernelXid, code: 13, bus: "00000000:cb:00.0", at: utc("2024-08-30T11:43:09Z"), text: "Illegal Instruction Parameter"},
				{line: 5, typ: facts.KernelXid, code: 109, bus: "00000000:cb:00.0", pid: 1797828, comm: "pt_main_thread"},
				{line: 6, typ: facts.KernelXid, code: 149, bus: "00000008:01:00.0", fatal: true, at: utc("2025-03-01T02:05:44Z")},
			},
			clock: &facts.Clock{NoZone: true, Latest: utc("2025-03-01T02:05:44Z")},
		},
		{
			file: "testdata/journal-k.txt",
			events: []ev{
				{line: 2, typ: facts.KernelNVRM, bus: "00000000:9b:00.0", uuid: "GPU-509665ad-b600-ac93-3616-d754b23d636d", at: utc("2000-12-31T23:59:58Z")},
				// Dec 31 to Jan 1: the year rolls over inside the file.
				{line: 4, typ: facts.KernelXid, code: 79, bus: "00000000:9b:00.0", at: utc("2001-01-01T00:00:03Z")},
				{line: 5, typ: facts.KernelNVRM, bus: "00000000:9b:00.0", at: utc("2001-01-01T00:00:03Z")},
				{line: 6, typ: facts.KernelSegfault, pid: 1234, comm: "python3", at: utc("2001-01-01T00:07:12Z"), text: "libnccl.so.2"},
			},
			clock: &facts.Clock{NoZone: true, NoYear: true, Latest: utc("2001-01-01T00:07:12Z")},
		},
		{
			file: "testdata/journal-k-iso.txt",
			events: []ev{
				{line: 1, typ: facts.KernelXid, code: 31, bus: "00000000:19:00.0", pid: 13332, comm: "python3", at: utc("2025-10-03T15:59:17Z"), text: "MMU Fault"},
				{line: 2, typ: facts.KernelXid, code: 43, bus: "00000000:19:00.0", pid: 13332, comm: "python3", at: utc("2025-10-03T15:59:18.482113Z")},
			},
		},
		{
			file: "testdata/syslog.txt",
			events: []ev{
				{line: 1, typ: facts.KernelXid, code: 62, bus: "00000000:19:00.0", at: utc("2000-10-03T17:59:17Z"), uptime: up("16450076.435595s")},
				{line: 3, typ: facts.KernelXid, code: 45, bus: "00000000:19:00.0", at: utc("2000-10-03T17:59:20Z"), uptime: up("16450079.002144s")},
			},
			clock: &facts.Clock{NoZone: true, NoYear: true, Latest: utc("2000-10-03T17:59:20Z")},
		},
		{
			// A syslog paste with the host left out (NVIDIA forum 364958).
			file: "testdata/syslog-hostless.txt",
			events: []ev{
				{line: 1, typ: facts.KernelXid, code: 62, bus: "00000000:01:00.0", at: utc("2000-03-27T17:40:36Z")},
				{line: 2, typ: facts.KernelNVRM, at: utc("2000-03-27T17:40:36Z")},
				{line: 3, typ: facts.KernelXid, code: 154, bus: "00000000:01:00.0", at: utc("2000-03-27T17:40:36Z"), text: "GPU Reset Required"},
				{line: 4, typ: facts.KernelXid, code: 45, bus: "00000000:01:00.0", pid: 12542, comm: "VLLM::Worker", at: utc("2000-03-27T17:40:36Z")},
			},
			clock: &facts.Clock{NoZone: true, NoYear: true, Latest: utc("2000-03-27T17:40:36Z")},
		},
		{
			file: "testdata/dmesg-iso-x.txt",
			events: []ev{
				{line: 1, typ: facts.KernelNVRM, bus: "00000000:9b:00.0", uuid: "GPU-509665ad-b600-ac93-3616-d754b23d636d", at: utc("2025-02-23T16:24:18.123456Z")},
				{line: 2, typ: facts.KernelXid, code: 119, bus: "00000000:9b:00.0", pid: 2024380, comm: "nvidia-smi", at: utc("2025-02-23T16:24:18.200001Z")},
				{line: 3, typ: facts.KernelOOMKill, pid: 4321, comm: "python", rss: 1234 + 12, constraint: "CONSTRAINT_MEMCG", at: utc("2025-02-23T16:30:02.000017Z")},
			},
		},
		{
			file: "testdata/dmesg-old-memcg.txt",
			events: []ev{
				{line: 5, typ: facts.KernelOOMKill, pid: 4321, comm: "python", rss: 8123456 + 20480, constraint: "CONSTRAINT_MEMCG", cgroup: "/docker/3f2a9c"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			out, issues := parseFile(t, tc.file)
			assert.Empty(t, issues)
			require.Len(t, out.Kernel, len(tc.events))
			for i, want := range tc.events {
				got := out.Kernel[i]
				assert.Equal(t, tc.file, got.Src.File)
				assert.Equal(t, want.line, got.Src.Line, "event %d", i)
				assert.Equal(t, want.typ, got.Type, "line %d", want.line)
				assert.Equal(t, want.code, got.Code, "line %d", want.line)
				assert.Equal(t, want.bus, got.BusID, "line %d", want.line)
				assert.Equal(t, want.pid, got.PID, "line %d", want.line)
				assert.Equal(t, want.comm, got.Comm, "line %d", want.line)
				assert.Equal(t, want.rss, got.RSSKB, "line %d", want.line)
				assert.Equal(t, want.constraint, got.Constraint, "line %d", want.line)
				assert.Equal(t, want.cgroup, got.Cgroup, "line %d", want.line)
				assert.Equal(t, want.uuid, got.UUID, "line %d", want.line)
				assert.Equal(t, want.fatal, got.Fatal, "line %d", want.line)
				assert.Equal(t, -1, got.GPU)
				if want.uptime != 0 {
					assert.Equal(t, want.uptime, got.Uptime, "line %d", want.line)
				}
				if !want.at.IsZero() {
					assert.Equal(t, want.at, got.Time, "line %d", want.line)
				}
				if want.text != "" {
					assert.Contains(t, got.Text, want.text, "line %d", want.line)
				}
			}
			if tc.clock != nil {
				assert.Equal(t, *tc.clock, out.Clocks[tc.file])
			} else {
				assert.NotContains(t, out.Clocks, tc.file)
			}
		})
	}
}

func TestParseBadInput(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		events int
		issue  facts.IssueKind
		line   int
	}{
		{"xid without code", "[  1.000000] NVRM: Xid (garbage\n", 0, facts.IssueMalformed, 1},
		{"killed without pid", "[  1.000000] Out of memory: Killed process (python)\n", 0, facts.IssueMalformed, 1},
		{"oom cut before the kill",
			"[  5.000000] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n" +
				"[  5.000100] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=c1,mems_allowed=0,oom_memcg=/c1,task_memcg=/c1,task=python3,pid=77,uid=0\n",
			1, facts.IssueIncomplete, 2},
		{"not a kernel log", "hello\nworld\n", 0, facts.IssueUnrecognized, 1},
		{"dmesg refused", "dmesg: read kernel buffer failed: Operation not permitted\n", 0, facts.IssueUnreadable, 1},
		{"sxid without code", "[  1.000000] nvidia-nvswitch0: SXid (PCI:zz): x\n", 0, facts.IssueMalformed, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, issues := parseString("k.txt", tc.in)
			assert.Len(t, out.Kernel, tc.events)
			require.Len(t, issues, 1)
			assert.Equal(t, tc.issue, issues[0].Kind)
			assert.Equal(t, tc.line, issues[0].Src.Line)
			assert.Equal(t, "k.txt", issues[0].Src.File)
		})
	}
	// The kill from the summary keeps the victim.
	out, _ := parseString("k.txt", cases[2].in)
	require.Len(t, out.Kernel, 1)
	e := out.Kernel[0]
	assert.Equal(t, facts.KernelOOMKill, e.Type)
	assert.Equal(t, 77, e.PID)
	assert.Equal(t, "python3", e.Comm)
	assert.Equal(t, "CONSTRAINT_MEMCG", e.Constraint)
	assert.Equal(t, "/c1", e.Cgroup)
	assert.Equal(t, 2, e.Src.Line)
}

func TestSniff(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	cases := []struct {
		name string
		head []byte
		min  int // lowest acceptable score; 0 means not mine
		max  int
	}{
		{"dmesg.txt", read("../../fixtures/corpus/h200-x1/cgroup-oom/dmesg.txt"), 70, 100},
		{"dmesg-T-oom.txt", read("../../fixtures/corpus/h200-x1/cgroup-oom/dmesg-T-oom.txt"), 70, 100},
		{"kern.log", read("testdata/syslog.txt"), 70, 100},
		{"x.txt", read("testdata/journal-k.txt"), 70, 100},
		{"x.txt", read("testdata/journal-k-iso.txt"), 70, 100},
		{"x.txt", read("testdata/dmesg-iso-x.txt"), 70, 100},
		{"x.txt", read("testdata/dmesg-T-xid.txt"), 70, 100},
		{"server.log", read("../../fixtures/corpus/h200-x1/cgroup-oom/server.log"), 0, 0},
		{"memory.events", read("../../fixtures/corpus/h200-x1/cgroup-oom/memory.events"), 0, 0},
		{"meminfo.txt", read("../../fixtures/corpus/h200-x2/00-idle/meminfo.txt"), 0, 0},
		{"dmesg.txt", []byte("nothing to see\n"), 1, 29},
		{"notes.txt", nil, 0, 0},
	}
	for _, tc := range cases {
		k, score := Sniff(tc.name, tc.head)
		if tc.max == 0 {
			assert.Equal(t, 0, score, tc.name)
			continue
		}
		assert.Equal(t, facts.KindKernelLog, k, tc.name)
		assert.GreaterOrEqual(t, score, tc.min, tc.name)
		assert.LessOrEqual(t, score, tc.max, tc.name)
	}
}

func TestNormalizeBusID(t *testing.T) {
	cases := []struct{ in, want string }{
		{"0000:9b:00", "00000000:9b:00.0"},
		{"PCI:0000:9b:00", "00000000:9b:00.0"},
		{"00000000:9B:00.0", "00000000:9b:00.0"},
		{"0000:2b:00.0", "00000000:2b:00.0"},
		{"0000000F:01:00.0", "0000000f:01:00.0"},
		{"0009:01:00", "00000009:01:00.0"},
		{"0000:10:1c", "00000000:10:1c.0"},
		{"9b:00.0", "00000000:9b:00.0"},
		{"0000:c6:00.1", "00000000:c6:00.1"},
	}
	for _, tc := range cases {
		got, ok := NormalizeBusID(tc.in)
		assert.True(t, ok, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "GPU", "zz:00:00", "0000:9b", "0000:9b:00.9", "000000000:9b:00.0", "0000:9b:20.0", "0000:100:00.0"} {
		_, ok := NormalizeBusID(bad)
		assert.False(t, ok, bad)
	}
}

func TestXidCatalog(t *testing.T) {
	cases := []struct {
		code      int
		name      string
		sev       Severity
		secondary bool
		hardware  bool
	}{
		{13, "ROBUST_CHANNEL_GR_EXCEPTION", SevError, false, false},
		{45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", SevWarning, true, false},
		{48, "ROBUST_CHANNEL_GPU_ECC_DBE", SevCritical, false, true},
		{79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", SevCritical, false, true},
		{94, "ROBUST_CHANNEL_CONTAINED_ERROR", SevError, false, true},
		{119, "GSP_RPC_TIMEOUT", SevCritical, false, false},
		{149, "NVLINK_NETIR_ERROR", SevError, false, true},
		{154, "GPU_RECOVERY_ACTION_CHANGED", SevWarning, true, false},
	}
	for _, tc := range cases {
		e, ok := XidInfo(tc.code)
		require.True(t, ok, tc.code)
		assert.Equal(t, tc.code, e.Code)
		assert.Equal(t, tc.name, e.Name)
		assert.Equal(t, tc.sev, e.Severity, tc.code)
		assert.Equal(t, tc.secondary, e.Secondary, tc.code)
		assert.Equal(t, tc.hardware, e.Hardware, tc.code)
	}
	_, ok := XidInfo(9999)
	assert.False(t, ok)
	// The table is sorted, unique, and every entry says what it means and what to do.
	codes := XidCodes()
	for i, c := range codes {
		if i > 0 {
			assert.Less(t, codes[i-1], c)
		}
		e, _ := XidInfo(c)
		assert.NotEmpty(t, e.Name, c)
		assert.NotEmpty(t, e.Meaning, c)
		assert.NotEmpty(t, e.Action, c)
		assert.Contains(t, []Severity{SevCritical, SevError, SevWarning, SevInfo}, e.Severity, c)
	}
	code, name, ok := RecoveryAction("GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)")
	assert.True(t, ok)
	assert.Equal(t, 4, code)
	assert.Equal(t, "Drain and Reset", name)
	_, _, ok = RecoveryAction("Ch 00000008")
	assert.False(t, ok)
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	files = append(files, "../../fixtures/corpus/h200-x1/cgroup-oom/dmesg.txt", "../../fixtures/corpus/h200-x1/cgroup-oom/dmesg-T-oom.txt")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("[  1.5] NVRM: Xid (PCI:0000:01:00): 79\n[Mon Jan  1 00:00:00 2024]\nJan  1 00:00:00 h kernel: [1.0]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		Sniff("dmesg", b)
		out, issues := parseString("f", string(b))
		lines := strings.Count(string(b), "\n") + 1
		for _, e := range out.Kernel {
			if e.Src.Line < 1 || e.Src.Line > lines {
				t.Fatalf("event cites line %d of %d", e.Src.Line, lines)
			}
			if e.GPU != -1 {
				t.Fatalf("GPU index set by the parser: %d", e.GPU)
			}
			if len(e.Text) > maxText {
				t.Fatalf("text of %d bytes", len(e.Text))
			}
		}
		for _, is := range issues {
			if is.Src.Line < 0 || is.Src.Line > lines {
				t.Fatalf("issue cites line %d of %d", is.Src.Line, lines)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	base, err := os.ReadFile("testdata/dmesg-xid.txt")
	require.NoError(b, err)
	oom, err := os.ReadFile("../../fixtures/corpus/h200-x1/cgroup-oom/dmesg.txt")
	require.NoError(b, err)
	// A long uptime's log: mostly ordinary lines, an incident now and then.
	var sb strings.Builder
	for sb.Len() < 32<<20 {
		sb.Write(oom)
		sb.Write(base)
		for i := 0; i < 2000; i++ {
			switch i % 4 {
			case 0:
				sb.WriteString("[ 1234.567890] usb 3-1: new high-speed USB device number 4 using xhci_hcd\n")
			case 1:
				sb.WriteString("[ 1234.567999] EXT4-fs (nvme0n1p2): mounted filesystem 1a2b3c4d-0000-1111-2222-333344445555 r/w with ordered data mode. Quota mode: none.\n")
			case 2:
				sb.WriteString("[ 1235.001234] audit: type=1400 audit(1732945051.123:456): apparmor=\"DENIED\" operation=\"open\" profile=\"snap.x\" name=\"/proc/1/\" pid=42 comm=\"x\"\n")
			default:
				sb.WriteString("[ 1235.101234] IPv6: ADDRCONF(NETDEV_CHANGE): veth3f2a9c1: link becomes ready\n")
			}
		}
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		parseString("bench", data)
	}
}
