package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/manifest"
)

// noTools are flags that keep a test collect hermetic: no nvidia-smi,
// py-spy or Python of the machine is run.
var noTools = []string{"--nvidia-smi", "coroner-test-no-nvidia-smi", "--py-spy", "coroner-test-no-py-spy", "--python", "coroner-test-no-python"}

func writeLog(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(seedBundle, "server.log"))
	require.NoError(t, err)
	p := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// TestCollectWithoutGPU is the acceptance test of a collect on a machine
// without GPUs: two ps rounds, the log, and a manifest that records the
// missing nvidia-smi; the analyzer reads every file with its kind and no
// parse issue.
func TestCollectWithoutGPU(t *testing.T) {
	dir := t.TempDir()
	log := writeLog(t, dir)
	out := filepath.Join(dir, "bundle.tar.zst")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "", append([]string{"collect", "--count", "2", "--every", "1s", "--log", log, "-o", out}, noTools...)...)
	// Another test may run a fake server meanwhile: without one, the bundle
	// is written and the exit says that no server was there.
	require.Contains(t, []int{exitOK, exitInput}, code, stderr)
	assert.Empty(t, stdout)
	// No progress line when stderr is not a terminal, but always what was
	// captured, failed and skipped (issue 18).
	assert.NotContains(t, stderr, "\r")
	assert.Regexp(t, `coroner collect: captured \d+ files`, stderr)
	assert.Contains(t, stderr, "  coroner-test-no-nvidia-smi: not found (")
	assert.Contains(t, stderr, "coroner collect: wrote "+out+": ")
	if code == exitInput {
		assert.Contains(t, stderr, "coroner collect: not there: no sglang or vllm process was found\n")
		assert.Contains(t, stderr, "coroner: no sglang or vllm process was found: "+out+" was written with what could be collected\n")
	}
	assert.Less(t, time.Since(start), 30*time.Second)

	_, files, order := untar(t, out)
	for _, name := range []string{"round-01/ps_eo.txt", "round-01/ps_auxf.txt", "round-02/ps_eo.txt", "round-02/ps_auxf.txt",
		"once/meminfo.txt", "once/env.txt", "logs/server.log", manifest.Name} {
		assert.Contains(t, order, name)
	}
	assert.NotContains(t, order, "round-03/ps_eo.txt")
	assert.Equal(t, manifest.Name, order[len(order)-1])
	log0, _ := os.ReadFile(log)
	assert.Equal(t, string(log0), string(files["logs/server.log"]))

	m := readManifest(t, files)
	assert.Equal(t, "collect", m.Command)
	require.NotNil(t, m.Host)
	_, off := time.Now().Zone()
	assert.Equal(t, off, m.Host.UTCOffsetS)
	require.Len(t, m.Rounds, 3)
	assert.Equal(t, []string{"round-01", "once", "round-02"}, []string{m.Rounds[0].Dir, m.Rounds[1].Dir, m.Rounds[2].Dir})
	// Rounds start --every apart, or right after a round that took longer.
	gap := m.Rounds[2].Start.Sub(m.Rounds[0].Start)
	took1 := m.Rounds[0].End.Sub(m.Rounds[0].Start)
	assert.GreaterOrEqual(t, gap, 990*time.Millisecond)
	assert.LessOrEqual(t, gap, max(time.Second, took1)+500*time.Millisecond)
	missing := 0
	for _, a := range m.Artifacts {
		if a.Program == "coroner-test-no-nvidia-smi" {
			assert.True(t, a.NotFound, a.Command)
			assert.Empty(t, a.Path)
			missing++
		}
	}
	assert.Equal(t, 8, missing, "-q -x, query-gpu, compute-apps per round; topo and -L once")

	// The analyzer: every file of its kind, no parse issue, capture times
	// from the manifest, and the missing nvidia-smi said.
	_, f, _ := analyzeBundle(t, out)
	assert.Empty(t, f.Issues())
	kinds := map[string]facts.Kind{}
	for _, s := range f.Sources {
		kinds[s.Path] = s.Kind
	}
	assert.Equal(t, map[string]facts.Kind{
		"logs/server.log": facts.KindSGLangLog, "round-01/ps_eo.txt": facts.KindPS, "round-01/ps_auxf.txt": facts.KindPS,
		"round-02/ps_eo.txt": facts.KindPS, "round-02/ps_auxf.txt": facts.KindPS, "once/meminfo.txt": facts.KindMeminfo,
		"once/env.txt": facts.KindEnv, "once/df.txt": facts.KindDF, manifest.Name: facts.KindManifest,
	}, withoutOptional(kinds))
	src := f.Source("round-02/ps_eo.txt")
	require.NotNil(t, src)
	assert.WithinDuration(t, m.Rounds[2].Start, src.CapturedAt, time.Second)
	require.Len(t, f.Procs, 4)

	code, out2, _ := runCLI(t, "", "analyze", "--format", "json", "--fail-on", "never", out)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out2, `"rule": "collector"`)
	assert.Contains(t, out2, "not installed: coroner-test-no-nvidia-smi")
}

