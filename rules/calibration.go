package rules

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

//go:embed calibration.json
var builtinCalibration []byte

// Calibration is how often each kind of cause finding named an accepted
// cause on the labeled cases: the incidents of fixtures/incidents (the
// experts' verdicts of real upstream threads) and the fixtures whose
// expectations name a cause. `coroner rules calibrate` writes it
// (rules/calibration.json, checked in CI to be current); the reported
// confidence of a finding is its measured precision, smoothed towards the
// confidence its rule declares when it fired only a few times.
type Calibration struct {
	Doc string `json:"_doc"`
	// Sets are the labeled sets measured, with their number of cases.
	Sets []CalibrationSet `json:"sets"`
	// Keys are the kinds of finding (see CalibrationKey), with their counts.
	Keys map[string]Count `json:"keys"`
}

// CalibrationSet is one labeled set.
type CalibrationSet struct {
	Path  string `json:"path"`
	Cases int    `json:"cases"`
}

// Count is how many labeled cases a kind of finding named a cause in, and
// in how many of them that cause was one the experts accepted.
type Count struct {
	Fired int `json:"fired"`
	Right int `json:"right"`
}

// priorWeight is how many cases the declared confidence counts for when it
// is blended with what was measured.
const priorWeight = 2

// BuiltinCalibration is the embedded table (empty when none was written).
func BuiltinCalibration() *Calibration {
	c := &Calibration{}
	if len(builtinCalibration) > 0 {
		if err := json.Unmarshal(builtinCalibration, c); err != nil {
			panic(fmt.Sprintf("calibration.json: %v", err))
		}
	}
	return c
}

// CalibrationKey names the kind of a finding: its rule, and the catalog
// entry it rests on for the rules that report many ("signature/port-in-use",
// "exception-class/class-gpu-oom").
func CalibrationKey(f Finding) string {
	if f.Signature != "" {
		return f.Rule + "/" + f.Signature
	}
	return f.Rule
}

// Measured returns the count of a finding's kind, if it was measured.
func (c *Calibration) Measured(f Finding) (Count, bool) {
	if c == nil {
		return Count{}, false
	}
	n, ok := c.Keys[CalibrationKey(f)]
	return n, ok && n.Fired > 0
}

// Calibrate sets a cause finding's confidence to its measured precision,
// blended with its declared confidence: (right + w*declared) / (fired + w).
// It returns the words that say how sure that is.
func (c *Calibration) Calibrate(f *Finding) string {
	n, ok := c.Measured(*f)
	if !ok {
		return "not yet measured on labeled cases"
	}
	declared := f.Confidence
	f.Confidence = round2((float64(n.Right) + priorWeight*declared) / float64(n.Fired+priorWeight))
	return fmt.Sprintf("right in %d of %d labeled cases where it named a cause", n.Right, n.Fired)
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// Combining the evidence for a cause.
//
// Each cause finding's confidence is read as the probability that its
// category is right given that finding alone. The findings for one category
// are pooled in log-odds against a base rate: each adds logit(p) -
// logit(base). Findings of one run are not independent (two rules often
// read the same line), so they are damped: the strongest counts whole, the
// next half, the next a quarter, and so on. A hypothesis a rule checked and
// rejected makes its category three times less likely. One finding alone
// keeps its own confidence.

// baseRate is how likely a category is before any evidence: one in ten of
// the categories a bundle's findings name is the expert's.
const baseRate = 0.1

// ruledOutLR is the likelihood ratio of a rejection: it makes its category
// three times less likely.
const ruledOutLR = 1.0 / 3

func logit(p float64) float64 {
	p = math.Min(math.Max(p, 0.01), 0.99)
	return math.Log(p / (1 - p))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// combine pools the confidences of one category's findings (ps) and the
// number of rules that ruled it out.
func combine(ps []float64, against int) float64 {
	if len(ps) == 0 {
		return 0
	}
	sorted := append([]float64(nil), ps...)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	base := logit(baseRate)
	x := base
	w := 1.0
	for _, p := range sorted {
		x += w * (logit(p) - base)
		w /= 2
	}
	x += float64(against) * math.Log(ruledOutLR)
	return round2(sigmoid(x))
}

// also lists the other rules behind a cause, for its why.
func also(rules []string) string {
	if len(rules) == 0 {
		return ""
	}
	return "; also " + strings.Join(rules, ", ")
}
