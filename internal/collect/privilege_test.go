package collect

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeServerEnv makes the test binary a fake server that only sleeps (see
// TestMain): a process whose argv names another user's files, as an
// attacker would start it.
const fakeServerEnv = "CORONER_TEST_FAKE_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeServerEnv) {
	case "server":
		if suid := os.Getenv(fakeServerEnv + "_SUID"); suid != "" {
			// Wait for the word, then exec a set-uid-root program as a
			// user would sudo: the same process, with the environment the
			// user gave it.
			trigger := os.Getenv(fakeServerEnv + "_TRIGGER")
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(trigger); err == nil {
					var env []string
					for _, kv := range os.Environ() {
						if !strings.HasPrefix(kv, fakeServerEnv+"=") {
							env = append(env, kv)
						}
					}
					_ = syscall.Exec(suid, os.Args, append(env, fakeServerEnv+"=root"))
					os.Exit(4)
				}
			}
			os.Exit(0)
		}
		time.Sleep(2 * time.Minute)
		os.Exit(0)
	case "root", "ctty":
		// The helpers of exploits_test.go.
		os.Exit(exploitHelper(os.Getenv(fakeServerEnv)))
	case "launch":
		// Start the server and leave it: an orphan, as a process of
		// another session is, not a child of the collector's test.
		argv := strings.Split(os.Getenv(fakeServerEnv+"_ARGV"), "\n")
		env := append(os.Environ(), fakeServerEnv+"=server")
		cmd := &exec.Cmd{Path: os.Args[0], Args: argv, Env: env, Dir: "/"}
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const nobody = 65534

// tree makes files owned by uid: executable scripts and plain files, by
// path relative to root, and the directories above them.
func tree(t *testing.T, root string, uid int, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(p, []byte(body), mode))
		for q := p; q != root && q != filepath.Dir(root); q = filepath.Dir(q) {
			require.NoError(t, os.Lchown(q, uid, uid))
		}
	}
}

// startAs starts the fake server as uid with the given argv and
// environment, and stops it when the test ends.
func startAs(t *testing.T, exe string, uid int, argv, env []string) int {
	t.Helper()
	cmd := &exec.Cmd{Path: exe, Args: []string{exe}, Dir: "/",
		Env: append(env, fakeServerEnv+"=launch", fakeServerEnv+"_ARGV="+strings.Join(argv, "\n"))}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := cmd.Output()
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(out))
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// Until the kernel has exec'd it, /proc shows the launcher's argv.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); err == nil && strings.HasPrefix(string(b), argv[0]) {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the fake server did not start")
	return 0
}

