package rules

import (
	"fmt"
	"sort"
)

func init() { Register(signatureRule) }

var signatureRule = &Rule{
	ID:       "signature",
	Title:    "known error signature",
	Severity: SeverityError,
	Doc: `Matches the catalog of known error texts (catalog/signatures.yaml, and any
catalog passed with --rules) against the recognized log events, the exception
lines of tracebacks and the kernel log. Each signature is data: a pattern, the
cause category it means, a confidence, a remedy and references, with the
versions affected and fixed where known.

Signatures that another rule owns (GPU OOM, unsupported architecture, NCCL,
JIT builds, collective timeouts) are reported by that rule, which ties them to
the rest of the evidence; this rule reports the others as they are.

Lines that come after the server was told to stop (SIGTERM, Ctrl-C) are
shutdown noise: they are not reported as causes.`,
	Run: runSignatures,
}

func runSignatures(p *Pass) {
	bySig := map[*Signature][]SigMatch{}
	var order []*Signature
	for _, m := range p.Index.SigMatches {
		if m.Sig.Owner != "" || m.Sig.Layer == LayerClass || m.AfterShutdown {
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
		first := ms[0]
		var ev []Evidence
		for i, m := range ms {
			if i == 5 {
				break
			}
			ev = append(ev, Evidence{Src: m.Src, Text: m.Text})
		}
		msg := period(fmt.Sprintf("%q matched %d time(s), first at %s: %s", sig.ID, len(ms), first.Src, sig.Title))
		if sig.Affected != "" {
			msg += " Affected: " + sig.Affected + "."
		}
		if sig.Fixed != "" {
			msg += " Fixed in: " + sig.Fixed + "."
		}
		phase := sig.Phase
		if phase == "" {
			phase = p.Index.matchPhase(first, "")
		}
		p.Report(Finding{
			Title:      sig.Title,
			Severity:   sig.Severity,
			Category:   sig.Category,
			Confidence: sig.Confidence,
			Message:    msg,
			Remedy:     sig.Remedy,
			References: sig.References,
			Evidence:   ev,
			Outcome:    sig.Outcome,
			Phase:      phase,
			Cause:      true,
			Signature:  sig.ID,
			Why:        fmt.Sprintf("the error text at %s is a known signature of %s", first.Src, sig.Category),
		})
	}
}
