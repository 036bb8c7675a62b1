package collect

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/parser/procs"
	"github.com/coroner-dev/coroner/parser/textio"
)

// stub writes an executable shell script.
func stub(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

func alive(pid int) bool {
	// Signal 0 checks existence; a zombie left to init counts as gone.
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !bytes.Contains(st, []byte(") Z "))
}

func TestRunnerKillsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The stub's child sleeps too: a kill of the stub alone would leave it.
	hang := stub(t, dir, "nvidia-smi", "sleep 600 &\necho $! > "+pidFile+"\nwait")
	r := &Runner{}
	start := time.Now()
	res := r.Run(context.Background(), Cmd{Path: hang, Args: []string{"-q", "-x"}, Timeout: 500 * time.Millisecond, SkipAfterTimeout: true})
	took := time.Since(start)
	assert.True(t, res.TimedOut)
	assert.False(t, res.Stuck)
	assert.Equal(t, -1, res.ExitCode)
	assert.Equal(t, "nvidia-smi", res.Program)
	assert.Equal(t, hang+" -q -x", res.Command)
	assert.Less(t, took, 3*time.Second, "the timeout plus the kill, not the stub's 600 s")
	assert.EqualError(t, res.Err, "timed out after 500ms; killed")
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	child, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NotZero(t, child)
	deadline := time.Now().Add(2 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, alive(child), "the stub's child died with it")

	// The next call of the same program is skipped, saying why.
	res = r.Run(context.Background(), Cmd{Path: hang, Args: []string{"-L"}, Timeout: time.Second})
	assert.Equal(t, "an earlier nvidia-smi call timed out after 500ms", res.Skipped)
	assert.Equal(t, -1, res.ExitCode)
}

func TestRunnerOutcomes(t *testing.T) {
	dir := t.TempDir()
	fails := stub(t, dir, "fails", `echo "partial"; echo "dmesg: read kernel buffer failed: Operation not permitted" >&2; exit 3`)
	chatty := stub(t, dir, "chatty", `head -c 300000 /dev/zero | tr '\0' 'x'`)
	r := &Runner{}
	ctx := context.Background()

	res := r.Run(ctx, Cmd{Path: "coroner-test-no-such-program", Timeout: time.Second})
	assert.True(t, res.NotFound)
	assert.Equal(t, -1, res.ExitCode)
	assert.False(t, res.End.IsZero())

	res = r.Run(ctx, Cmd{Path: filepath.Join(dir, "missing"), Timeout: time.Second})
	assert.True(t, res.NotFound, "a path that does not exist is not found too")

	res = r.Run(ctx, Cmd{Path: fails, Timeout: 5 * time.Second})
	assert.Equal(t, 3, res.ExitCode)
	assert.Equal(t, "partial\n", string(res.Stdout))
	assert.Equal(t, "dmesg: read kernel buffer failed: Operation not permitted\n", string(res.Stderr))
	assert.EqualError(t, res.Err, "exit status 3")
	assert.False(t, res.OK())

	res = r.Run(ctx, Cmd{Path: chatty, Timeout: 5 * time.Second, MaxOutput: 1000})
	assert.True(t, res.OK())
	assert.Len(t, res.Stdout, 1000)
	assert.True(t, res.Truncated)

	// An interrupt kills the command but is not a timeout.
	hang := stub(t, dir, "hang", "sleep 600")
	ictx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	res = r.Run(ictx, Cmd{Path: hang, Timeout: time.Minute, SkipAfterTimeout: true})
	assert.False(t, res.TimedOut)
	assert.Contains(t, res.Err.Error(), "interrupted")
	assert.Empty(t, r.Run(ctx, Cmd{Path: fails, Timeout: time.Second}).Skipped)
}

// fakeProc writes a /proc with the given processes (pid, ppid, argv).
func fakeProc(t *testing.T, ps map[int][2]any) string {
	t.Helper()
	root := t.TempDir()
	for pid, v := range ps {
		ppid, argv := v[0].(int), v[1].([]string)
		d := filepath.Join(root, strconv.Itoa(pid))
		require.NoError(t, os.MkdirAll(d, 0o755))
		comm := "python3"
		if len(argv) > 0 {
			comm = filepath.Base(argv[0])
		}
		stat := strconv.Itoa(pid) + " (" + comm + ") S " + strconv.Itoa(ppid) + " " + strconv.Itoa(pid) + " " + strconv.Itoa(pid) +
			" 0 -1 4194560 100 0 0 0 1500 300 0 0 20 0 4 0 12345 1000000 2500 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n"
		require.NoError(t, os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "cmdline"), []byte(strings.Join(argv, "\x00")+"\x00"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "stat"), []byte("cpu  1 2 3\nbtime 1795999200\n"), 0o644))
	return root
}