// TestCollectAsRootRunsNoCodeOfTheServersUser is issue 19's attack: an
// unprivileged user starts a fake sglang whose argv[0] is a script of
// theirs, or whose PYTHONPATH holds a package named like the engine's, and
// waits for root to run `coroner collect`, which finds servers by itself.
// No code of theirs may run as root: by default none runs at all, and with
// --run-server-python only as them.
func TestCollectAsRootRunsNoCodeOfTheServersUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it starts a fake server as uid 65534 and collects as root; run `go test ./internal/collect` as root to check the privilege boundary")
	}
	base, err := os.MkdirTemp("", "coroner-privilege-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	marks := filepath.Join(base, "marks")
	require.NoError(t, os.Mkdir(marks, 0o777))
	require.NoError(t, os.Chmod(marks, 0o777))

	// The attacker's files. Each writes who ran it into marks/.
	mark := func(name string) string { return `id -u > ` + filepath.Join(marks, name) + "\n" }
	evil := filepath.Join(base, "evil")
	tree(t, evil, nobody, map[string]string{
		"bin/python3":                   "#!/bin/sh\n" + mark("argv0"),
		"pp/sglang/__init__.py":         "",
		"pp/sglang/check_env.py":        "import os\nos.system(" + `"` + strings.TrimSpace(mark("pythonpath-py")) + `"` + ")\n",
		"pp/sglang/check_env.sh":        mark("pythonpath-sh"),
		"pp/torch/__init__.py":          "",
		"pp/torch/utils/__init__.py":    "",
		"pp/torch/utils/collect_env.py": "import os\nos.system(" + `"` + strings.TrimSpace(mark("pythonpath-torch")) + `"` + ")\n",
		"pp/torch/utils/collect_env.sh": mark("pythonpath-torch-sh"),
	})

	// The collector's own Python: a stub owned by root that finds -m
	// modules on $PYTHONPATH as Python does (running X/Y.sh for X.Y;
	// none with -I), and the real python3 where there is one.
	rootBin := filepath.Join(base, "rootbin")
	require.NoError(t, os.Mkdir(rootBin, 0o755))
	stubPy := stub(t, rootBin, "python3", `while :; do case "$1" in -I) PYTHONPATH=; shift;; -s) shift;; *) break;; esac; done
[ "$1" = -m ] || exit 2
mod=$(echo "$2" | tr . /)
IFS=:
for d in $PYTHONPATH; do [ -f "$d/$mod.sh" ] && exec sh "$d/$mod.sh"; done
echo "No module named $2" >&2; exit 1`)
	pythons := []string{stubPy}
	if real, err := exec.LookPath("python3"); err == nil {
		pythons = append(pythons, real)
	}

	// The fake servers, as the attacker: the test binary under an argv of
	// their choosing, copied where uid 65534 can run it. One names their
	// script as its Python; the other a plain python3, root's own found on
	// its PATH, with their package on PYTHONPATH.
	exe, err := os.Executable()
	require.NoError(t, err)
	server := filepath.Join(base, "server")
	copyFile(t, exe, server, 0o755)
	variants := []struct {
		name string
		argv []string
		env  []string
	}{
		{"argv0", []string{filepath.Join(evil, "bin/python3"), "-m", "sglang.launch_server", "--model-path", "/models/x"},
			[]string{"PATH=/usr/bin:/bin", "HOME=/"}},
		{"pythonpath", []string{"python3", "-m", "sglang.launch_server", "--model-path", "/models/x"},
			[]string{"PATH=" + rootBin + ":/usr/bin:/bin", "PYTHONPATH=" + filepath.Join(evil, "pp"), "HOME=/"}},
	}

	ran := func() map[string]string {
		out := map[string]string{}
		ents, _ := os.ReadDir(marks)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(marks, e.Name()))
			out[e.Name()] = strings.TrimSpace(string(b))
			_ = os.Remove(filepath.Join(marks, e.Name()))
		}
		return out
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			pid := startAs(t, server, nobody, v.argv, v.env)
			collect := func(python string, opt bool) *Capture {
				capt, err := Run(context.Background(), Config{
					Match: "sglang", Count: 1, Timeout: 20 * time.Second, Python: python, RunServerPython: opt,
					NvidiaSMI: "coroner-test-no-nvidia-smi", PySpy: "coroner-test-no-py-spy", Dmesg: "coroner-test-no-dmesg",
					Journalctl: "coroner-test-no-journalctl",
				})
				require.NoError(t, err)
				require.Contains(t, capt.Target.PIDs, pid, "collect found the fake server by itself")
				return capt
			}
			for _, py := range pythons {
				capt := collect(py, false)
				assert.Empty(t, ran(), "%s: no code of the server's user runs", py)
				for _, a := range capt.Artifacts {
					if a.Program == "python3" && a.Skipped == "" && !a.NotFound {
						assert.Equal(t, "uid 0 (root), gid 0 (root)", a.RunAs, "the collector's own Python runs as the collector")
					}
				}
				collect(py, true)
				for name, uid := range ran() {
					assert.Equal(t, "65534", uid, "%s: %s ran as uid %s: only ever as the server's own user", py, name, uid)
				}
			}
			if v.name != "argv0" {
				return
			}
			// The manifest says why the server's Python did not run; with
			// the opt-in it ran, as its user, and the manifest says so.
			capt := collect(stubPy, false)
			var why string
			for _, a := range capt.Artifacts {
				if strings.HasSuffix(a.Command, "-m sglang.check_env") && a.Skipped != "" {
					why = a.Skipped
				}
			}
			assert.Contains(t, why, "--run-server-python")
			capt = collect(stubPy, true)
			assert.Equal(t, map[string]string{"argv0": "65534"}, ran(), "with --run-server-python the server's Python runs, as uid 65534")
			var as string
			for _, a := range capt.Artifacts {
				if strings.HasSuffix(a.Command, "-m sglang.check_env") && a.Skipped == "" {
					as = a.RunAs
				}
			}
			assert.Contains(t, as, "uid 65534")
		})
	}
}

// TestServerProbeRefusals: the server's Python runs only from files nobody
// but its user and root can change, and never as someone else than its
// user.
func TestServerProbeRefusals(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to other users")
	}
	base, err := os.MkdirTemp("", "coroner-trust-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	tree(t, filepath.Join(base, "mine"), nobody, map[string]string{"bin/python3": "#!/bin/sh\n"})
	tree(t, filepath.Join(base, "theirs"), 1234, map[string]string{"bin/python3": "#!/bin/sh\n"})
	tree(t, filepath.Join(base, "open"), nobody, map[string]string{"bin/python3": "#!/bin/sh\n"})
	require.NoError(t, os.Chmod(filepath.Join(base, "open", "bin"), 0o777))
	require.NoError(t, os.Symlink(filepath.Join(base, "theirs", "bin", "python3"), filepath.Join(base, "mine", "bin", "python3.link")))
	require.NoError(t, os.Lchown(filepath.Join(base, "mine", "bin", "python3.link"), nobody, nobody))

	tests := []struct {
		path string
		want string // "" for trusted
	}{
		{filepath.Join(base, "mine", "bin", "python3"), ""},
		{filepath.Join(base, "theirs", "bin", "python3"), "belongs to uid 1234"},
		{filepath.Join(base, "open", "bin", "python3"), "writable by group or others"},
		{filepath.Join(base, "mine", "bin", "python3.link"), "belongs to uid 1234"},
		{"bin/python3", "not an absolute path"},
	}
	for _, tc := range tests {
		err := trustedFor(tc.path, nobody)
		if tc.want == "" {
			assert.NoError(t, err, tc.path)
		} else {
			assert.ErrorContains(t, err, tc.want, tc.path)
		}
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
