package procs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

func TestParseCPUTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0:00", 0, true},                                                  // bsdtime
		{"0:07", 7 * time.Second, true},                                    // bsdtime
		{"1234:56", 1234*time.Minute + 56*time.Second, true},               // bsdtime, minutes unbounded
		{"00:02:01", 2*time.Minute + time.Second, true},                    // time
		{"1-02:03:04", 26*time.Hour + 3*time.Minute + 4*time.Second, true}, // time with days
		{"05:12", 5*time.Minute + 12*time.Second, true},                    // etime mm:ss
		{"03:05:12", 3*time.Hour + 5*time.Minute + 12*time.Second, true},
		{"2-03:05:12", 51*time.Hour + 5*time.Minute + 12*time.Second, true},
		{"196", 196 * time.Second, true},                        // times, etimes
		{"0:04.21", 4*time.Second + 210*time.Millisecond, true}, // top TIME+
		{"521:07.33", 521*time.Minute + 7*time.Second + 330*time.Millisecond, true},
		{"177,43", 177*time.Hour + 43*time.Minute, true}, // top, hours,minutes
		{"12h", 12 * time.Hour, true},
		{"3d", 72 * time.Hour, true},
		{"2w", 14 * 24 * time.Hour, true},
		{"", 0, false},
		{"-", 0, false},
		{"1:60", 0, false},
		{"1:2:3:4", 0, false},
		{"1-05:12", 0, false}, // days need hours
		{"1234:5x", 0, false},
		{"99999999999999999", 0, false},
		{"99999999999999h", 0, false},
		{"1:", 0, false},
		{":1", 0, false},
	} {
		got, ok := parseCPUTime([]byte(c.in))
		assert.Equal(t, c.ok, ok, c.in)
		if c.ok {
			assert.Equal(t, c.want, got, c.in)
		}
	}
}

func TestParseKBAndFloat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"517776", 517776, true},
		{"20.5g", 21495808, true},
		{"153.5g", 160956416, true},
		{"1.1g", 1153434, true},
		{"612m", 626688, true},
		{"2.0t", 2147483648, true},
		{"100k", 100, true},
		{"g", 0, false},
		{"-1", 0, false},
		{"12x", 0, false},
	} {
		got, ok := parseKB([]byte(c.in))
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	f, ok := parseFloat([]byte("99,8"))
	assert.True(t, ok)
	assert.Equal(t, 99.8, f, "decimal comma")
	for _, bad := range []string{"1.2.3", "NaN", "Inf", "1e5", "0x10", "-", ".", "x.y"} {
		_, ok = parseFloat([]byte(bad))
		assert.False(t, ok, bad)
	}
	for in, want := range map[string]float64{"0.0": 0, "100": 100, "226": 226, "12345678901234567.5": 12345678901234567.5, "-0.5": -0.5, "5.": 5, ".5": 0.5} {
		f, ok = parseFloat([]byte(in))
		assert.True(t, ok, in)
		assert.Equal(t, want, f, in)
	}
}

func TestStat(t *testing.T) {
	for _, s := range []string{"R", "S", "D", "Z", "T", "t", "I", "X", "Sl", "Ssl", "SLl", "Rl+", "Dl", "Z+", "I<", "SN", "S<sl", "Sl+"} {
		assert.True(t, validStat([]byte(s)), s)
	}
	for _, s := range []string{"", "Q", "Sq", "s", "r", "S l"} {
		assert.False(t, validStat([]byte(s)), s)
	}
}

