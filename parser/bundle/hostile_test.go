package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

func TestUnsafePaths(t *testing.T) {
	ms := []member{
		{name: "ok.txt", body: "fine"},
		{name: "../../etc/passwd", body: "root:x:0:0"},
		{name: "/abs/evil.sh", body: "rm -rf"},
		{name: "after.txt", body: "still here"},
	}
	want := map[string]string{"ok.txt": "fine", "etc/passwd": "root:x:0:0", "abs/evil.sh": "rm -rf", "after.txt": "still here"}
	for name, data := range map[string][]byte{"b.tar": makeTar(t, ms), "b.zip": makeZip(t, ms), "b.tar.gz": gz(t, makeTar(t, ms))} {
		t.Run(name, func(t *testing.T) {
			g := walkBytes(t, name, data, Options{})
			assert.Equal(t, []string{"ok.txt", "etc/passwd", "abs/evil.sh", "after.txt"}, g.paths())
			assert.Equal(t, want, g.contents())
			is := g.issuesOf(facts.IssueUnsafePath)
			require.Len(t, is, 2)
			assert.Equal(t, "etc/passwd", is[0].Src.File)
			assert.Equal(t, "entry name ../../etc/passwd is unsafe (parent-directory reference): read as etc/passwd", is[0].Detail)
			assert.Equal(t, "abs/evil.sh", is[1].Src.File)
			assert.Equal(t, "entry name /abs/evil.sh is unsafe (absolute path): read as abs/evil.sh", is[1].Detail)
		})
	}
}

func TestLinks(t *testing.T) {
	tarb := makeTar(t, []member{
		{name: "a.txt", body: "A"},
		{name: "shadow", typ: tar.TypeSymlink, link: "/etc/shadow"},
		{name: "hard", typ: tar.TypeLink, link: "a.txt"},
		{name: "up", typ: tar.TypeSymlink, link: "../../outside"},
		{name: "dev/null", typ: tar.TypeChar},
		{name: "fifo", typ: tar.TypeFifo},
		{name: "b.txt", body: "B"},
	})
	g := walkBytes(t, "links.tar", tarb, Options{})
	assert.Equal(t, []string{"a.txt", "shadow", "hard", "up", "b.txt"}, g.paths())
	assert.Equal(t, "A", g.entry(t, "a.txt").Content)
	assert.Equal(t, "B", g.entry(t, "b.txt").Content)
	for path, target := range map[string]string{"shadow": "/etc/shadow", "hard": "a.txt", "up": "../../outside"} {
		e := g.entry(t, path)
		assert.Equal(t, target, e.Link, path)
		assert.True(t, e.NoReader, path)
	}
	links := g.issuesOf(facts.IssueLink)
	require.Len(t, links, 3)
	assert.Equal(t, facts.Issue{Src: facts.Source{File: "shadow"}, Kind: facts.IssueLink,
		Detail: "symlink to /etc/shadow: recorded, not followed"}, links[0])
	assert.Equal(t, facts.Issue{Src: facts.Source{File: "hard"}, Kind: facts.IssueLink,
		Detail: "hard link to a.txt: recorded, not followed"}, links[1])
	skipped := g.issuesOf(facts.IssueUnreadable)
	require.Len(t, skipped, 2)
	assert.Equal(t, "dev/null", skipped[0].Src.File)
	assert.Equal(t, "dev/null is a character device, not a regular file: skipped", skipped[0].Detail)
	assert.Equal(t, "fifo is a fifo, not a regular file: skipped", skipped[1].Detail)

	zipb := makeZip(t, []member{
		{name: "a.txt", body: "A"},
		{name: "shadow", body: "/etc/shadow", mode: fs.ModeSymlink | 0o777},
		{name: "pipe", mode: fs.ModeNamedPipe | 0o644},
		{name: "b.txt", body: "B"},
	})
	g = walkBytes(t, "links.zip", zipb, Options{})
	assert.Equal(t, []string{"a.txt", "shadow", "b.txt"}, g.paths())
	assert.Equal(t, "/etc/shadow", g.entry(t, "shadow").Link)
	assert.True(t, g.entry(t, "shadow").NoReader)
	assert.Equal(t, "B", g.entry(t, "b.txt").Content)
	assert.Equal(t, "symlink to /etc/shadow: recorded, not followed", g.issue(t, facts.IssueLink).Detail)
	assert.Equal(t, "pipe", g.issue(t, facts.IssueUnreadable).Src.File)
}

