package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(hostMemRule) }

var hostMemRule = &Rule{
	ID:       "host-memory",
	Title:    "host memory exhausted",
	Severity: SeverityCritical,
	Category: CatHostOOM,
	Needs:    []facts.Kind{facts.KindKernelLog, facts.KindMeminfo, facts.KindFree, facts.KindCgroupMemory, facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `The kernel's OOM killer (or a memory cgroup's, as in a container) kills the
biggest process when host RAM runs out. Loading weights maps the checkpoint
into host memory, parallel kernel builds run several cicc/cc1plus processes
of gigabytes each, and both can exhaust it; the victim dies without a word in
its own log (SGLang's launcher at best reports "exit code -9").

The rule reports OOM kills whose victim is a server or compiler process (or
any OOM kill in a bundle whose log ends without an error), cgroup
memory.events counting oom_kill, and MemAvailable under 5% of MemTotal in a
memory snapshot.

Summing the resident memory of the server processes overstates their use:
every scheduler maps the same checkpoint files, and RSS counts those shared
pages in each process. MemAvailable is the number to trust.`,
	References: []string{
		"https://www.kernel.org/doc/html/latest/admin-guide/cgroup-v2.html#memory-interface-files",
	},
	Run: runHostMem,
}

func runHostMem(p *Pass) {
	idx, st := p.Index, &p.Index.State
	var ev []Evidence
	var victims []string
	// RootFailure is nil exactly when the run has no failure.
	root := RootFailure(st)
	explained := root != nil && root.Type != facts.EventKilled && root.Type != facts.EventChildFailed
	for _, k := range idx.Facts.Kernel {
		if k.Type != facts.KernelOOMKill {
			continue
		}
		// A kill of a process that is neither the server's nor a compiler,
		// in a run whose log ends in an error of its own, is another story.
		if !ourProcess(k.Comm) && (explained || st.Ready != nil) {
			p.RuleOut(fmt.Sprintf("the kernel killed %s (pid %d), which is not a server or compiler process", k.Comm, k.PID),
				Evidence{Src: k.Src, Text: k.Text})
			continue
		}
		ev = append(ev, Evidence{Src: k.Src, Text: k.Text})
		v := fmt.Sprintf("%s (pid %d, %s resident)", k.Comm, k.PID, derive.FormatKB(k.RSSKB))
		if k.Constraint == "CONSTRAINT_MEMCG" || k.Cgroup != "" {
			v += " in memory cgroup " + orDefault(k.Cgroup, "?")
		}
		victims = append(victims, v)
	}
	for _, c := range idx.Facts.Cgroups {
		if n := c.Events["oom_kill"]; n > 0 {
			ev = append(ev, Evidence{Src: c.Src, Text: fmt.Sprintf("memory.events: oom_kill %d, max %d", n, c.Events["max"])})
			if len(victims) == 0 {
				victims = append(victims, fmt.Sprintf("%d process(es) of the memory cgroup", n))
			}
		}
	}
	for _, e := range idx.Events(facts.EventChildFailed, facts.EventKilled) {
		if strings.Contains(e.Msg, "-9") || strings.Contains(e.Msg, "SIGKILL") || strings.Contains(e.Msg, "exit code: 137") {
			ev = append(ev, Ev(e))
		}
	}
	if len(victims) > 0 {
		server := false
		for _, v := range victims {
			server = server || ourProcess(v)
		}
		conf := 0.6
		if server {
			conf = 0.9
		}
		p.Report(Finding{
			Message: fmt.Sprintf("The kernel's OOM killer killed %s: host memory ran out.", strings.Join(victims, "; ")),
			Remedy: "Give the server more host memory (or the container a higher memory limit), load weights without doubling them in RAM, and lower parallel kernel builds (MAX_JOBS=1 or 2: each cicc/cc1plus can take several GB); " +
				"then restart. `dmesg -T | grep -i oom` shows every kill.",
			Evidence:   ev,
			Confidence: conf,
			Outcome:    OutcomeCrashed,
			Phase:      idx.RunPhase(),
			Cause:      true,
			Why:        "the kernel log names the killed process",
		})
		return
	}
	for _, m := range idx.Facts.Memory {
		if !m.TotalKB.OK || !m.AvailKB.OK || m.TotalKB.V == 0 {
			continue
		}
		if frac := m.AvailKB.V / m.TotalKB.V; frac < 0.05 {
			p.Report(Finding{
				Severity: SeverityWarning,
				Message: fmt.Sprintf("Host memory nearly exhausted at %s: %s available of %s (%.1f%%).",
					m.Src, derive.FormatKB(int64(m.AvailKB.V)), derive.FormatKB(int64(m.TotalKB.V)), frac*100),
				Remedy:     "Find what holds it (`ps aux --sort=-rss | head`), lower parallel builds (MAX_JOBS), or give the host more memory.",
				Evidence:   []Evidence{{Src: m.Src, Text: fmt.Sprintf("MemAvailable %s of MemTotal %s", derive.FormatKB(int64(m.AvailKB.V)), derive.FormatKB(int64(m.TotalKB.V)))}},
				Confidence: 0.5,
				Cause:      !st.Failed() && st.Ready == nil,
				Why:        "host memory is almost gone",
			})
			return
		}
		if st.Ready == nil && len(st.Alive) > 0 {
			p.RuleOut(fmt.Sprintf("%s of host memory is available (%s)", derive.FormatKB(int64(m.AvailKB.V)), m.Src),
				Evidence{Src: m.Src, Text: fmt.Sprintf("MemAvailable %s of MemTotal %s", derive.FormatKB(int64(m.AvailKB.V)), derive.FormatKB(int64(m.TotalKB.V)))})
		}
	}
}

// ourProcess reports a process name of an inference server, its Python, or
// a kernel compiler (comm is cut to 15 bytes).
func ourProcess(comm string) bool {
	for _, w := range []string{"python", "sglang", "VLLM", "vllm", "cicc", "cc1plus", "nvcc", "ptxas", "ninja", "pt_main_thread", "ray::", "torch", "triton"} {
		if strings.Contains(comm, w) {
			return true
		}
	}
	return false
}
