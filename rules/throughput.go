package rules

import (
	"fmt"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
)

func init() { Register(throughputRule) }

var throughputRule = &Rule{
	ID:       "throughput",
	Title:    "generation throughput as the engine measured it",
	Severity: SeverityInfo,
	Category: CatThroughput,
	Needs:    []facts.Kind{facts.KindSGLangLog, facts.KindVLLMLog, facts.KindServerLog},
	Doc: `Reports the generation throughput the engine printed while serving, per
engine process (SGLang's scheduler "Decode batch ... gen throughput
(token/s)" lines, every 40 decode steps; vLLM's "Avg generation throughput"
lines, every 10 s), per batch size, with the speculative-decoding acceptance
when a drafter ran. It is a measurement, not a judgement: what a model should
reach on given GPUs is not knowable from one run. Compare runs with
` + "`coroner diff A B`" + `; the throughput-drop and cuda-graph-off rules judge from
evidence inside one run.

Throughput grows with the batch, so the figures are per number of running
requests. Single-stream tok/s is the median at one running request. Only
steady lines count: lines whose batch did not change since the previous one,
with no prefill and no idle gap in between. SGLang's first decode line after
an idle period includes the idle time (0.07 tok/s is typical), and vLLM's
interval that admits a request spends part of its time on the prompt;
neither measures decoding. When no steady line exists at a batch size, the
lines far below the rest (under half the median) are left out instead.
A log with more stat lines than a series keeps one by one (256) is kept in
buckets of several lines; the figures then average steady lines with the
others and are marked approximate.

The overall mean is over every stat line with work in it; it mixes batch
sizes and is only comparable between runs of the same load.`,
	References: []string{
		"https://docs.vllm.ai/en/latest/usage/metrics.html",
	},
	Run: runThroughput,
}

func runThroughput(p *Pass) {
	for _, s := range RuntimeOf(p.Index).Series {
		if s.Active == 0 {
			continue
		}
		var parts []string
		var ev []Evidence
		if ss := s.SingleStream(); ss != nil {
			parts = append(parts, fmt.Sprintf("single-stream %s tok/s (%s at 1 running request, %s-%s)",
				fmtRate(ss.Median), linesWord(ss), fmtRate(ss.Min), fmtRate(ss.Max)))
			ev = append(ev, Evidence{Src: ss.Src, Text: fmt.Sprintf("the line closest to the median at 1 running request: %s tok/s", fmtRate(ss.Median))})
		}
		var others []string
		for _, b := range topBatches(s.Batches, 4) {
			others = append(others, fmt.Sprintf("%d: %s", b.Batch, fmtRate(b.Median)))
		}
		if len(others) > 0 {
			parts = append(parts, "tok/s by running requests "+strings.Join(others, ", "))
		}
		parts = append(parts, fmt.Sprintf("mean %s tok/s over %d stat lines with work", fmtRate(s.Mean), s.Active))
		if s.Peak > 0 {
			parts = append(parts, fmt.Sprintf("peak %s tok/s", fmtRate(s.Peak)))
		}
		if s.Compacted {
			parts = append(parts, fmt.Sprintf("figures approximate: the %d stat lines are kept in buckets of %d, which average idle and prefill lines with steady ones", s.Series.Count, s.Series.PerBucket))
		}
		if a := s.Accept; a != nil {
			parts = append(parts, "speculative decoding: "+acceptWords(a))
			ev = append(ev, Evidence{Src: a.Last, Text: "last speculative-decoding line: " + a.LastText})
		}
		span := ""
		if s.First != nil && !s.First.Start.IsZero() && !s.Last.End.IsZero() {
			span = fmt.Sprintf(" from %s to %s", facts.FormatTime(s.First.Start.UTC(), "2006-01-02 15:04:05", p.Facts.YearUnknown()), s.Last.End.UTC().Format("15:04:05"))
		}
		ev = append([]Evidence{{Src: s.First.Src, Text: "first stat line with work: " + PointText(s.First)}}, ev...)
		if s.Last != s.First {
			ev = append(ev, Evidence{Src: s.Last.Src, Text: "last stat line with work: " + PointText(s.Last)})
		}
		p.Report(Finding{
			Title:      fmt.Sprintf("%s %s: %s", engineName(s.Engine), s.Name, headline(s)),
			Message:    fmt.Sprintf("%s %s%s: %s.", engineName(s.Engine), s.Name, span, strings.Join(parts, "; ")),
			Evidence:   ev,
			Confidence: 1,
		})
	}
}

// topBatches returns up to n batch sizes above 1 with the most lines, in
// batch order.
func topBatches(bs []BatchRate, n int) []BatchRate {
	var cand []BatchRate
	for _, b := range bs {
		if b.Batch > 1 {
			cand = append(cand, b)
		}
	}
	if len(cand) <= n {
		return cand
	}
	keep := append([]BatchRate(nil), cand...)
	// Most lines first, then the smaller batch: the sizes the run spent its
	// time at.
	for i := 1; i < len(keep); i++ {
		for j := i; j > 0 && (keep[j].N > keep[j-1].N || (keep[j].N == keep[j-1].N && keep[j].Batch < keep[j-1].Batch)); j-- {
			keep[j], keep[j-1] = keep[j-1], keep[j]
		}
	}
	keep = keep[:n]
	for i := 1; i < len(keep); i++ {
		for j := i; j > 0 && keep[j].Batch < keep[j-1].Batch; j-- {
			keep[j], keep[j-1] = keep[j-1], keep[j]
		}
	}
	return keep
}

func linesWord(b *BatchRate) string {
	w := "steady stat lines"
	if !b.Steady {
		w = "stat lines"
	}
	if b.N == 1 {
		w = strings.TrimSuffix(w, "s")
	}
	return fmt.Sprintf("median of %d %s", b.N, w)
}

// acceptWords describes a drafter's acceptance in one phrase.
func acceptWords(a *Acceptance) string {
	var parts []string
	if a.Len > 0 {
		parts = append(parts, fmt.Sprintf("mean accept length %.2f", a.Len))
	}
	if a.Rate >= 0 {
		parts = append(parts, fmt.Sprintf("acceptance rate %.0f%%", a.Rate*100))
	}
	s := strings.Join(parts, ", ")
	var who []string
	if a.Algorithm != "" {
		who = append(who, a.Algorithm)
	}
	if a.DraftTokens > 0 {
		who = append(who, fmt.Sprintf("%d drafted per step", a.DraftTokens))
	}
	if len(who) > 0 {
		s += " (" + strings.Join(who, ", ") + ")"
	}
	return fmt.Sprintf("%s over %d stat lines", s, a.N)
}
