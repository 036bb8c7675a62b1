package collect

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/coroner-dev/coroner/parser/manifest"
)

// ReadHeadTail reads a log: whole when it is at most head+tail bytes, else
// its first head and last tail bytes, cut at line ends, with a line between
// them that says how much was left out. The log may grow while it is read;
// what is read is what the file held at the Stat.
//
// The path is resolved and judged before anything is opened (openLog): a
// FIFO or a device named as the log is refused without being opened, and
// when coroner runs as root, a log that another user could have pointed
// elsewhere (a link of theirs to /etc/shadow) is refused, saying why.
func ReadHeadTail(p string, head, tail int64) ([]byte, *manifest.Cut, os.FileInfo, error) {
	return readHeadTail(p, head, tail, -1)
}

// readHeadTail is ReadHeadTail of a file that, read as root, must belong
// to uid want (any owner the path allows when want is negative).
func readHeadTail(p string, head, tail int64, want int) ([]byte, *manifest.Cut, os.FileInfo, error) {
	f, st, err := openLog(p, want)
	if err != nil {
		return nil, nil, st, err
	}
	defer f.Close()
	size := st.Size()
	if size <= head+tail {
		data := make([]byte, size)
		n, err := io.ReadFull(f, data)
		if err != nil && err != io.ErrUnexpectedEOF {
			return nil, nil, st, err
		}
		return data[:n], nil, st, nil
	}
	h := make([]byte, head)
	if _, err := io.ReadFull(f, h); err != nil {
		return nil, nil, st, err
	}
	t := make([]byte, tail)
	if _, err := f.ReadAt(t, size-tail); err != nil && err != io.EOF {
		return nil, nil, st, err
	}
	data, cut := joinHeadTail(h, t, size, head, tail)
	return data, cut, st, nil
}

// joinHeadTail joins the first and last bytes of a log of size bytes: the
// head ends after its last full line and the tail starts at its first (if
// one ends within 64 KiB), and a line between them says how much was left
// out.
func joinHeadTail(h, t []byte, size, head, tail int64) ([]byte, *manifest.Cut) {
	if i := bytes.LastIndexByte(h, '\n'); i >= 0 && int64(len(h)-i) <= 64<<10 {
		h = h[:i+1]
	}
	if i := bytes.IndexByte(t, '\n'); i >= 0 && i < 64<<10 && i+1 < len(t) {
		t = t[i+1:]
	}
	removed := size - int64(len(h)) - int64(len(t))
	note := fmt.Sprintf("[coroner: %d bytes of this log were left out here; the bundle keeps its first %d and last %d bytes]\n", removed, len(h), len(t))
	if len(h) > 0 && h[len(h)-1] != '\n' {
		note = "\n" + note
	}
	data := make([]byte, 0, len(h)+len(note)+len(t))
	data = append(append(append(data, h...), note...), t...)
	cut := &manifest.Cut{OriginalBytes: size, HeadBytes: int64(len(h)), TailBytes: int64(len(t)), RemovedBytes: removed,
		Reason: fmt.Sprintf("logs keep their first %d and last %d bytes", head, tail)}
	return data, cut
}
