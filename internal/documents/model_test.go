package documents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// modelSeed is the seed of a randomized test: FOLIO_TEST_SEED if set (to
// replay a failure), otherwise the clock. The seed is logged if the test
// fails.
func modelSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FOLIO_TEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("FOLIO_TEST_SEED: %v", err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d (replay with FOLIO_TEST_SEED=%d)", seed, seed)
		}
	})
	return seed
}

// TestIndexMatchesDocuments: after random inserts, $set/$unset updates,
// replaces and deletes, a collection's index holds exactly the entries its
// documents imply, no more (a stale entry makes an index-served sort,
// which does not re-check values, return a document twice) and no fewer;
// and sorted and filtered reads on every field return each matching
// document once.
func TestIndexMatchesDocuments(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, propSchema)
		s := New()
		rng := rand.New(rand.NewPCG(modelSeed(t), 22))
		const ids = 24
		live := map[int]bool{} // the ids the model says are stored
		deadline := time.Now().Add(2 * time.Second)
		for step := 0; step < 400 && (step < 12 || time.Now().Before(deadline)); step++ {
			var desc []string
			changed := map[int]bool{}
			_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
				desc, changed = desc[:0], map[int]bool{}
				for n := 1 + rng.IntN(3); n > 0; n-- {
					d, err := randomWrite(tx, s, coll, rng, ids, live, changed)
					if err != nil {
						return fmt.Errorf("%s: %w", d, err)
					}
					desc = append(desc, d)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for id, present := range changed {
				live[id] = present
			}
			if t.Failed() {
				return
			}
			checkIndex(t, store, s, coll, rng, live, fmt.Sprintf("step %d (%s)", step, strings.Join(desc, "; ")), step%8 == 0)
		}
	})
}

// randomWrite does one random write in tx and says what it did. changed
// records the ids it inserted (true) or deleted (false); live is the
// model before the transaction, overridden by changed.
func randomWrite(tx kv.Tx, s *Service, coll *catalog.Collection, rng *rand.Rand, ids int, live, changed map[int]bool) (string, error) {
	present := func(id int) bool {
		if p, ok := changed[id]; ok {
			return p
		}
		return live[id]
	}
	id := rng.IntN(ids)
	parse := func(raw string) (filter.Filter, error) {
		return filter.Parse([]byte(raw), coll.Schema, filter.Collation{})
	}
	switch op := rng.IntN(10); {
	case op < 3 && !present(id):
		doc := randomDoc(rng, id)
		changed[id] = true
		_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(doc)})
		return "insert " + doc, err
	case op < 5:
		// Sometimes several documents at once, a key among them twice: the
		// later one replaces the earlier, index entries included.
		var docs [][]byte
		var desc []string
		for _, id := range [][]int{{id}, {id, rng.IntN(ids)}, {id, rng.IntN(ids), id}}[rng.IntN(3)] {
			doc := randomDoc(rng, id)
			changed[id] = true
			docs, desc = append(docs, []byte(doc)), append(desc, doc)
		}
		_, err := s.Replace(ctx, tx, coll, docs)
		return "replace " + strings.Join(desc, ", "), err
	case op < 8:
		raw := fmt.Sprintf(`{"id":%d}`, id)
		if rng.IntN(4) == 0 { // several documents at once
			raw = randomComparison(rng)
		}
		f, err := parse(raw)
		if err != nil {
			return raw, err
		}
		fields := randomUpdate(rng)
		limit := int64(rng.IntN(3)) // 0: no limit
		_, err = s.Update(ctx, tx, coll, f, []byte(fields), limit)
		return fmt.Sprintf("update %s %s limit %d", raw, fields, limit), err
	default:
		raw := fmt.Sprintf(`{"id":%d}`, id)
		if rng.IntN(6) == 0 {
			raw = randomComparison(rng)
		}
		f, err := parse(raw)
		if err != nil {
			return raw, err
		}
		// Which documents the filter deletes, read in the same transaction:
		// with a limit, the first matches in key order.
		limit := int64(rng.IntN(3)) // 0: no limit
		var gone []string
		if err := s.Read(ctx, tx, coll, ReadRequest{Filter: f, Limit: limit}, func(it ReadItem) error {
			gone = append(gone, string(it.Data))
			return nil
		}); err != nil {
			return raw, err
		}
		for _, d := range gone {
			v, err := jsonID(d)
			if err != nil {
				return raw, err
			}
			changed[v] = false
		}
		_, err = s.Delete(ctx, tx, coll, f, limit)
		return fmt.Sprintf("delete %s limit %d", raw, limit), err
	}
}

