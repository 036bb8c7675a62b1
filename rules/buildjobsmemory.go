package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(buildJobsMemoryRule) }

var buildJobsMemoryRule = &Rule{
	ID:       "build-jobs-memory",
	Title:    "more parallel compiler jobs than host memory holds",
	Severity: SeverityWarning,
	Category: CatHostOOM,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog, facts.KindKernelLog, facts.KindPS},
	Doc: `A prior from the configuration, for a kernel build that failed or never
finished without saying why. flashinfer's JIT and torch's C++/CUDA extensions
build with ninja: with MAX_JOBS set they pass it as -j, without it ninja runs
as many jobs as the host has CPUs plus two (ninja's default). Each job is an
nvcc whose cicc takes gigabytes on template-heavy kernels (flash-attention's
install notes ask for MAX_JOBS on hosts under 96 GB with many cores), and
FLASHINFER_NVCC_THREADS / NVCC_THREADS run that many device compilations per
job. When the jobs times 2 GiB exceed the host's memory (or the container's
limit), the kernel's OOM killer takes compilers and the build dies with
"Killed" or no word at all.

The rule reads MAX_JOBS and the thread settings from the launch command and
environment dumps, the CPU count from collect_env's lscpu section, and the
memory from /proc/meminfo or free and docker's --memory. It supports host-oom
when the jobs cannot fit; when MAX_JOBS was set and its jobs fit with room
(4 GiB each), it rules host-oom out for the build. A build failure whose own
output names another cause (an unsupported architecture, a missing header) is
left to the rules of that cause. Without the memory or the job count it says
what is missing.`,
	References: []string{
		"https://github.com/Dao-AILab/flash-attention#installation-and-features",
		"https://github.com/ninja-build/ninja/blob/v1.12.1/src/ninja.cc",
		"https://github.com/pytorch/pytorch/blob/v2.5.1/torch/utils/cpp_extension.py",
	},
	Run: runBuildJobsMemory,
}

// jobGiB is what one compiler job is taken to need, and roomyJobGiB what a
// heavy one can take (cicc on CUTLASS or flashinfer templates: the OOM-killed
// cicc of rules/testdata/host-memory held 7.8 GiB). The first supports the
// hypothesis; only jobs that fit at the second rule it out.
const (
	jobGiB      = 2
	roomyJobGiB = 4
)

func runBuildJobsMemory(p *Pass) {
	idx := p.Index
	trouble, failed := buildTrouble(idx)
	if trouble == nil {
		return
	}
	// A build whose output names another reason failed for that reason.
	for _, m := range idx.SigMatches {
		if !m.AfterShutdown && m.Sig.Category != "" && m.Sig.Category != CatJITCompile && m.Sig.Category != CatHostOOM &&
			m.Sig.Severity == SeverityCritical {
			return
		}
	}
	mem, memEv, memOK := buildMemory(idx)
	jobs, jobsEv, jobsWhy, explicit, jobsOK := buildJobs(idx)
	if !memOK || !jobsOK {
		if !failed {
			return // a build still running needs no prior until it goes wrong
		}
		var missing []string
		if !memOK {
			missing = append(missing, "the host's memory (/proc/meminfo or free)")
		}
		if !jobsOK {
			missing = append(missing, "the build's parallelism (MAX_JOBS in the environment, or the CPU count)")
		}
		p.Missing("`cat /proc/meminfo`, `nproc` and `env | grep -E 'MAX_JOBS|NVCC_THREADS'` where the server ran (`coroner collect` takes them)", missing...)
		return
	}
	needGiB := float64(jobs * jobGiB)
	haveGiB := float64(mem) / (1 << 20)
	ev := append([]Evidence{*trouble}, memEv...)
	ev = append(ev, jobsEv...)
	if needGiB > haveGiB {
		p.Report(Finding{
			Message: fmt.Sprintf("The kernel build at %s ran %s on %.0f GiB of memory: at %d GiB a job they need about %.0f GiB, more than there is, so the kernel's OOM killer takes compilers and the build dies without a compiler error.",
				trouble.Src, jobsWhy, haveGiB, jobGiB, needGiB),
			Remedy:     fmt.Sprintf("Set MAX_JOBS to at most %d (and FLASHINFER_NVCC_THREADS=1) before starting the server, or install prebuilt kernels for the GPU so nothing is compiled at startup; `dmesg -T | grep -i 'killed process'` confirms.", max(1, int(haveGiB)/roomyJobGiB)),
			Evidence:   ev,
			Confidence: 0.35,
			Cause:      true,
			Layer:      LayerPrior,
			Why:        "a prior from the configuration: the build's jobs cannot fit in memory",
		})
		return
	}
	if explicit && float64(jobs*roomyJobGiB) <= haveGiB {
		p.RuleOut(fmt.Sprintf("the build ran %s on %.0f GiB of memory: even at %d GiB a job they fit", jobsWhy, haveGiB, roomyJobGiB), ev...)
	}
}

