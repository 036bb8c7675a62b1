package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(collectiveRule) }

var collectiveRule = &Rule{
	ID:       "collective-hang",
	Title:    "a collective never completes: a rank stopped participating",
	Severity: SeverityError,
	Category: CatCollectiveHang,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog, facts.KindNvidiaSMIQ, facts.KindNvidiaSMIXML, facts.KindNvidiaSMICSV, facts.KindNvidiaSMITable},
	Doc: `Tensor-parallel ranks meet in collectives (all-reduce, all-gather,
broadcast). When one rank stops participating (it crashed, waits elsewhere,
or runs a kernel that never returns) the others wait in the collective until
the NCCL watchdog gives up (torch's default: 10 minutes) or forever.

Three signals, each naming the lagging rank:

- c10d watchdog lines: "Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=N, OpType=ALLREDUCE, ..., Timeout(ms)=600000)"; the rank
  whose last completed SeqNum is lowest is behind;
- ranks stopped at different phases: every rank logs the same milestones
  (Load weight begin/end, Capture cuda graph begin/end ...), so one rank still
  at an earlier milestone while its peers moved on is the one they wait for
  (bars drawn by rank 0 alone do not count);
- GPU utilization split: one GPU at 90-100% while its peers sit near 0% means
  one rank is in a kernel the others are not in.

When every rank reached the same milestone and every GPU shows the same
utilization, the hypothesis is ruled out with that evidence.`,
	References: []string{
		"https://pytorch.org/docs/stable/distributed.html#torch.distributed.init_process_group",
		"https://github.com/sgl-project/sglang/issues/3666",
	},
	Run: runCollective,
}

func runCollective(p *Pass) {
	idx, st := p.Index, &p.Index.State
	// 1. Watchdog timeouts.
	wd := idx.Events(facts.EventCollectiveTimout)
	if len(wd) == 0 {
		for _, m := range idx.Matches(p.Rule.ID) {
			if m.Event != nil && !m.AfterShutdown {
				wd = append(wd, m.Event)
			}
		}
	}
	if len(wd) > 0 {
		reportWatchdog(p, wd)
		return
	}
	if st.Ready != nil {
		return // phases matter during startup only
	}
	// 2. Ranks at different milestones.
	if lag, ahead, ok := laggingRank(idx); ok {
		ev := []Evidence{{Src: lag.ev.Src, Text: fmt.Sprintf("%s last milestone: %s", lag.key, lag.ev.Text)}}
		for i, a := range ahead {
			if i == 3 {
				break
			}
			ev = append(ev, Evidence{Src: a.ev.Src, Text: fmt.Sprintf("%s reached %s", a.key, a.phase)})
		}
		conf := 0.6
		if st.Silence > 0 && len(st.Alive) > 0 {
			conf = 0.75
		}
		p.Report(Finding{
			Message: fmt.Sprintf("Ranks stopped at different phases: %s is still in %s (%s) while %d peer(s) reached %s. The peers wait for it in the next collective.",
				lag.key, lag.phase, lag.ev.Src, len(ahead), ahead[0].phase),
			Remedy:     "Look at the lagging rank first: its py-spy stack (`py-spy dump --native --pid PID`), its GPU in `nvidia-smi`, and errors only it printed. Set NCCL_DEBUG=INFO and TORCH_NCCL_TRACE_BUFFER_SIZE to see which collective it misses.",
			Evidence:   ev,
			Confidence: conf,
			Cause:      true,
			Why:        fmt.Sprintf("%s is behind its peers", lag.key),
		})
		return
	}
	// A node whose server is gone is node-lost's: its idle GPUs are no
	// rank that lags, and the collective its peers wait in is not ruled out.
	if len(idx.State.NodesDown) > 0 {
		return
	}
	// 3. One GPU busy while its peers idle.
	if g := idx.LatestGPUs(); g != nil && len(g.GPUs) >= 2 {
		var busy, idle []*facts.GPU
		for _, x := range g.GPUs {
			if !x.UtilGPU.OK {
				continue
			}
			if x.UtilGPU.V >= 90 {
				busy = append(busy, x)
			} else if x.UtilGPU.V <= 10 {
				idle = append(idle, x)
			}
		}
		if len(busy) > 0 && len(idle) > 0 && len(busy) < len(g.GPUs)/2+1 && len(busy)+len(idle) == len(g.GPUs) {
			var ev []Evidence
			var names []string
			for _, b := range busy {
				names = append(names, fmt.Sprintf("GPU %d", b.Index))
				ev = append(ev, Evidence{Src: b.Src, Text: fmt.Sprintf("GPU %d at %.0f%%", b.Index, b.UtilGPU.V)})
			}
			for i, x := range idle {
				if i < 3 {
					ev = append(ev, Evidence{Src: x.Src, Text: fmt.Sprintf("GPU %d at %.0f%%", x.Index, x.UtilGPU.V)})
				}
			}
			p.Report(Finding{
				Message: fmt.Sprintf("%s at >= 90%% utilization while %d peer(s) sit near 0%% (%s): the rank on %s runs a kernel its peers are not in; they wait for it.",
					strings.Join(names, ", "), len(idle), g.Src, strings.Join(names, ", ")),
				Remedy:     "Dump the stack of the process on the busy GPU (`nvidia-smi` maps GPU to pid; `py-spy dump --native --pid PID`); NCCL_DEBUG=INFO shows which collective the others wait in.",
				Evidence:   ev,
				Confidence: 0.55,
				Cause:      true,
				Why:        "GPU utilization is split between one busy rank and idle peers",
			})
			return
		}
	}
	// Ruled out, with the evidence.
	var why []string
	var ev []Evidence
	if same, e, ok := sameMilestone(idx); ok {
		why = append(why, fmt.Sprintf("every rank (%d) logged the same last phase, %s (%s)", same, e.Text, e.Src))
		ev = append(ev, e)
	}
	if g := idx.LatestGPUs(); g != nil && len(g.GPUs) >= 2 {
		lo, hi := 101.0, -1.0
		for _, x := range g.GPUs {
			if x.UtilGPU.OK {
				lo, hi = min(lo, x.UtilGPU.V), max(hi, x.UtilGPU.V)
			}
		}
		if hi >= 0 && hi-lo <= 20 {
			why = append(why, fmt.Sprintf("every GPU shows the same utilization (%.0f-%.0f%%)", lo, hi))
			ev = append(ev, Evidence{Src: g.Src, Text: fmt.Sprintf("%d GPUs at %.0f-%.0f%%", len(g.GPUs), lo, hi)})
		}
	}
	if len(why) > 0 {
		p.RuleOut(strings.Join(why, " and ")+": no rank lags and no watchdog timeout was logged", ev...)
	}
}