// TestCollectSaysWhatItCouldNotDo: a --pid that is not there, no
// nvidia-smi: the summary says so on stderr, piped or not, and the exit is
// non-zero; the bundle is still written (issue 18).
func TestCollectSaysWhatItCouldNotDo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bundle.tar.zst")
	code, _, stderr := runCLI(t, "", append([]string{"collect", "--count", "1", "--pid", "999999999", "-q", "-o", out}, noTools...)...)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, stderr, "coroner collect: not there: process 999999999 was not found\n")
	assert.Contains(t, stderr, "coroner collect: failed ")
	assert.Contains(t, stderr, "  coroner-test-no-nvidia-smi: not found (")
	assert.Contains(t, stderr, "coroner: process 999999999 was not found: "+out+" was written with what could be collected\n")
	_, files, _ := untar(t, out)
	assert.Contains(t, files, "round-01/ps_eo.txt")
}

// withoutOptional drops the files a machine may or may not give (dmesg
// needs permission).
func withoutOptional(k map[string]facts.Kind) map[string]facts.Kind {
	delete(k, "once/dmesg.txt")
	return k
}

// TestCollectHungNvidiaSMI is the acceptance test of the timeouts: an
// nvidia-smi that never answers costs its timeout once, and the report
// names it.
func TestCollectHungNvidiaSMI(t *testing.T) {
	dir := t.TempDir()
	log := writeLog(t, dir)
	hang := filepath.Join(dir, "nvidia-smi")
	require.NoError(t, os.WriteFile(hang, []byte("#!/bin/sh\nsleep 600\n"), 0o755))
	out := filepath.Join(dir, "bundle.tar.zst")
	start := time.Now()
	code, _, stderr := runCLI(t, "", "collect", "--count", "2", "--every", "1s", "--timeout", "2s", "--log", log, "-o", out,
		"--nvidia-smi", hang, "--py-spy", "coroner-test-no-py-spy", "--python", "coroner-test-no-python")
	require.Contains(t, []int{exitOK, exitInput}, code, stderr)
	assert.Contains(t, stderr, "nvidia-smi: timed out after 2s")
	assert.Contains(t, stderr, "an earlier nvidia-smi call timed out after 2s")
	took := time.Since(start)
	assert.Less(t, took, 15*time.Second, "one timeout of 2 s, then the later calls are skipped")

	code, stdout, _ := runCLI(t, "", "analyze", "--format", "json", out)
	assert.Equal(t, exitFindings, code, "a wedged GPU is an error")
	var rep struct {
		Findings []struct {
			Rule, Title, Severity, Category, Message string
			Evidence                                 []struct {
				File string
				Line int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	found := false
	for _, f := range rep.Findings {
		if f.Rule == "collector" && f.Severity == "error" {
			found = true
			assert.Equal(t, "gpu-fault", f.Category)
			assert.Contains(t, f.Message, "nvidia-smi did not answer within 2 s: a wedged driver or GPU")
			require.NotEmpty(t, f.Evidence)
			assert.Equal(t, manifest.Name, f.Evidence[0].File)
		}
	}
	assert.True(t, found, "the report names the timeout: %s", stdout)
}

// TestCollectRedactsTheServer collects from a live process whose command
// line and environment hold secrets, with a log full of them: none is in
// the bundle's bytes.
func TestCollectRedactsTheServer(t *testing.T) {
	dir := t.TempDir()
	secrets := []string{
		"sk-proj-CmdLine0123456789abcdefghij", "cmdline-api-key-0042", "hf_CmdLineToken0123456789abcdefghijklm",
		"hf_EnvToken0123456789abcdefghijklmnop", "env-vllm-api-key-9f8e", "env-nccl-secret-1234", "env-ray-password-5678",
		"sk-ant-api03-LogKey0123456789abcdefgh", "ghp_LogToken0123456789abcdefghijABCDEF12", "AKIALOGKEY0123456789",
		"log-bearer-token-abcdef", "log-setting-key-123", "LogUrlPassw0rd",
	}
	// The fake server: a shell that sleeps, its arguments and environment
	// those of a server launched with secrets.
	cmd := exec.Command("sh", "-c", "sleep 60; true", "python3", "-m", "sglang.launch_server", "--api-key", secrets[1],
		"--admin-api-key", secrets[0], "--hf-token", secrets[2], "--port", "30000")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HF_TOKEN=" + secrets[3], "VLLM_API_KEY=" + secrets[4],
		"NCCL_SOCKET_SECRET=" + secrets[5], "RAY_REDIS_PASSWORD=" + secrets[6], "NCCL_DEBUG=INFO"}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	log := filepath.Join(dir, "server.log")
	require.NoError(t, os.WriteFile(log, []byte(strings.Join([]string{
		"[2026-11-30 04:24:37] server_args=ServerArgs(model_path='/m', api_key='" + secrets[11] + "', port=30000)",
		"[2026-11-30 04:24:38] ANTHROPIC_API_KEY=" + secrets[7],
		"[2026-11-30 04:24:38] cloning with " + secrets[8],
		"[2026-11-30 04:24:38] aws " + secrets[9],
		"[2026-11-30 04:24:39] GET /v1/models Authorization: Bearer " + secrets[10],
		"[2026-11-30 04:24:39] cache at redis://cache:" + secrets[12] + "@cache.internal:6379",
	}, "\n")+"\n"), 0o644))

	out := filepath.Join(dir, "bundle.tar.zst")
	args := append([]string{"collect", "--count", "1", "--pid", fmt.Sprint(cmd.Process.Pid), "--log", log, "-o", out}, noTools...)
	code, _, stderr := runCLI(t, "", args...)
	require.Equal(t, exitOK, code, stderr)
	raw, files, _ := untar(t, out)
	for _, s := range secrets {
		assert.False(t, bytes.Contains(raw, []byte(s)), "%s survived", s)
	}
	// The evidence is there, redacted.
	assert.Contains(t, string(files["round-01/ps_eo.txt"]), "sglang.launch_server --api-key ******************** --admin-api-key sk-*********")
	assert.Contains(t, string(files["once/env.txt"]), "HF_TOKEN=hf_*****")
	assert.Contains(t, string(files["once/env.txt"]), "NCCL_DEBUG=INFO\n")
	m := readManifest(t, files)
	assert.Equal(t, cmd.Process.Pid, m.Target.MainPID)
	assert.Equal(t, fmt.Sprintf("--pid %d", cmd.Process.Pid), m.Target.How)
	assert.GreaterOrEqual(t, m.Redaction.Counts["secret-flag"]+m.Redaction.Counts["openai-key"]+m.Redaction.Counts["hf-token"], 3)
}

func TestCollectUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "b.tar.zst")
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"collect", "--match", "tgi", "-o", out}, exitUsage, "--match"},
		{[]string{"collect", "--match", "vllm", "--pid", "1", "-o", out}, exitUsage, "give one"},
		{[]string{"collect", "--count", "0", "-o", out}, exitUsage, "--count"},
		{[]string{"collect", "--log", filepath.Join(dir, "nope.log"), "-o", out}, exitInput, "nope.log"},
		{[]string{"collect", "-o", filepath.Join(dir, "no", "such", "dir", "b.tar.zst")}, exitUsage, "does not exist"},
		{[]string{"collect"}, exitUsage, "-o"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Contains(t, stderr, tc.err, tc.args)
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing is written on a usage error")
}

