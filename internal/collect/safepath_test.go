//go:build unix

package collect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootTree is a folder of root's, readable by all (t.TempDir is 0700,
// which no other user could go through).
func rootTree(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "coroner-safepath-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	return base
}

// mkdir makes a folder of uid's with mode perm (chmod'ed: the umask does
// not narrow it).
func mkdir(t *testing.T, p string, uid int, perm os.FileMode) string {
	t.Helper()
	require.NoError(t, os.Mkdir(p, 0o700))
	require.NoError(t, os.Chown(p, uid, uid))
	require.NoError(t, os.Chmod(p, perm))
	return p
}

func writeAs(t *testing.T, p string, uid int, body string, perm os.FileMode) string {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(body), perm))
	require.NoError(t, os.Chown(p, uid, uid))
	return p
}

func linkAs(t *testing.T, to, p string, uid int) string {
	t.Helper()
	require.NoError(t, os.Symlink(to, p))
	require.NoError(t, os.Lchown(p, uid, uid))
	return p
}

// TestReadLogAsRoot is the rule for reading, as root, a file another
// user may have named (issue 19's follow-up, item 1): the users who own
// the folders and links on the way control the path, and root reads only
// what one controlling user owns, or anything on a path only root
// controls.
func TestReadLogAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it gives files and links to other users (uid 65534, 1234) and reads them as root")
	}
	base := rootTree(t)
	secret := writeAs(t, filepath.Join(base, "shadow"), 0, "root:$6$secret\n", 0o600)
	rootDir := mkdir(t, filepath.Join(base, "etc"), 0, 0o755)
	writeAs(t, filepath.Join(rootDir, "shadow"), 0, "root:$6$secret\n", 0o600)

	alice := mkdir(t, filepath.Join(base, "alice"), nobody, 0o755)
	own := writeAs(t, filepath.Join(alice, "server.log"), nobody, "alice's log\n", 0o644)
	linkAs(t, secret, filepath.Join(alice, "link.log"), nobody)
	linkAs(t, rootDir, filepath.Join(alice, "etc"), nobody)
	writeAs(t, filepath.Join(alice, "roots.log"), 0, "root's file in alice's folder\n", 0o644)

	bob := mkdir(t, filepath.Join(base, "bob"), 1234, 0o755)
	linkAs(t, own, filepath.Join(bob, "alices.log"), 1234)

	open := mkdir(t, filepath.Join(base, "open"), 0, 0o777)
	writeAs(t, filepath.Join(open, "server.log"), nobody, "x\n", 0o644)
	group := mkdir(t, filepath.Join(base, "group"), nobody, 0o775)
	writeAs(t, filepath.Join(group, "server.log"), nobody, "x\n", 0o644)
	varLog := mkdir(t, filepath.Join(base, "varlog"), 0, 0o775) // /var/log: root:syslog 0775
	writeAs(t, filepath.Join(varLog, "server.log"), 0, "root's log\n", 0o640)

	tmp := mkdir(t, filepath.Join(base, "tmp"), 0, 0o777|os.ModeSticky)
	writeAs(t, filepath.Join(tmp, "server.log"), nobody, "alice's log in /tmp\n", 0o644)
	linkAs(t, secret, filepath.Join(tmp, "link.log"), nobody)

	linkAs(t, own, filepath.Join(base, "roots-link.log"), 0)
	linkAs(t, filepath.Join(base, "loop2"), filepath.Join(base, "loop1"), 0)
	linkAs(t, filepath.Join(base, "loop1"), filepath.Join(base, "loop2"), 0)

	tests := []struct {
		name, path string
		want       string // the content, or with "!" the error
	}{
		{"a user's own log in their folder", own, "alice's log\n"},
		{"a link owned by another user to a root file", filepath.Join(alice, "link.log"),
			"!not read: " + filepath.Join(alice, "link.log") + " is a link owned by uid 65534 to " + secret + ", a file owned by root"},
		{"a link in the middle of the path", filepath.Join(alice, "etc", "shadow"),
			"!leads through " + filepath.Join(alice, "etc") + ", a link owned by uid 65534"},
		{"root's file in a user's folder (they could have hard-linked it)", filepath.Join(alice, "roots.log"),
			"!is owned by root, but the folder " + alice + " is owned by uid 65534"},
		{"two users on the way", filepath.Join(bob, "alices.log"), "!2 users could change where it leads"},
		{"a 0777 parent", filepath.Join(open, "server.log"), "!the folder " + open + " is writable by anyone (-rwxrwxrwx) and not sticky"},
		{"a group-writable folder of a user", filepath.Join(group, "server.log"), "!writable by its group"},
		{"a group-writable folder of root's (/var/log)", filepath.Join(varLog, "server.log"), "root's log\n"},
		{"a user's file in a sticky /tmp", filepath.Join(tmp, "server.log"), "alice's log in /tmp\n"},
		{"a user's link in a sticky /tmp to a root file", filepath.Join(tmp, "link.log"), "!is a link owned by uid 65534 to " + secret},
		{"root's link to a user's file", filepath.Join(base, "roots-link.log"), "alice's log\n"},
		{"a link loop", filepath.Join(base, "loop1"), "!more than 40 links"},
		{"a missing folder", filepath.Join(base, "nope", "server.log"), "!no such file or directory"},
		{"root's own file", secret, "root:$6$secret\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, _, _, err := ReadHeadTail(tc.path, 1<<20, 1<<20)
			if want, ok := strings.CutPrefix(tc.want, "!"); ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), want)
				assert.NotContains(t, string(data), "secret")
				// CheckLog, the command line's check, says the same.
				assert.Error(t, CheckLog(tc.path))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(data))
			assert.NoError(t, CheckLog(tc.path))
		})
	}
}