// randomUpdate returns update fields: a $set of some fields (nested ones
// included), an $unset of others, or both.
func randomUpdate(rng *rand.Rand) string {
	sets := map[string]string{
		"name":      fmt.Sprintf("%q", names[rng.IntN(len(names))]),
		"age":       fmt.Sprint(rng.IntN(12) - 2),
		"score":     fmt.Sprint(float64(rng.IntN(10)) / 2),
		"ok":        fmt.Sprint(rng.IntN(2) == 0),
		"when":      fmt.Sprintf("%q", times[rng.IntN(len(times))]),
		"tags":      fmt.Sprintf(`[%q,%q]`, names[rng.IntN(len(names))], names[rng.IntN(len(names))]),
		"addr":      fmt.Sprintf(`{"city":%q,"zip":%d}`, cities[rng.IntN(len(cities))], rng.IntN(5)),
		"addr.city": fmt.Sprintf("%q", cities[rng.IntN(len(cities))]),
	}
	fields := []string{"name", "age", "score", "ok", "when", "tags", "addr", "addr.city"}
	rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	nSet, nUnset := rng.IntN(3), rng.IntN(2)
	if nSet+nUnset == 0 {
		nSet = 1
	}
	var set, unset []string
	for _, f := range fields[:nSet] {
		set = append(set, fmt.Sprintf("%q:%s", f, sets[f]))
	}
	for _, f := range fields[nSet : nSet+nUnset] {
		unset = append(unset, fmt.Sprintf("%q", f))
	}
	var parts []string
	if len(set) > 0 {
		parts = append(parts, `"$set":{`+strings.Join(set, ",")+`}`)
	}
	if len(unset) > 0 {
		parts = append(parts, `"$unset":[`+strings.Join(unset, ",")+`]`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func jsonID(doc string) (int, error) {
	var d struct{ ID *int }
	if err := json.Unmarshal([]byte(doc), &d); err != nil || d.ID == nil {
		return 0, fmt.Errorf("document without an id: %s (%v)", doc, err)
	}
	return *d.ID, nil
}

// checkIndex compares the collection's index with the entries its stored
// documents imply, and reads sorted and filtered on every field.
// The reads go over every field when all is set, and over two random ones
// otherwise.
func checkIndex(t *testing.T, store kv.Store, s *Service, coll *catalog.Collection, rng *rand.Rand, live map[int]bool, after string, all bool) {
	t.Helper()
	tx, err := store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	docs := readAll(t, s, tx, coll, ReadRequest{})
	var stored, model []int
	var want [][]byte
	for _, d := range docs {
		id, err := jsonID(d)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, id)
		pk, err := coll.Schema.ExtractKey([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		key, err := keyspace.Document(coll.ID, pk)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := index.Entries(coll.Schema, []byte(d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want = append(want, index.Key(coll.ID, e, key[len(keyspace.Documents(coll.ID).Begin):]))
		}
	}
	for id, ok := range live {
		if ok {
			model = append(model, id)
		}
	}
	slices.Sort(model)
	if !slices.Equal(stored, model) {
		t.Fatalf("after %s: stored ids %v, want %v", after, stored, model)
	}
	slices.SortFunc(want, bytes.Compare)

	var got [][]byte
	it := tx.Scan(ctx, keyspace.Indexes(coll.ID), kv.ScanOptions{})
	for it.Next() {
		got = append(got, bytes.Clone(it.Key()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if extra, missing := keyDiff(got, want); len(extra)+len(missing) > 0 {
		t.Fatalf("after %s: index entries not implied by the documents: %x\nentries missing: %x", after, extra, missing)
	}
	// The collection's count of index bytes is the entries' size.
	var indexBytes int64
	for _, k := range got {
		indexBytes += int64(len(k))
	}
	sizes, err := catalog.New().Sizes(ctx, tx, coll)
	if err != nil || sizes.Indexes != indexBytes {
		t.Fatalf("after %s: the index size counter says %d bytes (%v), the entries take %d", after, sizes.Indexes, err, indexBytes)
	}
	// So are the document counter and the documents' bytes (their stored
	// records, header included).
	var records, recordBytes int64
	it = tx.Scan(ctx, keyspace.Documents(coll.ID), kv.ScanOptions{})
	for it.Next() {
		records++
		recordBytes += int64(len(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if sizes.Documents != recordBytes {
		t.Fatalf("after %s: the size counter says %d bytes, the %d records take %d", after, sizes.Documents, records, recordBytes)
	}
	raw, err := tx.Snapshot().Get(ctx, keyspace.Count(coll.ID))
	if err != nil && !errors.Is(err, kv.ErrNotFound) { // no counter yet: none counted
		t.Fatal(err)
	}
	if n := kv.DecodeCounter(raw); n != records {
		t.Fatalf("after %s: the count says %d, %d records are stored", after, n, records)
	}

	// Every scalar field (arrays do not sort; their entries are compared
	// above).
	paths := []string{"name", "age", "score", "ok", "when", "addr.city", "addr.zip", "id"}
	if !all {
		rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
		paths = paths[:2]
	}
	for _, path := range paths {
		for _, desc := range []bool{false, true} {
			got := readAll(t, s, tx, coll, ReadRequest{Sort: []SortField{{Path: path, Desc: desc}}})
			if want := sortDocs(t, slices.Clone(docs), path, desc); !slices.Equal(got, want) {
				t.Fatalf("after %s: sort on %s desc=%v returns\n%v\nwant\n%v", after, path, desc, got, want)
			}
		}
	}
	for range 3 {
		raw := randomComparison(rng)
		f, err := filter.Parse([]byte(raw), coll.Schema, filter.Collation{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readAll(t, s, tx, coll, ReadRequest{Filter: f}), bruteForce(t, s, tx, coll, f); !slices.Equal(got, want) {
			t.Fatalf("after %s: filter %s returns\n%v\nwant\n%v", after, raw, got, want)
		}
	}
}

// keyDiff returns the keys only in got and those only in want, both
// sorted.
func keyDiff(got, want [][]byte) (extra, missing [][]byte) {
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j == len(want) || i < len(got) && bytes.Compare(got[i], want[j]) < 0:
			extra = append(extra, got[i])
			i++
		case i == len(got) || bytes.Compare(got[i], want[j]) > 0:
			missing = append(missing, want[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return extra, missing
}
