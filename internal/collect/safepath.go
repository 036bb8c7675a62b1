package collect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/internal/special"
)

// A path that another user can change is a way to make root read or run
// what that user chooses: a log replaced by a link to /etc/shadow, a
// virtualenv that is a link into a folder anyone can write. Resolving the
// path with the kernel (os.Open, filepath.EvalSymlinks) says where it led
// but not who could have changed where it leads. So paths are resolved
// here one component at a time, as the kernel would, noting the owner and
// mode of every folder gone through and of every link followed; the
// policies below judge that record (rootMayRead for reading a file as
// root, trustedFor for running one), and openWalked opens the result
// without following any link and checks that the file opened is the one
// judged.

// maxLinks is the kernel's limit on links followed in one resolution
// (MAXSYMLINKS): past it a path loops.
const maxLinks = 40

type stepKind uint8

const (
	stepDir stepKind = iota
	stepLink
)

// pathStep is a folder the walk went into or a link it followed.
type pathStep struct {
	kind stepKind
	// path is where it is, with no link in it.
	path string
	uid  int
	mode fs.FileMode
	// to is what a link reads.
	to string
}

// walked is a path resolved one component at a time.
type walked struct {
	// given is the path as named, abs as walked; path is where it leads,
	// with no link.
	given, abs, path string
	steps            []pathStep
	// end is the Lstat of path, owned by endUID.
	end    fs.FileInfo
	endUID int
}

// refusedError is a read coroner declined, for the safety of the machine,
// rather than one that failed: the manifest lists it as skipped, saying
// why.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, args...)}
}

// walkPath resolves the absolute path p. A component that does not exist,
// or a file where a folder should be, ends it with the error naming that
// component.
func walkPath(p string) (*walked, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("%s: not an absolute path", p)
	}
	w := &walked{given: p, abs: p}
	root, err := os.Lstat("/")
	if err != nil {
		return nil, err
	}
	w.add(stepDir, "/", root, "")
	cur := "/"
	rest := strings.Split(p, "/")
	links := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			// cur holds no link, so its parent is its lexical parent.
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		st, err := os.Lstat(next)
		if err != nil {
			return nil, err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return nil, &fs.PathError{Op: "resolve", Path: p, Err: fmt.Errorf("more than %d links followed (a loop)", maxLinks)}
			}
			to, err := os.Readlink(next)
			if err != nil {
				return nil, err
			}
			w.add(stepLink, next, st, to)
			if filepath.IsAbs(to) {
				cur = "/"
			}
			rest = append(strings.Split(to, "/"), rest...)
		case st.IsDir():
			w.add(stepDir, next, st, "")
			cur = next
		default:
			if more(rest) {
				return nil, &fs.PathError{Op: "resolve", Path: next, Err: errors.New("not a folder, but the path goes on below it")}
			}
			cur = next
		}
	}
	w.path = cur
	if w.end, err = os.Lstat(cur); err != nil {
		return nil, err
	}
	w.endUID = ownerOf(w.end)
	return w, nil
}

