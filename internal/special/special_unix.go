//go:build unix

package special

import (
	"os"
	"syscall"
)

// openNonBlocking opens with O_NONBLOCK: open() of a FIFO without a writer
// returns at once, and so does a read of it, of /proc/kmsg or of a trace
// pipe with nothing to say. Regular files are not affected.
func openNonBlocking(p string, follow bool) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	return os.OpenFile(p, flags, 0)
}
