// Package atomicfile writes an output file whole or not at all. The content
// goes to a new temporary file beside the target, is synced, and is renamed
// over the target; on failure only that temporary file is removed.
//
// An output path is typed by a user, often as root, and may name what is
// not a file: `-o /dev/full` once made a failed write remove the device
// node, and a link planted where a report is expected would have sent it
// anywhere. So a target that exists must be a regular file: a directory,
// device, FIFO, socket or symbolic link (to anything) is refused before
// anything is created. Renaming also means that concurrent writers of one
// target each leave a whole file, and the last one wins.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// ErrNotRegular is the cause of a refusal to write over something that is
// not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// defaultPerm is the mode of a new file before the umask: what os.Create
// and the shell's > give, so that a report stays as readable as before.
const defaultPerm = 0o644

// Check says whether path may be written: it does not exist, or it is a
// regular file. Commands call it before their work, so that a bad -o fails
// at once rather than after a long collect or parse; Create checks again.
func Check(path string) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode().IsRegular():
		return nil
	}
	return fmt.Errorf("%s is %s, %w", path, describe(path, st.Mode()), ErrNotRegular)
}

// describe names a file type for the error: "a device", "a symbolic link
// to /dev/null".
func describe(path string, m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		if to, err := os.Readlink(path); err == nil {
			return "a symbolic link to " + to
		}
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file (" + m.Type().String() + ")"
}

// File is an output being written: a temporary file that Commit renames
// over the target. A File that is neither committed nor aborted leaves its
// temporary file behind, so callers defer Abort.
type File struct {
	f      *os.File
	target string
	done   bool
}

// Create starts writing path. The temporary file is created beside it (a
// rename cannot cross file systems) with O_EXCL, so that nothing planted
// under its name is opened, and with mode 0644 less the umask; when path is
// already a regular file, the new one gets no permission the old one lacks,
// so a report kept private stays private.
func Create(path string) (*File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	perm := fs.FileMode(defaultPerm)
	old, err := os.Lstat(path)
	if err == nil {
		perm &= old.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	var f *os.File
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(uint64(rand.Uint32()), 36)+".tmp")
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: create a temporary file beside it: %w", path, err)
	}
	return &File{f: f, target: path}, nil
}

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Name is the temporary file's path.
func (f *File) Name() string { return f.f.Name() }

// Commit syncs the temporary file and renames it over the target. On
// failure the temporary file is removed and the target is as it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: already committed or aborted", f.target)
	}
	f.done = true
	tmp := f.f.Name()
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Something may have been put at the target since Create; the
		// rename would replace it, so it is checked once more.
		err = Check(f.target)
	}
	if err == nil {
		err = os.Rename(tmp, f.target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.target, err)
	}
	syncDir(filepath.Dir(f.target))
	return nil
}

// Abort removes the temporary file; after Commit it does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile writes data to path through a temporary file.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// syncDir makes the rename durable. It is best effort: the file is in
// place already, and some file systems (and Windows) cannot sync a folder,
// which is no reason to report a written file as failed.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
