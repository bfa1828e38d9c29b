package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// memStore begins read-only transactions over an empty memBackend; its
// other methods are not used here.
type memStore struct{ Store }

func (memStore) Begin(ctx context.Context) (Tx, error) {
	return NewTx(&memBackend{}, Limits{}, nil), nil
}

// TestRunAttempts: Run retries a transaction that fails with a retryable
// error up to MaxAttempts times in all (10 by default), the first attempt
// at once, and gives the last error back when it gives up.
func TestRunAttempts(t *testing.T) {
	errOther := errors.New("not retryable")
	for _, tc := range []struct {
		opts     RunOptions
		failures int // attempts that fail with a conflict before one succeeds
		err      error
		want     int // attempts made
	}{
		{opts: RunOptions{MaxAttempts: 3, MinBackoff: time.Microsecond}, failures: 100, err: ErrConflict, want: 3},
		{opts: RunOptions{MaxAttempts: 3, MinBackoff: time.Microsecond}, failures: 2, want: 3},
		{opts: RunOptions{MaxAttempts: 1}, failures: 100, err: ErrConflict, want: 1},
		{opts: RunOptions{}, failures: 100, err: ErrConflict, want: 10},
		{opts: RunOptions{}, failures: 9, want: 10},
		{opts: RunOptions{MaxAttempts: -1, MinBackoff: -1, MaxBackoff: -1}, failures: 4, want: 5},
		{opts: RunOptions{MaxAttempts: 5}, failures: -1, err: errOther, want: 1},
	} {
		t.Run(fmt.Sprintf("%+v,%d", tc.opts, tc.failures), func(t *testing.T) {
			calls := 0
			_, err := RunWith(context.Background(), memStore{}, tc.opts, func(tx Tx) error {
				calls++
				switch {
				case tc.failures < 0:
					return errOther
				case calls > 20:
					return errors.New("called too often")
				case calls <= tc.failures:
					return fmt.Errorf("attempt %d: %w", calls, ErrConflict)
				}
				return nil
			})
			if calls != tc.want {
				t.Errorf("%d attempts, want %d", calls, tc.want)
			}
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if tc.err == ErrConflict && !strings.Contains(err.Error(), fmt.Sprintf("attempt %d:", tc.want)) {
				t.Errorf("error %q, want the last attempt's", err)
			}
		})
	}
}

// TestRunFirstAttemptAtOnce: only retries wait; the first attempt does
// not, however long the backoff.
func TestRunFirstAttemptAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := RunOptions{MinBackoff: time.Hour, MaxBackoff: time.Hour}
	if _, err := RunWith(ctx, memStore{}, opts, func(tx Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// A retry waits, and stops waiting when the context ends.
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := RunWith(ctx, memStore{}, opts, func(tx Tx) error { return ErrConflict })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), ErrConflict.Error()) {
		t.Fatalf("retry in a context that ended: %v, want the context's error and the last attempt's", err)
	}
}
