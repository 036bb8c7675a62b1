package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		stored, total, files int64
		want                 string
	}{
		{512 << 20, 1 << 30, 3, "50% · 512.0 MiB of 1.0 GiB · 3 files parsed"},
		{0, 200 << 20, 0, "0% · 0 B of 200.0 MiB · 0 files parsed"},
		// A zip's index is read twice: never past 99%, never past the total.
		{(1 << 30) + 4096, 1 << 30, 1, "99% · 1.0 GiB of 1.0 GiB · 1 file parsed"},
		// stdin: no total.
		{300 << 20, 0, 2, "300.0 MiB read · 2 files parsed"},
	} {
		assert.Equal(t, c.want, progressText(c.stored, c.total, c.files))
	}
}

// syncBuffer is a stderr the progress goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressShowsOnlyOnATerminalForBigInputs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(log, bytes.Repeat([]byte("x\n"), 1000), 0o644))

	var errb syncBuffer
	tty := &env{stderr: &errb, stderrTTY: true, progressFrom: 1000}
	assert.Nil(t, startProgress(tty, true, []string{dir}), "--quiet")
	assert.Nil(t, startProgress(&env{stderr: &errb, progressFrom: 1000}, false, []string{dir}), "stderr piped")
	assert.Nil(t, startProgress(&env{stderr: &errb, stderrTTY: true}, false, []string{dir}), "2000 bytes is under the default 100 MB")

	p := startProgress(&env{stderr: &errb, stderrTTY: true, progressFrom: 1000, progressEvery: time.Millisecond}, false, []string{dir})
	require.NotNil(t, p)
	assert.Equal(t, int64(2000), p.total, "the directory's file sizes")
	p.pr.Stored.Store(1000)
	p.pr.Files.Store(1)
	assert.Eventually(t, func() bool {
		return strings.Contains(errb.String(), "\r\x1b[Kcoroner: 50% · 1000 B of 2.0 KiB · 1 file parsed")
	}, 5*time.Second, time.Millisecond)
	p.stop()
	assert.True(t, strings.HasSuffix(errb.String(), "\r\x1b[K"), "the line is cleared at the end: %q", errb.String())
	var nilLine *progressLine
	nilLine.stop() // a command without a line stops it all the same
	assert.Nil(t, nilLine.progress())
}

// The whole command: on a terminal the line is drawn and cleared, and the
// report is the same as without it.
func TestAnalyzeWithProgress(t *testing.T) {
	dir := t.TempDir()
	log := "[2026-11-30 04:28:10 TP0] Load weight begin. avail mem=139.28 GB\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "server.log"), []byte(strings.Repeat(log, 20000)), 0o644))
	var out1, out2 bytes.Buffer
	var err1, err2 syncBuffer
	code1 := run([]string{"analyze", "--fail-on", "never", dir}, env{stdout: &out1, stderr: &err1, stderrTTY: true, progressFrom: 1, progressEvery: time.Millisecond})
	code2 := run([]string{"analyze", "--fail-on", "never", "-q", dir}, env{stdout: &out2, stderr: &err2, stderrTTY: true, progressFrom: 1, progressEvery: time.Millisecond})
	assert.Equal(t, 0, code1)
	assert.Equal(t, 0, code2)
	assert.Equal(t, out2.String(), out1.String())
	assert.Empty(t, err2.String(), "--quiet")
	if s := err1.String(); s != "" {
		assert.Contains(t, s, "coroner: ")
		assert.True(t, strings.HasSuffix(s, "\r\x1b[K"), "the line is cleared: %q", s)
	}
}
