// Package pack loads user rule packs: YAML files of signatures and rules
// that coroner runs beside its built-in rules without recompiling
// (`--rules FILE`).
//
// A pack is a mapping with two lists, `signatures` (the schema of the
// built-in catalog, rules/catalog/signatures.yaml) and `rules`; a file that
// is a plain list is a catalog of signatures. A rule matches log events
// (`match`: event types, a message regexp, field regexps, signatures) and
// or tests a condition (`when`) written in expr (github.com/expr-lang/expr)
// over a small typed view of the facts (View; Reference documents it).
// Expressions are compiled when the pack loads, so names and types are
// checked then, and every defect of every pack is reported at once with
// file:line:col.
package pack

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/rules"
)

// Pack is one loaded pack file.
type Pack struct {
	File       string
	Rules      []*rules.Rule
	Signatures []*rules.Signature

	defs    []*ruleDef
	sigPos  map[string][2]int // signature id -> line, col of its id
	ownerAt map[string]ast.Node
	// ruleAt is where each rule id was first written, valid or not, so
	// that a second definition is reported even when the first has errors.
	ruleAt map[string]ast.Node
}

// Info is what `coroner rules explain` shows of a pack rule beyond the
// rule's metadata.
type Info struct {
	// Where is file:line of the rule's entry.
	Where   string
	Match   string // the match block, as written (YAML)
	When    string
	Message string
}

// idRE is the rule ID syntax of rules.Rule.Validate.
var idRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

var ruleFields = []string{"id", "title", "doc", "severity", "category", "confidence", "remedy", "references",
	"needs", "outcome", "phase", "cause", "layer", "match", "when", "message"}

// layers are the layers of diagnosis a pack rule can take part in (README
// "How coroner decides"): its own reasoning (""), a class of errors, the
// failing library, a prior from hardware and configuration, and the
// fallback that counts only when nothing else names a cause.
var layers = map[string]string{"class": rules.LayerClass, "library": rules.LayerLibrary, "prior": rules.LayerPrior,
	"fallback": rules.LayerFallback}

var matchFields = []string{"type", "msg", "fields", "signature"}

var outcomes = []rules.Outcome{rules.OutcomeReady, rules.OutcomeInProgress, rules.OutcomeHung, rules.OutcomeCrashed,
	rules.OutcomeSlow, rules.OutcomeUnknown}

// LoadFile reads and parses one pack.
func LoadFile(path string) (*Pack, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: unwrapPath(err)}}
	}
	return Parse(data, path)
}

func unwrapPath(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse parses one pack. It checks the pack on its own; New checks packs
// against each other and the built-in rules.
func Parse(data []byte, file string) (*Pack, error) {
	d := &dec{file: file}
	p := &Pack{File: file, sigPos: map[string][2]int{}, ownerAt: map[string]ast.Node{}, ruleAt: map[string]ast.Node{}}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, Errors{YAMLError(file, err)}
	}
	var body ast.Node
	for i, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		if body != nil {
			d.errf(doc.Body, "a pack is one YAML document; this is document %d", i+1)
			continue
		}
		body = doc.Body
	}
	switch b := unwrap(body).(type) {
	case nil:
		d.errAt(1, 1, "empty pack: want a mapping with signatures and rules")
	case *ast.SequenceNode:
		p.signatures(d, b)
	default:
		fs, ok := d.fieldsOf(b, "pack", []string{"signatures", "rules"})
		if !ok {
			break
		}
		if n, ok := fs["signatures"]; ok {
			if seq, ok := unwrap(n).(*ast.SequenceNode); ok {
				p.signatures(d, seq)
			} else if _, null := unwrap(n).(*ast.NullNode); !null {
				d.errf(n, "signatures: want a list, got %s", kindName(n))
			}
		}
		if n, ok := fs["rules"]; ok {
			if seq, ok := unwrap(n).(*ast.SequenceNode); ok {
				for _, e := range seq.Values {
					if def := p.rule(d, e); def != nil {
						p.defs = append(p.defs, def)
						p.Rules = append(p.Rules, def.rule)
					}
				}
			} else if _, null := unwrap(n).(*ast.NullNode); !null {
				d.errf(n, "rules: want a list, got %s", kindName(n))
			}
		}
		if len(fs) == 0 {
			d.errf(b, "empty pack: want signatures or rules")
		}
	}
	if len(d.errs) > 0 {
		d.errs.sort()
		return nil, d.errs
	}
	return p, nil
}

