package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toolingRoots hold the tooling that is not the product (issue 42): tests/
// the whole-system suites and the tests' helpers, bench/ the comparison
// tools (a module of its own). The server binary links none of it.
var toolingRoots = []string{"tests", "bench"}

// TestTheBinaryLinksNoTooling checks what a user deploys: the packages of
// Folio's that `go list -deps ./cmd/folio` holds. None is under tests/ or
// bench/, and none is named for tests (internal/kv/kvtest, the storage
// conformance suite that stays beside kv, included). Dependencies' own
// test packages (the standard library's internal/synctest, Pebble's
// internal/blobtest) are theirs, and not judged here. `folio bench` and
// internal/loadgen are in the binary on purpose: docs/architecture.md says
// why.
func TestTheBinaryLinksNoTooling(t *testing.T) {
	for _, root := range toolingRoots {
		if _, err := os.Stat(filepath.Join("../..", root)); err != nil {
			t.Fatalf("no %s/ at the repository's root: the rule is out of date (%v)", root, err)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH to list the binary's packages")
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{.Name}}", module+"cmd/folio")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	ours := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, _ := strings.Cut(line, " ")
		rel, ok := strings.CutPrefix(path, module)
		if !ok {
			continue
		}
		ours++
		for _, root := range toolingRoots {
			if strings.HasPrefix(rel, root+"/") {
				t.Errorf("cmd/folio links %s: the tooling under %s/ stays out of the server binary", rel, root)
			}
		}
		if strings.HasSuffix(name, "test") {
			t.Errorf("cmd/folio links %s (package %s): a package for tests stays out of the server binary; import it from _test.go files only", rel, name)
		}
	}
	if ours == 0 {
		t.Fatal("go list -deps listed no package of Folio's: the rule is out of date")
	}
}
