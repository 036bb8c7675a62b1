package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/manifest"
)

// toolStub writes a fake cluster tool: a shell script that logs its argv
// (one argument a field) and answers from the recorded outputs in
// testdata/, as the case arms say.
func toolStub(t *testing.T, dir, name, cases string) string {
	t.Helper()
	rec, err := filepath.Abs("testdata")
	require.NoError(t, err)
	fix, err := filepath.Abs("../../fixtures")
	require.NoError(t, err)
	// One write per call: the collector runs stubs concurrently, and
	// appends of one small write each do not interleave.
	body := "R=" + rec + "\nF=" + fix + "\nline=$(printf '%s\\037' \"$@\")\nprintf '%s\\n' \"$line\" >> " + filepath.Join(dir, name+".argv") +
		"\ncase \"$*\" in\n" + cases + "\n*) echo \"" + name + ": unexpected: $*\" >&2; exit 64;;\nesac"
	return stub(t, dir, name, body)
}

// argvs reads what a stub was called with, each call's arguments apart.
func argvs(t *testing.T, dir, name string) [][]string {
	data, err := os.ReadFile(filepath.Join(dir, name+".argv"))
	require.NoError(t, err)
	var out [][]string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		out = append(out, strings.Split(strings.TrimSuffix(l, "\x1f"), "\x1f"))
	}
	return out
}

func files(c *Capture) map[string]string {
	out := map[string]string{}
	for _, f := range c.Files {
		out[f.Name] = string(f.Data)
	}
	return out
}

func nodesByName(c *Capture) map[string]manifest.Node {
	out := map[string]manifest.Node{}
	for _, n := range c.Nodes {
		out[n.Name] = n
	}
	return out
}

func recorded(t *testing.T, p string) string {
	data, err := os.ReadFile(filepath.Join("testdata", p))
	require.NoError(t, err)
	return string(data)
}

