// Package rules holds the rule engine, the registry, the verdict and the
// rules themselves, one file per rule named after its ID; what the rules
// read besides the facts is computed once by package derive.
//
// A rule is a value with metadata as data (Rule). Rules read facts and the
// derived Index only: no file system, no clock, no globals. Each reports
// findings that cite evidence, or says which evidence it misses.
package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules/derive"
)

// Rule is one check. Its metadata is data so that `coroner rules list`,
// `rules explain` and the report read the same text.
type Rule struct {
	// ID is stable, kebab-case; findings, fixtures and suppressions use it.
	ID string
	// Title is one line, lower case start, no period.
	Title string
	// Doc explains what the rule looks at, why that means what it says, and
	// its thresholds. Markdown.
	Doc      string
	Severity Severity
	Category Category
	// Needs lists the evidence kinds the rule reads; it runs when any is
	// present and reports itself inconclusive otherwise.
	Needs []facts.Kind
	// References are upstream issues, PRs and docs.
	References []string
	// Run inspects the facts and reports through the pass.
	Run func(p *Pass)
	// Builtin is false for rules loaded from a user pack.
	Builtin bool
}

// Validate rejects a malformed rule.
func (r *Rule) Validate() error {
	var errs []string
	if !derive.ValidID(r.ID) {
		errs = append(errs, fmt.Sprintf("id %q is not kebab-case", r.ID))
	}
	if strings.TrimSpace(r.Title) == "" {
		errs = append(errs, "empty title")
	}
	if strings.TrimSpace(r.Doc) == "" {
		errs = append(errs, "empty doc")
	}
	if r.Severity.Rank() < 0 {
		errs = append(errs, fmt.Sprintf("unknown severity %q", r.Severity))
	}
	if r.Category != "" && !r.Category.Valid() {
		errs = append(errs, fmt.Sprintf("category %q is not in the taxonomy", r.Category))
	}
	if r.Run == nil {
		errs = append(errs, "no Run")
	}
	if len(errs) > 0 {
		return fmt.Errorf("rule %s: %s", r.ID, strings.Join(errs, "; "))
	}
	return nil
}

// Finding is what a rule reports.
type Finding struct {
	Rule       string     `json:"rule"`
	Title      string     `json:"title"`
	Severity   Severity   `json:"severity"`
	Category   Category   `json:"category"`
	Confidence float64    `json:"confidence"`
	Message    string     `json:"message"`
	Remedy     string     `json:"remedy"`
	References []string   `json:"references"`
	Evidence   []Evidence `json:"evidence"`
	// Outcome and Phase are the finding's claim on the verdict, if any.
	Outcome Outcome `json:"-"`
	Phase   Phase   `json:"-"`
	// Cause marks a finding that names a cause of the outcome; findings that
	// only describe the state (a stall, a crash) leave it false.
	Cause bool `json:"-"`
	// Stalled is how long the run has been silent while alive, for a
	// finding that claims a hang.
	Stalled time.Duration `json:"-"`
	// Why says, for the ranked hypotheses, why the finding ranks where it does.
	Why string `json:"-"`
	// Layer is the layer of diagnosis the finding comes from (see
	// calibration.go), "" for a rule's own reasoning; Signature the catalog
	// entry it rests on, if any. Both key the measured precision.
	Layer     string `json:"-"`
	Signature string `json:"-"`
	// Seen says how often findings of its kind were right on the labeled
	// cases (set from the calibration table).
	Seen string `json:"-"`
}

// Inconclusive is a rule that could not decide, and what would let it.
type Inconclusive struct {
	Rule    string   `json:"rule"`
	Missing []string `json:"missing"`
	Collect string   `json:"collect"`
}

// RuledOut is a hypothesis a rule considered and rejected, with the evidence
// that rejects it: the report shows these so a reader sees what was checked.
type RuledOut struct {
	Rule     string     `json:"rule"`
	Category Category   `json:"category"`
	Title    string     `json:"title"`
	Why      string     `json:"why"`
	Evidence []Evidence `json:"evidence"`
}

// Pass is one rule's view of the analysis.
type Pass struct {
	Facts *facts.Facts
	Index *Index
	Rule  *Rule

	findings     []Finding
	inconclusive []Inconclusive
	ruledOut     []RuledOut
}

// Report records a finding. Metadata the finding leaves empty comes from the rule.
func (p *Pass) Report(f Finding) {
	if f.Rule == "" {
		f.Rule = p.Rule.ID
	}
	if f.Title == "" {
		f.Title = p.Rule.Title
	}
	if f.Severity == "" {
		f.Severity = p.Rule.Severity
	}
	if f.Category == "" {
		f.Category = p.Rule.Category
	}
	if f.References == nil {
		f.References = p.Rule.References
	}
	if p.Index != nil {
		f.References = fitReferences(f.References, p.Index.Engine())
	}
	p.findings = append(p.findings, f)
}

// refEngines are the addresses of each engine's documentation and
// repository.
var refEngines = []struct {
	prefix string
	engine facts.Engine
}{
	{"https://docs.vllm.ai/", facts.EngineVLLM},
	{"https://github.com/vllm-project/", facts.EngineVLLM},
	{"https://docs.sglang.ai/", facts.EngineSGLang},
	{"https://github.com/sgl-project/", facts.EngineSGLang},
}

