package collect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
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

// trustedFor checks that nobody but uid and root can change what path
// runs: the file and every directory above it (of the path as given and of
// where its links lead) belong to uid or root and are not writable by group
// or others, except directories with the sticky bit, where others can add
// files but not replace this one. This is the rule sudo and ssh apply to
// the files they trust.
func trustedFor(path string, uid int) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s: not an absolute path", path)
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range []string{path, resolved} {
		for q := p; !seen[q]; q = filepath.Dir(q) {
			seen[q] = true
			if err := trustedEntry(q, uid, q == p); err != nil {
				return err
			}
			if q == "/" {
				break
			}
		}
	}
	return nil
}

func trustedEntry(p string, uid int, leaf bool) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	owner, ok := fileOwner(st)
	if !ok {
		return fmt.Errorf("%s: no owner to check", p)
	}
	if owner != 0 && owner != uid {
		return fmt.Errorf("%s belongs to uid %d", p, owner)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		// A link's own mode means nothing; its directory and its target
		// are checked.
		return nil
	}
	if st.Mode().Perm()&0o022 != 0 {
		if st.IsDir() && st.Mode()&fs.ModeSticky != 0 && !leaf {
			return nil
		}
		return fmt.Errorf("%s is writable by group or others (%s)", p, st.Mode().Perm())
	}
	return nil
}
