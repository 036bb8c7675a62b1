//go:build unix && !linux

package collect

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openNoLinks opens p refusing a link at its last component, without
// waiting on a FIFO or taking a terminal as the controlling one; the
// caller's inode check covers the folders above it (there is no openat2
// here).
func openNoLinks(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: %w", p, errLinkAppeared)
	}
	return f, err
}
