package rules

import (
	"fmt"
	"sort"

	"github.com/coroner-dev/coroner/rules/derive"
)

func init() { Register(relayRule) }

var relayRule = &Rule{
	ID:       "relay",
	Title:    "a failure reported by another process, its cause logged elsewhere",
	Severity: SeverityInfo,
	Doc: `Engines relay their processes' deaths: vLLM's "Engine core initialization
failed. See root cause above", SGLang's "Scheduler hit an exception" and
"Received sigquit from a child process", TGI's "Shard 0 failed to start", a
Ray actor that "died unexpectedly". Such a line names no cause; it says
which process failed and where its own error is logged. The catalog marks
these messages as relays (relay: true in catalog/signatures.yaml); they
stay out of the matches other rules read.

The rule reports them only when nothing in the catalog explains the failure
(no exact signature or class of error that claims an outcome matched a live
line): then the relay is the best pointer to the lines to read.`,
	Run: runRelays,
}

func runRelays(p *Pass) {
	for _, m := range p.Index.SigMatches {
		if !m.AfterShutdown && (m.Sig.Outcome != "" || m.Sig.Layer == LayerClass) {
			return // a signature or a class already says what failed
		}
	}
	var relays []*Signature
	for _, s := range p.Index.Catalog {
		if s.Relay {
			relays = append(relays, s)
		}
	}
	if len(relays) == 0 {
		return
	}
	bySig := map[*Signature][]SigMatch{}
	var order []*Signature
	for _, m := range derive.MatchSignatures(p.Facts, relays) {
		if m.AfterShutdown {
			continue
		}
		if _, ok := bySig[m.Sig]; !ok {
			order = append(order, m.Sig)
		}
		bySig[m.Sig] = append(bySig[m.Sig], m)
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].ID < order[j].ID })
	for _, sig := range order {
		ms := bySig[sig]
		var ev []Evidence
		for i, m := range ms {
			if i == 3 {
				break
			}
			ev = append(ev, Evidence{Src: m.Src, Text: m.Text})
		}
		p.Report(Finding{
			Title:      sig.Title,
			Severity:   SeverityInfo,
			Message:    period(fmt.Sprintf("%q at %s (%d time(s)) reports a failure it does not explain: %s", sig.ID, ms[0].Src, len(ms), sig.Title)),
			Remedy:     sig.Remedy,
			References: sig.References,
			Evidence:   ev,
			Signature:  sig.ID,
		})
	}
}
