package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(servingHangRule) }

var servingHangRule = &Rule{
	ID:       "serving-hang",
	Title:    "hung while serving: requests in flight, no tokens",
	Severity: SeverityError,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `A server that came up can still hang: a rank stops participating in a
collective, a worker dies without the engine noticing, a kernel spins. The
engine keeps its requests and produces nothing. The rule reads that from the
stat lines after the server was ready:

- three or more stat lines in a row, over at least 20 s, with requests
  running or waiting and no tokens at all (vLLM "Running: 4 reqs" with
  "Avg generation throughput: 0.0 tokens/s" and no prompt throughput);
- the last stat line shows requests in flight and no tokens (vLLM), or
  requests waiting in the queue (SGLang), and no stat line follows for two
  (vLLM) or five (SGLang) minutes while the server is alive: in a later
  process snapshot, or because the log goes on with other lines (health
  checks). An idle engine stops printing stat lines (vLLM logs an all-zero
  interval at DEBUG level; SGLang only prints while decoding), so silence
  alone is no hang, but silence with work outstanding is;
- vLLM's engine waits on its workers ("No available shared memory broadcast
  block found in 60 seconds") twice or more after the server was ready, and
  no stat line with tokens follows the first wait. During startup these waits
  are compilation and are harmless; while serving they are the classic
  signature of a stuck rank.

Stat lines after a shutdown request are draining, not hanging, and are left
out.`,
	References: []string{
		"https://github.com/vllm-project/vllm/issues/27313",
		"https://github.com/vllm-project/vllm/issues/39863",
	},
	Run: runServingHang,
}

// quietLimit is how long a log may stay silent with work outstanding.
func quietLimit(e facts.Engine) time.Duration {
	if e == facts.EngineSGLang {
		return 5 * time.Minute
	}
	return 2 * time.Minute
}

func runServingHang(p *Pass) {
	idx, st := p.Index, &p.Index.State
	if st.Ready == nil || st.Failed() {
		return
	}
	var why []string
	var ev []Evidence
	var stalled time.Duration
	conf := 0.0
	for _, s := range RuntimeOf(idx).Series {
		pts := pointsBeforeShutdown(st, s)
		if len(pts) == 0 {
			continue
		}
		if run := zeroRun(pts); run != nil {
			first, last := run[0], run[len(run)-1]
			why = append(why, fmt.Sprintf("%s %s printed %d stat lines in a row with %s and no tokens, from %s to %s",
				engineName(s.Engine), s.Name, len(run), inFlight(first), stamp(first, p.Facts.YearUnknown()), last.End.UTC().Format("15:04:05")))
			ev = append(ev, Evidence{Src: first.Src, Text: fmt.Sprintf("%s, 0.0 tokens/s", inFlight(first))},
				Evidence{Src: last.Src, Text: fmt.Sprintf("%s, 0.0 tokens/s", inFlight(last))})
			stalled = max(stalled, last.End.Sub(first.Start))
			conf = max(conf, 0.8)
		}
		last := pts[len(pts)-1]
		if !outstanding(s.Engine, last) || last.End.IsZero() || laterStats(s, last) {
			continue
		}
		end := s.Log.LastTime
		if idx.Latest.After(end) {
			end = idx.Latest
		}
		quiet := end.Sub(last.End)
		alive := ""
		switch {
		case st.PS != nil && !st.PS.At.Before(last.End) && len(st.Alive) > 0:
			alive = fmt.Sprintf("up to the process snapshot %s, in which %d server process(es) are alive", st.PS.Src, len(st.Alive))
		case st.PS != nil && !st.PS.At.Before(last.End):
			continue // gone: a crash, not a hang
		case s.Log.LastTime.Sub(last.End) >= quietLimit(s.Engine):
			alive = fmt.Sprintf("while the log goes on with other lines up to %s", s.Log.LastSrc)
		}
		switch {
		case quiet < quietLimit(s.Engine):
		case alive == "":
			p.Missing("a process snapshot taken after the log's last line (`coroner collect`), to tell a hung engine from a dead one",
				fmt.Sprintf("evidence later than %s, whose last stat line (%s) shows %s", s.Log.Path, last.Src, inFlight(last)))
		default:
			why = append(why, fmt.Sprintf("the last stat line of %s %s (%s) shows %s, and no stat line follows for %s, %s",
				engineName(s.Engine), s.Name, last.Src, inFlight(last), humanDuration(quiet), alive))
			ev = append(ev, Evidence{Src: last.Src, Text: inFlight(last) + fmt.Sprintf(", %s tokens/s", fmtRate(last.Rate))})
			for i, w := range st.Workers {
				if i == 2 {
					break
				}
				ev = append(ev, EvProc(w))
			}
			stalled = max(stalled, quiet)
			conf = max(conf, 0.8)
		}
	}
	if waits := shmWaitsWhileServing(idx); len(waits) >= 2 {
		why = append(why, fmt.Sprintf("the engine waited on its workers %d times after the server was ready (\"No available shared memory broadcast block found\", first at %s) with no tokens made after the first wait",
			len(waits), waits[0].Src))
		ev = append(ev, Ev(waits[0]), Ev(waits[len(waits)-1]))
		if !waits[0].Time.IsZero() && !idx.Latest.IsZero() {
			stalled = max(stalled, idx.Latest.Sub(waits[0].Time))
		}
		conf = max(conf, 0.7)
	}
	if len(why) == 0 {
		return
	}
	p.Report(Finding{
		Message:    "Hung while serving: " + strings.Join(why, "; ") + ". Requests are in flight and the engine makes no tokens.",
		Evidence:   ev,
		Outcome:    OutcomeHung,
		Phase:      PhaseServing,
		Stalled:    stalled,
		Confidence: conf,
		Remedy: "Before restarting, take stacks of every engine and worker process (`py-spy dump --native --pid PID`) and `nvidia-smi` (one GPU at 100% while the others idle points at the rank the rest wait for); " +
			"rerun with NCCL_DEBUG=INFO and, for vLLM, VLLM_LOGGING_LEVEL=DEBUG. A worker that died silently, a broken P2P path (try NCCL_P2P_DISABLE=1 or --disable-custom-all-reduce) and a kernel that never returns are the usual causes.",
	})
}