func TestCollectSlurm(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "slurm-1.out")
	require.NoError(t, os.WriteFile(out, []byte("[2026-12-01 22:40:00] server_args=ServerArgs(model_path=x)\n"), 0o644))
	scontrol := toolStub(t, dir, "scontrol", `
"show job 1") sed 's#/tmp/slurm-1.out#`+out+`#' $R/slurm/scontrol-show-job.txt;;
"show job 2") cat $R/slurm/scontrol-show-job-pending.txt;;
"show job 999") cat $R/slurm/scontrol-show-job-invalid.stderr >&2; exit 1;;
"show hostnames gpu-node[01-02]") cat $R/slurm/scontrol-show-hostnames.txt;;`)
	srun := toolStub(t, dir, "srun", `
*--nodelist=gpu-node02*) cat $R/slurm/srun-node-down.stderr >&2; exit 1;;
*"--quiet date "*) cat $R/slurm/date.txt;;
*"--quiet ps -eo "*) cat $R/slurm/ps-eo.txt;;
*"--quiet ps auxfww") cat $R/slurm/ps-auxf.txt;;
*"--quiet nvidia-smi "*) cat $R/slurm/srun-no-nvidia-smi.stderr >&2; exit 2;;
*"--quiet cat /proc/meminfo") cat $F/corpus/h200-x2/00-idle/meminfo.txt;;
*"--quiet cat /var/log/sglang/server.log") cat $F/seed/flashinfer-sm120-hang/server.log;;
*"--quiet df "*) printf 'Filesystem     Type  1K-blocks    Used Available Use%% Mounted on\n/dev/nvme0n1p1 ext4 1921724608 2099744 1821932016   1%% /\n';;`)
	run := func(job string) *Capture {
		capt, err := Run(context.Background(), Config{Cluster: &Cluster{Kind: "slurm", Job: job, Srun: srun, Scontrol: scontrol},
			Logs: []string{"/var/log/sglang/server.log"}, Count: 1, Timeout: 5 * time.Second})
		require.NoError(t, err)
		return capt
	}
	capt := run("1")
	assert.Empty(t, capt.Missing)
	fs := files(capt)
	assert.Equal(t, recorded(t, "slurm/ps-eo.txt"), fs["nodes/gpu-node01/round-01/ps_eo.txt"])
	assert.Equal(t, recorded(t, "slurm/ps-auxf.txt"), fs["nodes/gpu-node01/round-01/ps_auxf.txt"])
	assert.True(t, strings.Contains(fs["nodes/gpu-node01/logs/server.log"], "Load weight begin"), "the --log read on the node")
	assert.Contains(t, fs["logs/slurm-1.out"], "server_args=", "the job's output file, read where the collector sees it")
	assert.Contains(t, fs, "cluster/scontrol-show-job.txt")
	assert.Contains(t, fs, "nodes/gpu-node01/once/meminfo.txt")
	for name := range fs {
		assert.False(t, strings.HasPrefix(name, "nodes/gpu-node02/"), "nothing from the node that did not answer: %s", name)
	}

	nodes := nodesByName(capt)
	require.Len(t, nodes, 2)
	n1, n2 := nodes["gpu-node01"], nodes["gpu-node02"]
	assert.Equal(t, "partial", n1.Status, "nvidia-smi is missing there")
	assert.Equal(t, "gpu-node01", n1.Host)
	assert.Equal(t, "nodes/gpu-node01", n1.Dir)
	assert.Equal(t, "RUNNING", n1.State)
	require.NotNil(t, n1.ClockOffsetS)
	assert.Equal(t, "failed", n2.Status)
	assert.Equal(t, "did not answer: srun: error: Task launch for StepId=1.5 failed on node gpu-node02: Communication connection failure / "+
		"srun: error: Application launch failed: Communication connection failure / srun: Job step aborted", n2.Error)

	// The missing nvidia-smi is a program missing on the node, not a
	// failed node; the summary says each once.
	var smi manifest.Artifact
	for _, a := range capt.Artifacts {
		if a.Program == "nvidia-smi" && strings.Contains(a.Command, "gpu-node01") && strings.Contains(a.Command, "-q -x") {
			smi = a
		}
	}
	assert.True(t, smi.NotFound, "%+v", smi)
	assert.Contains(t, smi.Stderr, "execve(): nvidia-smi: No such file or directory")
	lines := strings.Join(capt.Lines(20), "\n")
	assert.Contains(t, lines, "slurm through "+srun+": 1 of 2 nodes answered")
	assert.Contains(t, lines, "node gpu-node02: failed: did not answer: srun: error: Task launch")
	assert.Contains(t, lines, "gpu-node01: nvidia-smi: not found (5 times)")
	assert.Contains(t, lines, "gpu-node02: date: ", "the node's captures after the first are skipped, saying why")

	// Every command is srun on the job's own node, the name one argument;
	// nothing goes through a shell.
	for _, argv := range argvs(t, dir, "srun") {
		require.GreaterOrEqual(t, len(argv), 7)
		assert.Equal(t, []string{"--jobid=1", "--overlap"}, argv[:2])
		assert.Contains(t, []string{"--nodelist=gpu-node01", "--nodelist=gpu-node02"}, argv[2])
		assert.Equal(t, []string{"--nodes=1", "--ntasks=1", "--quiet"}, argv[3:6])
		assert.Contains(t, []string{"date", "ps", "nvidia-smi", "cat", "df"}, argv[6])
	}
	assert.Len(t, argvs(t, dir, "srun"), 1+5+4+1+1, "gpu-node02 was asked once: its clock; gpu-node01 everything")

	capt = run("2")
	assert.Equal(t, "Slurm job 2 is PENDING (Resources): it runs on no node", capt.Missing)
	capt = run("999")
	assert.Contains(t, capt.Missing, "slurm_load_jobs error: Invalid job id specified")
}

