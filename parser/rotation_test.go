package parser

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// sglangLines writes an SGLang log of n decode lines from minute start.
func sglangLines(start, n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		m := start + i
		b = fmt.Appendf(b, "[2026-02-10 %02d:%02d:00 TP0] Decode batch, #running-req: 1, #token: %d, token usage: 0.01, cuda graph: True, gen throughput (token/s): 60.5, #queue-req: 0\n",
			m/60, m%60, 100*i)
	}
	return b
}

func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return dir
}

func rotationOf(f *facts.Facts) map[string]string {
	out := map[string]string{}
	for _, s := range f.Sources {
		if r := s.Rotation; r != nil {
			out[s.Path] = fmt.Sprintf("%s %d/%d %q", r.Log, r.Piece, r.Pieces, r.Suffix)
		}
	}
	return out
}

func logOrder(f *facts.Facts) []string {
	var out []string
	for _, l := range f.Logs {
		out = append(out, l.Path)
	}
	return out
}

func TestRotatedPieces(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string][]byte
		rotation map[string]string
		logs     []string
		assume   string
	}{{
		name: "numbered, the newest piece 1 (Python's RotatingFileHandler, logrotate)",
		files: map[string][]byte{"run/server.log": sglangLines(120, 5), "run/server.log.1": sglangLines(60, 5), "run/server.log.2": sglangLines(0, 5),
			"run/other.log": sglangLines(0, 2)},
		rotation: map[string]string{"run/server.log.2": `run/server.log 1/3 ".2"`, "run/server.log.1": `run/server.log 2/3 ".1"`, "run/server.log": `run/server.log 3/3 ""`},
		logs:     []string{"run/other.log", "run/server.log.2", "run/server.log.1", "run/server.log"},
	}, {
		name:     "numbered without the live file, the oldest piece 1 (log4j's fixed window): the times decide",
		files:    map[string][]byte{"app.log.1": sglangLines(0, 5), "app.log.2": sglangLines(60, 5)},
		rotation: map[string]string{"app.log.1": `app.log 1/2 ".1"`, "app.log.2": `app.log 2/2 ".2"`},
		logs:     []string{"app.log.1", "app.log.2"},
	}, {
		name: "dated (logrotate dateext, TimedRotatingFileHandler, the kubelet)",
		files: map[string][]byte{"server.log-20260209": sglangLines(0, 3), "server.log-20260210": sglangLines(60, 3), "server.log": sglangLines(120, 3),
			"0.log.20260210-010000": sglangLines(0, 3), "0.log": sglangLines(60, 3),
			"w.log.2026-02-10_00-00-00": sglangLines(0, 3), "w.log.2026-02-10_01-00-00": sglangLines(60, 3)},
		rotation: map[string]string{
			"server.log-20260209": `server.log 1/3 "-20260209"`, "server.log-20260210": `server.log 2/3 "-20260210"`, "server.log": `server.log 3/3 ""`,
			"0.log.20260210-010000": `0.log 1/2 ".20260210-010000"`, "0.log": `0.log 2/2 ""`,
			"w.log.2026-02-10_00-00-00": `w.log 1/2 ".2026-02-10_00-00-00"`, "w.log.2026-02-10_01-00-00": `w.log 2/2 ".2026-02-10_01-00-00"`,
		},
		logs: []string{"0.log.20260210-010000", "0.log", "server.log-20260209", "server.log-20260210", "server.log",
			"w.log.2026-02-10_00-00-00", "w.log.2026-02-10_01-00-00"},
	}, {
		name:     "per-task outputs written at once are no rotation",
		files:    map[string][]byte{"job.out.0": sglangLines(0, 30), "job.out.1": sglangLines(0, 30)},
		rotation: map[string]string{},
		logs:     []string{"job.out.0", "job.out.1"},
		assume:   "job.out.0, job.out.1 are named like rotated pieces of job.out but their times overlap: read as separate logs",
	}, {
		name:     "a date before the extension names a run, pieces are in one folder",
		files:    map[string][]byte{"server-2026-02-09.log": sglangLines(0, 3), "server.log": sglangLines(60, 3), "a/x.log.1": sglangLines(0, 3), "b/x.log": sglangLines(60, 3)},
		rotation: map[string]string{},
		logs:     []string{"a/x.log.1", "b/x.log", "server-2026-02-09.log", "server.log"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			f, err := Parse([]string{dir}, Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.rotation, rotationOf(f))
			assert.Equal(t, tc.logs, logOrder(f))
			if tc.assume != "" {
				assert.Contains(t, f.Assumptions, tc.assume)
			}
		})
	}
}

// TestInputsKeepTheirFolders: two logs of one name in different folders,
// given as two inputs, keep their folders instead of reading as a log and
// its rotated piece (issue 16).
func TestInputsKeepTheirFolders(t *testing.T) {
	dir := writeFiles(t, map[string][]byte{"a/server.log": sglangLines(0, 3), "b/server.log": sglangLines(60, 3), "c/server.log.gz": gz(sglangLines(0, 2))})
	f, err := Parse([]string{filepath.Join(dir, "a", "server.log"), filepath.Join(dir, "b", "server.log"), filepath.Join(dir, "c", "server.log.gz")}, Options{})
	require.NoError(t, err)
	var names []string
	for _, s := range f.Sources {
		names = append(names, s.Path)
		assert.Nil(t, s.Rotation)
	}
	assert.Equal(t, []string{"a/server.log", "b/server.log", "c/server.log"}, names)
	assert.Equal(t, names, logOrder(f))
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}
