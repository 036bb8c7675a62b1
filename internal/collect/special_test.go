//go:build unix

package collect

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadHeadTailFIFO: a --log that is a FIFO (no writer) is refused at
// once, saying what it is; open() of it used to wait forever, past SIGTERM
// (issue 18, item 2).
func TestReadHeadTailFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "server.log")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, _, _, err := ReadHeadTail(fifo, 1<<20, 1<<20)
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrNotRegular), "%v", err)
		assert.Contains(t, err.Error(), "a named pipe (FIFO)")
	case <-time.After(5 * time.Second):
		t.Fatal("ReadHeadTail of a FIFO still waits after 5 s")
	}
	_, _, _, err := ReadHeadTail("/dev/zero", 1<<20, 1<<20)
	assert.ErrorIs(t, err, ErrNotRegular)
}
