//go:build unix

package bundlewrite

import (
	"os"

	"github.com/coroner-dev/coroner/internal/special"
)

// OpenNoFollow opens a file for reading, refusing a symbolic link: a link
// put where a file was listed must not pull another file into a bundle.
// It never waits: a FIFO, socket or device put there is refused too, as
// the opened file shows (special.ErrNotRegular).
func OpenNoFollow(p string) (*os.File, error) {
	f, _, err := special.Open(p, false)
	return f, err
}
