//go:build unix

package atomicfile

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// entries lists a folder, so that a test sees any temporary file left.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestWriteFileRefusesWhatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the target
		want  string                                // in the error
	}{
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out")
			require.NoError(t, os.Mkdir(p, 0o755))
			return p
		}, "is a directory"},
		{"fifo", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			// A reader, so that a write that follows the FIFO goes
			// through instead of blocking the test.
			r, err := os.OpenFile(p, os.O_RDWR, 0)
			require.NoError(t, err)
			t.Cleanup(func() { r.Close() })
			return p
		}, "is a named pipe"},
		{"symlink to /dev/null", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "null")
			require.NoError(t, os.Symlink("/dev/null", p))
			return p
		}, "is a symbolic link to /dev/null"},
		{"symlink to a regular file", func(t *testing.T, dir string) string {
			// Following it would write wherever the link's owner chose.
			target := filepath.Join(dir, "elsewhere")
			require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
			p := filepath.Join(dir, "link")
			require.NoError(t, os.Symlink(target, p))
			return p
		}, "is a symbolic link to"},
		{"dangling symlink", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "dangling")
			require.NoError(t, os.Symlink(filepath.Join(dir, "nothing"), p))
			return p
		}, "is a symbolic link to"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := tc.setup(t, dir)
			before, err := os.Lstat(target)
			require.NoError(t, err)
			list := entries(t, dir)

			err = WriteFile(target, []byte("report\n"))
			require.ErrorIs(t, err, ErrNotRegular)
			assert.Contains(t, err.Error(), tc.want)

			after, err := os.Lstat(target)
			require.NoError(t, err, "the target is gone")
			assert.Equal(t, before.Mode(), after.Mode())
			assert.True(t, os.SameFile(before, after), "the target was replaced")
			assert.Equal(t, list, entries(t, dir), "a file was created or removed")
		})
	}
}

// TestWriteFileRefusesDevices writes to /dev/null itself, and as root to a
// twin of /dev/full made in a temporary folder: a failed write once removed
// the node. The real /dev/full is never touched.
func TestWriteFileRefusesDevices(t *testing.T) {
	t.Run("/dev/null", func(t *testing.T) {
		err := WriteFile("/dev/null", []byte("x"))
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Contains(t, err.Error(), "is a device")
		st, err := os.Lstat("/dev/null")
		require.NoError(t, err)
		assert.NotZero(t, st.Mode()&fs.ModeCharDevice)
	})
	t.Run("a /dev/full twin", func(t *testing.T) {
		if os.Geteuid() != 0 || runtime.GOOS != "linux" {
			t.Skip("making a device node needs root (and Linux's device numbers)")
		}
		p := filepath.Join(t.TempDir(), "full")
		require.NoError(t, syscall.Mknod(p, syscall.S_IFCHR|0o644, int(mkdev(1, 7))))
		err := WriteFile(p, bytes.Repeat([]byte("x"), 1<<20))
		require.ErrorIs(t, err, ErrNotRegular)
		st, err := os.Lstat(p)
		require.NoError(t, err, "the device node was removed")
		assert.NotZero(t, st.Mode()&fs.ModeCharDevice)
		assert.Equal(t, []string{"full"}, entries(t, filepath.Dir(p)))
	})
}

// mkdev is Linux's makedev for small numbers.
func mkdev(major, minor uint64) uint64 { return major<<8 | minor }

func TestWriteFileReplacesARegularFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.md")
	require.NoError(t, os.WriteFile(p, []byte("an old and longer report\n"), 0o600))
	require.NoError(t, WriteFile(p, []byte("new\n")))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), "a private report became readable")
	assert.Equal(t, []string{"report.md"}, entries(t, dir), "a temporary file was left")
}

func TestWriteFileNewFileRespectsUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "report.md")
	require.NoError(t, WriteFile(p, []byte("r\n")))
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), st.Mode().Perm())
}

// TestCommitFailureRemovesOnlyTheTemporaryFile puts a folder where the
// target was between Create and Commit: the commit fails, the folder stays
// and the temporary file goes.
func TestCommitFailureRemovesOnlyTheTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	f, err := Create(p)
	require.NoError(t, err)
	_, err = f.Write([]byte("partial"))
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(p, 0o755))
	require.ErrorIs(t, f.Commit(), ErrNotRegular)
	assert.Equal(t, []string{"out"}, entries(t, dir))
	st, err := os.Lstat(p)
	require.NoError(t, err)
	assert.True(t, st.IsDir())
}

func TestAbortLeavesTheTargetAlone(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	f, err := Create(p)
	require.NoError(t, err)
	_, err = f.Write([]byte("half a rep"))
	require.NoError(t, err)
	f.Abort()
	f.Abort() // a deferred Abort after an explicit one is harmless
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
	assert.Equal(t, []string{"out"}, entries(t, dir))
}

func TestCreateInAMissingFolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "out")
	err := WriteFile(p, []byte("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), p)
}

// TestConcurrentWritersLeaveOneWholeFile has 20 writers of contents of
// different lengths race on one target, 20 times over: each time the file
// is exactly one of them. Truncating and writing in place mixed them (the
// tail of a longer one after a shorter one) in 4 of 5 runs of this test.
func TestConcurrentWritersLeaveOneWholeFile(t *testing.T) {
	const writers = 20
	contents := map[string]bool{}
	var datas [][]byte
	for i := range writers {
		d := bytes.Repeat([]byte(fmt.Sprintf("writer %02d\n", i)), 20000+i*9973)
		datas = append(datas, d)
		contents[string(d)] = true
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "report")
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Go(func() { errs[i] = WriteFile(p, datas[i]) })
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "writer %d", i)
		}
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.True(t, contents[string(got)], "round %d: the file is not one writer's whole content (%d bytes)", round, len(got))
		assert.Equal(t, []string{"report"}, entries(t, dir), "round %d: temporary files left", round)
	}
}