func TestDirectoryLinksAndSpecialFiles(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.log"), []byte("A"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "b-file-link")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "c-dir-link")))
	haveFifo := syscall.Mkfifo(filepath.Join(dir, "d-fifo"), 0o644) == nil
	require.NoError(t, os.WriteFile(filepath.Join(dir, "e.log"), []byte("E"), 0o644))

	done := make(chan got)
	go func() { done <- walkPath(t, dir, Options{}) }()
	var g got
	select {
	case g = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("walk blocked (opened the fifo?)")
	}
	assert.Equal(t, []string{"a.log", "b-file-link", "c-dir-link", "e.log"}, g.paths())
	assert.Equal(t, filepath.Join(outside, "secret"), g.entry(t, "b-file-link").Link)
	assert.Equal(t, outside, g.entry(t, "c-dir-link").Link)
	assert.True(t, g.entry(t, "c-dir-link").NoReader)
	assert.Equal(t, "E", g.entry(t, "e.log").Content)
	assert.Len(t, g.issuesOf(facts.IssueLink), 2)
	if haveFifo {
		is := g.issue(t, facts.IssueUnreadable)
		assert.Equal(t, "d-fifo", is.Src.File)
		assert.Contains(t, is.Detail, "not a regular file")
	}

	// The root may itself be a link; it is the bundle, so it is followed.
	root := filepath.Join(t.TempDir(), "root-link")
	require.NoError(t, os.Symlink(dir, root))
	g2 := walkPath(t, root, Options{})
	assert.Equal(t, g.paths(), g2.paths())
}

func TestUnreadableFiles(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.log"), []byte("A"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.log"), []byte("B"), 0o000))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "c"), 0o000))
	defer os.Chmod(filepath.Join(dir, "c"), 0o755)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d.log"), []byte("D"), 0o644))
	g := walkPath(t, dir, Options{})
	assert.Equal(t, []string{"a.log", "b.log", "d.log"}, g.paths())
	assert.ErrorIs(t, g.entry(t, "b.log").Err, ErrStream)
	assert.Equal(t, "D", g.entry(t, "d.log").Content)
	is := g.issuesOf(facts.IssueUnreadable)
	require.Len(t, is, 2)
	assert.Equal(t, "b.log", is[0].Src.File)
	assert.Equal(t, "c", is[1].Src.File)
}

var (
	zeroBombOnce sync.Once
	zeroBomb     []byte
)

// zstdZeroBomb is 3 GB of zeros streamed through the zstd encoder: a few
// hundred KB.
func zstdZeroBomb(t testing.TB) []byte {
	zeroBombOnce.Do(func() {
		var buf bytes.Buffer
		enc, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		require.NoError(t, err)
		zeros := make([]byte, 1<<20)
		for range 3 << 10 {
			_, err := enc.Write(zeros)
			require.NoError(t, err)
		}
		require.NoError(t, enc.Close())
		zeroBomb = buf.Bytes()
	})
	return zeroBomb
}

// gzipZeroBomb is 1 GiB of zeros as 64 concatenated gzip members, which
// decompress as one stream.
func gzipZeroBomb(t testing.TB) []byte {
	return bytes.Repeat(gz(t, make([]byte, 16<<20)), 64)
}

