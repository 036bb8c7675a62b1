//go:build unix

package collect

import (
	"io/fs"
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own, so that
// killGroup reaches its children too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends SIGKILL to the command's whole process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// runAs makes the command run as id: its user, group and supplementary
// groups, set by the kernel before the program starts.
func runAs(cmd *exec.Cmd, id identity) error {
	groups := make([]uint32, 0, len(id.groups))
	for _, g := range id.groups {
		groups = append(groups, uint32(g))
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(id.uid), Gid: uint32(id.gid), Groups: groups}
	return nil
}

// fileOwner is the uid owning the file st describes.
func fileOwner(st fs.FileInfo) (int, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(sys.Uid), true
}

// openNoFollow opens a file for reading without following a link at its
// last component and without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