// fitReferences keeps the references that fit a run of engine e: an
// engine's documentation and threads only on a run of that engine (no
// vLLM troubleshooting page for an SGLang crash), everything else (a
// library's threads, NVIDIA's, PyTorch's) on any run. On a run of an
// unknown engine every reference stays.
func fitReferences(refs []string, e facts.Engine) []string {
	if e == facts.EngineUnknown {
		return refs
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		keep := true
		for _, x := range refEngines {
			if strings.HasPrefix(r, x.prefix) && x.engine != e {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

// Missing reports the rule inconclusive for lack of the named evidence.
func (p *Pass) Missing(collect string, missing ...string) {
	p.inconclusive = append(p.inconclusive, Inconclusive{Rule: p.Rule.ID, Missing: missing, Collect: collect})
}

// RuleOut records a hypothesis this rule checked and rejected.
func (p *Pass) RuleOut(why string, ev ...Evidence) {
	p.ruledOut = append(p.ruledOut, RuledOut{Rule: p.Rule.ID, Category: p.Rule.Category, Title: p.Rule.Title, Why: why, Evidence: ev})
}

// Result is the outcome of running the rules over a bundle's facts.
type Result struct {
	Verdict      Verdict
	Timeline     []Span
	Findings     []Finding
	Inconclusive []Inconclusive
	RuledOut     []RuledOut
	Index        *Index
}

// Options select rules.
type Options struct {
	// Rules to run; nil means every registered rule.
	Rules []*Rule
	// Catalog of signatures; nil means the built-in catalog.
	Catalog []*Signature
	// Filter, when set, rewrites the findings before the verdict is decided,
	// so that what it drops (a suppressed finding) claims no outcome or cause.
	Filter func([]Finding) []Finding
	// Calibration is the measured precision of each kind of finding; nil
	// means the built-in table. Uncalibrated leaves the declared
	// confidences (for measuring them).
	Calibration  *Calibration
	Uncalibrated bool
}

// Run derives the index and runs the rules. It never fails: a rule that
// panics becomes an error finding about coroner itself.
func Run(f *facts.Facts, opts Options) *Result {
	rs := opts.Rules
	if rs == nil {
		rs = Registered()
	}
	idx := Derive(f, opts.Catalog)
	res := &Result{Index: idx, Timeline: idx.Timeline}
	for _, r := range rs {
		p := &Pass{Facts: f, Index: idx, Rule: r}
		if len(r.Needs) > 0 && !idx.HasAny(r.Needs...) {
			continue
		}
		runSafely(p)
		res.Findings = append(res.Findings, p.findings...)
		res.Inconclusive = append(res.Inconclusive, p.inconclusive...)
		res.RuledOut = append(res.RuledOut, p.ruledOut...)
	}
	res.Findings = withoutFallbacks(res.Findings)
	if opts.Filter != nil {
		res.Findings = opts.Filter(res.Findings)
	}
	if !opts.Uncalibrated {
		cal := opts.Calibration
		if cal == nil {
			cal = BuiltinCalibration()
		}
		for i := range res.Findings {
			if f := &res.Findings[i]; f.Cause && f.Category != "" {
				f.Seen = cal.Calibrate(f)
			}
		}
	}
	sortFindings(res.Findings)
	sort.SliceStable(res.Inconclusive, func(i, j int) bool { return res.Inconclusive[i].Rule < res.Inconclusive[j].Rule })
	res.Verdict = decide(idx, res.Findings, res.RuledOut)
	return res
}

func runSafely(p *Pass) {
	defer func() {
		if r := recover(); r != nil {
			p.findings = append(p.findings, Finding{
				Rule: p.Rule.ID, Title: "rule failed: " + p.Rule.Title, Severity: SeverityWarning,
				Message: fmt.Sprintf("the rule %s stopped with an internal error (%v); its conclusions are missing from this report. Please report it with this bundle.", p.Rule.ID, r),
			})
		}
	}()
	p.Rule.Run(p)
}

// sortFindings orders by severity, then confidence, then rule and evidence,
// so the report is the same on every run.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.Confidence != b.Confidence {
			return a.Confidence > b.Confidence
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return firstSrc(a) < firstSrc(b)
	})
}

func firstSrc(f Finding) string {
	if len(f.Evidence) == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%09d", f.Evidence[0].Src.File, f.Evidence[0].Src.Line)
}

// LayerFallback marks a finding that names a cause only for want of any
// other: what an exception's type alone suggests. It is dropped when
// another finding names a cause.
const LayerFallback = "type"

// LayerLibrary marks what the library owning the failing frames suggests;
// LayerPrior a prior from the hardware and configuration (a build's jobs
// against host memory). Both rank like a rule's own reasoning.
const (
	LayerLibrary = "library"
	LayerPrior   = "prior"
)

// withoutFallbacks drops the fallback findings when another finding names a
// cause: a rule's own reasoning, a signature or a class says more than a
// type.
func withoutFallbacks(fs []Finding) []Finding {
	other := false
	for _, f := range fs {
		if f.Cause && f.Category != "" && f.Layer != LayerFallback {
			other = true
			break
		}
	}
	if !other {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		if f.Layer != LayerFallback {
			out = append(out, f)
		}
	}
	return out
}
