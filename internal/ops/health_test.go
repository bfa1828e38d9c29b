package ops

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// A flood of health checks costs one probe a second, and they all get its
// outcome.
func TestHealthProbeCached(t *testing.T) {
	h := newHealthProbe()
	var probes atomic.Int32
	var result atomic.Value
	result.Store(fmt.Errorf("ping: %w", kv.ErrUnavailable))
	probe := func(ctx context.Context) error {
		probes.Add(1)
		time.Sleep(20 * time.Millisecond) // checks pile up meanwhile
		err, _ := result.Load().(error)
		return err
	}
	flood := func() {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				if err := h.check(context.Background(), probe); !errors.Is(err, kv.ErrUnavailable) {
					t.Errorf("check while down: %v", err)
				}
			})
		}
		wg.Wait()
	}
	flood()
	flood()
	if n := probes.Load(); n != 1 {
		t.Fatalf("%d probes for 100 checks within a second, want 1", n)
	}
	time.Sleep(healthProbeEvery)
	flood()
	if n := probes.Load(); n != 2 {
		t.Fatalf("%d probes after a second, want 2", n)
	}

	// A check that gives up waiting does not disturb the probe.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.turn <- struct{}{}
	if err := h.check(ctx, probe); !errors.Is(err, context.Canceled) {
		t.Errorf("check cancelled while waiting: %v", err)
	}
	<-h.turn
}