// TestManifestPlacesTimes checks what the analyzer takes from a manifest:
// the host's offset places the wall-clock times of the bundle, and a
// round's start dates the snapshots without a time of their own.
func TestManifestPlacesTimes(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 30, 4, 24, 37, 0, time.UTC)
	m := &manifest.Manifest{Format: manifest.Format, Version: manifest.Version, Command: "collect",
		Host:   &manifest.Host{Clock: start, Zone: "CET", UTCOffsetS: 3600},
		Rounds: []manifest.Round{{Dir: "round-01", N: 1, Start: start, End: start.Add(2 * time.Second)}},
		Artifacts: []manifest.Artifact{
			{Path: "round-01/query-gpu.csv", Program: "nvidia-smi", Command: "nvidia-smi --query-gpu=timestamp,index,name --format=csv", Round: 1, Start: start, End: start.Add(time.Second)},
			{Path: "round-01/ps_auxf.txt", Program: "ps", Command: "ps auxfww", Round: 1, Start: start, End: start.Add(time.Second)},
		}}
	var b strings.Builder
	require.NoError(t, manifest.Encode(&b, m))
	files := map[string]string{
		manifest.Name: b.String(),
		// The host's clock reads 05:24 (CET) when UTC is 04:24.
		"round-01/query-gpu.csv": "timestamp, index, name\n2026/11/30 05:24:38.750, 0, NVIDIA H200\n",
		"round-01/ps_auxf.txt": "USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n" +
			"root         1  0.0  0.0 168512 13172 ?        Ss   05:03   0:41 /sbin/init\n",
	}
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	_, f, _ := analyzeBundle(t, dir)
	assert.Empty(t, f.Issues())
	require.Len(t, f.GPUs, 1)
	assert.Equal(t, time.Date(2026, 11, 30, 4, 24, 38, 750000000, time.UTC), f.GPUs[0].At.UTC())
	require.Len(t, f.Procs, 1)
	assert.Equal(t, start, f.Procs[0].At.UTC(), "the round's start dates a ps listing without a time")
	require.Len(t, f.Procs[0].Procs, 1)
	assert.Equal(t, time.Date(2026, 11, 30, 4, 3, 0, 0, time.UTC), f.Procs[0].Procs[0].Start.UTC(), "START 05:03 on the host is 04:03 UTC")
	assert.Contains(t, f.Assumptions, "wall-clock times read in zone UTC+01:00, the host's zone recorded in manifest.json:9")
	require.Len(t, f.Runs, 2)
	assert.Equal(t, "round-01/ps_auxf.txt", f.Runs[1].Path)
}