// laterStats reports another stat line of the same process after pt (an
// SGLang prefill): the engine is still scheduling.
func laterStats(s *RuntimeSeries, pt *RatePoint) bool {
	for _, x := range s.Log.Series {
		if x != s.Series && x.Stream != "prefix-cache" && x.Proc.Key() == s.Series.Proc.Key() && isStatType(x.Type) && x.Last != nil && x.Last.Src.Line > pt.Src.Line {
			return true
		}
	}
	return false
}

func isStatType(t facts.EventType) bool {
	return t == facts.EventStatDecode || t == facts.EventStatPrefill || t == facts.EventStatThroughput
}

// pointsBeforeShutdown returns the series' points written before the first
// stop request of their log.
func pointsBeforeShutdown(st *State, s *RuntimeSeries) []*RatePoint {
	stop := 0
	if st.Shutdown != nil && st.Shutdown.Src.File == s.Log.Path {
		stop = st.Shutdown.Src.Line
	}
	var out []*RatePoint
	for i := range s.Points {
		pt := &s.Points[i]
		if stop > 0 && pt.Src.Line > stop {
			break
		}
		if st.Ready != nil && st.Ready.Src.File == s.Log.Path && pt.Src.Line < st.Ready.Src.Line {
			continue
		}
		out = append(out, pt)
	}
	return out
}

// zeroRun returns the longest run of three or more consecutive stat lines,
// over at least 20 s, with requests in flight and no tokens at all.
func zeroRun(pts []*RatePoint) []*RatePoint {
	var best, cur []*RatePoint
	for _, pt := range pts {
		if (pt.Batch > 0 || pt.Queue > 0) && pt.Rate == 0 && pt.Prompt == 0 {
			cur = append(cur, pt)
			if len(cur) > len(best) {
				best = cur
			}
			continue
		}
		cur = nil
	}
	if len(best) < 3 || best[0].Start.IsZero() || best[len(best)-1].End.Sub(best[0].Start) < 20*time.Second {
		return nil
	}
	return best
}

// outstanding reports a last stat line that leaves work the engine must
// still log: vLLM requests with no tokens in the interval, SGLang requests
// waiting in the queue.
func outstanding(e facts.Engine, pt *RatePoint) bool {
	if e == facts.EngineSGLang {
		return pt.Queue > 0 && pt.Batch != 0
	}
	return (pt.Batch > 0 || pt.Queue > 0) && pt.Rate == 0 && pt.Prompt == 0
}

// shmWaitsWhileServing returns vLLM's shared-memory broadcast waits written
// after the ready line of their log when no stat line with tokens follows
// the first of them.
func shmWaitsWhileServing(idx *Index) []*facts.LogEvent {
	st := &idx.State
	for _, l := range idx.Facts.Logs {
		if st.Ready == nil || st.Ready.Src.File != l.Path {
			continue
		}
		var waits []*facts.LogEvent
		for _, e := range l.EventsOf(facts.EventSHMWait) {
			if e.Src.Line > st.Ready.Src.Line && (st.Shutdown == nil || st.Shutdown.Src.File != l.Path || e.Src.Line < st.Shutdown.Src.Line) {
				waits = append(waits, e)
			}
		}
		if len(waits) == 0 {
			continue
		}
		for _, s := range l.Series {
			if !derive.IsRateSeries(s) {
				continue
			}
			for _, b := range s.Buckets {
				if a := derive.AggOf(b, "gen_throughput"); a != nil && a.Max > 0 && b.Src.Line > waits[0].Src.Line {
					return nil
				}
			}
		}
		return waits
	}
	return nil
}