// signatureFields are the YAML keys of rules.Signature.
func signatureFields() []string {
	var out []string
	t := reflect.TypeOf(rules.Signature{})
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

func (p *Pack) signatures(d *dec, seq *ast.SequenceNode) {
	known := signatureFields()
	builtin := map[string]bool{}
	for _, s := range rules.BuiltinCatalog() {
		builtin[s.ID] = true
	}
	for _, n := range seq.Values {
		fs, ok := d.fieldsOf(n, strings.TrimSpace("signature "+peekID(n)), known)
		if !ok {
			continue
		}
		var s rules.Signature
		if err := yaml.NodeToValue(unwrap(n), &s); err != nil {
			d.yamlErr(n, err)
			continue
		}
		line, col := pos(n)
		s.Where = fmt.Sprintf("%s:%d", p.File, line)
		what := "signature " + s.ID
		for _, pr := range s.Check() {
			at := fs[pr.Field]
			if at == nil {
				d.errAt(line, col, "%s: %s", what, pr.Msg)
				continue
			}
			d.errf(at, "%s: %s", what, pr.Msg)
		}
		if _, dup := p.sigPos[s.ID]; dup {
			d.errf(fs["id"], "%s: defined twice in this pack", what)
		}
		if builtin[s.ID] {
			d.errf(fs["id"], "%s: the id is already a built-in signature", what)
		}
		if idn := fs["id"]; idn != nil {
			l, c := pos(idn)
			p.sigPos[s.ID] = [2]int{l, c}
		} else {
			p.sigPos[s.ID] = [2]int{line, col}
		}
		if s.Owner != "" {
			p.ownerAt[s.ID] = fs["owner"]
		}
		sig := s
		p.Signatures = append(p.Signatures, &sig)
	}
}

// peekID names an entry in messages before its fields are read.
func peekID(n ast.Node) string {
	ps, _ := pairs(n)
	for _, p := range ps {
		if keyName(p) == "id" {
			if s, ok := unwrap(p.Value).(*ast.StringNode); ok {
				return s.Value
			}
		}
	}
	return ""
}

func (p *Pack) rule(d *dec, n ast.Node) *ruleDef {
	fs, ok := d.fieldsOf(n, strings.TrimSpace("rule "+peekID(n)), ruleFields)
	if !ok {
		return nil
	}
	nerr := len(d.errs)
	line, col := pos(n)
	def := &ruleDef{idNode: fs["id"], where: fmt.Sprintf("%s:%d", p.File, line), confidence: 0.5}
	r := &rules.Rule{Severity: rules.SeverityWarning}
	def.rule = r
	get := func(key string) (string, ast.Node) {
		v, ok := fs[key]
		if !ok {
			return "", nil
		}
		s, _ := d.str(v, key)
		return s, v
	}
	r.ID, _ = get("id")
	what := "rule " + r.ID
	if r.ID == "" {
		what = "rule"
		d.errAt(line, col, "rule: missing id")
	} else if !idRE.MatchString(r.ID) {
		d.errf(fs["id"], "%s: id %q is not kebab-case", what, r.ID)
	}
	if rules.Lookup(rules.Registered(), r.ID) != nil {
		d.errf(fs["id"], "%s: the id is already a built-in rule", what)
	}
	if first, dup := p.ruleAt[r.ID]; dup && r.ID != "" {
		l, _ := pos(first)
		d.errf(fs["id"], "%s: defined twice (first at line %d)", what, l)
	} else if r.ID != "" {
		p.ruleAt[r.ID] = fs["id"]
	}
	var at ast.Node
	if r.Title, at = get("title"); strings.TrimSpace(r.Title) == "" {
		d.errfOr(at, line, col, "%s: missing title", what)
	}
	if r.Doc, at = get("doc"); strings.TrimSpace(r.Doc) == "" {
		d.errfOr(at, line, col, "%s: missing doc: say what the rule looks at and why that means what it says", what)
	}
	if s, at := get("severity"); at != nil {
		r.Severity = rules.Severity(s)
		if r.Severity.Rank() < 0 {
			d.errf(at, "%s: severity %q is not critical, error, warning or info", what, s)
		}
	}
	if s, at := get("category"); at != nil {
		r.Category = rules.Category(s)
		if !r.Category.Valid() {
			d.errf(at, "%s: category %q is not in the taxonomy (%s)", what, s, joinCats())
		}
	}
	if v, ok := fs["confidence"]; ok {
		if c, ok := d.float(v, "confidence"); ok {
			def.confidence = c
			if c <= 0 || c > 1 {
				d.errf(v, "%s: confidence %v is not in (0, 1]", what, c)
			}
		}
	}
	def.remedy, _ = get("remedy")
	if v, ok := fs["references"]; ok {
		refs, nodes, _ := d.strs(v, "references")
		for i, ref := range refs {
			if !strings.HasPrefix(ref, "https://") && !strings.HasPrefix(ref, "http://") {
				d.errf(nodes[i], "%s: reference %q is not a URL", what, ref)
			}
		}
		r.References = refs
	}
	if v, ok := fs["needs"]; ok {
		kinds, nodes, _ := d.strs(v, "needs")
		for i, k := range kinds {
			if !containsKind(facts.Kind(k)) {
				d.errf(nodes[i], "%s: needs: %q is not an evidence kind", what, k)
				continue
			}
			r.Needs = append(r.Needs, facts.Kind(k))
		}
	}
	if s, at := get("outcome"); at != nil {
		def.outcome = rules.Outcome(s)
		if !containsOutcome(def.outcome) {
			d.errf(at, "%s: outcome %q is not in the taxonomy", what, s)
		}
	}
	if s, at := get("phase"); at != nil {
		def.phase = rules.Phase(s)
		if def.phase.Order() < 0 {
			d.errf(at, "%s: phase %q is not in the taxonomy", what, s)
		}
	}
	def.cause = r.Category != ""
	if v, ok := fs["cause"]; ok {
		if b, ok := d.boolean(v, "cause"); ok {
			def.cause = b
			if b && r.Category == "" {
				d.errf(v, "%s: a cause needs a category", what)
			}
		}
	}
	if s, at := get("layer"); at != nil {
		if l, ok := layers[s]; !ok {
			d.errf(at, "%s: layer %q is not one of class, library, prior, fallback", what, s)
		} else if !def.cause {
			d.errf(at, "%s: a layer ranks a cause; this rule names none", what)
		} else {
			def.layer, def.layerName = l, s
		}
	}
	if v, ok := fs["match"]; ok {
		def.match = p.match(d, v, what)
		if def.match != nil {
			def.matchText = def.match.String()
		}
	}
	if v, ok := fs["when"]; ok {
		if src, _ := d.str(v, "when"); strings.TrimSpace(src) != "" {
			def.whenText = src
			prog, err := compile(src, true, def.match == nil)
			if err != nil {
				l, c := within(v, err.line, err.col)
				d.errAt(l, c, "%s: when: %s", what, err.msg)
			}
			def.when = prog
		} else {
			d.errf(v, "%s: when: empty expression", what)
		}
	}
	if def.match == nil && def.whenText == "" && len(d.errs) == nerr {
		if _, hasMatch := fs["match"]; !hasMatch {
			d.errAt(line, col, "%s: needs match, when, or both", what)
		}
	}
	if v, ok := fs["message"]; ok {
		if s, _ := d.str(v, "message"); s != "" {
			def.messageText = s
			t, err := compileTemplate(s, def.match == nil)
			if err != nil {
				l0, c0 := lineCol(s, runeCol(s, err.off))
				l, c := within(v, l0+err.err.line-1, c0+err.err.col)
				if err.err.line > 1 {
					l, c = within(v, l0+err.err.line-1, err.err.col)
				}
				d.errAt(l, c, "%s: message: %s", what, err.err.msg)
			}
			def.message = t
		}
	}
	r.Run = def.run
	if len(d.errs) > nerr {
		return nil
	}
	return def
}

func (d *dec) errfOr(n ast.Node, line, col int, format string, args ...any) {
	if n != nil {
		d.errf(n, format, args...)
		return
	}
	d.errAt(line, col, format, args...)
}

func (p *Pack) match(d *dec, n ast.Node, what string) *matcher {
	fs, ok := d.fieldsOf(n, what+": match", matchFields)
	if !ok {
		return nil
	}
	m := &matcher{}
	if v, ok := fs["type"]; ok {
		types, nodes, _ := d.strs(v, "match.type")
		for i, t := range types {
			switch {
			case containsStr(eventNames(notEvents), t):
				d.errf(nodes[i], "%s: match.type: %q lines are not kept as events, so nothing would match", what, t)
			case !knownEventType(t):
				d.errf(nodes[i], "%s: match.type: %q is not an event type (see coroner rules explain)", what, t)
			}
		}
		m.types = types
	}
	if v, ok := fs["msg"]; ok {
		s, _ := d.str(v, "match.msg")
		re, err := regexp.Compile(s)
		if err != nil || s == "" {
			d.errf(v, "%s: match.msg: %v", what, errOr(err, "empty regexp"))
		}
		m.msg = re
	}
	if v, ok := fs["fields"]; ok {
		ps, ok := pairs(v)
		if !ok {
			d.errf(v, "%s: match.fields: want a mapping of field to regexp, got %s", what, kindName(v))
		}
		for _, pr := range ps {
			if known, ok := fieldKnown(m.types, keyName(pr)); !ok {
				d.errf(pr.Key, "%s: match.fields: %q is not a field of %s (known: %s)", what, keyName(pr),
					typesText(m.types), orNone(known))
			}
			s, _ := d.str(pr.Value, "match.fields")
			re, err := regexp.Compile(s)
			if err != nil {
				d.errf(pr.Value, "%s: match.fields.%s: %v", what, keyName(pr), err)
				continue
			}
			m.fields = append(m.fields, fieldMatch{key: keyName(pr), re: re})
		}
	}
	if v, ok := fs["signature"]; ok {
		ids, nodes, _ := d.strs(v, "match.signature")
		m.sigs = ids
		m.sigNodes = nodes
	}
	if m.types == nil && m.msg == nil && m.fields == nil && m.sigs == nil {
		d.errf(n, "%s: match: give type, msg, fields or signature", what)
		return nil
	}
	return m
}

// fieldKnown reports whether events of one of the types can carry the
// field key (facts.FieldNames), or of any event type when none is given.
// Settings dumps and engine configs carry the engine's own keys besides
// theirs, so a key may be any of those. Types that are not event types are
// errors of their own and left out; when no type is left, the key is not
// judged. Otherwise known lists the fields the types carry.
func fieldKnown(types []string, key string) (known []string, ok bool) {
	var ts []facts.EventType
	for _, t := range types {
		if knownEventType(t) {
			ts = append(ts, facts.EventType(t))
		}
	}
	switch {
	case len(types) == 0:
		ts = eventTypes
	case len(ts) == 0:
		return nil, true
	}
	seen := map[string]bool{}
	for _, t := range ts {
		names, open := facts.FieldNames(t)
		if open {
			return nil, true
		}
		for _, n := range names {
			if n == key {
				return nil, true
			}
			if !seen[n] {
				seen[n] = true
				known = append(known, n)
			}
		}
	}
	sort.Strings(known)
	return known, false
}

// typesText names the event types a match lists, for a message.
func typesText(types []string) string {
	switch len(types) {
	case 0:
		return "any event type"
	case 1:
		return types[0] + " events"
	}
	return strings.Join(types[:len(types)-1], ", ") + " or " + types[len(types)-1] + " events"
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none: these events carry no fields"
	}
	return strings.Join(names, ", ")
}

