package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(collectorRule) }

var collectorRule = &Rule{
	ID:       "collector",
	Title:    "a capture command timed out or failed",
	Severity: SeverityInfo,
	Needs:    []facts.Kind{facts.KindManifest},
	Doc: `Reads the manifest that ` + "`coroner collect`" + ` writes: how every capture went.

An nvidia-smi that does not answer within the collector's timeout (30 s by
default) is evidence in itself: nvidia-smi only asks the driver, and a query
of eight GPUs takes a second or two. When it hangs, the driver is waiting on
a GPU that no longer answers (fallen off the bus, Xid 79; a GSP firmware
timeout, Xid 119/120), and every CUDA call of the server hangs the same way.
That is an error finding in the gpu-fault category, stronger when the kernel
log of the bundle holds an Xid line. A call that outlived SIGKILL sat in an
uninterruptible driver wait, which says the same thing louder.

Other commands that timed out or failed (py-spy, dmesg without permission,
a collect_env that could not import torch) are reported as information: they
explain why a kind of evidence is missing from the bundle. Programs that are
not installed are listed together.`,
	References: []string{
		"https://docs.nvidia.com/deploy/xid-errors/index.html",
		"https://docs.nvidia.com/deploy/nvidia-smi/index.html",
	},
	Run: runCollector,
}

// cmdRuns groups the manifest's records of one command (or program).
type cmdRuns struct {
	name     string
	runs     []*facts.Artifact
	timedOut []*facts.Artifact
	stuck    int
	skipped  int
}

func runCollector(p *Pass) {
	f := p.Facts
	if len(f.Runs) == 0 {
		return
	}
	byProgram := map[string]*cmdRuns{}
	failed := map[string]*cmdRuns{}
	var notFound []string
	nfSeen := map[string]*facts.Artifact{}
	for _, a := range f.Runs {
		prog := a.Program
		if prog == "" {
			prog = "?"
		}
		g := byProgram[prog]
		if g == nil {
			g = &cmdRuns{name: prog}
			byProgram[prog] = g
		}
		g.runs = append(g.runs, a)
		switch {
		case a.Skipped != "":
			g.skipped++
		case a.TimedOut:
			g.timedOut = append(g.timedOut, a)
			if strings.Contains(a.Error, "did not die after SIGKILL") {
				g.stuck++
			}
		case a.NotFound:
			if nfSeen[prog] == nil {
				nfSeen[prog] = a
				notFound = append(notFound, prog)
			}
		case a.ExitCode != 0 || a.Error != "":
			// A fallback may have fixed it (an older nvidia-smi without a
			// query field, journalctl for dmesg): still worth a line.
			key := a.Command
			if failed[key] == nil {
				failed[key] = &cmdRuns{name: key}
			}
			failed[key].runs = append(failed[key].runs, a)
		}
	}
	progs := collectorKeys(byProgram)
	for _, prog := range progs {
		g := byProgram[prog]
		if len(g.timedOut) == 0 {
			continue
		}
		if prog == "nvidia-smi" {
			reportWedgedSMI(p, g)
			continue
		}
		limit := timeoutOf(g.timedOut[0])
		p.Report(Finding{
			Title:      fmt.Sprintf("%s did not answer within %s", prog, limit),
			Severity:   SeverityInfo,
			Confidence: 1,
			Message: fmt.Sprintf("%d of %d %s call(s) timed out and were killed; the evidence they would give is missing from the bundle.",
				len(g.timedOut), len(g.runs), prog),
			Remedy:   "Run it by hand with a longer time limit, or pass a larger --timeout to coroner collect.",
			Evidence: artifactEvidence(g.timedOut),
		})
	}
	for _, key := range collectorKeys(failed) {
		g := failed[key]
		a := g.runs[0]
		why := a.Error
		if a.Stderr != "" {
			why += ": " + collectorFirstLine(a.Stderr)
		}
		p.Report(Finding{
			Title:      fmt.Sprintf("%s failed", a.Program),
			Severity:   SeverityInfo,
			Confidence: 1,
			Message:    fmt.Sprintf("`%s` failed (%s) %d time(s); what it captures is missing or came from a fallback.", a.Command, why, len(g.runs)),
			Evidence:   artifactEvidence(g.runs),
		})
	}
	if len(notFound) > 0 {
		sort.Strings(notFound)
		var ev []Evidence
		for _, prog := range notFound {
			a := nfSeen[prog]
			ev = append(ev, Evidence{Src: a.Src, Text: a.Command + ": not found"})
		}
		p.Report(Finding{
			Title:      "not installed: " + strings.Join(notFound, ", "),
			Severity:   SeverityInfo,
			Confidence: 1,
			Message: fmt.Sprintf("The collector found no %s on the machine, so the bundle lacks what %s would show.",
				strings.Join(notFound, ", "), collectorPronoun(len(notFound))),
			Remedy:   installRemedy(notFound),
			Evidence: ev,
		})
	}
}

