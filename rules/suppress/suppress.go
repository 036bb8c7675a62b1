// Package suppress reads suppression files (`coroner analyze --suppress
// FILE`) and applies them to the findings of a run.
//
// A suppression file is a YAML list:
//
//   - rule: alive-not-ready            # required: the rule whose findings to drop
//     file: "probes/*.txt"             # optional: a glob over the cited evidence files
//     match: "health.*refused"         # optional: a regexp over title, message or evidence
//     reason: "the probe runs before the pod is ready; INFRA-1234"   # required
//
// The reason is required, as for staticcheck's //lint:ignore, so that a
// suppression says why it is safe. A suppression that matched no finding
// is reported as an info finding of the rule `suppression`: it may be
// stale (the problem is gone) or wrong (a typo in its match), and either
// way someone should look at it.
package suppress

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
	"github.com/coroner-dev/coroner/rules/pack"
)

// RuleID is the rule that reports suppressions that matched nothing.
const RuleID = "suppression"

// Rule describes the findings this package reports, for `coroner rules
// list` and `rules explain`. The engine does not run it: Filter reports.
func Rule() *rules.Rule {
	return &rules.Rule{
		ID:       RuleID,
		Title:    "suppression matched no finding",
		Severity: rules.SeverityInfo,
		Doc: `Reports each entry of a --suppress file that matched no finding of the run.
A suppression that matches nothing is stale (the problem it hid is gone) or
wrong (a typo in its rule, file or match, so it hides nothing while its
author believes it does); either way it should be looked at and removed or
fixed, the way staticcheck reports a //lint:ignore that ignored nothing.

The finding cites the suppression's entry (file:line of the suppression
file) and repeats its reason.`,
		Run:     func(*rules.Pass) {},
		Builtin: true,
	}
}

// Suppression is one entry of a suppression file.
type Suppression struct {
	Rule string
	// File is a glob (path.Match) over the files the finding cites; a glob
	// without a slash is also tried on their base names.
	File   string
	Match  *regexp.Regexp
	Reason string
	// Where is the entry in its file; RuleAt where its rule is written.
	Where  facts.Source
	ruleAt [2]int
	// Hits counts the findings it dropped in the last filtered run.
	Hits int
}

// List is the suppressions of one or more files.
type List struct {
	Items []*Suppression
	// dropped counts the findings the last filtered run dropped.
	dropped int
}

var fields = []string{"rule", "file", "match", "reason"}

// Load reads suppression files; every defect of every file is in the error
// (pack.Errors, each at file:line:col).
func Load(paths ...string) (*List, error) {
	l := &List{}
	var errs pack.Errors
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			if pe, ok := err.(*os.PathError); ok {
				err = pe.Err
			}
			errs = append(errs, &pack.Error{File: p, Msg: err.Error()})
			continue
		}
		one, err := Parse(data, p)
		if err != nil {
			errs = append(errs, err.(pack.Errors)...)
			continue
		}
		l.Items = append(l.Items, one.Items...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return l, nil
}

// Parse reads one suppression file.
func Parse(data []byte, file string) (*List, error) {
	var errs pack.Errors
	errf := func(n ast.Node, format string, args ...any) {
		line, col := pos(n)
		errs = append(errs, &pack.Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, pack.Errors{pack.YAMLError(file, err)}
	}
	l := &List{}
	var body ast.Node
	if len(f.Docs) > 0 {
		body = f.Docs[0].Body
	}
	seq, ok := body.(*ast.SequenceNode)
	switch {
	case body == nil:
		return l, nil // an empty file suppresses nothing
	case !ok:
		errf(body, "want a list of suppressions (- rule: ID, reason: ...)")
		return nil, errs
	}
	for _, n := range seq.Values {
		s := &Suppression{}
		m, ok := n.(*ast.MappingNode)
		var values []*ast.MappingValueNode
		if ok {
			values = m.Values
		} else if mv, ok2 := n.(*ast.MappingValueNode); ok2 {
			values, ok = []*ast.MappingValueNode{mv}, true
		}
		if !ok {
			errf(n, "suppression: want a mapping with rule and reason")
			continue
		}
		first := values[0].Key
		s.Where = facts.Source{File: file, Line: first.GetToken().Position.Line}
		col := first.GetToken().Position.Column
		got := map[string]ast.Node{}
		for _, mv := range values {
			k := mv.Key.GetToken().Value
			if !contains(fields, k) {
				errf(mv.Key, "suppression: unknown field %q (known: %s)", k, strings.Join(fields, ", "))
				continue
			}
			if _, dup := got[k]; dup {
				errf(mv.Key, "suppression: field %q given twice", k)
				continue
			}
			got[k] = mv.Value
			v, ok := scalar(mv.Value)
			if !ok {
				errf(mv.Value, "suppression: %s: want a string", k)
				continue
			}
			switch k {
			case "rule":
				s.Rule = v
				s.ruleAt = [2]int{mv.Value.GetToken().Position.Line, mv.Value.GetToken().Position.Column}
			case "file":
				if _, err := path.Match(v, ""); err != nil {
					errf(mv.Value, "suppression: file: bad glob %q: %v", v, err)
				}
				s.File = v
			case "match":
				re, err := regexp.Compile(v)
				if err != nil {
					errf(mv.Value, "suppression: match: %v", err)
				}
				s.Match = re
			case "reason":
				s.Reason = strings.TrimSpace(v)
			}
		}
		at := func(line, col int, format string, args ...any) {
			errs = append(errs, &pack.Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
		}
		if s.Rule == "" {
			at(s.Where.Line, col, "suppression: missing rule")
		}
		if s.Reason == "" {
			if n := got["reason"]; n != nil {
				errf(n, "suppression of %s: empty reason: say why the finding is safe to hide", s.Rule)
			} else {
				at(s.Where.Line, col, "suppression of %s: missing reason: say why the finding is safe to hide", s.Rule)
			}
		}
		l.Items = append(l.Items, s)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].Line != errs[j].Line {
				return errs[i].Line < errs[j].Line
			}
			return errs[i].Col < errs[j].Col
		})
		return nil, errs
	}
	return l, nil
}