// more reports whether components that name something are left.
func more(rest []string) bool {
	for _, c := range rest {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

func (w *walked) add(kind stepKind, p string, st fs.FileInfo, to string) {
	w.steps = append(w.steps, pathStep{kind: kind, path: p, uid: ownerOf(st), mode: st.Mode(), to: to})
}

// ownerOf is the uid owning st, -1 where the system has no owners.
func ownerOf(st fs.FileInfo) int {
	if uid, ok := fileOwner(st); ok {
		return uid
	}
	return -1
}

// whose names an owner for messages.
func whose(uid int) string {
	if uid == 0 {
		return "root"
	}
	return fmt.Sprintf("uid %d", uid)
}

// openFolder says what lets others than the owner put another file in a
// folder the walk went through: "" when nothing does. Anyone may, in a
// folder writable by all without the sticky bit (which keeps each file its
// owner's); its group may, in a group-writable folder without it, which
// is allowed of root's own folders only (/var/log is root:syslog 0775:
// the groups root gives write access to are root's choice).
func openFolder(s pathStep) string {
	if s.kind != stepDir || s.mode&fs.ModeSticky != 0 {
		return ""
	}
	switch perm := s.mode.Perm(); {
	case perm&0o002 != 0:
		return fmt.Sprintf("the folder %s is writable by anyone (%s) and not sticky", s.path, perm)
	case perm&0o020 != 0 && s.uid != 0:
		return fmt.Sprintf("the folder %s is writable by its group (%s) and owned by %s, not root", s.path, perm, whose(s.uid))
	}
	return ""
}

// rootMayRead judges whether root may read the file the walk led to,
// owned by fileUID (as the opened file says), on behalf of whoever named
// it. The users who control the path are the owners, other than root, of
// the folders and links gone through: each could have made it lead
// anywhere they can name, /etc/shadow included. With none, the path is
// root's and any file may be read; with one, only a file of that user's
// own (a file of root's or of a third user there is one they pointed at,
// or hard-linked); with two or more, none, as no single user's rights say
// what is theirs to show. want, when not negative, is the uid the file
// must belong to whatever the path (a Slurm job's output is its user's).
func (w *walked) rootMayRead(fileUID, want int) error {
	// Each controlling user once, with the step that makes them one: a
	// link of theirs rather than a folder, as it says best what they did.
	var ctls []pathStep
	at := map[int]int{}
	for _, s := range w.steps {
		if why := openFolder(s); why != "" {
			return refuse("not read: %s: %s: another user could put any file there", w.given, why)
		}
		if s.uid == 0 {
			continue
		}
		i, ok := at[s.uid]
		switch {
		case !ok:
			at[s.uid] = len(ctls)
			ctls = append(ctls, s)
		case s.kind == stepLink && ctls[i].kind != stepLink:
			ctls[i] = s
		}
	}
	describe := func(s pathStep) string {
		if s.kind == stepLink {
			return fmt.Sprintf("the link %s (to %s) is owned by %s", s.path, s.to, whose(s.uid))
		}
		return fmt.Sprintf("the folder %s is owned by %s", s.path, whose(s.uid))
	}
	switch {
	case len(ctls) > 1:
		var parts []string
		for _, c := range ctls {
			parts = append(parts, describe(c))
		}
		return refuse("not read: %s: %s: %d users could change where it leads", w.given, strings.Join(parts, ", "), len(ctls))
	case len(ctls) == 1 && fileUID != ctls[0].uid:
		c := ctls[0]
		switch {
		case c.kind == stepLink && c.path == filepath.Clean(w.abs):
			return refuse("not read: %s is a link owned by %s to %s, a file owned by %s", w.given, whose(c.uid), w.path, whose(fileUID))
		case c.kind == stepLink:
			return refuse("not read: %s leads through %s, a link owned by %s (to %s), to %s, a file owned by %s",
				w.given, c.path, whose(c.uid), c.to, w.path, whose(fileUID))
		}
		return refuse("not read: %s is owned by %s, but %s: that user could have put it there", w.given, whose(fileUID), describe(c))
	case want >= 0 && fileUID != want:
		return refuse("not read: %s is owned by %s, not by %s", w.given, whose(fileUID), whose(want))
	}
	return nil
}

// trustedFor judges whether anybody but uid and root could change what
// the walk led to: every folder gone through, every link followed and the
// end belong to uid or root, and no folder is writable by group or others
// except sticky ones (where others can add files but not replace this
// one's way). This is the rule sudo and ssh apply to the files they trust.
func (w *walked) trustedFor(uid int) error {
	for _, s := range w.steps {
		if s.uid != 0 && s.uid != uid {
			if s.kind == stepLink {
				return fmt.Errorf("%s is a link (to %s) that belongs to %s", s.path, s.to, whose(s.uid))
			}
			return fmt.Errorf("%s belongs to uid %d", s.path, s.uid)
		}
		if s.kind == stepDir && s.mode.Perm()&0o022 != 0 && s.mode&fs.ModeSticky == 0 {
			return fmt.Errorf("%s is writable by group or others (%s)", s.path, s.mode.Perm())
		}
	}
	if w.endUID != 0 && w.endUID != uid {
		return fmt.Errorf("%s belongs to uid %d", w.path, w.endUID)
	}
	if w.end.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (%s)", w.path, w.end.Mode().Perm())
	}
	return nil
}

// trustedFor checks that nobody but uid and root can change what path
// runs or loads, through the folders above it, the links on its way and
// the folders above where they lead ((*walked).trustedFor).
func trustedFor(path string, uid int) error {
	w, err := walkPath(path)
	if err != nil {
		return err
	}
	return w.trustedFor(uid)
}

// trustedPython is trustedFor of an interpreter, and of what Python reads
// by where it starts: a virtualenv's pyvenv.cfg (beside the executable or
// one folder up, as Python looks for it, by the path it was started
// with), the base installation it names, and the virtualenv's lib folders,
// whose site-packages it imports from.
func trustedPython(path string, uid int) error {
	if err := trustedFor(path, uid); err != nil {
		return err
	}
	for _, d := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		cfg := filepath.Join(d, "pyvenv.cfg")
		if _, err := os.Lstat(cfg); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := trustedFor(cfg, uid); err != nil {
			return fmt.Errorf("its virtualenv's pyvenv.cfg: %w", err)
		}
		var dirs []string
		if home := pyvenvHome(cfg); home != "" {
			dirs = append(dirs, home)
		}
		for _, pat := range []string{"lib", "lib64", "lib/python3*", "lib64/python3*", "lib/python3*/site-packages", "lib64/python3*/site-packages"} {
			m, _ := filepath.Glob(filepath.Join(d, pat))
			sort.Strings(m)
			dirs = append(dirs, m...)
		}
		for _, l := range dirs {
			if err := trustedFor(l, uid); err != nil {
				return fmt.Errorf("its virtualenv: %w", err)
			}
		}
		break
	}
	return nil
}

