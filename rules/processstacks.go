package rules

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(processStacksRule) }

var processStacksRule = &Rule{
	ID:       "process-stacks",
	Title:    "where each process is, by its stack",
	Severity: SeverityWarning,
	Category: CatCollectiveHang,
	Needs:    []facts.Kind{facts.KindPySpy},
	Doc: `A py-spy dump says where each process is at one instant; the waits
section of catalog/frames.yaml says what its main thread's stack means: a
collective or a peer's answer (torch.distributed, NCCL, Gloo, vLLM's RPC to
its workers), a kernel that has not finished (a stream synchronize), a
kernel build (Triton, Inductor, ninja, the JIT of FlashInfer and DeepGEMM),
weights being read, or the idle loop between steps.

- The same process dumped twice, at least 10 s apart, with its main thread
  at the same line of the same wait: it is parked there, a hang, in the
  phase its frames place it.
- Ranks split between a collective and something else: the ranks in the
  collective wait for the others; the rank elsewhere is the one to look at.
  One dump of a busy server can catch such a split in passing, so on its
  own this names the lagging rank without claiming a hang.
- A process compiling or reading weights is busy, not hung: the run is in
  progress there.
- Every process idle in its loop: nothing waits in a collective (the
  collective-hang hypothesis is ruled out with it).

A dump that py-spy could not take (permission denied, the process gone) is
reported as missing evidence.`,
	References: []string{
		"https://github.com/benfred/py-spy#how-does-py-spy-work",
		"https://pytorch.org/docs/stable/distributed.html",
	},
	Run: runProcessStacks,
}

// procStack is the main thread of one process in one dump.
type procStack struct {
	pid   int
	st    *facts.PyStack
	wait  Wait
	at    string
	when  time.Time
	phase Phase
}

// rankTitleRe finds the rank a process title carries ("sglang::scheduler_TP0",
// "VLLM::Worker_TP1", "ray::RayWorkerWrapper").
var rankTitleRe = regexp.MustCompile(`(?:sglang::|VLLM::|ray::)(\S+)`)

