// Package archtest checks the rules of the architecture that the compiler
// does not: which packages may import which (docs/architecture.md).
package archtest

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
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
// internal/suggest names the close member of a mistyped one in errors.
var transportMayImport = []string{"internal/ops", "internal/apierror", "internal/jsonscan", "internal/suggest", wireDefinitions}

// wirePackages are the packages that only transports (and the node that
// starts them, and tools that are clients) may import. (The wire's
// definitions, wireDefinitions, have a rule of their own; the official
// clients' modules, which no package outside tests may link, are
// notInTheBinary.)
var wirePackages = []string{"net/http", "google.golang.org/grpc", "google.golang.org/protobuf"}

// mayKnowTheWire are the packages above the operations: the Go client,
// the transports, the HTTP/1.1 server the HTTP transport runs on (which
// imports no Folio package), the node that starts them, the metrics
// (served over HTTP to a scraper),
// the web console's file server (internal/console, which serves files over
// HTTP and knows nothing else of Folio, TestTheConsoleServesFilesOnly),
// the load generator (an HTTP and a gRPC client), the benchmarks that run servers
// and call them, the tests' runner of `folio serve` (which asks it for its
// health); and the wire's generated definitions themselves, and the
// program that writes the client's shapes from them.
var mayKnowTheWire = []string{"client", "internal/httpapi", "internal/grpcapi", "internal/http1", "internal/node", "internal/metrics", "internal/console", "internal/loadgen", "bench/benchrun", "tests/servetest", "cmd/folio", "bench/cmd/benchcompare", "bench/cmd/searchcompare", "bench/cmd/cachecompare", "bench/cmd/aggcompare", wireDefinitions, clientShapesGenerator}

// wireDefinitions is the Go code generated from Folio's .proto files
// (api/proto): the API's messages and services. Only the packages that
// speak the wire import it (and tests, which this test does not read):
// the transports, the Go client, searchcompare, which calls a server's
// search over gRPC, and the load generator, whose gRPC driver calls the
// API as the official clients do; and the generator of the client's shapes, which reads
// its descriptors (a program go generate runs: the client itself imports
// the standard library only).
const wireDefinitions = "internal/wire/tigrisv1"

// clientShapesGenerator writes client/shapes_gen.go from wireDefinitions.
const clientShapesGenerator = "client/internal/shapegen"

var mayImportWireDefinitions = append([]string{"client", "bench/cmd/searchcompare", "bench/cmd/cachecompare", "internal/loadgen", clientShapesGenerator}, transports...)

func TestOnlyTransportsAndTheClientImportTheWireDefinitions(t *testing.T) {
	imports := packageImports(t)
	if _, ok := imports[wireDefinitions]; !ok {
		t.Fatalf("no package %s: the rule is out of date", wireDefinitions)
	}
	for pkg, imps := range imports {
		if slices.Contains(mayImportWireDefinitions, pkg) {
			continue
		}
		for _, imp := range imps {
			if imp == module+wireDefinitions {
				t.Errorf("%s imports %s: only %v speak the wire; call internal/ops", pkg, wireDefinitions, mayImportWireDefinitions)
			}
		}
	}
}

// prometheus is the Prometheus client, which only internal/metrics
// imports: the parts (kv and its backends above all) report plain Stats
// structs, and the operations an ops.Observer, that it reads.
const prometheus = "github.com/prometheus/"

func TestOnlyMetricsImportsPrometheus(t *testing.T) {
	imports := packageImports(t)
	if !slices.ContainsFunc(imports["internal/metrics"], func(imp string) bool { return strings.HasPrefix(imp, prometheus) }) {
		t.Fatal("internal/metrics imports no Prometheus package: the rule is out of date")
	}
	for pkg, imps := range imports {
		if pkg == "internal/metrics" {
			continue
		}
		for _, imp := range imps {
			if strings.HasPrefix(imp, prometheus) {
				t.Errorf("%s imports %s: only internal/metrics knows Prometheus; report a Stats struct it reads", pkg, imp)
			}
		}
	}
}

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

