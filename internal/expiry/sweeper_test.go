package expiry_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/expiry"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

var ctx = context.Background()

const schema = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},
	"created_at":{"type":"string","format":"date-time"}},
	"ttl":{"field":"created_at","after":"24h"}}`

var start = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// clock is a time the test moves, shared by the documents and the sweeper.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// setup makes database db with collection things (a day's ttl after
// created_at) on store, and a documents service on the clock.
func setup(t testing.TB, store kv.Store, clk *clock) (*catalog.Catalog, *documents.Service, *catalog.Collection) {
	t.Helper()
	cat := catalog.New()
	docs := documents.New()
	docs.Now = clk.Now
	var coll *catalog.Collection
	_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		db, err := cat.Database(ctx, tx, keyspace.DefaultNamespace, "db")
		if err != nil {
			if err := cat.CreateDatabase(ctx, tx, keyspace.DefaultNamespace, "db"); err != nil {
				return err
			}
			if db, err = cat.Database(ctx, tx, keyspace.DefaultNamespace, "db"); err != nil {
				return err
			}
		}
		if _, err := cat.CreateOrUpdateCollection(ctx, tx, db, "things", []byte(schema), false); err != nil {
			return err
		}
		coll, err = cat.Collection(ctx, tx, db, "things")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cat, docs, coll
}

// insert writes n documents from id first, created at at.
func insert(t testing.TB, store kv.Store, docs *documents.Service, coll *catalog.Collection, first, n int, at time.Time) {
	t.Helper()
	for i := 0; i < n; i += 500 {
		var batch [][]byte
		for id := first + i; id < first+min(i+500, n); id++ {
			batch = append(batch, fmt.Appendf(nil, `{"id":%d,"created_at":%q}`, id, at.Format(time.RFC3339Nano)))
		}
		if _, err := kv.Run(ctx, store, func(tx kv.Tx) error { _, err := docs.Insert(ctx, tx, coll, batch); return err }); err != nil {
			t.Fatal(err)
		}
	}
}

func countAll(t testing.TB, store kv.Store, docs *documents.Service, coll *catalog.Collection) int64 {
	t.Helper()
	var n int64
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) (err error) {
		n, _, err = docs.Count(ctx, tx, coll, filter.Filter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// storedCount is the collection's document counter: what is really
// stored, expired or not.
func storedCount(t testing.TB, store kv.Store, coll *catalog.Collection) int64 {
	t.Helper()
	var n int64
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		v, err := tx.Get(ctx, keyspace.Count(coll.ID))
		n = kv.DecodeCounter(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// readLog reads the change log's entries after pos, to its durable end
// (a read returns at most a backend's batch).
func readLog(t testing.TB, store kv.Store, pos kv.Position) []kv.LogEntry {
	t.Helper()
	last, err := store.LastPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var all []kv.LogEntry
	for pos < last {
		entries, upTo, err := store.ReadLog(ctx, pos, 0)
		if err != nil {
			t.Fatal(err)
		}
		all, pos = append(all, entries...), upTo
	}
	return all
}

// expiredDeletes counts the change log's deletes flagged expired from pos.
func expiredDeletes(t testing.TB, store kv.Store, pos kv.Position) (expired, other int) {
	t.Helper()
	entries := readLog(t, store, pos)
	for _, e := range entries {
		for _, raw := range e.Records {
			r, err := changelog.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if r.Op == changelog.Delete && r.Expired {
				expired++
			} else {
				other++
			}
		}
	}
	return expired, other
}

// A pass deletes what has expired by the clock, a batch per transaction,
// as expired deletes in the log; it leaves what has not.
func TestPass(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := b.Open(t)
		clk := &clock{now: start}
		cat, docs, coll := setup(t, store, clk)
		insert(t, store, docs, coll, 0, 230, start)
		insert(t, store, docs, coll, 1000, 10, start.Add(time.Hour))
		sw := expiry.New(store, cat, docs, expiry.Options{Now: clk.Now, Batch: 50, Pause: -1})

		clk.Set(start.Add(24*time.Hour - time.Nanosecond))
		if n, err := sw.Pass(ctx); err != nil || n != 0 {
			t.Fatalf("a nanosecond early: deleted %d (%v)", n, err)
		}
		if n := countAll(t, store, docs, coll); n != 240 {
			t.Fatalf("a nanosecond early: count %d, want 240", n)
		}
		pos, err := store.LastPosition(ctx)
		if err != nil {
			t.Fatal(err)
		}
		clk.Set(start.Add(24 * time.Hour))
		// Invisible at once, before any sweep.
		if n := countAll(t, store, docs, coll); n != 10 {
			t.Fatalf("at expiry: count %d, want 10", n)
		}
		if n := storedCount(t, store, coll); n != 240 {
			t.Fatalf("at expiry, before the sweep: %d stored, want 240", n)
		}
		n, err := sw.Pass(ctx)
		if err != nil || n != 230 {
			t.Fatalf("pass at expiry: deleted %d (%v), want 230", n, err)
		}
		if st := sw.Stats(); st.Expired != 230 {
			t.Errorf("stats %+v", st)
		}
		if n := storedCount(t, store, coll); n != 10 {
			t.Errorf("after the sweep: %d stored, want 10", n)
		}
		if entries := readLog(t, store, pos); len(entries) != 5 {
			t.Errorf("%d transactions, want 5 of at most 50 deletes", len(entries))
		}
		if exp, other := expiredDeletes(t, store, pos); exp != 230 || other != 0 {
			t.Errorf("log: %d expired deletes and %d others, want 230 and 0", exp, other)
		}
		if n, err := sw.Pass(ctx); err != nil || n != 0 {
			t.Errorf("a second pass: deleted %d (%v)", n, err)
		}
	})
}

// Nothing but the schema is kept: a sweeper stopped half way and a new one
// on the store opened again goes on.
func TestSweepAcrossRestart(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		data := b.Durable(t)
		store := data.Open()
		clk := &clock{now: start}
		cat, docs, coll := setup(t, store, clk)
		insert(t, store, docs, coll, 0, 300, start)
		clk.Set(start.Add(25 * time.Hour))

		// One transaction of 100, then the node stops.
		stopping, cancel := context.WithCancel(ctx)
		sw := expiry.New(store, cat, docs, expiry.Options{Now: clk.Now, Batch: 100, Pause: time.Hour})
		done := make(chan int)
		go func() { n, _ := sw.Pass(stopping); done <- n }()
		deadline := time.Now().Add(time.Minute)
		for storedCount(t, store, coll) == 300 {
			if time.Now().After(deadline) {
				t.Fatal("the first transaction did not commit within a minute")
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		if n := <-done; n != 100 {
			t.Fatalf("first pass deleted %d before it stopped, want 100", n)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}

		store = data.Open()
		cat, docs, coll = setup(t, store, clk) // the same schema again: a compatible change
		if n := countAll(t, store, docs, coll); n != 0 {
			t.Fatalf("after the restart: count %d, want 0", n)
		}
		sw = expiry.New(store, cat, docs, expiry.Options{Now: clk.Now, Pause: -1})
		if n, err := sw.Pass(ctx); err != nil || n != 200 {
			t.Fatalf("after the restart the pass deleted %d (%v), want 200", n, err)
		}
		if n := storedCount(t, store, coll); n != 0 {
			t.Errorf("%d documents left", n)
		}
	})
}

// A sweeper that does not lead (another node sweeps) deletes nothing;
// a ttl removed from the schema stops the sweep, and the documents are
// readable again.
func TestLeaderAndRemovedTTL(t *testing.T) {
	store := backendtest.OpenPebble(t)
	clk := &clock{now: start}
	cat, docs, coll := setup(t, store, clk)
	insert(t, store, docs, coll, 0, 20, start)
	clk.Set(start.Add(48 * time.Hour))
	follower := expiry.New(store, cat, docs, expiry.Options{Now: clk.Now, Leader: func(context.Context) (bool, error) { return false, nil }})
	if n, err := follower.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("a node that does not lead deleted %d (%v)", n, err)
	}
	plain := strings.Replace(schema, `,
	"ttl":{"field":"created_at","after":"24h"}`, "", 1)
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		_, err := cat.CreateOrUpdateCollection(ctx, tx, coll.DB, "things", []byte(plain), false)
		if err == nil {
			coll, err = cat.Collection(ctx, tx, coll.DB, "things")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if coll.Schema.TTL() != nil {
		t.Fatal("the ttl is still there")
	}
	if n := countAll(t, store, docs, coll); n != 20 {
		t.Errorf("without the ttl: count %d, want 20", n)
	}
	sw := expiry.New(store, cat, docs, expiry.Options{Now: clk.Now})
	if n, err := sw.Pass(ctx); err != nil || n != 0 {
		t.Errorf("without the ttl the pass deleted %d (%v)", n, err)
	}
}
