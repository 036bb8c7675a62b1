package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coroner-dev/coroner/internal/collect"
	"github.com/coroner-dev/coroner/internal/pack"
	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/parser/manifest"
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
	Python          string `name:"python" env:"CORONER_PYTHON" default:"python3" help:"Coroner's own Python for the environment report (collect_env), run in coroner's environment."`
	RunServerPython bool   `name:"run-server-python" help:"Run the environment report with the server's own Python instead, as the server's user and only from files nobody else can change (it runs code that user controls). Without it the server's package versions are read from disk."`
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
	for _, l := range c.Log {
		if _, err := os.Stat(l); err != nil {
			return fail(exitInput, "--log %s: %v", l, unwrapPathError(err))
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
	}
	items := make([]pack.Item, 0, len(capt.Files))
	for _, f := range capt.Files {
		items = append(items, pack.Bytes(f.Name, f.Data, f.ModTime, true, f.Log))
	}
	job := &packJob{items: items, manifest: m, maxSize: maxSize, capName: "--max-size " + c.MaxSize}
	if !c.NoRedact {
		hosts, users := localNames()
		if capt.Host.Hostname != "" {
			hosts = append(hosts, capt.Host.Hostname)
		}
		job.redactor = redact.New(redact.Options{Hosts: c.RedactHosts, Hostnames: hosts, Users: users})
	}
	sum, err := writeBundle(c.Output, job)
	if err != nil {
		return fail(exitInternal, "write %s: %v", c.Output, err)
	}
	summarize(e, c.Quiet, c.Output, job.redactor != nil, sum, maxSize)
	return nil
}