// pyvenvHome reads the "home = DIR" line of a pyvenv.cfg, already judged
// trusted: the base installation the virtualenv runs.
func pyvenvHome(cfg string) string {
	f, _, err := special.Open(cfg, false)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 16<<10)
	n, _ := f.Read(buf)
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if ok && strings.TrimSpace(k) == "home" {
			if v = strings.TrimSpace(v); filepath.IsAbs(v) {
				return v
			}
		}
	}
	return ""
}

// CheckLog judges a log named on the command line before the collect
// starts, as the read at its end will (readLog): that it exists, is a
// regular file, and, when coroner runs as root, may be read as root.
// Nothing is opened.
func CheckLog(p string) error {
	w, err := walkLog(p)
	if err != nil {
		return err
	}
	if selfIdentity().root() {
		return w.rootMayRead(w.endUID, -1)
	}
	return nil
}

func walkLog(p string) (*walked, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	w, err := walkPath(abs)
	if err != nil {
		return nil, err
	}
	w.given = p
	if !w.end.Mode().IsRegular() {
		// Judged before any open: opening a device can act (a tape
		// rewinds, a watchdog starts counting), a FIFO can wait forever.
		return w, fmt.Errorf("%s is %s: %w", p, special.Describe(w.end.Mode()), ErrNotRegular)
	}
	return w, nil
}

// openLog opens a log for reading: the path walked (walkPath), judged
// (rootMayRead, when coroner runs as root; want as there), and the file
// it led to opened without following any link and checked to be the
// regular file judged, its owner judged again from the opened file. The
// FileInfo is the opened file's.
func openLog(p string, want int) (*os.File, fs.FileInfo, error) {
	w, err := walkLog(p)
	if err != nil {
		var st fs.FileInfo
		if w != nil {
			st = w.end
		}
		return nil, st, err
	}
	root := selfIdentity().root()
	if root {
		if err := w.rootMayRead(w.endUID, want); err != nil {
			return nil, nil, err
		}
	}
	f, st, err := openWalked(w)
	if err != nil {
		return nil, st, err
	}
	if root {
		if err := w.rootMayRead(ownerOf(st), want); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return f, st, nil
}

// openWalked opens the file a walk led to, through a path that holds no
// link, refusing any link that appeared there since, and checks that it
// is the regular file the walk saw: a path swapped between the walk and
// the open is refused, never read.
func openWalked(w *walked) (*os.File, fs.FileInfo, error) {
	f, err := openNoLinks(w.path)
	if err != nil {
		if errors.Is(err, errLinkAppeared) {
			return nil, nil, refuse("not read: %s changed while it was checked (a link appeared in %s)", w.given, w.path)
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, fmt.Errorf("%s is %s: %w", w.given, special.Describe(st.Mode()), ErrNotRegular)
	}
	if !os.SameFile(st, w.end) {
		f.Close()
		return nil, nil, refuse("not read: %s changed while it was checked (%s is another file now)", w.given, w.path)
	}
	return f, st, nil
}
