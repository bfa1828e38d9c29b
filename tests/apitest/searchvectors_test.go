package apitest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Vector search (issue 37): the nearest documents to a query vector on a
// vector field, on search indexes and on collections, alone or among a
// filter's matches, each hit with its distance.

// hitIDs is the "id" of each hit of the chunks, in order.
func hitIDs(t testing.TB, chunks []searchChunk) []string {
	t.Helper()
	var out []string
	for _, ch := range chunks {
		for _, h := range ch.Hits {
			var d struct{ ID json.RawMessage }
			if err := json.Unmarshal(h.Data, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.Trim(string(d.ID), `"`))
		}
	}
	return out
}

// hitDistances is each hit's vector distance, in order.
func hitDistances(t testing.TB, chunks []searchChunk) []float64 {
	t.Helper()
	var out []float64
	for _, ch := range chunks {
		for _, h := range ch.Hits {
			if h.Metadata.Match == nil || h.Metadata.Match.VectorDistance == nil {
				t.Fatalf("a vector search's hit without metadata.match.vector_distance: %s", h.Data)
			}
			out = append(out, *h.Metadata.Match.VectorDistance)
		}
	}
	return out
}

// TestVectorSearchOfAnIndex: the original's own case (its
// TestVectorSearch: four documents, the nearest by cosine distance, with
// and without a filter), then pages, top_k, facets, the other distances,
// changes and deletes, and every mistake a 400.
func TestVectorSearchOfAnIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		p := "vectors"
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		c.ok(t, "PUT", indexPath(p, "docs"), `{"schema":{"title":"docs","properties":{
			"string_value":{"type":"string"},"kind":{"type":"string","facet":true},
			"vector":{"type":"array","format":"vector","dimensions":4},
			"flat":{"type":"array","format":"vector","dimensions":2,"distance":"euclidean"},
			"dot":{"type":"array","format":"vector","dimensions":2,"distance":"dot"}}}}`)
		r := c.ok(t, "PUT", indexDocs(p, "docs"), `{"documents":[
			{"id":"1","string_value":"data platform","kind":"a","vector":[0.1,1.1,0.93,0.75],"flat":[0,0],"dot":[1,0]},
			{"id":"2","string_value":"big data platform","kind":"b","vector":[-0.23,-0.57,1.12,0.98],"flat":[3,4],"dot":[2,0]},
			{"id":"3","string_value":"basedata","kind":"a","vector":[1.1,2.22,0.0875,0.975],"flat":[1,1],"dot":[0,5]},
			{"id":"4","string_value":"random","kind":"b","vector":[2.1,1.22,0.7875,0.175],"flat":[-1,0],"dot":[-1,0]}]}`)
		wantStatuses(t, statuses(t, r), [3]string{"1", "", ""}, [3]string{"2", "", ""}, [3]string{"3", "", ""}, [3]string{"4", "", ""})

		query := `"vector":{"vector":[1.1,2.22,0.0875,0.975]}`
		ch := c.searchIndex(t, p, "docs", `{`+query+`}`)
		equalStrings(t, "nearest", hitIDs(t, ch), []string{"3", "1", "4", "2"})
		d := hitDistances(t, ch)
		// As the original answered: 0 for the query itself, then 1 - cos.
		if d[0] > 1e-6 || math.Abs(d[1]-0.22375428676605225) > 1e-6 || !sort.Float64sAreSorted(d) {
			t.Errorf("distances %v, want 0, 0.2237..., ascending", d)
		}
		if ch[0].Meta.Found != 4 {
			t.Errorf("found %d, want 4", ch[0].Meta.Found)
		}
		// The filter applies first. (The original's case filters with
		// $contains and $not, which a search filter does not take here:
		// docs/api.md.)
		ch = c.searchIndex(t, p, "docs", `{`+query+`,"filter":{"$or":[{"string_value":"data platform"},{"string_value":"big data platform"}]}}`)
		equalStrings(t, "among platforms", hitIDs(t, ch), []string{"1", "2"})
		ch = c.searchIndex(t, p, "docs", `{`+query+`,"filter":{"string_value":{"$in":["basedata","random"]}}}`)
		equalStrings(t, "among the rest", hitIDs(t, ch), []string{"3", "4"})
		// top_k, and pages over the neighbours.
		ch = c.searchIndex(t, p, "docs", `{"vector":{"vector":[1.1,2.22,0.0875,0.975],"top_k":2}}`)
		equalStrings(t, "top_k 2", hitIDs(t, ch), []string{"3", "1"})
		ch = c.searchIndex(t, p, "docs", `{`+query+`,"page":2,"page_size":1}`)
		equalStrings(t, "page 2 of 1", hitIDs(t, ch), []string{"1"})
		if ch[0].Meta.Found != 2 || ch[0].Meta.TotalPages != 2 {
			t.Errorf("page 2 of size 1: meta %+v, want 2 found (the neighbours its pages reach)", ch[0].Meta)
		}
		// Facets count the filter's matches.
		ch = c.searchIndex(t, p, "docs", `{`+query+`,"facet":{"kind":{"size":10}},"filter":{"kind":"a"}}`)
		equalStrings(t, "kind a", hitIDs(t, ch), []string{"3", "1"})
		if f := ch[0].Facets["kind"]; len(f.Counts) != 1 || f.Counts[0].Value != "a" || f.Counts[0].Count != 2 {
			t.Errorf("facets of a vector search: %+v", ch[0].Facets)
		}
		// Euclidean: the plain L2 distance; dot: the negated product.
		ch = c.searchIndex(t, p, "docs", `{"vector":{"flat":[0,0]}}`)
		equalStrings(t, "euclidean", hitIDs(t, ch), []string{"1", "4", "3", "2"})
		if d := hitDistances(t, ch); math.Abs(d[2]-math.Sqrt2) > 1e-6 || math.Abs(d[3]-5) > 1e-6 {
			t.Errorf("euclidean distances %v", d)
		}
		ch = c.searchIndex(t, p, "docs", `{"vector":{"dot":[1,1]}}`)
		equalStrings(t, "dot", hitIDs(t, ch), []string{"3", "2", "1", "4"})
		if d := hitDistances(t, ch); d[0] != -5 || d[3] != 1 {
			t.Errorf("dot distances %v", d)
		}
		// The search sees writes: a vector moved, a document deleted, one
		// without a vector.
		c.ok(t, "PATCH", indexDocs(p, "docs"), `{"documents":[{"id":"4","vector":[1.1,2.22,0.0875,0.975]}]}`)
		c.ok(t, "DELETE", indexDocs(p, "docs"), `{"ids":["3"]}`)
		c.ok(t, "POST", indexDocs(p, "docs"), `{"documents":[{"id":"5","string_value":"no vector"}]}`)
		ch = c.searchIndex(t, p, "docs", `{`+query+`}`)
		equalStrings(t, "after the changes", hitIDs(t, ch), []string{"4", "1", "2"})

		for _, m := range []struct{ body, msg string }{
			{`{"vector":{"vector":[1,2,3]}}`, "the query vector has 3 dimensions, field 'vector' has 4"},
			{`{"vector":{"vector":[1,2,3,"NaN"]}}`, "the query vector of field 'vector' must be an array of numbers within a 32-bit float's range"},
			{`{"vector":{"vector":[0,0,0,0]}}`, "the query vector has length zero: no direction, so no cosine distance to field 'vector'"},
			{`{"vector":{"string_value":[1,2,3,4]}}`, "'string_value' is not a vector field of the schema (an array of format vector)"},
			{`{"vector":{"vector":[1,2,3,4],"flat":[1,2]}}`, "vector names fields 'vector' and 'flat': a search has one query vector"},
			{`{"vector":{"vector":[1,2,3,4],"top_k":0}}`, "top_k must be an integer from 1 to 10000"},
			{`{"vector":[1,2,3,4]}`, "vector must be an object naming a vector field and the query vector, as {\"field\": [numbers]}"},
			{`{"vector":{"vector":[1,2,3,4]},"q":"data"}`, "a vector search takes no q: its hits are ordered by their distance to the query vector (use a filter to narrow them)"},
			{`{"vector":{"vector":[1,2,3,4]},"sort":[{"string_value":"$asc"}]}`, "a vector search takes no sort: its hits are ordered by their distance to the query vector"},
			{`{"vector":{"vector":[1,2,3,4]},"group_by":{"fields":["kind"]}}`, "a vector search takes no group_by"},
		} {
			wantError(t, c.do(t, "POST", indexDocs(p, "docs")+"/search", m.body), http.StatusBadRequest, "INVALID_ARGUMENT", m.msg)
		}
		// A document whose vector breaks the schema is refused alone.
		r = c.ok(t, "PUT", indexDocs(p, "docs"), `{"documents":[{"id":"6","vector":[1,2,3]},{"id":"7","vector":[0,0,0,0]},{"id":"8","vector":[1,1e39,0,0]},{"id":"9","vector":[1,0,0,0]}]}`)
		wantStatuses(t, statuses(t, r), [3]string{"6", "400", ""}, [3]string{"7", "400", ""}, [3]string{"8", "400", ""}, [3]string{"9", "", ""})
		ch = c.searchIndex(t, p, "docs", `{"vector":{"vector":[1,0,0,0],"top_k":1}}`)
		equalStrings(t, "the one written", hitIDs(t, ch), []string{"9"})
	})
}

