package pack

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	exprast "github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	exprparser "github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/coroner-dev/coroner/rules"
)

// env is the compile-time environment: the View plus the functions. The
// functions are fields so that each run binds them to its own view.
type env struct {
	View
	EventsFn func(types ...string) []Event `expr:"events"`
}

func newEnv(v *View) *env {
	return &env{View: *v, EventsFn: v.events}
}

// program is one compiled expression and what it reads, so that a finding
// can cite the evidence behind the values the expression looked at.
type program struct {
	src  string
	prog *vm.Program
	// keys are the constant lookups: settings["x"], env.X, versions["y"].
	keys []keyRef
	// roots are the view collections and records it names (gpus, procs,
	// state, log, event ...).
	roots []string
	// items are filter() programs over a view collection, one per
	// any/all/one/filter/count/find over it, whose results are cited.
	items []*vm.Program
	// fields reports that the expression may see an event's fields
	// (seesFields).
	fields bool
}

type keyRef struct{ root, key string }

var (
	keyedRoots = []string{"settings", "env", "versions"}
	citedRoots = []string{"gpus", "procs", "disks", "memory", "topology", "state", "log", "event", "engine", "version"}
	itemFuncs  = []string{"any", "all", "one", "filter", "count", "find", "findLast"}
)

// exprError is a compile error at a position inside the expression (line
// from 1, column in runes from 0), or at its start when unknown.
type exprError struct {
	line, col int
	msg       string
}

// compile compiles src against the view. asBool demands a boolean result.
// noEvent rejects `event` and `matches`, which only rules with match set.
func compile(src string, asBool, noEvent bool) (*program, *exprError) {
	opts := []expr.Option{expr.Env(env{}), expr.Optimize(true)}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	p, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, toExprError(err)
	}
	// A message part prints its value: one that is not a scalar may print
	// an event whole.
	out := &program{src: src, prog: p, fields: !asBool && (p.Node() == nil || !scalar(p.Node().Type()))}
	tree, err := exprparser.Parse(src)
	if err != nil {
		out.fields = true
		return out, nil // compiled already; the citations are a bonus
	}
	out.fields = out.fields || seesFields(tree.Node)
	var bad *exprError
	exprast.Find(tree.Node, func(n exprast.Node) bool {
		switch x := n.(type) {
		case *exprast.IdentifierNode:
			if noEvent && (x.Value == "event" || x.Value == "matches") && bad == nil {
				loc := x.Location()
				bad = &exprError{line: 1, col: loc.From, msg: fmt.Sprintf("%s is only set in a rule with match", x.Value)}
				bad.line, bad.col = lineCol(src, loc.From)
			}
			if containsStr(citedRoots, x.Value) && !containsStr(out.roots, x.Value) {
				out.roots = append(out.roots, x.Value)
			}
		case *exprast.MemberNode:
			id, ok1 := x.Node.(*exprast.IdentifierNode)
			key, ok2 := x.Property.(*exprast.StringNode)
			if ok1 && ok2 && containsStr(keyedRoots, id.Value) {
				out.keys = append(out.keys, keyRef{id.Value, key.Value})
			}
		case *exprast.BuiltinNode:
			if !containsStr(itemFuncs, x.Name) || len(x.Arguments) != 2 {
				break
			}
			if !collection(x.Arguments[0]) {
				break
			}
			pred, ok := x.Arguments[1].(*exprast.PredicateNode)
			if !ok {
				break
			}
			q := fmt.Sprintf("filter(%s, %s)", x.Arguments[0].String(), pred.Node.String())
			if ip, err := expr.Compile(q, expr.Env(env{})); err == nil {
				out.items = append(out.items, ip)
			}
		}
		return false
	})
	if bad != nil {
		return nil, bad
	}
	return out, nil
}

// wholeValueFuncs are the builtins that can show a value whole, an event's
// fields with the rest: as text or JSON, or its members by name.
var wholeValueFuncs = []string{"toJSON", "string", "get", "keys", "values", "toPairs"}

// seesFields reports whether an expression may see an event's fields: it
// names them (event.fields, .fields, get(e, "fields")), reads a member by a
// key it computes, or shows a value whole (wholeValueFuncs). Otherwise the
// events a rule's expressions see are built without their fields, which
// would be most of the cost of events() over every event of a bundle. It
// errs on the side of true.
func seesFields(tree exprast.Node) bool {
	return exprast.Find(tree, func(n exprast.Node) bool {
		switch x := n.(type) {
		case *exprast.IdentifierNode:
			return x.Value == "fields"
		case *exprast.StringNode:
			return x.Value == "fields"
		case *exprast.MemberNode:
			switch x.Property.(type) {
			case *exprast.StringNode, *exprast.IntegerNode:
				return false
			}
			return true
		case *exprast.BuiltinNode:
			return containsStr(wholeValueFuncs, x.Name)
		}
		return false
	}) != nil
}

