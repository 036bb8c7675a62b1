package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(jitRule) }

var jitRule = &Rule{
	ID:       "jit-compile",
	Title:    "kernel JIT compilation",
	Severity: SeverityWarning,
	Category: CatJITCompile,
	Needs:    []facts.Kind{facts.KindPS, facts.KindTop, facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Kernel libraries compile CUDA code at first use when no prebuilt kernel fits
the GPU: flashinfer and torch C++/CUDA extensions through ninja and nvcc
(nvcc runs cudafe++, cicc and ptxas), DeepGEMM through its own JIT, Triton
and torch.compile (Inductor) through ptxas in compile workers. On a new GPU
architecture or a cold cache this takes minutes to tens of minutes, prints
little or nothing, and looks like a hang.

The rule looks for compiler processes (ninja, nvcc, cicc, ptxas, cudafe++,
gcc/cc1plus, Inductor compile workers) descending from a server or Python
process in each process snapshot, and for JIT messages in the log that start
and never finish (flashinfer.jit "Loading JIT ops" without "Finished",
DeepGEMM's pre-compile session). GPUs at 0% utilization meanwhile mean the GPU
waits for the compiler. With two snapshots it judges progress: new compiler
pids or compiler CPU growing mean the build advances; the same pids with no
CPU growth mean it is stuck.

A failed build (ninja "build stopped: subcommand failed", a non-zero exit of
nvcc/ptxas, a segfaulting cicc in the kernel log, or the build's own output
quoted in an engine's error: a ninja step or a compiler's command line
logged at ERROR) is a crash with cause jit-compile.`,
	References: []string{
		"https://github.com/sgl-project/sglang/issues/3578",
		"https://github.com/sgl-project/sglang/issues/4007",
		"https://github.com/vllm-project/vllm/pull/54529",
	},
	Run: runJIT,
}

const jitFailedRemedy = "Read the compiler error above the failure. Common fixes: a CUDA toolkit that supports the GPU (12.8+ for SM120, 12.9+ for SM121) and is the one CUDA_HOME names (a single directory, not a list), clearing the JIT cache (~/.cache/flashinfer, ~/.triton/cache, ~/.cache/torch_extensions), lowering MAX_JOBS when the compiler was killed for memory, or installing prebuilt kernels (flashinfer-jit-cache, sgl-kernel for the GPU)."

func runJIT(p *Pass) {
	idx, st := p.Index, &p.Index.State

	// A failed build is a crash with cause jit-compile.
	if live := idx.LiveMatches(p.Rule.ID); len(live) > 0 {
		m := live[0]
		var ev []Evidence
		for i, x := range live {
			if i < 5 {
				ev = append(ev, Evidence{Src: x.Src, Text: x.Text})
			}
		}
		p.Report(Finding{
			Title:      "kernel JIT build failed",
			Severity:   SeverityCritical,
			Message:    period(fmt.Sprintf("A kernel JIT build failed at %s: %s", m.Src, m.Text)),
			Remedy:     jitFailedRemedy,
			Evidence:   ev,
			Confidence: m.Sig.Confidence,
			Outcome:    OutcomeCrashed,
			Phase:      idx.MatchPhase(m, ""),
			Cause:      true,
			Why:        "a compiler error ended the run: " + m.Text,
		})
		return
	}
	// A build the log reports failed in words no catalog entry holds
	// (ninja's "FAILED: x.o", a step or compiler command quoted in an
	// error): the parser's jit-failed events.
	var failed []*facts.LogEvent
	for _, e := range st.Failures {
		if e.Type == facts.EventJITFailed {
			failed = append(failed, e)
		}
	}
	if len(failed) > 0 {
		e := failed[0]
		var ev []Evidence
		for i, x := range failed {
			if i < 5 {
				ev = append(ev, Ev(x))
			}
		}
		p.Report(Finding{
			Title:      "kernel JIT build failed",
			Severity:   SeverityCritical,
			Message:    period(fmt.Sprintf("A kernel JIT build failed at %s: %s", e.Src, trimText(e.Msg, 200))),
			Remedy:     jitFailedRemedy,
			Evidence:   ev,
			Confidence: 0.75,
			Outcome:    OutcomeCrashed,
			Phase:      idx.PlaceFailure(logOf(idx, e), e).Phase,
			Cause:      true,
			Why:        "the build's own output is quoted in the error: " + trimText(e.Msg, 120),
		})
		return
	}
	for _, k := range idx.Facts.Kernel {
		if (k.Type == facts.KernelSegfault || k.Type == facts.KernelOOMKill) && isCompilerName(k.Comm) {
			what := "segfaulted"
			if k.Type == facts.KernelOOMKill {
				what = "was killed by the kernel's OOM killer"
			}
			p.Report(Finding{
				Title:      "a kernel compiler died: " + k.Comm,
				Severity:   SeverityCritical,
				Message:    fmt.Sprintf("The compiler %s (pid %d) %s (%s): the JIT build it served cannot finish.", k.Comm, k.PID, what, k.Src),
				Remedy:     "Lower the parallel build jobs (MAX_JOBS=1 or 2) so that the compilers fit in host memory, or install prebuilt kernels for the GPU so nothing is compiled at startup.",
				Evidence:   []Evidence{{Src: k.Src, Text: k.Text}},
				Confidence: 0.85,
				Outcome:    OutcomeCrashed,
				Cause:      true,
				Why:        fmt.Sprintf("the kernel log shows %s dying during the build", k.Comm),
			})
			return
		}
	}

	// Compilers alive under the server.
	snaps := idx.Rounds()
	var trees []compileTree
	for _, s := range snaps {
		if t := compilersOf(s); len(t.compilers) > 0 {
			trees = append(trees, t)
		}
	}
	latest := st.PS
	var cur *compileTree
	if latest != nil {
		if t := compilersOf(latest); len(t.compilers) > 0 {
			cur = &t
		}
	}
	openJIT := openJITEvents(idx)
	if cur == nil && len(openJIT) == 0 {
		if len(trees) > 0 && latest != nil {
			t := trees[len(trees)-1]
			p.RuleOut(fmt.Sprintf("compilers ran under the server at %s but none is alive in the latest snapshot (%s)", t.snap.Src, latest.Src),
				EvProc(t.compilers[0]))
		} else if latest != nil && st.Ready == nil {
			p.RuleOut(fmt.Sprintf("no compiler process (ninja, nvcc, cicc, ptxas) runs under the server in the latest process snapshot (%s)", latest.Src),
				Evidence{Src: latest.Src, Text: fmt.Sprintf("%d processes, none a compiler under a server process", len(latest.Procs)+latest.Omitted)})
		}
		return
	}

	var ev []Evidence
	var msg strings.Builder
	conf := 0.5
	progress := ""
	if cur != nil {
		conf = 0.75
		ev = append(ev, EvProc(cur.owner))
		names := map[string]int{}
		for i, c := range cur.compilers {
			names[compilerName(c)]++
			if i < 6 {
				ev = append(ev, EvProc(c))
			}
		}
		fmt.Fprintf(&msg, "%d compiler process(es) (%s) run under %s (pid %d) in the snapshot %s",
			len(cur.compilers), countList(names), titleOf(cur.owner), cur.owner.PID, cur.snap.Src)
		if oldest := oldestStart(cur.compilers); !oldest.IsZero() && !cur.snap.At.IsZero() {
			fmt.Fprintf(&msg, ", the oldest started %s before it", humanDuration(cur.snap.At.Sub(oldest)))
		}
		msg.WriteString(". ")
		progress = jitProgress(trees)
		if progress != "" {
			msg.WriteString(progress + " ")
		}
	}
	if len(openJIT) > 0 {
		e := openJIT[len(openJIT)-1]
		ev = append(ev, Ev(e))
		fmt.Fprintf(&msg, "The log shows a JIT build that started and never finished (%s: %s). ", e.Src, trimText(e.Msg, 120))
		if cur == nil {
			conf = 0.55
		} else {
			conf = 0.8
		}
	}
	if g := idx.LatestGPUs(); g != nil {
		idle, busy := gpuIdle(g)
		switch {
		case idle > 0 && busy == 0:
			fmt.Fprintf(&msg, "Every GPU is idle (%s): the GPUs wait for the compiler. ", g.Src)
			ev = append(ev, Evidence{Src: g.Src, Text: fmt.Sprintf("%d GPU(s) at <= 5%% utilization", idle)})
			conf += 0.1
		case busy > 0:
			fmt.Fprintf(&msg, "%d GPU(s) are busy (%s), so the compilers are not all the GPUs wait for. ", busy, g.Src)
			conf -= 0.2
		}
	}
	stuck := strings.HasPrefix(progress, "Stuck")
	outcome := OutcomeInProgress
	if stuck {
		outcome = OutcomeHung
	}
	if st.Ready != nil && !st.Failed() {
		// A build after the ready line (Triton autotuning a new shape) is a
		// latency spike, not a startup state.
		outcome = ""
	}
	title := "kernel JIT compilation in progress"
	if stuck {
		title = "kernel JIT compilation stuck"
	}
	p.Report(Finding{
		Title:      title,
		Message:    strings.TrimSpace(msg.String()),
		Remedy:     "Let it finish if it advances (new compiler pids, compiler CPU growing); the result is cached for the next start (~/.cache/flashinfer, ~/.cache/torch_extensions, ~/.triton/cache). To avoid it: install prebuilt kernels for this GPU (flashinfer-jit-cache, an sgl-kernel/vLLM wheel built for its architecture), pre-compile DeepGEMM with `python3 -m sglang.compile_deep_gemm`, and keep MAX_JOBS low enough for host memory.",
		Evidence:   ev,
		Confidence: min(conf, 0.9),
		Outcome:    outcome,
		Phase:      idx.RunPhase(),
		Cause:      true,
		Why:        "compilers run under the server while the log is silent",
	})
}

// openJITEvents returns JIT starts without a matching end, in log order.
func openJITEvents(idx *Index) []*facts.LogEvent {
	var out []*facts.LogEvent
	for _, l := range idx.Facts.Logs {
		open := map[string]*facts.LogEvent{}
		var order []string
		for _, e := range l.Events {
			key := e.Proc.Key() + "\x00" + jitWhat(e)
			switch e.Type {
			case facts.EventJITBegin:
				if _, ok := open[key]; !ok {
					order = append(order, key)
				}
				open[key] = e
			case facts.EventJITEnd, facts.EventJITFailed:
				delete(open, key)
				// An end without a name closes the process's latest start.
				if jitWhat(e) == "" {
					for k := range open {
						if strings.HasPrefix(k, e.Proc.Key()+"\x00") {
							delete(open, k)
						}
					}
				}
			}
		}
		for _, k := range order {
			if e, ok := open[k]; ok {
				out = append(out, e)
			}
		}
	}
	return out
}

// jitProgress compares the last two snapshots with compilers.
func jitProgress(trees []compileTree) string {
	if len(trees) < 2 {
		return ""
	}
	a, b := trees[len(trees)-2], trees[len(trees)-1]
	pids := map[int]*facts.Process{}
	for _, c := range a.compilers {
		pids[c.PID] = c
	}
	newPIDs := 0
	var grew time.Duration
	for _, c := range b.compilers {
		if old, ok := pids[c.PID]; ok {
			grew += c.CPUTime - old.CPUTime
		} else {
			newPIDs++
		}
	}
	span := ""
	if !a.snap.At.IsZero() && !b.snap.At.IsZero() {
		span = " in " + humanDuration(b.snap.At.Sub(a.snap.At))
	}
	switch {
	case newPIDs > 0:
		return fmt.Sprintf("Progressing: %d new compiler process(es) appeared between %s and %s%s.", newPIDs, a.snap.Src, b.snap.Src, span)
	case grew > time.Second:
		return fmt.Sprintf("Progressing: the compilers burned %s more CPU between %s and %s%s.", humanDuration(grew), a.snap.Src, b.snap.Src, span)
	}
	return fmt.Sprintf("Stuck: the same compiler processes and no CPU growth between %s and %s%s.", a.snap.Src, b.snap.Src, span)
}

// gpuIdle counts GPUs at <= 5% and >= 50% utilization.
func gpuIdle(s *facts.GPUSnapshot) (idle, busy int) {
	for _, g := range s.GPUs {
		if !g.UtilGPU.OK {
			continue
		}
		switch {
		case g.UtilGPU.V <= 5:
			idle++
		case g.UtilGPU.V >= 50:
			busy++
		}
	}
	return idle, busy
}

var compilerNames = []string{"cicc", "ptxas", "nvcc", "cudafe++", "ninja", "cc1plus", "cc1", "g++", "gcc", "nvlink", "fatbinary", "clang", "ld"}

func isCompilerName(s string) bool {
	s = strings.ToLower(s)
	for _, n := range compilerNames {
		if s == n || strings.HasSuffix(s, "/"+n) {
			return true
		}
	}
	return false
}

func compilerName(p *facts.Process) string {
	if p.Name != "" {
		return p.Name
	}
	if p.Comm != "" {
		return p.Comm
	}
	f := strings.Fields(p.Args)
	if len(f) == 0 {
		return "?"
	}
	i := strings.LastIndexByte(f[0], '/')
	return f[0][i+1:]
}

func oldestStart(ps []*facts.Process) time.Time {
	var t time.Time
	for _, p := range ps {
		if !p.Start.IsZero() && (t.IsZero() || p.Start.Before(t)) {
			t = p.Start
		}
	}
	return t
}

func titleOf(p *facts.Process) string {
	if p.RankTag != "" && p.Name != "" {
		return p.Name
	}
	t := p.Args
	if t == "" {
		t = p.Comm
	}
	return trimText(t, 60)
}

// jitWhat is what a JIT line builds (flashinfer, deepgemm, ...), "" for
// another line or one that does not say.
func jitWhat(e *facts.LogEvent) string {
	if d, ok := e.Data.(*facts.JIT); ok {
		return d.What
	}
	return ""
}
