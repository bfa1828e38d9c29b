package ops

import (
	"context"
	"time"
)

// healthProbeEvery is how long a probe of the store answers health checks:
// a flood of checks costs one probe a second.
const healthProbeEvery = time.Second

// Health reports whether the server can serve: UNAVAILABLE (with a retry
// delay) while its store cannot be reached, nil otherwise. Load balancers
// call it often, so it answers from a probe of the store (kv.Store.Ping)
// at most a second old.
func (o *Ops) Health(ctx context.Context, c Caller) (err error) {
	ctx, op, err := o.open(ctx, c, "Health")
	defer op.end(&err)
	if err != nil {
		return err
	}
	return o.health.check(ctx, o.store.Ping)
}

// healthProbe is the last probe's outcome. One check at a time probes;
// the checks that arrive meanwhile wait for its outcome rather than probe
// again.
type healthProbe struct {
	turn chan struct{} // a one-slot semaphore guarding at and err
	at   time.Time     // when the last probe ended; zero before the first
	err  error
}

func newHealthProbe() healthProbe { return healthProbe{turn: make(chan struct{}, 1)} }

func (h *healthProbe) check(ctx context.Context, probe func(context.Context) error) error {
	select {
	case h.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-h.turn }()
	if !h.at.IsZero() && time.Since(h.at) < healthProbeEvery {
		return h.err
	}
	// The outcome serves the next second's checks, so a check that gives
	// up must not cut the probe short; the store bounds it.
	h.err = probe(context.WithoutCancel(ctx))
	h.at = time.Now()
	return h.err
}