func TestLstartLocales(t *testing.T) {
	w := func(a, b, c, d, e string) [5][]byte {
		return [5][]byte{[]byte(a), []byte(b), []byte(c), []byte(d), []byte(e)}
	}
	for _, c := range []struct {
		in   [5][]byte
		want time.Time
	}{
		{w("Mon", "Nov", "30", "04:24:04", "2026"), time.Date(2026, 11, 30, 4, 24, 4, 0, time.UTC)},
		{w("Sat", "Jul", "6", "15:09:26", "2024"), time.Date(2024, 7, 6, 15, 9, 26, 0, time.UTC)},
		{w("Di", "Mär", "3", "14:05:09", "2026"), time.Date(2026, 3, 3, 14, 5, 9, 0, time.UTC)},
		{w("Do", "Okt", "1", "00:00:00", "2026"), time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)},
		{w("mar.", "déc.", "22", "23:59:59", "2026"), time.Date(2026, 12, 22, 23, 59, 59, 0, time.UTC)},
		{w("jue", "ene", "8", "07:00:00", "2026"), time.Date(2026, 1, 8, 7, 0, 0, 0, time.UTC)},
	} {
		got, ok := parseLstart(c.in)
		require.True(t, ok, "%s", c.in)
		assert.Equal(t, c.want, got)
	}
	for _, bad := range [][5][]byte{
		w("Mon", "Foo", "30", "04:24:04", "2026"),
		w("Mon", "Feb", "30", "04:24:04", "2026"),
		w("Mon", "Nov", "30", "24:00:00", "2026"),
		w("Mon", "Nov", "30", "04:24", "2026"),
		w("Mon", "Nov", "30", "04:24:04", "26"),
	} {
		_, ok := parseLstart(bad)
		assert.False(t, ok, "%s", bad)
	}
}

// START/STIME and the 2-word start forms are kept for the bundle's time
// pass, month names in English.
func TestStartColumn(t *testing.T) {
	for _, c := range []struct {
		header, value, raw string
	}{
		{"START", "04:24", "04:24"},
		{"START", "Nov29", "Nov29"},
		{"START", "Mär05", "Mar05"},
		{"START", "déc.05", "Dec05"}, // French %b has a dot
		{"START", "2024", "2024"},
		{"STARTED", "15:09:26", "15:09:26"},
		{"STARTED", "Jun 06", "Jun06"},
		{"STARTED", "Jun  6", "Jun06"},
		{"START", "Mai 6", "May06"},
	} {
		text := "  PID " + c.header + " COMMAND\n    7 " + c.value + " python3 x.py\n"
		out := parseAs("s.txt", text, facts.KindPS)
		require.Len(t, out.Procs, 1, c.value)
		require.Len(t, out.Procs[0].Procs, 1, c.value)
		p := out.Procs[0].Procs[0]
		assert.Equal(t, c.raw, p.StartRaw, c.value)
		assert.Equal(t, "python3 x.py", p.Args, c.value)
		assert.True(t, p.Start.IsZero())
	}
}

func TestForestPrefix(t *testing.T) {
	for _, c := range []struct {
		in   string
		d    int
		rest string
	}{
		{"/sbin/init", 0, "/sbin/init"},
		{` \_ timeout`, 1, "timeout"},
		{`     \_ bash`, 2, "bash"},
		{`     |   \_ bash`, 3, "bash"},
		{`          |   |   \_ x`, 5, "x"}, // shifted by one byte: the tolerant rule
		{"    indented", 0, "    indented"},
		{`\_ x`, 1, "x"},
	} {
		d, rest := forestPrefix([]byte(c.in))
		assert.Equal(t, c.d, d, c.in)
		assert.Equal(t, c.rest, string(rest), c.in)
	}
}

func TestCommSpan(t *testing.T) {
	cols := []column{{kind: colComm, start: 0}, {kind: colArgs, start: 16}}
	for _, c := range []struct {
		line, comm, args string
	}{
		{"python3         python3 x.py", "python3", "python3 x.py"},
		{"vidmem lazy fre [vidmem lazy free]", "vidmem lazy fre", "[vidmem lazy free]"},
		{"init     /sbin/init", "init", "/sbin/init"},
		{"UVM GPU1 BH     [UVM GPU1 BH]", "UVM GPU1 BH", "[UVM GPU1 BH]"},
		{"sh               \\_ child", "sh", " \\_ child"},
		{"bash", "bash", ""},
	} {
		end, next := commSpan([]byte(c.line), 0, cols, 0)
		assert.Equal(t, c.comm, c.line[:end], c.line)
		assert.Equal(t, c.args, c.line[min(next, len(c.line)):], c.line)
	}
}
