package pack

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Error is one defect of a pack, where it is.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		return e.Msg
	case e.Line <= 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Col <= 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Errors is every defect found in a set of packs, in file and line order,
// so that a user fixes them in one round.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

func (es Errors) sort() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// YAMLError places an error of the YAML library (a syntax error, a type
// error) at the position it names.
func YAMLError(file string, err error) *Error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		tk := ye.GetToken()
		return &Error{File: file, Line: tk.Position.Line, Col: tk.Position.Column, Msg: ye.GetMessage()}
	}
	return &Error{File: file, Msg: err.Error()}
}

// dec walks a YAML document and collects errors with their positions.
type dec struct {
	file string
	errs Errors
}

func (d *dec) errf(n ast.Node, format string, args ...any) {
	line, col := pos(n)
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

func (d *dec) errAt(line, col int, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

// yamlErr records an error of the YAML library at the token it names.
func (d *dec) yamlErr(n ast.Node, err error) {
	e := YAMLError(d.file, err)
	if e.Line == 0 && n != nil {
		e.Line, e.Col = pos(n)
	}
	d.errs = append(d.errs, e)
}

// pos is where a node starts. A mapping's own token is the colon of its
// first pair, so it answers with the first key instead.
func pos(n ast.Node) (int, int) {
	if n == nil {
		return 0, 0
	}
	switch m := n.(type) {
	case *ast.MappingNode:
		if m.IsFlowStyle && m.Start != nil {
			return tokenPos(m.Start)
		}
		if len(m.Values) > 0 {
			return pos(m.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return pos(m.Key)
	case *ast.LiteralNode:
		return tokenPos(m.Start)
	}
	return tokenPos(n.GetToken())
}

func tokenPos(tk *token.Token) (int, int) {
	if tk == nil {
		return 0, 0
	}
	return tk.Position.Line, tk.Position.Column
}

// unwrap looks through anchors and tags to the value.
func unwrap(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		default:
			return n
		}
	}
}

// pairs returns a mapping's key/value pairs; ok is false for anything else.
func pairs(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := unwrap(n).(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

// keyName is a mapping key as text.
func keyName(p *ast.MappingValueNode) string {
	if p.Key == nil {
		return ""
	}
	return p.Key.GetToken().Value
}

func kindName(n ast.Node) string {
	switch unwrap(n).(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode, nil:
		return "nothing"
	case *ast.AliasNode:
		return "an alias"
	}
	return "a scalar"
}

// fieldsOf checks the keys of a mapping against the known ones and
// returns the values by key. Unknown and repeated keys are errors.
func (d *dec) fieldsOf(n ast.Node, what string, known []string) (map[string]ast.Node, bool) {
	ps, ok := pairs(n)
	if !ok {
		d.errf(n, "%s: want a mapping, got %s", what, kindName(n))
		return nil, false
	}
	out := map[string]ast.Node{}
	for _, p := range ps {
		k := keyName(p)
		if !containsStr(known, k) {
			d.errf(p.Key, "%s: unknown field %q (known: %s)", what, k, strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k]; dup {
			d.errf(p.Key, "%s: field %q given twice", what, k)
			continue
		}
		out[k] = p.Value
	}
	return out, true
}

func (d *dec) str(n ast.Node, what string) (string, bool) {
	switch x := unwrap(n).(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		return x.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return x.GetToken().Value, true
	case *ast.NullNode:
		return "", true
	}
	d.errf(n, "%s: want a string, got %s", what, kindName(n))
	return "", false
}

// strs reads a list of strings; a single string is a list of one.
func (d *dec) strs(n ast.Node, what string) ([]string, []ast.Node, bool) {
	seq, ok := unwrap(n).(*ast.SequenceNode)
	if !ok {
		s, ok := d.str(n, what)
		if !ok || s == "" {
			return nil, nil, ok
		}
		return []string{s}, []ast.Node{n}, true
	}
	var out []string
	var nodes []ast.Node
	good := true
	for _, v := range seq.Values {
		s, ok := d.str(v, what)
		good = good && ok
		if ok {
			out = append(out, s)
			nodes = append(nodes, v)
		}
	}
	return out, nodes, good
}

func (d *dec) float(n ast.Node, what string) (float64, bool) {
	var f float64
	switch unwrap(n).(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		if err := yaml.NodeToValue(n, &f); err != nil {
			d.yamlErr(n, err)
			return 0, false
		}
		return f, true
	}
	d.errf(n, "%s: want a number, got %s", what, kindName(n))
	return 0, false
}

func (d *dec) boolean(n ast.Node, what string) (bool, bool) {
	if b, ok := unwrap(n).(*ast.BoolNode); ok {
		return b.Value, true
	}
	d.errf(n, "%s: want true or false, got %s", what, kindName(n))
	return false, false
}

// within maps a position inside a scalar's value (line from 1, column in
// runes from 0, as expr reports them) to the file. Literal blocks (|)
// start on the line after their indicator, quoted scalars one column in;
// folded blocks (>) and plain scalars over several lines join their lines
// with spaces, so a column of the joined value is walked back through the
// lines it came from.
func within(n ast.Node, line, col int) (int, int) {
	n = unwrap(n)
	switch x := n.(type) {
	case *ast.LiteralNode:
		l, _ := tokenPos(x.Start)
		origin := ""
		if x.Value != nil && x.Value.GetToken() != nil {
			origin = x.Value.GetToken().Origin
		}
		lines := strings.Split(origin, "\n")
		if x.Start != nil && x.Start.Type == token.FoldedType {
			var ps []piece
			for i, t := range lines {
				if strings.TrimSpace(t) != "" {
					ps = append(ps, piece{line: l + 1 + i, col: indentOf(t) + 1, n: utf8.RuneCountInString(strings.TrimSpace(t))})
				}
			}
			return walk(ps, col, l+1, 1)
		}
		indent := 0
		for _, t := range lines {
			if strings.TrimSpace(t) != "" {
				indent = indentOf(t)
				break
			}
		}
		return l + line, indent + col + 1
	case *ast.StringNode:
		l, c := tokenPos(x.GetToken())
		tk := x.GetToken()
		if tk != nil && (tk.Type == token.SingleQuoteType || tk.Type == token.DoubleQuoteType) {
			return l + line - 1, c + 1 + col
		}
		if tk == nil || line > 1 {
			return l + line - 1, c + col
		}
		// A plain scalar: its first line starts at the token, the others
		// at their indentation.
		lines := strings.Split(strings.TrimLeft(tk.Origin, " \t"), "\n")
		ps := []piece{{line: l, col: c, n: utf8.RuneCountInString(strings.TrimSpace(lines[0]))}}
		for i, t := range lines[1:] {
			if strings.TrimSpace(t) == "" {
				break
			}
			ps = append(ps, piece{line: l + 1 + i, col: indentOf(t) + 1, n: utf8.RuneCountInString(strings.TrimSpace(t))})
		}
		return walk(ps, col, l, c)
	}
	return pos(n)
}

// piece is one source line of a scalar whose lines were joined.
type piece struct{ line, col, n int }

// walk finds column col of the joined value in its source lines.
func walk(ps []piece, col, line0, col0 int) (int, int) {
	for _, p := range ps {
		if col <= p.n {
			return p.line, p.col + col
		}
		col -= p.n + 1 // the space the line break became
	}
	return line0, col0
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// runeCol converts a byte offset into a rune count, for positions inside
// a string that expr reports in runes.
func runeCol(s string, byteOff int) int {
	return utf8.RuneCountInString(s[:byteOff])
}
