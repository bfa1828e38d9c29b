// Package archtest checks the rules of the architecture that the compiler
// does not: which packages may import which (docs/architecture.md).
package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/foliodb/folio/"

// transports turn a wire into calls of the operations. They know their
// wire and the operations' types, and nothing of what lies below: no
// store, no transaction table, no change-log reader.
var transports = []string{"internal/httpapi", "internal/grpcapi"}

// transportMayImport is every Folio package a transport may import.
// (Outside the module, grpcapi also imports the published definitions'
// generated package, github.com/tigrisdata/tigris-client-go/api/server/v1.)
var transportMayImport = []string{"internal/ops", "internal/status", "internal/jsonscan"}

// wirePackages are the packages that only transports (and the node that
// starts them, and tools that are clients) may import.
var wirePackages = []string{"net/http", "google.golang.org/grpc", "github.com/tigrisdata/tigris-client-go"}

// mayKnowTheWire are the packages above the operations: the Go client, the transports,
// the node that starts them, the load generator (an HTTP client) and the
// benchmarks that run servers and call them.
var mayKnowTheWire = []string{"client", "internal/httpapi", "internal/grpcapi", "internal/node", "internal/loadgen", "internal/benchrun", "cmd/folio", "cmd/benchcompare", "cmd/searchcompare"}

func TestTransportsImportOnlyTheOperations(t *testing.T) {
	imports := packageImports(t)
	for _, tr := range transports {
		if _, ok := imports[tr]; !ok {
			t.Fatalf("no package %s: the list of transports is out of date", tr)
		}
		for _, imp := range imports[tr] {
			if rel, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(transportMayImport, rel) {
				t.Errorf("%s imports %s: a transport calls internal/ops and nothing below it", tr, rel)
			}
		}
	}
}

func TestNothingBelowTheTransportsKnowsTheWire(t *testing.T) {
	for pkg, imps := range packageImports(t) {
		if slices.Contains(mayKnowTheWire, pkg) {
			continue
		}
		for _, imp := range imps {
			for _, wire := range wirePackages {
				if imp == wire || strings.HasPrefix(imp, wire+"/") {
					t.Errorf("%s imports %s: only transports know their wire", pkg, imp)
				}
			}
		}
	}
}

// packageImports maps each package of the module (by its path inside the
// module) to what its non-test files import.
func packageImports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil // a package that imports nothing still counts
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			out[pkg] = append(out[pkg], imp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// publicPackages are the module's packages for other programs to import:
// they import the standard library only, so that a program that uses them
// pulls in neither the server (internal/...) nor its dependencies.
var publicPackages = []string{"client"}

func TestPublicPackagesImportOnlyTheStandardLibrary(t *testing.T) {
	imports := packageImports(t)
	for _, pkg := range publicPackages {
		imps, ok := imports[pkg]
		if !ok {
			t.Fatalf("no package %s: the list of public packages is out of date", pkg)
		}
		for _, imp := range imps {
			first, _, _ := strings.Cut(imp, "/")
			if strings.Contains(first, ".") {
				t.Errorf("%s imports %s: a public package imports the standard library only", pkg, imp)
			}
		}
	}
}