// TestVectorSearchFilterKeepsK: a filter that keeps 1% of the documents
// still gives k neighbours when k match, and exactly the nearest of them;
// a wider filter gives the nearest among its matches.
func TestVectorSearchFilterKeepsK(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		p := "filtered"
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		c.ok(t, "PUT", indexPath(p, "points"), `{"schema":{"title":"points","properties":{
			"n":{"type":"integer"},"v":{"type":"array","format":"vector","dimensions":8,"distance":"euclidean"}}}}`)
		rng := rand.New(rand.NewPCG(1, 2))
		vecs := map[string][]float64{}
		const total = 1000
		for from := 0; from < total; from += 250 {
			var docs []string
			for i := from; i < from+250; i++ {
				v := make([]float64, 8)
				for j := range v {
					v[j] = float64(float32(rng.NormFloat64()))
				}
				id := fmt.Sprint(i)
				vecs[id] = v
				b, _ := json.Marshal(map[string]any{"id": id, "n": i, "v": v})
				docs = append(docs, string(b))
			}
			c.ok(t, "POST", indexDocs(p, "points"), `{"documents":[`+strings.Join(docs, ",")+`]}`)
		}
		q := []float64{0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5}
		exact := func(keep func(n int) bool, k int) []string {
			var ids []string
			for id := range vecs {
				var n int
				fmt.Sscan(id, &n)
				if keep(n) {
					ids = append(ids, id)
				}
			}
			dist := func(id string) float64 {
				s := 0.0
				for j, x := range vecs[id] {
					s += (x - q[j]) * (x - q[j])
				}
				return s
			}
			slices.SortFunc(ids, func(a, b string) int { return cmpFloat(dist(a), dist(b)) })
			return ids[:min(k, len(ids))]
		}
		qj, _ := json.Marshal(q)
		for _, c2 := range []struct {
			filter string
			keep   func(int) bool
			k      int
		}{
			{`{"n":{"$lt":10}}`, func(n int) bool { return n < 10 }, 10},                          // 1%: all of them
			{`{"n":{"$lt":10}}`, func(n int) bool { return n < 10 }, 5},                           // 1%: the nearest five
			{`{"n":{"$gte":500}}`, func(n int) bool { return n >= 500 }, 10},                      // half
			{`{"$or":[{"n":3},{"n":997}]}`, func(n int) bool { return n == 3 || n == 997 }, 10},   // fewer than k
			{`{"n":{"$gte":100,"$lt":400}}`, func(n int) bool { return n >= 100 && n < 400 }, 20}, // 30%
		} {
			ch := c.searchIndex(t, p, "points", fmt.Sprintf(`{"vector":{"v":%s,"top_k":%d},"filter":%s,"page_size":%d,"page":1}`, qj, c2.k, c2.filter, c2.k))
			equalStrings(t, c2.filter, hitIDs(t, ch), exact(c2.keep, c2.k))
		}
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestVectorSearchOfACollection: a collection's field may be a vector,
// searched on the 2023 path as an index's is.
func TestVectorSearchOfACollection(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		p := "vcoll"
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		c.ok(t, "POST", p23Coll(p, "items", "createOrUpdate"), `{"schema":{"title":"items","properties":{
			"id":{"type":"integer"},"tag":{"type":"string"},"emb":{"type":"array","format":"vector","dimensions":3}},"primary_key":["id"]}}`)
		c.ok(t, "POST", p23Doc(p, "items", "insert"), `{"documents":[
			{"id":1,"tag":"x","emb":[1,0,0]},{"id":2,"tag":"y","emb":[0.9,0.1,0]},{"id":3,"tag":"x","emb":[0,0,1]},{"id":4,"tag":"y"}]}`)
		ch := c.searchAt(t, p23Doc(p, "items", "search"), `{"vector":{"emb":[1,0,0]}}`)
		equalStrings(t, "nearest", hitIDs(t, ch), []string{"1", "2", "3"})
		ch = c.searchAt(t, p23Doc(p, "items", "search"), `{"vector":{"emb":[1,0,0]},"filter":{"tag":"x"}}`)
		equalStrings(t, "among x", hitIDs(t, ch), []string{"1", "3"})
		// A write inside a transaction is no neighbour until it commits.
		tx := c.begin(t, p)
		tx.ok(t, "POST", p23Doc(p, "items", "insert"), `{"documents":[{"id":5,"tag":"x","emb":[1,0,0.01]}]}`)
		ch = c.searchAt(t, p23Doc(p, "items", "search"), `{"vector":{"emb":[1,0,0],"top_k":2}}`)
		equalStrings(t, "before the commit", hitIDs(t, ch), []string{"1", "2"})
		tx.ok(t, "POST", p23Path(p, "transactions/commit"), "")
		ch = c.searchAt(t, p23Doc(p, "items", "search"), `{"vector":{"emb":[1,0,0],"top_k":2}}`)
		equalStrings(t, "after the commit", hitIDs(t, ch), []string{"1", "5"})
		wantError(t, c.do(t, "POST", p23Doc(p, "items", "insert"), `{"documents":[{"id":6,"emb":[1,0]}]}`), http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		// A collection's vector field needs its dimensions, as an index's.
		wantError(t, c.do(t, "POST", p23Coll(p, "nodims", "createOrUpdate"), `{"schema":{"title":"nodims","properties":{"id":{"type":"integer"},"v":{"type":"array","format":"vector"}},"primary_key":["id"]}}`),
			http.StatusBadRequest, "INVALID_ARGUMENT", "Field 'v' type 'vector' is missing dimensions")
		wantError(t, c.do(t, "POST", p23Coll(p, "nodims", "createOrUpdate"), `{"schema":{"title":"nodims","properties":{"id":{"type":"integer"},"v":{"type":"array","format":"vector","dimensions":4097}},"primary_key":["id"]}}`),
			http.StatusBadRequest, "INVALID_ARGUMENT", "field 'v' has 4097 dimensions, above the limit of 4096")
	})
}
