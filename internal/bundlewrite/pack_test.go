package bundlewrite

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/internal/redact"
)

type entry struct {
	name string
	mode int64
	mod  time.Time
	data []byte
}

func readBundle(t *testing.T, path string) []entry {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	dec, err := zstd.NewReader(f)
	require.NoError(t, err)
	defer dec.Close()
	tr := tar.NewReader(dec)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, entry{h.Name, h.Mode, h.ModTime, data})
	}
}

func manifestOf(res []Result) (string, []byte, error) {
	var b strings.Builder
	for _, r := range res {
		fmt.Fprintf(&b, "%s %d %s\n", r.Name, r.Bytes, r.SHA256)
	}
	return "manifest.json", []byte(b.String()), nil
}

func TestWriteRedactsTextOnly(t *testing.T) {
	mod := time.Date(2026, 11, 30, 4, 24, 37, 500, time.UTC)
	secret := "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n"
	items := []Item{
		Bytes("once/env.txt", []byte("CUDA_VISIBLE_DEVICES=0\n"+secret), mod, true, false),
		Bytes("blob.bin", []byte("\x00\x01"+secret), mod, false, false),
	}
	out := filepath.Join(t.TempDir(), "b.tar.zst")
	sum, err := WriteFile(out, items, manifestOf, Options{Redactor: redact.New(redact.Options{})})
	require.NoError(t, err)
	assert.True(t, sum.Fits)
	got := readBundle(t, out)
	require.Len(t, got, 3)
	assert.Equal(t, "once/env.txt", got[0].name)
	assert.Equal(t, "CUDA_VISIBLE_DEVICES=0\nHF_TOKEN=hf_************************************\n", string(got[0].data))
	assert.Equal(t, "\x00\x01"+secret, string(got[1].data), "binary content is written as is")
	assert.Equal(t, "manifest.json", got[2].name, "the manifest comes last")
	for _, e := range got[:2] {
		assert.EqualValues(t, 0o644, e.mode)
		assert.Equal(t, mod.Truncate(time.Second), e.mod.UTC())
	}
	sha := sha256.Sum256(got[0].data)
	assert.Equal(t, hex.EncodeToString(sha[:]), sum.Results[0].SHA256, "the hash is of the bytes in the bundle")
	assert.Equal(t, redact.Counts{"hf-token": 1}, sum.Results[0].Counts)
	assert.Contains(t, string(got[2].data), fmt.Sprintf("once/env.txt %d %s", len(got[0].data), sum.Results[0].SHA256))
}

func TestDeterministic(t *testing.T) {
	items := []Item{Bytes("a.txt", []byte("one\ntwo\n"), time.Time{}, true, false), Bytes("b/c.txt", []byte("three\n"), time.Time{}, true, false)}
	dir := t.TempDir()
	_, err := WriteFile(filepath.Join(dir, "1"), items, manifestOf, Options{})
	require.NoError(t, err)
	_, err = WriteFile(filepath.Join(dir, "2"), items, manifestOf, Options{})
	require.NoError(t, err)
	a, _ := os.ReadFile(filepath.Join(dir, "1"))
	b, _ := os.ReadFile(filepath.Join(dir, "2"))
	assert.Equal(t, a, b)
}

// noisyLog is a log that compresses poorly: each line carries a hash.
func noisyLog(lines int) []byte {
	var b bytes.Buffer
	for i := 0; i < lines; i++ {
		h := sha256.Sum256([]byte(fmt.Sprint(i)))
		fmt.Fprintf(&b, "[2026-11-30 04:%02d:%02d TP0] line %d %s\n", i/60%60, i%60, i, hex.EncodeToString(h[:]))
	}
	return b.Bytes()
}

func TestSizeCapTrimsTheLargestLogMiddle(t *testing.T) {
	big := noisyLog(40000) // ~3.6 MB, compresses to about half
	small := noisyLog(2000)
	other := []byte(strings.Repeat("MemTotal:       2113183744 kB\n", 10))
	items := []Item{
		Bytes("logs/big.log", big, time.Time{}, true, true),
		Bytes("logs/small.log", small, time.Time{}, true, true),
		Bytes("once/meminfo.txt", other, time.Time{}, true, false),
	}
	out := filepath.Join(t.TempDir(), "b.tar.zst")
	const limit = 600 << 10
	sum, err := WriteFile(out, items, manifestOf, Options{MaxSize: limit, CapName: "--max-size 600KiB"})
	require.NoError(t, err)
	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.LessOrEqual(t, st.Size(), int64(limit))
	assert.Equal(t, st.Size(), sum.Bytes)
	assert.True(t, sum.Fits)
	assert.Greater(t, sum.Attempts, 1)

	got := readBundle(t, out)
	require.Len(t, got, 4)
	// The big log lost its middle and kept whole lines at both ends.
	tr := sum.Results[0].Trim
	require.NotNil(t, tr)
	assert.EqualValues(t, len(big), tr.OriginalBytes)
	assert.Equal(t, tr.OriginalBytes, tr.HeadBytes+tr.TailBytes+tr.RemovedBytes)
	assert.Equal(t, "to fit --max-size 600KiB", tr.Reason)
	data := got[0].data
	assert.True(t, bytes.HasPrefix(data, big[:tr.HeadBytes]))
	assert.True(t, bytes.HasSuffix(data, big[len(big)-int(tr.TailBytes):]))
	assert.Equal(t, byte('\n'), big[tr.HeadBytes-1], "the head ends at a line end")
	assert.Equal(t, byte('\n'), big[len(big)-int(tr.TailBytes)-1], "the tail starts at a line start")
	assert.Contains(t, string(data), fmt.Sprintf("[coroner: %d bytes were left out here to fit the bundle under --max-size 600KiB; see manifest.json]\n", tr.RemovedBytes))
	assert.EqualValues(t, len(data), sum.Results[0].Bytes)
	// The smaller files stay whole when trimming the largest is enough.
	if sum.Results[1].Trim == nil {
		assert.Equal(t, small, got[1].data)
	}
	assert.Nil(t, sum.Results[2].Trim)
	assert.Equal(t, other, got[2].data)
}

func TestPlanLevels(t *testing.T) {
	items := []Item{
		{Name: "a", Size: 1000, Text: true, Log: true},
		{Name: "b", Size: 400, Text: true, Log: true},
		{Name: "c", Size: 100, Text: true, Log: true},
		{Name: "d", Size: 300, Text: true},
		{Name: "e", Size: 5000, Text: false},
	}
	keep, minimal := plan(items, 6400, 50)
	// 6800 bytes in all, 400 to remove: only the largest log is cut.
	assert.Equal(t, map[int]int64{0: 600}, keep)
	assert.False(t, minimal)
	keep, _ = plan(items, 5900, 50)
	// 900 to remove: the logs keep 600 together; the 100-byte one stays whole
	// and the other two level at 250.
	assert.Equal(t, map[int]int64{0: 250, 1: 250}, keep)
	keep, minimal = plan(items, 5000, 50)
	// Logs alone cannot give 1800: they go to the minimum, then the other text.
	assert.Equal(t, map[int]int64{0: 50, 1: 50, 2: 50, 3: 50}, keep)
	assert.True(t, minimal)
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"../../etc/passwd": "etc/passwd", "/abs/x.log": "abs/x.log", `a\b\c`: "a/b/c", "./x//y/.": "x/y"} {
		assert.Equal(t, want, SafeName(in), in)
	}
}
