package kv

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// countedStore begins transactions over an empty memBackend whose commits
// fail with commitErr, counting them into its counters.
type countedStore struct {
	Store
	counters  *TxCounters
	commitErr error
}

func (s *countedStore) Begin(ctx context.Context) (Tx, error) {
	return NewTx(&failingBackend{err: s.commitErr}, Limits{}, s.counters), nil
}

func (s *countedStore) TxCounters() *TxCounters { return s.counters }

type failingBackend struct {
	memBackend
	err error
}

func (b *failingBackend) Commit(ctx context.Context, req *CommitRequest) (Position, error) {
	return 2, b.err
}

// TestTxCounters: every way a transaction ends is counted once, and Run
// counts its retries and the transactions it gave up on.
func TestTxCounters(t *testing.T) {
	ctx := context.Background()
	write := func(tx Tx) error { return tx.Set([]byte("k"), []byte("v")) }
	opts := RunOptions{MaxAttempts: 3, MinBackoff: time.Microsecond}

	ok := &countedStore{counters: NewTxCounters()}
	if _, err := RunWith(ctx, ok, opts, write); err != nil {
		t.Fatal(err)
	}
	if _, err := RunWith(ctx, ok, opts, func(Tx) error { return nil }); err != nil { // read-only: not a commit
		t.Fatal(err)
	}
	tx, _ := ok.Begin(ctx)
	tx.Rollback()
	tx.Rollback() // once only

	conflicting := &countedStore{counters: NewTxCounters(), commitErr: ErrConflict}
	if _, err := RunWith(ctx, conflicting, opts, write); !errors.Is(err, ErrConflict) {
		t.Fatalf("got %v, want a conflict", err)
	}
	broken := &countedStore{counters: NewTxCounters(), commitErr: ErrClosed}
	if _, err := RunWith(ctx, broken, opts, write); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}

	for name, tc := range map[string]struct {
		s    *countedStore
		want TxStats
	}{
		"ok":          {ok, TxStats{Commits: 1, Rollbacks: 1}},
		"conflicting": {conflicting, TxStats{Conflicts: 3, Retries: 2, Aborts: 1}},
		"broken":      {broken, TxStats{CommitErrors: 1}},
	} {
		got := tc.s.counters.Stats()
		if got.CommitSeconds.Count != got.Commits+got.Conflicts+got.CommitErrors {
			t.Errorf("%s: %d commit times for %+v", name, got.CommitSeconds.Count, got)
		}
		got.CommitSeconds = HistogramSnapshot{}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

// TestHistogram: an observation lands in the first bucket whose bound is
// at least its value, or past the last bound.
func TestHistogram(t *testing.T) {
	h := NewHistogram([]float64{1, 2, 4})
	for _, v := range []float64{0.5, 1, 1.5, 4, 9} {
		h.Observe(v)
	}
	s := h.Snapshot()
	want := []uint64{2, 1, 1, 1}
	for i := range want {
		if s.Counts[i] != want[i] {
			t.Fatalf("counts %v, want %v", s.Counts, want)
		}
	}
	if s.Count != 5 || s.Sum != 16 {
		t.Errorf("count %d sum %g, want 5 and 16", s.Count, s.Sum)
	}
}
