//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCollectRefusesALinkedLogAsRoot: `sudo coroner collect --log
// /home/alice/server.log`, where alice made server.log a link to a file of
// root's: the collect stops before it starts, saying which link and
// whose, and nothing of root's file is written anywhere.
func TestCollectRefusesALinkedLogAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it gives a folder and a link to uid 65534 and collects as root")
	}
	base, err := os.MkdirTemp("", "coroner-collect-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	shadow := filepath.Join(base, "shadow")
	require.NoError(t, os.WriteFile(shadow, []byte("root:$6$notforalice\n"), 0o600))
	alice := filepath.Join(base, "alice")
	require.NoError(t, os.Mkdir(alice, 0o755))
	require.NoError(t, os.Chown(alice, 65534, 65534))
	log := filepath.Join(alice, "server.log")
	require.NoError(t, os.Symlink(shadow, log))
	require.NoError(t, os.Lchown(log, 65534, 65534))

	out := filepath.Join(base, "bundle.tar.zst")
	code, _, stderr := runCLI(t, "", append([]string{"collect", "--count", "1", "--log", log, "-o", out}, noTools...)...)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, stderr, "coroner: --log "+log+": not read: "+log+" is a link owned by uid 65534 to "+shadow+", a file owned by root\n")
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no bundle")
}

// TestCollectPrintsNoEscapeSequences: a server's argv[0] is another
// user's text; a "python" named with a title change and a screen clear
// reached root's terminal in the summary.
func TestCollectPrintsNoEscapeSequences(t *testing.T) {
	dir := t.TempDir()
	evil := filepath.Join(dir, "python\x1b]0;PWNED\x07\x1b[2J\x1b]52;c;cm0gLXJmIH4K\x07")
	require.NoError(t, os.WriteFile(evil, []byte("#!/bin/sh\n"), 0o755))
	proc := &exec.Cmd{Path: "/bin/sleep", Args: []string{evil, "60"}}
	require.NoError(t, proc.Start())
	defer func() { _ = proc.Process.Kill(); _ = proc.Wait() }()
	pid := strconv.Itoa(proc.Process.Pid)
	for i := 0; i < 100; i++ {
		if b, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline")); bytes.HasPrefix(b, []byte(evil)) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := filepath.Join(dir, "bundle.tar.zst")
	code, stdout, stderr := runCLI(t, "", append([]string{"collect", "--count", "1", "--pid", pid, "-o", out}, noTools...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "  python", "the server's Python is named in the summary")
	for _, s := range []string{stdout, stderr} {
		assert.False(t, strings.ContainsAny(s, "\x1b\x07\u009b"), "a control character reached the terminal: %q", s)
	}
	_, files, _ := untar(t, out)
	m := readManifest(t, files)
	for _, a := range m.Artifacts {
		assert.False(t, strings.ContainsAny(a.Program+a.Command+a.Skipped+a.Error+a.Stderr, "\x1b\x07\u009b"), "the manifest: %+v", a)
	}
}
