// Package calibrate measures the rules on labeled cases: how often each
// kind of cause finding names a cause the experts accepted (the table that
// sets the reported confidences, rules/calibration.json), and how often the
// verdict is fully right (the score of the incident sets).
//
// Labeled cases come in two layouts: an incident set (a folder with
// expected.json and one folder of evidence per case, as in
// fixtures/incidents; each case's case.md is never read), and fixture
// cases whose expectations name the cause (txtar files and bundle folders
// with `verdict cause=` or `causes=` lines, as in rules/testdata).
package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/runs"
	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/rulestest"
)

// Case is one labeled case.
type Case struct {
	Set, Name string
	// Outcomes, Phases and Causes are the accepted values; nil Phases or
	// Causes are not graded.
	Outcomes []rules.Outcome
	Phases   []rules.Phase
	Causes   []rules.Category
	// Top, when set, must be the first cause; Forbid may not be any cause
	// and ForbidTop not the first.
	Top       rules.Category
	Forbid    []rules.Category
	ForbidTop []rules.Category
	facts     func(facts.LineWatch) (*facts.Facts, error)
}

// expectation is one entry of expected.json (as ../shared/tools/score-incidents reads it).
type expectation struct {
	Outcome  []string `json:"outcome"`
	Phase    []string `json:"phase"`
	Causes   []string `json:"causes"`
	Top      string   `json:"top"`
	Forbid   []string `json:"forbid"`
	ForbidTp []string `json:"forbid_top"`
	Grade    *bool    `json:"grade"`
}

// Incidents reads an incident set: dir/expected.json and its case folders.
// Cases kept only to prove survival (grade: false) are left out.
func Incidents(dir string) ([]Case, error) {
	data, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "expected.json"), err)
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		if !strings.HasPrefix(k, "_") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var out []Case
	for _, name := range names {
		var e expectation
		if err := json.Unmarshal(raw[name], &e); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", filepath.Join(dir, "expected.json"), name, err)
		}
		if e.Grade != nil && !*e.Grade {
			continue
		}
		c := Case{Set: dir, Name: name, Top: rules.Category(e.Top)}
		for _, o := range e.Outcome {
			c.Outcomes = append(c.Outcomes, rules.Outcome(o))
		}
		for _, p := range e.Phase {
			c.Phases = append(c.Phases, rules.Phase(p))
		}
		for _, k := range e.Causes {
			c.Causes = append(c.Causes, rules.Category(k))
		}
		for _, k := range e.Forbid {
			c.Forbid = append(c.Forbid, rules.Category(k))
		}
		for _, k := range e.ForbidTp {
			c.ForbidTop = append(c.ForbidTop, rules.Category(k))
		}
		caseDir := filepath.Join(dir, filepath.FromSlash(name))
		if _, err := os.Stat(caseDir); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		c.facts = func(w facts.LineWatch) (*facts.Facts, error) {
			return parser.ParseFS(evidenceFS{os.DirFS(caseDir)}, parser.Options{Watch: w})
		}
		out = append(out, c)
	}
	return out, nil
}

// evidenceFS hides case.md, the expert's account, from the analysis.
type evidenceFS struct{ fs.FS }

func (e evidenceFS) Open(name string) (fs.File, error) {
	if path.Base(name) == "case.md" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return e.FS.Open(name)
}

func (e evidenceFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(e.FS, name)
	out := ents[:0]
	for _, d := range ents {
		if d.Name() != "case.md" {
			out = append(out, d)
		}
	}
	return out, err
}

