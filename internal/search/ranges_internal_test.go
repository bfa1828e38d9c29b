package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/filter"
)

// TestNumberRangesMatchTheFilter: conjunctions of bounds on number fields
// find exactly the documents the filter itself matches: random bounds,
// inclusive and not, equal, crossed and repeated, on integers and numbers,
// with other conditions beside them and documents without the fields.
func TestNumberRangesMatchTheFilter(t *testing.T) {
	s, idx, an := newTestIndex(t, `{"title":"docs","properties":{"id":{"type":"integer"},"n":{"type":"integer"},`+
		`"x":{"type":"number"},"tag":{"type":"string"}},"primary_key":["id"]}`)
	rng := rand.New(rand.NewPCG(3, 4))
	docs := map[string][]byte{}
	b := idx.NewBatch()
	for i := range 400 {
		data := fmt.Sprintf(`{"id":%d,"n":%d,"x":%g,"tag":"t%d"}`, i, rng.IntN(40)-20, float64(rng.IntN(200)-100)/8, i%3)
		if i%17 == 0 {
			data = fmt.Sprintf(`{"id":%d,"tag":"t%d"}`, i, i%3) // no numbers at all
		}
		key := fmt.Sprintf("k%04d", i)
		docs[docID([]byte(key))] = []byte(data)
		d, err := buildDocument([]byte(key), []byte(data), s, an)
		if err != nil {
			t.Fatal(err)
		}
		b.IndexAdvanced(d)
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	searcher := &Searcher{idx: idx}
	ops := []string{"$gt", "$gte", "$lt", "$lte", "$eq"}
	bound := func(field string) string {
		if field == "n" {
			return fmt.Sprint(rng.IntN(44) - 22)
		}
		return fmt.Sprint(float64(rng.IntN(220)-110) / 8)
	}
	for range 300 {
		var conds []string
		for range 2 + rng.IntN(3) {
			field := []string{"n", "x"}[rng.IntN(2)]
			conds = append(conds, fmt.Sprintf(`{%q:{%q:%s}}`, field, ops[rng.IntN(len(ops))], bound(field)))
		}
		if rng.IntN(3) == 0 {
			conds = append(conds, fmt.Sprintf(`{"tag":"t%d"}`, rng.IntN(3)))
		}
		raw := `{"$and":[` + strings.Join(conds, ",") + `]}`
		f, err := filter.Parse([]byte(raw), s, filter.Collation{})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var want []string
		for id, data := range docs {
			if ok, err := f.Matches(data); err != nil {
				t.Fatal(err)
			} else if ok {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		p, err := Prepare(s, Request{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		res, err := searcher.Page(context.Background(), p, 0, 1000, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range res.Keys {
			got = append(got, docID(k))
		}
		if !slices.Equal(got, want) || res.Found != uint64(len(want)) {
			t.Fatalf("%s: %d hits (found %d), the filter matches %d", raw, len(got), res.Found, len(want))
		}
	}
}