// TestOpenLogNeverOpensSpecialFiles: a FIFO or a device named as a log is
// judged from the walk and refused without being opened (an open of a
// device can act; one of a FIFO unblocks its writer).
func TestOpenLogNeverOpensSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "server.log")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// A writer waits for a reader: if the collector opened the FIFO, the
	// writer's open would return.
	opened := make(chan struct{})
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		close(opened)
	}()
	time.Sleep(100 * time.Millisecond) // the writer waits in open()
	_, _, _, err := ReadHeadTail(fifo, 1<<20, 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "is a named pipe (FIFO)")
	select {
	case <-opened:
		t.Fatal("the FIFO was opened: its writer's open returned")
	case <-time.After(200 * time.Millisecond):
	}
	// Let the writer go.
	if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		<-opened
		r.Close()
	}

	for _, dev := range []string{"/dev/zero", "/dev/null"} {
		_, _, _, err := ReadHeadTail(dev, 1<<20, 1<<20)
		require.ErrorIs(t, err, ErrNotRegular, dev)
		assert.Contains(t, err.Error(), "a character device")
	}
	// A link to a device is judged by where it leads.
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.log")))
	_, _, _, err = ReadHeadTail(filepath.Join(dir, "zero.log"), 1<<20, 1<<20)
	assert.ErrorIs(t, err, ErrNotRegular)
}

// TestOpenWalkedRefusesASwappedPath: the path changed between the walk
// that judged it and the open: the file replaced by another, or a folder
// on the way by a link. Either is refused, never read.
func TestOpenWalkedRefusesASwappedPath(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	require.NoError(t, os.Mkdir(logs, 0o755))
	p := filepath.Join(logs, "server.log")
	require.NoError(t, os.WriteFile(p, []byte("the log\n"), 0o644))

	w, err := walkPath(p)
	require.NoError(t, err)
	other := filepath.Join(dir, "other")
	require.NoError(t, os.WriteFile(other, []byte("another file\n"), 0o600))
	require.NoError(t, os.Rename(other, p))
	_, _, err = openWalked(w)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "changed while it was checked ("+p+" is another file now)")
	var r *refusedError
	assert.True(t, errors.As(err, &r), "a refusal, listed as skipped")

	w, err = walkPath(p)
	require.NoError(t, err)
	elsewhere := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.Rename(logs, elsewhere))
	require.NoError(t, os.Symlink(elsewhere, logs))
	f, _, err := openWalked(w)
	if err == nil {
		// Without openat2 (Linux before 5.6) the inode check finds the
		// same file through the link: the read is the one judged.
		f.Close()
		t.Skip("no openat2 here: a folder swapped for a link to the same file is read, harmlessly")
	}
	assert.Contains(t, err.Error(), "a link appeared in "+p)
}

