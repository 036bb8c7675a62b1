//go:build !unix

package bundlewrite

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/coroner-dev/coroner/internal/special"
)

// OpenNoFollow opens a file for reading, refusing a symbolic link.
func OpenNoFollow(p string) (*os.File, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: a symbolic link", p)
	}
	f, _, err := special.Open(p, false)
	return f, err
}
