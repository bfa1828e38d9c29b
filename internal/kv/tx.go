package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Snapshot is a backend's read view of the store at one read version. Its
// reads see only committed data; Get returns ErrNotFound for a missing key.
type Snapshot interface {
	Get(ctx context.Context, key []byte) ([]byte, error)
	// Scan iterates over the stored keys in r (a range inside the user key
	// space, with both bounds set), in reverse order if asked.
	Scan(ctx context.Context, r Range, reverse bool) RawIterator
}

// KnownValues is implemented by a backend that can vouch, without a read,
// for a value its transactions expected before (Tx.Expect): the embedded
// store, whose sequencer sees every commit. Expect's checks then read only
// what it does not vouch for; on PostgreSQL they ride along with the next
// read instead.
type KnownValues interface {
	// Holds reports whether key is known to hold value (nil: no value) at
	// the transaction's read version.
	Holds(key, value []byte) bool
	// Saw records that a read found value under key at the transaction's
	// read version.
	Saw(key, value []byte)
}

// BatchGetter is implemented by a Snapshot that reads several keys in one
// round trip. Its GetMany follows Reader.GetMany. NewTx reads key by key
// from a backend without it.
type BatchGetter interface {
	GetMany(ctx context.Context, keys [][]byte) ([][]byte, error)
}

// RawIterator walks a backend's Scan. Key and Value stay valid until the
// next call to Next.
type RawIterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

// CommitRequest is what a transaction hands its backend at commit.
type CommitRequest struct {
	ReadVersion Position
	// ReadRanges are the ranges the transaction read, sorted and merged.
	ReadRanges []Range
	// Writes holds the buffered writes: cleared ranges apply first, then the
	// single-key mutations.
	Writes *WriteBuffer
	// Log holds the records of the transaction's change-log entry (none if
	// the transaction appended nothing).
	Log [][]byte
}

// WriteRanges returns the key ranges the request writes, sorted and merged:
// what other transactions' reads conflict with.
func (c *CommitRequest) WriteRanges() []Range {
	rs := append([]Range(nil), c.Writes.ClearedRanges()...)
	c.Writes.Mutations(func(m *Mutation) bool {
		rs = append(rs, KeyRange(m.Key))
		return true
	})
	return MergeRanges(rs)
}

// TxBackend is the backend half of a transaction. NewTx wraps it with the
// shared logic: the write buffer, read-your-writes, read-range recording and
// limits.
type TxBackend interface {
	Snapshot
	ReadVersion() Position
	// Commit applies the request atomically and durably, or rejects it with
	// ErrConflict (or another error) applying nothing.
	Commit(ctx context.Context, req *CommitRequest) (Position, error)
	// Release frees what the transaction holds. NewTx calls it exactly once.
	Release()
}

type txState uint8

const (
	txOpen txState = iota
	txCommitted
	txRolledBack
)

// NewTx returns a transaction that reads through b and buffers writes until
// commit, counting how it ends into counters (nil: not counted). Every
// backend builds its Tx with it.
func NewTx(b TxBackend, limits Limits, counters *TxCounters) Tx {
	return &txn{b: b, limits: limits.WithDefaults(), buf: NewWriteBuffer(), counters: counters}
}

type txn struct {
	b        TxBackend
	limits   Limits
	buf      *WriteBuffer
	reads    []*Range                      // recorded read ranges; scans widen theirs as they go
	iters    map[*overlayIterator]struct{} // open scans, closed when the transaction ends
	log      [][]byte
	size     int
	state    txState
	failed   error // a write was refused, or an expectation failed: the transaction can only fail now
	counters *TxCounters
	expected []expectation // Expect's checks not made yet
}

// expectation is a value a transaction took from a cache (Expect).
type expectation struct {
	key, value []byte
	stale      func()
}

func (t *txn) ReadVersion() Position { return t.b.ReadVersion() }

func (t *txn) Snapshot() Reader { return snapshotReader{t} }

type snapshotReader struct{ t *txn }

func (s snapshotReader) Get(ctx context.Context, key []byte) ([]byte, error) {
	return s.t.get(ctx, key, false)
}

func (s snapshotReader) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	return s.t.getMany(ctx, keys, false, nil)
}

func (s snapshotReader) Scan(ctx context.Context, r Range, opts ScanOptions) Iterator {
	return s.t.scan(ctx, r, opts, false)
}

func (t *txn) Get(ctx context.Context, key []byte) ([]byte, error) {
	return t.get(ctx, key, true)
}

func (t *txn) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	return t.getMany(ctx, keys, true, nil)
}

