package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/coroner-dev/coroner/internal/bundlewrite"
	"github.com/coroner-dev/coroner/internal/collect"
	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/reports"
)

type collectCmd struct {
	Log     []string      `name:"log" placeholder:"FILE" help:"A log of the server (repeat for several); its first 1MB and last 50MB are kept."`
	PID     int           `name:"pid" help:"The server's main process; its children are taken with it."`
	Match   string        `name:"match" placeholder:"ENGINE" help:"Take the processes of this engine: sglang or vllm (default: either)."`
	URL     string        `name:"url" placeholder:"URL" help:"The server's base URL (e.g. http://127.0.0.1:30000), probed at /health, /health_generate, /v1/models, /get_server_info, /metrics."`
	Every   time.Duration `default:"30s" help:"Time between rounds of snapshots."`
	Count   int           `default:"3" help:"Rounds of snapshots (ps, nvidia-smi, probes)."`
	Timeout time.Duration `default:"30s" help:"Time limit of each external command; a command that passes it is killed and recorded as timed out."`
	writeFlags
	NvidiaSMI       string `name:"nvidia-smi" env:"CORONER_NVIDIA_SMI" default:"nvidia-smi" help:"The nvidia-smi to run."`
	PySpy           string `name:"py-spy" env:"CORONER_PY_SPY" default:"py-spy" help:"The py-spy to run."`
	Python          string `name:"python" env:"CORONER_PYTHON" default:"python3" help:"Coroner's own Python for the environment report (collect_env), run isolated (-I) with the system's PATH."`
	RunServerPython bool   `name:"run-server-python" help:"Run the environment report with the server's own Python instead, as the server's user and only from files nobody else can change (it runs code that user controls). Without it the server's package versions are read from disk."`

	K8s       bool     `name:"k8s" group:"cluster" help:"Collect from Kubernetes pods through kubectl (logs, exec for ps and nvidia-smi, describe), one folder per pod; choose them with --pod or --selector."`
	Pods      []string `name:"pod" group:"cluster" placeholder:"NAME" help:"With --k8s: a pod (repeat for several)."`
	Selector  string   `name:"selector" short:"l" group:"cluster" placeholder:"LABELS" help:"With --k8s: the pods whose labels match (kubectl's --selector)."`
	Namespace string   `name:"namespace" short:"n" group:"cluster" placeholder:"NS" help:"With --k8s: the pods' namespace (default: the context's)."`
	Container string   `name:"container" short:"c" group:"cluster" placeholder:"NAME" help:"With --k8s: the container (default: the pod's default container)."`
	Context   string   `name:"kube-context" group:"cluster" placeholder:"NAME" help:"With --k8s: the kubeconfig context."`
	Kubectl   string   `name:"kubectl" group:"cluster" env:"CORONER_KUBECTL" default:"kubectl" help:"The kubectl to run."`
	Slurm     string   `name:"slurm" group:"cluster" placeholder:"JOBID" help:"Collect from the nodes of a running Slurm job, through srun steps that overlap the job's (ps, nvidia-smi on each node), one folder per node, and the job's output file."`
	Srun      string   `name:"srun" group:"cluster" env:"CORONER_SRUN" default:"srun" help:"The srun to run."`
	Scontrol  string   `name:"scontrol" group:"cluster" env:"CORONER_SCONTROL" default:"scontrol" help:"The scontrol to run."`
	Ray       bool     `name:"ray" group:"cluster" help:"Collect from a Ray cluster through the ray CLI: its nodes, status and actors, and each live node's raylet, GCS and worker logs, one folder per node."`
	RayAddr   string   `name:"ray-address" group:"cluster" placeholder:"ADDR" help:"With --ray: the cluster's address (default: the ray CLI's own, RAY_ADDRESS)."`
	RayCLI    string   `name:"ray-cli" group:"cluster" env:"CORONER_RAY" default:"ray" help:"The ray to run."`
	Parallel  int      `name:"parallel" group:"cluster" default:"16" help:"Nodes collected at once."`
}

// cluster is the cluster the flags name, or nil.
func (c *collectCmd) cluster() (*collect.Cluster, error) {
	kinds := 0
	for _, on := range []bool{c.K8s, c.Slurm != "", c.Ray} {
		if on {
			kinds++
		}
	}
	k8sOnly := len(c.Pods) > 0 || c.Selector != "" || c.Namespace != "" || c.Container != "" || c.Context != ""
	switch {
	case kinds == 0 && k8sOnly:
		return nil, fail(exitUsage, "--pod, --selector, --namespace, --container and --kube-context go with --k8s")
	case kinds == 0 && c.RayAddr != "":
		return nil, fail(exitUsage, "--ray-address goes with --ray")
	case kinds == 0:
		return nil, nil
	case kinds > 1:
		return nil, fail(exitUsage, "--k8s, --slurm and --ray are three clusters: give one")
	case c.PID > 0 || c.Match != "" || c.URL != "" || c.RunServerPython:
		return nil, fail(exitUsage, "--pid, --match, --url and --run-server-python are for this machine's server, not a cluster's")
	case c.Parallel < 1:
		return nil, fail(exitUsage, "--parallel %d: at least one node at a time", c.Parallel)
	}
	cl := &collect.Cluster{Kubectl: c.Kubectl, Context: c.Context, Namespace: c.Namespace, Selector: c.Selector, Container: c.Container,
		Pods: c.Pods, Job: c.Slurm, Srun: c.Srun, Scontrol: c.Scontrol, Ray: c.RayCLI, RayAddress: c.RayAddr, Parallel: c.Parallel}
	switch {
	case c.K8s:
		cl.Kind = "kubernetes"
	case c.Slurm != "":
		cl.Kind = "slurm"
	default:
		cl.Kind = "ray"
	}
	if err := collect.ValidateCluster(cl); err != nil {
		return nil, fail(exitUsage, "%v", err)
	}
	return cl, nil
}

