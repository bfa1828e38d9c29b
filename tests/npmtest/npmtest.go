// Package npmtest installs the npm projects of the repository that tests
// run JavaScript or TypeScript tools from (the published TypeScript
// client, its compiler). Each project is a directory holding a
// package.json and the package-lock.json that pins its whole tree, every
// package by version and integrity hash: the install is `npm ci` from that
// lockfile, so every machine runs the same packages whatever the registry
// publishes later. It is done once per machine and lockfile, into the user
// cache directory, so that only the first run needs the registry.
//
// Without npm, or when the install fails (offline), the test is skipped,
// saying why; under CI it fails instead (tests/testenv). A lockfile
// that does not pin its package.json fails the test everywhere: that is a
// mistake in the repository, not a missing tool.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/testenv"
)

// Project is an npm project of the repository.
type Project struct {
	// Name names the project in the cache directory (folio-<Name>).
	Name string
	// Dir holds the project's package.json and package-lock.json
	// (relative paths are from the test's package directory).
	Dir string
	// Ready is a path under node_modules that exists once the install is
	// complete (a package's main file, a tool in .bin).
	Ready string
	// Env names a variable that, when set, is a directory whose
	// node_modules already holds the packages: npm is not run.
	Env string
}

// Install returns a directory whose node_modules holds p's packages as
// its lockfile pins them, installing them the first time. It skips tb
// (fails it under CI) without npm or when npm cannot install them.
func Install(tb testing.TB, p Project) string {
	tb.Helper()
	if p.Env != "" {
		if d := os.Getenv(p.Env); d != "" {
			return d
		}
	}
	manifest, lock, err := Read(p.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		testenv.Missing(tb, "npm is not on PATH")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	// Keyed by the two files: a new lockfile is a new install, and an
	// install never changes once in place.
	sum := sha256.New()
	sum.Write(manifest)
	sum.Write([]byte{0})
	sum.Write(lock)
	dir := filepath.Join(cache, "folio-"+p.Name, hex.EncodeToString(sum.Sum(nil))[:16])
	if exists(filepath.Join(dir, "node_modules", p.Ready)) {
		return dir
	}
	// Installed beside, then renamed into place, so that a test run that
	// stops halfway or runs alongside leaves no half-installed cache.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// npm ci installs exactly the lockfile's tree and refuses to change it;
	// --ignore-scripts: nothing the packages ship runs at install time.
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		testenv.Missing(tb, "npm ci of "+p.Dir+" failed (offline?): "+err.Error()+"\n"+string(out))
	}
	if !exists(filepath.Join(tmp, "node_modules", p.Ready)) {
		tb.Fatalf("npm ci of %s installed no %s", p.Dir, p.Ready)
	}
	if err := os.Rename(tmp, dir); err != nil && !exists(filepath.Join(dir, "node_modules", p.Ready)) {
		tb.Fatalf("put the npm install in place: %v", err)
	}
	return dir
}

// Read returns the package.json and package-lock.json of the project in
// dir, with an error if the lockfile does not pin the package.json's
// dependencies and every package of the tree by version and integrity.
func Read(dir string) (manifest, lock []byte, err error) {
	if manifest, err = os.ReadFile(filepath.Join(dir, "package.json")); err != nil {
		return nil, nil, err
	}
	if lock, err = os.ReadFile(filepath.Join(dir, "package-lock.json")); err != nil {
		return nil, nil, fmt.Errorf("%w: every npm project a test installs has its lockfile (npm install --package-lock-only)", err)
	}
	if err := checkLock(manifest, lock); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return manifest, lock, nil
}

func checkLock(manifest, lock []byte) error {
	var m struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(manifest, &m); err != nil {
		return fmt.Errorf("package.json: %w", err)
	}
	var l struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version         string            `json:"version"`
			Integrity       string            `json:"integrity"`
			Link            bool              `json:"link"`
			Dependencies    map[string]string `json:"dependencies"`
			DevDependencies map[string]string `json:"devDependencies"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		return fmt.Errorf("package-lock.json: %w", err)
	}
	// Version 1 has no "packages": npm 7 and later rewrite it on install.
	if l.LockfileVersion < 2 {
		return fmt.Errorf("package-lock.json is version %d; npm 7 or later writes 2 or 3", l.LockfileVersion)
	}
	root, ok := l.Packages[""]
	if !ok {
		return fmt.Errorf("package-lock.json has no root package")
	}
	// npm ci refuses a lockfile out of step with package.json, but only
	// once npm and the registry are there: this says so on every machine.
	if !sameDeps(root.Dependencies, m.Dependencies) || !sameDeps(root.DevDependencies, m.DevDependencies) {
		return fmt.Errorf("package-lock.json locks %v, package.json asks for %v: run npm install --package-lock-only",
			merge(root.Dependencies, root.DevDependencies), merge(m.Dependencies, m.DevDependencies))
	}
	var unpinned []string
	for path, pkg := range l.Packages {
		if path == "" {
			continue
		}
		if pkg.Link || pkg.Version == "" || !strings.HasPrefix(pkg.Integrity, "sha512-") {
			unpinned = append(unpinned, path)
		}
	}
	if len(unpinned) > 0 {
		sort.Strings(unpinned)
		return fmt.Errorf("package-lock.json does not pin %s by version and sha512 integrity", strings.Join(unpinned, ", "))
	}
	return nil
}

func sameDeps(a, b map[string]string) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
