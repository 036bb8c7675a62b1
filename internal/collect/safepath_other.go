//go:build !linux

package collect

import "errors"

var errLinkAppeared = errors.New("a link appeared on the path")

// pidfds are Linux's: the process is checked by its start time alone.
func pidfdOpen(int) (int, error) { return -1, errors.ErrUnsupported }
func pidfdAlive(int) bool        { return true }
func pidfdClose(int)             {}
