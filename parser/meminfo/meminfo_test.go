package meminfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

const corpus = "../../fixtures/corpus/"

func read(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// run sniffs and parses a file the way the orchestrator does.
func run(t testing.TB, p string) (facts.Kind, *facts.Facts, []facts.Issue) {
	t.Helper()
	b := read(t, p)
	head := b
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	k, _ := Sniff(filepath.Base(p), head)
	out, issues := parse(p, string(b), k)
	return k, out, issues
}

func parse(path, s string, k facts.Kind) (*facts.Facts, []facts.Issue) {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(s), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, k, out)
	return out, issues
}

func val(v float64) facts.Val { return facts.V(v) }

var none = facts.Val{}

func TestMeminfo(t *testing.T) {
	cases := []struct {
		file                                        string
		line                                        int
		total, free, avail, cached, shmem, swt, swf facts.Val
		nFields                                     int
		extra                                       map[string]int64
	}{
		{file: corpus + "h200-x2/00-idle/meminfo.txt", line: 1,
			total: val(263998500), free: val(261502404), avail: val(263371736), cached: val(2049584), shmem: val(7368),
			swt: val(0), swf: val(0), nFields: 54,
			extra: map[string]int64{"Buffers": 25504, "HugePages_Total": 0, "Hugepagesize": 2048, "DirectMap1G": 267386880, "Active(file)": 75400}},
		{file: corpus + "h200-x2/oom/t20/meminfo.txt", line: 1, total: val(263998500), avail: val(262845540), nFields: 54},
		{file: corpus + "h200-x2/jit-compile/t12/meminfo.txt", line: 1, total: val(263998500), avail: val(260914608), nFields: 54},
		{file: corpus + "h200-x2/jit-compile/t27/meminfo.txt", line: 1, total: val(263998500), avail: val(262102072), nFields: 54},
		{file: "testdata/node0-meminfo.txt", line: 1, total: val(131899148), free: val(128345124), avail: none, shmem: val(8448),
			swt: none, swf: none, nFields: 27, extra: map[string]int64{"MemUsed": 3554024, "HugePages_Surp": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindMeminfo, k)
			assert.Empty(t, issues)
			require.Len(t, out.Memory, 1)
			m := out.Memory[0]
			assert.Equal(t, facts.Source{File: tc.file, Line: tc.line}, m.Src)
			assert.Equal(t, facts.KindMeminfo, m.Format)
			assert.Equal(t, tc.total, m.TotalKB)
			assert.Equal(t, tc.avail, m.AvailKB)
			if tc.free.OK {
				assert.Equal(t, tc.free, m.FreeKB)
			}
			if tc.cached.OK {
				assert.Equal(t, tc.cached, m.CachedKB)
			}
			if tc.shmem.OK {
				assert.Equal(t, tc.shmem, m.ShmemKB)
			}
			if tc.nFields == 54 && tc.swt.OK {
				assert.Equal(t, tc.swt, m.SwapTotal)
				assert.Equal(t, tc.swf, m.SwapFree)
			}
			assert.Len(t, m.Fields, tc.nFields)
			for k, v := range tc.extra {
				assert.Equal(t, v, m.Fields[k], k)
			}
		})
	}
}

func TestMeminfoSeveralSnapshots(t *testing.T) {
	s := "MemTotal:       1000 kB\nMemAvailable:    600 kB\nMemTotal:       1000 kB\nMemAvailable:    400 kB\n"
	out, issues := parse("m.txt", s, facts.KindMeminfo)
	assert.Empty(t, issues)
	require.Len(t, out.Memory, 2)
	assert.Equal(t, val(600), out.Memory[0].AvailKB)
	assert.Equal(t, 3, out.Memory[1].Src.Line)
	assert.Equal(t, val(400), out.Memory[1].AvailKB)
}

