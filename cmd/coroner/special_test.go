//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliInTime runs coroner and fails when it has not ended after d.
func cliInTime(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		c, o, e := runCLI(t, "", args...)
		done <- res{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(d):
		t.Fatalf("coroner %v still running after %v", args, d)
	}
	return 0, "", ""
}

// TestSpecialFiles: FIFOs and devices never hang analyze or bundle; each
// says what it skipped, on stderr (issue 18, item 2).
func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	ev := filepath.Join(dir, "evidence")
	require.NoError(t, os.MkdirAll(ev, 0o755))
	log, err := os.ReadFile(filepath.Join(seedBundle, "server.log"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ev, "server.log"), log, 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(ev, "pipe"), 0o644))

	code, _, errs := cliInTime(t, 20*time.Second, "analyze", fifo)
	assert.Equal(t, exitInput, code, errs)
	assert.Contains(t, errs, "fifo is a named pipe (FIFO), not a file, folder or archive")
	assert.Contains(t, errs, "| coroner analyze -")

	code, out, errs := cliInTime(t, 30*time.Second, "analyze", "--fail-on", "never", ev)
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "coroner: pipe is a named pipe (FIFO), not a regular file: skipped")
	assert.Contains(t, out, "pipe is a named pipe (FIFO), not a regular file: skipped")

	code, _, errs = cliInTime(t, 30*time.Second, "analyze", "-q", "--fail-on", "never", ev)
	assert.Equal(t, exitOK, code, errs)
	assert.NotContains(t, errs, "skipped")

	args := []string{"bundle", "-o", filepath.Join(dir, "b.tar.zst"), fifo, ev}
	if _, err := os.Stat("/dev/zero"); err == nil {
		args = append(args, "/dev/zero")
	}
	code, _, errs = cliInTime(t, 30*time.Second, args...)
	assert.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "coroner: skipped "+fifo+": a named pipe (FIFO), not a regular file")
	assert.Contains(t, errs, "pipe: a named pipe (FIFO), not a regular file")
	if len(args) > 5 {
		assert.Contains(t, errs, "coroner: skipped /dev/zero: a character device, not a regular file")
	}
}
