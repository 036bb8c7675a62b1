package bundle

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// fuzzSeeds are the archives the tests build, small enough to mutate.
func fuzzSeeds(t testing.TB) [][]byte {
	tarb := sampleTar(t)
	hostile := makeTar(t, []member{
		{name: "../../etc/passwd", body: "root"},
		{name: "/abs", body: "abs"},
		{name: "l", typ: tar.TypeSymlink, link: "/etc/shadow"},
		{name: "h", typ: tar.TypeLink, link: "abs"},
		{name: "fifo", typ: tar.TypeFifo},
	})
	inner := makeZip(t, []member{{name: "mid.txt", body: "m"}, {name: "deep.tar.gz", body: string(gz(t, tarb))}})
	nested := makeTar(t, []member{{name: "inner.zip", body: string(inner)}, {name: "a.log.gz", body: string(gz(t, []byte("a\n")))}})
	gzt := gz(t, tarb)
	zipb := makeZip(t, sample)
	cutZip := zipb[:bytes.LastIndex(zipb, []byte("PK\x01\x02"))+10]
	return [][]byte{
		tarb, gzt, gzt[:len(gzt)/2], zst(t, tarb), xzc(t, tarb), makeZip(t, sample), hostile, nested, zst(t, nested),
		gz(t, []byte(sample[0].body)), zst(t, []byte(sample[0].body)), xzc(t, []byte(sample[0].body)),
		[]byte(sample[0].body), {}, {0x1f, 0x8b}, []byte("PK\x05\x06"), cutZip,
	}
}

func FuzzWalkReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{MaxTotalBytes: 4 << 20, MaxEntries: 200, MaxInMemory: 1 << 20, MaxZstdWindow: 1 << 20, MaxXZDict: 1 << 20}
		var issues []facts.Issue
		opts.Issue = func(is facts.Issue) { issues = append(issues, is) }
		var total int64
		entries := 0
		err := WalkReader("fuzz.bin", bytes.NewReader(data), opts, func(e *Entry, r io.Reader) error {
			entries++
			require.NotEmpty(t, e.Path)
			require.False(t, strings.HasPrefix(e.Path, "/"), e.Path)
			require.Equal(t, path.Clean(e.Path), e.Path)
			for _, el := range strings.Split(e.Path, "/") {
				require.NotEqual(t, "..", el, e.Path)
			}
			require.NotEmpty(t, e.Container)
			if e.Link != "" {
				require.Nil(t, r)
			}
			if r == nil {
				return nil
			}
			n, err := io.Copy(io.Discard, r)
			total += n
			if err != nil {
				require.ErrorIs(t, err, ErrStream)
			}
			return nil
		})
		require.NoError(t, err)
		require.LessOrEqual(t, total, opts.MaxTotalBytes)
		require.LessOrEqual(t, entries, opts.MaxEntries)
		for _, is := range issues {
			require.NotEmpty(t, is.Src.File)
			require.NotEmpty(t, is.Kind)
			require.NotEmpty(t, is.Detail)
		}
	})
}

// TestSeedsAreWalked keeps the fuzz seeds honest: each walks without
// failing, and the well-formed ones without issues.
func TestSeedsAreWalked(t *testing.T) {
	for i, s := range fuzzSeeds(t) {
		var issues []facts.Issue
		err := WalkReader("seed", bytes.NewReader(s), Options{Issue: func(is facts.Issue) { issues = append(issues, is) }},
			func(e *Entry, r io.Reader) error { return nil })
		require.NoError(t, err, i)
	}
}

// TestRealCaptures walks a real capture folder from the corpus, and the
// same files as a tar.zst and a zip: the contents come back byte for byte.
func TestRealCaptures(t *testing.T) {
	root := filepath.Join("..", "..", "fixtures", "corpus", "h200-x2", "00-idle")
	dirGot := walkPath(t, root, Options{})
	require.NotEmpty(t, dirGot.entries)
	assert.Empty(t, dirGot.issues)
	var ms []member
	for _, e := range dirGot.entries {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Path)))
		require.NoError(t, err)
		assert.Equal(t, string(b), e.Content, e.Path)
		assert.Equal(t, "dir", e.Container)
		ms = append(ms, member{name: e.Path, body: string(b)})
	}
	assert.Contains(t, dirGot.paths(), "nvidia-smi-q.xml")
	for name, data := range map[string][]byte{"idle.tar.zst": zst(t, makeTar(t, ms)), "idle.zip": makeZip(t, ms)} {
		g := walkBytes(t, name, data, Options{})
		assert.Empty(t, g.issues, name)
		assert.Equal(t, dirGot.paths(), g.paths(), name)
		assert.Equal(t, dirGot.contents(), g.contents(), name)
	}
}