func TestFree(t *testing.T) {
	cases := []struct {
		file                                    string
		line                                    int
		total, used, free, avail, cached, shmem float64
		noAvail                                 bool
		swt, swf                                float64
		extra                                   map[string]int64
		assumption                              string // a substring of the only assumption, "" for none
	}{
		// free -m of the H200 host: 257811 MiB is the 263998500 kB of its meminfo.
		{file: corpus + "h200-x2/00-idle/free.txt", line: 2, total: 257811 * 1024, used: 612 * 1024, free: 255373 * 1024,
			avail: 257198 * 1024, cached: 2054 * 1024, shmem: 7 * 1024, assumption: "as MiB (free -m)"},
		{file: corpus + "h200-x2/oom/t20/free.txt", line: 2, total: 257811 * 1024, used: 1127 * 1024, free: 254434 * 1024,
			avail: 256683 * 1024, cached: 2507 * 1024, shmem: 15 * 1024, assumption: "251.8 GiB"},
		{file: corpus + "h200-x2/jit-compile/t12/free.txt", line: 2, total: 257811 * 1024, used: 3003 * 1024, free: 252644 * 1024,
			avail: 254807 * 1024, cached: 2407 * 1024, shmem: 7 * 1024, assumption: "MiB"},
		{file: corpus + "h200-x2/jit-compile/t27/free.txt", line: 2, total: 257811 * 1024, used: 1851 * 1024, free: 253711 * 1024,
			avail: 255959 * 1024, cached: 2498 * 1024, shmem: 7 * 1024, assumption: "MiB"},
		{file: "testdata/free-old.txt", line: 2, total: 263998500, used: 262100112, free: 1898388, noAvail: true,
			cached: 240112224, shmem: 48816, swt: 8388604, swf: 8107348,
			extra:      map[string]int64{"Buffers": 152308, "BuffersCacheUsed": 21835580, "BuffersCacheFree": 242162920, "SwapUsed": 281256},
			assumption: "as KiB"},
		{file: "testdata/free-h.txt", line: 2, total: 251 << 20, used: 3.8 * (1 << 20), free: 245 << 20, avail: 247 << 20,
			cached: 2 << 20, shmem: 60 << 10},
		{file: "testdata/free-g.txt", line: 2, total: 251 << 20, used: 0, free: 249 << 20, avail: 250 << 20, cached: 1 << 20,
			extra: map[string]int64{"Buffers": 0}},
		{file: "testdata/free-cmd.txt", line: 3, total: 263998500, used: 626764, free: 261502404, avail: 263371736,
			cached: 2104292, shmem: 7368},
		{file: "testdata/free-small.txt", line: 2, total: 16318480, used: 9123456, free: 1702224, avail: 6612532,
			cached: 5492800, shmem: 412332, swt: 2097148, swf: 1572860,
			extra: map[string]int64{"TotalTotal": 18415628, "TotalFree": 3275084}, assumption: "15.6 GiB"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindFree, k)
			assert.Empty(t, issues)
			require.Len(t, out.Memory, 1)
			m := out.Memory[0]
			assert.Equal(t, facts.Source{File: tc.file, Line: tc.line}, m.Src)
			assert.Equal(t, facts.KindFree, m.Format)
			assert.Equal(t, val(tc.total), m.TotalKB)
			assert.InDelta(t, tc.used, float64(m.Fields["MemUsed"]), 1)
			assert.Equal(t, val(tc.free), m.FreeKB)
			if tc.noAvail {
				assert.False(t, m.AvailKB.OK)
			} else {
				assert.Equal(t, val(tc.avail), m.AvailKB)
			}
			assert.Equal(t, val(tc.cached), m.CachedKB)
			assert.Equal(t, val(tc.shmem), m.ShmemKB)
			assert.Equal(t, val(tc.swt), m.SwapTotal)
			assert.Equal(t, val(tc.swf), m.SwapFree)
			for k, v := range tc.extra {
				assert.Equal(t, v, m.Fields[k], k)
			}
			if tc.assumption == "" {
				assert.Empty(t, out.Assumptions)
			} else {
				require.Len(t, out.Assumptions, 1)
				assert.Contains(t, out.Assumptions[0], tc.assumption)
				assert.Contains(t, out.Assumptions[0], tc.file)
			}
		})
	}
}

