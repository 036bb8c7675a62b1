package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser"
)

// TestCollectSlurmBundle: collect --slurm against the recorded outputs of a
// real two-node Slurm job writes one bundle with a folder per node and a
// manifest naming each, says on stderr which node did not answer, and the
// analyzer reads the node folders as it reads a local collect.
func TestCollectSlurmBundle(t *testing.T) {
	dir := t.TempDir()
	rec, err := filepath.Abs("../../internal/collect/testdata/slurm")
	require.NoError(t, err)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nR="+rec+"\ncase \"$*\" in\n"+body+"\n*) exit 64;;\nesac\n"), 0o755))
		return p
	}
	scontrol := write("scontrol", `"show job 1") sed 's#StdOut=.*#StdOut=/nonexistent/slurm-1.out#; s#StdErr=.*#StdErr=/nonexistent/slurm-1.out#' $R/scontrol-show-job.txt;;
"show hostnames gpu-node[01-02]") cat $R/scontrol-show-hostnames.txt;;`)
	srun := write("srun", `*--nodelist=gpu-node02*) cat $R/srun-node-down.stderr >&2; exit 1;;
*"--quiet date "*) cat $R/date.txt;;
*"--quiet ps -eo "*) cat $R/ps-eo.txt;;
*"--quiet ps auxfww") cat $R/ps-auxf.txt;;
*"--quiet nvidia-smi "*) cat $R/srun-no-nvidia-smi.stderr >&2; exit 2;;`)
	out := filepath.Join(dir, "job.tar.zst")
	code, _, stderr := runCLI(t, "", "collect", "--slurm", "1", "--srun", srun, "--scontrol", scontrol, "--count", "1", "--timeout", "5s", "-o", out)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "coroner collect: slurm through "+srun+": 1 of 2 nodes answered\n")
	assert.Contains(t, stderr, "  node gpu-node02: failed: did not answer: srun: error: Task launch for StepId=1.5 failed on node gpu-node02: Communication connection failure")

	_, files, _ := untar(t, out)
	m := readManifest(t, files)
	require.NotNil(t, m.Cluster)
	assert.Equal(t, "slurm", m.Cluster.Kind)
	assert.Equal(t, "1", m.Cluster.Job)
	require.Len(t, m.Nodes, 2)
	assert.Equal(t, "nodes/gpu-node01", m.Nodes[0].Dir)
	assert.Equal(t, "failed", m.Nodes[1].Status)
	assert.Contains(t, files, "nodes/gpu-node01/round-01/ps_eo.txt")

	f, err := parser.Parse([]string{out}, parser.Options{})
	require.NoError(t, err)
	kinds := map[string]string{}
	for _, s := range f.Sources {
		kinds[s.Path] = string(s.Kind)
	}
	assert.Equal(t, "ps", kinds["nodes/gpu-node01/round-01/ps_eo.txt"])
	assert.Equal(t, "ps", kinds["nodes/gpu-node01/round-01/ps_auxf.txt"])
	assert.Equal(t, "manifest", kinds["manifest.json"])
	var titles []string
	for _, p := range f.Procs {
		for _, r := range p.Procs {
			titles = append(titles, r.Args)
		}
	}
	assert.Contains(t, strings.Join(titles, "\n"), "sglang::scheduler_TP0")

	// No node answers: the bundle is still written, and the exit says so.
	code, _, stderr = runCLI(t, "", "collect", "--slurm", "1", "--srun", "coroner-test-no-srun", "--scontrol", scontrol, "--count", "1", "-o", out)
	assert.Equal(t, exitInput, code, stderr)
	assert.Contains(t, stderr, "coroner collect: not there: none of the 2 nodes answered")
	assert.Contains(t, stderr, "coroner-test-no-srun: not found")

	code, _, stderr = runCLI(t, "", "collect", "--slurm", "1", "--pid", "1", "-o", out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "not a cluster's")
	code, _, _ = runCLI(t, "", "collect", "--k8s", "-o", out)
	assert.Equal(t, exitUsage, code, "--k8s needs --pod or --selector")
}
