package query

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// thingsCase is a collection of 40 documents for the tests below, some of
// them without a.
func thingsCase(t *testing.T) *planCase {
	t.Helper()
	c := &planCase{}
	if err := c.create(t, `{"title":"things","primary_key":["id"],"properties":{"id":{"type":"integer"},"a":{"type":"integer"}}}`); err != nil {
		t.Fatal(err)
	}
	var docs []string
	for i := range 40 {
		if i%6 == 5 {
			docs = append(docs, fmt.Sprintf(`{"id":%d}`, i))
			continue
		}
		docs = append(docs, fmt.Sprintf(`{"id":%d,"a":%d}`, i, i%5))
	}
	if _, err := c.insert(docs); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCountsCached: a lookup given a Counts takes the collection's document
// count from it while the cached count is fresh, sparing the count's read,
// and reads it again once the cached count is older than countTTL.
func TestCountsCached(t *testing.T) {
	c := thingsCase(t)
	f, err := filter.Parse([]byte(`{"a":3}`), c.coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	counts := &Counts{}
	reads := func() (int64, Plan) {
		t.Helper()
		var n kv.ReadCount
		tx, err := c.store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		it, plan, err := Run(ctx, kv.CountReads(tx, &n), c.coll, Request{Filter: f, Counts: counts})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		for it.Next() {
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return n.Keys.Load(), plan
	}
	first, plan := reads()
	if plan.Kind != "index" {
		t.Fatalf("plan %q, want an index plan", plan)
	}
	v, ok := counts.m.Load(c.coll.ID)
	if !ok || v.(cachedCount).n != int64(c.n) {
		t.Fatalf("cached count %v, want %d", v, c.n)
	}
	// Read just now (however slow the machine was since the first lookup).
	n := v.(cachedCount).n
	counts.m.Store(c.coll.ID, cachedCount{n: n, read: time.Now()})
	if cached, _ := reads(); cached != first-1 {
		t.Errorf("with the count cached, the lookup read %d keys; want %d (%d without the count)", cached, first-1, first)
	}
	// The same count, but read longer ago than countTTL: read again.
	counts.m.Store(c.coll.ID, cachedCount{n: n, read: time.Now().Add(-2 * countTTL)})
	if stale, _ := reads(); stale != first {
		t.Errorf("with a stale cached count, the lookup read %d keys; want %d", stale, first)
	}
}

// TestSortDoc: a sort an index serves with the empty filter finds the
// documents without a value by a scan, whose stored values it reads
// through Request.Doc; an error of Doc ends the lookup with it.
func TestSortDoc(t *testing.T) {
	c := thingsCase(t)
	errDoc := errors.New("cannot decode")
	run := func(doc func([]byte) ([]byte, error)) ([]string, error) {
		t.Helper()
		keys, plan, err := c.lookup(Request{Sort: Sort{{Path: "a"}}, Doc: doc}, &readBudget{left: -1})
		if plan.Order != IndexOrder {
			t.Fatalf("plan %q, want the index order", plan)
		}
		return keys, err
	}
	want, err := run(nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := run(func(v []byte) ([]byte, error) { calls++; return v, nil })
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("with Doc: %v, %v; want %v", got, err, want)
	}
	if calls == 0 {
		t.Error("Doc never called")
	}
	got, err = run(func(v []byte) ([]byte, error) { return nil, errDoc })
	if !errors.Is(err, errDoc) {
		t.Fatalf("with a failing Doc: %v, %v; want the error of Doc", got, err)
	}
}

// keySlab's keys hold what they were given, across slabs, and growing one
// never writes into the next.
func TestKeySlab(t *testing.T) {
	var s keySlab
	var keys [][]byte
	for i := 0; i < 1000; i++ {
		keys = append(keys, s.key([]byte("doc/"), []byte(strconv.Itoa(i))))
	}
	_ = append(keys[0], "overwrite"...)
	for i, k := range keys {
		if want := "doc/" + strconv.Itoa(i); string(k) != want {
			t.Fatalf("key %d = %q, want %q", i, k, want)
		}
	}
	if big := s.key(nil, make([]byte, 10000)); len(big) != 10000 {
		t.Fatalf("a key larger than a slab: %d bytes", len(big))
	}
}