func TestDF(t *testing.T) {
	type disk struct {
		line              int
		fs, typ, mount    string
		size, used, avail int64
	}
	// 1.8T is round(1.8 * 2^30) KiB, 1.2T round(1.2 * 2^30).
	const G, M = 1 << 20, 1 << 10
	cases := []struct {
		file  string
		disks []disk
	}{
		{"testdata/df-h.txt", []disk{
			{2, "overlay", "", "/", 1932735283, 1288490189, 551 * G},
			{3, "tmpfs", "", "/dev", 64 * M, 0, 64 * M},
			{4, "shm", "", "/dev/shm", 64 * M, 64 * M, 0},
			{5, "/dev/nvme0n1p1", "", "/models", 1932735283, 1288490189, 551 * G},
			{6, "tmpfs", "", "/proc/driver/nvidia", 126 * G, 12, 126 * G},
		}},
		{"testdata/df-kT.txt", []disk{
			{2, "tmpfs", "tmpfs", "/run", 26399852, 3352, 26396500},
			{3, "/dev/sda1", "ext4", "/", 101430960, 52341228, 49073348},
			{4, "tmpfs", "tmpfs", "/dev/shm", 131999248, 0, 131999248},
			{5, "192.168.1.10:/export/models", "nfs4", "/mnt/models", 10737418240, 6442450944, 4294967296},
		}},
		{"testdata/df-old-wrapped.txt", []disk{
			{3, "/dev/mapper/ubuntu--vg-ubuntu--lv", "", "/", 102626232, 20874848, 76492224},
			{4, "/dev/shm", "", "/dev/shm", 131999248, 0, 131999248},
			{5, "/dev/sdb1", "", "/mnt/my models", 1953514584, 1023456789, 930057795},
		}},
		{"testdata/df-P.txt", []disk{
			{2, "/dev/nvme0n1p2", "", "/", 1843217360, 91234560, 1658131200},
			{3, "tmpfs", "", "/dev/shm", 65536, 0, 65536},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindDF, k)
			assert.Empty(t, issues)
			require.Len(t, out.Disks, len(tc.disks))
			for i, want := range tc.disks {
				got := out.Disks[i]
				assert.Equal(t, facts.Source{File: tc.file, Line: want.line}, got.Src)
				assert.Equal(t, want.fs, got.Filesystem)
				assert.Equal(t, want.typ, got.Type)
				assert.Equal(t, want.mount, got.Mount)
				assert.Equal(t, want.size, got.SizeKB, want.mount)
				assert.Equal(t, want.used, got.UsedKB, want.mount)
				assert.Equal(t, want.avail, got.AvailKB, want.mount)
			}
		})
	}
}

func TestCgroup(t *testing.T) {
	cases := []struct {
		file   string
		events map[string]int64
	}{
		{corpus + "h200-x1/cgroup-oom/memory.events",
			map[string]int64{"low": 0, "high": 0, "max": 35, "oom": 1, "oom_kill": 1, "oom_group_kill": 0}},
		{"testdata/memory.oom_control", map[string]int64{"oom_kill_disable": 0, "under_oom": 0, "oom_kill": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			k, out, issues := run(t, tc.file)
			assert.Equal(t, facts.KindCgroupMemory, k)
			assert.Empty(t, issues)
			require.Len(t, out.Cgroups, 1)
			assert.Equal(t, facts.Source{File: tc.file, Line: 1}, out.Cgroups[0].Src)
			assert.Equal(t, tc.events, out.Cgroups[0].Events)
		})
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		kind  facts.Kind
		in    string
		issue facts.IssueKind
		line  int
		check func(t *testing.T, out *facts.Facts)
	}{
		{"meminfo garbage line", facts.KindMeminfo, "MemTotal: 10 kB\nthis is not meminfo\nMemFree: 5 kB\n", facts.IssueMalformed, 2,
			func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.Memory, 1)
				assert.Equal(t, val(10), out.Memory[0].TotalKB)
				assert.Equal(t, val(5), out.Memory[0].FreeKB)
			}},
		{"free bad number", facts.KindFree, "               total        used        free\nMem:        16318480     x9     1702224\n", facts.IssueMalformed, 2,
			func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.Memory, 1)
				assert.Equal(t, val(16318480), out.Memory[0].TotalKB)
				assert.Equal(t, val(1702224), out.Memory[0].FreeKB)
			}},
		{"free row without header", facts.KindFree, "Mem: 1 2 3\n", facts.IssueMalformed, 1,
			func(t *testing.T, out *facts.Facts) { assert.Empty(t, out.Memory) }},
		{"df short row", facts.KindDF, "Filesystem 1K-blocks Used Available Use% Mounted on\n/dev/sda1 100 50\n/dev/sdb1 10 5 5 50% /b\n", facts.IssueMalformed, 2,
			func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.Disks, 1)
				assert.Equal(t, "/b", out.Disks[0].Mount)
			}},
		{"df name without sizes", facts.KindDF, "Filesystem 1K-blocks Used Available Use% Mounted on\n/dev/mapper/very-long\n", facts.IssueIncomplete, 2,
			func(t *testing.T, out *facts.Facts) { assert.Empty(t, out.Disks) }},
		{"cgroup garbage", facts.KindCgroupMemory, "oom 1\noom_kill one\n", facts.IssueMalformed, 2,
			func(t *testing.T, out *facts.Facts) {
				require.Len(t, out.Cgroups, 1)
				assert.Equal(t, map[string]int64{"oom": 1}, out.Cgroups[0].Events)
			}},
		{"wrong kind", facts.KindPS, "x\n", facts.IssueUnrecognized, 0,
			func(t *testing.T, out *facts.Facts) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, issues := parse("f.txt", tc.in, tc.kind)
			require.Len(t, issues, 1)
			assert.Equal(t, tc.issue, issues[0].Kind)
			assert.Equal(t, tc.line, issues[0].Src.Line)
			tc.check(t, out)
		})
	}
}

