package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
)

// TestSortFromColumns: sorts read from columns page the matches exactly
// as Bleve's sort does: by numbers, integers and strings (some documents
// without them, ties broken by the storage key), ascending and
// descending, beside a date-time or a boolean key that Bleve still reads,
// by score with ties, with a word and a filter, from random offsets, over
// several segments with updated and deleted documents, and with a budget
// too small for every column (Bleve's sort then).
func TestSortFromColumns(t *testing.T) {
	s, idx, an := newTestIndexIn(t, `{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},`+
		`"tag":{"type":"string"},"n":{"type":"integer"},"x":{"type":"number"},"at":{"type":"string","format":"date-time"},`+
		`"b":{"type":"boolean"}},"primary_key":["id"]}`, "")
	rng := rand.New(rand.NewPCG(7, 8))
	write := func(from, to int, del bool) {
		b := idx.NewBatch()
		for i := from; i < to; i++ {
			key := []byte(fmt.Sprintf("k%04d", rng.IntN(1000)))
			if del {
				b.Delete(fields.DocID(key))
				continue
			}
			props := []string{fmt.Sprintf(`"id":%d`, i), fmt.Sprintf(`"title":"w%d w%d"`, rng.IntN(3), rng.IntN(3))}
			if rng.IntN(6) != 0 {
				props = append(props, fmt.Sprintf(`"tag":"t%d"`, rng.IntN(8)))
			}
			if rng.IntN(6) != 0 {
				props = append(props, fmt.Sprintf(`"n":%d`, rng.IntN(30)-15))
			}
			if rng.IntN(4) != 0 {
				props = append(props, fmt.Sprintf(`"x":%v`, float64(rng.IntN(40)-20)/8))
			}
			if rng.IntN(3) != 0 {
				props = append(props, fmt.Sprintf(`"at":"2026-11-%02dT10:00:00Z"`, 1+rng.IntN(20)))
			}
			props = append(props, fmt.Sprintf(`"b":%v`, rng.IntN(2) == 0))
			addDocument(t, b, s, an, key, []byte("{"+strings.Join(props, ",")+"}"))
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < 400; from += 80 { // a segment each; keys repeat, so later ones update
		write(from, from+80, false)
	}
	write(400, 440, true)
	columns := newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes))
	bleveOnly := newSearcher(idx, nil)
	small := newSearcher(idx, engine.NewColumns(3000))
	sortable := []string{"n", "x", "tag", "at", "b"}
	for round := range 200 {
		var req Request
		for range rng.IntN(3) {
			req.Sort = append(req.Sort, SortField{Path: sortable[rng.IntN(len(sortable))], Desc: rng.IntN(2) == 0})
		}
		if rng.IntN(2) == 0 {
			req.Q, req.SearchFields = fmt.Sprintf("w%d", rng.IntN(3)), []string{"title"}
		}
		if rng.IntN(3) == 0 {
			f, err := filter.Parse([]byte(fmt.Sprintf(`{"n":{"$gte":%d}}`, rng.IntN(20)-10)), s, filter.Collation{})
			if err != nil {
				t.Fatal(err)
			}
			req.Filter = f
		}
		if req.Q == "" && len(req.Sort) == 0 {
			req.Sort = []SortField{{Path: "x"}}
		}
		p, err := Prepare(s, req)
		if err != nil {
			t.Fatal(err)
		}
		from, size := rng.IntN(60), 1+rng.IntN(40)
		want, err := bleveOnly.Page(context.Background(), p, from, size, false)
		if err != nil {
			t.Fatal(err)
		}
		for name, searcher := range map[string]*Searcher{"columns": columns, "small budget": small} {
			got, err := searcher.Page(context.Background(), p, from, size, false)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != want.Found || !slices.EqualFunc(got.Keys, want.Keys, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Fatalf("round %d, q %q, sort %v, hits %d-%d, %s: %d found, %q; Bleve's sort: %d, %q",
					round, req.Q, req.Sort, from, from+size, name, got.Found, got.Keys, want.Found, want.Keys)
			}
		}
	}
	built := map[string]bool{}
	for _, c := range columns.engine.Columns.Built() {
		switch c.Kind {
		case "terms":
			built[c.Field] = true
		case "ids":
			built["ids"] = true
		}
	}
	for _, f := range []string{"ids", fields.Number("n"), fields.Keyword("tag")} {
		if !built[f] {
			t.Errorf("no sort column of %s was built (built: %v)", f, built)
		}
	}
}
