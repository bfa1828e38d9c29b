package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RunOptions tune Run. Zero values take the defaults.
type RunOptions struct {
	MaxAttempts int           // default 10
	MinBackoff  time.Duration // default 1ms
	MaxBackoff  time.Duration // default 100ms
}

// Run runs fn in a new transaction and commits it, retrying the whole
// transaction with jittered exponential backoff when fn or the commit fails
// with a retryable error. It returns the commit position. fn must not keep
// the transaction, and must be safe to run more than once.
func Run(ctx context.Context, s Store, fn func(tx Tx) error) (Position, error) {
	return RunWith(ctx, s, RunOptions{}, fn)
}

// RunWith is Run with options.
func RunWith(ctx context.Context, s Store, opts RunOptions, fn func(tx Tx) error) (Position, error) {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 10
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 100 * time.Millisecond
	}
	var counters *TxCounters
	if c, ok := s.(Counted); ok {
		counters = c.TxCounters()
	}
	backoff := opts.MinBackoff
	var lastErr error
	for attempt := 0; attempt < opts.MaxAttempts; attempt++ {
		if attempt > 0 {
			// Full jitter: a random wait up to the current backoff spreads
			// out writers that keep colliding.
			wait := time.Duration(rand.Int64N(int64(backoff)) + 1)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return 0, fmt.Errorf("%w (last attempt: %v)", ctx.Err(), lastErr)
			}
			backoff = min(backoff*2, opts.MaxBackoff)
			counters.retried()
		}
		pos, err := runOnce(ctx, s, fn)
		if err == nil {
			return pos, nil
		}
		if !IsRetryable(err) {
			return 0, err
		}
		lastErr = err
	}
	counters.gaveUp()
	return 0, fmt.Errorf("gave up after %d attempts: %w", opts.MaxAttempts, lastErr)
}

func runOnce(ctx context.Context, s Store, fn func(tx Tx) error) (Position, error) {
	tx, err := s.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return 0, err
	}
	// A deadline that passed during the work: the write is not applied
	// (its caller answers that it timed out), rather than committed after
	// the caller gave up on it.
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return tx.Commit(ctx)
}
