package search

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
)

// TestFacetsFromColumns: the facets counted from the columns are the
// ones Bleve's doc values give (the same values, counts, order and
// stats), and the ones computed from the documents themselves: strings,
// a nested string, integers and numbers with their stats, counted in
// arrays and in maps, documents without the fields (and with arrays of
// objects beside them, whose fields are neither facets nor sorts), over several segments with updated and deleted
// documents, with a word, a filter and a sort beside them, and with a
// budget too small for every column (which falls back to Bleve's).
func TestFacetsFromColumns(t *testing.T) {
	s, idx, an := newTestIndexIn(t, `{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},`+
		`"tag":{"type":"string"},"a":{"type":"object","properties":{"b":{"type":"string"}}},"n":{"type":"integer"},`+
		`"x":{"type":"number"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"q":{"type":"integer"}}}}},`+
		`"primary_key":["id"]}`, "")
	rng := rand.New(rand.NewPCG(5, 6))
	docs := map[string][]byte{}
	write := func(from, to int, del bool) {
		b := idx.NewBatch()
		for i := from; i < to; i++ {
			key := []byte(fmt.Sprintf("k%04d", i))
			if del {
				delete(docs, fields.DocID(key))
				b.Delete(fields.DocID(key))
				continue
			}
			props := []string{fmt.Sprintf(`"id":%d`, i), fmt.Sprintf(`"title":"w%d w%d"`, rng.IntN(4), rng.IntN(4))}
			if rng.IntN(8) != 0 {
				props = append(props, fmt.Sprintf(`"tag":"t%d"`, rng.IntN(6)))
			}
			if rng.IntN(3) != 0 { // several elements, a name or a number sometimes twice in one document
				var items []string
				for range rng.IntN(4) {
					items = append(items, fmt.Sprintf(`{"name":"i%d","q":%d}`, rng.IntN(5), rng.IntN(4)))
				}
				props = append(props, `"items":[`+strings.Join(items, ",")+`]`)
			}
			if rng.IntN(5) != 0 {
				props = append(props, fmt.Sprintf(`"a":{"b":"s%d"}`, rng.IntN(5)))
			}
			if rng.IntN(6) != 0 {
				props = append(props, fmt.Sprintf(`"n":%d`, rng.IntN(40)-20))
			}
			if rng.IntN(4) != 0 {
				props = append(props, fmt.Sprintf(`"x":%v`, float64(rng.IntN(20)-10)/4))
			}
			data := []byte("{" + strings.Join(props, ",") + "}")
			docs[fields.DocID(key)] = data
			addDocument(t, b, s, an, key, data)
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	for from := 0; from < 300; from += 60 { // a segment each
		write(from, from+60, false)
	}
	write(30, 90, false) // updates: older segments' copies deleted
	write(200, 220, true)
	columns := newSearcher(idx, engine.NewColumns(DefaultNumberColumnBytes))
	bleveOnly := newSearcher(idx, nil)
	small := newSearcher(idx, engine.NewColumns(2500)) // some columns fit, not all
	defer func(d int) { engine.DenseOrdinals = d }(engine.DenseOrdinals)
	for round := range 150 {
		engine.DenseOrdinals = []int{4096, 2}[round%2] // counted in arrays, and in maps
		req := Request{Facets: map[string]int{}}
		for _, f := range []string{"tag", "a.b", "n", "x"} {
			if rng.IntN(3) != 0 {
				req.Facets[f] = []int{0, 1, 3, 100}[rng.IntN(4)]
			}
		}
		if len(req.Facets) == 0 {
			req.Facets["a.b"] = 0
		}
		if rng.IntN(2) == 0 {
			req.Q, req.SearchFields = fmt.Sprintf("w%d", rng.IntN(4)), []string{"title"}
		}
		var rawFilter string
		switch rng.IntN(3) {
		case 0:
			rawFilter = fmt.Sprintf(`{"n":{"$gte":%d}}`, rng.IntN(30)-15)
		case 1:
			rawFilter = fmt.Sprintf(`{"tag":"t%d"}`, rng.IntN(6))
		}
		if rawFilter != "" {
			f, err := filter.Parse([]byte(rawFilter), s, filter.Collation{})
			if err != nil {
				t.Fatal(err)
			}
			req.Filter = f
		}
		if rng.IntN(2) == 0 {
			req.Sort = []SortField{{Path: "n", Desc: true}}
		}
		p, err := Prepare(s, req)
		if err != nil {
			t.Fatal(err)
		}
		want := facetsOfDocuments(t, docs, req)
		var first map[string]FacetResult
		for name, searcher := range map[string]*Searcher{"columns": columns, "Bleve's": bleveOnly, "small budget": small} {
			res, err := searcher.Page(context.Background(), p, 0, 5, true)
			if err != nil {
				t.Fatal(err)
			}
			desc := fmt.Sprintf("round %d, q %q, filter %s, facets %v, %s", round, req.Q, rawFilter, req.Facets, name)
			checkFacets(t, desc, res.Facets, want)
			if first == nil {
				first = res.Facets
			} else if !sameFacets(res.Facets, first) {
				t.Fatalf("%s: %+v, another searcher %+v", desc, res.Facets, first)
			}
		}
	}
	built := 0
	for _, c := range columns.engine.Columns.Built() {
		if c.Kind == "terms" {
			built++
		}
	}
	if built == 0 {
		t.Fatal("no facet column was built")
	}
}

// facetsOfDocuments counts req's facets over the documents that match
// its word and filter, each distinct value of a document once.
func facetsOfDocuments(t *testing.T, docs map[string][]byte, req Request) map[string]FacetResult {
	t.Helper()
	counts := map[string]map[string]int64{}
	numbersOf := map[string][]float64{}
	total := map[string]int64{}
	for _, data := range docs {
		var d struct {
			Title string
			Tag   *string
			A     struct{ B *string }
			N     *int64
			X     *float64
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		if req.Q != "" && !slices.Contains(strings.Fields(d.Title), req.Q) {
			continue
		}
		if ok, err := req.Filter.Matches(data); err != nil {
			t.Fatal(err)
		} else if !ok {
			continue
		}
		values := map[string][]string{}
		numbers := map[string][]float64{}
		if d.Tag != nil {
			values["tag"] = []string{*d.Tag}
		}
		if d.A.B != nil {
			values["a.b"] = []string{*d.A.B}
		}
		if d.N != nil {
			values["n"] = []string{fmt.Sprint(*d.N)}
			numbers["n"] = []float64{float64(*d.N)}
		}
		if d.X != nil {
			values["x"] = []string{fmt.Sprint(*d.X)}
			numbers["x"] = []float64{*d.X}
		}
		for f := range req.Facets {
			if counts[f] == nil {
				counts[f] = map[string]int64{}
			}
			vs := slices.Compact(slices.Sorted(slices.Values(values[f])))
			for _, v := range vs {
				counts[f][v]++
			}
			total[f] += int64(len(vs))
			numbersOf[f] = append(numbersOf[f], slices.Compact(slices.Sorted(slices.Values(numbers[f])))...)
		}
	}
	out := map[string]FacetResult{}
	for f, size := range req.Facets {
		if size == 0 {
			size = DefaultFacetSize
		}
		fr := FacetResult{Counts: []FacetCount{}, Stats: FacetStats{Count: total[f]}}
		for v, c := range counts[f] {
			fr.Counts = append(fr.Counts, FacetCount{Value: v, Count: c})
		}
		slices.SortFunc(fr.Counts, func(a, b FacetCount) int {
			if a.Count != b.Count {
				return int(b.Count - a.Count)
			}
			return strings.Compare(a.Value, b.Value)
		})
		fr.Counts = fr.Counts[:min(size, len(fr.Counts))]
		if f == "n" || f == "x" {
			xs := numbersOf[f]
			fr.Stats = FacetStats{Count: int64(len(xs))}
			if len(xs) > 0 {
				sum := 0.0
				for _, x := range xs {
					sum += x
				}
				avg, mn, mx := sum/float64(len(xs)), slices.Min(xs), slices.Max(xs)
				fr.Stats.Avg, fr.Stats.Sum, fr.Stats.Min, fr.Stats.Max = &avg, &sum, &mn, &mx
			}
		}
		out[f] = fr
	}
	return out
}

// checkFacets compares facets with the ones counted from the documents;
// sums and averages within rounding, as their additions come in another
// order.
func checkFacets(t *testing.T, desc string, got, want map[string]FacetResult) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: facets %v, want %v", desc, got, want)
	}
	for f, w := range want {
		g := got[f]
		if !slices.Equal(g.Counts, w.Counts) {
			t.Fatalf("%s: %s counts %v, want %v", desc, f, g.Counts, w.Counts)
		}
		if g.Stats.Count != w.Stats.Count {
			t.Fatalf("%s: %s count %d, want %d", desc, f, g.Stats.Count, w.Stats.Count)
		}
		for _, pair := range [][2]*float64{{g.Stats.Avg, w.Stats.Avg}, {g.Stats.Sum, w.Stats.Sum}, {g.Stats.Min, w.Stats.Min}, {g.Stats.Max, w.Stats.Max}} {
			if (pair[0] == nil) != (pair[1] == nil) || (pair[0] != nil && math.Abs(*pair[0]-*pair[1]) > 1e-9) {
				t.Fatalf("%s: %s stats %s, want %s", desc, f, showStats(g.Stats), showStats(w.Stats))
			}
		}
	}
}

func sameFacets(a, b map[string]FacetResult) bool {
	if len(a) != len(b) {
		return false
	}
	for f, x := range a {
		y := b[f]
		if !slices.Equal(x.Counts, y.Counts) || showStats(x.Stats) != showStats(y.Stats) {
			return false
		}
	}
	return true
}

func showStats(s FacetStats) string {
	show := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("n=%d avg=%s sum=%s min=%s max=%s", s.Count, show(s.Avg), show(s.Sum), show(s.Min), show(s.Max))
}
