package bundle

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// sample is a small bundle in the shape `coroner collect` and users make:
// a server log, snapshots in a folder, an empty file.
var sample = []member{
	{name: "server.log", body: "[2026-11-30 04:28:10 TP0] avail mem=139.29 GB of 139.80 GB\n" +
		"[2026-11-30 04:28:10 TP0] KV Cache is allocated. holding 132.32 GB\n" +
		"[2026-11-30 04:28:45 TP0] allocation failed\r\n"},
	{name: "snap/ps_aux.txt", body: "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n" +
		"root           1  0.0  0.0   4364  3328 ?        Ss   04:20   0:00 /bin/bash\n"},
	{name: "snap/captured_at.txt", body: "2026-11-30T04:29:00Z\n"},
	{name: "snap/empty.txt", body: ""},
}

// sampleWant is the (path, content) list every form of the sample gives,
// in walk order: directories are walked in name order, archives in the
// order they were written, which is the same here.
func sampleWant() map[string]string {
	out := map[string]string{}
	for _, m := range sample {
		out[m.name] = m.body
	}
	return out
}

// sampleTar writes the sample with directory entries, as tar(1) would.
func sampleTar(t testing.TB) []byte {
	ms := []member{sample[0], {name: "snap/", typ: tar.TypeDir}}
	ms = append(ms, sample[1:]...)
	return makeTar(t, ms)
}

func TestFormsGiveTheSameEntries(t *testing.T) {
	tarb := sampleTar(t)
	zipb := makeZip(t, append([]member{{name: "snap/"}}, sample...))
	dir := t.TempDir()
	for _, m := range sample {
		p := filepath.Join(dir, "bundle", filepath.FromSlash(m.name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(m.body), 0o644))
	}

	tests := []struct {
		name      string
		data      []byte // nil: walk dirPath
		dirPath   string
		container string
	}{
		{name: "bundle", dirPath: filepath.Join(dir, "bundle"), container: "dir"},
		{name: "bundle.tar", data: tarb, container: "tar"},
		{name: "bundle.tar.gz", data: gz(t, tarb), container: "tar.gz"},
		{name: "bundle.tgz", data: gz(t, tarb), container: "tar.gz"},
		{name: "bundle.tar.zst", data: zst(t, tarb), container: "tar.zst"},
		{name: "bundle.tar.xz", data: xzc(t, tarb), container: "tar.xz"},
		{name: "bundle.zip", data: zipb, container: "zip"},
		// Extensions lie; content decides.
		{name: "zstd-named.tar.gz", data: zst(t, tarb), container: "tar.zst"},
		{name: "tar-named.zip", data: tarb, container: "tar"},
		{name: "zip-named.tar", data: zipb, container: "zip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forms := map[string]got{}
			if tt.data == nil {
				forms["path"] = walkPath(t, tt.dirPath, Options{})
			} else {
				forms["path"] = walkPath(t, writeFile(t, tt.name, tt.data), Options{})
				forms["reader"] = walkBytes(t, tt.name, tt.data, Options{})
				forms["pipe"] = func() got {
					var g got
					opts := Options{}
					fn := collector(&g, &opts)
					require.NoError(t, WalkReader(tt.name, onlyReader{bytes.NewReader(tt.data)}, opts, fn))
					return g
				}()
			}
			for how, g := range forms {
				assert.Empty(t, g.issues, how)
				assert.Equal(t, sampleWant(), g.contents(), how)
				assert.Len(t, g.entries, len(sample), how)
				for _, e := range g.entries {
					assert.Equal(t, tt.container, e.Container, "%s %s", how, e.Path)
					assert.NoError(t, e.Err, "%s %s", how, e.Path)
					assert.Equal(t, int64(len(sampleWant()[e.Path])), e.Size, "%s %s", how, e.Path)
					if tt.container != "dir" {
						assert.True(t, e.ModTime.Equal(mtime), "%s %s mtime %v", how, e.Path, e.ModTime)
					}
				}
			}
		})
	}
}

