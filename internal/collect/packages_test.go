package collect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
)

// TestPackagesFromDisk reads a server's package versions from the
// site-packages its memory maps name, without running anything.
func TestPackagesFromDisk(t *testing.T) {
	venv := t.TempDir()
	site := filepath.Join(venv, "lib", "python3.11", "site-packages")
	sys := filepath.Join(t.TempDir(), "usr", "lib", "python3", "dist-packages")
	for _, d := range []string{
		filepath.Join(site, "torch", "lib"), filepath.Join(site, "torch-2.5.1+cu124.dist-info"),
		filepath.Join(site, "flashinfer_python-0.2.5.dist-info"), filepath.Join(site, "sglang-0.4.6.post1.dist-info"),
		filepath.Join(site, "triton-3.1.0-py3.11.egg-info"), filepath.Join(site, "README.txt.d"),
		filepath.Join(sys, "torch-2.1.0.dist-info"), filepath.Join(sys, "numpy-1.24.2.egg-info"),
	} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(site, "torch", "version.py"),
		[]byte("from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\ngit_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n"), 0o644))

	// Real /proc/PID/maps lines (an SGLang scheduler's), moved under the
	// test's directories.
	maps := strings.Join([]string{
		"55d0c8a00000-55d0c8a2a000 r--p 00000000 fd:01 1316112                    /usr/bin/python3.11",
		"7f1c2e000000-7f1c2e400000 r-xp 00000000 fd:01 2621531                    " + site + "/torch/lib/libtorch_cuda.so",
		"7f1c30000000-7f1c30001000 r--p 00000000 fd:01 2621530                    " + site + "/torch/lib/libc10.so",
		"7f1c31000000-7f1c31001000 r--p 00000000 fd:01 2621000                    " + sys + "/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so (deleted)",
		"7ffd5a5f0000-7ffd5a611000 rw-p 00000000 00:00 0                          [stack]",
		"",
	}, "\n")
	root := fakeProc(t, map[int][2]any{100: {1, []string{"python3", "-m", "sglang.launch_server"}}})
	require.NoError(t, os.WriteFile(filepath.Join(root, "100", "maps"), []byte(maps), 0o644))

	dirs := sitePackages(root, 100, []string{"VIRTUAL_ENV=" + venv, "PYTHONPATH=relative/dir:" + sys})
	assert.Equal(t, []string{site, sys}, dirs, "from the maps first, each once; relative paths ignored")

	pkgs := listPackages(dirs)
	assert.Equal(t, []pkg{
		{"flashinfer-python", "0.2.5", site}, {"numpy", "1.24.2", sys}, {"sglang", "0.4.6.post1", site},
		{"torch", "2.5.1+cu124", site}, {"triton", "3.1.0", site},
	}, pkgs, "the first directory wins, as on sys.path")
	assert.Equal(t, "12.4", torchCUDA(site, os.Geteuid()))

	data := packagesFile(100, dirs, pkgs, "12.4")
	kind := parser.Detect("packages.txt", data)
	assert.Equal(t, facts.KindPipList, kind, "the analyzer reads it as a package list")

	// version.py that is a link (to a file the collector may read and the
	// user may not) is not opened.
	require.NoError(t, os.Remove(filepath.Join(site, "torch", "version.py")))
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("cuda = '99.9'\n"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(site, "torch", "version.py")))
	assert.Empty(t, torchCUDA(site, os.Geteuid()))
}
