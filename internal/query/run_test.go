package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
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

// TestRaceMatchesBruteForce: lookups with a limit, where the index and the
// scan race, give the first matches in primary-key order whichever wins,
// with a resume key, with Request.Doc, and in a transaction whose own
// uncommitted documents come before, among and after the stored ones.
func TestRaceMatchesBruteForce(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) { raceMatchesBruteForce(t, b.Open) })
}

func raceMatchesBruteForce(t *testing.T, open func(testing.TB) kv.Store) {
	c := &planCase{}
	if err := c.createOn(t, open, `{"title":"things","primary_key":["id"],"properties":{"id":{"type":"integer"},"a":{"type":"integer"},"b":{"type":"integer"}}}`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	doc := func(id int) string {
		if rng.IntN(7) == 0 {
			return fmt.Sprintf(`{"id":%d,"b":%d}`, id, rng.IntN(1000))
		}
		return fmt.Sprintf(`{"id":%d,"a":%d,"b":%d}`, id, rng.IntN(10), rng.IntN(1000))
	}
	var stored []string
	for id := 0; id < 2000; id += 2 {
		stored = append(stored, doc(id))
	}
	if _, err := c.insert(stored); err != nil {
		t.Fatal(err)
	}
	tx, err := c.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var own []string
	for _, id := range []int{-5, -3, -1, 1, 3, 401, 999, 2001, 2003} {
		own = append(own, doc(id))
	}
	if err := c.put(tx, own); err != nil {
		t.Fatal(err)
	}
	all := map[int]string{}
	for _, d := range append(stored, own...) {
		var v struct{ ID int }
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatal(err)
		}
		all[v.ID] = d
	}
	ids := slices.Sorted(maps.Keys(all))

	field := func() string { return []string{"a", "b"}[rng.IntN(2)] }
	bound := func(f string) int {
		if f == "a" {
			return rng.IntN(11)
		}
		return rng.IntN(1001)
	}
	comparison := func() string {
		f := field()
		switch rng.IntN(3) {
		case 0:
			return fmt.Sprintf(`{%q:{"$gte":%d}}`, f, bound(f))
		case 1:
			return fmt.Sprintf(`{%q:{"$lt":%d}}`, f, bound(f))
		}
		lo := bound(f)
		return fmt.Sprintf(`{%q:{"$gt":%d,"$lte":%d}}`, f, lo, lo+bound(f))
	}
	raced, won := 0, 0
	for i := 0; i < 400; i++ {
		raw := comparison()
		switch rng.IntN(4) {
		case 0:
			raw = fmt.Sprintf(`{"$and":[%s,%s]}`, raw, comparison())
		case 1:
			raw = fmt.Sprintf(`{"$or":[%s,%s]}`, raw, comparison())
		}
		f, err := filter.Parse([]byte(raw), c.coll.Schema, filter.Collation{})
		if err != nil {
			t.Fatal(err)
		}
		req := Request{Filter: f, Limit: []int64{1, 5, 10, 40}[rng.IntN(4)]}
		after := math.MinInt
		if rng.IntN(3) == 0 {
			after = ids[rng.IntN(len(ids))]
			req.After, _ = keyspace.Document(c.coll.ID, []any{after})
		}
		if rng.IntN(2) == 0 {
			req.Doc = func(v []byte) ([]byte, error) { return v, nil }
		}
		var want []string
		for _, id := range ids {
			if ok, _ := f.Matches([]byte(all[id])); ok && id > after && int64(len(want)) < req.Limit {
				want = append(want, all[id])
			}
		}
		it, plan, err := Run(ctx, reusingTx{tx}, c.coll, req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for int64(len(got)) < req.Limit && it.Next() {
			if ok, _ := f.Matches(it.Value()); ok {
				got = append(got, string(it.Value()))
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
		if !slices.Equal(got, want) {
			t.Fatalf("%s limit %d after %d, plan %q:\n got %v\nwant %v", raw, req.Limit, after, plan, got, want)
		}
		if req.Limit >= 5 {
			raced++
			if strings.Contains(plan.Detail, "held the limit") {
				won++
			}
		}
	}
	// The race ran, and the scan won some of it and lost some.
	if won == 0 || won == raced {
		t.Fatalf("the scan won %d of %d races", won, raced)
	}
}

// reusingTx is a transaction whose scans hand out their keys and values in
// one buffer each, overwritten at every step, as a store may: whoever keeps
// one past the next step must copy it.
type reusingTx struct{ kv.Tx }

func (r reusingTx) Scan(ctx context.Context, rg kv.Range, opts kv.ScanOptions) kv.Iterator {
	return &reusingIterator{Iterator: r.Tx.Scan(ctx, rg, opts)}
}

type reusingIterator struct {
	kv.Iterator
	key, value []byte
}

func (r *reusingIterator) Next() bool {
	if !r.Iterator.Next() {
		return false
	}
	r.key = append(r.key[:0], r.Iterator.Key()...)
	r.value = append(r.value[:0], r.Iterator.Value()...)
	return true
}

func (r *reusingIterator) Key() []byte   { return r.key }
func (r *reusingIterator) Value() []byte { return r.value }