func reportWatchdog(p *Pass, wd []*facts.LogEvent) {
	sort.SliceStable(wd, func(i, j int) bool { return wd[i].Src.Line < wd[j].Src.Line })
	first := wd[0]
	ranks := map[string]bool{}
	var ev []Evidence
	for i, e := range wd {
		ranks[e.Proc.Key()] = true
		if r := eventRank(e).String(); r != "" {
			ranks["rank "+r] = true
		}
		if i < 5 {
			ev = append(ev, Ev(e))
		}
	}
	detail := []string{}
	if c, ok := first.Data.(*facts.Collective); ok {
		for _, kv := range [][2]string{{"op_type", c.OpType}, {"seq_num", c.SeqNum.String()}, {"timeout_ms", c.TimeoutMs.String()},
			{"last_enqueued", c.LastEnqueued.String()}, {"last_completed", c.LastCompleted.String()}} {
			if kv[1] != "" {
				detail = append(detail, kv[0]+"="+kv[1])
			}
		}
	}
	msg := fmt.Sprintf("The NCCL watchdog timed out a collective at %s", first.Src)
	if len(detail) > 0 {
		msg += " (" + strings.Join(detail, ", ") + ")"
	}
	msg += fmt.Sprintf("; %d line(s) of watchdog timeout in all.", len(wd))
	if lag := lowestCompleted(wd); lag != "" {
		msg += " " + lag
	} else if silent := silentRanks(p.Index, wd); silent != "" {
		msg += " " + silent
	}
	// The collective that timed out ran in the phase the failure is placed
	// in (its rank's milestones, its peers' frames), not merely the run's.
	phase := p.Index.RunPhase()
	for _, l := range p.Index.Facts.Logs {
		if l.Path == first.Src.File {
			if pl := p.Index.PlaceFailure(l, first); pl.Phase != "" {
				phase = pl.Phase
			}
			break
		}
	}
	p.Report(Finding{
		Severity:   SeverityCritical,
		Message:    msg,
		Remedy:     "Find the rank that did not join: the one with the lowest last completed SeqNum, or the one that logged an error first. Re-run with NCCL_DEBUG=INFO, TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and TORCH_NCCL_DUMP_ON_TIMEOUT=1 to get the flight recorder.",
		Evidence:   ev,
		Confidence: 0.9,
		Outcome:    OutcomeCrashed,
		Phase:      phase,
		Cause:      true,
		Why:        "the NCCL watchdog says a collective never completed",
	})
}

