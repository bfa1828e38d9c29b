package search

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
	"golang.org/x/sync/errgroup"
)

// TestNumberRangesMatchTheFilter: conjunctions and disjunctions of bounds
// on number fields find exactly the documents the filter itself matches:
// random bounds, inclusive and not, equal, crossed and repeated, on
// integers and numbers, -0 among them, with other conditions beside them,
// documents without the fields and with several values, over several
// segments with updated and deleted documents. Each filter runs from the
// number columns, from the $num. terms (no columns), and with a budget
// too small for every column (which falls back to the terms).
func TestNumberRangesMatchTheFilter(t *testing.T) {
	s, idx, an := newTestIndex(t, `{"title":"docs","properties":{"id":{"type":"integer"},"n":{"type":"integer"},`+
		`"x":{"type":"number"},"xs":{"type":"array","items":{"type":"number"}},"tag":{"type":"string"},"b":{"type":"boolean"}},"primary_key":["id"]}`)
	rng := rand.New(rand.NewPCG(3, 4))
	docs := map[string][]byte{}
	write := func(from, to int, del bool) {
		b := idx.NewBatch()
		for i := from; i < to; i++ {
			key := fmt.Sprintf("k%04d", i)
			if del {
				delete(docs, fields.DocID([]byte(key)))
				b.Delete(fields.DocID([]byte(key)))
				continue
			}
			x := fmt.Sprint(float64(rng.IntN(200)-100) / 8)
			if rng.IntN(10) == 0 {
				x = "-0.0"
			}
			data := fmt.Sprintf(`{"id":%d,"n":%d,"x":%s,"xs":[%d,%d],"tag":"t%d","b":%v}`, i, rng.IntN(40)-20, x, rng.IntN(30), rng.IntN(30), i%3, rng.IntN(2) == 0)
			if i%17 == 0 {
				data = fmt.Sprintf(`{"id":%d,"tag":"t%d"}`, i, i%3) // no numbers at all
			}
			docs[fields.DocID([]byte(key))] = []byte(data)
			addDocument(t, b, s, an, []byte(key), []byte(data))
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < 400; from += 100 { // a segment each
		write(from, from+100, false)
	}
	write(50, 150, false) // updates: older segments' copies deleted
	write(300, 330, true)
	searchers := map[string]*Searcher{
		"columns":      newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes)),
		"terms":        newSearcher(idx, nil),
		"small budget": newSearcher(idx, engine.NewColumns(1500)), // about one segment's column
	}
	ops := []string{"$gt", "$gte", "$lt", "$lte", "$eq"}
	bound := func(field string) string {
		switch {
		case rng.IntN(12) == 0:
			return "0"
		case field == "n":
			return fmt.Sprint(rng.IntN(44) - 22)
		case field == "xs":
			return fmt.Sprint(rng.IntN(34) - 2)
		}
		return fmt.Sprint(float64(rng.IntN(220)-110) / 8)
	}
	cond := func() string {
		field := []string{"n", "x", "xs"}[rng.IntN(3)]
		if rng.IntN(3) == 0 { // two bounds on one field: for an array, one element within both
			return fmt.Sprintf(`{%q:{%q:%s,%q:%s}}`, field, ops[rng.IntN(2)], bound(field), ops[2+rng.IntN(2)], bound(field))
		}
		return fmt.Sprintf(`{%q:{%q:%s}}`, field, ops[rng.IntN(len(ops))], bound(field))
	}
	for range 300 {
		var conds []string
		for range 1 + rng.IntN(3) {
			conds = append(conds, cond())
		}
		// Other conditions: a term, a boolean, a string range (which Bleve's
		// searchers answer beside the bitmaps), and unions.
		switch rng.IntN(6) {
		case 0:
			conds = append(conds, fmt.Sprintf(`{"tag":"t%d"}`, rng.IntN(3)))
		case 1:
			conds = append(conds, `{"$or":[`+cond()+`,`+cond()+`]}`)
		case 2:
			conds = append(conds, fmt.Sprintf(`{"b":%v}`, rng.IntN(2) == 0))
		case 3:
			conds = append(conds, fmt.Sprintf(`{"tag":{"$gte":"t%d"}}`, rng.IntN(3)))
		case 4:
			conds = append(conds, `{"$or":[`+cond()+`,`+fmt.Sprintf(`{"tag":{"$lt":"t%d"}}`, rng.IntN(3))+`]}`)
		}
		raw := conds[0]
		if len(conds) > 1 {
			raw = `{"$and":[` + strings.Join(conds, ",") + `]}`
		}
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
		// The same filter beside a word: Bleve's searchers ask the filter's
		// bitmaps to Advance, and the hits come by score.
		word := fmt.Sprintf("t%d", rng.IntN(3))
		withWord, err := Prepare(s, Request{Q: word, SearchFields: []string{"tag"}, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var wantWord []string
		for _, id := range want {
			if strings.Contains(string(docs[id]), `"tag":"`+word+`"`) {
				wantWord = append(wantWord, id)
			}
		}
		for name, searcher := range searchers {
			res, err := searcher.Page(context.Background(), withWord, 0, 1000, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range res.Keys {
				got = append(got, fields.DocID(k))
			}
			slices.Sort(got)
			if !slices.Equal(got, wantWord) || res.Found != uint64(len(wantWord)) {
				t.Fatalf("%s beside %q, %s: %d hits (found %d), want %d", raw, word, name, len(got), res.Found, len(wantWord))
			}
		}
		for name, searcher := range searchers {
			res, err := searcher.Page(context.Background(), p, 0, 1000, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range res.Keys {
				got = append(got, fields.DocID(k))
			}
			if !slices.Equal(got, want) || res.Found != uint64(len(want)) {
				t.Fatalf("%s, %s: %d hits (found %d), the filter matches %d", raw, name, len(got), res.Found, len(want))
			}
			// Every match at once, as a vector search's filter takes them.
			var all []string
			n, err := searcher.Matches(context.Background(), p, func(id string) error { all = append(all, id); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if slices.Sort(all); !slices.Equal(all, want) || n != len(want) {
				t.Fatalf("%s, %s: Matches gave %d (said %d), the filter matches %d", raw, name, len(all), n, len(want))
			}
			// A page from the middle: the same hits, in key order.
			from, size := rng.IntN(len(want)+2), 1+rng.IntN(9)
			page, err := searcher.Page(context.Background(), p, from, size, false)
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for _, k := range page.Keys {
				got = append(got, fields.DocID(k))
			}
			if w := want[min(from, len(want)):min(from+size, len(want))]; !slices.Equal(got, w) || page.Found != uint64(len(want)) {
				t.Fatalf("%s, %s: hits %d-%d are %v (found %d), want %v", raw, name, from, from+size, got, page.Found, w)
			}
		}
	}
	// No filter at all: every document, in key order.
	all := slices.Sorted(maps.Keys(docs))
	for name, searcher := range searchers {
		p, err := Prepare(s, Request{})
		if err != nil {
			t.Fatal(err)
		}
		for from := 0; from < len(all)+5; from += 37 {
			res, err := searcher.Page(context.Background(), p, from, 37, false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range res.Keys {
				got = append(got, fields.DocID(k))
			}
			if w := all[min(from, len(all)):min(from+37, len(all))]; !slices.Equal(got, w) || res.Found != uint64(len(all)) {
				t.Fatalf("no filter, %s: hits %d-%d are %d (found %d), want %d", name, from, from+37, len(got), res.Found, len(w))
			}
		}
	}
	built := map[string]bool{}
	for _, c := range searchers["columns"].engine.Columns.Built() {
		built[c.Kind+" "+c.Field] = true
	}
	if !built["values "+fields.Number("n")] || !built["key order _id"] {
		t.Fatalf("columns built: %v; want number columns and the id order", built)
	}
}

// TestNumberRangesUnderWrites: searches from many goroutines share the
// columns while documents are written again and again (the same values,
// so the answer stays the same while segments come, merge and go); each
// search finds exactly the matching documents.
func TestNumberRangesUnderWrites(t *testing.T) {
	s, idx, an := newTestIndex(t, `{"title":"docs","properties":{"id":{"type":"integer"},"n":{"type":"integer"}},"primary_key":["id"]}`)
	write := func(from, to int) error {
		b := idx.NewBatch()
		for i := from; i < to; i++ {
			d, err := fields.BuildDocument(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, `{"id":%d,"n":%d}`, i, i%50), s, an)
			if err != nil {
				return err
			}
			b.IndexAdvanced(d)
		}
		return idx.Batch(b)
	}
	if err := write(0, 2000); err != nil {
		t.Fatal(err)
	}
	f, err := filter.Parse([]byte(`{"$and":[{"n":{"$gte":10}},{"n":{"$lt":15}}]}`), s, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s, Request{Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	searcher := newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var g errgroup.Group
	g.Go(func() error {
		for i := 0; ctx.Err() == nil; i = (i + 97) % 2000 {
			if err := write(i, min(2000, i+150)); err != nil {
				return err
			}
		}
		return nil
	})
	var searches errgroup.Group
	for range 4 {
		searches.Go(func() error {
			for range 40 {
				res, err := searcher.Page(ctx, p, 0, 5, false)
				if err != nil {
					return err
				}
				if res.Found != 200 {
					return fmt.Errorf("found %d, want 200", res.Found)
				}
			}
			return nil
		})
	}
	err = searches.Wait()
	cancel()
	if werr := g.Wait(); werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestLargeIntegerBoundsMissNothing: integers beyond 2^53 share float64s
// with their neighbours; a search may then find more than the filter
// matches (the documents' own check drops them) but never less.
func TestLargeIntegerBoundsMissNothing(t *testing.T) {
	s, idx, an := newTestIndexIn(t, `{"title":"docs","properties":{"id":{"type":"integer"},"n":{"type":"integer"}},"primary_key":["id"]}`, "")
	const big = int64(1) << 53
	docs := map[string][]byte{}
	b := idx.NewBatch()
	for i := range int64(16) {
		for _, sign := range []int64{1, -1} {
			key := fmt.Sprintf("k%d_%d", sign+1, i)
			data := fmt.Sprintf(`{"id":%d,"n":%d}`, i, sign*(big-8+i))
			docs[fields.DocID([]byte(key))] = []byte(data)
			addDocument(t, b, s, an, []byte(key), []byte(data))
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	searcher := newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes))
	for _, op := range []string{"$gt", "$gte", "$lt", "$lte", "$eq"} {
		for i := range int64(16) {
			for _, sign := range []int64{1, -1} {
				raw := fmt.Sprintf(`{"n":{%q:%d}}`, op, sign*(big-8+i))
				f, err := filter.Parse([]byte(raw), s, filter.Collation{})
				if err != nil {
					t.Fatal(err)
				}
				p, err := Prepare(s, Request{Filter: f})
				if err != nil {
					t.Fatal(err)
				}
				res, err := searcher.Page(context.Background(), p, 0, 100, false)
				if err != nil {
					t.Fatal(err)
				}
				found := map[string]bool{}
				for _, k := range res.Keys {
					found[fields.DocID(k)] = true
				}
				for id, data := range docs {
					if ok, _ := f.Matches(data); ok && !found[id] {
						t.Errorf("%s: misses %s", raw, data)
					}
				}
			}
		}
	}
}

// addDocument builds the document data of key as the indexer does and
// adds it to b.
func addDocument(tb testing.TB, b *bleve.Batch, s *schema.Schema, an fields.Analyzers, key, data []byte) {
	tb.Helper()
	d, err := fields.BuildDocument(key, data, s, an)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.IndexAdvanced(d); err != nil {
		tb.Fatal(err)
	}
}