// ValueAppender is implemented by a backend transaction that can copy a
// value into a buffer of the caller's: the embedded store, whose reads
// otherwise allocate a copy of each value.
type ValueAppender interface {
	// AppendValue appends key's value to dst and returns it; on an error
	// (ErrNotFound when key has no value) it returns dst unchanged.
	AppendValue(ctx context.Context, dst, key []byte) ([]byte, error)
}

// GetManyInto reads keys as r.GetMany does, copying the values it reads
// from the store into *buf (grown as needed) where the backend can: the
// values may then alias *buf, and stay valid until the caller reuses it.
// A caller that reads many large values one request after another (a
// search page's documents) keeps one buffer warm instead of filling fresh
// memory each time. Values may also share the transaction's write buffer:
// read them, never modify them.
func GetManyInto(ctx context.Context, r Reader, keys [][]byte, buf *[]byte) ([][]byte, error) {
	if t, ok := r.(*txn); ok {
		return t.getMany(ctx, keys, true, buf)
	}
	return r.GetMany(ctx, keys)
}

func (t *txn) Scan(ctx context.Context, r Range, opts ScanOptions) Iterator {
	return t.scan(ctx, r, opts, true)
}

func (t *txn) usable() error {
	switch t.state {
	case txCommitted, txRolledBack:
		return ErrTxDone
	}
	return nil
}

