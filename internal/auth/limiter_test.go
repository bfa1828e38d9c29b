package auth

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// The lockout's message names the delay its Retry-After header gives
// (whole seconds, rounded up), at every point of the drain: before, a wait
// of 1.4 s said "retry in 1s" beside a header of 2, and under half a
// second "retry in 0s".
func TestLimiterMessageMatchesRetryAfter(t *testing.T) {
	l := newLimiter(5, time.Minute) // drains one failure every 12 s
	start := time.Unix(1_000_000, 0)
	for range 5 {
		l.fail(start, "k")
	}
	for _, after := range []time.Duration{0, time.Second, 11*time.Second + 600*time.Millisecond, 11*time.Second + 900*time.Millisecond} {
		err := l.check(start.Add(after), limit{"k", 1})
		var se *apierror.Error
		if !errors.As(err, &se) || se.Code != apierror.ResourceExhausted {
			t.Fatalf("after %s: %v, want RESOURCE_EXHAUSTED", after, err)
		}
		header := int(math.Ceil(se.RetryDelay.Seconds()))
		if header < 1 {
			t.Fatalf("after %s: retry delay %s", after, se.RetryDelay)
		}
		if want := fmt.Sprintf("retry in %ds", header); !strings.HasSuffix(se.Message, want) {
			t.Errorf("after %s: message %q, want it to end %q (Retry-After %d)", after, se.Message, want, header)
		}
	}
	if err := l.check(start.Add(12*time.Second), limit{"k", 1}); err != nil {
		t.Errorf("after a failure drained: %v", err)
	}
}