// backends are the storage engines; pickBackends the packages that may
// import them: the node picks one for a server, `folio` for the tools that
// open a data directory themselves (backup, restore), and backendtest for
// the tests; internal/metrics picks none but reads each backend's Stats
// type. Everything else takes the kv interface (internal/backup too:
// restore is handed a function that opens a store).
var (
	backends     = []string{"internal/kv/pebblekv", "internal/kv/sqlkv"}
	pickBackends = []string{"internal/node", "cmd/folio", "tests/backendtest", "internal/metrics"}
)

func TestBackendsArePickedInOnePlace(t *testing.T) {
	for pkg, imps := range packageImports(t) {
		if slices.Contains(pickBackends, pkg) {
			continue
		}
		for _, imp := range imps {
			if rel, ok := strings.CutPrefix(imp, module); ok && slices.Contains(backends, rel) {
				t.Errorf("%s imports %s: only %v pick a backend; take kv.Store (or kv.Checkpointer)", pkg, rel, pickBackends)
			}
		}
	}
}

// fileImports maps each non-test Go file of the module (by its path inside
// the module) to what it imports.
func fileImports(t *testing.T) map[string][]string {
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
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil // a program run with go run, in no package (scripts/)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		out[rel] = nil // a file that imports nothing still counts
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			out[rel] = append(out[rel], imp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// packageImports maps each package of the module (by its path inside the
// module) to what its non-test files import: fileImports by directory.
func packageImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for file, imps := range fileImports(t) {
		pkg := path.Dir(file)
		out[pkg] = append(out[pkg], imps...) // a package that imports nothing still counts
		if out[pkg] == nil {
			out[pkg] = []string{}
		}
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

// notInTheBinary are modules the folio binary must not link: the official
// Go client (a test dependency, the judge of the API: its generated
// package registers the same protobuf names as Folio's own, and a binary
// with both panics at start) and the HTTP gateway it brings.
var notInTheBinary = []string{"github.com/tigrisdata/tigris-client-go", "github.com/grpc-ecosystem/grpc-gateway"}

func TestTheBinaryLinksNoOfficialClient(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH to list the binary's packages")
	}
	cmd := exec.Command(goTool, "list", "-deps", module+"cmd/folio")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+wireDefinitions) {
		t.Fatalf("cmd/folio does not link %s: the rule is out of date", wireDefinitions)
	}
	for _, dep := range deps {
		for _, banned := range notInTheBinary {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("cmd/folio links %s: the official clients are test dependencies only; use %s", dep, wireDefinitions)
			}
		}
	}
}

// ignored tells whether a file is left out of every build by its
// "//go:build ignore" line.
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if expr, err := constraint.Parse(c.Text); err == nil && expr.String() == "ignore" {
				return true
			}
		}
	}
	return false
}

// TestTheHTTPServerKnowsNoFolio: internal/http1 serves HTTP/1.1 for any
// net/http handler; what the API answers is httpapi's, given to it.
func TestTheHTTPServerKnowsNoFolio(t *testing.T) {
	for _, imp := range packageImports(t)["internal/http1"] {
		if strings.HasPrefix(imp, module) {
			t.Errorf("internal/http1 imports %s: it serves any handler, and is given what it answers", imp)
		}
	}
}

// TestTheConsoleServesFilesOnly: internal/console serves the console's
// static files; everything the console shows it gets from the public API
// in the browser, with the caller's token, as any client does. Importing
// the operations (or any Folio package) would open a second way to the
// data, past the API's checks.
func TestTheConsoleServesFilesOnly(t *testing.T) {
	imps, ok := packageImports(t)["internal/console"]
	if !ok {
		t.Fatal("no package internal/console: the rule is out of date")
	}
	for _, imp := range imps {
		if strings.HasPrefix(imp, module) {
			t.Errorf("internal/console imports %s: it serves files only; the console's data comes through the public API", imp)
		}
	}
}
