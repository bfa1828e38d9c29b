package ops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryCallIsObserved: every API method (an exported method of Ops
// that takes a Caller) defers observe first, under its own name, so that
// a call added later is counted in the request metrics too.
func TestEveryCallIsObserved(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || !takesCaller(fn) {
				continue
			}
			calls++
			if got := observedAs(fn); got != fn.Name.Name {
				t.Errorf("%s: Ops.%s does not start with defer o.observe(c, %q, time.Now(), &err) (found %q)", fset.Position(fn.Pos()), fn.Name.Name, fn.Name.Name, got)
			}
		}
	}
	if calls < 30 {
		t.Fatalf("found %d API methods: the check is out of date", calls)
	}
}

func takesCaller(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		if id, ok := p.Type.(*ast.Ident); ok && id.Name == "Caller" {
			return true
		}
	}
	return false
}

// observedAs is the operation name of fn's first statement if it is a
// deferred call of o.observe, else "".
func observedAs(fn *ast.FuncDecl) string {
	if len(fn.Body.List) == 0 {
		return ""
	}
	d, ok := fn.Body.List[0].(*ast.DeferStmt)
	if !ok {
		return ""
	}
	sel, ok := d.Call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "observe" || len(d.Call.Args) != 4 {
		return ""
	}
	lit, ok := d.Call.Args[1].(*ast.BasicLit)
	if !ok {
		return ""
	}
	name, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return name
}
