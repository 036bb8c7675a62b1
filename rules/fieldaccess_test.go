package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRulesReadTypedFields keeps the rules, the report and diff on the typed
// payloads of log events: a by-name read (e.Num("elapsed_s"), e.Str(...),
// e.Bool(...), facts.Fields) compiles whatever the name, so a renamed or
// mistyped field would silently read nothing. By-name reads are for user
// packs (rules/pack) and tests.
func TestRulesReadTypedFields(t *testing.T) {
	var files []string
	for _, dir := range []string{".", "derive", "../reports", "../internal/compare", "../parser/runs"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	require.Greater(t, len(files), 40)
	fset := token.NewFileSet()
	for _, path := range files {
		file, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "facts" && sel.Sel.Name == "Fields" {
				assert.Fail(t, "by-name field read", "%s: facts.Fields", fset.Position(call.Pos()))
			}
			switch sel.Sel.Name {
			case "Num", "Str", "Bool":
				if len(call.Args) == 1 {
					if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						assert.Fail(t, "by-name field read", "%s: %s(%s)", fset.Position(call.Pos()), sel.Sel.Name, lit.Value)
					}
				}
			}
			return true
		})
	}
}