func TestFindTarget(t *testing.T) {
	root := fakeProc(t, map[int][2]any{
		1:     {0, []string{"/sbin/init"}},
		41170: {1, []string{"python3", "-m", "sglang.launch_server", "--model-path", "/models/Kimi-K2.5", "--tp", "8"}},
		41402: {41170, []string{"sglang::scheduler_TP0"}},
		41403: {41170, []string{"sglang::scheduler_TP1"}},
		41500: {41402, []string{"ninja", "-v"}},
		50000: {1, []string{"vllm", "serve", "Qwen/Qwen3-8B", "--port", "8001"}},
		50001: {50000, []string{"VLLM::EngineCore"}},
		60000: {1, []string{"grep", "sglang"}},
		60001: {1, []string{"coroner", "collect", "--match", "sglang"}},
	})
	ps := readProcs(root)
	require.Len(t, ps, 9)

	tg := findTarget(ps, 0, "sglang", 60001)
	assert.Equal(t, []int{41170, 41402, 41403, 41500}, tg.pids, "the server and its children; not a grep, nor the collector")
	assert.Equal(t, 41170, tg.mainPID)
	assert.Equal(t, "sglang", tg.engine)
	assert.Equal(t, "/models/Kimi-K2.5", tg.model)

	tg = findTarget(ps, 0, "vllm", 60001)
	assert.Equal(t, []int{50000, 50001}, tg.pids)
	assert.Equal(t, "Qwen/Qwen3-8B", tg.model)

	tg = findTarget(ps, 41170, "", 60001)
	assert.Equal(t, []int{41170, 41402, 41403, 41500}, tg.pids, "--pid takes the children and grandchildren")
	assert.Equal(t, "--pid 41170", tg.how)

	tg = findTarget(ps, 99999, "", 60001)
	assert.Empty(t, tg.pids)
}

func TestPSFromProcReadsLikePS(t *testing.T) {
	root := fakeProc(t, map[int][2]any{
		1:     {0, []string{"/sbin/init"}},
		41170: {1, []string{"python3", "-m", "sglang.launch_server", "--model-path", "/models/x"}},
	})
	boot := bootTime(root)
	require.Equal(t, time.Unix(1795999200, 0).UTC(), boot)
	now := boot.Add(2 * time.Hour)
	out := psFromProc(readProcs(root), boot, now, time.UTC)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, 3)
	// starttime 12345 ticks is 123.45 s after boot, 7076 whole seconds
	// before now; 1500+300 ticks of CPU are 18 s; a session leader with
	// four threads is Ssl.
	assert.Regexp(t, `^\s+41170\s+1 \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\s+7076\s+18\s+\d+\s+976\s+Ssl\s+4 python3\s+python3 -m sglang.launch_server --model-path /models/x$`, lines[2])

	assert.Equal(t, facts.KindPS, parser.Detect("ps_eo.txt", out))
	var issues []facts.Issue
	in := textio.NewInput("ps_eo.txt", bytes.NewReader(out), 0, func(is facts.Issue) { issues = append(issues, is) })
	f := &facts.Facts{Clocks: map[string]facts.Clock{}}
	procs.Parse(in, facts.KindPS, f)
	assert.Empty(t, issues)
	require.Len(t, f.Procs, 1)
	require.Len(t, f.Procs[0].Procs, 2)
	p := f.Procs[0].Procs[1]
	assert.Equal(t, 41170, p.PID)
	assert.Equal(t, boot.Add(123*time.Second+450*time.Millisecond).Truncate(time.Second), p.Start)
}

func TestReadHeadTail(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("line " + strconv.Itoa(i) + " of the log\n")
	}
	p := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))

	data, cut, st, err := ReadHeadTail(p, 1<<20, 50<<20)
	require.NoError(t, err)
	assert.Nil(t, cut)
	assert.Equal(t, b.String(), string(data))
	assert.EqualValues(t, len(data), st.Size())

	data, cut, _, err = ReadHeadTail(p, 100, 200)
	require.NoError(t, err)
	require.NotNil(t, cut)
	// The head ends after the last whole line within 100 bytes, the tail
	// starts at the first line start within the last 200.
	lines := strings.Split(string(data), "\n")
	assert.Equal(t, "line 0 of the log", lines[0])
	assert.Equal(t, "line 999 of the log", lines[len(lines)-2])
	assert.Contains(t, string(data), "\n[coroner: ")
	assert.EqualValues(t, b.Len(), cut.OriginalBytes)
	assert.Equal(t, cut.OriginalBytes, cut.HeadBytes+cut.TailBytes+cut.RemovedBytes)
	assert.True(t, strings.HasPrefix(b.String(), string(data[:cut.HeadBytes])))
	assert.True(t, strings.HasSuffix(b.String(), string(data[len(data)-int(cut.TailBytes):])))

	_, _, _, err = ReadHeadTail(dir, 100, 200)
	assert.ErrorIs(t, err, ErrNotRegular)
}