func TestBombs(t *testing.T) {
	zbomb := zstdZeroBomb(t)
	require.Less(t, len(zbomb), 2<<20)
	gbomb := gzipZeroBomb(t)
	// The bomb as a member: tar members must be written with their size.
	bombTar := func(compress func(testing.TB, []byte) []byte) []byte {
		return compress(t, makeTar(t, []member{
			{name: "before.txt", body: "before"},
			{name: "bomb.log.gz", body: string(gbomb)},
			{name: "after.txt", body: "after"},
		}))
	}

	tests := []struct {
		name      string
		bundle    string
		data      []byte
		entry     string // where the bomb is reported
		detail    string
		wantPaths []string
		want      map[string]string
	}{
		{name: "zstd 3 GB of zeros", bundle: "zeros.log.zst", data: zbomb, entry: "zeros.log",
			detail: "zstd stream of zeros.log.zst expands", wantPaths: []string{"zeros.log"}},
		{name: "gzip 1 GiB of zeros", bundle: "zeros.log.gz", data: gbomb, entry: "zeros.log",
			detail: "gzip stream of zeros.log.gz expands", wantPaths: []string{"zeros.log"}},
		{name: "gzip bomb member of a tar.zst", bundle: "b.tar.zst", data: bombTar(zst), entry: "bomb.log",
			detail: "gzip stream of bomb.log.gz expands", wantPaths: []string{"before.txt", "bomb.log", "after.txt"},
			want: map[string]string{"before.txt": "before", "after.txt": "after"}},
		{name: "gzip bomb member of a zip", bundle: "b.zip", entry: "bomb.log",
			data:   makeZip(t, []member{{name: "before.txt", body: "before"}, {name: "bomb.log.gz", body: string(gbomb)}, {name: "after.txt", body: "after"}}),
			detail: "gzip stream of bomb.log.gz expands", wantPaths: []string{"before.txt", "bomb.log", "after.txt"},
			want: map[string]string{"before.txt": "before", "after.txt": "after"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			var g got
			var delivered int64
			opts := Options{}
			fn := collector(&g, &opts)
			// Count without keeping the zeros.
			err := WalkReader(tt.bundle, bytes.NewReader(tt.data), opts, func(e *Entry, r io.Reader) error {
				if strings.HasPrefix(e.Path, "zeros") || strings.HasPrefix(e.Path, "bomb") {
					n, err := io.Copy(io.Discard, r)
					delivered += n
					assert.ErrorIs(t, err, ErrStream)
					g.entries = append(g.entries, gotEntry{Path: e.Path, Err: err})
					return nil
				}
				return fn(e, r)
			})
			require.NoError(t, err)
			assert.Less(t, time.Since(start), 20*time.Second)
			assert.Equal(t, tt.wantPaths, g.paths())
			for p, body := range tt.want {
				assert.Equal(t, body, g.entry(t, p).Content, p)
			}
			is := g.issue(t, facts.IssueBomb)
			assert.Equal(t, tt.entry, is.Src.File)
			assert.Contains(t, is.Detail, tt.detail)
			assert.Contains(t, is.Detail, "(over 1000:1): stopped there")
			assert.Contains(t, is.Detail, "in entry "+tt.entry+" it broke at byte")
			assert.Greater(t, delivered, int64(ratioFloor))
			assert.Less(t, delivered, int64(1<<30))
			assert.Len(t, g.issues, 1, "%v", g.issues)
		})
	}

	t.Run("small files that compress well are fine", func(t *testing.T) {
		body := strings.Repeat("x", ratioFloor) // 1 MiB of one byte: over 1000:1
		g := walkBytes(t, "x.log.zst", zst(t, []byte(body)), Options{})
		assert.Empty(t, g.issues)
		assert.Equal(t, body, g.entry(t, "x.log").Content)
	})

	t.Run("sparse tar entry", func(t *testing.T) {
		// A GNU sparse entry that is all hole: 512 MiB out of no data.
		var buf bytes.Buffer
		hdr := makeTar(t, []member{{name: "sparse.bin", body: ""}})[:512]
		h := append([]byte(nil), hdr...)
		h[156] = tar.TypeGNUSparse
		copy(h[124:136], fmt.Sprintf("%011o\x00", 0))       // size in archive
		copy(h[483:495], fmt.Sprintf("%011o\x00", 512<<20)) // real size
		copy(h[257:265], "ustar  \x00")                     // GNU magic
		for i := 329; i < 345; i++ {                        // no devmajor/minor
			h[i] = 0
		}
		setChecksum(h)
		buf.Write(h)
		buf.Write(make([]byte, 1024))
		data := append(buf.Bytes(), makeTar(t, []member{{name: "after.txt", body: "after"}})...)
		var g got
		var delivered int64
		opts := Options{}
		fn := collector(&g, &opts)
		err := WalkReader("sparse.tar", bytes.NewReader(data), opts, func(e *Entry, r io.Reader) error {
			if e.Path == "sparse.bin" {
				delivered, _ = io.Copy(io.Discard, r)
				return nil
			}
			return fn(e, r)
		})
		require.NoError(t, err)
		is := g.issue(t, facts.IssueBomb)
		assert.Equal(t, "sparse.bin", is.Src.File)
		assert.Contains(t, is.Detail, "tar entry sparse.bin expands")
		assert.Less(t, delivered, int64(64<<20))
	})
}

func setChecksum(h []byte) {
	for i := 148; i < 156; i++ {
		h[i] = ' '
	}
	var sum int64
	for _, b := range h[:512] {
		sum += int64(b)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
}

func TestTotalSizeLimit(t *testing.T) {
	ms := []member{
		{name: "a.log", body: strings.Repeat("a", 1000)},
		{name: "b.log", body: strings.Repeat("b", 1000)},
		{name: "c.log", body: strings.Repeat("c", 1000)},
		{name: "d.log", body: strings.Repeat("d", 1000)},
	}
	for name, data := range map[string][]byte{"b.tar.gz": gz(t, makeTar(t, ms)), "b.zip": makeZip(t, ms)} {
		t.Run(name, func(t *testing.T) {
			g := walkBytes(t, name, data, Options{MaxTotalBytes: 2500})
			assert.Equal(t, []string{"a.log", "b.log", "c.log"}, g.paths())
			assert.Equal(t, ms[0].body, g.entries[0].Content)
			assert.Equal(t, ms[1].body, g.entries[1].Content)
			assert.Equal(t, strings.Repeat("c", 500), g.entries[2].Content)
			assert.ErrorIs(t, g.entries[2].Err, ErrStream)
			is := g.issue(t, facts.IssueSizeLimit)
			assert.Equal(t, "c.log", is.Src.File)
			assert.Equal(t, "the bundle's decompressed size passed the limit of 2500 bytes in entry c.log at byte 500: "+
				"reading stopped there; the entries before it were delivered", is.Detail)
			assert.Len(t, g.issues, 1)
		})
	}
	t.Run("exactly at the limit", func(t *testing.T) {
		g := walkBytes(t, "b.tar", makeTar(t, ms), Options{MaxTotalBytes: 4000})
		assert.Len(t, g.entries, 4)
		assert.Empty(t, g.issues)
	})
}

func TestEntryLimit(t *testing.T) {
	many := func(n int) []member {
		ms := make([]member, n)
		for i := range ms {
			ms[i] = member{name: fmt.Sprintf("f/%06d.txt", i), body: "x", stored: true}
		}
		return ms
	}
	tests := []struct {
		name    string
		max     int
		n       int
		archive func(testing.TB, []member) []byte
	}{
		{"tar lowered limit", 1000, 1001, makeTar},
		{"zip lowered limit", 1000, 1001, makeZip},
		{"zip default limit", 0, 100_001, makeZip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.max
			if limit == 0 {
				limit = Defaults().MaxEntries
			}
			data := tt.archive(t, many(tt.n))
			n := 0
			var issues []facts.Issue
			err := WalkReader("many", bytes.NewReader(data), Options{MaxEntries: tt.max, Issue: func(is facts.Issue) { issues = append(issues, is) }},
				func(e *Entry, r io.Reader) error {
					b, err := io.ReadAll(r)
					require.NoError(t, err)
					require.Equal(t, "x", string(b))
					n++
					return nil
				})
			require.NoError(t, err)
			assert.Equal(t, limit, n)
			require.Len(t, issues, 1)
			assert.Equal(t, facts.IssueEntryLimit, issues[0].Kind)
			assert.Equal(t, "many", issues[0].Src.File)
			assert.Equal(t, fmt.Sprintf("the bundle has more than %d entries: stopped before entry f/%06d.txt; the rest was not read", limit, limit),
				issues[0].Detail)
		})
	}
}

