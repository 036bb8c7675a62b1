package parser

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vllmLine is a vLLM line: month and day, no year, no zone.
const vllmLine = "INFO 05-16 21:39:29 [api_server.py:1090] vLLM API server version 0.8.5\n"

// writeTar writes a tar of the files, each with its modification time.
func writeTar(t *testing.T, files []tarFile) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: f.mod}))
		_, err := tw.Write([]byte(f.data))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	p := filepath.Join(t.TempDir(), "bundle.tar")
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	return p
}

type tarFile struct {
	name, data string
	mod        time.Time
}

// writeDir writes the files into a folder, each with its modification
// time.
func writeDir(t *testing.T, files []tarFile) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f.data), 0o644))
		require.NoError(t, os.Chtimes(p, f.mod, f.mod))
	}
	return dir
}

func manifestEnding(end time.Time) string {
	return fmt.Sprintf(`{"format": "coroner-manifest", "version": 1, "tool": {"name": "coroner", "version": "t"}, "command": "collect",
"artifacts": [{"command": "ps -eo pid", "start": %q, "end": %q}]}`+"\n", end.Format(time.RFC3339), end.Format(time.RFC3339))
}

// TestYearOfYearlessStamps: a log whose stamps carry no year takes it from
// the evidence about itself first (the capture manifest, its folder's
// capture stamp, its modification time in the archive, or, from the
// command line, its file's), never from an unrelated file while its own
// says another; with nothing at all its year stays unknown, and no output
// may show the placeholder (issue 18, item 8).
func TestYearOfYearlessStamps(t *testing.T) {
	may := func(y int) time.Time { return time.Date(y, 5, 17, 8, 0, 0, 0, time.UTC) }
	tests := []struct {
		name      string
		path      func(t *testing.T) string
		fileTimes bool
		want      int    // the log's year; 0: unknown
		why       string // in the assumption
	}{
		{"the archive's time of the log", func(t *testing.T) string {
			return writeTar(t, []tarFile{{"server.log", vllmLine, may(2024)}})
		}, false, 2024, "its modification time in the archive"},
		{"its own archive time, not an unrelated folder's stamp", func(t *testing.T) string {
			return writeTar(t, []tarFile{
				{"other/captured_at.txt", "2026-01-02T10:00:05Z\n", may(2026)},
				{"run/server.log", vllmLine, may(2024)},
			})
		}, false, 2024, "its modification time in the archive"},
		{"its folder's capture stamp", func(t *testing.T) string {
			return writeTar(t, []tarFile{
				{"run/captured_at.txt", "2026-06-02T10:00:05Z\n", may(2025)},
				{"run/server.log", vllmLine, may(2024)},
			})
		}, false, 2026, "the capture stamp run/captured_at.txt"},
		{"the capture manifest", func(t *testing.T) string {
			return writeTar(t, []tarFile{
				{"manifest.json", manifestEnding(may(2023)), may(2025)},
				{"server.log", vllmLine, may(2024)},
			})
		}, false, 2023, "the capture manifest manifest.json"},
		{"a file's time, from the command line", func(t *testing.T) string {
			return writeDir(t, []tarFile{{"server.log", vllmLine, may(2022)}})
		}, true, 2022, "its file's modification time"},
		{"a file's time is not evidence in tests of reports", func(t *testing.T) string {
			return writeDir(t, []tarFile{{"server.log", vllmLine, may(2022)}})
		}, false, 0, "nothing in the bundle gives one"},
		{"a month and day after the reference's are of the year before", func(t *testing.T) string {
			return writeTar(t, []tarFile{{"server.log", vllmLine, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}})
		}, false, 2023, "its modification time in the archive"},
		{"a probe's year", func(t *testing.T) string {
			return writeDir(t, []tarFile{
				{"server.log", vllmLine, may(2022)},
				{"probes.jsonl", `{"at":"2025-05-17T08:00:00Z","url":"http://127.0.0.1:30000/health","endpoint":"/health","status":200,"latency_ms":3}` + "\n", may(2022)},
			})
		}, false, 2025, "the probe time in probes.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]string{tc.path(t)}, Options{FileTimes: tc.fileTimes})
			require.NoError(t, err)
			require.Len(t, f.Logs, 1)
			l := f.Logs[0]
			assert.Contains(t, fmt.Sprint(f.Assumptions), tc.why)
			if tc.want == 0 {
				assert.True(t, f.YearUnknown(), "the year stays unknown")
				assert.True(t, f.Clocks[l.Path].YearUnknown)
				return
			}
			assert.False(t, f.YearUnknown())
			assert.Equal(t, time.Date(tc.want, 5, 16, 21, 39, 29, 0, time.UTC), l.FirstTime.UTC())
			assert.Contains(t, fmt.Sprint(f.Assumptions), fmt.Sprintf("took %d from", tc.want))
		})
	}
}