// TestCollectHungNvidiaSMI runs a collect with an nvidia-smi that never
// answers: the collect ends within its timeouts and the manifest names the
// timeout; later nvidia-smi calls are skipped, not waited for.
func TestCollectHungNvidiaSMI(t *testing.T) {
	dir := t.TempDir()
	hang := stub(t, dir, "nvidia-smi", "sleep 600")
	log := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(log, []byte("[2026-11-30 04:24:37] server_args=ServerArgs(model_path='/m')\n"), 0o644))
	start := time.Now()
	capt, err := Run(context.Background(), Config{
		Logs: []string{log}, Count: 2, Every: 500 * time.Millisecond, Timeout: time.Second,
		NvidiaSMI: hang, PySpy: "coroner-test-no-py-spy", Python: "coroner-test-no-python",
	})
	require.NoError(t, err)
	took := time.Since(start)
	assert.Less(t, took, 10*time.Second)

	var smi []manifest.Artifact
	for _, a := range capt.Artifacts {
		if a.Program == "nvidia-smi" {
			smi = append(smi, a)
		}
	}
	require.NotEmpty(t, smi)
	timedOut, skipped := 0, 0
	for _, a := range smi {
		switch {
		case a.TimedOut:
			timedOut++
			assert.EqualValues(t, 1, a.TimeoutS)
			assert.Equal(t, -1, a.ExitCode)
			assert.Empty(t, a.Path)
		case a.Skipped != "":
			skipped++
			assert.Equal(t, "an earlier nvidia-smi call timed out after 1s", a.Skipped)
		}
	}
	// The first call hangs; the calls beside it in the same moment (topo in
	// the one-time set may start before the skip is known) may hang too.
	assert.GreaterOrEqual(t, timedOut, 1)
	assert.Equal(t, len(smi), timedOut+skipped)
	assert.GreaterOrEqual(t, skipped, 5)

	names := map[string]bool{}
	for _, f := range capt.Files {
		names[f.Name] = true
	}
	assert.True(t, names["round-01/ps_eo.txt"])
	assert.True(t, names["round-02/ps_eo.txt"])
	assert.True(t, names["logs/server.log"])
	require.Len(t, capt.Rounds, 3)
	assert.Equal(t, "round-01", capt.Rounds[0].Dir)
}

func TestServerPython(t *testing.T) {
	bin := t.TempDir()
	venv := t.TempDir()
	py := stub(t, bin, "python3", "exit 0")
	require.NoError(t, os.MkdirAll(filepath.Join(venv, "bin"), 0o755))
	vpy := stub(t, filepath.Join(venv, "bin"), "python3", "exit 0")
	tests := []struct {
		name string
		argv []string
		env  []string
		want string
	}{
		{"the path it was started with", []string{py, "-m", "vllm.entrypoints.openai.api_server"}, nil, py},
		{"the virtualenv", []string{"python3", "-m", "sglang.launch_server"}, []string{"PATH=/usr/bin", "VIRTUAL_ENV=" + venv}, vpy},
		{"its name in the server's PATH", []string{"python3", "-m", "sglang.launch_server"}, []string{"PATH=/nonexistent:" + bin}, py},
		{"a process title: none", []string{"sglang::scheduler_TP0"}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeProc(t, map[int][2]any{100: {1, tc.argv}})
			c := &collector{cfg: Config{ProcRoot: root, Python: "python3"}, env: tc.env,
				target: findTarget(readProcs(root), 100, "", 0)}
			assert.Equal(t, tc.want, c.serverPython())
		})
	}
}

