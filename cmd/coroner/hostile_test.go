package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hostile-input suite: every case runs the whole pipeline (intake,
// parsers, rules, report) and must end with a report, never a panic, with a
// clear issue naming what was wrong.

// analyzeBytes runs analyze on a bundle given on stdin and returns the report.
func analyzeBytes(t *testing.T, data []byte) (report, string) {
	t.Helper()
	code, out, errs := runCLI(t, string(data), "analyze", "--format", "json", "--fail-on", "never", "-")
	require.Equal(t, exitOK, code, errs)
	var r report
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return r, out
}

func issuesOf(r report) map[string][]string {
	out := map[string][]string{}
	for _, s := range r.Bundle.Sources {
		for _, is := range s.Issues {
			out[s.Path] = append(out[s.Path], is.Kind+": "+is.Detail)
		}
	}
	return out
}

// TestTruncatedAtEveryKiB cuts the seed bundle's tar.gz and tar.zst at every
// 1 KiB boundary: each cut gives a report that analyzes what was read and
// says where the stream broke.
func TestTruncatedAtEveryKiB(t *testing.T) {
	ms := dirMembers(t, "../../fixtures/seed/flashinfer-sm120-hang")
	tb := tarBytes(t, ms)
	for name, full := range map[string][]byte{"tar.gz": gz(t, tb), "tar.zst": zst(t, tb)} {
		cuts := 0
		for n := 1024; n < len(full); n += 1024 {
			r, _ := analyzeBytes(t, full[:n])
			cuts++
			var issues []string
			for _, list := range issuesOf(r) {
				issues = append(issues, list...)
			}
			joined := strings.Join(issues, "\n")
			assert.Regexp(t, `truncated|corrupt`, joined, "%s cut at %d bytes: no issue says the stream broke", name, n)
		}
		require.Greater(t, cuts, 5, name)
	}
}

// TestTwoGigabyteLine streams a 2 GiB line without a newline: the line is cut
// at the limit, counted, and memory does not hold it.
func TestTwoGigabyteLine(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 2 GiB")
	}
	var out, errb bytes.Buffer
	in := io.MultiReader(strings.NewReader("[2026-02-10 00:28:05 TP0] Load weight begin. avail mem=93.47 GB\n"),
		io.LimitReader(repeatReader('x'), 2<<30))
	code := run([]string{"sources", "--format", "json", "-"}, env{stdin: in, stdout: &out, stderr: &errb})
	require.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, out.String(), "line-too-long")
	assert.Contains(t, out.String(), `"bytes": 2147483712`)
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestNestedZipBomb is a zip holding zstd bombs: each stops at the ratio
// limit, the good file beside them is analyzed.
func TestNestedZipBomb(t *testing.T) {
	bomb := bombZstd(t, 1<<30)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < 3; i++ {
		w, err := zw.Create(fmt.Sprintf("layer%d/server.log.zst", i))
		require.NoError(t, err)
		_, err = w.Write(bomb)
		require.NoError(t, err)
	}
	w, err := zw.Create("ps_aux.txt")
	require.NoError(t, err)
	ps := dirMembers(t, "../../fixtures/seed/flashinfer-sm120-hang")
	for _, m := range ps {
		if m.name == "ps_aux.txt" {
			_, _ = w.Write(m.data)
		}
	}
	require.NoError(t, zw.Close())
	r, _ := analyzeBytes(t, buf.Bytes())
	iss := issuesOf(r)
	for i := 0; i < 3; i++ {
		assert.Contains(t, strings.Join(iss[fmt.Sprintf("layer%d/server.log", i)], "\n"), "decompression-bomb")
	}
	kinds := map[string]string{}
	for _, s := range r.Bundle.Sources {
		kinds[s.Path] = s.Kind
	}
	assert.Equal(t, "ps", kinds["ps_aux.txt"])
}

// TestManyTinyEntries: 100,000 entries are read (the limit is "more than").
func TestManyTinyEntries(t *testing.T) {
	var ms []member
	for i := 0; i < 100_000; i++ {
		ms = append(ms, member{name: fmt.Sprintf("d%03d/f%05d.txt", i/1000, i), data: []byte("x\n")})
	}
	code, out, errs := runCLI(t, string(zst(t, tarBytes(t, ms))), "sources", "--format", "json", "-")
	require.Equal(t, exitOK, code, errs)
	var r report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Len(t, r.Bundle.Sources, 100_000)
}

// TestMislabelledFiles: names lie, content decides; bad bytes are reported.
func TestMislabelledFiles(t *testing.T) {
	seed := map[string][]byte{}
	for _, m := range dirMembers(t, "../../fixtures/seed/flashinfer-sm120-hang") {
		seed[m.name] = m.data
	}
	invalid := append([]byte("[2026-02-10 00:28:05 TP0] Load weight begin. avail mem=93.47 GB\n[2026-02-10 00:28:06 TP0] bad \xff\xfe bytes\n"), 0)
	ms := []member{
		{name: "nvidia-smi-q.txt", data: seed["ps_aux.txt"]},      // a ps snapshot under a GPU name
		{name: "ps_aux.txt", data: seed["server.log"]},            // a server log under a ps name
		{name: "server.log", data: bytes.Repeat([]byte{0}, 4096)}, // NUL-filled
		{name: "meminfo.txt", data: invalid},                      // a log with invalid UTF-8 and a NUL
		{name: "query-gpu.csv", data: []byte("this is not,a csv,of nvidia-smi\nat all\n")},
	}
	r, out := analyzeBytes(t, zst(t, tarBytes(t, ms)))
	kinds := map[string]string{}
	for _, s := range r.Bundle.Sources {
		kinds[s.Path] = s.Kind
	}
	assert.Equal(t, "ps", kinds["nvidia-smi-q.txt"])
	assert.Equal(t, "sglang-log", kinds["ps_aux.txt"])
	assert.Equal(t, "unknown", kinds["server.log"])
	assert.Equal(t, "sglang-log", kinds["meminfo.txt"])
	iss := issuesOf(r)
	assert.Contains(t, strings.Join(iss["server.log"], "\n"), "binary")
	assert.Contains(t, strings.Join(iss["meminfo.txt"], "\n"), "invalid-utf8")
	assert.Contains(t, strings.Join(iss["meminfo.txt"], "\n"), "nul-bytes")
	assert.NotContains(t, out, "\xff", "invalid UTF-8 never reaches the report")
}