func (t *txn) get(ctx context.Context, key []byte, conflict bool) ([]byte, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	if err := t.limits.CheckKey(key); err != nil {
		return nil, err
	}
	t.noteRead(key, conflict)
	m, cleared := t.buf.Lookup(key)
	switch {
	case m != nil && m.Kind == OpSet:
		return m.Value, nil
	case m != nil && m.Kind == OpClear, cleared:
		return nil, ErrNotFound
	case len(t.expected) > 0:
		// The checks go in the same read.
		vs, err := t.storedMany(ctx, [][]byte{key}, []*Mutation{m}, nil)
		if err != nil {
			return nil, err
		}
		if vs[0] == nil {
			return nil, ErrNotFound
		}
		return vs[0], nil
	case m != nil && m.Kind == OpAdd:
		base, err := t.b.Get(ctx, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return EncodeCounter(DecodeCounter(base) + m.Delta), nil
	}
	return t.b.Get(ctx, key)
}

// noteRead records key as read, unless the read is a snapshot read.
func (t *txn) noteRead(key []byte, conflict bool) {
	if conflict {
		r := KeyRange(key)
		t.reads = append(t.reads, &r)
	}
}

// getMany is get for several keys, with one backend read for those the
// write buffer does not answer.
func (t *txn) getMany(ctx context.Context, keys [][]byte, conflict bool, buf *[]byte) ([][]byte, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	for _, key := range keys {
		if err := t.limits.CheckKey(key); err != nil {
			return nil, err
		}
	}
	values := make([][]byte, len(keys))
	// Sized once for every key: most are read from the backend, and
	// growing three slices a key at a time was a sixth of a page's fetch.
	stored := make([][]byte, 0, len(keys))  // keys read from the backend
	storedAt := make([]int, 0, len(keys))   // their places in keys
	adds := make([]*Mutation, 0, len(keys)) // their buffered counter additions, if any
	for i, key := range keys {
		t.noteRead(key, conflict)
		m, cleared := t.buf.Lookup(key)
		switch {
		case m != nil && m.Kind == OpSet:
			values[i] = present(m.Value)
		case m != nil && m.Kind == OpClear, cleared:
		default:
			if m != nil && m.Kind != OpAdd {
				m = nil
			}
			stored, storedAt, adds = append(stored, key), append(storedAt, i), append(adds, m)
		}
	}
	if len(stored) == 0 {
		return values, nil
	}
	got, err := t.storedMany(ctx, stored, adds, buf)
	if err != nil {
		return nil, err
	}
	for j, i := range storedAt {
		values[i] = got[j]
	}
	return values, nil
}

// storedMany reads keys from the backend, adding each one's buffered
// counter addition (adds[i], or nil), and makes the pending Expect checks
// the backend does not vouch for in the same read.
func (t *txn) storedMany(ctx context.Context, keys [][]byte, adds []*Mutation, buf *[]byte) ([][]byte, error) {
	t.dropVouched()
	n := len(t.expected)
	if n > 0 {
		keys = append(t.expectedKeys(), keys...)
	}
	got, err := t.backendGetMany(ctx, keys, buf)
	if err != nil {
		return nil, err
	}
	if err := t.check(got[:n]); err != nil {
		return nil, err
	}
	got = got[n:]
	for j, m := range adds {
		if m != nil && m.Kind == OpAdd {
			got[j] = EncodeCounter(DecodeCounter(got[j]) + m.Delta)
		}
	}
	return got, nil
}

// dropVouched drops the pending expectations the backend vouches for.
func (t *txn) dropVouched() {
	known, ok := t.b.(KnownValues)
	if !ok || len(t.expected) == 0 {
		return
	}
	pending := t.expected[:0]
	for _, e := range t.expected {
		if !known.Holds(e.key, e.value) {
			pending = append(pending, e)
		}
	}
	clear(t.expected[len(pending):])
	t.expected = pending
}

func (t *txn) expectedKeys() [][]byte {
	keys := make([][]byte, len(t.expected))
	for i, e := range t.expected {
		keys[i] = e.key
	}
	return keys
}

// check compares the stored values of the pending expectations with what
// they expected, and clears them. A mismatch fails the transaction.
func (t *txn) check(stored [][]byte) error {
	expected := t.expected
	t.expected = nil
	for i, e := range expected {
		if (stored[i] == nil) != (e.value == nil) || !bytes.Equal(stored[i], e.value) {
			if e.stale != nil {
				e.stale()
			}
			t.failed = fmt.Errorf("%w: %q changed since it was cached", ErrConflict, truncate(e.key))
			return t.failed
		}
	}
	if known, ok := t.b.(KnownValues); ok {
		for i, e := range expected {
			known.Saw(e.key, stored[i])
		}
	}
	return nil
}

func (t *txn) CheckExpected(ctx context.Context) error {
	if err := t.usable(); err != nil {
		return err
	}
	if t.failed != nil {
		return t.failed
	}
	return t.checkExpected(ctx)
}

// checkExpected makes the pending Expect checks in a read of their own:
// before a scan or a commit.
func (t *txn) checkExpected(ctx context.Context) error {
	if len(t.expected) == 0 {
		return nil
	}
	_, err := t.storedMany(ctx, nil, nil, nil)
	return err
}

func (t *txn) Wrote(key []byte) bool {
	m, cleared := t.buf.Lookup(key)
	return m != nil || cleared
}

func (t *txn) Expect(key, value []byte, stale func()) error {
	if err := t.usable(); err != nil {
		return err
	}
	if err := t.limits.CheckKey(key); err != nil {
		return err
	}
	t.noteRead(key, true)
	t.expected = append(t.expected, expectation{key: key, value: value, stale: stale})
	return nil
}

// backendGetMany reads keys from the backend, in one call if it can.
func (t *txn) backendGetMany(ctx context.Context, keys [][]byte, buf *[]byte) ([][]byte, error) {
	if bg, ok := t.b.(BatchGetter); ok && len(keys) > 1 {
		return bg.GetMany(ctx, keys)
	}
	if va, ok := t.b.(ValueAppender); ok && buf != nil {
		return appendValues(ctx, va, keys, buf)
	}
	values := make([][]byte, len(keys))
	for i, key := range keys {
		v, err := t.b.Get(ctx, key)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		default:
			values[i] = present(v)
		}
	}
	return values, nil
}

// appendValues reads keys into *buf, one value after another, and slices
// the values out once it no longer grows.
func appendValues(ctx context.Context, va ValueAppender, keys [][]byte, buf *[]byte) ([][]byte, error) {
	b := (*buf)[:0]
	ends := make([]int, len(keys)) // -1: no value
	for i, key := range keys {
		switch nb, err := va.AppendValue(ctx, b, key); {
		case errors.Is(err, ErrNotFound):
			ends[i] = -1
		case err != nil:
			return nil, err
		default:
			b, ends[i] = nb, len(nb)
		}
	}
	*buf = b
	values := make([][]byte, len(keys))
	start := 0
	for i, end := range ends {
		if end >= 0 {
			values[i] = present(b[start:end:end])
			start = end
		}
	}
	return values, nil
}