func TestDirectoryOrder(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b.txt", "a/z.txt", "a.txt", "a/b/c.txt", "C.txt"} {
		fp := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(fp), 0o755))
		require.NoError(t, os.WriteFile(fp, []byte(p), 0o644))
	}
	for range 3 {
		g := walkPath(t, dir, Options{})
		// Depth first, each directory in byte order of names.
		assert.Equal(t, []string{"C.txt", "a/b/c.txt", "a/z.txt", "a.txt", "b.txt"}, g.paths())
		assert.Equal(t, "a/b/c.txt", g.contents()["a/b/c.txt"])
	}
}

func TestSingleCompressedFiles(t *testing.T) {
	body := sample[0].body
	tests := []struct {
		name, wantPath, container string
		data                      []byte
	}{
		{"server.log.gz", "server.log", "gzip", gz(t, []byte(body))},
		{"server.log.zst", "server.log", "zstd", zst(t, []byte(body))},
		{"server.log.zstd", "server.log", "zstd", zst(t, []byte(body))},
		{"server.log.xz", "server.log", "xz", xzc(t, []byte(body))},
		{"SERVER.LOG.GZ", "SERVER.LOG", "gzip", gz(t, []byte(body))},
		// The name lies about the compression: the suffix still goes.
		{"server.log.gz", "server.log", "xz", xzc(t, []byte(body))},
		// No suffix to drop.
		{"server", "server", "gzip", gz(t, []byte(body))},
		{"server.log", "server.log", "file", []byte(body)},
		// Concatenated gzip members, as logrotate and `cat a.gz b.gz` make.
		{"two.log.gz", "two.log", "gzip", append(gz(t, []byte(body[:20])), gz(t, []byte(body[20:]))...)},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.container, func(t *testing.T) {
			for _, g := range []got{walkBytes(t, tt.name, tt.data, Options{}), walkPath(t, writeFile(t, tt.name, tt.data), Options{})} {
				require.Len(t, g.entries, 1)
				e := g.entries[0]
				assert.Equal(t, tt.wantPath, e.Path)
				assert.Equal(t, tt.container, e.Container)
				assert.Equal(t, body, e.Content)
				assert.NoError(t, e.Err)
				assert.Empty(t, g.issues)
			}
		})
	}
}

func TestStdin(t *testing.T) {
	tarb := sampleTar(t)
	tests := []struct {
		name      string
		data      []byte
		container string
		wantPaths []string
	}{
		{"tar.gz", gz(t, tarb), "tar.gz", []string{"server.log", "snap/ps_aux.txt", "snap/captured_at.txt", "snap/empty.txt"}},
		{"zip", makeZip(t, sample), "zip", []string{"server.log", "snap/ps_aux.txt", "snap/captured_at.txt", "snap/empty.txt"}},
		{"zip.gz", gz(t, makeZip(t, sample)), "zip.gz", []string{"server.log", "snap/ps_aux.txt", "snap/captured_at.txt", "snap/empty.txt"}},
		{"plain", []byte(sample[0].body), "file", []string{"stdin"}},
		{"gzip", gz(t, []byte(sample[0].body)), "gzip", []string{"stdin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g got
			opts := Options{}
			fn := collector(&g, &opts)
			require.NoError(t, WalkReader("", onlyReader{bytes.NewReader(tt.data)}, opts, fn))
			assert.Empty(t, g.issues)
			assert.Equal(t, tt.wantPaths, g.paths())
			for _, e := range g.entries {
				assert.Equal(t, tt.container, e.Container)
				if e.Path != "stdin" {
					assert.Equal(t, sampleWant()[e.Path], e.Content)
				} else {
					assert.Equal(t, sample[0].body, e.Content)
				}
			}
		})
	}

	t.Run("os stdin file", func(t *testing.T) {
		// A redirected stdin is a regular file, read in place, past what was
		// already consumed.
		p := writeFile(t, "in", append([]byte("JUNK"), makeZip(t, sample)...))
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.Seek(4, io.SeekStart)
		require.NoError(t, err)
		var g got
		opts := Options{MaxInMemory: 10} // would refuse to buffer it
		fn := collector(&g, &opts)
		require.NoError(t, WalkReader("stdin", f, opts, fn))
		assert.Empty(t, g.issues)
		assert.Equal(t, sampleWant(), g.contents())
	})

	t.Run("zip over the in-memory limit", func(t *testing.T) {
		data := append(makeZip(t, sample), bytes.Repeat([]byte{0}, 64)...)
		var g got
		opts := Options{MaxInMemory: int64(len(data) - 1)}
		fn := collector(&g, &opts)
		require.NoError(t, WalkReader("stdin", onlyReader{bytes.NewReader(data)}, opts, fn))
		assert.Empty(t, g.entries)
		is := g.issue(t, facts.IssueSizeLimit)
		assert.Equal(t, "stdin", is.Src.File)
		assert.Contains(t, is.Detail, "zip archive stdin does not sit in a file")
		assert.Contains(t, is.Detail, "skipped")
	})
}

