package parser

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// TestParallelParseIsDeterministic parses a bundle of many files with one
// worker and with several: the facts must not depend on scheduling.
func TestParallelParseIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	for node := 0; node < 8; node++ {
		for rank := 0; rank < 8; rank++ {
			var b []byte
			for i := 0; i < 50; i++ {
				b = fmt.Appendf(b, "[2026-02-10 00:%02d:%02d TP%d] Decode batch, #running-req: %d, #token: %d, token usage: 0.%02d, cuda graph: True, gen throughput (token/s): %d.5, #queue-req: 0\n",
					i/60, i%60, rank, i%9+1, 100*i, i%99, 60+i%30)
			}
			p := filepath.Join(dir, fmt.Sprintf("node%02d", node), fmt.Sprintf("rank%d.log", rank))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}
	}
	run := func(procs int) string {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		f, err := Parse([]string{dir}, Options{})
		require.NoError(t, err)
		data, err := json.Marshal(struct {
			S []*facts.SourceInfo
			L []*facts.Log
		}{f.Sources, f.Logs})
		require.NoError(t, err)
		return string(data)
	}
	one := run(1)
	for i := 0; i < 3; i++ {
		assert.Equal(t, one, run(4))
	}
}

func TestDetectKinds(t *testing.T) {
	tests := []struct{ file, kind string }{
		{"../fixtures/corpus/h200-x2/00-idle/ps_aux.txt", "ps"},
		{"../fixtures/corpus/h200-x2/00-idle/ps_eo.txt", "ps"},
		{"../fixtures/corpus/h200-x2/00-idle/top.txt", "top"},
		{"../fixtures/corpus/h200-x2/00-idle/nvidia-smi-q.txt", "nvidia-smi-q"},
		{"../fixtures/corpus/h200-x2/00-idle/nvidia-smi-q.xml", "nvidia-smi-xml"},
		{"../fixtures/corpus/h200-x2/00-idle/nvidia-smi.txt", "nvidia-smi-table"},
		{"../fixtures/corpus/h200-x2/00-idle/query-gpu.csv", "nvidia-smi-csv"},
		{"../fixtures/corpus/h200-x2/00-idle/meminfo.txt", "meminfo"},
		{"../fixtures/corpus/h200-x2/00-idle/free.txt", "free"},
		{"../fixtures/corpus/h200-x2/00-idle/captured_at.txt", "capture-time"},
		{"../fixtures/corpus/h200-x2/topo.txt", "nvidia-smi-topo"},
		{"../fixtures/corpus/h200-x2/nvidia-smi-L.txt", "nvidia-smi-list"},
		{"../fixtures/corpus/h200-x2/collect_env.txt", "collect-env"},
		{"../fixtures/corpus/h200-x2/system.txt", "system"},
		{"../fixtures/corpus/h200-x1/cgroup-oom/dmesg.txt", "kernel-log"},
		{"../fixtures/corpus/h200-x1/cgroup-oom/dmesg-T-oom.txt", "kernel-log"},
		{"../fixtures/corpus/h200-x1/cgroup-oom/memory.events", "cgroup-memory"},
		{"../fixtures/corpus/fulllogs/sglang-qwq32b-tp4-l4/server.log", "sglang-log"},
		{"../fixtures/corpus/fulllogs/vllm-llama31-8b-v0171/server.log", "vllm-log"},
		{"../fixtures/seed/flashinfer-sm120-hang/launch.sh", "cmdline"},
		{"../fixtures/seed/flashinfer-sm120-hang/health.txt", "probe"},
	}
	for _, tc := range tests {
		data, err := os.ReadFile(tc.file)
		require.NoError(t, err)
		if len(data) > HeadSize {
			data = data[:HeadSize]
		}
		// The name is only a hint: the same content under a neutral name
		// must get the same kind.
		assert.Equal(t, tc.kind, string(Detect(baseName(tc.file), data)), tc.file)
		assert.Equal(t, tc.kind, string(Detect("file-"+fmt.Sprint(len(tc.file)), data)), tc.file+" renamed")
	}
}

