package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
)

// roundTrips counts the round trips made with a context that carries it:
// one per statement sent alone, one per batch (its statements are
// pipelined), one per statement prepared.
type roundTrips struct{ n atomic.Int64 }

type roundTripsKey struct{}

type roundTripTracer struct{}

func (roundTripTracer) count(ctx context.Context) {
	if c, ok := ctx.Value(roundTripsKey{}).(*roundTrips); ok {
		c.n.Add(1)
	}
}

func (r roundTripTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.count(ctx)
	return ctx
}
func (roundTripTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r roundTripTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.count(ctx)
	return ctx
}
func (roundTripTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (roundTripTracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (r roundTripTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.count(ctx)
	return ctx
}
func (roundTripTracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// TestRoundTrips pins what a transaction costs in round trips to the
// server, which on a network is most of its time: one per read (the first
// one opens the snapshot too), one for the commit, none for Begin and none
// waited for at the end of a read-only transaction; GetMany is one
// whatever the number of keys.
func TestRoundTrips(t *testing.T) {
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), MaxConns: 1, tracer: roundTripTracer{}})
	keys := make([][]byte, 1500) // more than one GetMany statement's worth
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%04d", i)
	}
	run(t, s, func(tx kv.Tx) error {
		for _, k := range keys[:10] {
			if err := tx.Set(k, []byte("v")); err != nil {
				return err
			}
		}
		return tx.Add([]byte("n"), 1)
	})
	get := func(tx kv.Tx, ctx context.Context) error {
		_, err := tx.Get(ctx, keys[0])
		return err
	}
	cases := []struct {
		name string
		want int64
		do   func(ctx context.Context, tx kv.Tx) error
	}{
		{"begin and rollback", 0, func(ctx context.Context, tx kv.Tx) error { return nil }},
		{"one read", 1, func(ctx context.Context, tx kv.Tx) error { return get(tx, ctx) }},
		{"two reads", 2, func(ctx context.Context, tx kv.Tx) error {
			if err := get(tx, ctx); err != nil {
				return err
			}
			_, err := tx.Get(ctx, []byte("n"))
			return err
		}},
		{"a cached value checked with a read", 1, func(ctx context.Context, tx kv.Tx) error {
			if err := tx.Expect(keys[1], []byte("v"), nil); err != nil {
				return err
			}
			return get(tx, ctx)
		}},
		{"GetMany of 1500 keys", 1, func(ctx context.Context, tx kv.Tx) error {
			vs, err := tx.GetMany(ctx, keys)
			if err == nil && (vs[9] == nil || vs[10] != nil) {
				err = errors.New("GetMany: wrong values")
			}
			return err
		}},
		{"scan of one page", 1, func(ctx context.Context, tx kv.Tx) error {
			it := tx.Scan(ctx, kv.Range{Begin: []byte("k"), End: []byte("l")}, kv.ScanOptions{})
			defer it.Close()
			for it.Next() {
			}
			return it.Err()
		}},
		{"blind write and commit", 1, func(ctx context.Context, tx kv.Tx) error {
			if err := tx.Set([]byte("b"), []byte("1")); err != nil {
				return err
			}
			_, err := tx.Commit(ctx)
			return err
		}},
		{"read, write and commit", 2, func(ctx context.Context, tx kv.Tx) error {
			if err := get(tx, ctx); err != nil {
				return err
			}
			if err := tx.Set([]byte("c"), []byte("1")); err != nil {
				return err
			}
			_, err := tx.Commit(ctx)
			return err
		}},
		{"read-only commit", 1, func(ctx context.Context, tx kv.Tx) error {
			if err := get(tx, ctx); err != nil {
				return err
			}
			_, err := tx.Commit(ctx)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The first run prepares the statements on the connection; the
			// second is counted.
			for attempt := range 2 {
				c := &roundTrips{}
				ctx := context.WithValue(bg, roundTripsKey{}, c)
				tx, err := s.Begin(ctx)
				must(t, err)
				must(t, tc.do(ctx, tx))
				tx.Rollback()
				if attempt == 1 && c.n.Load() != tc.want {
					t.Errorf("%d round trips, want %d", c.n.Load(), tc.want)
				}
			}
		})
	}
}
