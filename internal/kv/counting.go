package kv

import (
	"context"
	"sync/atomic"
)

// ReadCount counts the keys a transaction read: one per Get, one per key a
// scan returned. Explain output and tests use it to see how much work a
// lookup did, independently of time.
type ReadCount struct {
	Keys atomic.Int64
}

// CountReads returns tx with its reads counted into c.
func CountReads(tx Tx, c *ReadCount) Tx { return &countingTx{Tx: tx, c: c} }

type countingTx struct {
	Tx
	c *ReadCount
}

func (t *countingTx) Get(ctx context.Context, key []byte) ([]byte, error) {
	t.c.Keys.Add(1)
	return t.Tx.Get(ctx, key)
}

func (t *countingTx) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	t.c.Keys.Add(int64(len(keys)))
	return t.Tx.GetMany(ctx, keys)
}

func (t *countingTx) Scan(ctx context.Context, r Range, opts ScanOptions) Iterator {
	return &countingIterator{Iterator: t.Tx.Scan(ctx, r, opts), c: t.c}
}

func (t *countingTx) Snapshot() Reader { return &countingReader{Reader: t.Tx.Snapshot(), c: t.c} }

type countingReader struct {
	Reader
	c *ReadCount
}

func (r *countingReader) Get(ctx context.Context, key []byte) ([]byte, error) {
	r.c.Keys.Add(1)
	return r.Reader.Get(ctx, key)
}

func (r *countingReader) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	r.c.Keys.Add(int64(len(keys)))
	return r.Reader.GetMany(ctx, keys)
}

func (r *countingReader) Scan(ctx context.Context, rng Range, opts ScanOptions) Iterator {
	return &countingIterator{Iterator: r.Reader.Scan(ctx, rng, opts), c: r.c}
}

type countingIterator struct {
	Iterator
	c *ReadCount
}

func (i *countingIterator) Next() bool {
	ok := i.Iterator.Next()
	if ok {
		i.c.Keys.Add(1)
	}
	return ok
}
