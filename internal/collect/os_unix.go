//go:build unix

package collect

import (
	"io/fs"
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own, so that
// killGroup reaches its children too. A command that runs as another user
// gets a session of its own as well, which has no controlling terminal:
// in the collector's session it could open /dev/tty, root's terminal, and
// push keystrokes into it (TIOCSTI) to be run as root once coroner exits.
// A session leader leads its own process group, so killGroup still
// reaches it and its children. (setpgid would fail in a session leader:
// Setsid alone.)
func ownGroup(cmd *exec.Cmd, session bool) {
	if session {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return
	}
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
