package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"

	"github.com/coroner-dev/coroner/parser/facts"
)

// member is one entry of an archive a test builds.
type member struct {
	name string
	body string
	// typ is a tar type flag (0: regular file); link is a link's target.
	typ  byte
	link string
	// mode is set on zip entries (0: a regular file).
	mode fs.FileMode
	// stored zip entries are not compressed.
	stored bool
}

var mtime = time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)

func makeTar(t testing.TB, ms []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		h := &tar.Header{Name: m.name, Mode: 0o644, ModTime: mtime, Typeflag: m.typ, Linkname: m.link, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m.body))
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		require.NoError(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write([]byte(m.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func makeZip(t testing.TB, ms []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range ms {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: mtime}
		if m.mode != 0 {
			h.SetMode(m.mode)
		}
		if strings.HasSuffix(m.name, "/") || m.stored {
			h.Method = zip.Store
		}
		f, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, err = f.Write([]byte(m.body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func zst(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func xzc(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := xz.WriterConfig{DictCap: 1 << 20}.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// got is what a walk delivered.
type got struct {
	entries []gotEntry
	issues  []facts.Issue
}

type gotEntry struct {
	Path      string
	Container string
	Content   string
	Link      string
	Size      int64
	ModTime   time.Time
	// Err is the error reading the content ended with (nil at a clean end).
	Err error
	// NoReader is true when fn got a nil reader.
	NoReader bool
}

func (g got) paths() []string {
	var out []string
	for _, e := range g.entries {
		out = append(out, e.Path)
	}
	return out
}

func (g got) contents() map[string]string {
	out := map[string]string{}
	for _, e := range g.entries {
		out[e.Path] = e.Content
	}
	return out
}

func (g got) entry(t testing.TB, path string) gotEntry {
	t.Helper()
	for _, e := range g.entries {
		if e.Path == path {
			return e
		}
	}
	require.Failf(t, "entry not delivered", "%s not in %v", path, g.paths())
	return gotEntry{}
}

func (g got) issuesOf(kind facts.IssueKind) []facts.Issue {
	var out []facts.Issue
	for _, is := range g.issues {
		if is.Kind == kind {
			out = append(out, is)
		}
	}
	return out
}

// issue returns the one issue of a kind, failing when there is none or more.
func (g got) issue(t testing.TB, kind facts.IssueKind) facts.Issue {
	t.Helper()
	is := g.issuesOf(kind)
	require.Lenf(t, is, 1, "want one %s issue, got %v", kind, g.issues)
	return is[0]
}

func collector(g *got, opts *Options) WalkFunc {
	opts.Issue = func(is facts.Issue) { g.issues = append(g.issues, is) }
	return func(e *Entry, r io.Reader) error {
		ge := gotEntry{Path: e.Path, Container: e.Container, Link: e.Link, Size: e.Size, ModTime: e.ModTime, NoReader: r == nil}
		if r != nil {
			b, err := io.ReadAll(r)
			ge.Content, ge.Err = string(b), err
		}
		g.entries = append(g.entries, ge)
		return nil
	}
}

func walkBytes(t testing.TB, name string, data []byte, opts Options) got {
	t.Helper()
	var g got
	fn := collector(&g, &opts)
	require.NoError(t, WalkReader(name, bytes.NewReader(data), opts, fn))
	return g
}

func walkPath(t testing.TB, path string, opts Options) got {
	t.Helper()
	var g got
	fn := collector(&g, &opts)
	require.NoError(t, Walk(path, opts, fn))
	return g
}

// writeFile writes data to a new file in a temp dir and returns its path.
func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// onlyReader hides every method but Read, as a pipe would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