// buildTrouble is the evidence of a kernel build that failed (a build
// failure, a compiler the kernel killed: failed is set) or that was still
// running when the run had not become ready. Nil when no build went wrong.
func buildTrouble(idx *Index) (ev *Evidence, failed bool) {
	st := &idx.State
	for _, e := range st.Failures {
		if e.Type == facts.EventJITFailed {
			ev := Ev(e)
			return &ev, true
		}
	}
	if m := idx.LiveMatches(jitRule.ID); len(m) > 0 {
		return &Evidence{Src: m[0].Src, Text: m[0].Text}, true
	}
	for _, m := range idx.Matches("", "nvcc-tool-killed") {
		if !m.AfterShutdown {
			return &Evidence{Src: m.Src, Text: m.Text}, true
		}
	}
	for _, k := range idx.Facts.Kernel {
		if (k.Type == facts.KernelOOMKill || k.Type == facts.KernelSegfault) && isCompilerName(k.Comm) {
			return &Evidence{Src: k.Src, Text: k.Text}, true
		}
	}
	if st.Ready != nil || st.Serving != nil {
		return nil, false
	}
	if t := compilersOf(idx.LatestProcs()); len(t.compilers) > 0 {
		ev := EvProc(t.compilers[0])
		return &ev, false
	}
	return nil, false
}

// buildMemory is the memory the build had, in KiB: the host's total, or the
// container's limit when that is lower.
func buildMemory(idx *Index) (int64, []Evidence, bool) {
	var kb int64
	var ev []Evidence
	for _, m := range idx.Facts.Memory {
		if v := int64(m.TotalKB.V); m.TotalKB.OK && v > 0 {
			kb = v
			ev = []Evidence{{Src: m.Src, Text: "MemTotal: " + derive.FormatKB(v)}}
		}
	}
	for _, c := range idx.Facts.Cmds {
		v, ok := c.Container["memory"]
		if !ok {
			continue
		}
		if lim := parseSizeKB(v); lim > 0 && (kb == 0 || lim < kb) {
			kb = lim
			ev = []Evidence{{Src: c.Src, Text: "the container's memory limit: " + v}}
		}
	}
	return kb, ev, kb > 0
}

// buildJobs is how many device compilations the build ran at once, and how
// that was decided.
func buildJobs(idx *Index) (jobs int, ev []Evidence, why string, explicit, ok bool) {
	threads := 1
	for _, name := range []string{"FLASHINFER_NVCC_THREADS", "NVCC_THREADS"} {
		if e, found := idx.Env(name); found {
			if n, err := strconv.Atoi(strings.TrimSpace(e.Value)); err == nil && n > 1 {
				threads = n
				ev = append(ev, Evidence{Src: e.Src, Text: name + "=" + e.Value})
				break
			}
		}
	}
	per := ""
	if threads > 1 {
		per = fmt.Sprintf(" of %d nvcc threads each", threads)
	}
	if e, found := idx.Env("MAX_JOBS"); found {
		if n, err := strconv.Atoi(strings.TrimSpace(e.Value)); err == nil && n > 0 {
			ev = append(ev, Evidence{Src: e.Src, Text: "MAX_JOBS=" + e.Value})
			return n * threads, ev, fmt.Sprintf("%d jobs%s (MAX_JOBS=%d)", n, per, n), true, true
		}
	}
	for _, r := range idx.Facts.Envs {
		n, err := strconv.Atoi(strings.TrimSpace(r.Versions["cpus"]))
		if err != nil || n <= 0 {
			continue
		}
		ev = append(ev, Evidence{Src: r.Where["cpus"], Text: fmt.Sprintf("CPU(s): %d", n)})
		j := ninjaDefaultJobs(n)
		return j * threads, ev, fmt.Sprintf("%d jobs%s (MAX_JOBS unset: ninja runs CPUs + 2 on %d CPUs)", j, per, n), false, true
	}
	return 0, nil, "", false, false
}

// ninjaDefaultJobs is ninja's parallelism without -j (GuessParallelism in
// ninja.cc): 2 on one CPU, 3 on two, the CPU count plus two above that.
func ninjaDefaultJobs(cpus int) int {
	switch {
	case cpus <= 1:
		return 2
	case cpus == 2:
		return 3
	}
	return cpus + 2
}
