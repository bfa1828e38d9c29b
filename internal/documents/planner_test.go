package documents

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

var ctx = context.Background()

const propSchema = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},
	"name":{"type":"string"},
	"age":{"type":"integer"},
	"score":{"type":"number"},
	"ok":{"type":"boolean"},
	"when":{"type":"string","format":"date-time"},
	"tags":{"type":"array","items":{"type":"string"}},
	"addr":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"integer"}}}}}`

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// eachBackend runs fn as a subtest per storage engine.
func eachBackend(t *testing.T, fn func(t *testing.T, open func(testing.TB) kv.Store)) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) { fn(t, b.Open) })
}

// newCollection opens an embedded store with one collection.
func newCollection(t testing.TB, schema string) (kv.Store, *catalog.Collection) {
	return newCollectionOn(t, backendtest.OpenPebble, schema)
}

func newCollectionOn(t testing.TB, open func(testing.TB) kv.Store, schema string) (kv.Store, *catalog.Collection) {
	t.Helper()
	store := open(t)
	cat := catalog.New()
	var coll *catalog.Collection
	_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		if err := cat.CreateDatabase(ctx, tx, ns, "db"); err != nil {
			return err
		}
		db, err := cat.Database(ctx, tx, ns, "db")
		if err != nil {
			return err
		}
		name := "things"
		if strings.Contains(schema, `"title":"big"`) {
			name = "big"
		}
		if _, err := cat.CreateOrUpdateCollection(ctx, tx, db, name, []byte(schema), false); err != nil {
			return err
		}
		coll, err = cat.Collection(ctx, tx, db, name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return store, coll
}

var (
	names  = []string{"ann", "Ann", "ANN", "bob", "Bob", "carl", "Zoe", "zoe", "é", "É"}
	cities = []string{"Paris", "paris", "Oslo", "oslo", "Rome"}
	times  = []string{"2022-01-01T00:00:00Z", "2022-06-01T12:00:00Z", "2023-01-01T00:00:00Z"}
)

func randomDoc(rng *rand.Rand, id int) string {
	parts := []string{fmt.Sprintf(`"id":%d`, id)}
	maybe := func(s string) {
		if rng.IntN(4) > 0 {
			parts = append(parts, s)
		}
	}
	maybe(fmt.Sprintf(`"name":%q`, names[rng.IntN(len(names))]))
	maybe(fmt.Sprintf(`"age":%d`, rng.IntN(12)-2))
	maybe(fmt.Sprintf(`"score":%g`, float64(rng.IntN(10))/2))
	maybe(fmt.Sprintf(`"ok":%t`, rng.IntN(2) == 0))
	maybe(fmt.Sprintf(`"when":%q`, times[rng.IntN(len(times))]))
	maybe(fmt.Sprintf(`"tags":["%s","%s"]`, names[rng.IntN(len(names))], names[rng.IntN(len(names))]))
	if rng.IntN(3) > 0 {
		parts = append(parts, fmt.Sprintf(`"addr":{"city":%q,"zip":%d}`, cities[rng.IntN(len(cities))], rng.IntN(5)))
	}
	if rng.IntN(10) == 0 && !strings.Contains(strings.Join(parts, ","), `"name"`) {
		parts = append(parts, `"name":null`)
	}
	rng.Shuffle(len(parts)-1, func(i, j int) { parts[i+1], parts[j+1] = parts[j+1], parts[i+1] })
	return "{" + strings.Join(parts, ",") + "}"
}

func randomComparison(rng *rand.Rand) string {
	ops := []string{"$eq", "$gt", "$gte", "$lt", "$lte"}
	op := ops[rng.IntN(len(ops))]
	var field, value string
	switch rng.IntN(9) {
	case 0:
		field, value = "name", fmt.Sprintf("%q", names[rng.IntN(len(names))])
	case 1:
		field, value = "age", fmt.Sprint(rng.IntN(12)-2)
	case 2:
		field, value = "score", fmt.Sprint(float64(rng.IntN(10))/2)
	case 3:
		field, value = "ok", fmt.Sprint(rng.IntN(2) == 0)
	case 4:
		field, value = "when", fmt.Sprintf("%q", times[rng.IntN(len(times))])
	case 5:
		field, value = "addr.city", fmt.Sprintf("%q", cities[rng.IntN(len(cities))])
	case 6: // some element of an array
		field, value = "tags", fmt.Sprintf("%q", names[rng.IntN(len(names))])
	case 7: // the whole array, or one element in a range
		a, b := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
		if rng.IntN(2) == 0 {
			return fmt.Sprintf(`{"tags":[%q,%q]}`, a, b)
		}
		return fmt.Sprintf(`{"tags":{"$gte":%q,"$lt":%q}}`, a, b)
	default:
		field, value = "id", fmt.Sprint(rng.IntN(60))
	}
	collation := ""
	if rng.IntN(5) == 0 {
		collation = `,"collation":{"case":"ci"}`
	}
	if op == "$eq" && collation == "" && rng.IntN(2) == 0 {
		return fmt.Sprintf(`{%q:%s}`, field, value)
	}
	return fmt.Sprintf(`{%q:{%q:%s%s}}`, field, op, value, collation)
}

func randomFilter(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(3) == 0 {
		return randomComparison(rng)
	}
	n := 2 + rng.IntN(2)
	var subs []string
	for i := 0; i < n; i++ {
		subs = append(subs, randomFilter(rng, depth-1))
	}
	op := "$and"
	if rng.IntN(2) == 0 {
		op = "$or"
	}
	return fmt.Sprintf(`{%q:[%s]}`, op, strings.Join(subs, ","))
}

// insertRandom commits n random documents with ids 0 to n-1.
func insertRandom(t testing.TB, store kv.Store, s *Service, coll *catalog.Collection, rng *rand.Rand, n int) {
	t.Helper()
	var docs [][]byte
	for id := 0; id < n; id++ {
		docs = append(docs, []byte(randomDoc(rng, id)))
	}
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, docs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// readAll returns the documents a read yields, as strings.
func readAll(t testing.TB, s *Service, tx kv.Tx, coll *catalog.Collection, req ReadRequest) []string {
	t.Helper()
	var out []string
	err := s.Read(ctx, tx, coll, req, func(it ReadItem) error {
		out = append(out, string(it.Data))
		return nil
	})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return out
}

// bruteForce evaluates f over every document of the transaction's view.
func bruteForce(t testing.TB, s *Service, tx kv.Tx, coll *catalog.Collection, f filter.Filter) []string {
	t.Helper()
	var out []string
	for _, d := range readAll(t, s, tx, coll, ReadRequest{}) {
		ok, err := f.Matches([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

// TestPlannerMatchesBruteForce: for random documents and random filters,
// planned reads (through every-field indexes) return exactly what a full
// evaluation returns, in primary-key order; with limits and skips; outside
// and inside a transaction holding uncommitted inserts, updates and
// deletes.
func TestPlannerMatchesBruteForce(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, propSchema)
		s := New()
		rng := rand.New(rand.NewPCG(7, 11))
		insertRandom(t, store, s, coll, rng, 60)
		check := func(tx kv.Tx, round int) {
			for i := 0; i < 150; i++ {
				raw := randomFilter(rng, 2)
				collation := filter.Collation{}
				if rng.IntN(4) == 0 {
					collation.Case = "ci"
				}
				f, err := filter.Parse([]byte(raw), coll.Schema, collation)
				if err != nil {
					t.Fatalf("filter %s: %v", raw, err)
				}
				want := bruteForce(t, s, tx, coll, f)
				got := readAll(t, s, tx, coll, ReadRequest{Filter: f})
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("round %d, filter %s (collation %q):\n got %d %v\nwant %d %v", round, raw, collation.Case, len(got), got, len(want), want)
				}
				limit, skip := int64(rng.IntN(4)), int64(rng.IntN(3))
				got = readAll(t, s, tx, coll, ReadRequest{Filter: f, Limit: limit, Skip: skip})
				end := min(int64(len(want)), skip+limit)
				if limit == 0 {
					end = int64(len(want))
				}
				exp := []string{}
				if skip < int64(len(want)) {
					exp = want[skip:end]
				}
				if fmt.Sprint(got) != fmt.Sprint(exp) && !(len(got) == 0 && len(exp) == 0) {
					t.Fatalf("filter %s limit %d skip %d:\n got %v\nwant %v", raw, limit, skip, got, exp)
				}
				// Pages of a limit each, every one resuming after the last
				// document of the one before, read every match once.
				page := 1 + int64(rng.IntN(3))
				var paged []string
				var after []byte
				for n := 0; n <= len(want); n++ {
					var items int64
					err := s.Read(ctx, tx, coll, ReadRequest{Filter: f, Limit: page, After: after}, func(it ReadItem) error {
						paged = append(paged, string(it.Data))
						after = bytes.Clone(it.ResumeToken)
						items++
						return nil
					})
					if err != nil {
						t.Fatalf("filter %s, pages of %d: %v", raw, page, err)
					}
					if items < page {
						break
					}
				}
				if fmt.Sprint(paged) != fmt.Sprint(want) && !(len(paged) == 0 && len(want) == 0) {
					t.Fatalf("filter %s, pages of %d:\n got %v\nwant %v", raw, page, paged, want)
				}
			}
		}
		tx, err := store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check(tx, 0)
		tx.Rollback()

		// Inside a transaction with uncommitted writes of every kind.
		tx, err = store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var more [][]byte
		for id := 100; id < 120; id++ {
			more = append(more, []byte(randomDoc(rng, id)))
		}
		if _, err := s.Insert(ctx, tx, coll, more); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			f, _ := filter.Parse([]byte(fmt.Sprintf(`{"id":%d}`, rng.IntN(60))), coll.Schema, filter.Collation{})
			set := fmt.Sprintf(`{"$set":{"name":%q,"age":%d,"addr.city":%q}}`, names[rng.IntN(len(names))], rng.IntN(12), cities[rng.IntN(len(cities))])
			if _, err := s.Update(ctx, tx, coll, f, []byte(set), 0); err != nil {
				t.Fatal(err)
			}
		}
		f, _ := filter.Parse([]byte(`{"age":{"$lt":2}}`), coll.Schema, filter.Collation{})
		if _, err := s.Delete(ctx, tx, coll, f, 0); err != nil {
			t.Fatal(err)
		}
		unset, _ := filter.Parse([]byte(`{"id":{"$lt":10}}`), coll.Schema, filter.Collation{})
		if _, err := s.Update(ctx, tx, coll, unset, []byte(`{"$unset":["name"]}`), 0); err != nil {
			t.Fatal(err)
		}
		check(tx, 1)
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		// And once more after the commit, on a fresh transaction.
		tx2, err := store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx2.Rollback()
		check(tx2, 2)
	})
}

// TestIndexUse proves that a selective filter on a non-key field reads
// about as many keys as it matches, not the collection: over 100,000
// documents, counted through the kv interface.
func TestIndexUse(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		if testing.Short() {
			t.Skip("loads 100,000 documents")
		}
		const n = 100_000
		store, coll := newCollectionOn(t, open, `{"title":"big","primary_key":["id"],"properties":{
			"id":{"type":"integer"},"group":{"type":"integer"},"email":{"type":"string"},"age":{"type":"integer"}}}`)
		s := New()
		for start := 0; start < n; start += 5000 {
			var batch [][]byte
			for id := start; id < start+5000; id++ {
				batch = append(batch, []byte(fmt.Sprintf(`{"id":%d,"group":%d,"email":"User%d@example.com","age":%d}`, id, id%5000, id, id%1000)))
			}
			if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
				_, err := s.Insert(ctx, tx, coll, batch)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			filter    string
			collation string
			matches   int
			limit     int64
		}{
			{`{"group":1234}`, "", 20, 0},
			{`{"email":"user4242@example.com"}`, "ci", 1, 0},
			{`{"email":"User4242@example.com"}`, "", 1, 0},
			{`{"$and":[{"age":{"$gte":10}},{"age":{"$lt":12}}]}`, "", 200, 0},
			{`{"$or":[{"group":7},{"group":8}]}`, "", 40, 0},
			{`{"$and":[{"group":99},{"age":{"$gt":0}}]}`, "", 20, 0},
		} {
			f, err := filter.Parse([]byte(tc.filter), coll.Schema, filter.Collation{Case: tc.collation})
			if err != nil {
				t.Fatal(err)
			}
			var count kv.ReadCount
			tx, err := store.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, s, kv.CountReads(tx, &count), coll, ReadRequest{Filter: f, Limit: tc.limit})
			tx.Rollback()
			if len(got) != tc.matches {
				t.Fatalf("%s: %d matches, want %d", tc.filter, len(got), tc.matches)
			}
			// Index entries plus documents, and a few catalog reads.
			if keys := count.Keys.Load(); keys > int64(4*tc.matches+10) {
				t.Fatalf("%s: read %d keys for %d matches: the index was not used", tc.filter, keys, tc.matches)
			} else {
				t.Logf("%s: %d keys read for %d matches", tc.filter, keys, tc.matches)
			}
		}

		// A filter that matches everything, with a limit: the planner reads at
		// most sqrt(limit × documents) index entries before it settles on a
		// scan, which then stops at the limit. That bounds the work to about
		// twice the cheaper plan's, whatever the filter's selectivity.
		f, _ := filter.Parse([]byte(`{"age":{"$gte":0}}`), coll.Schema, filter.Collation{})
		var count kv.ReadCount
		tx, err := store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if got := readAll(t, s, kv.CountReads(tx, &count), coll, ReadRequest{Filter: f, Limit: 50}); len(got) != 50 {
			t.Fatalf("limit 50: %d documents", len(got))
		}
		if bound := int64(math.Sqrt(50*n)) + 50 + 10; count.Keys.Load() > bound {
			t.Fatalf("unselective filter with limit 50 read %d keys, bound %d", count.Keys.Load(), bound)
		}
	})
}

// sortDocs orders docs (given in primary-key order) as a read sorted on
// path returns them: missing values last in ascending key order, ties in
// key order (descending for a descending sort). It reorders docs.
func sortDocs(t testing.TB, docs []string, path string, desc bool) []string {
	if desc { // ties in descending primary-key order
		slices.Reverse(docs)
	}
	slices.SortStableFunc(docs, func(a, b string) int {
		va, vb := sortValue(t, a, path), sortValue(t, b, path)
		switch {
		case va == nil && vb == nil: // ascending key order among the missing
			return cmp.Compare(sortValue(t, a, "id").(float64), sortValue(t, b, "id").(float64))
		case va == nil:
			return 1
		case vb == nil:
			return -1
		}
		c := compareValues(va, vb)
		if desc {
			c = -c
		}
		return c
	})
	return docs
}

// sortValue reads the value at a dot path with encoding/json, independently
// of the index encoding; nil when missing or null.
func sortValue(t testing.TB, doc, path string) any {
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	var v any = m
	for _, p := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[p]
	}
	return v
}

func compareValues(a, b any) int {
	switch a := a.(type) {
	case float64:
		return cmp.Compare(a, b.(float64))
	case string:
		return strings.Compare(a, b.(string))
	case bool:
		return cmp.Compare(boolInt(a), boolInt(b.(bool)))
	}
	panic(fmt.Sprintf("unexpected %T", a))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSortMatchesBruteForce: sorted reads, from an index or in memory,
// return the matches ordered by the field (missing values last, ties in
// primary-key order), with limit and skip.
func TestSortMatchesBruteForce(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, propSchema)
		s := New()
		rng := rand.New(rand.NewPCG(3, 5))
		insertRandom(t, store, s, coll, rng, 80)
		tx, err := store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		paths := []string{"name", "age", "score", "ok", "when", "addr.city", "id"}
		for i := 0; i < 200; i++ {
			path := paths[rng.IntN(len(paths))]
			desc := rng.IntN(2) == 0
			var raw string
			switch rng.IntN(3) {
			case 0:
				raw = `{}`
			case 1:
				raw = randomComparison(rng)
			default:
				raw = randomFilter(rng, 1)
			}
			f, err := filter.Parse([]byte(raw), coll.Schema, filter.Collation{})
			if err != nil {
				t.Fatal(err)
			}
			want := sortDocs(t, bruteForce(t, s, tx, coll, f), path, desc)
			limit, skip := int64(rng.IntN(5)), int64(rng.IntN(3))
			got := readAll(t, s, tx, coll, ReadRequest{Filter: f, Sort: []SortField{{Path: path, Desc: desc}}, Limit: limit, Skip: skip})
			exp := want[min(int(skip), len(want)):]
			if limit > 0 {
				exp = exp[:min(int(limit), len(exp))]
			}
			if fmt.Sprint(got) != fmt.Sprint(exp) {
				t.Fatalf("sort %s desc=%v filter %s limit %d skip %d:\n got %v\nwant %v", path, desc, raw, limit, skip, got, exp)
			}
		}
	})
}

// TestLongStrings: values longer than an index entry holds are found by
// equality and ranges all the same, and never make a write fail.
func TestLongStrings(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, propSchema)
		s := New()
		long := strings.Repeat("x", 20_000)
		docs := [][]byte{
			[]byte(`{"id":1,"name":"` + long + `a"}`),
			[]byte(`{"id":2,"name":"` + long + `b"}`),
			[]byte(`{"id":3,"name":"` + long + `"}`),
			[]byte(`{"id":4,"name":"` + strings.ToUpper(long) + `B"}`),
			[]byte(`{"id":5,"name":"y"}`),
		}
		if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
			_, err := s.Insert(ctx, tx, coll, docs)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		tx, err := store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		for _, tc := range []struct {
			filter, collation string
			ids               string
		}{
			{`{"name":"` + long + `b"}`, "", "2"},
			{`{"name":{"$gt":"` + long + `a"}}`, "", "2 5"},
			{`{"name":{"$lt":"` + long + `a"}}`, "", "3 4"},
			{`{"name":{"$gte":"` + long + `"}}`, "", "1 2 3 5"},
			{`{"name":"` + long + `B"}`, "ci", "2 4"},
			{`{"name":{"$gt":"` + long + `a"}}`, "ci", "2 4 5"},
		} {
			f, err := filter.Parse([]byte(tc.filter), coll.Schema, filter.Collation{Case: tc.collation})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, d := range readAll(t, s, tx, coll, ReadRequest{Filter: f, Include: map[string]bool{"id": true}}) {
				ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(d, `{"id":`), "}"))
			}
			if strings.Join(ids, " ") != tc.ids {
				t.Errorf("%.60s… (%s): ids %v, want %s", tc.filter, tc.collation, ids, tc.ids)
			}
		}
	})
}

// ns is the namespace the tests keep their databases in.
const ns = keyspace.DefaultNamespace