// pos is where a node starts: a mapping's own token is a colon, so it
// answers with its first key.
func pos(n ast.Node) (int, int) {
	switch m := n.(type) {
	case nil:
		return 0, 0
	case *ast.MappingValueNode:
		n = m.Key
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			n = m.Values[0].Key
		}
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Position.Line, tk.Position.Column
	}
	return 0, 0
}

func scalar(n ast.Node) (string, bool) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		return x.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return x.GetToken().Value, true
	case *ast.NullNode:
		return "", true
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Check rejects suppressions of rules that do not exist, so that a typo in
// a rule ID is an error and not a suppression that silently never matches.
func (l *List) Check(known func(id string) bool) error {
	var errs pack.Errors
	for _, s := range l.Items {
		if s.Rule != "" && !known(s.Rule) {
			errs = append(errs, &pack.Error{File: s.Where.File, Line: s.ruleAt[0], Col: s.ruleAt[1],
				Msg: fmt.Sprintf("suppression: no rule %q (coroner rules list shows them)", s.Rule)})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Matches reports whether the suppression covers the finding.
func (s *Suppression) Matches(f rules.Finding) bool {
	if f.Rule != s.Rule {
		return false
	}
	if s.File != "" && !s.citesFile(f) {
		return false
	}
	if s.Match == nil {
		return true
	}
	if s.Match.MatchString(f.Title) || s.Match.MatchString(f.Message) {
		return true
	}
	for _, e := range f.Evidence {
		if s.Match.MatchString(e.Text) {
			return true
		}
	}
	return false
}

func (s *Suppression) citesFile(f rules.Finding) bool {
	for _, e := range f.Evidence {
		if ok, _ := path.Match(s.File, e.Src.File); ok {
			return true
		}
		if !strings.Contains(s.File, "/") {
			if ok, _ := path.Match(s.File, path.Base(e.Src.File)); ok {
				return true
			}
		}
	}
	return false
}

// Filter returns the engine's findings filter (rules.Options.Filter): it
// drops the suppressed findings, counts them per suppression, and adds a
// finding of the rule `suppression` for each entry that matched none.
func (l *List) Filter() func([]rules.Finding) []rules.Finding {
	return func(fs []rules.Finding) []rules.Finding {
		for _, s := range l.Items {
			s.Hits = 0
		}
		l.dropped = 0
		var out []rules.Finding
		for _, f := range fs {
			dropped := false
			for _, s := range l.Items {
				if s.Matches(f) {
					s.Hits++
					dropped = true
				}
			}
			if dropped {
				l.dropped++
			} else {
				out = append(out, f)
			}
		}
		for _, s := range l.Items {
			if s.Hits > 0 {
				continue
			}
			out = append(out, rules.Finding{
				Rule:       RuleID,
				Title:      "suppression matched no finding",
				Severity:   rules.SeverityInfo,
				Confidence: 1,
				Message: fmt.Sprintf("The suppression of %s at %s matched no finding of this run: remove it if what it hid is gone, or fix its rule, file or match. Its reason: %s",
					s.Rule, s.Where, s.Reason),
				Evidence: []rules.Evidence{{Src: s.Where, Text: s.describe()}},
			})
		}
		return out
	}
}

// Suppressed counts the findings the last filtered run dropped.
func (l *List) Suppressed() int { return l.dropped }

func (s *Suppression) describe() string {
	parts := []string{"rule: " + s.Rule}
	if s.File != "" {
		parts = append(parts, "file: "+s.File)
	}
	if s.Match != nil {
		parts = append(parts, "match: "+s.Match.String())
	}
	return strings.Join(parts, ", ")
}
