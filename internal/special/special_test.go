//go:build unix

package special

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within fails the test when fn does not return in time: a FIFO without a
// writer blocks a plain os.Open forever.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
	}
}

func TestOpenRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	within(t, 5*time.Second, func() {
		_, _, err := Open(fifo, true)
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Contains(t, err.Error(), "a named pipe (FIFO), not a regular file")
	})
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	_, _, err = Open(sock, true)
	require.Error(t, err) // a socket cannot be opened at all, or is refused
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, _, err := Open("/dev/zero", true)
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Contains(t, err.Error(), "a character device")
	}
	_, _, err = Open(dir, true)
	require.ErrorIs(t, err, ErrNotRegular)

	reg := filepath.Join(dir, "reg")
	require.NoError(t, os.WriteFile(reg, []byte("hello\n"), 0o644))
	f, st, err := Open(reg, true)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(b))
	assert.EqualValues(t, 6, st.Size())
	assert.False(t, Pseudo(f))

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(reg, link))
	_, _, err = Open(link, false)
	require.Error(t, err)
	var nr *NotRegularError
	assert.False(t, errors.As(err, &nr))
	g, _, err := Open(link, true)
	require.NoError(t, err)
	g.Close()
}

func TestPseudo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	f, _, err := Open("/proc/self/status", true)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	assert.True(t, Pseudo(f))
}