func TestTruncatedTarGz(t *testing.T) {
	ms := []member{
		{name: "first.log", body: noise(1, 20000)},
		{name: "second.log", body: noise(2, 20000)},
		{name: "third.log", body: noise(3, 20000)},
	}
	full := gz(t, makeTar(t, ms))
	t.Run("cut before the first tar header", func(t *testing.T) {
		// Too little is left to see a tar: the bundle is one gzip file.
		g := walkBytes(t, "b.tar.gz", full[:36], Options{})
		require.Equal(t, []string{"b.tar"}, g.paths())
		assert.Equal(t, "gzip", g.entries[0].Container)
		assert.ErrorIs(t, g.entries[0].Err, ErrStream)
		is := g.issue(t, facts.IssueTruncated)
		assert.Equal(t, "b.tar", is.Src.File)
		assert.Contains(t, is.Detail, "gzip stream of b.tar.gz is truncated at byte")
	})
	for _, frac := range []float64{0.02, 0.1, 0.4, 0.5, 0.9, 0.99} {
		cut := int(float64(len(full)) * frac)
		t.Run(fmt.Sprintf("cut at %d of %d", cut, len(full)), func(t *testing.T) {
			g := walkBytes(t, "b.tar.gz", full[:cut], Options{})
			is := g.issuesOf(facts.IssueTruncated)
			require.Len(t, is, 1, "%v", g.issues)
			assert.Len(t, g.issues, 1, "%v", g.issues)
			// Entries before the cut are whole; the one it cut is kept in part.
			for i, e := range g.entries {
				body := ms[i].body
				assert.Equal(t, ms[i].name, e.Path)
				if e.Err == nil {
					assert.Equal(t, body, e.Content, e.Path)
					continue
				}
				assert.ErrorIs(t, e.Err, ErrStream)
				assert.True(t, strings.HasPrefix(body, e.Content), e.Path)
				assert.Equal(t, e.Path, is[0].Src.File)
				assert.Contains(t, is[0].Detail, "gzip stream of b.tar.gz is truncated at byte")
				assert.Contains(t, is[0].Detail, fmt.Sprintf("in entry %s it broke at byte %d", e.Path, len(e.Content)))
			}
			if n := len(g.entries); n == 0 || g.entries[n-1].Err == nil {
				// Cut between entries, or in the archive's end.
				assert.Equal(t, "b.tar.gz", is[0].Src.File)
				assert.Contains(t, is[0].Detail, "b.tar.gz")
			}
		})
	}

	t.Run("plain tar cut in an entry", func(t *testing.T) {
		tarb := makeTar(t, ms)
		g := walkBytes(t, "b.tar", tarb[:512+20480+512+700], Options{})
		require.Equal(t, []string{"first.log", "second.log"}, g.paths())
		assert.Equal(t, ms[0].body, g.entries[0].Content)
		assert.Equal(t, ms[1].body[:700], g.entries[1].Content)
		is := g.issue(t, facts.IssueTruncated)
		assert.Equal(t, "second.log", is.Src.File)
		assert.Contains(t, is.Detail, "tar entry second.log is truncated at byte 700")
	})

	t.Run("gzip trailer missing", func(t *testing.T) {
		g := walkBytes(t, "b.tar.gz", full[:len(full)-4], Options{})
		assert.Equal(t, []string{"first.log", "second.log", "third.log"}, g.paths())
		for i, e := range g.entries {
			assert.Equal(t, ms[i].body, e.Content)
		}
		is := g.issue(t, facts.IssueTruncated)
		assert.Equal(t, "b.tar.gz", is.Src.File)
		assert.Contains(t, is.Detail, "it broke after the last entry of b.tar.gz")
	})

	t.Run("garbage after the gzip stream", func(t *testing.T) {
		g := walkBytes(t, "b.tar.gz", append(append([]byte(nil), full...), "garbage"...), Options{})
		assert.Equal(t, []string{"first.log", "second.log", "third.log"}, g.paths())
		for i, e := range g.entries {
			assert.Equal(t, ms[i].body, e.Content)
			assert.NoError(t, e.Err)
		}
		is := g.issue(t, facts.IssueCorrupt)
		assert.Equal(t, "b.tar.gz", is.Src.File)
		assert.Equal(t, "gzip stream of b.tar.gz is followed by data that is not gzip, after byte 64000 of its decompressed output: ignored; "+
			"it broke after the last entry of b.tar.gz, all entries were read", is.Detail)
	})

	t.Run("zero padding after the gzip stream", func(t *testing.T) {
		g := walkBytes(t, "b.tar.gz", append(append([]byte(nil), full...), make([]byte, 10240)...), Options{})
		assert.Len(t, g.entries, 3)
		assert.Empty(t, g.issues)
	})

	t.Run("single gzip file", func(t *testing.T) {
		data := gz(t, []byte(ms[0].body))
		g := walkBytes(t, "first.log.gz", data[:len(data)/2], Options{})
		e := g.entry(t, "first.log")
		assert.True(t, strings.HasPrefix(ms[0].body, e.Content))
		assert.NotEmpty(t, e.Content)
		is := g.issue(t, facts.IssueTruncated)
		assert.Equal(t, "first.log", is.Src.File)
	})

	t.Run("zip", func(t *testing.T) {
		data := makeZip(t, ms)
		g := walkBytes(t, "b.zip", data[:len(data)-30], Options{})
		// The central directory is cut; the entries are read from their
		// local headers.
		assert.Equal(t, []string{"first.log", "second.log", "third.log"}, g.paths())
		for i, e := range g.entries {
			assert.Equal(t, ms[i].body, e.Content)
			assert.NoError(t, e.Err)
		}
		is := g.issue(t, facts.IssueTruncated)
		assert.Equal(t, "b.zip", is.Src.File)
		assert.Contains(t, is.Detail, "zip archive b.zip has no readable central directory")
		assert.Contains(t, is.Detail, "its entries were read from their local headers")
		assert.Len(t, g.issues, 1)
	})
}

