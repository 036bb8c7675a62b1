package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/manifest"
)

// TestNamesKeepTheirFolders: logs of one name in different folders keep
// their folders, in analyze, in bundle and in collect; none is renamed
// server.log.2, which reads as a rotated piece (issue 16).
func TestNamesKeepTheirFolders(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(seedBundle, "server.log"))
	require.NoError(t, err)
	var logs []string
	for _, d := range []string{"a", "b"} {
		p := filepath.Join(dir, "runs", d, "server.log")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
		logs = append(logs, p)
	}

	code, stdout, stderr := runCLI(t, "", "sources", logs[0], logs[1])
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^a/server\.log\s`, stdout)
	assert.Regexp(t, `(?m)^b/server\.log\s`, stdout)
	assert.NotContains(t, stdout, "server.log.2")

	out := filepath.Join(dir, "b.tar.zst")
	code, _, stderr = runCLI(t, "", "bundle", logs[0], logs[1], "-o", out)
	require.Equal(t, exitOK, code, stderr)
	_, files, order := untar(t, out)
	assert.Equal(t, []string{"a/server.log", "b/server.log", manifest.Name}, order)
	assert.Equal(t, data, files["b/server.log"])

	out = filepath.Join(dir, "c.tar.zst")
	code, _, stderr = runCLI(t, "", append([]string{"collect", "--count", "1", "--log", logs[0], "--log", logs[1], "-q", "-o", out}, noTools...)...)
	require.Contains(t, []int{exitOK, exitInput}, code, stderr)
	_, files, _ = untar(t, out)
	assert.Contains(t, files, "logs/a/server.log")
	assert.Contains(t, files, "logs/b/server.log")
}
