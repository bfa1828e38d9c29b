package documents

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/aggregate"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

const ttlSchema = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},
	"kind":{"type":"string"},
	"expires_at":{"type":"string","format":"date-time"}},
	"ttl":{"field":"expires_at"}}`

// expiry is the time the test documents expire at.
var expiry = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// clockedService is a Service whose clock the test sets.
func clockedService(now *time.Time) *Service {
	s := New()
	s.Now = func() time.Time { return *now }
	return s
}

func run(t testing.TB, store kv.Store, fn func(tx kv.Tx) error) {
	t.Helper()
	if _, err := kv.Run(ctx, store, fn); err != nil {
		t.Fatal(err)
	}
}

func parseFilter(t testing.TB, coll *catalog.Collection, f string) filter.Filter {
	t.Helper()
	pf, err := filter.Parse([]byte(f), coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// ids reads the ids a filter's read returns, in order.
func ids(t testing.TB, s *Service, store kv.Store, coll *catalog.Collection, f string) string {
	t.Helper()
	var out []string
	run(t, store, func(tx kv.Tx) error {
		out = out[:0]
		for _, d := range readAll(t, s, tx, coll, ReadRequest{Filter: parseFilter(t, coll, f)}) {
			id, err := jsonID(d)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprint(id))
		}
		return nil
	})
	return strings.Join(out, ",")
}

func count(t testing.TB, s *Service, store kv.Store, coll *catalog.Collection, f string) int64 {
	t.Helper()
	var n int64
	run(t, store, func(tx kv.Tx) (err error) {
		n, _, err = s.Count(ctx, tx, coll, parseFilter(t, coll, f))
		return err
	})
	return n
}

// A document is returned by every read path just before its time and by
// none at it: reads by filter (scan, index range, index in key order,
// point read by key, sorted), counts (the counter's and the index's plans
// included), search's fetch by key, updates and deletes by filter.
func TestExpiredDocumentsAreInvisible(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, ttlSchema)
		now := expiry.Add(-time.Hour)
		s := clockedService(&now)
		run(t, store, func(tx kv.Tx) error {
			_, err := s.Insert(ctx, tx, coll, [][]byte{
				[]byte(`{"id":1,"kind":"a","expires_at":"2026-11-28T10:00:00Z"}`),
				[]byte(`{"id":2,"kind":"a","expires_at":"2026-11-28T11:00:00Z"}`),
				[]byte(`{"id":3,"kind":"a"}`),
				[]byte(`{"id":4,"kind":"a","expires_at":null}`),
				[]byte(`{"id":5,"kind":"b","expires_at":"2026-11-28T12:00:00+02:00"}`), // 10:00 UTC
			})
			return err
		})
		type view struct{ all, byIndex, point, sorted, byKind, limited string }
		look := func() view {
			var sorted []string
			run(t, store, func(tx kv.Tx) error {
				sorted = sorted[:0]
				for _, d := range readAll(t, s, tx, coll, ReadRequest{Sort: []SortField{{Path: "expires_at"}}}) {
					id, _ := jsonID(d)
					sorted = append(sorted, fmt.Sprint(id))
				}
				slices.Sort(sorted)
				return nil
			})
			var limited []string
			run(t, store, func(tx kv.Tx) error {
				limited = limited[:0]
				for _, d := range readAll(t, s, tx, coll, ReadRequest{Filter: parseFilter(t, coll, `{"kind":"a"}`), Limit: 10}) {
					id, _ := jsonID(d)
					limited = append(limited, fmt.Sprint(id))
				}
				return nil
			})
			return view{
				all:     ids(t, s, store, coll, `{}`),
				byIndex: ids(t, s, store, coll, `{"expires_at":{"$lt":"2026-11-28T12:00:00Z"}}`),
				point:   ids(t, s, store, coll, `{"id":1}`) + ";" + ids(t, s, store, coll, `{"id":5}`),
				sorted:  strings.Join(sorted, ","),
				byKind:  ids(t, s, store, coll, `{"kind":"b"}`),
				limited: strings.Join(limited, ","),
			}
		}
		before := look()
		// Sorted by the index of expires_at, whose entries order by text;
		// compared as sets.
		if want := (view{"1,2,3,4,5", "1,2,5", "1;5", "1,2,3,4,5", "5", "1,2,3,4"}); before != want {
			t.Errorf("an hour before: %+v, want %+v", before, want)
		}
		now = expiry.Add(-time.Nanosecond)
		if got := look(); got != before {
			t.Errorf("a nanosecond before expiry: %+v, want %+v", got, before)
		}
		if n := count(t, s, store, coll, `{}`); n != 5 {
			t.Errorf("count before: %d, want 5", n)
		}

		now = expiry
		got := look()
		if want := (view{"2,3,4", "2", ";", "2,3,4", "", "2,3,4"}); got != want {
			t.Errorf("at expiry: %+v, want %+v: 1 and 5 gone everywhere", got, want)
		}
		for f, want := range map[string]int64{`{}`: 3, `{"kind":"a"}`: 3, `{"kind":"b"}`: 0, `{"expires_at":{"$lte":"2026-11-28T10:00:00Z"}}`: 0} {
			if n := count(t, s, store, coll, f); n != want {
				t.Errorf("count %s at expiry: %d, want %d", f, n, want)
			}
		}
		// Aggregates: the plans that would count index entries or the
		// counter alone read the documents of a ttl collection instead.
		for _, tc := range []struct {
			groupBy      []string
			fields, want string
		}{
			{nil, `{"n":{"$count":{}}}`, `{"group":{},"n":3}`},
			{[]string{"kind"}, `{"n":{"$count":{}}}`, `{"group":{"kind":"a"},"n":3}`},
			{[]string{"kind"}, `{"n":{"$count_distinct":"id"}}`, `{"group":{"kind":"a"},"n":3}`},
		} {
			spec, err := aggregate.Parse(aggregate.Request{GroupBy: tc.groupBy, Fields: []byte(tc.fields)}, coll.Schema)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			run(t, store, func(tx kv.Tx) error {
				res, err := s.Aggregate(ctx, tx, coll, AggregateRequest{Filter: parseFilter(t, coll, `{}`), Spec: spec})
				if err != nil {
					return err
				}
				got = got[:0]
				for _, r := range res.Results {
					got = append(got, string(r))
				}
				return nil
			})
			if g := strings.Join(got, ";"); g != tc.want {
				t.Errorf("aggregate %v %s at expiry: %s, want %s", tc.groupBy, tc.fields, g, tc.want)
			}
		}
		// Search reads its hits by key.
		var found []bool
		run(t, store, func(tx kv.Tx) error {
			var keys [][]byte
			for _, id := range []int64{1, 2, 5} {
				k, err := keyspace.Document(coll.ID, []any{id})
				if err != nil {
					return err
				}
				keys = append(keys, k)
			}
			var buf []byte
			_, f, err := s.FetchMany(ctx, tx, coll, keys, &buf)
			found = f
			return err
		})
		if !slices.Equal(found, []bool{false, true, false}) {
			t.Errorf("search's fetch of 1, 2, 5 at expiry: found %v", found)
		}
		// Updates and deletes by filter pass over them.
		var res *WriteResult
		run(t, store, func(tx kv.Tx) (err error) {
			res, err = s.Update(ctx, tx, coll, parseFilter(t, coll, `{"kind":{"$gte":"a"}}`), []byte(`{"$set":{"kind":"c"}}`), 0)
			return err
		})
		if res.Modified != 3 {
			t.Errorf("update at expiry modified %d, want 3", res.Modified)
		}
		run(t, store, func(tx kv.Tx) (err error) {
			res, err = s.Delete(ctx, tx, coll, parseFilter(t, coll, `{"id":{"$in":[1,5]}}`), 0)
			return err
		})
		if res.Modified != 0 {
			t.Errorf("delete of the expired ones modified %d, want 0", res.Modified)
		}
	})
}

// logOps lists the change log's document records from start as
// "op:id[:expired]".
func logOps(t testing.TB, store kv.Store, start kv.Position) string {
	t.Helper()
	entries, _, err := store.ReadLog(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		for _, raw := range e.Records {
			r, err := changelog.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			doc := r.Data
			if doc == nil {
				doc = r.Before
			}
			id, _ := jsonID(string(doc))
			s := fmt.Sprintf("%s:%d", r.Op, id)
			if r.Expired {
				s += ":expired"
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// A write onto the key of an expired document finds it gone: an insert
// succeeds, a replace writes a new document, and the expired one's
// delete is logged as expired first.
func TestWritesOverExpiredDocuments(t *testing.T) {
	store, coll := newCollection(t, ttlSchema)
	now := expiry.Add(-time.Second)
	s := clockedService(&now)
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{
			[]byte(`{"id":1,"expires_at":"2026-11-28T10:00:00Z"}`),
			[]byte(`{"id":2,"expires_at":"2026-11-28T10:00:00Z"}`),
			[]byte(`{"id":3,"expires_at":"2026-11-28T11:00:00Z"}`),
		})
		return err
	})
	insert := func(doc string) error {
		_, err := kv.Run(ctx, store, func(tx kv.Tx) error { _, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(doc)}); return err })
		return err
	}
	if err := insert(`{"id":1,"kind":"again"}`); err == nil {
		t.Fatal("an insert onto a live document's key succeeded")
	}
	start, err := store.LastPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now = expiry
	if err := insert(`{"id":1,"kind":"again"}`); err != nil {
		t.Fatalf("an insert onto an expired document's key: %v", err)
	}
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Replace(ctx, tx, coll, [][]byte{[]byte(`{"id":2,"kind":"new"}`), []byte(`{"id":3,"kind":"new"}`)})
		return err
	})
	if got, want := logOps(t, store, start), "delete:1:expired insert:1 delete:2:expired replace:2 replace:3"; got != want {
		t.Errorf("log: %s, want %s", got, want)
	}
	if got := ids(t, s, store, coll, `{"kind":{"$in":["again","new"]}}`); got != "1,2,3" {
		t.Errorf("after the writes: %s, want 1,2,3", got)
	}
	if n := count(t, s, store, coll, `{}`); n != 3 {
		t.Errorf("count: %d, want 3", n)
	}
}

// The sweep deletes expired documents found through the ttl field's
// entries, a batch per transaction, logging each delete as expired, and
// leaves the others; describe's pending count goes to zero with it.
func TestSweep(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, ttlSchema)
		now := expiry.Add(-time.Hour)
		s := clockedService(&now)
		const expiring, lasting = 250, 20
		var docs [][]byte
		for i := range expiring + lasting {
			at := expiry.Add(-time.Duration(i) * time.Minute)
			if i >= expiring {
				at = expiry.Add(time.Hour)
			}
			docs = append(docs, fmt.Appendf(nil, `{"id":%d,"expires_at":%q}`, i, at.Format(time.RFC3339Nano)))
		}
		docs = append(docs, []byte(`{"id":1000}`))
		run(t, store, func(tx kv.Tx) error { _, err := s.Insert(ctx, tx, coll, docs); return err })
		pending := func() int64 {
			var n int64
			run(t, store, func(tx kv.Tx) (err error) { n, err = s.PendingExpired(ctx, tx, coll, now); return err })
			return n
		}
		// An hour before expiry the documents that expired up to an hour
		// before it (i ≥ 60) are expired already.
		if n := pending(); n != expiring-60 {
			t.Errorf("pending an hour early: %d, want %d", n, expiring-60)
		}
		now = expiry
		if n := pending(); n != expiring {
			t.Errorf("pending at expiry: %d, want %d", n, expiring)
		}
		start, err := store.LastPosition(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var from []byte
		var batches []int
		for {
			var res SweepResult
			run(t, store, func(tx kv.Tx) (err error) { res, err = s.Sweep(ctx, tx, coll, now, from, 100); return err })
			batches = append(batches, res.Deleted)
			if res.Next == nil {
				break
			}
			from = res.Next
		}
		if !slices.Equal(batches, []int{100, 100, 50}) {
			t.Errorf("batches deleted %v, want 100, 100, 50", batches)
		}
		if n := pending(); n != 0 {
			t.Errorf("pending after the sweep: %d", n)
		}
		if n := count(t, s, store, coll, `{}`); n != lasting+1 {
			t.Errorf("count after the sweep: %d, want %d", n, lasting+1)
		}
		// The stored count (the planner's, and describe's) followed.
		var stored int64
		run(t, store, func(tx kv.Tx) error {
			v, err := tx.Get(ctx, keyspace.Count(coll.ID))
			stored = kv.DecodeCounter(v)
			return err
		})
		if stored != lasting+1 {
			t.Errorf("stored count after the sweep: %d, want %d", stored, lasting+1)
		}
		ops := strings.Fields(logOps(t, store, start))
		if len(ops) != expiring {
			t.Fatalf("%d records logged, want %d", len(ops), expiring)
		}
		for _, op := range ops {
			if !strings.HasPrefix(op, "delete:") || !strings.HasSuffix(op, ":expired") {
				t.Fatalf("logged %s, want expired deletes only", op)
			}
		}
		// Nothing left to sweep, and nothing read past the range.
		var res SweepResult
		run(t, store, func(tx kv.Tx) (err error) { res, err = s.Sweep(ctx, tx, coll, now, nil, 100); return err })
		if res.Deleted != 0 || res.Next != nil {
			t.Errorf("a second sweep: %+v", res)
		}
	})
}

// Documents whose entries sort before the range's end but have not
// expired (a negative offset: the text is earlier than the time) are
// passed over, and a transaction reads at most four batches of entries.
func TestSweepPassesOverUnexpired(t *testing.T) {
	store, coll := newCollection(t, ttlSchema)
	now := expiry
	s := clockedService(&now)
	var docs [][]byte
	for i := range 450 {
		// 09:00-05:00 is 14:00 UTC: later than now, though its text is earlier.
		docs = append(docs, fmt.Appendf(nil, `{"id":%d,"expires_at":"2026-11-28T09:00:00-05:00"}`, i))
	}
	docs = append(docs, []byte(`{"id":999,"expires_at":"2026-11-28T09:30:00Z"}`))
	run(t, store, func(tx kv.Tx) error { _, err := s.Insert(ctx, tx, coll, docs); return err })
	var from []byte
	deleted, txs := 0, 0
	for {
		var res SweepResult
		run(t, store, func(tx kv.Tx) (err error) { res, err = s.Sweep(ctx, tx, coll, now, from, 100); return err })
		deleted += res.Deleted
		txs++
		if res.Next == nil {
			break
		}
		from = res.Next
	}
	if deleted != 1 || txs != 2 {
		t.Errorf("deleted %d in %d transactions, want 1 in 2 (400 entries read, then 51)", deleted, txs)
	}
	if n := count(t, s, store, coll, `{}`); n != 450 {
		t.Errorf("count: %d, want 450", n)
	}
}