func TestZipLocalHeaders(t *testing.T) {
	ms := []member{
		{name: "first.log", body: noise(1, 20000)},
		{name: "logs/", body: ""},
		{name: "../second.log", body: noise(2, 20000)},
		{name: "third.log", body: "third"},
	}
	streamed := makeZip(t, ms) // deflated, sizes in descriptors, as Go and Java write
	sized := func(method uint16) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, m := range ms {
			body := []byte(m.body)
			if strings.HasSuffix(m.name, "/") {
				_, err := zw.CreateRaw(&zip.FileHeader{Name: m.name, Modified: mtime})
				require.NoError(t, err)
				continue
			}
			if method == zip.Deflate {
				var c bytes.Buffer
				fw, err := flate.NewWriter(&c, flate.BestCompression)
				require.NoError(t, err)
				_, _ = fw.Write(body)
				require.NoError(t, fw.Close())
				body = c.Bytes()
			}
			f, err := zw.CreateRaw(&zip.FileHeader{Name: m.name, Method: method, Modified: mtime,
				CRC32: crc32.ChecksumIEEE([]byte(m.body)), CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(m.body))})
			require.NoError(t, err)
			_, err = f.Write(body)
			require.NoError(t, err)
		}
		require.NoError(t, zw.Close())
		return buf.Bytes()
	}
	cutDir := func(b []byte) []byte { return b[:bytes.LastIndex(b, []byte("PK\x01\x02"))+10] }
	wantPaths := []string{"first.log", "second.log", "third.log"}
	for name, data := range map[string][]byte{"streamed": streamed, "stored with sizes": sized(zip.Store), "deflated with sizes": sized(zip.Deflate)} {
		t.Run(name, func(t *testing.T) {
			g := walkBytes(t, "b.zip", cutDir(data), Options{})
			assert.Equal(t, wantPaths, g.paths())
			for i, e := range g.entries {
				want := []member{ms[0], ms[2], ms[3]}[i]
				assert.Equal(t, want.body, e.Content, e.Path)
				assert.NoError(t, e.Err, e.Path)
				if name == "streamed" { // CreateRaw writes no times
					assert.True(t, e.ModTime.Equal(mtime), "%s %v", e.Path, e.ModTime)
				}
			}
			assert.Equal(t, "b.zip", g.issue(t, facts.IssueTruncated).Src.File)
			assert.Equal(t, "entry name ../second.log is unsafe (parent-directory reference): read as second.log",
				g.issue(t, facts.IssueUnsafePath).Detail)
			assert.Len(t, g.issues, 2)

			// Cut inside the second entry's data: the first is whole, the
			// second kept in part.
			i := bytes.Index(data, []byte("../second.log")) + len("../second.log") + 200
			g = walkBytes(t, "b.zip", data[:i], Options{})
			assert.Equal(t, wantPaths[:2], g.paths())
			assert.Equal(t, ms[0].body, g.entries[0].Content)
			assert.ErrorIs(t, g.entries[1].Err, ErrStream)
			assert.True(t, strings.HasPrefix(ms[2].body, g.entries[1].Content))
			trunc := g.issuesOf(facts.IssueTruncated)
			require.Len(t, trunc, 2, "%v", g.issues)
			assert.Equal(t, "b.zip", trunc[0].Src.File)
			assert.Equal(t, "second.log", trunc[1].Src.File)
			assert.Contains(t, trunc[1].Detail, "zip entry second.log is truncated")

			// A flipped byte in the first entry's data.
			bad := append([]byte(nil), cutDir(data)...)
			j := bytes.Index(bad, []byte("first.log")) + len("first.log") + 300
			bad[j] ^= 0x01
			g = walkBytes(t, "b.zip", bad, Options{})
			assert.Equal(t, "first.log", g.issue(t, facts.IssueCorrupt).Src.File)
		})
	}
}