func eventNames(ts []facts.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

func containsKind(k facts.Kind) bool {
	for _, x := range facts.AllKinds {
		if x == k {
			return true
		}
	}
	return false
}

func containsOutcome(o rules.Outcome) bool {
	for _, x := range outcomes {
		if x == o {
			return true
		}
	}
	return false
}

func joinCats() string {
	var s []string
	for _, c := range rules.Categories {
		s = append(s, string(c))
	}
	return strings.Join(s, ", ")
}

// Set is the rules and signatures in use: the built-in ones and the packs.
type Set struct {
	Packs   []*Pack
	rules   []*rules.Rule
	catalog []*rules.Signature
	infos   map[string]Info
}

// Load reads the packs at paths and checks them together with the
// built-in rules and catalog. Every defect of every file is in the error.
func Load(paths ...string) (*Set, error) {
	var packs []*Pack
	var errs Errors
	for _, path := range paths {
		p, err := LoadFile(path)
		if err != nil {
			errs = append(errs, asErrors(err, path)...)
			continue
		}
		packs = append(packs, p)
	}
	s, err := New(packs...)
	if err != nil {
		errs = append(errs, asErrors(err, "")...)
	}
	if len(errs) > 0 {
		errs.sort()
		return nil, errs
	}
	return s, nil
}

func asErrors(err error, file string) Errors {
	if es, ok := err.(Errors); ok {
		return es
	}
	return Errors{{File: file, Msg: err.Error()}}
}

// New combines parsed packs with the built-in rules and catalog: rule and
// signature IDs must be unique across all of them, and a signature's
// owner and a rule's match.signature must name what exists.
func New(packs ...*Pack) (*Set, error) {
	s := &Set{Packs: packs, infos: map[string]Info{}}
	var errs Errors
	builtin := rules.Registered()
	ruleAt := map[string]string{}
	for _, r := range builtin {
		ruleAt[r.ID] = "a built-in rule"
	}
	catalog := rules.BuiltinCatalog()
	sigAt := map[string]string{}
	for _, sig := range catalog {
		sigAt[sig.ID] = "a built-in signature"
	}
	s.rules = append(s.rules, builtin...)
	for _, p := range packs {
		for _, def := range p.defs {
			id := def.rule.ID
			if where, dup := ruleAt[id]; dup {
				l, c := pos(def.idNode)
				errs = append(errs, &Error{File: p.File, Line: l, Col: c, Msg: fmt.Sprintf("rule %s: the id is already %s", id, where)})
				continue
			}
			ruleAt[id] = "defined at " + def.where
			s.rules = append(s.rules, def.rule)
			s.infos[id] = Info{Where: def.where, Match: def.matchText, When: def.whenText, Message: def.messageText}
		}
		for _, sig := range p.Signatures {
			if where, dup := sigAt[sig.ID]; dup {
				at := p.sigPos[sig.ID]
				errs = append(errs, &Error{File: p.File, Line: at[0], Col: at[1], Msg: fmt.Sprintf("signature %s: the id is already %s", sig.ID, where)})
				continue
			}
			sigAt[sig.ID] = "defined at " + sig.Where
			catalog = append(catalog, sig)
		}
	}
	for _, p := range packs {
		for _, sig := range p.Signatures {
			if sig.Owner == "" {
				continue
			}
			if _, ok := ruleAt[sig.Owner]; !ok {
				l, c := pos(p.ownerAt[sig.ID])
				errs = append(errs, &Error{File: p.File, Line: l, Col: c, Msg: fmt.Sprintf("signature %s: owner %q is no rule", sig.ID, sig.Owner)})
			}
		}
		for _, def := range p.defs {
			if def.match == nil {
				continue
			}
			for i, id := range def.match.sigs {
				if _, ok := sigAt[id]; !ok {
					l, c := pos(def.match.sigNodes[i])
					errs = append(errs, &Error{File: p.File, Line: l, Col: c, Msg: fmt.Sprintf("rule %s: match.signature: %q is no signature", def.rule.ID, id)})
				}
			}
		}
	}
	sort.SliceStable(s.rules, func(i, j int) bool { return s.rules[i].ID < s.rules[j].ID })
	s.catalog = catalog
	if len(errs) == 0 {
		// The registry's own check, over everything: it would catch a
		// defect the positioned checks above missed.
		if err := rules.CheckRegistry(s.rules); err != nil {
			errs = append(errs, &Error{Msg: err.Error()})
		}
	}
	if len(errs) > 0 {
		errs.sort()
		return nil, errs
	}
	return s, nil
}

// Rules returns the built-in and pack rules, sorted by ID.
func (s *Set) Rules() []*rules.Rule { return s.rules }

// PackRules returns the rules of the packs, sorted by ID.
func (s *Set) PackRules() []*rules.Rule {
	var out []*rules.Rule
	for _, r := range s.rules {
		if !r.Builtin {
			out = append(out, r)
		}
	}
	return out
}

// Catalog returns the built-in signatures followed by the packs'.
func (s *Set) Catalog() []*rules.Signature { return s.catalog }

// Options are the engine options that run this set.
func (s *Set) Options() rules.Options {
	return rules.Options{Rules: s.rules, Catalog: s.catalog}
}

// Info returns what a pack rule was written as; ok is false for built-ins.
func (s *Set) Info(id string) (Info, bool) {
	i, ok := s.infos[id]
	return i, ok
}