// installHow says how to get each program the collector runs, and the flag
// that points coroner collect at another copy.
var installHow = map[string]string{
	"py-spy":     "py-spy: `pip install py-spy` (any Python; it reads the server from outside), or --py-spy PATH",
	"nvidia-smi": "nvidia-smi: it comes with the NVIDIA driver (the driver's utilities package, e.g. nvidia-utils; in a container, the NVIDIA container toolkit mounts it), or --nvidia-smi PATH",
	"kubectl":    "kubectl: install it, or --kubectl PATH",
	"srun":       "srun: run collect on a node of the Slurm cluster, or --srun PATH",
	"scontrol":   "scontrol: run collect on a node of the Slurm cluster, or --scontrol PATH",
	"python3":    "python3: install it, or --python PATH",
}

// installRemedy says how to get the programs that were not found: each the
// way it comes (pip for py-spy, the driver for nvidia-smi), never another
// program's way.
func installRemedy(progs []string) string {
	var parts []string
	for _, p := range progs {
		if how, ok := installHow[p]; ok {
			parts = append(parts, how)
		} else {
			parts = append(parts, p+": install it or put it on PATH")
		}
	}
	return "Install what is missing and collect again: " + strings.Join(parts, "; ") + "."
}

// reportWedgedSMI reports an nvidia-smi that hung: the driver or a GPU is
// wedged.
func reportWedgedSMI(p *Pass, g *cmdRuns) {
	limit := timeoutOf(g.timedOut[0])
	msg := fmt.Sprintf("nvidia-smi did not answer within %s: a wedged driver or GPU (check dmesg for Xid 79/119, nvidia-smi -r needs the GPU idle).", limit)
	msg += fmt.Sprintf(" %d of %d nvidia-smi call(s) timed out", len(g.timedOut), len(g.runs))
	if g.skipped > 0 {
		msg += fmt.Sprintf(" and %d later one(s) were skipped", g.skipped)
	}
	msg += "."
	if g.stuck > 0 {
		msg += fmt.Sprintf(" %d outlived SIGKILL: the process sat in an uninterruptible driver wait.", g.stuck)
	}
	ev := artifactEvidence(g.timedOut)
	conf := 0.6
	if g.stuck > 0 {
		conf = 0.7
	}
	var xids []string
	for _, k := range p.Facts.Kernel {
		if k.Type != facts.KernelXid {
			continue
		}
		if len(xids) < 3 {
			ev = append(ev, Evidence{Src: k.Src, Text: k.Text})
		}
		xids = append(xids, fmt.Sprint(k.Code))
	}
	if len(xids) > 0 {
		conf = 0.85
		msg += fmt.Sprintf(" The kernel log has %d Xid line(s) (Xid %s).", len(xids), strings.Join(collectorUniq(xids), ", "))
	}
	p.Report(Finding{
		Title:      "nvidia-smi did not answer: a wedged driver or GPU",
		Severity:   SeverityError,
		Category:   CatGPUFault,
		Confidence: conf,
		Cause:      true,
		Message:    msg,
		Remedy: "Look for the GPU error: `dmesg -T | grep -E 'NVRM|Xid'` (Xid 79: fallen off the bus; 119/120: GSP timeout). " +
			"Stop the server; `nvidia-smi -r -i N` resets a GPU once no process holds it, else reboot. If it recurs, report the Xid to the machine's admin.",
		Why:      "nvidia-smi hung in the collector",
		Evidence: ev,
	})
}

// timeoutOf is the limit a timed-out call hit, in whole seconds.
func timeoutOf(a *facts.Artifact) string {
	d := a.Timeout
	if d == 0 && !a.End.IsZero() {
		d = a.End.Sub(a.Start)
	}
	return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
}

func artifactEvidence(as []*facts.Artifact) []Evidence {
	var ev []Evidence
	for i, a := range as {
		if i == 10 {
			break
		}
		text := a.Command
		switch {
		case a.TimedOut:
			text += ": timed out after " + timeoutOf(a)
		case a.Error != "":
			text += ": " + a.Error
		}
		ev = append(ev, Evidence{Src: a.Src, Text: text})
	}
	return ev
}

func collectorKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func collectorFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func collectorPronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "they"
}

func collectorUniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
