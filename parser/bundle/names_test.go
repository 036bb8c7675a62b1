package bundle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInputNames(t *testing.T) {
	dir := t.TempDir()
	at := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"one input keeps its entries' own paths", []string{at("a", "server.log")}, []string{""}},
		{"one log name in two folders keeps the folders", []string{at("a", "server.log"), at("b", "server.log")}, []string{"a/server.log", "b/server.log"}},
		{"folders side by side are their names", []string{at("run1"), at("run2")}, []string{"run1", "run2"}},
		{"folders of one name keep their parents", []string{at("x", "run"), at("y", "z", "run")}, []string{"x/run", "y/z/run"}},
		{"rotated pieces stay together", []string{at("n1", "server.log"), at("n1", "server.log.1"), at("n2", "server.log")},
			[]string{"n1/server.log", "n1/server.log.1", "n2/server.log"}},
		{"the same path twice is told apart without a rotation suffix", []string{at("server.log"), at("server.log")}, []string{"server.log", "server.log~2"}},
		{"stdin", []string{"-", at("b.log")}, []string{"stdin", "b.log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, InputNames(tc.paths))
		})
	}

	// Relative paths are read from the working directory, never climbing
	// out with "..".
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	assert.NoError(t, os.MkdirAll(at("w", "in"), 0o755))
	assert.NoError(t, os.Chdir(at("w", "in")))
	assert.Equal(t, []string{"w/in", "other/run"}, InputNames([]string{".", "../../other/run"}))
}

func TestEntryUnder(t *testing.T) {
	file := &Entry{Path: "server.log", Container: "file"}
	gz := &Entry{Path: "server.log", Container: "gzip"}
	member := &Entry{Path: "round-01/ps.txt", Container: "tar.zst"}
	inDir := &Entry{Path: "logs/server.log", Container: "dir > gzip"}
	assert.Equal(t, "server.log", file.Under(""))
	assert.Equal(t, "a/server.log", file.Under("a/server.log"))
	assert.Equal(t, "a/server.log", gz.Under("a/server.log.gz"))
	assert.Equal(t, "server.log", gz.Under("server.log.gz"))
	assert.Equal(t, "a/x.tar.zst/round-01/ps.txt", member.Under("a/x.tar.zst"))
	assert.Equal(t, "run1/logs/server.log", inDir.Under("run1"))
}
