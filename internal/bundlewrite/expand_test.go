package bundlewrite

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// tarOf builds a tar; a member whose name ends in "@" is a symlink to its
// content.
func tarOf(t *testing.T, members ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(members); i += 2 {
		name, data := members[i], members[i+1]
		if strings.HasSuffix(name, "@") {
			require.NoError(t, tw.WriteHeader(&tar.Header{Name: strings.TrimSuffix(name, "@"), Typeflag: tar.TypeSymlink, Linkname: data}))
			continue
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(data))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func zipOf(t *testing.T, members ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(members); i += 2 {
		w, err := zw.Create(members[i])
		require.NoError(t, err)
		_, err = w.Write([]byte(members[i+1]))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func gzOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func zstOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func xzOf(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func bz2Of(t *testing.T, data []byte) []byte {
	t.Helper()
	cmd := exec.Command("bzip2", "-c")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("bzip2 builds the .bz2 (compress/bzip2 only reads): %v", err)
	}
	return out
}

func utf16Of(s string, bigEndian bool) []byte {
	out := []byte{0xff, 0xfe}
	if bigEndian {
		out = []byte{0xfe, 0xff}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// expanded is what Expand gave, read back: packed entries' content, and
// skipped entries' reasons.
type expanded struct {
	content map[string]string
	text    map[string]bool
	notes   map[string]string
	skipped map[string]string
}

func expandFile(t *testing.T, name string, data []byte, opts ExpandOptions) expanded {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	x := expanded{content: map[string]string{}, text: map[string]bool{}, notes: map[string]string{}, skipped: map[string]string{}}
	for _, e := range Expand(p, name, time.Time{}, opts) {
		if e.Skipped != "" {
			x.skipped[e.Name] = e.Skipped
			continue
		}
		// Every entry opens again and again with the same content, of
		// exactly its size.
		for range 2 {
			rc, err := e.Open()
			require.NoError(t, err, e.Name)
			b, err := io.ReadAll(rc)
			require.NoError(t, err, e.Name)
			require.NoError(t, rc.Close())
			require.Len(t, b, int(e.Size), e.Name)
			x.content[e.Name] = string(b)
		}
		x.text[e.Name] = e.Text
		x.notes[e.Name] = e.Note
	}
	return x
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestExpandCompressed(t *testing.T) {
	log := []byte("[2026-01-01] line one\nline two\n")
	tests := []struct {
		name, file string
		data       []byte
		want, note string
	}{
		{"plain text", "a.log", log, "a.log", ""},
		{"gzip", "a.log.gz", gzOf(t, log), "a.log", "decompressed from gzip"},
		{"gzip twice", "a.log.gz.gz", gzOf(t, gzOf(t, log)), "a.log", "decompressed from gzip, decompressed from gzip"},
		{"zstd", "a.log.zst", zstOf(t, log), "a.log", "decompressed from zstd"},
		{"xz", "a.log.xz", xzOf(t, log), "a.log", "decompressed from xz"},
		{"bzip2", "a.log.bz2", bz2Of(t, log), "a.log", "decompressed from bzip2"},
		{"content decides, not the name", "a.log.gz", zstOf(t, log), "a.log", "decompressed from zstd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := expandFile(t, tc.file, tc.data, ExpandOptions{})
			assert.Empty(t, x.skipped)
			assert.Equal(t, map[string]string{tc.want: string(log)}, x.content)
			assert.True(t, x.text[tc.want])
			assert.Equal(t, tc.note, x.notes[tc.want])
		})
	}
}

func TestExpandArchives(t *testing.T) {
	inner := tarOf(t,
		"logs/a.log", "alpha\n",
		"logs/b.log.gz", string(gzOf(t, []byte("beta\n"))),
		"link@", "/etc/shadow",
		"deeper.tar", string(tarOf(t, "c.log", "gamma\n")),
		"in.zip", string(zipOf(t, "d.log", "delta\n")),
	)
	x := expandFile(t, "bundle.tar.gz", gzOf(t, inner), ExpandOptions{})
	assert.Equal(t, map[string]string{
		"bundle.tar.gz/logs/a.log":       "alpha\n",
		"bundle.tar.gz/logs/b.log":       "beta\n",
		"bundle.tar.gz/deeper.tar/c.log": "gamma\n",
		"bundle.tar.gz/in.zip/d.log":     "delta\n",
	}, x.content)
	assert.Equal(t, "member of bundle.tar.gz", x.notes["bundle.tar.gz/logs/a.log"])
	assert.Equal(t, "member of bundle.tar.gz, decompressed from gzip", x.notes["bundle.tar.gz/logs/b.log"])
	assert.Equal(t, map[string]string{
		"bundle.tar.gz/link": "a link in bundle.tar.gz (to /etc/shadow): links are recorded, never followed",
	}, x.skipped)

	z := expandFile(t, "z.zip", zipOf(t, "cfg.yaml", "k: v\n", "inner.tar.gz", string(gzOf(t, tarOf(t, "i.log", "iota\n")))), ExpandOptions{})
	assert.Equal(t, map[string]string{"z.zip/cfg.yaml": "k: v\n", "z.zip/inner.tar.gz/i.log": "iota\n"}, z.content)
}

func TestExpandUTF16(t *testing.T) {
	s := "DB_PASSWORD=x\r\nnaïve 😀 line\n"
	for _, be := range []bool{false, true} {
		x := expandFile(t, "w.txt", utf16Of(s, be), ExpandOptions{})
		assert.Equal(t, map[string]string{"w.txt": s}, x.content)
		assert.True(t, x.text["w.txt"])
		assert.Contains(t, x.notes["w.txt"], "decoded from UTF-16")
	}
	// An unpaired surrogate is U+FFFD; an odd last byte is dropped.
	bad := append(utf16Of("a", false), 0x00, 0xd8, 'b', 0, 'c')
	x := expandFile(t, "bad.txt", bad, ExpandOptions{})
	assert.Equal(t, "a\uFFFDb", x.content["bad.txt"])
}

// TestExpandUnreadable: what coroner cannot read as text is left out with
// a reason, or packed as is with KeepBinary (--no-redact).
func TestExpandUnreadable(t *testing.T) {
	tests := []struct {
		file string
		data []byte
		why  string
	}{
		{"a.lz4", append([]byte{0x04, 0x22, 0x4d, 0x18}, "api_key=x\n"...), "lz4 stream: coroner has no lz4 decoder"},
		{"b.7z", append([]byte("7z\xbc\xaf\x27\x1c"), "x"...), "7z archive: coroner cannot read 7z"},
		{"c.rar", []byte("Rar!\x1a\x07\x00x"), "rar archive"},
		{"core", append([]byte{0x7f, 'E', 'L', 'F'}, make([]byte, 4096)...), "binary content: it cannot be read as text"},
		{"random.bin", bytes.Repeat([]byte{0x8f, 0x01, 0xc3, 0x28, 0x02}, 400), "binary content"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			x := expandFile(t, tc.file, tc.data, ExpandOptions{})
			assert.Empty(t, x.content)
			assert.Contains(t, x.skipped[tc.file], tc.why)
			kept := expandFile(t, tc.file, tc.data, ExpandOptions{KeepBinary: true})
			assert.Equal(t, map[string]string{tc.file: string(tc.data)}, kept.content)
			assert.False(t, kept.text[tc.file])
		})
	}
	// Latin-1 and ANSI colours are text.
	x := expandFile(t, "latin1.log", []byte("caf\xe9 \x1b[31mred\x1b[0m ok\n"), ExpandOptions{})
	assert.True(t, x.text["latin1.log"])
}

func TestExpandLimits(t *testing.T) {
	log := []byte("deep\n")
	data := log
	for range 8 {
		data = gzOf(t, data)
	}
	x := expandFile(t, "deep.gz", data, ExpandOptions{})
	assert.Empty(t, x.content)
	require.Len(t, x.skipped, 1)
	assert.Contains(t, x.skipped[keys(x.skipped)[0]], "nested deeper than 6 levels")

	bomb := gzOf(t, make([]byte, 2<<20))
	x = expandFile(t, "bomb.log.gz", bomb, ExpandOptions{MaxDecompressed: 1 << 20})
	assert.Contains(t, x.skipped["bomb.log.gz"], "more than 1 MiB decompressed")

	// Members over MaxMember are read again from the archive each time:
	// the same content; over MaxReread of them, the rest is left out.
	big := strings.Repeat("x", 3000) + "\n"
	archive := gzOf(t, tarOf(t, "1.log", big, "2.log", big, "3.log", "small\n"))
	x = expandFile(t, "a.tar.gz", archive, ExpandOptions{MaxMember: 1000, MaxReread: 1})
	assert.Equal(t, map[string]string{"a.tar.gz/1.log": big, "a.tar.gz/3.log": "small\n"}, x.content)
	assert.Contains(t, x.skipped["a.tar.gz/2.log"], "extract the archive and bundle the folder")

	// A truncated tar keeps the members read before the cut.
	whole := tarOf(t, "1.log", "one\n", "2.log", strings.Repeat("y", 5000))
	x = expandFile(t, "cut.tar", whole[:1536+512], ExpandOptions{})
	assert.Equal(t, map[string]string{"cut.tar/1.log": "one\n"}, x.content)
	assert.NotEmpty(t, x.skipped)
}
