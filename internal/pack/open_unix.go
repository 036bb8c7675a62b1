//go:build unix

package pack

import (
	"os"
	"syscall"
)

// OpenNoFollow opens a file for reading, refusing a symbolic link: a link
// put where a file was listed must not pull another file into a bundle.
func OpenNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