// lowestCompleted names the rank with the lowest last completed work, when
// one rank alone has it: on a tie every reporting rank waits alike.
func lowestCompleted(wd []*facts.LogEvent) string {
	best, bestRank, ties := -1.0, "", 0
	seen := map[string]bool{}
	for _, e := range wd {
		c, ok := e.Data.(*facts.Collective)
		if !ok {
			continue
		}
		v, ok := c.LastCompleted.Get()
		if !ok {
			continue
		}
		name := e.Proc.Key()
		if r := c.Rank.String(); r != "" {
			name = "rank " + r
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		switch {
		case best < 0 || v < best:
			best, bestRank, ties = v, name, 1
		case v == best:
			ties++
		}
	}
	if bestRank == "" || ties > 1 {
		return ""
	}
	return fmt.Sprintf("%s completed the fewest collectives (last completed SeqNum %.0f): the others wait for it.", bestRank, best)
}

// silentRanks names the ranks of the group that logged no timeout: every
// rank that times out waits, so the one that did not is the likelier laggard.
func silentRanks(idx *Index, wd []*facts.LogEvent) string {
	n := tensorParallel(idx)
	if n < 2 {
		return ""
	}
	reported := map[string]bool{}
	for _, e := range wd {
		if r := eventRank(e).String(); r != "" {
			reported[r] = true
		}
	}
	if len(reported) == 0 || len(reported) >= n {
		return ""
	}
	var silent []string
	for r := 0; r < n; r++ {
		if !reported[fmt.Sprint(r)] {
			silent = append(silent, fmt.Sprint(r))
		}
	}
	who := "Rank " + silent[0]
	if len(silent) > 1 {
		who = "Ranks " + strings.Join(silent, ", ")
	}
	return fmt.Sprintf("%s logged no timeout: every rank that times out is one that waits, so the silent one is the likelier laggard.", who)
}

type rankMark struct {
	key   string
	phase Phase
	ev    Evidence
}

// rankMilestones returns, per tagged rank, the last phase it logged itself
// (ignoring bars, which rank 0 alone draws).
func rankMilestones(idx *Index) []rankMark {
	var out []rankMark
	for _, l := range idx.Facts.Logs {
		last := map[string]rankMark{}
		var order []string
		for _, e := range l.Events {
			if e.Proc.Name == "" || e.Proc.Rank.TP < 0 && !strings.Contains(e.Proc.Name, "TP") {
				continue
			}
			ph, ok := derive.PhaseOf[e.Type]
			if !ok || e.Type == facts.EventLoadProgress || e.Type == facts.EventGraphProgress {
				continue
			}
			k := e.Proc.Key()
			if _, seen := last[k]; !seen {
				order = append(order, k)
			}
			cur := last[k]
			if cur.phase == PhaseServing || cur.phase == PhaseShutdown {
				continue
			}
			if ph == PhaseKVCache && (cur.phase == PhaseCUDAGraphCapture || cur.phase == PhaseWarmup) {
				continue
			}
			last[k] = rankMark{key: k, phase: ph, ev: Ev(e)}
		}
		for _, k := range order {
			out = append(out, last[k])
		}
	}
	return out
}

// laggingRank finds one rank behind the others. Engines print some
// milestones on rank 0 only, so with two ranks a difference proves nothing;
// with three or more, a rank lags when every other rank got further.
func laggingRank(idx *Index) (rankMark, []rankMark, bool) {
	ms := rankMilestones(idx)
	if len(ms) < 3 {
		return rankMark{}, nil, false
	}
	count := map[Phase]int{}
	for _, m := range ms {
		count[m.phase]++
	}
	if len(count) < 2 {
		return rankMark{}, nil, false
	}
	// The majority phase is where the group is; a rank at an earlier phase lags.
	var major Phase
	for ph, n := range count {
		if n > count[major] || (n == count[major] && ph.Order() > major.Order()) {
			major = ph
		}
	}
	var lag *rankMark
	var ahead []rankMark
	for i := range ms {
		m := ms[i]
		if m.phase.Order() < major.Order() {
			if lag == nil || m.phase.Order() < lag.phase.Order() {
				lag = &ms[i]
			}
		} else {
			ahead = append(ahead, m)
		}
	}
	if lag == nil || len(ahead) == 0 || len(ahead) < len(ms)-1 {
		return rankMark{}, nil, false
	}
	return *lag, ahead, true
}

// sameMilestone reports that every tagged rank logged the same last phase.
func sameMilestone(idx *Index) (int, Evidence, bool) {
	ms := rankMilestones(idx)
	if len(ms) < 2 {
		return 0, Evidence{}, false
	}
	for _, m := range ms[1:] {
		if m.phase != ms[0].phase {
			return 0, Evidence{}, false
		}
	}
	last := ms[0]
	for _, m := range ms {
		if m.ev.Src.Line > last.ev.Src.Line {
			last = m
		}
	}
	return len(ms), Evidence{Src: last.ev.Src, Text: string(last.phase)}, true
}

// eventRank is the rank an event's line names: the watchdog's, NCCL's
// prefix, a failure's... Absent when its payload has no rank. The events
// of a watchdog timeout are collective-timeout lines, or any line a
// signature of the rule matched.
func eventRank(e *facts.LogEvent) facts.Num {
	switch d := e.Data.(type) {
	case *facts.Collective:
		return d.Rank
	case *facts.NCCL:
		return d.Rank
	case *facts.RankInfo:
		return d.Rank
	case *facts.Failure:
		return d.Rank
	case *facts.Gloo:
		return d.Rank
	case *facts.CodeSite:
		return d.Rank
	}
	return facts.Num{}
}
