// Package testenv decides, in one place, what a test does when a tool it
// needs (PostgreSQL's server programs, node, npm, javac, the npm registry)
// is missing: outside CI it skips, saying why, so that the suite runs on
// any machine; under CI it fails, as CI installs every tool (.ci/run) and
// a test that skipped there would pass without having run.
package testenv

import (
	"os"
	"testing"
)

// CI reports whether the tests run under CI: the CI environment variable
// is set (.ci/run sets it, as most CI services do).
func CI() bool { return os.Getenv("CI") != "" }

// Missing skips tb because something it needs is missing, or fails it
// under CI.
func Missing(tb testing.TB, why string) {
	tb.Helper()
	if CI() {
		tb.Fatalf("required in CI: %s", why)
	}
	tb.Skipf("skipping: %s", why)
}
