package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// memBackend is a TxBackend over a fixed sorted list of keys: enough to
// drive the shared transaction layer without a store.
type memBackend struct {
	keys, values [][]byte
}

func (m *memBackend) Get(ctx context.Context, key []byte) ([]byte, error) {
	if i, ok := slices.BinarySearchFunc(m.keys, key, bytes.Compare); ok {
		return m.values[i], nil
	}
	return nil, ErrNotFound
}

func (m *memBackend) Scan(ctx context.Context, r Range, reverse bool) RawIterator {
	lo, _ := slices.BinarySearchFunc(m.keys, r.Begin, bytes.Compare)
	hi, _ := slices.BinarySearchFunc(m.keys, r.End, bytes.Compare)
	it := &memIterator{m: m, lo: lo, hi: hi, i: lo - 1, step: 1}
	if reverse {
		it.i, it.step = hi, -1
	}
	return it
}

func (m *memBackend) ReadVersion() Position { return 1 }

func (m *memBackend) Commit(ctx context.Context, req *CommitRequest) (Position, error) {
	return 0, errors.New("memBackend: read only")
}

func (m *memBackend) Release() {}

type memIterator struct {
	m               *memBackend
	lo, hi, i, step int
}

func (it *memIterator) Next() bool {
	it.i += it.step
	return it.i >= it.lo && it.i < it.hi
}
func (it *memIterator) Key() []byte   { return it.m.keys[it.i] }
func (it *memIterator) Value() []byte { return it.m.values[it.i] }
func (it *memIterator) Err() error    { return nil }
func (it *memIterator) Close() error  { return nil }

// TestScanStopsAtContextEnd: a backend's iterator may not look at the
// context (Pebble's does not), so a scan looks at it itself every
// ctxCheckEvery keys: a long scan whose context ends stops within that
// many keys, with the context's error, whether its keys come from the
// backend or from the transaction's own writes.
func TestScanStopsAtContextEnd(t *testing.T) {
	const n = 3 * ctxCheckEvery
	b := &memBackend{}
	for i := range n {
		b.keys = append(b.keys, []byte(fmt.Sprintf("k%04d", i)))
		b.values = append(b.values, []byte("v"))
	}
	for _, buffered := range []bool{false, true} {
		for _, reverse := range []bool{false, true} {
			t.Run(fmt.Sprintf("buffered=%v,reverse=%v", buffered, reverse), func(t *testing.T) {
				tx := NewTx(&memBackend{}, Limits{}, nil)
				if !buffered {
					tx = NewTx(b, Limits{}, nil)
				} else {
					for _, k := range b.keys {
						if err := tx.Set(k, []byte("v")); err != nil {
							t.Fatal(err)
						}
					}
				}
				defer tx.Rollback()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				it := tx.Scan(ctx, Range{Begin: []byte("k")}, ScanOptions{Reverse: reverse})
				defer it.Close()
				got := 0
				for it.Next() {
					if got++; got == 10 {
						cancel()
					}
				}
				if !errors.Is(it.Err(), context.Canceled) {
					t.Fatalf("after %d of %d keys: %v, want the context's error", got, n, it.Err())
				}
				if got >= 10+ctxCheckEvery {
					t.Fatalf("%d keys after the context ended, more than %d", got-10, ctxCheckEvery)
				}
			})
		}
	}
}

// TestScanEndsWithTx: a scan still open when its transaction ends stops
// with ErrTxDone (its snapshot is gone), and a closed scan is no longer
// kept by its transaction (which would hold every scan a long
// transaction ever ran).
func TestScanEndsWithTx(t *testing.T) {
	b := &memBackend{keys: [][]byte{[]byte("a"), []byte("b")}, values: [][]byte{[]byte("1"), []byte("2")}}
	for _, commit := range []bool{false, true} {
		tx := NewTx(b, Limits{}, nil)
		it := tx.Scan(context.Background(), Range{Begin: []byte("a")}, ScanOptions{})
		if !it.Next() {
			t.Fatalf("no first key: %v", it.Err())
		}
		for range 3 {
			done := tx.Scan(context.Background(), Range{Begin: []byte("a")}, ScanOptions{})
			for done.Next() {
			}
			done.Close()
			done.Close() // closing twice is harmless
		}
		if n := len(tx.(*txn).iters); n != 1 {
			t.Fatalf("the transaction holds %d open scans, want 1", n)
		}
		if commit {
			if _, err := tx.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		} else {
			tx.Rollback()
		}
		if it.Next() {
			t.Fatal("the scan went on after its transaction ended")
		}
		if !errors.Is(it.Err(), ErrTxDone) {
			t.Fatalf("scan after the transaction ended: %v, want ErrTxDone", it.Err())
		}
		it.Close()
	}
}