func TestCollectKubernetes(t *testing.T) {
	dir := t.TempDir()
	h200 := "$F/corpus/h200-x2/00-idle"
	kubectl := toolStub(t, dir, "kubectl", `
"get pods --output=json --namespace=llm --selector=app=sglang") cat $R/k8s/pods.json;;
*" sglang-1"*) cat $R/k8s/node-down.stderr >&2; exit 1;;
*" sglang-2"*) cat $R/k8s/pending.stderr >&2; exit 1;;
"exec --namespace=llm --container=sglang sglang-0 -- date "*) cat $R/k8s/date.txt;;
"exec --namespace=llm --container=sglang sglang-0 -- ps -eo "*) cat `+h200+`/ps_eo.txt;;
"exec --namespace=llm --container=sglang sglang-0 -- ps auxfww") cat `+h200+`/ps_auxf.txt;;
"exec --namespace=llm --container=sglang sglang-0 -- nvidia-smi -q -x") cat `+h200+`/nvidia-smi-q.xml;;
"exec --namespace=llm --container=sglang sglang-0 -- nvidia-smi --query-gpu="*) cat `+h200+`/query-gpu.csv;;
"exec --namespace=llm --container=sglang sglang-0 -- nvidia-smi --query-compute-apps="*) cat `+h200+`/compute-apps.csv;;
"exec --namespace=llm --container=sglang sglang-0 -- nvidia-smi "*) cat $R/k8s/no-nvidia-smi.stderr >&2; exit 1;;
"exec --namespace=llm --container=sglang sglang-0 -- cat /proc/meminfo") cat `+h200+`/meminfo.txt;;
"exec --namespace=llm --container=sglang sglang-0 -- df "*) echo 'Filesystem Type 1K-blocks Used Available Use% Mounted on';;
"logs --namespace=llm --container=sglang sglang-0") cat $F/seed/flashinfer-sm120-hang/server.log;;
"logs --previous --namespace=llm --container=sglang sglang-0") cat $F/corpus/fulllogs/sglang-glm5-tp8-mi355x-graphcrash/server.log;;
"describe pod --namespace=llm sglang-0") cat $R/k8s/describe.txt;;`)
	start := time.Now()
	capt, err := Run(context.Background(), Config{Cluster: &Cluster{Kind: "kubernetes", Kubectl: kubectl, Namespace: "llm", Selector: "app=sglang"},
		Count: 2, Every: 10 * time.Millisecond, Timeout: 5 * time.Second})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 20*time.Second)
	assert.Empty(t, capt.Missing)
	fs := files(capt)
	for _, f := range []string{"cluster/pods.json", "nodes/sglang-0/round-01/ps_eo.txt", "nodes/sglang-0/round-02/nvidia-smi-q.xml",
		"nodes/sglang-0/round-01/query-gpu.csv", "nodes/sglang-0/once/date.txt", "nodes/sglang-0/once/describe.txt",
		"nodes/sglang-0/logs/sglang.log", "nodes/sglang-0/logs/sglang.previous.log"} {
		assert.Contains(t, fs, f)
	}
	assert.NotContains(t, fs, "nodes/sglang-0/once/topo.txt", "the image has no nvidia-smi topo output")
	nodes := nodesByName(capt)
	require.Len(t, nodes, 3)
	n0 := nodes["sglang-0"]
	assert.Equal(t, manifest.Node{Name: "sglang-0", Dir: "nodes/sglang-0", Host: "gpu-a1", Pod: "sglang-0", Namespace: "llm", Container: "sglang",
		State: "Running", Restarts: 1, Status: "partial", ClockOffsetS: n0.ClockOffsetS}, n0)
	assert.Equal(t, "did not answer: Error from server: error dialing backend: dial tcp 10.0.3.17:10250: i/o timeout", nodes["sglang-1"].Error)
	assert.Equal(t, "gpu-a2", nodes["sglang-1"].Host)
	assert.Contains(t, nodes["sglang-2"].Error, `container "sglang" in pod "sglang-2" is waiting to start: ContainerCreating`)
	assert.Equal(t, "Pending", nodes["sglang-2"].State)
	for _, argv := range argvs(t, dir, "kubectl") {
		if argv[0] == "exec" {
			assert.Equal(t, "--", argv[4], "the pod's program comes after --, as its own arguments: %q", argv)
		}
	}
}

// TestCollectKubernetesHostileAndHung: a pod whose name no cluster allows
// is never passed to kubectl, and a pod whose node hangs costs one
// timeout, not one per capture.
func TestCollectKubernetesHostileAndHung(t *testing.T) {
	dir := t.TempDir()
	pods := filepath.Join(dir, "pods.json")
	require.NoError(t, os.WriteFile(pods, []byte(`{"apiVersion":"v1","kind":"List","items":[
{"kind":"Pod","metadata":{"name":"--kubeconfig=/tmp/evil","namespace":"llm"},"spec":{"containers":[{"name":"sglang"}]},"status":{"phase":"Running"}},
{"kind":"Pod","metadata":{"name":"ok-0","namespace":"llm"},"spec":{"nodeName":"gpu-b1","containers":[{"name":"x;reboot"}]},"status":{"phase":"Running"}},
{"kind":"Pod","metadata":{"name":"hung-0","namespace":"llm"},"spec":{"nodeName":"gpu-b2","containers":[{"name":"sglang"}]},"status":{"phase":"Running"}}]}`), 0o644))
	kubectl := toolStub(t, dir, "kubectl", `
"get pods --output=json --namespace=llm hung-0 ok-0") cat `+pods+`;;
*hung-0*) sleep 30;;`)
	start := time.Now()
	capt, err := Run(context.Background(), Config{Cluster: &Cluster{Kind: "kubernetes", Kubectl: kubectl, Namespace: "llm", Pods: []string{"hung-0", "ok-0"}},
		Count: 3, Every: 10 * time.Millisecond, Timeout: time.Second})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 8*time.Second, "one timeout for the hung node's clock, one per log and describe, none per snapshot")
	nodes := nodesByName(capt)
	assert.Contains(t, nodes["pod"].Error, `the cluster named a pod "--kubeconfig=/tmp/evil"`)
	assert.Contains(t, nodes["ok-0"].Error, `the pod's container "x;reboot" is no Kubernetes name: not asked`)
	assert.Contains(t, nodes["hung-0"].Error, "did not answer within 1s")
	assert.Equal(t, "none of the 3 nodes answered", capt.Missing)
	for _, argv := range argvs(t, dir, "kubectl") {
		assert.NotContains(t, strings.Join(argv, " "), "evil")
		assert.NotContains(t, strings.Join(argv, " "), "reboot")
	}
}