// Fixtures reads the fixture cases under dir whose expectations name a
// cause.
func Fixtures(dir string) ([]Case, error) {
	var out []Case
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var tc *rulestest.Case
		switch {
		case d.IsDir() && p != dir:
			if _, err := os.Stat(p + ".want"); err != nil {
				return nil
			}
			tc, err = rulestest.LoadDir(p)
			if err != nil {
				return err
			}
		case strings.HasSuffix(p, ".txtar"):
			tc, err = rulestest.LoadTxtar(p)
			if err != nil {
				return err
			}
		default:
			return nil
		}
		c := Case{Set: dir, Name: filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator))), facts: tc.FactsWith}
		for _, v := range tc.Verdict {
			switch v.Key {
			case "cause":
				c.Top = rules.Category(v.Value)
				c.Causes = append(c.Causes, rules.Category(v.Value))
			case "causes":
				for _, k := range strings.Split(v.Value, ",") {
					c.Causes = append(c.Causes, rules.Category(k))
				}
			}
		}
		if len(c.Causes) > 0 {
			out = append(out, c)
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// Load reads a labeled set: an incident set when dir holds expected.json,
// else the fixture cases under it.
func Load(dir string) ([]Case, error) {
	if _, err := os.Stat(filepath.Join(dir, "expected.json")); err == nil {
		return Incidents(dir)
	}
	return Fixtures(dir)
}

// Run analyzes one case.
func (c *Case) Run(opts rules.Options) (*rules.Result, error) {
	f, err := c.facts(rules.LineWatch(opts.Catalog))
	if err != nil {
		return nil, err
	}
	// As analyze does: the latest run of the bundle, on its own evidence.
	return rules.Run(runs.Latest(f), opts), nil
}

// Measure counts, for each kind of cause finding, the cases where it named
// a cause and those where that cause was accepted. Findings are taken
// uncalibrated, so that the table does not feed on itself.
func Measure(sets map[string][]Case, opts rules.Options) (*rules.Calibration, error) {
	opts.Uncalibrated = true
	cal := &rules.Calibration{
		Doc:  "Generated by `coroner rules calibrate` from the labeled sets below; do not edit. For each kind of cause finding (rule, or rule/catalog entry): in how many labeled cases it named a cause (fired) and in how many that cause was one the experts accepted (right).",
		Keys: map[string]rules.Count{},
	}
	names := make([]string, 0, len(sets))
	for k := range sets {
		names = append(names, k)
	}
	sort.Strings(names)
	var errs []error
	for _, name := range names {
		cases := sets[name]
		cal.Sets = append(cal.Sets, rules.CalibrationSet{Path: filepath.ToSlash(name), Cases: len(cases)})
		for i := range cases {
			c := &cases[i]
			res, err := c.Run(opts)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
				continue
			}
			seen := map[string]bool{}
			for _, f := range res.Findings {
				if !f.Cause || f.Category == "" {
					continue
				}
				k := rules.CalibrationKey(f)
				if seen[k] {
					continue
				}
				seen[k] = true
				n := cal.Keys[k]
				n.Fired++
				if hasCat(c.Causes, f.Category) {
					n.Right++
				}
				cal.Keys[k] = n
			}
		}
	}
	return cal, errors.Join(errs...)
}

func hasCat(list []rules.Category, c rules.Category) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

// Score is how a verdict fared on a labeled case, graded as
// ../shared/tools/score-incidents does: the outcome accepted, the phase
// accepted (when graded), and one of the two most likely causes accepted
// (when graded, with Top and Forbid).
type Score struct {
	Outcome, Phase, Cause, Full bool
}

// Grade scores a verdict.
func (c *Case) Grade(v rules.Verdict) Score {
	var s Score
	for _, o := range c.Outcomes {
		s.Outcome = s.Outcome || v.Outcome == o
	}
	s.Phase = c.Phases == nil
	for _, p := range c.Phases {
		s.Phase = s.Phase || v.Phase == p
	}
	s.Cause = c.Causes == nil
	if c.Causes != nil {
		for i, k := range v.Causes {
			if i < 2 && hasCat(c.Causes, k.Category) {
				s.Cause = true
			}
		}
		if c.Top != "" && (len(v.Causes) == 0 || v.Causes[0].Category != c.Top) {
			s.Cause = false
		}
	}
	for i, k := range v.Causes {
		if hasCat(c.Forbid, k.Category) || (i == 0 && hasCat(c.ForbidTop, k.Category)) {
			s.Cause = false
		}
	}
	s.Full = s.Outcome && s.Phase && s.Cause
	return s
}
