package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// DefaultReadWait is Config.ReadWait's default.
const DefaultReadWait = 2 * time.Second

// readSlots bounds the streaming reads (documents/read, messages/read) that
// run at once in transactions of their own. A read holds its transaction,
// and on PostgreSQL a pooled connection, for as long as its client takes
// to receive the results: without a bound, clients that read slowly, or
// never, would hold every connection and starve the short requests.
// Reads in an interactive transaction use the connection it already
// holds, and take no slot.
type readSlots struct {
	slots chan struct{} // nil: unbounded
	wait  time.Duration
}

func newReadSlots(limit int, wait time.Duration) readSlots {
	if limit <= 0 {
		return readSlots{}
	}
	if wait <= 0 {
		wait = DefaultReadWait
	}
	return readSlots{slots: make(chan struct{}, limit), wait: wait}
}

// take waits up to r.wait for a slot and returns the function that gives
// it back; past the wait the read is answered UNAVAILABLE.
func (r readSlots) take(ctx context.Context) (release func(), err error) {
	if r.slots == nil {
		return func() {}, nil
	}
	release = func() { <-r.slots }
	select {
	case r.slots <- struct{}{}:
		return release, nil
	default:
	}
	timer := time.NewTimer(r.wait)
	defer timer.Stop()
	select {
	case r.slots <- struct{}{}:
		return release, nil
	case <-timer.C:
		return nil, &apierror.Error{Code: apierror.Unavailable, RetryDelay: unavailableRetryDelay,
			Message: fmt.Sprintf("too many reads in progress on this node (the limit is %d): retry later", cap(r.slots))}
	case <-ctx.Done():
		return nil, apiError(ctx, ctx.Err())
	}
}
