package collect

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// identity is whom a process runs as: its real user and group and its
// supplementary groups.
type identity struct {
	uid, gid int
	groups   []int
}

// selfIdentity is the collector's own.
func selfIdentity() identity {
	id := identity{uid: os.Geteuid(), gid: os.Getegid()}
	id.groups, _ = os.Getgroups()
	return id
}

func (id identity) root() bool { return id.uid == 0 }

// String is "uid 1000 (alice), gid 1000 (alice)"; names where the host
// knows them.
func (id identity) String() string {
	u := strconv.Itoa(id.uid)
	if uu, err := user.LookupId(u); err == nil {
		u += " (" + uu.Username + ")"
	}
	g := strconv.Itoa(id.gid)
	if gg, err := user.LookupGroupId(g); err == nil {
		g += " (" + gg.Name + ")"
	}
	return "uid " + u + ", gid " + g
}

// procOwner reads whom process pid runs as from /proc/PID/status. A
// process whose real, effective, saved and file-system ids differ (a
// set-uid program mid-way) has no single owner, and is refused: running
// code for it as either id could be wrong.
func procOwner(procRoot string, pid int) (identity, error) {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "status"))
	if err != nil {
		return identity{}, err
	}
	var id identity
	var haveUID, haveGID bool
	ids := func(v string) (int, error) {
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, errors.New("no ids")
		}
		for _, x := range f[1:] {
			if x != f[0] {
				return 0, fmt.Errorf("its ids differ (%s)", strings.Join(f, " "))
			}
		}
		return strconv.Atoi(f[0])
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch k {
		case "Uid":
			if id.uid, err = ids(v); err != nil {
				return identity{}, fmt.Errorf("process %d: uid: %w", pid, err)
			}
			haveUID = true
		case "Gid":
			if id.gid, err = ids(v); err != nil {
				return identity{}, fmt.Errorf("process %d: gid: %w", pid, err)
			}
			haveGID = true
		case "Groups":
			for _, g := range strings.Fields(v) {
				n, err := strconv.Atoi(g)
				if err != nil {
					return identity{}, fmt.Errorf("process %d: groups: %w", pid, err)
				}
				id.groups = append(id.groups, n)
			}
		}
	}
	if !haveUID || !haveGID {
		return identity{}, fmt.Errorf("process %d: no Uid or Gid line in its status", pid)
	}
	return id, nil
}

// procState is what a process is at one moment: whom it runs as, when
// it started (which tells it from a later process given the same pid),
// the program it runs, and its mount namespace (which says what its paths
// name).
type procState struct {
	id    identity
	start uint64
	exe   string
	mnt   string
}

// readProcState reads process pid's state from /proc. A process whose ids
// differ (procOwner) has none.
func readProcState(procRoot string, pid int) (procState, error) {
	id, err := procOwner(procRoot, pid)
	if err != nil {
		return procState{}, err
	}
	p := readProc(procRoot, pid)
	if p == nil {
		return procState{}, fmt.Errorf("process %d is gone", pid)
	}
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	s := procState{id: id, start: p.startTicks}
	// Unreadable links stay "": they are compared, not trusted.
	s.exe, _ = os.Readlink(filepath.Join(dir, "exe"))
	s.mnt, _ = os.Readlink(filepath.Join(dir, "ns", "mnt"))
	return s, nil
}

// changed says how b differs from a, "" if it does not.
func (a procState) changed(b procState) string {
	var d []string
	if a.start != b.start {
		d = append(d, "it is another process now (its start time changed)")
	}
	if a.id.uid != b.id.uid || a.id.gid != b.id.gid || !slices.Equal(a.id.groups, b.id.groups) {
		d = append(d, fmt.Sprintf("it ran as %s and runs as %s now", a.id.short(), b.id.short()))
	}
	if a.exe != b.exe {
		d = append(d, fmt.Sprintf("it ran %s and runs %s now", orDefault(a.exe, "(unknown)"), orDefault(b.exe, "(unknown)")))
	}
	if a.mnt != b.mnt {
		d = append(d, "its mount namespace changed")
	}
	return strings.Join(d, "; ")
}

func (id identity) short() string { return fmt.Sprintf("uid %d gid %d", id.uid, id.gid) }

// serverCapture is the server's environment, read together with whom the
// server ran as when it was read: the identity the server's Python may
// run as with that environment, never one read later (a process that
// exec'd a set-uid-root program since runs as root, with the environment
// its old user gave it).
type serverCapture struct {
	pid   int
	env   []string
	state procState
	// why is set when the environment cannot be tied to one identity.
	why string
	// pidfd holds on to the process (-1 without one).
	pidfd int
}

// captureServer reads process pid's environment between two reads of its
// state, which must agree: a process that changed user, exec'd or was
// replaced meanwhile has an environment of no one identity. A pidfd, where
// the system has them, tells a process that lives on from a new one with
// its pid.
func captureServer(procRoot string, pid int) *serverCapture {
	s := &serverCapture{pid: pid, pidfd: -1}
	if procRoot == "/proc" {
		if fd, err := pidfdOpen(pid); err == nil {
			s.pidfd = fd
		}
	}
	before, err := readProcState(procRoot, pid)
	s.env = readEnviron(filepath.Join(procRoot, strconv.Itoa(pid), "environ"))
	after, err2 := readProcState(procRoot, pid)
	switch {
	case err != nil:
		s.why = fmt.Sprintf("cannot tell whom process %d ran as when its environment was read: %v", pid, err)
	case err2 != nil:
		s.why = fmt.Sprintf("cannot tell whom process %d ran as when its environment was read: %v", pid, err2)
	case before.changed(after) != "":
		s.why = fmt.Sprintf("process %d changed while its environment was read: %s", pid, before.changed(after))
	case s.pidfd >= 0 && !pidfdAlive(s.pidfd):
		s.why = fmt.Sprintf("process %d exited while its environment was read", pid)
	}
	s.state = before
	return s
}

// recheck says whether the server is still what it was when its
// environment was read: nil if so.
func (s *serverCapture) recheck(procRoot string) error {
	if s.why != "" {
		return errors.New(s.why)
	}
	now, err := readProcState(procRoot, s.pid)
	if err != nil {
		return fmt.Errorf("process %d: %w", s.pid, err)
	}
	if d := s.state.changed(now); d != "" {
		return fmt.Errorf("process %d changed since its environment was read: %s", s.pid, d)
	}
	// Read after /proc: while the pidfd's process lives, the pid read
	// there was its.
	if s.pidfd >= 0 && !pidfdAlive(s.pidfd) {
		return fmt.Errorf("process %d exited since its environment was read", s.pid)
	}
	return nil
}

func (s *serverCapture) close() {
	if s != nil && s.pidfd >= 0 {
		pidfdClose(s.pidfd)
		s.pidfd = -1
	}
}
