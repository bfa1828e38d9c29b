package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
)

const groupSchema = `{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},` +
	`"city":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"n":{"type":"integer"},` +
	`"x":{"type":"number"},"addr":{"type":"object","properties":{"zip":{"type":"string"}}}},"primary_key":["id"]}`

// TestGroupsAgainstTheDocuments: a grouped page is the brute-force
// grouping of the ungrouped order of the matches, with the group keys
// read from the documents themselves: the groups in the order of their
// first (best) hit, each with its first `limit` hits, from random offsets
// and sizes; over strings, integers, numbers, a nested field and arrays
// (grouped by their set of values), several fields at once, documents
// without the field (grouped with the empty string), with text, sorts and
// filters, over several segments with updated and deleted documents; from
// columns, from doc values (no columns, and a budget too small), and with
// one pass and with two (many groups). The facets and found are those of
// the ungrouped search, found counting groups.
func TestGroupsAgainstTheDocuments(t *testing.T) {
	s, idx, an := newTestIndexIn(t, groupSchema, "")
	rng := rand.New(rand.NewPCG(11, 12))
	docs := map[string]map[string]any{} // the live documents by key
	write := func(from, to int, del bool) {
		b := idx.NewBatch()
		for i := from; i < to; i++ {
			key := fmt.Sprintf("k%04d", rng.IntN(600))
			if del {
				b.Delete(fields.DocID([]byte(key)))
				delete(docs, key)
				continue
			}
			props := []string{fmt.Sprintf(`"id":%d`, i), fmt.Sprintf(`"title":"w%d w%d"`, rng.IntN(3), rng.IntN(3))}
			switch rng.IntN(8) {
			case 0: // no city
			case 1:
				props = append(props, `"city":""`)
			case 2:
				props = append(props, `"city":null`)
			default:
				props = append(props, fmt.Sprintf(`"city":"c%d"`, rng.IntN(12)))
			}
			switch rng.IntN(6) {
			case 0:
			case 1:
				props = append(props, `"tags":[]`)
			default:
				var tags []string
				for range 1 + rng.IntN(3) {
					tags = append(tags, strconv.Quote(fmt.Sprintf("t%d", rng.IntN(4))))
				}
				props = append(props, `"tags":[`+strings.Join(tags, ",")+`]`)
			}
			if rng.IntN(5) != 0 {
				props = append(props, fmt.Sprintf(`"n":%d`, rng.IntN(40)-20))
			}
			if rng.IntN(4) != 0 {
				props = append(props, fmt.Sprintf(`"x":%v`, float64(rng.IntN(12)-6)/4))
			}
			if rng.IntN(3) != 0 {
				props = append(props, fmt.Sprintf(`"addr":{"zip":"z%d"}`, rng.IntN(5)))
			}
			data := "{" + strings.Join(props, ",") + "}"
			addDocument(t, b, s, an, []byte(key), []byte(data))
			var m map[string]any
			d := json.NewDecoder(strings.NewReader(data))
			d.UseNumber()
			if err := d.Decode(&m); err != nil {
				t.Fatal(err)
			}
			docs[key] = m
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < 500; from += 100 { // a segment each; keys repeat, so later ones update
		write(from, from+100, false)
	}
	write(500, 540, true)

	bleveOnly := newSearcher(idx, nil)
	searchers := map[string]*Searcher{
		"columns":      newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes)),
		"doc values":   bleveOnly,
		"small budget": newSearcher(idx, engine.NewColumns(3000)),
	}
	groupable := []string{"city", "tags", "n", "x", "addr.zip"}
	for round := range 150 {
		var req Request
		if rng.IntN(2) == 0 {
			req.Q, req.SearchFields = fmt.Sprintf("w%d", rng.IntN(3)), []string{"title"}
		}
		// Distinct sort fields: Bleve's facets count a field twice when a
		// sort names it twice (both keys visit its doc values).
		for _, i := range rng.Perm(3)[:rng.IntN(3)] {
			req.Sort = append(req.Sort, SortField{Path: []string{"n", "x", "city"}[i], Desc: rng.IntN(2) == 0})
		}
		if rng.IntN(3) == 0 {
			f, err := filter.Parse([]byte(fmt.Sprintf(`{"n":{"$gte":%d}}`, rng.IntN(30)-15)), s, filter.Collation{})
			if err != nil {
				t.Fatal(err)
			}
			req.Filter = f
		}
		if rng.IntN(2) == 0 {
			req.Facets = map[string]int{"city": 5}
		}
		ungrouped, err := Prepare(s, req)
		if err != nil {
			t.Fatal(err)
		}
		all, err := bleveOnly.Page(context.Background(), ungrouped, 0, 10_000, true)
		if err != nil {
			t.Fatal(err)
		}
		g := &GroupBy{Limit: rng.IntN(5)}
		for range 1 + rng.IntN(2) {
			if f := groupable[rng.IntN(len(groupable))]; !slices.Contains(g.Fields, f) {
				g.Fields = append(g.Fields, f)
			}
		}
		req.GroupBy = g
		p, err := Prepare(s, req)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteGroups(t, all.Keys, docs, g)
		// Offsets past a one-pass page (want × limit above 10,000 hits
		// take two passes) and small pages (groups pushed out by better
		// ones take two passes too).
		from, size := rng.IntN(len(want)+2), 1+rng.IntN(12)
		if rng.IntN(4) == 0 {
			from = 9_000 + rng.IntN(200)
			if len(want) < 9_000 {
				from = rng.IntN(len(want) + 1)
				size = 3000
			}
		}
		wantPage := want[min(from, len(want)):min(from+size, len(want))]
		for name, searcher := range searchers {
			got, err := searcher.Page(context.Background(), p, from, size, true)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != uint64(len(want)) {
				t.Fatalf("round %d, %s, group_by %v: found %d groups, want %d", round, name, g.Fields, got.Found, len(want))
			}
			if len(got.Keys) != 0 {
				t.Fatalf("round %d, %s: a grouped page has %d ungrouped hits", round, name, len(got.Keys))
			}
			if !slices.EqualFunc(got.Groups, wantPage, sameGroup) {
				t.Fatalf("round %d, q %q, sort %v, group_by %v limit %d, groups %d-%d, %s:\n got %v\nwant %v",
					round, req.Q, req.Sort, g.Fields, g.Limit, from, from+size, name, showGroups(got.Groups), showGroups(wantPage))
			}
			if req.Facets != nil && fmt.Sprint(got.Facets) != fmt.Sprint(all.Facets) {
				t.Fatalf("round %d, %s, q %q sort %v filter %v, %d matches (%d hits): facets %v, ungrouped %v", round, name, req.Q, req.Sort, !req.Filter.MatchesAll(), all.Found, len(all.Keys), got.Facets, all.Facets)
			}
		}
	}
}