func TestWalkErrors(t *testing.T) {
	err := Walk(filepath.Join(t.TempDir(), "missing.tar"), Options{}, func(*Entry, io.Reader) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "open bundle")

	// fn's error stops the walk and comes back as is.
	stop := errors.New("enough")
	n := 0
	err = WalkReader("b.tar", bytes.NewReader(sampleTar(t)), Options{}, func(*Entry, io.Reader) error {
		n++
		return stop
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestFnNeedNotRead(t *testing.T) {
	// fn reads nothing, or a part: the next entries are still right.
	tarb := sampleTar(t)
	ms := append([]member{{name: "app.log.gz", body: string(gz(t, []byte(strings.Repeat("line\n", 5000))))}}, sample...)
	for _, data := range [][]byte{gz(t, tarb), zst(t, makeTar(t, ms)), makeZip(t, ms)} {
		var paths []string
		var contents []string
		i := 0
		err := WalkReader("b", bytes.NewReader(data), Options{}, func(e *Entry, r io.Reader) error {
			i++
			paths = append(paths, e.Path)
			if i%2 == 1 {
				b := make([]byte, 3)
				_, _ = io.ReadFull(r, b)
				return nil
			}
			b, err := io.ReadAll(r)
			require.NoError(t, err)
			contents = append(contents, string(b))
			return nil
		})
		require.NoError(t, err)
		for j, p := range paths {
			if j%2 == 1 {
				assert.Equal(t, sampleWant()[p], contents[j/2], p)
			}
		}
	}
}

func TestDuplicatePaths(t *testing.T) {
	data := makeTar(t, []member{{name: "a.log", body: "one"}, {name: "./a.log", body: "two"}})
	g := walkBytes(t, "b.tar", data, Options{})
	require.Equal(t, []string{"a.log", "a.log"}, g.paths())
	assert.Equal(t, "one", g.entries[0].Content)
	assert.Equal(t, "two", g.entries[1].Content)
	assert.Empty(t, g.issues)
}

func TestCleanPath(t *testing.T) {
	tests := []struct{ in, want, why string }{
		{"a/b.txt", "a/b.txt", ""},
		{"./a//b.txt", "a/b.txt", ""},
		{"a/./b/../c.txt", "a/c.txt", "parent-directory reference"},
		{"../../etc/passwd", "etc/passwd", "parent-directory reference"},
		{"/etc/shadow", "etc/shadow", "absolute path"},
		{"//x/../../y", "y", "absolute path, parent-directory reference"},
		{`..\..\win.ini`, "win.ini", "parent-directory reference"},
		{`logs\server.log`, "logs/server.log", ""},
		{`C:\Windows\x.txt`, "Windows/x.txt", "drive letter, absolute path"},
		{"..", "unnamed", "parent-directory reference"},
		{"", "unnamed", "empty name"},
		{"/", "unnamed", "absolute path"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, why := cleanPath(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.why, why)
		})
	}
}

func TestDetect(t *testing.T) {
	tarb := sampleTar(t)
	v7 := append([]byte(nil), tarb...)
	// An old v7 header: no magic, only the checksum says it is a tar.
	for i := 257; i < 512; i++ {
		v7[i] = 0
	}
	var sum int64
	for i, b := range v7[:512] {
		if i >= 148 && i < 156 {
			b = ' '
		}
		sum += int64(b)
	}
	copy(v7[148:156], []byte(padOctal(sum)))
	tests := []struct {
		name       string
		head       []byte
		tar, zip   bool
		compressed compression
	}{
		{"ustar", tarb, true, false, noCompression},
		{"v7", v7, true, false, noCompression},
		{"v7 bad checksum", append([]byte{'x'}, v7[1:]...), false, false, noCompression},
		{"log", bytes.Repeat([]byte("INFO 07-01 12:00:00 [loader.py:12] loading\n"), 20), false, false, noCompression},
		{"short", []byte("ab"), false, false, noCompression},
		{"zip", []byte("PK\x03\x04rest"), false, true, noCompression},
		{"empty zip", []byte("PK\x05\x06rest"), false, true, noCompression},
		{"gzip", []byte{0x1f, 0x8b, 8, 0}, false, false, gzipped},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0}, false, false, zstded},
		{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0, 0}, false, false, xzed},
		{"xz short", []byte{0xfd, '7', 'z', 'X', 'Z'}, false, false, noCompression},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.tar, isTar(tt.head))
			assert.Equal(t, tt.zip, isZip(tt.head))
			assert.Equal(t, tt.compressed, compressionOf(tt.head))
		})
	}

	g := walkBytes(t, "old.tar", v7, Options{})
	assert.Equal(t, sampleWant(), g.contents())
	assert.Empty(t, g.issues)
}

