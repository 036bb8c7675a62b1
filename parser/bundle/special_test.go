//go:build unix

package bundle

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// inTime fails the test when fn has not returned after d: a FIFO without
// a writer holds a plain open() forever.
func inTime(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// TestSpecialBundle: a FIFO or a device named as the bundle is refused at
// once, saying what it is (issue 18, item 2).
func TestSpecialBundle(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, p := range []string{fifo, "/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		inTime(t, 5*time.Second, func() {
			err := Walk(p, Options{}, func(*Entry, io.Reader) error { return nil })
			require.Error(t, err, p)
			assert.Regexp(t, `is a (named pipe \(FIFO\)|character device), not a file, folder or archive`, err.Error())
		})
	}
}

// TestSwappedForFIFO: a file of a folder replaced by a FIFO after the folder
// was listed is skipped, judged on the opened file (issue 18, item 2).
func TestSwappedForFIFO(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.log", "b.log", "c.log"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(n+"\n"), 0o644))
	}
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "listed-fifo"), 0o644))
	var g got
	opts := Options{}
	collect := collector(&g, &opts)
	inTime(t, 10*time.Second, func() {
		err := Walk(dir, opts, func(e *Entry, r io.Reader) error {
			if e.Path == "a.log" {
				// The folder is listed already: b.log becomes a FIFO.
				b := filepath.Join(dir, "b.log")
				require.NoError(t, os.Remove(b))
				require.NoError(t, syscall.Mkfifo(b, 0o644))
			}
			return collect(e, r)
		})
		require.NoError(t, err)
	})
	assert.Equal(t, []string{"a.log", "c.log"}, g.paths())
	var details []string
	for _, is := range g.issuesOf(facts.IssueUnreadable) {
		details = append(details, is.Detail)
	}
	assert.Contains(t, details, "b.log is a named pipe (FIFO)"+SkippedSuffix)
	assert.Contains(t, details, "listed-fifo is a named pipe (FIFO)"+SkippedSuffix)
}

// TestProcFiles: a file of /proc has no size; it is read, bounded, and one
// that waits for data (/proc/kmsg) ends the reading instead.
func TestProcFiles(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	g := walkPath(t, "/proc/self/status", Options{})
	require.Len(t, g.entries, 1)
	assert.Contains(t, g.entries[0].Content, "Name:")
	if f, err := os.Open("/proc/kmsg"); err == nil {
		f.Close()
		inTime(t, 10*time.Second, func() { walkPath(t, "/proc/kmsg", Options{}) })
	}
}

// overlappingZip is a zip whose central directory names n entries that all
// point at the same compressed bytes: a few KB expand n times.
func overlappingZip(t *testing.T, n int, content []byte) []byte {
	var c bytes.Buffer
	fw, err := flate.NewWriter(&c, 9)
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	crc := crc32.ChecksumIEEE(content)
	le := binary.LittleEndian
	var out bytes.Buffer
	local := make([]byte, 30)
	le.PutUint32(local, 0x04034b50)
	le.PutUint16(local[4:], 20)
	le.PutUint16(local[8:], 8)
	le.PutUint32(local[14:], crc)
	le.PutUint32(local[18:], uint32(c.Len()))
	le.PutUint32(local[22:], uint32(len(content)))
	le.PutUint16(local[26:], 10)
	out.Write(local)
	out.WriteString("server.log")
	out.Write(c.Bytes())
	cdStart := out.Len()
	for i := range n {
		name := []byte(strings.Repeat("x", 3) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".log")
		h := make([]byte, 46)
		le.PutUint32(h, 0x02014b50)
		le.PutUint16(h[4:], 20)
		le.PutUint16(h[6:], 20)
		le.PutUint16(h[10:], 8)
		le.PutUint32(h[16:], crc)
		le.PutUint32(h[20:], uint32(c.Len()))
		le.PutUint32(h[24:], uint32(len(content)))
		le.PutUint16(h[28:], uint16(len(name)))
		out.Write(h)
		out.Write(name)
	}
	end := make([]byte, 22)
	le.PutUint32(end, 0x06054b50)
	le.PutUint16(end[8:], uint16(n))
	le.PutUint16(end[10:], uint16(n))
	le.PutUint32(end[12:], uint32(out.Len()-cdStart))
	le.PutUint32(end[16:], uint32(cdStart))
	out.Write(end)
	return out.Bytes()
}

// TestOverlappingZip: entries that share their compressed data are read
// once; the others are skipped as a zip bomb (issue 18, item 2).
func TestOverlappingZip(t *testing.T) {
	content := bytes.Repeat([]byte("INFO 2026-03-04 05:06:07 decode batch, #running-req: 1\n"), 20000)
	data := overlappingZip(t, 200, content)
	path := writeFile(t, "bomb.zip", data)
	for _, walk := range []func() got{
		func() got { return walkBytes(t, "bomb.zip", data, Options{}) }, // held in memory
		func() got { return walkPath(t, path, Options{}) },              // read in place
	} {
		var g got
		inTime(t, 20*time.Second, func() { g = walk() })
		require.Len(t, g.entries, 1, "only the first of the overlapping entries is read")
		assert.Equal(t, string(content), g.entries[0].Content)
		bombs := g.issuesOf(facts.IssueBomb)
		require.Len(t, bombs, 199)
		assert.Contains(t, bombs[0].Detail, "shares its compressed data with entry")
	}

	// An ordinary zip has no overlap.
	ok := walkBytes(t, "ok.zip", makeZip(t, []member{{name: "a.log", body: "a\n"}, {name: "b.log", body: "b\n"}, {name: "c", stored: true, body: "c"}}), Options{})
	assert.Len(t, ok.entries, 3)
	assert.Empty(t, ok.issuesOf(facts.IssueBomb))
}

// TestNewlineDenseGzip: a small gzip of nearly nothing but newlines, under
// the ratio limit, is stopped by the bound of lines per compressed byte
// (issue 18, item 2): it would cost minutes to parse.
func TestNewlineDenseGzip(t *testing.T) {
	blk := bytes.Repeat([]byte{'\n'}, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(blk); i += 2000 {
		blk[i] = byte(32 + r.IntN(90))
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, 9)
	require.NoError(t, err)
	for range 64 {
		_, err = zw.Write(blk)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.Less(t, float64(64<<20)/float64(buf.Len()), 1000.0, "under the ratio limit")
	g := walkBytes(t, "dense.log.gz", buf.Bytes(), Options{})
	require.Len(t, g.entries, 1)
	lines := strings.Count(g.entries[0].Content, "\n")
	assert.Less(t, lines, linesFloor+(1<<20))
	assert.Contains(t, g.issue(t, facts.IssueBomb).Detail, "lines per compressed byte")

	// A log of ordinary lines, however long, is not stopped.
	var log bytes.Buffer
	for i := range 300000 {
		log.WriteString("[2026-03-04 05:06:07] Decode batch. #running-req: 1, #token: ")
		log.WriteString(strings.Repeat("1", i%7+1))
		log.WriteString("\n")
	}
	g = walkBytes(t, "ok.log.gz", gz(t, log.Bytes()), Options{})
	assert.Empty(t, g.issuesOf(facts.IssueBomb))
	assert.Equal(t, log.String(), g.entries[0].Content)
}
