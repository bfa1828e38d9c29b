package testenv

import (
	"strings"
	"testing"
)

// recorder stands in for a test, to see whether Missing skipped or
// failed it. Both end the test's goroutine, as the real ones do.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = format
	panic(r)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	panic(r)
}

func missing(ci string, t *testing.T) *recorder {
	t.Setenv("CI", ci)
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != r {
				t.Fatalf("Missing returned or panicked otherwise: %v", p)
			}
		}()
		Missing(r, "javac is not on PATH")
	}()
	return r
}

func TestMissingSkipsOutsideCI(t *testing.T) {
	if r := missing("", t); r.skipped == "" || r.failed != "" {
		t.Errorf("without CI: skipped %q, failed %q; want a skip", r.skipped, r.failed)
	}
}

func TestMissingFailsUnderCI(t *testing.T) {
	for _, ci := range []string{"true", "1"} {
		if r := missing(ci, t); r.failed == "" || r.skipped != "" || !strings.Contains(r.failed, "required in CI") {
			t.Errorf("CI=%s: skipped %q, failed %q; want a failure", ci, r.skipped, r.failed)
		}
	}
}
