package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// The records a node remembers: a volatile cache's is served without a
// read until RecordBound has passed since before its read, not after a
// forget that came while it was read; a durable cache's only as an
// expectation that fails, forgetting it, once the record changed.
func TestRecords(t *testing.T) {
	store := backendtest.OpenPebble(t)
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	s := New(func() time.Time { return now })
	run := func(fn func(tx kv.Tx) error) error { _, err := kv.Run(ctx, store, fn); return err }
	lookup := func(k RecordKey, read RecordRead) (*Cache, error) {
		var c *Cache
		err := run(func(tx kv.Tx) (err error) { c, err = s.LookupRemembering(ctx, tx, k, 1, read); return err })
		return c, err
	}
	for _, c := range []struct {
		name     string
		volatile bool
	}{{"v", true}, {"d", false}} {
		if err := run(func(tx kv.Tx) error { return s.Create(ctx, tx, 1, c.name, Options{Volatile: c.volatile}) }); err != nil {
			t.Fatal(err)
		}
	}
	v, d := RecordKey{NS: 1, Project: "p", Name: "v"}, RecordKey{NS: 1, Project: "p", Name: "d"}

	if s.Fresh(v) != nil {
		t.Fatal("a record never read is fresh")
	}
	read := s.BeginRead()
	now = now.Add(100 * time.Millisecond) // the read's transaction takes its time
	if _, err := lookup(v, read); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		after time.Duration // since the read began
		fresh bool
	}{{0, true}, {RecordBound - time.Millisecond, true}, {RecordBound, false}, {2 * RecordBound, false}} {
		now = read.at.Add(c.after)
		if got := s.Fresh(v) != nil; got != c.fresh {
			t.Errorf("%v after the read began: fresh %v, want %v", c.after, got, c.fresh)
		}
	}

	// A forget between BeginRead and the read's end: what it read is
	// not kept.
	now = time.Unix(2_000_000, 0)
	read = s.BeginRead()
	s.Forget(v)
	if _, err := lookup(v, read); err != nil {
		t.Fatal(err)
	}
	if s.Fresh(v) != nil {
		t.Error("a record read across a forget was kept")
	}
	if _, err := lookup(v, s.BeginRead()); err != nil || s.Fresh(v) == nil {
		t.Fatalf("a record read after the forget: %v", err)
	}
	s.ForgetAll()
	if s.Fresh(v) != nil {
		t.Error("ForgetAll left a record")
	}

	// Durable: never fresh; expected while the record stands, a conflict
	// that forgets it once it changed.
	if _, err := lookup(d, s.BeginRead()); err != nil {
		t.Fatal(err)
	}
	if s.Fresh(d) != nil {
		t.Error("a durable cache's record served without a transaction")
	}
	if err := run(func(tx kv.Tx) error {
		c, err := s.Expected(tx, d)
		if err != nil || c == nil || c.Volatile {
			t.Fatalf("expected: %+v %v", c, err)
		}
		return tx.CheckExpected(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	if err := run(func(tx kv.Tx) error {
		if err := s.Delete(ctx, tx, 1, "d"); err != nil {
			return err
		}
		return s.Create(ctx, tx, 1, "d", Options{})
	}); err != nil {
		t.Fatal(err)
	}
	tx, err := store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := s.Expected(tx, d); err != nil {
		t.Fatal(err)
	}
	if err := tx.CheckExpected(ctx); !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("the old record expected after the cache was created again: %v, want a conflict", err)
	}
	if c, _ := s.Expected(tx, d); c != nil {
		t.Error("the stale record was not forgotten")
	}
}