func TestCorrupt(t *testing.T) {
	ms := []member{
		{name: "first.log", body: strings.Repeat("first line\n", 3000)},
		{name: "second.log", body: strings.Repeat("second line\n", 3000)},
	}

	t.Run("zstd", func(t *testing.T) {
		data := zst(t, makeTar(t, ms))
		bad := append([]byte(nil), data...)
		for i := len(bad) / 2; i < len(bad)/2+16; i++ {
			bad[i] ^= 0x5a
		}
		g := walkBytes(t, "b.tar.zst", bad, Options{})
		is := g.issuesOf(facts.IssueCorrupt)
		require.Len(t, is, 1, "%v", g.issues)
		assert.Contains(t, is[0].Detail, "zstd stream of b.tar.zst is corrupt at byte")
		for i, e := range g.entries {
			if e.Err == nil {
				assert.Equal(t, ms[i].body, e.Content)
			} else {
				assert.Equal(t, e.Path, is[0].Src.File)
				assert.True(t, strings.HasPrefix(ms[i].body, e.Content))
			}
		}
	})

	t.Run("zstd member of a tar", func(t *testing.T) {
		z := zst(t, []byte(ms[0].body))
		z[len(z)-2] ^= 0xff // the checksum
		data := makeTar(t, []member{{name: "first.log.zst", body: string(z)}, ms[1]})
		g := walkBytes(t, "b.tar", data, Options{})
		assert.Equal(t, []string{"first.log", "second.log"}, g.paths())
		assert.Equal(t, ms[1].body, g.entries[1].Content)
		assert.ErrorIs(t, g.entries[0].Err, ErrStream)
		is := g.issue(t, facts.IssueCorrupt)
		assert.Equal(t, "first.log", is.Src.File)
		assert.Contains(t, is.Detail, "zstd stream of first.log.zst is corrupt")
	})

	t.Run("zip checksum", func(t *testing.T) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, m := range ms {
			f, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
			require.NoError(t, err)
			_, _ = f.Write([]byte(m.body))
		}
		require.NoError(t, zw.Close())
		data := buf.Bytes()
		i := bytes.Index(data, []byte("first line"))
		data[i+100] = 'X'
		g := walkBytes(t, "b.zip", data, Options{})
		assert.Equal(t, []string{"first.log", "second.log"}, g.paths())
		assert.Equal(t, ms[1].body, g.entries[1].Content)
		assert.Len(t, g.entries[0].Content, len(ms[0].body))
		assert.ErrorIs(t, g.entries[0].Err, ErrStream)
		is := g.issue(t, facts.IssueCorrupt)
		assert.Equal(t, "first.log", is.Src.File)
		assert.Contains(t, is.Detail, "zip entry first.log is corrupt")
		assert.Contains(t, is.Detail, "checksum")
	})

	t.Run("bad tar header", func(t *testing.T) {
		data := makeTar(t, ms)
		h := 512 + (len(ms[0].body)+511)/512*512
		data[h+100] ^= 0xff // the mode field of the second header
		g := walkBytes(t, "b.tar", data, Options{})
		assert.Equal(t, []string{"first.log"}, g.paths())
		assert.Equal(t, ms[0].body, g.entries[0].Content)
		is := g.issue(t, facts.IssueCorrupt)
		assert.Equal(t, "b.tar", is.Src.File)
		assert.Contains(t, is.Detail, "tar archive b.tar has a bad header after entry first.log, at byte")
	})

	t.Run("gzip header", func(t *testing.T) {
		data := gz(t, []byte(ms[0].body))
		data[2] = 7 // not deflate
		g := walkBytes(t, "dir.tar", makeTar(t, []member{{name: "x.log.gz", body: string(data)}, ms[1]}), Options{})
		// The entry is listed, unreadable, with its issue; the walk goes on.
		assert.Equal(t, []string{"x.log.gz", "second.log"}, g.paths())
		assert.ErrorIs(t, g.entries[0].Err, ErrStream)
		is := g.issue(t, facts.IssueCorrupt)
		assert.Equal(t, "x.log.gz", is.Src.File)
		assert.Contains(t, is.Detail, "gzip stream of x.log.gz is corrupt")
		assert.Equal(t, ms[1].body, g.entries[1].Content)
	})

	t.Run("xz dictionary over the limit", func(t *testing.T) {
		data := xzc(t, []byte(ms[0].body))
		dict, ok := xzDictCap(data)
		require.True(t, ok)
		assert.Equal(t, uint64(1<<20), dict)
		// Ask for 1.5 GiB in the LZMA2 properties (the block CRC is not
		// what is checked first).
		i := bytes.Index(data[12:40], []byte{0x21, 0x01})
		require.GreaterOrEqual(t, i, 0)
		data[12+i+2] = 37
		dict, ok = xzDictCap(data)
		require.True(t, ok)
		assert.Equal(t, uint64(3<<29), dict)
		g := walkBytes(t, "x.log.xz", data, Options{})
		is := g.issue(t, facts.IssueSizeLimit)
		assert.Equal(t, "x.log.xz", is.Src.File)
		assert.Contains(t, is.Detail, "needs a dictionary of 1610612736 bytes")
		assert.ErrorIs(t, g.entry(t, "x.log.xz").Err, ErrStream)
	})

	t.Run("zstd window over the limit", func(t *testing.T) {
		data := zst(t, []byte(strings.Repeat("0123456789", 300000)))
		g := walkBytes(t, "x.log.zst", data, Options{MaxZstdWindow: 64 << 10})
		is := g.issue(t, facts.IssueSizeLimit)
		assert.Equal(t, "x.log", is.Src.File)
		assert.Contains(t, is.Detail, "needs a window larger than the limit of 65536 bytes")
	})
}

