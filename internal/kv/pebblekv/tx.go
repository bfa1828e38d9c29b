package pebblekv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
)

// backendTx is the Pebble half of a transaction (kv.TxBackend): reads from
// the view it began on, and commit through the sequencer. The sweeper may
// reclaim it while its owner still uses it, so the view is released under
// mu, and every open scan holds a reference of its own on the view.
type backendTx struct {
	s       *Store
	view    *view // never changes; released tells whether the tx still holds it
	started time.Time

	mu       sync.Mutex
	released bool
	err      error       // why reads fail once released early (too old, store closed)
	expired  atomic.Bool // set with released when reclaimed, read by scans without mu
}

func (t *backendTx) ReadVersion() kv.Position { return t.view.version }

func (t *backendTx) Get(ctx context.Context, key []byte) ([]byte, error) {
	return t.AppendValue(ctx, nil, key)
}

// AppendValue implements kv.ValueAppender: from the value cache if it
// knows the key's value at the transaction's version, else from Pebble
// (whose value is valid only until its closer runs, so it is copied
// either way), and the cache learns it.
func (t *backendTx) AppendValue(ctx context.Context, dst, key []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.readable(); err != nil {
		return dst, err
	}
	if dst, present, ok := t.s.values.appendValue(dst, key, t.view.version); ok {
		if !present {
			return dst, kv.ErrNotFound
		}
		return dst, nil
	}
	v, closer, err := t.view.snap.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, kv.ErrNotFound
	}
	if err != nil {
		return dst, readError("get", err)
	}
	dst = append(dst, v...)
	t.s.values.saw(key, v, true, t.view.version)
	closer.Close()
	return dst, nil
}

// readable tells whether reads may go on: not after release, and not past
// the maximum age even before the sweeper gets to it.
func (t *backendTx) readable() error {
	if t.released {
		if t.err != nil {
			return t.err
		}
		return kv.ErrTxDone
	}
	if age := time.Since(t.started); age > t.s.opts.MaxTxAge {
		return fmt.Errorf("%w: open for %s, limit %s", kv.ErrTxTooOld, age.Round(time.Millisecond), t.s.opts.MaxTxAge)
	}
	return nil
}

func (t *backendTx) Scan(ctx context.Context, r kv.Range, reverse bool) kv.RawIterator {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.readable(); err != nil {
		return &rawIterator{err: err}
	}
	lower := r.Begin
	if len(lower) == 0 {
		// nil, not empty: Pebble's invariant checks (on under -race) index
		// into a non-nil lower bound.
		lower = nil
	}
	it, err := t.view.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: r.End})
	if err != nil {
		return &rawIterator{err: readError("scan", err)}
	}
	t.s.mu.Lock()
	t.view.refs++
	t.s.mu.Unlock()
	return &rawIterator{tx: t, it: it, reverse: reverse}
}

func (t *backendTx) Commit(ctx context.Context, req *kv.CommitRequest) (kv.Position, error) {
	t.mu.Lock()
	err := t.readable()
	t.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return t.s.commit(ctx, req)
}

// Release is called once when the transaction ends.
func (t *backendTx) Release() { t.Expire(nil) }

// Expire releases the transaction's view and makes later reads fail with
// reason (kv.Reclaimable). It reports whether the view was still held.
func (t *backendTx) Expire(reason error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return false
	}
	t.released, t.err = true, reason
	if reason != nil {
		t.expired.Store(true)
	}
	t.s.mu.Lock()
	t.s.txs.Remove(t)
	t.s.releaseLocked(t.view)
	t.s.mu.Unlock()
	return true
}

// rawIterator adapts a Pebble iterator to kv.RawIterator. Only its owner
// touches it, so it needs no lock: a reclaimed transaction's scans notice at
// their next step and stop.
type rawIterator struct {
	tx      *backendTx
	it      *pebble.Iterator
	reverse bool
	started bool
	value   []byte
	err     error
}

func (r *rawIterator) Next() bool {
	if r.it == nil {
		return false
	}
	if r.tx.expired.Load() {
		r.tx.mu.Lock()
		r.err = r.tx.err
		r.tx.mu.Unlock()
		r.Close()
		return false
	}
	var ok bool
	switch {
	case !r.started && r.reverse:
		ok = r.it.Last()
	case !r.started:
		ok = r.it.First()
	case r.reverse:
		ok = r.it.Prev()
	default:
		ok = r.it.Next()
	}
	r.started = true
	if !ok {
		if err := r.it.Error(); err != nil {
			r.err = readError("scan", err)
		}
		return false
	}
	v, err := r.it.ValueAndErr()
	if err != nil {
		r.err = readError("scan value", err)
		return false
	}
	r.value = v
	return true
}

func (r *rawIterator) Key() []byte   { return r.it.Key() }
func (r *rawIterator) Value() []byte { return r.value }
func (r *rawIterator) Err() error    { return r.err }

func (r *rawIterator) Close() error {
	if r.it == nil {
		return nil
	}
	err := r.it.Close()
	r.it = nil
	r.tx.s.release(r.tx.view)
	return err
}