func padOctal(n int64) string {
	s := strings.Repeat("0", 6) + strconvOctal(n)
	return s[len(s)-6:] + "\x00 "
}

func strconvOctal(n int64) string {
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n&7)}, b...)
		n >>= 3
	}
	return string(b)
}

func TestStripCompressed(t *testing.T) {
	tests := []struct{ in, want string }{
		{"server.log.gz", "server.log"},
		{"logs/server.log.zst", "logs/server.log"},
		{"a.tgz", "a.tar"},
		{"a.txz", "a.tar"},
		{"a.tzst", "a.tar"},
		{"dmesg.xz", "dmesg"},
		{".gz", ".gz"},
		{"dir.gz/x", "dir.gz/x"},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, stripCompressed(tt.in), tt.in)
	}
}

func TestEntryErrorsWrapErrStream(t *testing.T) {
	data := gz(t, []byte(strings.Repeat("x", 100000)))
	data = data[:len(data)/2]
	var readErr error
	err := WalkReader("x.log.gz", bytes.NewReader(data), Options{}, func(e *Entry, r io.Reader) error {
		_, readErr = io.ReadAll(r)
		return nil
	})
	require.NoError(t, err)
	require.Error(t, readErr)
	assert.ErrorIs(t, readErr, ErrStream)
}

func TestModTimes(t *testing.T) {
	stamped := func(body string, at time.Time) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.ModTime = at
		_, _ = w.Write([]byte(body))
		require.NoError(t, w.Close())
		return buf.Bytes()
	}
	gzAt := time.Date(2026, 11, 30, 4, 20, 0, 0, time.UTC)
	tarb := makeTar(t, []member{
		{name: "plain.log.gz", body: string(gz(t, []byte("no stamp")))},
		{name: "stamped.log.gz", body: string(stamped("stamp", gzAt))},
	})
	g := walkBytes(t, "b.tar", tarb, Options{})
	// No stamp in the gzip header: the tar's record of the member.
	assert.True(t, g.entry(t, "plain.log").ModTime.Equal(mtime))
	assert.True(t, g.entry(t, "stamped.log").ModTime.Equal(gzAt))

	// A single file's own mtime is when it was copied: not evidence.
	p := writeFile(t, "x.log.gz", gz(t, []byte("no stamp")))
	assert.True(t, walkPath(t, p, Options{}).entry(t, "x.log").ModTime.IsZero())
	p = writeFile(t, "x.log.gz", stamped("stamp", gzAt))
	assert.True(t, walkPath(t, p, Options{}).entry(t, "x.log").ModTime.Equal(gzAt))
}