func TestNested(t *testing.T) {
	deep := gz(t, makeTar(t, []member{{name: "deep.txt", body: "too deep"}}))
	inner := makeZip(t, []member{
		{name: "mid.txt", body: "middle"},
		{name: "logs.tar.gz", body: string(deep)},
		{name: "rotated.log.gz", body: string(gz(t, []byte("rotated")))},
	})
	logs := gz(t, makeTar(t, []member{{name: "a.log", body: "A"}, {name: "../b.log", body: "B"}}))
	outer := makeTar(t, []member{
		{name: "top.txt", body: "top"},
		{name: "inner.zip", body: string(inner)},
		{name: "svc.log.gz", body: string(gz(t, []byte("service log")))},
		{name: "logs.tgz", body: string(logs)},
		{name: "bottom.txt", body: "bottom"},
	})
	for name, data := range map[string][]byte{"b.tar": outer, "b.tar.zst": zst(t, outer)} {
		t.Run(name, func(t *testing.T) {
			g := walkBytes(t, name, data, Options{})
			outerLabel := strings.TrimPrefix(name, "b.")
			assert.Equal(t, []string{
				"top.txt", "inner.zip/mid.txt", "inner.zip/logs.tar.gz", "inner.zip/rotated.log.gz",
				"svc.log", "logs.tgz/a.log", "logs.tgz/b.log", "bottom.txt",
			}, g.paths())
			assert.Equal(t, "middle", g.entry(t, "inner.zip/mid.txt").Content)
			assert.Equal(t, outerLabel+" > zip", g.entry(t, "inner.zip/mid.txt").Container)
			// Deeper than one level: delivered as is.
			assert.Equal(t, string(deep), g.entry(t, "inner.zip/logs.tar.gz").Content)
			assert.Equal(t, "service log", g.entry(t, "svc.log").Content)
			assert.Equal(t, outerLabel+" > gzip", g.entry(t, "svc.log").Container)
			assert.Equal(t, "A", g.entry(t, "logs.tgz/a.log").Content)
			assert.Equal(t, outerLabel+" > tar.gz", g.entry(t, "logs.tgz/a.log").Container)
			assert.Equal(t, "B", g.entry(t, "logs.tgz/b.log").Content)
			assert.Equal(t, "bottom", g.entry(t, "bottom.txt").Content)

			nested := g.issuesOf(facts.IssueNested)
			require.Len(t, nested, 2)
			assert.Equal(t, "inner.zip/logs.tar.gz", nested[0].Src.File)
			assert.Equal(t, "nested archive deeper than one level: not expanded (gzip stream inside inner.zip); delivered as is", nested[0].Detail)
			assert.Equal(t, "inner.zip/rotated.log.gz", nested[1].Src.File)
			unsafe := g.issue(t, facts.IssueUnsafePath)
			assert.Equal(t, "logs.tgz/b.log", unsafe.Src.File)
			assert.Len(t, g.issues, 3)
		})
	}

	t.Run("directory with archives", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "inner.zip"), inner, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "svc.log.gz"), gz(t, []byte("service log")), 0o644))
		g := walkPath(t, dir, Options{})
		assert.Equal(t, []string{"inner.zip/mid.txt", "inner.zip/logs.tar.gz", "inner.zip/rotated.log.gz", "svc.log"}, g.paths())
		assert.Equal(t, "dir > zip", g.entry(t, "inner.zip/mid.txt").Container)
		assert.Equal(t, "dir > gzip", g.entry(t, "svc.log").Container)
		assert.Len(t, g.issuesOf(facts.IssueNested), 2)
	})

	t.Run("compressed twice", func(t *testing.T) {
		g := walkBytes(t, "x.log.gz", gz(t, gz(t, []byte("twice"))), Options{})
		e := g.entry(t, "x.log")
		assert.Equal(t, string(gz(t, []byte("twice"))), e.Content)
		is := g.issue(t, facts.IssueNested)
		assert.Equal(t, "x.log", is.Src.File)
	})

	t.Run("zip in a tar over the in-memory limit", func(t *testing.T) {
		g := walkBytes(t, "b.tar", outer, Options{MaxInMemory: int64(len(inner) - 1)})
		assert.NotContains(t, g.paths(), "inner.zip/mid.txt")
		assert.Contains(t, g.paths(), "bottom.txt")
		is := g.issue(t, facts.IssueSizeLimit)
		assert.Equal(t, "inner.zip", is.Src.File)
	})
}

