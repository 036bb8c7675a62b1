package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
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
		if len(sig.AffectedRange()) > 0 || sig.FixedIn() != nil {
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
			phase = p.Index.MatchPhase(first, "")
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

// versionVerdict is what the versions say of one catalog match.
type versionVerdict struct {
	// Against is set when the running version makes the entry unlikely:
	// outside the versions that print the message, or past its fix.
	Against string
	// Note is a sentence for the message; Remedy a sentence to put before
	// the entry's remedy.
	Note, Remedy string
	Src          *facts.Source
}

// judgeVersions compares an entry's versions with the running ones.
func judgeVersions(s *Signature, run map[string]Running) versionVerdict {
	var vv versionVerdict
	for _, c := range s.AffectedRange() {
		r, ok := run[c.Package]
		if !ok {
			continue
		}
		src := r.Src
		if c.Contains(r.Version) {
			vv.Note = fmt.Sprintf("This run uses %s %s (%s), which prints this message (%s).", c.Package, r.Version, r.From, c.Text)
			vv.Src = &src
			vv.Against = ""
			break
		}
		vv.Against = fmt.Sprintf("this run uses %s %s (%s, %s), outside the versions that print this message (%s)", c.Package, r.Version, r.From, r.Src, c.Text)
		vv.Note = capitalize(vv.Against) + ": the line may come from another installation than the one reported, or the version reading is wrong."
		vv.Src = &src
	}
	if s.FixedIn() == nil {
		return vv
	}
	fx := *s.FixedIn()
	r, ok := run[fx.Package]
	switch {
	case !ok:
		vv.Remedy = fmt.Sprintf("Fixed in %s; the bundle shows no %s version: upgrade if this run uses an older one.", fx, fx.Package)
	case r.Version.Compare(fx.Version) < 0:
		vv.Remedy = fmt.Sprintf("Fixed in %s; this run uses %s %s: upgrade.", fx, fx.Package, r.Version)
		vv.Note = strings.TrimSpace(vv.Note + " " + fmt.Sprintf("Fixed in %s; this run uses %s %s (%s, %s), which predates the fix.", fx, fx.Package, r.Version, r.From, r.Src))
		src := r.Src
		vv.Src = &src
	default:
		why := fmt.Sprintf("fixed in %s; this run uses %s %s (%s, %s), which has the fix", fx, fx.Package, r.Version, r.From, r.Src)
		if vv.Against == "" {
			vv.Against = why
		} else {
			vv.Against += "; " + why
		}
		vv.Note = strings.TrimSpace(vv.Note + " " + capitalize(why) + ": the cause is likely another, or a case the fix does not cover.")
		src := r.Src
		vv.Src = &src
	}
	return vv
}
