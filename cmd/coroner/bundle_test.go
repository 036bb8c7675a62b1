package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// member is one file of a test archive.
type member struct {
	name string
	data []byte
	link string // symlink target
}

func dirMembers(t *testing.T, dir string) []member {
	t.Helper()
	var out []member
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, member{name: filepath.ToSlash(rel), data: data})
		return nil
	}))
	return out
}

func tarBytes(t *testing.T, ms []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		if m.link != "" {
			require.NoError(t, tw.WriteHeader(&tar.Header{Name: m.name, Typeflag: tar.TypeSymlink, Linkname: m.link, Mode: 0o777}))
			continue
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(m.data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func zipBytes(t *testing.T, ms []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range ms {
		w, err := zw.Create(m.name)
		require.NoError(t, err)
		_, err = w.Write(m.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func zst(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func xzb(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// report is the part of the JSON report these tests compare.
type report struct {
	Bundle struct {
		Sources []struct {
			Path   string `json:"path"`
			Kind   string `json:"kind"`
			Issues []struct {
				Kind   string `json:"kind"`
				Detail string `json:"detail"`
			} `json:"issues"`
		} `json:"sources"`
	} `json:"bundle"`
	Verdict  json.RawMessage `json:"verdict"`
	Findings []struct {
		Rule     string `json:"rule"`
		Title    string `json:"title"`
		Message  string `json:"message"`
		Evidence []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"evidence"`
	} `json:"findings"`
}

func analyzeJSON(t *testing.T, path string) report {
	t.Helper()
	code, out, errs := runCLI(t, "", "analyze", "--format", "json", "--fail-on", "never", path)
	require.Equal(t, exitOK, code, errs)
	var r report
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return r
}

func sourceKinds(r report) []string {
	var out []string
	for _, s := range r.Bundle.Sources {
		out = append(out, s.Path+" "+s.Kind)
	}
	sort.Strings(out)
	return out
}

// TestArchiveFormsAgree checks that one bundle gives the same sources and the
// same findings whatever it is packed in.
func TestArchiveFormsAgree(t *testing.T) {
	src := "../../fixtures/seed/flashinfer-sm120-hang"
	ms := dirMembers(t, src)
	tb := tarBytes(t, ms)
	dir := t.TempDir()
	forms := map[string][]byte{
		"bundle.tar":     tb,
		"bundle.tar.gz":  gz(t, tb),
		"bundle.tgz":     gz(t, tb),
		"bundle.tar.zst": zst(t, tb),
		"bundle.tar.xz":  xzb(t, tb),
		"bundle.zip":     zipBytes(t, ms),
		// The name lies: content decides.
		"lying.tar.gz": zst(t, tb),
	}
	want := analyzeJSON(t, src)
	require.NotEmpty(t, want.Findings)
	for name, data := range forms {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		got := analyzeJSON(t, p)
		assert.Equal(t, sourceKinds(want), sourceKinds(got), name)
		assert.JSONEq(t, string(want.Verdict), string(got.Verdict), name)
		assert.Equal(t, want.Findings, got.Findings, name)
	}
}

func TestStdinBundle(t *testing.T) {
	ms := dirMembers(t, "../../fixtures/corpus/h200-x2/00-idle")
	data := zst(t, tarBytes(t, ms))
	code, out, errs := runCLI(t, string(data), "sources", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "ps_aux.txt")
	assert.Contains(t, out, "nvidia-smi-q.xml")
}

// TestHostileBundle packs every kind of hostile entry next to good evidence.
// Each gives a clear issue naming the entry, nothing panics, the good files
// are still analyzed, and nothing is written outside the output path.
func TestHostileBundle(t *testing.T) {
	good := dirMembers(t, "../../fixtures/seed/flashinfer-sm120-hang")
	bomb := bombZstd(t, 3<<30)
	long := append(bytes.Repeat([]byte("x"), 12<<20), '\n')
	hostile := []member{
		{name: "../../evil.txt", data: []byte("zip slip\n")},
		{name: "/etc/passwd-copy", data: []byte("root:x:0:0:root:/root:/bin/bash\n")},
		{name: "link-to-shadow", link: "/etc/shadow"},
		{name: "bomb.log.zst", data: bomb},
		{name: "truncated.log.gz", data: truncatedGzip(t)},
		{name: "long-line.txt", data: long},
		{name: "nul.bin", data: make([]byte, 64<<10)},
	}
	all := append(append([]member{}, hostile...), good...)
	root := t.TempDir()
	bundlePath := filepath.Join(root, "in", "hostile.tar.zst")
	require.NoError(t, os.MkdirAll(filepath.Dir(bundlePath), 0o755))
	require.NoError(t, os.WriteFile(bundlePath, zst(t, tarBytes(t, all)), 0o644))
	before := treeDigest(t, root)
	out := filepath.Join(root, "out.json")
	code, _, errs := runCLI(t, "", "analyze", "--format", "json", "--fail-on", "never", "-o", out, bundlePath)
	require.Equal(t, exitOK, code, errs)
	after := treeDigest(t, root)
	delete(after, "out.json")
	assert.Equal(t, before, after, "analyze wrote outside its output path")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var r report
	require.NoError(t, json.Unmarshal(data, &r))
	issues := map[string][]string{}
	kinds := map[string]string{}
	for _, s := range r.Bundle.Sources {
		kinds[s.Path] = s.Kind
		for _, is := range s.Issues {
			issues[s.Path] = append(issues[s.Path], is.Kind+": "+is.Detail)
		}
	}
	has := func(path, kind string) {
		t.Helper()
		for _, is := range issues[path] {
			if strings.HasPrefix(is, kind+":") {
				return
			}
		}
		t.Errorf("no %s issue on %s; sources: %v issues: %v", kind, path, kinds, issues)
	}
	has("evil.txt", "unsafe-path")
	has("etc/passwd-copy", "unsafe-path")
	has("link-to-shadow", "link")
	has("bomb.log", "decompression-bomb")
	has("truncated.log", "truncated")
	has("long-line.txt", "line-too-long")
	has("nul.bin", "binary")
	// The good evidence is still analyzed.
	assert.Equal(t, "sglang-log", kinds["server.log"])
	assert.Equal(t, "ps", kinds["ps_aux.txt"])
	var rules []string
	for _, f := range r.Findings {
		rules = append(rules, f.Rule)
	}
	assert.Contains(t, rules, "stall", "the seed evidence inside the hostile bundle is still diagnosed")
	assert.Contains(t, rules, "input-quality")
}

// bombZstd compresses n zero bytes without holding them in memory.
func bombZstd(t *testing.T, n int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	require.NoError(t, err)
	_, err = io.CopyN(w, zeroReader{}, n)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// truncatedGzip is a gzip stream of a log cut in the middle.
func truncatedGzip(t *testing.T) []byte {
	var b bytes.Buffer
	for i := 0; i < 5000; i++ {
		// Not a server's lines: this file only has to be a truncated stream.
		fmt.Fprintf(&b, "backup job %d copied %d files, checksum %08x\n", i, i*7%1000, i*2654435761)
	}
	z := gz(t, b.Bytes())
	return z[:len(z)/2]
}

// TestRealGPUCapture reads the bundles coroner collect wrote on a real H200
// machine: every file has a kind and no parse issue.
func TestRealGPUCapture(t *testing.T) {
	for _, b := range []string{"h200-workload-jit.tar.zst", "h200-workload-crash.tar.zst"} {
		r := analyzeJSON(t, "../../fixtures/collect/"+b)
		require.Greater(t, len(r.Bundle.Sources), 15, b)
		for _, s := range r.Bundle.Sources {
			assert.NotEqual(t, "unknown", s.Kind, "%s: %s", b, s.Path)
			assert.Empty(t, s.Issues, "%s: %s", b, s.Path)
		}
	}
}