// present marks a value as there, even if empty: GetMany tells a missing
// key by a nil value.
func present(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

func (t *txn) scan(ctx context.Context, r Range, opts ScanOptions, conflict bool) Iterator {
	if err := t.usable(); err != nil {
		return &errIterator{err: err}
	}
	r = r.Normalize()
	if CompareKeys(r.End, userKeyEnd) > 0 {
		r.End = userKeyEnd
	}
	if err := t.limits.CheckRange(r); err != nil {
		return &errIterator{err: err}
	}
	if err := t.checkExpected(ctx); err != nil {
		return &errIterator{err: err}
	}
	it := newOverlayIterator(ctx, t.b, t.buf, r, opts)
	if t.iters == nil {
		t.iters = make(map[*overlayIterator]struct{})
	}
	t.iters[it] = struct{}{}
	it.onClose = func() { delete(t.iters, it) }
	if conflict {
		// Start with an empty range at the scan's starting edge; the
		// iterator widens it as keys are returned.
		p := &Range{Begin: r.Begin, End: r.Begin}
		if opts.Reverse {
			p = &Range{Begin: r.End, End: r.End}
		}
		t.reads = append(t.reads, p)
		it.progress = p
	}
	return it
}

func (t *txn) write(size int, checks ...error) error {
	if err := t.usable(); err != nil {
		return err
	}
	if t.failed != nil {
		return t.failed
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	t.size += size
	if t.size > t.limits.MaxTxSize {
		t.failed = fmt.Errorf("%w: more than %d bytes written", ErrTxTooLarge, t.limits.MaxTxSize)
		return t.failed
	}
	return nil
}

func (t *txn) Set(key, value []byte) error {
	if err := t.write(len(key)+len(value), t.limits.CheckKey(key), t.limits.CheckValue(value)); err != nil {
		return err
	}
	t.buf.Set(clone(key), clone(value))
	return nil
}

func (t *txn) Clear(key []byte) error {
	if err := t.write(len(key), t.limits.CheckKey(key)); err != nil {
		return err
	}
	t.buf.Clear(clone(key))
	return nil
}

func (t *txn) ClearRange(r Range) error {
	r = r.Normalize()
	if CompareKeys(r.End, userKeyEnd) > 0 {
		r.End = userKeyEnd
	}
	if err := t.write(len(r.Begin)+len(r.End), t.limits.CheckRange(r)); err != nil {
		return err
	}
	t.buf.ClearRange(Range{Begin: clone(r.Begin), End: clone(r.End)})
	return nil
}

func (t *txn) Add(key []byte, delta int64) error {
	if err := t.write(len(key)+8, t.limits.CheckKey(key)); err != nil {
		return err
	}
	t.buf.Add(clone(key), delta)
	return nil
}

func (t *txn) AddReadConflictRange(r Range) error {
	if err := t.usable(); err != nil {
		return err
	}
	r = r.Normalize()
	if err := t.limits.CheckRange(r); err != nil {
		return err
	}
	r = Range{Begin: clone(r.Begin), End: clone(r.End)}
	t.reads = append(t.reads, &r)
	return nil
}

func (t *txn) AppendLog(record []byte) error {
	if err := t.write(len(record)); err != nil {
		return err
	}
	t.log = append(t.log, clone(record))
	return nil
}

func (t *txn) Commit(ctx context.Context) (Position, error) {
	if err := t.usable(); err != nil {
		return 0, err
	}
	defer t.end(txCommitted)
	if t.failed != nil {
		return 0, t.failed
	}
	if err := t.checkExpected(ctx); err != nil {
		return 0, err
	}
	if t.buf.Empty() && len(t.log) == 0 {
		return t.b.ReadVersion(), nil
	}
	// A caller whose context is done (its deadline passed) has given up on
	// the transaction: nothing is applied. Once handed to the backend, a
	// commit lands or not whatever the context does.
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	reads := make([]Range, len(t.reads))
	for i, r := range t.reads {
		reads[i] = *r
	}
	start := time.Now()
	pos, err := t.b.Commit(ctx, &CommitRequest{
		ReadVersion: t.b.ReadVersion(),
		ReadRanges:  MergeRanges(reads),
		Writes:      t.buf,
		Log:         t.log,
	})
	t.counters.committed(err, time.Since(start))
	return pos, err
}

func (t *txn) Rollback() {
	if t.state == txOpen {
		t.counters.rolledBack()
		t.end(txRolledBack)
	}
}

func (t *txn) end(s txState) {
	t.state = s
	// Scans left open must stop before the backend frees their snapshot.
	for it := range t.iters {
		it.abort(ErrTxDone)
	}
	t.b.Release()
}

func clone(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return append(make([]byte, 0, len(b)), b...)
}

type errIterator struct{ err error }

func (e *errIterator) Next() bool    { return false }
func (e *errIterator) Key() []byte   { return nil }
func (e *errIterator) Value() []byte { return nil }
func (e *errIterator) Err() error    { return e.err }
func (e *errIterator) Close() error  { return nil }