func TestTimesFromEvidence(t *testing.T) {
	// A vLLM log has no year and no zone; a capture stamp in UTC beside an
	// nvidia-smi CSV in local time (UTC+2) fixes both.
	fsys := fstest.MapFS{
		"round/captured_at.txt": {Data: []byte("2026-01-02T10:00:05Z\n")},
		"round/query-gpu.csv": {Data: []byte("timestamp, index, name, utilization.gpu [%]\n" +
			"2026/01/02 12:00:06.100, 0, NVIDIA H100 80GB HBM3, 0 %\n")},
		"server.log": {Data: []byte("INFO 12-31 23:59:50 [api_server.py:1090] vLLM API server version 0.8.5\n" +
			"INFO 01-02 11:58:00 [loader.py:458] Loading weights took 12.0 seconds\n")},
	}
	f, err := ParseFS(fsys, Options{})
	require.NoError(t, err)
	require.Len(t, f.Logs, 1)
	l := f.Logs[0]
	// 11:58 local at UTC+2 is 09:58 UTC, in the capture's year; the
	// previous line is December 31 of the year before (a rollover).
	assert.Equal(t, time.Date(2026, 1, 2, 9, 58, 0, 0, time.UTC), l.LastTime.UTC())
	assert.Equal(t, time.Date(2025, 12, 31, 21, 59, 50, 0, time.UTC), l.FirstTime.UTC())
	assert.Contains(t, fmt.Sprint(f.Assumptions), "+02:00")
	assert.Contains(t, fmt.Sprint(f.Assumptions), "took 2026")
}

func TestTimesWithoutEvidenceSayWhatWasAssumed(t *testing.T) {
	fsys := fstest.MapFS{"server.log": {Data: []byte("INFO 05-26 18:53:00 [api_server.py:1090] vLLM API server version 0.8.5\n")}}
	f, err := ParseFS(fsys, Options{})
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprint(f.Assumptions), "pass --year")
	assert.Contains(t, fmt.Sprint(f.Assumptions), "pass --tz")
	f, err = ParseFS(fsys, Options{Year: 2025, Zone: time.FixedZone("X", -7*3600)})
	require.NoError(t, err)
	assert.Equal(t, time.Date(2025, 5, 27, 1, 53, 0, 0, time.UTC), f.Logs[0].FirstTime.UTC())
}

// Progress counts the files, their bytes, and the bytes read as stored: for
// a folder of plain files those are the files' sizes; for a compressed
// bundle the compressed bytes, fewer than what was parsed.
func TestProgressCounts(t *testing.T) {
	dir := t.TempDir()
	line := "[2026-02-10 00:00:01 TP0] Decode batch, #running-req: 1, #token: 100, token usage: 0.01, cuda graph: True, gen throughput (token/s): 60.5, #queue-req: 0\n"
	var total int64
	for i, n := range []int{10, 2000} {
		b := []byte(strings.Repeat(line, n))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.log", i)), b, 0o644))
		total += int64(len(b))
	}
	var pr Progress
	_, err := Parse([]string{dir}, Options{Progress: &pr})
	require.NoError(t, err)
	assert.Equal(t, int64(2), pr.Files.Load())
	assert.Equal(t, total, pr.Bytes.Load())
	assert.Equal(t, total, pr.Stored.Load())

	gzPath := filepath.Join(t.TempDir(), "rank.log.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(strings.Repeat(line, 2000)))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(gzPath, buf.Bytes(), 0o644))
	var zp Progress
	_, err = Parse([]string{gzPath}, Options{Progress: &zp})
	require.NoError(t, err)
	assert.Equal(t, int64(1), zp.Files.Load())
	assert.Equal(t, int64(2000*len(line)), zp.Bytes.Load())
	assert.Equal(t, int64(buf.Len()), zp.Stored.Load(), "the whole compressed file, once")
}