// TestNoWrites walks a hostile tar that sits in a temp dir and checks that
// the tree around it is the same after the walk.
func TestNoWrites(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(work, 0o755))
	data := makeTar(t, []member{
		{name: "../../outside/evil.txt", body: "written?"},
		{name: "/tmp/abs-evil.txt", body: "written?"},
		{name: "up", typ: tar.TypeSymlink, link: "../../outside"},
		{name: "up/through-link.txt", body: "written?"},
		{name: "hard", typ: tar.TypeLink, link: "../../outside/evil.txt"},
		{name: "ok.txt", body: "ok"},
	})
	p := filepath.Join(work, "hostile.tar")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	gzp := filepath.Join(work, "hostile.tar.gz")
	require.NoError(t, os.WriteFile(gzp, gz(t, data), 0o644))
	before := snapshot(t, root)
	t.Chdir(work) // a relative write would land here
	for _, path := range []string{p, gzp, work} {
		g := walkPath(t, path, Options{})
		assert.NotEmpty(t, g.entries)
	}
	assert.Equal(t, before, snapshot(t, root))
	_, err := os.Stat("/tmp/abs-evil.txt")
	assert.True(t, os.IsNotExist(err))
}

func snapshot(t *testing.T, root string) []string {
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("%s %v %d %d", p, info.Mode(), info.Size(), info.ModTime().UnixNano()))
		return nil
	}))
	return out
}

// noise is text that does not compress much, so that a cut at a byte
// offset falls where the test means it to.
func noise(seed, n int) string {
	b := make([]byte, n)
	x := uint32(seed)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = 'a' + byte(x>>24)%26
	}
	return string(b)
}

// TestZipLocalHeaderCut cuts a zip with no central directory inside the
// second entry's local header: in its fixed part, its name or its extra
// field. The walk keeps the first entry and says where the stream ended;
// a cut in the name or the extra field was once lost (the read's error
// was shadowed) and read as an entry with a partial name.
func TestZipLocalHeaderCut(t *testing.T) {
	ms := []member{
		{name: "first.log", body: noise(1, 5000)},
		{name: "second-with-a-long-name.log", body: noise(2, 5000)},
	}
	data := makeZip(t, ms) // Modified set: each local header has an extended-timestamp extra field
	second := bytes.Index(data[4:], []byte("PK\x03\x04")) + 4
	require.Greater(t, second, 4)
	nameLen := int(binary.LittleEndian.Uint16(data[second+26:]))
	extraLen := int(binary.LittleEndian.Uint16(data[second+28:]))
	require.Equal(t, len(ms[1].name), nameLen)
	require.Positive(t, extraLen, "the writer gave the entry no extra field")
	nameAt := second + 30
	extraAt := nameAt + nameLen
	for _, tc := range []struct {
		name string
		cut  int
		want string
	}{
		{"in the fixed header", second + 20, fmt.Sprintf("ends after entry first.log, at byte %d", second+20)},
		{"in the name", nameAt + 5, fmt.Sprintf("ends inside an entry header after entry first.log, at byte %d", nameAt+5)},
		{"in the extra field", extraAt + extraLen/2, fmt.Sprintf("ends inside an entry header after entry first.log, at byte %d", extraAt+extraLen/2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := walkBytes(t, "b.zip", data[:tc.cut], Options{})
			assert.Equal(t, []string{"first.log"}, g.paths())
			assert.Equal(t, ms[0].body, g.entries[0].Content)
			assert.NoError(t, g.entries[0].Err)
			// One issue says the directory is missing, the other where
			// the entries stopped.
			trunc := g.issuesOf(facts.IssueTruncated)
			require.Len(t, trunc, 2, "%v", g.issues)
			assert.Contains(t, trunc[0].Detail, "has no readable central directory")
			assert.Equal(t, "b.zip", trunc[1].Src.File)
			assert.Equal(t, "zip archive b.zip, read from its entry headers, "+tc.want+": the rest was not read", trunc[1].Detail)
			assert.Len(t, g.issues, 2, "%v", g.issues)
		})
	}
}
