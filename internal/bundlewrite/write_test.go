package bundlewrite

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failingReader yields some bytes, then fails: a file that turns
// unreadable while it is packed.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("input/output error")
	}
	n := min(len(p), r.n)
	for i := range p[:n] {
		p[i] = 'x'
	}
	r.n -= n
	return n, nil
}

// TestFailedWriteKeepsTheTarget packs over an existing bundle and fails
// half way: the old bundle is still there, whole, and nothing else is left
// beside it. Without a cap the archive streamed into the target itself,
// and a failure removed it (a device named by -o included).
func TestFailedWriteKeepsTheTarget(t *testing.T) {
	for _, maxSize := range []int64{0, 1 << 30} {
		t.Run(map[int64]string{0: "no cap", 1 << 30: "cap"}[maxSize], func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "bundle.tar.zst")
			require.NoError(t, os.WriteFile(out, []byte("the previous bundle"), 0o644))
			items := []Item{{Name: "server.log", Size: 1 << 20, ModTime: time.Unix(0, 0), Text: true,
				Open: func() (io.ReadCloser, error) { return io.NopCloser(&failingReader{n: 300 << 10}), nil }}}
			_, err := WriteFile(out, items, manifestOf, Options{MaxSize: maxSize})
			require.Error(t, err)
			got, err := os.ReadFile(out)
			require.NoError(t, err, "the previous bundle was removed")
			assert.Equal(t, "the previous bundle", string(got))
			des, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, d := range des {
				names = append(names, d.Name())
			}
			assert.Equal(t, "bundle.tar.zst", strings.Join(names, " "), "a temporary file was left")
		})
	}
}
