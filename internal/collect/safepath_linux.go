//go:build linux

package collect

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxOpenTries bounds the retries of an open the kernel asks to retry: a
// path renamed without end (another user's loop) must not keep coroner.
const maxOpenTries = 64

// errLinkAppeared is the open's refusal of a link on a path the walk found
// none on.
var errLinkAppeared = errors.New("a link appeared on the path")

// openNoLinks opens p, which the walk found no link on, with openat2
// refusing any link on the whole path (a folder swapped for a link since
// is refused, not followed), without waiting on a FIFO and without taking
// a terminal as the controlling one. Where openat2 is missing (Linux
// before 5.6, or a seccomp filter that refuses it), O_NOFOLLOW guards the
// last component, and the caller's inode check the rest.
func openNoLinks(p string) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC | unix.O_NOFOLLOW
	how := &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for try := 0; ; try++ {
		fd, err := unix.Openat2(unix.AT_FDCWD, p, how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), p), nil
		case (err == unix.EINTR || err == unix.EAGAIN) && try < maxOpenTries:
			// EAGAIN: the kernel could not resolve the path race-free
			// this time (a rename raced it); it asks for another try.
			continue
		case err == unix.ENOSYS || err == unix.EPERM:
			// EPERM: an older container runtime's seccomp filter refusing
			// a system call it does not know; openat2 has no other reason
			// to say it for a read.
			fd, err = unix.Open(p, flags, 0)
			if err == nil {
				return os.NewFile(uintptr(fd), p), nil
			}
		}
		if err == unix.ELOOP {
			return nil, fmt.Errorf("%s: %w", p, errLinkAppeared)
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
}

// pidfdOpen holds on to process pid: a pid can be reused once its process
// is gone, a pidfd cannot.
func pidfdOpen(pid int) (int, error) {
	return unix.PidfdOpen(pid, 0)
}

// pidfdAlive reports whether the process a pidfd holds has not exited:
// while it has not, its pid names it and no other.
func pidfdAlive(fd int) bool {
	err := unix.PidfdSendSignal(fd, 0, nil, 0)
	return err == nil || err == unix.EPERM
}

func pidfdClose(fd int) { _ = unix.Close(fd) }
