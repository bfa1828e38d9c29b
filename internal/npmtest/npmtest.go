// Package npmtest installs pinned npm packages for tests that run
// JavaScript or TypeScript tools (the published TypeScript client, its
// compiler): once per machine, into the user cache directory, so that only
// the first run needs the registry.
//
// Without npm, or when the install fails (offline), the test is skipped,
// saying why; when CI is set it fails instead, as pgtest does for a missing
// PostgreSQL: CI has npm and the registry, and a test that skips there
// would pass without having run.
package npmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Set is a set of packages installed together.
type Set struct {
	// Name names the set in the cache directory (folio-<Name>).
	Name string
	// Packages are npm specs pinned to exact versions (name@version):
	// the cache is keyed by them, and a range would make it stale.
	Packages []string
	// Ready is a path under node_modules that exists once the install is
	// complete (a package's main file, a tool in .bin).
	Ready string
	// Env names a variable that, when set, is a directory whose
	// node_modules already holds the packages: npm is not run.
	Env string
}

// Install returns a directory whose node_modules holds s's packages,
// installing them the first time. It skips (fails under CI) tb without npm
// or when npm cannot install them.
func Install(tb testing.TB, s Set) string {
	tb.Helper()
	if s.Env != "" {
		if d := os.Getenv(s.Env); d != "" {
			return d
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		Unavailable(tb, "npm is not on PATH")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "folio-"+s.Name, strings.NewReplacer("@", "", "/", "-").Replace(strings.Join(s.Packages, "_")))
	if exists(filepath.Join(dir, "node_modules", s.Ready)) {
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
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// --ignore-scripts: nothing the packages ship runs at install time.
	args := append([]string{"install", "--ignore-scripts", "--no-audit", "--no-fund"}, s.Packages...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		Unavailable(tb, "npm install "+strings.Join(s.Packages, " ")+" failed (offline?): "+err.Error()+"\n"+string(out))
	}
	if err := os.Rename(tmp, dir); err != nil && !exists(filepath.Join(dir, "node_modules", s.Ready)) {
		tb.Fatalf("put the npm install in place: %v", err)
	}
	return dir
}

// Unavailable skips tb because a tool it needs is missing, or fails it
// when CI is set.
func Unavailable(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("required in CI: %s", why)
	}
	tb.Skipf("skipping: %s", why)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