func (c *collectCmd) Run(e *env) error {
	maxSize, err := c.check()
	if err != nil {
		return err
	}
	switch {
	case c.Match != "" && c.Match != "sglang" && c.Match != "vllm":
		return fail(exitUsage, "--match %q: want sglang or vllm", c.Match)
	case c.Match != "" && c.PID > 0:
		return fail(exitUsage, "--pid and --match choose the server two ways: give one")
	case c.Count < 1:
		return fail(exitUsage, "--count %d: at least one round", c.Count)
	case c.Every < 0 || c.Timeout <= 0:
		return fail(exitUsage, "--every and --timeout must be positive")
	}
	cluster, err := c.cluster()
	if err != nil {
		return err
	}
	for _, l := range c.Log {
		if cluster != nil {
			// A path on each node, read there.
			if !filepath.IsAbs(l) {
				return fail(exitUsage, "--log %s: with a cluster, name the log by its absolute path on the nodes", l)
			}
			continue
		}
		// Judged as the read at the end will judge it (a FIFO, a device,
		// or, as root, a log another user could have pointed at a file
		// of root's), so that the collect does not start to no purpose.
		if err := collect.CheckLog(l); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				if abs, _ := filepath.Abs(l); pe.Path == abs {
					return fail(exitInput, "--log %s: %v", l, pe.Err)
				}
				return fail(exitInput, "--log %s: %s: %v", l, pe.Path, pe.Err)
			}
			return fail(exitInput, "--log %s: %v", l, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := func(string) {}
	if e.stderrTTY && !c.Quiet {
		progress = func(s string) { fmt.Fprintf(e.stderr, "\r\x1b[Kcoroner collect: %s", s) }
	}
	capt, err := collect.Run(ctx, collect.Config{
		Logs: c.Log, PID: c.PID, Match: c.Match, URL: c.URL, Count: c.Count, Every: c.Every, Timeout: c.Timeout,
		NvidiaSMI: c.NvidiaSMI, PySpy: c.PySpy, Python: c.Python, RunServerPython: c.RunServerPython, Progress: progress,
		Cluster: cluster,
	})
	// A second Ctrl-C, while the bundle is written, ends coroner at once.
	stop()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	progress("writing " + c.Output)
	m := &manifest.Manifest{
		Format: manifest.Format, Version: manifest.Version, Tool: manifest.Tool{Name: "coroner", Version: version},
		Command: "collect", Started: capt.Started, Finished: capt.Finished,
		Host: &capt.Host, Target: capt.Target, Rounds: capt.Rounds, Notes: capt.Notes, Artifacts: capt.Artifacts,
		Cluster: capt.Cluster, Nodes: capt.Nodes,
	}
	if capt.Cluster != nil {
		m.Target = nil
	}
	items := make([]bundlewrite.Item, 0, len(capt.Files))
	for _, f := range capt.Files {
		items = append(items, bundlewrite.Bytes(f.Name, f.Data, f.ModTime, true, f.Log))
	}
	job := &bundlewrite.Job{Items: items, Manifest: m, MaxSize: maxSize, CapName: "--max-size " + c.MaxSize}
	if !c.NoRedact {
		hosts, users := bundlewrite.LocalNames()
		if capt.Host.Hostname != "" {
			hosts = append(hosts, capt.Host.Hostname)
		}
		job.Redactor = redact.New(redact.Options{Hosts: c.RedactHosts, Hostnames: hosts, Users: users})
	}
	sum, err := bundlewrite.WriteBundle(c.Output, job)
	if err != nil {
		return fail(exitInternal, "write %s: %v", c.Output, err)
	}
	if e.stderrTTY && !c.Quiet {
		fmt.Fprint(e.stderr, "\r\x1b[K")
	}
	// What was captured, failed and skipped, always: a collect that could
	// not do something must not look like one that did (issue 18).
	for _, l := range capt.Lines(20) {
		fmt.Fprintf(e.stderr, "coroner collect: %s\n", escape.Line(l))
	}
	summarize(e, true, c.Output, job.Redactor != nil, sum, maxSize)
	wrote := fmt.Sprintf("wrote %s: %d files, %s", c.Output, len(sum.Results)+1, reports.HumanBytes(sum.Bytes))
	if job.Redactor == nil {
		wrote += ", not redacted"
	}
	fmt.Fprintf(e.stderr, "coroner collect: %s\n", wrote)
	if capt.Missing != "" {
		return fail(exitInput, "%s: %s was written with what could be collected", capt.Missing, c.Output)
	}
	return nil
}
