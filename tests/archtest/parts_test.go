package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serveFile is `folio serve`: it binds flags, the environment and the
// config file onto node.Config, and so needs no other package of Folio's.
// A part's option type or default it imported would be a second place for
// the configuration (issue 42).
const serveFile = "cmd/folio/serve.go"

func TestServeImportsOnlyTheNode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("../..", serveFile), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range f.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		if rel, ok := strings.CutPrefix(imp, module); ok && rel != "internal/node" {
			t.Errorf("%s imports %s: serve takes its configuration and defaults from internal/node alone", serveFile, rel)
		}
	}
}

// partConstructors are the long-running parts' constructors: only the node
// builds them, lists them and starts and stops them in order (tests of a
// part build their own).
var partConstructors = map[string][]string{
	"internal/session": {"New"},
	"internal/streams": {"NewHub"},
	"internal/search":  {"New"},
	"internal/cluster": {"New"},
	"internal/expiry":  {"New"},
}

func TestOnlyTheNodeBuildsParts(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if pkg := filepath.ToSlash(rel); pkg == "internal/node" || partConstructors[pkg] != nil {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		names := map[string][]string{} // import name → constructors
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			ctors := partConstructors[strings.TrimPrefix(imp, module)]
			if ctors == nil {
				continue
			}
			name := filepath.Base(imp)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			names[name] = ctors
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok {
				for _, c := range names[x.Name] {
					if sel.Sel.Name == c {
						t.Errorf("%s: %s.%s: only internal/node builds the long-running parts (and starts and stops them in order)", fset.Position(sel.Pos()), x.Name, c)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