// bruteGroups groups the keys, in their order, by the documents' values
// of g's fields.
func bruteGroups(t *testing.T, keys [][]byte, docs map[string]map[string]any, g *GroupBy) []HitGroup {
	t.Helper()
	limit := g.Limit
	if limit == 0 {
		limit = DefaultGroupHits
	}
	var out []HitGroup
	at := map[string]int{}
	for _, k := range keys {
		doc, ok := docs[string(k)]
		if !ok {
			t.Fatalf("hit %q is not a live document", k)
		}
		var groupKeys []string
		for _, path := range g.Fields {
			groupKeys = append(groupKeys, docGroupKey(doc, path))
		}
		id := strings.Join(groupKeys, "\x00")
		i, ok := at[id]
		if !ok {
			i = len(out)
			at[id] = i
			out = append(out, HitGroup{Keys: groupKeys})
		}
		if len(out[i].Hits) < limit {
			out[i].Hits = append(out[i].Hits, k)
		}
	}
	return out
}

// docGroupKey is a document's group key for one field, from its JSON: the
// distinct values as facets show them, in byte order; one alone as it
// is, several as a JSON array; none as "".
func docGroupKey(doc map[string]any, path string) string {
	var v any = doc
	for _, name := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[name]
	}
	var values []string
	add := func(x any) {
		switch x := x.(type) {
		case string:
			values = append(values, x)
		case json.Number:
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil && path == "n" {
				values = append(values, strconv.FormatInt(i, 10))
			} else {
				f, _ := strconv.ParseFloat(string(x), 64)
				values = append(values, strconv.FormatFloat(f, 'g', -1, 64))
			}
		}
	}
	if arr, ok := v.([]any); ok {
		for _, x := range arr {
			add(x)
		}
	} else {
		add(v)
	}
	slices.Sort(values)
	values = slices.Compact(values)
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	j, _ := json.Marshal(values)
	return string(j)
}

func sameGroup(a, b HitGroup) bool {
	return slices.Equal(a.Keys, b.Keys) && slices.EqualFunc(a.Hits, b.Hits, func(x, y []byte) bool { return string(x) == string(y) })
}

func showGroups(gs []HitGroup) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "%q:%q ", g.Keys, g.Hits)
	}
	return b.String()
}

// TestGroupsBeyondTheBound: a grouped search whose matches fall into more
// groups than MaxGroups is refused with INVALID_ARGUMENT, not held.
func TestGroupsBeyondTheBound(t *testing.T) {
	s, idx, an := newTestIndexIn(t, groupSchema, "")
	b := idx.NewBatch()
	for i := range engine.MaxGroups + 1 {
		addDocument(t, b, s, an, []byte(fmt.Sprintf("k%07d", i)), []byte(fmt.Sprintf(`{"id":%d,"city":"c%d"}`, i, i)))
		if b.Size() == 10_000 {
			if err := idx.Batch(b); err != nil {
				t.Fatal(err)
			}
			b = idx.NewBatch()
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	searcher := newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes))
	for _, filtered := range []bool{false, true} {
		req := Request{GroupBy: &GroupBy{Fields: []string{"city"}}}
		if filtered {
			f, err := filter.Parse([]byte(`{"id":{"$lt":1000}}`), s, filter.Collation{})
			if err != nil {
				t.Fatal(err)
			}
			req.Filter = f
		}
		p, err := Prepare(s, req)
		if err != nil {
			t.Fatal(err)
		}
		res, err := searcher.Page(context.Background(), p, 0, 10, false)
		var ae *apierror.Error
		switch {
		case filtered && err != nil:
			t.Fatalf("1,000 groups: %v", err)
		case filtered && (res.Found != 1000 || len(res.Groups) != 10):
			t.Fatalf("1,000 groups: found %d, %d on the page", res.Found, len(res.Groups))
		case !filtered && (!errors.As(err, &ae) || ae.Code != apierror.InvalidArgument):
			t.Fatalf("%d groups: got %v, want INVALID_ARGUMENT", engine.MaxGroups+1, err)
		}
	}
}