func TestCollectRay(t *testing.T) {
	dir := t.TempDir()
	head := "4a1f9c2e7b3d8e6f0a5c9b2d7e1f3a8c6b0d4e2f9a7c5b3d1e8f6a2c"
	worker := "9e3b7d1f5a2c8e4b6d0f3a9c7e1b5d2f8a6c4e0b9d3f7a1c5e2b8d6f"
	ray := toolStub(t, dir, "ray", `
"list nodes --format=json --limit=10000") cat $R/ray/ray-nodes.json;;
"status") cat $R/ray/ray-status.txt;;
"list actors --format=json --detail --limit=10000") cat $R/ray/ray-actors.json;;
"logs cluster --node-id=`+head+`") cat $R/ray/ray-logs-head.txt;;
"logs cluster --node-id=`+worker+`") sleep 30;;
"logs cluster raylet.out --node-id=`+head+` --tail=-1") cat $R/ray/raylet.out;;
"logs cluster worker-"*".out --node-id=`+head+` --tail=-1") cat $R/ray/worker.out;;
"logs cluster "*" --node-id=`+head+` --tail=-1") echo "[2026-11-30 04:02:11,482 I 51890 51890] started";;`)
	capt, err := Run(context.Background(), Config{Cluster: &Cluster{Kind: "ray", Ray: ray}, Count: 1, Timeout: time.Second})
	require.NoError(t, err)
	assert.Empty(t, capt.Missing)
	fs := files(capt)
	for _, f := range []string{"cluster/ray-nodes.json", "cluster/ray-status.txt", "cluster/ray-actors.json", "nodes/10.0.0.1/once/ray-logs.txt",
		"nodes/10.0.0.1/logs/raylet.out", "nodes/10.0.0.1/logs/raylet.err", "nodes/10.0.0.1/logs/gcs_server.out",
		"nodes/10.0.0.1/logs/worker-8d2a4f6c1e3b5a7d9c0e2f4b6a8d1c3e5f7a9b0c2d4e6f8a1b3c5d7e-01000000-52321.out"} {
		assert.Contains(t, fs, f)
	}
	assert.Equal(t, recorded(t, "ray/raylet.out"), fs["nodes/10.0.0.1/logs/raylet.out"])
	assert.NotContains(t, fs, "nodes/10.0.0.1/logs/monitor.log", "only the raylet's, the GCS server's and the workers' logs")
	nodes := nodesByName(capt)
	require.Len(t, nodes, 3)
	assert.Equal(t, "collected", nodes["10.0.0.1"].Status)
	assert.Equal(t, head, nodes["10.0.0.1"].RayNodeID)
	assert.Contains(t, nodes["10.0.0.2"].Error, "did not answer within 1s")
	assert.Equal(t, "the node is DEAD in ray list nodes (Unexpected termination: health check failed due to missing too many heartbeats): its logs went with it",
		nodes["10.0.0.3"].Error)
	assert.Contains(t, strings.Join(capt.Notes, "\n"), "ray runs no command on a node")
}

// TestClusterToolMissing: without the cluster's tool, or without a
// cluster, the capture says so in a line and the bundle is still made.
func TestClusterToolMissing(t *testing.T) {
	dir := t.TempDir()
	ray := toolStub(t, dir, "ray", `"list nodes --format=json --limit=10000") cat $R/ray/no-cluster.stderr >&2; exit 1;;`)
	for _, tc := range []struct {
		cl   Cluster
		want string
	}{
		{Cluster{Kind: "kubernetes", Kubectl: "coroner-test-no-kubectl", Pods: []string{"a"}}, "coroner-test-no-kubectl was not found: nothing could be collected from the Kubernetes cluster"},
		{Cluster{Kind: "slurm", Job: "7", Scontrol: "coroner-test-no-scontrol"}, "coroner-test-no-scontrol was not found: nothing could be collected from the Slurm job 7"},
		{Cluster{Kind: "ray", Ray: "coroner-test-no-ray"}, "coroner-test-no-ray was not found: nothing could be collected from the Ray cluster"},
		{Cluster{Kind: "ray", Ray: ray}, "Could not find any running Ray instance"},
	} {
		capt, err := Run(context.Background(), Config{Cluster: &tc.cl, Count: 1, Timeout: time.Second})
		require.NoError(t, err)
		assert.Contains(t, capt.Missing, tc.want)
		assert.NotEmpty(t, capt.Artifacts, "the failed command is in the manifest")
	}
	_, err := Run(context.Background(), Config{Cluster: &Cluster{Kind: "kubernetes", Pods: []string{"a b"}}})
	assert.EqualError(t, err, `--pod "a b" is not a Kubernetes pod name`)
}
