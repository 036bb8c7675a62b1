// Package special opens the files coroner reads without ever waiting on
// one that is not a regular file: a FIFO with no writer, a socket, a
// terminal or a device would hold open() or read() forever (/dev/zero,
// /dev/urandom never end). What a file is, is judged on the opened file,
// not only on the listing, so that a file swapped for a FIFO after its
// folder was listed is refused too.
//
// Files of the kernel's pseudo file systems (/proc, /sys, debugfs,
// tracefs) are regular files with no size: their stat size is 0 or made
// up (/proc/kcore), and some never end. Pseudo tells them apart, so that
// their reading is bounded.
package special

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// ErrNotRegular is returned for a file that is not a regular file. The
// error's text says what it is instead.
var ErrNotRegular = errors.New("not a regular file")

// MaxPseudo bounds what is read of one file of a pseudo file system.
const MaxPseudo = 16 << 20

// NotRegularError says what a file is when it is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Describe(e.Mode))
}

// Unwrap makes every NotRegularError an ErrNotRegular.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// Describe names the kind of file a mode is, for messages: "a named pipe
// (FIFO)", "a socket", "a character device" ...
func Describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "a file of unknown type"
	}
	return fmt.Sprintf("a file of mode %v", m.Type())
}

// Open opens p for reading without blocking and returns it with its
// FileInfo, taken from the opened file. It refuses, with a
// *NotRegularError, what is not a regular file. With follow false, a
// symbolic link at p's last component is refused too (where the system can
// tell).
func Open(p string, follow bool) (*os.File, fs.FileInfo, error) {
	f, err := openNonBlocking(p, follow)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, &NotRegularError{Path: p, Mode: st.Mode()}
	}
	return f, st, nil
}

// Pseudo reports whether f is a file of a pseudo file system (procfs,
// sysfs, debugfs, tracefs, cgroupfs ...), whose size says nothing of its
// content.
func Pseudo(f *os.File) bool { return pseudo(f) }

// Bounded reads a file of a pseudo file system: at most MaxPseudo bytes,
// and a read that has nothing to say yet (EAGAIN, from /proc/kmsg or a
// trace pipe opened without blocking) ends it. Cut is set, and OnCut
// called once, when the limit stopped it.
type Bounded struct {
	R     io.Reader
	Cut   bool
	OnCut func()
	n     int64
}

// NewBounded bounds the reading of f. A file that the runtime polls
// (/proc/kmsg, a trace pipe) gets a deadline on every read, so that one
// with nothing to say ends the reading instead of waiting for it.
func NewBounded(f *os.File, onCut func()) *Bounded {
	return &Bounded{R: deadlined{f}, OnCut: onCut}
}

// PseudoWait is how long a read of a pseudo file may wait for data.
const PseudoWait = time.Second

type deadlined struct{ f *os.File }

func (d deadlined) Read(p []byte) (int, error) {
	_ = d.f.SetReadDeadline(time.Now().Add(PseudoWait)) // ErrNoDeadline for most: they never wait
	n, err := d.f.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = io.EOF
	}
	return n, err
}

func (b *Bounded) Read(p []byte) (int, error) {
	if b.n >= MaxPseudo {
		if !b.Cut {
			b.Cut = true
			if b.OnCut != nil {
				b.OnCut()
			}
		}
		return 0, io.EOF
	}
	if left := MaxPseudo - b.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.R.Read(p)
	b.n += int64(n)
	if err != nil && errors.Is(err, syscall.EAGAIN) {
		err = io.EOF
	}
	return n, err
}