func TestSniff(t *testing.T) {
	cases := []struct {
		name     string
		head     string
		kind     facts.Kind
		min, max int
	}{
		{"meminfo.txt", string(read(t, corpus+"h200-x2/00-idle/meminfo.txt")), facts.KindMeminfo, 90, 100},
		{"x", string(read(t, corpus+"h200-x2/00-idle/meminfo.txt")), facts.KindMeminfo, 90, 100},
		{"free.txt", string(read(t, corpus+"h200-x2/00-idle/free.txt")), facts.KindFree, 90, 100},
		{"x", string(read(t, "testdata/free-old.txt")), facts.KindFree, 90, 100},
		{"x", string(read(t, "testdata/df-h.txt")), facts.KindDF, 90, 100},
		{"x", string(read(t, "testdata/df-kT.txt")), facts.KindDF, 90, 100},
		{"memory.events", string(read(t, corpus+"h200-x1/cgroup-oom/memory.events")), facts.KindCgroupMemory, 85, 100},
		{"x", "low 0\nhigh 3\n", facts.KindCgroupMemory, 40, 69},
		{"meminfo", "", facts.KindMeminfo, 1, 29},
		{"df.txt", "garbage\n", facts.KindDF, 1, 29},
		{"x", "Filesystem      Inodes  IUsed   IFree IUse% Mounted on\noverlay 1 1 0 100% /\n", "", 0, 0},
		{"x", string(read(t, corpus+"h200-x1/cgroup-oom/dmesg.txt")), "", 0, 0},
		{"x", string(read(t, corpus+"h200-x2/system.txt")), "", 0, 0},
	}
	for _, tc := range cases {
		k, s := Sniff(tc.name, []byte(tc.head))
		if tc.max == 0 {
			assert.Equal(t, 0, s, tc.name)
			continue
		}
		assert.Equal(t, tc.kind, k, tc.name)
		assert.GreaterOrEqual(t, s, tc.min, tc.name)
		assert.LessOrEqual(t, s, tc.max, tc.name)
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in  string
		kib float64
		ok  bool
	}{
		{"251Gi", 251 << 20, true}, {"3.8G", 3.8 * (1 << 20), true}, {"828Ki", 828, true}, {"0B", 0, true},
		{"1,8T", 1.8 * (1 << 30), true}, {"512kB", 500, true}, {"2048B", 2, true},
		{"x", 0, false}, {"1.2.3G", 0, false}, {"12Q", 0, false}, {"1.5", 0, false},
	}
	for _, tc := range cases {
		x, per, ok := parseSize([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		if ok {
			assert.InDelta(t, tc.kib, x*per, 1e-6, tc.in)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	files = append(files, corpus+"h200-x2/00-idle/meminfo.txt", corpus+"h200-x2/00-idle/free.txt", corpus+"h200-x1/cgroup-oom/memory.events")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(0))
		}
	}
	kinds := []facts.Kind{facts.KindMeminfo, facts.KindFree, facts.KindDF, facts.KindCgroupMemory}
	f.Fuzz(func(t *testing.T, b []byte, ki uint8) {
		k, _ := Sniff("x", b)
		if k == "" {
			k = kinds[int(ki)%len(kinds)]
		}
		out, issues := parse("f", string(b), k)
		lines := strings.Count(string(b), "\n") + 1
		check := func(s facts.Source) {
			if s.Line < 0 || s.Line > lines || s.File != "f" {
				t.Fatalf("cites %v of %d lines", s, lines)
			}
		}
		for _, m := range out.Memory {
			check(m.Src)
		}
		for _, d := range out.Disks {
			check(d.Src)
		}
		for _, c := range out.Cgroups {
			check(c.Src)
		}
		for _, is := range issues {
			check(is.Src)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	cases := []struct {
		kind facts.Kind
		file string
	}{
		{facts.KindMeminfo, corpus + "h200-x2/00-idle/meminfo.txt"},
		{facts.KindFree, corpus + "h200-x2/00-idle/free.txt"},
		{facts.KindDF, "testdata/df-kT.txt"},
	}
	for _, c := range cases {
		b.Run(string(c.kind), func(b *testing.B) {
			one := read(b, c.file)
			if c.kind == facts.KindDF {
				one = one[strings.IndexByte(string(one), '\n')+1:]
			}
			var sb strings.Builder
			if c.kind == facts.KindDF {
				sb.WriteString("Filesystem     Type  1K-blocks       Used  Available Use% Mounted on\n")
			}
			for sb.Len() < 8<<20 {
				sb.Write(one)
			}
			data := sb.String()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				parse("bench", data, c.kind)
			}
		})
	}
}