// TestTrustedForWalksEveryLink: what trustedFor accepts to run or load as
// a user (item 5): a link in the middle of the path leads to folders that
// are checked too, and a virtualenv's pyvenv.cfg and lib folders are
// checked with its python.
func TestTrustedForWalksEveryLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it gives files and links to other users (uid 65534, 1234)")
	}
	base := rootTree(t)
	// The audit's case: uid 65534's venv link leads into a folder anyone
	// can write (and rename the venv away from).
	// Its python3 is a link to the system's, as a venv's is: where it
	// resolves to is root's, and only the walk sees the folder between.
	shared := mkdir(t, filepath.Join(base, "shared"), 0, 0o777)
	venv := mkdir(t, filepath.Join(shared, "venv"), nobody, 0o755)
	mkdir(t, filepath.Join(venv, "bin"), nobody, 0o755)
	linkAs(t, "/bin/sh", filepath.Join(venv, "bin", "python3"), nobody)
	home := mkdir(t, filepath.Join(base, "home"), nobody, 0o755)
	linkAs(t, filepath.Join(shared, "venv"), filepath.Join(home, "venv"), nobody)

	// Good and bad virtualenvs.
	good := filepath.Join(base, "good")
	tree(t, good, nobody, map[string]string{"bin/python3": "#!/bin/sh\n", "pyvenv.cfg": "home = /usr/bin\n",
		"lib/python3.11/site-packages/x.py": ""})
	badCfg := filepath.Join(base, "badcfg")
	tree(t, badCfg, nobody, map[string]string{"bin/python3": "#!/bin/sh\n", "pyvenv.cfg": "home = /usr/bin\n"})
	require.NoError(t, os.Chown(filepath.Join(badCfg, "pyvenv.cfg"), 1234, 1234))
	badLib := filepath.Join(base, "badlib")
	tree(t, badLib, nobody, map[string]string{"bin/python3": "#!/bin/sh\n", "pyvenv.cfg": "home = /usr/bin\n",
		"lib/python3.11/site-packages/x.py": ""})
	require.NoError(t, os.Chmod(filepath.Join(badLib, "lib", "python3.11", "site-packages"), 0o777))
	theirs := mkdir(t, filepath.Join(base, "theirs"), 1234, 0o755)
	badHome := filepath.Join(base, "badhome")
	tree(t, badHome, nobody, map[string]string{"bin/python3": "#!/bin/sh\n", "pyvenv.cfg": "home = " + theirs + "\n"})

	// A user's link in the middle, to a folder of another user.
	linkAs(t, theirs, filepath.Join(home, "tools"), nobody)
	writeAs(t, filepath.Join(theirs, "python3"), 1234, "#!/bin/sh\n", 0o755)
	// A sticky /tmp above is fine.
	tmp := mkdir(t, filepath.Join(base, "tmp"), 0, 0o777|os.ModeSticky)
	tree(t, filepath.Join(tmp, "v"), nobody, map[string]string{"bin/python3": "#!/bin/sh\n"})

	tests := []struct {
		name, path, want string
	}{
		{"a venv linked into a 0777 folder", filepath.Join(home, "venv", "bin", "python3"), shared + " is writable by group or others"},
		{"a link in the middle to another user's folder", filepath.Join(home, "tools", "python3"), theirs + " belongs to uid 1234"},
		{"a good virtualenv", filepath.Join(good, "bin", "python3"), ""},
		{"pyvenv.cfg of another user", filepath.Join(badCfg, "bin", "python3"), "pyvenv.cfg: " + filepath.Join(badCfg, "pyvenv.cfg") + " belongs to uid 1234"},
		{"site-packages anyone can write", filepath.Join(badLib, "bin", "python3"), "site-packages is writable by group or others"},
		{"pyvenv.cfg's home of another user", filepath.Join(badHome, "bin", "python3"), theirs + " belongs to uid 1234"},
		{"under a sticky /tmp", filepath.Join(tmp, "v", "bin", "python3"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := trustedPython(tc.path, nobody)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
