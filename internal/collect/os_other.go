//go:build !unix

package collect

import (
	"errors"
	"io/fs"
	"os/exec"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd, bool) {}

// killGroup kills the command's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// runAs cannot switch users here.
func runAs(*exec.Cmd, identity) error {
	return errors.New("running a command as another user is not supported on this system")
}

// fileOwner is unknown here.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
