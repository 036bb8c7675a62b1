package rules

import (
	"fmt"
	"sort"
	"strings"
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
shutdown noise: they are not reported as causes.

Versions: the bundle's engine and library versions (collect-env, check-env,
a package list, the engine's banner, NCCL's banner, the container image's
tag) are compared with the entry's. A message that the running version does
not print, or whose bug the running version has fixed, weighs less (a
lower confidence, and the check counts against its cause) and the message
says why; an entry with a known fix that the run predates says "fixed in
X; this run uses Y: upgrade" in its remedy.`,
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
	var running map[string]Running
	for _, sig := range order {
		if len(sig.affected) > 0 || sig.fix != nil {
			running = p.Index.Versions()
			break
		}
	}
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
		conf, remedy := sig.Confidence, sig.Remedy
		why := fmt.Sprintf("the error text at %s is a known signature of %s", first.Src, sig.Category)
		vv := judgeVersions(sig, running)
		if vv.Note != "" {
			msg += " " + vv.Note
		}
		if vv.Remedy != "" {
			remedy = strings.TrimSpace(vv.Remedy + " " + remedy)
		}
		if vv.Src != nil && len(ev) < 6 {
			r := vv.Src
			ev = append(ev, Evidence{Src: *r, Text: "the version this run uses"})
		}
		if vv.Against != "" {
			// The versions count against this reading: a lower declared
			// confidence, and a check against its cause, so that the
			// measured precision of the entry does not wash it out.
			conf = versionWeight * conf
			why += "; it weighs less: " + vv.Against
			p.ruledOut = append(p.ruledOut, RuledOut{Rule: p.Rule.ID, Category: sig.Category, Title: sig.Title,
				Why: capitalize(vv.Against) + ".", Evidence: ev[len(ev)-1:]})
		}
		phase := sig.Phase
		if phase == "" {
			phase = p.Index.matchPhase(first, "")
		}
		p.Report(Finding{
			Title:      sig.Title,
			Severity:   sig.Severity,
			Category:   sig.Category,
			Confidence: conf,
			Message:    msg,
			Remedy:     remedy,
			References: sig.References,
			Evidence:   ev,
			Outcome:    sig.Outcome,
			Phase:      phase,
			Cause:      true,
			Signature:  sig.ID,
			Why:        why,
		})
	}
}

// versionWeight scales the declared confidence of an entry whose versions
// do not fit the run.
const versionWeight = 0.5