// TestCollectEveryCapture runs a whole collect against stubs of the GPU
// machine's tools (answering with real captures from the corpus), a live
// process and a probed server, and checks that every file lands where the
// analyzer expects it, of the kind it expects.
func TestCollectEveryCapture(t *testing.T) {
	dir := t.TempDir()
	idle, err := filepath.Abs("../../fixtures/corpus/h200-x2/00-idle")
	require.NoError(t, err)
	corpus := filepath.Dir(idle)
	smi := stub(t, dir, "nvidia-smi", `case "$*" in
"-q -x") cat `+idle+`/nvidia-smi-q.xml;;
--query-gpu=*) cat `+idle+`/query-gpu.csv;;
--query-compute-apps=*) cat `+idle+`/compute-apps.csv;;
"topo -m") cat `+corpus+`/topo.txt;;
-L) cat `+corpus+`/nvidia-smi-L.txt;;
*) echo "unexpected: $*" >&2; exit 2;;
esac`)
	dmesg := stub(t, dir, "dmesg", `echo "dmesg: read kernel buffer failed: Operation not permitted" >&2; exit 1`)
	journal := stub(t, dir, "journalctl", `cat <<'EOF'
2026-11-30T04:02:10+0000 gpu17 kernel: e1000e: eth0 NIC Link is Up 1000 Mbps Full Duplex
2026-11-30T04:02:11+0000 gpu17 kernel: NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
2026-11-30T04:02:12+0000 gpu17 kernel: usb 1-1: new high-speed USB device number 2
EOF`)
	python := stub(t, dir, "python3", `case "$*" in
*torch.utils.collect_env*) cat `+corpus+`/collect_env.txt;;
*) echo "No module named $2" >&2; exit 1;;
esac`)
	pyspy := stub(t, dir, "py-spy", `cat <<EOF
Process $3: python3 -m sglang.launch_server --model-path /m
Python v3.12.3 (/usr/bin/python3.12)

Thread $3 (idle): "MainThread"
    wait (threading.py:359)
    main (sglang/launch_server.py:14)
EOF`)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"/m"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer server.Close()
	proc := exec.Command("sh", "-c", "sleep 60; true", "python3", "-m", "sglang.launch_server")
	require.NoError(t, proc.Start())
	defer func() { _ = proc.Process.Kill(); _ = proc.Wait() }()

	capt, err := Run(context.Background(), Config{
		PID: proc.Process.Pid, URL: server.URL, Count: 1, Timeout: 10 * time.Second,
		NvidiaSMI: smi, Dmesg: dmesg, Journalctl: journal, Python: python, PySpy: pyspy,
	})
	require.NoError(t, err)
	kinds := map[string]facts.Kind{}
	data := map[string][]byte{}
	for _, f := range capt.Files {
		head := f.Data[:min(len(f.Data), parser.HeadSize)]
		kinds[f.Name] = parser.Detect(filepath.Base(f.Name), head)
		data[f.Name] = f.Data
	}
	assert.Equal(t, map[string]facts.Kind{
		"round-01/ps_eo.txt": facts.KindPS, "round-01/ps_auxf.txt": facts.KindPS,
		"round-01/nvidia-smi-q.xml": facts.KindNvidiaSMIXML, "round-01/query-gpu.csv": facts.KindNvidiaSMICSV,
		"round-01/compute-apps.csv": facts.KindNvidiaSMICSV, "round-01/probes.jsonl": facts.KindProbe,
		"once/topo.txt": facts.KindNvidiaSMITopo, "once/nvidia-smi-L.txt": facts.KindNvidiaSMIList,
		"once/dmesg.txt": facts.KindKernelLog, "once/meminfo.txt": facts.KindMeminfo, "once/df.txt": facts.KindDF,
		"once/env.txt": facts.KindEnv, "once/collect_env.txt": facts.KindCollectEnv,
		fmt.Sprintf("once/pyspy-%d.txt", proc.Process.Pid): facts.KindPySpy,
	}, kinds)

	// Only the kernel's GPU line is kept, and the manifest says so.
	assert.Equal(t, "2026-11-30T04:02:11+0000 gpu17 kernel: NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
		string(data["once/dmesg.txt"]))
	var dmesgRec, journalRec *manifest.Artifact
	for i, a := range capt.Artifacts {
		switch a.Program {
		case "dmesg":
			dmesgRec = &capt.Artifacts[i]
		case "journalctl":
			journalRec = &capt.Artifacts[i]
		}
	}
	require.NotNil(t, dmesgRec)
	require.NotNil(t, journalRec)
	assert.Equal(t, 1, dmesgRec.ExitCode)
	assert.Equal(t, "dmesg: read kernel buffer failed: Operation not permitted", dmesgRec.Stderr)
	assert.Equal(t, "once/dmesg.txt", journalRec.Path)
	require.NotNil(t, journalRec.Truncated)
	assert.Equal(t, "kept 1 of 3 lines: GPU (NVRM, Xid, NVLink, AER), OOM, segfault and hung-task lines", journalRec.Truncated.Reason)

	// The probes: one record per endpoint, in the parser's format.
	lines := strings.Split(strings.TrimSpace(string(data["round-01/probes.jsonl"])), "\n")
	require.Len(t, lines, len(Endpoints))
	assert.Contains(t, lines[0], `"url":"`+server.URL+`/health","endpoint":"/health","status":503`)
	assert.Contains(t, lines[2], `"endpoint":"/v1/models","status":200`)
	assert.Equal(t, proc.Process.Pid, capt.Target.MainPID)
}