// scalar reports a type that a message prints without its parts: a string,
// number or flag. A message part of another type (an event, a list of them,
// an unknown type) may print an event's fields.
func scalar(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// collection reports a view collection: gpus, procs, disks or events(...).
func collection(n exprast.Node) bool {
	switch x := n.(type) {
	case *exprast.IdentifierNode:
		return x.Value == "gpus" || x.Value == "procs" || x.Value == "disks"
	case *exprast.CallNode:
		id, ok := x.Callee.(*exprast.IdentifierNode)
		return ok && id.Value == "events"
	}
	return false
}

// typeNames speaks of the view's records by the names a pack writes,
// not by their Go types.
var typeNames = strings.NewReplacer("pack.GPU", "gpu", "pack.Proc", "proc", "pack.Disk", "disk",
	"pack.State", "state", "pack.Log", "log", "pack.Event", "event", "pack.env", "the view", "pack.View", "the view")

func toExprError(err error) *exprError {
	var fe *file.Error
	if errors.As(err, &fe) && fe.Line > 0 {
		return &exprError{line: fe.Line, col: fe.Column, msg: typeNames.Replace(fe.Message)}
	}
	return &exprError{line: 1, col: 0, msg: typeNames.Replace(err.Error())}
}

// lineCol converts a rune offset of src into expr's line and column.
func lineCol(src string, off int) (int, int) {
	line, col, i := 1, 0, 0
	for _, r := range src {
		if i == off {
			break
		}
		if r == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
		i++
	}
	return line, col
}

func (p *program) run(e *env) (any, error) {
	return expr.Run(p.prog, e)
}

func (p *program) bool(e *env) (bool, error) {
	out, err := p.run(e)
	if err != nil {
		return false, err
	}
	b, _ := out.(bool)
	return b, nil
}

// cites returns the evidence behind what the expression read: the
// settings, variables and versions it looked up by name, the items of
// the collections its predicates held for, and the snapshots of the
// records it named.
func (p *program) cites(e *env) []rules.Evidence {
	v := &e.View
	var out []rules.Evidence
	for _, k := range p.keys {
		var m map[string]rules.Evidence
		switch k.root {
		case "settings":
			m = v.settingSrc
		case "env":
			m = v.envSrc
		case "versions":
			m = v.versionSrc
		}
		if ev, ok := m[k.key]; ok {
			out = append(out, ev)
		}
	}
	cited := map[string]bool{}
	for _, ip := range p.items {
		res, err := expr.Run(ip, e)
		if err != nil {
			continue
		}
		rv := reflect.ValueOf(res)
		if rv.Kind() != reflect.Slice {
			continue
		}
		for i := 0; i < rv.Len() && i < 3; i++ {
			if ev, ok := cite(rv.Index(i).Interface()); ok {
				out = append(out, ev)
				cited[kindOf(rv.Index(i).Interface())] = true
			}
		}
	}
	for _, r := range p.roots {
		var ev rules.Evidence
		switch r {
		case "gpus":
			if cited["gpus"] {
				continue
			}
			ev = v.gpuSrc
		case "procs":
			if cited["procs"] {
				continue
			}
			ev = v.procSrc
		case "state":
			ev = v.stateSrc
		case "log", "engine", "version":
			ev = v.logSrc
		case "memory":
			ev = v.memSrc
		case "topology":
			ev = v.topoSrc
		case "event":
			if v.Event.fact != nil {
				ev = rules.Ev(v.Event.fact)
			}
		}
		if ev.Src.File != "" {
			out = append(out, ev)
		}
	}
	return out
}

func kindOf(item any) string {
	switch item.(type) {
	case GPU:
		return "gpus"
	case Proc:
		return "procs"
	case Disk:
		return "disks"
	}
	return "events"
}

// template is a message with {{ expr }} parts.
type template struct {
	parts []tplPart
}

// seesFields reports that a part may see an event's fields.
func (t *template) seesFields() bool {
	for _, p := range t.parts {
		if p.prog != nil && p.prog.fields {
			return true
		}
	}
	return false
}

type tplPart struct {
	lit  string
	prog *program
}

// tplError is a template error at a byte offset of the message.
type tplError struct {
	off int
	err *exprError
}

func compileTemplate(s string, noEvent bool) (*template, *tplError) {
	t := &template{}
	rest, base := s, 0
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.parts = append(t.parts, tplPart{lit: rest})
			return t, nil
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, &tplError{off: base + i, err: &exprError{line: 1, msg: "{{ without }}"}}
		}
		t.parts = append(t.parts, tplPart{lit: rest[:i]})
		inner := rest[i+2 : i+j]
		p, err := compile(strings.TrimSpace(inner), false, noEvent)
		if err != nil {
			lead := len(inner) - len(strings.TrimLeft(inner, " \t"))
			return nil, &tplError{off: base + i + 2 + lead, err: err}
		}
		t.parts = append(t.parts, tplPart{prog: p})
		base += i + j + 2
		rest = rest[i+j+2:]
	}
}

func (t *template) render(e *env) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.prog == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := p.prog.run(e)
		if err != nil {
			return "", err
		}
		b.WriteString(format(v))
	}
	return b.String(), nil
}

// format renders a value in a message: whole numbers without decimals,
// others with at most two.
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprint(int64(x))
		}
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
	case string:
		return x
	}
	return fmt.Sprint(v)
}
