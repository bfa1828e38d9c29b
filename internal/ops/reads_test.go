package ops

import (
	"context"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// A read beyond the bound waits for a slot, then is answered UNAVAILABLE
// with a retry delay; a slot given back serves the next read.
func TestReadSlots(t *testing.T) {
	const wait = 50 * time.Millisecond
	r := newReadSlots(2, wait)
	ctx := context.Background()
	first, err := r.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.take(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = r.take(ctx)
	e, ok := apierror.From(err)
	if !ok || e.Code != apierror.Unavailable || e.RetryDelay <= 0 {
		t.Fatalf("a read beyond the bound: %v, want UNAVAILABLE with a retry delay", err)
	}
	if took := time.Since(start); took < wait {
		t.Errorf("refused after %s, before the wait of %s", took, wait)
	}

	go func() { time.Sleep(wait / 5); first() }()
	if _, err := r.take(ctx); err != nil {
		t.Fatalf("a read waiting while a slot is given back: %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.take(cancelled); apierror.CodeOf(err) != apierror.Cancelled {
		t.Errorf("a read whose client left: %v, want CANCELLED", err)
	}

	unbounded := newReadSlots(0, 0)
	for range 100 {
		if _, err := unbounded.take(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