func runProcessStacks(p *Pass) {
	idx := p.Index
	for _, s := range idx.Facts.Stacks {
		if s.Error != "" {
			p.Missing(fmt.Sprintf("py-spy dump --native --pid %d as root (or with CAP_SYS_PTRACE in a container)", s.PID),
				fmt.Sprintf("the stack of pid %d (py-spy: %s, %s)", s.PID, trimText(s.Error, 120), s.Src))
			break
		}
	}
	stacks := mainThreads(idx)
	if len(stacks) == 0 {
		return
	}
	// The latest dump of each process, and whether it stayed put.
	latest := map[int]procStack{}
	var parked []struct{ first, last procStack }
	byPID := map[int][]procStack{}
	for _, s := range stacks {
		byPID[s.pid] = append(byPID[s.pid], s)
	}
	pids := make([]int, 0, len(byPID))
	for pid := range byPID {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	for _, pid := range pids {
		list := byPID[pid]
		latest[pid] = list[len(list)-1]
		first, last := list[0], list[len(list)-1]
		if len(list) >= 2 && (last.wait == WaitCollective || last.wait == WaitGPU) && sameTop(first.st, last.st) &&
			!first.when.IsZero() && last.when.Sub(first.when) >= 10*time.Second {
			parked = append(parked, struct{ first, last procStack }{first, last})
		}
	}
	if len(parked) > 0 {
		reportParked(p, parked)
	}
	var coll, gpu, compile, load, idle, other []procStack
	for _, pid := range pids {
		s := latest[pid]
		switch s.wait {
		case WaitCollective:
			coll = append(coll, s)
		case WaitGPU:
			gpu = append(gpu, s)
		case WaitCompile:
			compile = append(compile, s)
		case WaitLoad:
			load = append(load, s)
		case WaitIdle:
			idle = append(idle, s)
		default:
			other = append(other, s)
		}
	}
	if len(compile) > 0 && idx.State.Ready == nil {
		s := compile[0]
		p.Report(Finding{
			Title:      "a process is compiling kernels",
			Category:   CatJITCompile,
			Message:    fmt.Sprintf("%s is compiling at %s (%s): the run is busy building kernels, not hung; a first build on a new GPU or after an upgrade takes minutes.", s.label(), s.at, s.st.Src),
			Evidence:   stackEvidence(compile),
			Outcome:    OutcomeInProgress,
			Phase:      s.phase,
			Confidence: 0.5,
			Cause:      true,
			Why:        "its stack is in a compiler",
			Remedy:     "Let it finish (the result is cached for the next start); if it repeats at every start, check that the cache directory (~/.cache, TRITON_CACHE_DIR, FLASHINFER_WORKSPACE_BASE) is writable and kept.",
		})
	}
	if len(load) > 0 && idx.State.Ready == nil {
		s := load[0]
		p.Report(Finding{
			Title:      "a process is reading weights",
			Message:    fmt.Sprintf("%s is reading weights at %s (%s): the run is loading, not hung.", s.label(), s.at, s.st.Src),
			Evidence:   stackEvidence(load),
			Outcome:    OutcomeInProgress,
			Phase:      PhaseWeightsLoading,
			Confidence: 0.5,
		})
	}
	busyElsewhere := append(append(append([]procStack{}, gpu...), compile...), load...)
	busyElsewhere = append(busyElsewhere, other...)
	if len(coll) > 0 && len(busyElsewhere) > 0 {
		lag := busyElsewhere[0]
		msg := fmt.Sprintf("%d process(es) wait in a collective (%s at %s) while %s is elsewhere: %s (%s). The ranks in the collective wait for it.",
			len(coll), coll[0].label(), coll[0].at, lag.label(), orDefault(lag.at, "frames the waits do not know"), lag.st.Src)
		if len(parked) == 0 {
			msg += " One dump can catch this in passing on a busy server; two dumps a minute apart tell a hang from a step in progress."
		}
		p.Report(Finding{
			Title:      "ranks split between a collective and elsewhere",
			Message:    msg,
			Evidence:   stackEvidence(append([]procStack{lag}, coll...)),
			Confidence: 0.45,
			Cause:      true,
			Why:        "some processes wait in a collective while another is elsewhere",
			Remedy:     "Look at " + lag.label() + " first: what it waits for (its native frames with py-spy dump --native) decides whether it is a slow kernel, a stuck one, or a rank in another collective.",
		})
		return
	}
	if len(coll) == 0 && len(idle) > 0 && len(idle) == len(pids) {
		p.RuleOut(fmt.Sprintf("every dumped process (%d) is idle in its loop, none in a collective (%s)", len(idle), idle[0].st.Src), stackEvidence(idle)...)
	}
}

// reportParked reports processes found at the same wait in two dumps.
func reportParked(p *Pass, parked []struct{ first, last procStack }) {
	x := parked[0]
	waited := x.last.when.Sub(x.first.when).Round(time.Second)
	var ev []Evidence
	for i, pk := range parked {
		if i == 4 {
			break
		}
		ev = append(ev, Evidence{Src: pk.first.st.Src, Text: pk.first.label() + ": " + pk.first.at},
			Evidence{Src: pk.last.st.Src, Text: fmt.Sprintf("%s, %s later: %s", pk.last.label(), pk.last.when.Sub(pk.first.when).Round(time.Second), pk.last.at)})
	}
	what, cat := "a collective that does not complete", CatCollectiveHang
	if x.last.wait == WaitGPU {
		what, cat = "a GPU kernel that does not finish", CatKernelBug
	}
	p.Report(Finding{
		Title:      "a process is parked in " + what,
		Category:   cat,
		Message:    fmt.Sprintf("%s is at the same line, %s, in two dumps %s apart (%s, %s): it waits for %s. %d process(es) are parked like this.", x.last.label(), x.last.at, waited, x.first.st.Src, x.last.st.Src, what, len(parked)),
		Evidence:   ev,
		Outcome:    OutcomeHung,
		Phase:      x.last.phase,
		Confidence: 0.7,
		Cause:      true,
		Why:        "the same wait in two dumps taken apart",
		Remedy:     "Dump every rank with py-spy dump --native: a rank that is not in the same collective is the one the others wait for; a kernel that never returns shows in its native frames (cudaStreamSynchronize). NCCL_DEBUG=INFO and TORCH_NCCL_DUMP_ON_TIMEOUT=1 name the collective.",
	})
}

// mainThreads returns the main thread of each process of each dump, in
// capture order (unstamped dumps in bundle order).
func mainThreads(idx *Index) []procStack {
	type key struct {
		file string
		pid  int
	}
	chosen := map[key]*facts.PyStack{}
	var order []key
	for _, s := range idx.Facts.Stacks {
		if s.Error != "" {
			continue
		}
		k := key{s.Src.File, s.PID}
		cur, ok := chosen[k]
		if !ok {
			order = append(order, k)
		}
		switch {
		case !ok:
			chosen[k] = s
		case s.Thread == "MainThread" && cur.Thread != "MainThread":
			chosen[k] = s
		case cur.Thread != "MainThread" && cur.Idle && !s.Idle && len(s.Frames) > 0:
			chosen[k] = s
		}
	}
	var out []procStack
	for _, k := range order {
		s := chosen[k]
		w, at, _ := idx.Frames.StackWait(s.Frames, s.Native)
		ps := procStack{pid: s.PID, st: s, wait: w, at: at}
		if src := idx.Facts.Source(s.Src.File); src != nil {
			ps.when = src.CapturedAt
		}
		outer := make([]facts.Frame, len(s.Frames))
		for i, f := range s.Frames {
			outer[len(s.Frames)-1-i] = f
		}
		if ph, _, ok := idx.Frames.TracebackPhase(&facts.Traceback{Frames: outer}); ok {
			ps.phase = ph
		}
		out = append(out, ps)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].when, out[j].when
		return !a.IsZero() && !b.IsZero() && a.Before(b)
	})
	return out
}

// sameTop reports two stacks whose innermost Python frame is the same line.
func sameTop(a, b *facts.PyStack) bool {
	if len(a.Frames) == 0 || len(b.Frames) == 0 {
		return false
	}
	x, y := a.Frames[0], b.Frames[0]
	return x.Func == y.Func && x.Line == y.Line && path.Base(x.File) == path.Base(y.File)
}

func stackEvidence(list []procStack) []Evidence {
	var ev []Evidence
	for i, s := range list {
		if i == 4 {
			break
		}
		text := s.label() + ": "
		if s.at != "" {
			text += string(s.wait) + " at " + s.at
		} else if len(s.st.Frames) > 0 {
			f := s.st.Frames[0]
			text += fmt.Sprintf("%s (%s:%d)", f.Func, path.Base(f.File), f.Line)
		} else {
			text += strings.Join(s.st.Native[:min(len(s.st.Native), 1)], "")
		}
		ev = append(ev, Evidence{Src: s.st.Src, Text: text})
	}
	return ev
}
