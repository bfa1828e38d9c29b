package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/tests/backendtest"
)

// searchChunk is one line of a search stream.
type searchChunk struct {
	Hits []struct {
		Data     json.RawMessage `json:"data"`
		Metadata struct {
			CreatedAt string `json:"created_at"`
			UpdatedAt string `json:"updated_at"`
			// Match is a vector search's.
			Match *struct {
				VectorDistance *float64 `json:"vector_distance"`
			} `json:"match"`
		} `json:"metadata"`
	} `json:"hits"`
	Facets map[string]struct {
		Counts []struct {
			Count int64  `json:"count"`
			Value string `json:"value"`
		} `json:"counts"`
		Stats struct {
			Avg   *float64 `json:"avg"`
			Max   *float64 `json:"max"`
			Min   *float64 `json:"min"`
			Sum   *float64 `json:"sum"`
			Count int64    `json:"count"`
		} `json:"stats"`
	} `json:"facets"`
	Meta struct {
		Found      int64 `json:"found"`
		TotalPages int32 `json:"total_pages"`
		Page       struct {
			Current int32 `json:"current"`
			Size    int32 `json:"size"`
		} `json:"page"`
	} `json:"meta"`
}

// search runs a search that must succeed and returns its chunks, checking
// the framing: one {"result":{...}} line per page, hits and facets always
// present.
func (c *client) search(t testing.TB, db, coll, body string) []searchChunk {
	t.Helper()
	return c.searchAt(t, docPath(db, coll, "search"), body)
}

// searchAt is search on a path of its own (messages/search).
func (c *client) searchAt(t testing.TB, path, body string) []searchChunk {
	t.Helper()
	r := c.ok(t, "POST", path, body)
	var out []searchChunk
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var raw struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			t.Fatalf("search line is not JSON (%v): %s", err, line)
		}
		for _, member := range []string{"hits", "facets", "meta"} {
			if v, ok := raw.Result[member]; !ok || string(v) == "null" {
				t.Fatalf("search chunk without %q: %s", member, line)
			}
		}
		var chunk struct {
			Result searchChunk `json:"result"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&chunk); err != nil {
			t.Fatalf("search line (%v): %s", err, line)
		}
		out = append(out, chunk.Result)
	}
	if len(out) == 0 {
		t.Fatalf("search %s answered no chunk", body)
	}
	return out
}

// hitField returns the value of a top-level field of every hit of every
// chunk, in order, as JSON text.
func hitField(t testing.TB, chunks []searchChunk, field string) []string {
	t.Helper()
	var out []string
	for _, ch := range chunks {
		for _, h := range ch.Hits {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(h.Data, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, string(m[field]))
		}
	}
	return out
}

// searchIDs is the "id" of every hit, in order.
func (c *client) searchIDs(t testing.TB, db, coll, body string) []string {
	t.Helper()
	return hitField(t, c.search(t, db, coll, body), "id")
}

const articlesSchema = `{"title":"articles","properties":{
	"id":{"type":"integer"},
	"title":{"type":"string"},
	"body":{"type":"string"},
	"brand":{"type":"string"},
	"price":{"type":"number"},
	"stock":{"type":"integer"},
	"active":{"type":"boolean"},
	"at":{"type":"string","format":"date-time"},
	"ref":{"type":"string","format":"uuid"},
	"blob":{"type":"string","format":"byte"},
	"tags":{"type":"array","items":{"type":"string"}},
	"scores":{"type":"array","items":{"type":"integer"}},
	"maker":{"type":"object","properties":{"name":{"type":"string"},"country":{"type":"string"}}}
},"primary_key":["id"]}`

var articles = []string{
	`{"id":1,"title":"Quick brown fox","body":"The fox runs through the forest","brand":"Acme","price":10.5,"stock":3,"active":true,"at":"2024-01-01T00:00:00Z","ref":"11111111-1111-1111-1111-111111111111","blob":"AAE=","tags":["animal","fast"],"scores":[1,5],"maker":{"name":"Ann","country":"FR"}}`,
	`{"id":2,"title":"Lazy dog sleeps","body":"A dog sleeps all day under the old tree","brand":"acme","price":20,"stock":0,"active":false,"at":"2024-02-01T00:00:00Z","ref":"22222222-2222-2222-2222-222222222222","blob":"AAI=","tags":["animal","slow"],"scores":[2,3],"maker":{"name":"Bob","country":"DE"}}`,
	`{"id":3,"title":"Brown bread recipe","body":"Bake brown bread with quick yeast","brand":"Bakers","price":5.25,"stock":12,"active":true,"at":"2024-03-01T00:00:00Z","ref":"33333333-3333-3333-3333-333333333333","blob":"AQA=","tags":["food"],"scores":[9],"maker":{"name":"Cid","country":"FR"}}`,
	`{"id":4,"title":"Fox and hound","body":"An old story of a red fox and a hound","brand":"Acme","price":15,"stock":7,"active":true,"at":"2024-04-01T00:00:00Z","ref":"44444444-4444-4444-4444-444444444444","blob":"AgA=","tags":["animal","story"],"scores":[4,4],"maker":{"name":"Dee","country":"US"}}`,
	`{"id":5,"title":"Garden tools","body":"Tools for the garden","brand":"Toolery","price":30,"stock":1,"active":false,"at":"2024-05-01T00:00:00Z","ref":"55555555-5555-5555-5555-555555555555","blob":"/wA=","tags":[],"scores":[],"maker":{"name":"Eve","country":"DE"}}`,
}

func setupArticles(t *testing.T, c *client) {
	t.Helper()
	c.createDB(t, "db1")
	c.createColl(t, "db1", "articles", articlesSchema)
	c.insert(t, "db1", "articles", articles...)
}

func TestSearchText(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupArticles(t, c)
		for _, tc := range []struct {
			name, body string
			want       []string // ids, in order when ordered
			ordered    bool
		}{
			{"empty q matches all", `{}`, []string{"1", "2", "3", "4", "5"}, false},
			{"star matches all", `{"q":"*"}`, []string{"1", "2", "3", "4", "5"}, false},
			{"term", `{"q":"fox"}`, []string{"1", "4"}, false},
			{"term is case-insensitive", `{"q":"FOX"}`, []string{"1", "4"}, false},
			{"terms all required", `{"q":"brown quick"}`, []string{"1", "3"}, false},
			{"terms across fields", `{"q":"hound forest"}`, nil, false},
			{"phrase", `{"q":"\"brown bread\""}`, []string{"3"}, false},
			{"phrase needs the order", `{"q":"\"bread brown\""}`, nil, false},
			{"phrase and term", `{"q":"\"red fox\" hound"}`, []string{"4"}, false},
			{"search_fields narrows", `{"q":"fox","search_fields":["body"]}`, []string{"1", "4"}, false},
			{"search_fields title only", `{"q":"forest","search_fields":["title"]}`, nil, false},
			{"nested search field", `{"q":"ann","search_fields":["maker.name"]}`, []string{"1"}, false},
			{"array of strings searched", `{"q":"fast"}`, []string{"1"}, false},
			{"array of strings as a search field", `{"q":"animal","search_fields":["tags"]}`, []string{"1", "2", "4"}, false},
			{"stop words only match nothing", `{"q":"the"}`, nil, false},
			{"no match", `{"q":"zebra"}`, nil, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := c.searchIDs(t, "db1", "articles", tc.body)
				if !tc.ordered {
					sort.Strings(got)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("search %s: ids %v, want %v", tc.body, got, tc.want)
				}
			})
		}
	})
}

// TestSearchRankingBM25 checks the order on a corpus where BM25 and
// TF-IDF disagree, computed by hand with Bleve's BM25: with t = sqrt(term
// frequency), score = idf·t·k1/(t + k1·(1-b+b·len/avg)), k1 1.2, b 0.75,
// and the average length taken as ceil(distinct terms of the field /
// documents) = ceil(62/3) = 21. "fox" alone (t 1, length 1) scores
// 1.2/1.343 = 0.894 (times idf); nine "fox" and a "cat" (t 3, length 10)
// 3.6/3.729 = 0.965. TF-IDF (t/sqrt(length)) puts the short one first
// (1 > 0.949).
func TestSearchRankingBM25(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "ranked", `{"title":"ranked","properties":{"id":{"type":"integer"},"t":{"type":"string"}},"primary_key":["id"]}`)
		c.insert(t, "db1", "ranked",
			`{"id":1,"t":"fox"}`,
			`{"id":2,"t":"fox fox fox fox fox fox fox fox fox cat"}`,
			`{"id":3,"t":"word1 word2 word3 word4 word5 word6 word7 word8 word9 word10 word11 word12 word13 word14 word15 word16 word17 word18 word19 word20 word21 word22 word23 word24 word25 word26 word27 word28 word29 word30 word31 word32 word33 word34 word35 word36 word37 word38 word39 word40 word41 word42 word43 word44 word45 word46 word47 word48 word49 word50 word51 word52 word53 word54 word55 word56 word57 word58 word59 word60"}`)
		if got := c.searchIDs(t, "db1", "ranked", `{"q":"fox"}`); !slices.Equal(got, []string{"2", "1"}) {
			t.Errorf("ranking of fox: %v, want [2 1] (BM25)", got)
		}
		// More matched words rank higher than fewer.
		c.insert(t, "db1", "ranked", `{"id":4,"t":"red fox"}`, `{"id":5,"t":"red fox jumps"}`, `{"id":6,"t":"red hen"}`)
		got := c.searchIDs(t, "db1", "ranked", `{"q":"red","sort":null}`)
		if !slices.Equal(got, []string{"4", "6", "5"}) {
			t.Errorf("ranking of red: %v, want [4 6 5] (shorter fields first at equal tf, ties by key)", got)
		}
	})
}

func TestSearchFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupArticles(t, c)
		for _, tc := range []struct {
			filter string
			want   []string
			// found is the index's count when it answers the filter
			// loosely (see docs/api.md); 0: exactly the hits. The hits are
			// checked against the filter, found is not: it shows that the
			// translation itself selects.
			found int64
		}{
			{`{"stock":7}`, []string{"4"}, 0},
			{`{"stock":{"$gt":3}}`, []string{"3", "4"}, 0},
			{`{"stock":{"$gte":3}}`, []string{"1", "3", "4"}, 0},
			{`{"stock":{"$lt":3}}`, []string{"2", "5"}, 0},
			{`{"stock":{"$lte":3}}`, []string{"1", "2", "5"}, 0},
			{`{"$and":[{"stock":{"$gt":0}},{"stock":{"$lt":7}}]}`, []string{"1", "5"}, 0},
			{`{"price":10.5}`, []string{"1"}, 0},
			{`{"price":{"$gt":10.5}}`, []string{"2", "4", "5"}, 0},
			{`{"price":{"$lte":10.5}}`, []string{"1", "3"}, 0},
			{`{"brand":"Acme"}`, []string{"1", "4"}, 0},
			{`{"brand":"acme"}`, []string{"2"}, 0},
			{`{"brand":{"$eq":"acme","collation":{"case":"ci"}}}`, []string{"1", "2", "4"}, 0},
			{`{"brand":{"$gt":"Acme"}}`, []string{"2", "3", "5"}, 0},
			{`{"brand":{"$gte":"B"}}`, []string{"2", "3", "5"}, 0},
			{`{"brand":{"$lt":"Bakers"}}`, []string{"1", "4"}, 0},
			{`{"brand":{"$lte":"Bakers"}}`, []string{"1", "3", "4"}, 0},
			{`{"title":"Fox and hound"}`, []string{"4"}, 0},
			{`{"title":"fox"}`, nil, 0},
			{`{"active":true}`, []string{"1", "3", "4"}, 0},
			{`{"active":false}`, []string{"2", "5"}, 0},
			{`{"at":"2024-03-01T00:00:00Z"}`, []string{"3"}, 0},
			{`{"at":{"$gte":"2024-03-01T00:00:00Z"}}`, []string{"3", "4", "5"}, 0},
			{`{"at":{"$lt":"2024-02-15T00:00:00Z"}}`, []string{"1", "2"}, 0},
			{`{"ref":"22222222-2222-2222-2222-222222222222"}`, []string{"2"}, 0},
			{`{"blob":"AQA="}`, []string{"3"}, 0},
			{`{"blob":{"$gt":"AQA="}}`, []string{"4", "5"}, 0},
			{`{"maker.country":"FR"}`, []string{"1", "3"}, 0},
			{`{"maker.name":{"$gt":"Bob"}}`, []string{"3", "4", "5"}, 0},
			{`{"tags":"animal"}`, []string{"1", "2", "4"}, 0},
			{`{"tags":{"$gt":"s"}}`, []string{"2", "4"}, 0},
			{`{"scores":4}`, []string{"4"}, 0},
			// One element must satisfy both: 2 has 3, 4 has 4; 1 has 1 and 5,
			// each of which satisfies one bound only. The index reads the two
			// bounds as one range of element values, so it counts 2, not 3.
			{`{"scores":{"$gte":3,"$lt":5}}`, []string{"2", "4"}, 0},
			{`{"tags":["animal","fast"]}`, []string{"1"}, 0},
			{`{"tags":["fast","animal"]}`, nil, 1},
			{`{"tags":[]}`, []string{"5"}, 5},
			{`{"$or":[{"brand":"Bakers"},{"stock":0}]}`, []string{"2", "3"}, 0},
			{`{"$and":[{"brand":"Acme"},{"active":true},{"price":{"$lt":12}}]}`, []string{"1"}, 0},
		} {
			t.Run(tc.filter, func(t *testing.T) {
				ch := c.search(t, "db1", "articles", `{"filter":`+tc.filter+`}`)
				got := hitField(t, ch, "id")
				sort.Strings(got)
				wantFound := tc.found
				if wantFound == 0 {
					wantFound = int64(len(tc.want))
				}
				if ch[0].Meta.Found != wantFound {
					t.Errorf("filter %s: the index found %d, want %d", tc.filter, ch[0].Meta.Found, wantFound)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("filter %s: ids %v, want %v", tc.filter, got, tc.want)
				}
				// The read path answers the same filter: both must agree.
				var read []string
				for _, d := range c.docs(t, "db1", "articles", `{"filter":`+tc.filter+`}`) {
					var m struct{ ID json.Number }
					json.Unmarshal([]byte(d), &m)
					read = append(read, m.ID.String())
				}
				sort.Strings(read)
				if !slices.Equal(got, read) {
					t.Errorf("filter %s: search found %v, read %v", tc.filter, got, read)
				}
			})
		}
		// The request's collation applies to the filter.
		got := c.searchIDs(t, "db1", "articles", `{"filter":{"brand":"ACME"},"collation":{"case":"ci"}}`)
		sort.Strings(got)
		if !slices.Equal(got, []string{"1", "2", "4"}) {
			t.Errorf("ci collation: %v", got)
		}
		// Text and filter together.
		got = c.searchIDs(t, "db1", "articles", `{"q":"fox","filter":{"stock":{"$gt":5}}}`)
		if !slices.Equal(got, []string{"4"}) {
			t.Errorf("q fox with stock > 5: %v", got)
		}
	})
}

func TestSearchFacets(t *testing.T) {
	// A long search wait: the bulk insert below takes the indexer seconds
	// under the race detector on a loaded machine, and this test is about
	// the counts, not how soon they come.
	eachBackendWith(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.Ops.SearchWait = 60 * time.Second
	}), func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "products", `{"title":"products","properties":{"id":{"type":"integer"},"brand":{"type":"string"},"price":{"type":"number"},"qty":{"type":"integer"},"kind":{"type":"string"}},"primary_key":["id"]}`)
		brands := []string{"adidas", "nike", "puma", "nike", "adidas", "nike", "reebok", "fila", "nike", "puma", "asics", "lotto"}
		var docs []string
		for i, b := range brands {
			kind := "shoe"
			if i%3 == 0 {
				kind = "shirt"
			}
			docs = append(docs, fmt.Sprintf(`{"id":%d,"brand":%q,"price":%g,"qty":%d,"kind":%q}`, i+1, b, float64(i)*1.5+0.25, i%4, kind))
		}
		c.insert(t, "db1", "products", docs...)

		// Counted directly from the documents, over the shoes.
		counts := map[string]int64{}
		qtys := map[string]int64{}
		var sum, mn, mx float64 = 0, math.Inf(1), math.Inf(-1)
		var n int64
		for i, b := range brands {
			if i%3 == 0 {
				continue
			}
			counts[b]++
			qtys[fmt.Sprint(i%4)]++
			p := float64(i)*1.5 + 0.25
			sum, mn, mx, n = sum+p, math.Min(mn, p), math.Max(mx, p), n+1
		}
		ch := c.search(t, "db1", "products", `{"filter":{"kind":"shoe"},"facet":{"brand":{"size":3},"price":{},"qty":{"size":10}},"page_size":2}`)
		if len(ch) < 2 {
			t.Fatalf("got %d chunks", len(ch))
		}
		brand := ch[0].Facets["brand"]
		type vc struct {
			v string
			c int64
		}
		var want []vc
		for v, k := range counts {
			want = append(want, vc{v, k})
		}
		sort.Slice(want, func(i, j int) bool {
			if want[i].c != want[j].c {
				return want[i].c > want[j].c
			}
			return want[i].v < want[j].v
		})
		want = want[:3]
		var got []vc
		for _, c := range brand.Counts {
			got = append(got, vc{c.Value, c.Count})
		}
		if !slices.Equal(got, want) {
			t.Errorf("brand facet %v, want %v", got, want)
		}
		if brand.Stats.Count != n || brand.Stats.Sum != nil || brand.Stats.Avg != nil {
			t.Errorf("brand stats %+v, want count %d and no numbers", brand.Stats, n)
		}
		price := ch[0].Facets["price"].Stats
		if price.Count != n || price.Sum == nil || math.Abs(*price.Sum-sum) > 1e-9 || *price.Min != mn || *price.Max != mx || math.Abs(*price.Avg-sum/float64(n)) > 1e-9 {
			t.Errorf("price stats %+v, want count %d sum %g min %g max %g", price, n, sum, mn, mx)
		}
		qty := map[string]int64{}
		for _, c := range ch[0].Facets["qty"].Counts {
			qty[c.Value] = c.Count
		}
		if fmt.Sprint(qty) != fmt.Sprint(qtys) {
			t.Errorf("qty facet %v, want %v", qty, qtys)
		}
		// Every page of the stream carries the facets.
		for i, chunk := range ch {
			if len(chunk.Facets) != 3 {
				t.Errorf("page %d has facets %v", i+1, chunk.Facets)
			}
		}
		// Stats over many matches.
		var many []string
		var manySum float64
		for i := 100; i < 1300; i++ {
			many = append(many, fmt.Sprintf(`{"id":%d,"brand":"x","price":%d,"qty":1,"kind":"bulk"}`, i, i))
			manySum += float64(i)
		}
		c.insert(t, "db1", "products", many...)
		st := c.search(t, "db1", "products", `{"filter":{"kind":"bulk"},"facet":{"price":{}},"page":1,"page_size":1}`)[0].Facets["price"].Stats
		if st.Count != 1200 || *st.Sum != manySum || *st.Min != 100 || *st.Max != 1299 {
			t.Errorf("bulk stats %+v, want count 1200 sum %g", st, manySum)
		}
	})
}

func TestSearchSortPagesProjection(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupArticles(t, c)
		for _, tc := range []struct {
			body string
			want []string
		}{
			{`{"sort":[{"price":"$desc"}]}`, []string{"5", "2", "4", "1", "3"}},
			{`{"sort":[{"price":"$asc"}]}`, []string{"3", "1", "4", "2", "5"}},
			{`{"sort":[{"active":"$desc"},{"stock":"$asc"}]}`, []string{"1", "4", "3", "2", "5"}},
			{`{"sort":[{"at":"$desc"}]}`, []string{"5", "4", "3", "2", "1"}},
			{`{"sort":[{"brand":"$asc"},{"id":"$desc"}]}`, []string{"4", "1", "3", "5", "2"}},
			{`{"q":"fox","sort":[{"stock":"$desc"}]}`, []string{"4", "1"}},
		} {
			if got := c.searchIDs(t, "db1", "articles", tc.body); !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.body, got, tc.want)
			}
		}

		// Every page streamed, one chunk each, with the metadata.
		ch := c.search(t, "db1", "articles", `{"sort":[{"id":"$asc"}],"page_size":2}`)
		if len(ch) != 3 {
			t.Fatalf("got %d pages, want 3", len(ch))
		}
		for i, p := range ch {
			if p.Meta.Found != 5 || p.Meta.TotalPages != 3 || p.Meta.Page.Current != int32(i+1) || p.Meta.Page.Size != 2 {
				t.Errorf("page %d meta %+v", i+1, p.Meta)
			}
		}
		if got := hitField(t, ch, "id"); !slices.Equal(got, []string{"1", "2", "3", "4", "5"}) {
			t.Errorf("streamed ids %v", got)
		}
		// One page asked for.
		ch = c.search(t, "db1", "articles", `{"sort":[{"id":"$asc"}],"page_size":2,"page":2}`)
		if len(ch) != 1 || ch[0].Meta.Page.Current != 2 || !slices.Equal(hitField(t, ch, "id"), []string{"3", "4"}) {
			t.Errorf("page 2: %+v", ch)
		}
		// A page past the end is empty, with the totals.
		ch = c.search(t, "db1", "articles", `{"page_size":2,"page":9}`)
		if len(ch) != 1 || len(ch[0].Hits) != 0 || ch[0].Meta.Found != 5 {
			t.Errorf("page 9: %+v", ch)
		}
		// Nothing matched: one empty page.
		ch = c.search(t, "db1", "articles", `{"q":"zebra"}`)
		if len(ch) != 1 || len(ch[0].Hits) != 0 || ch[0].Meta.Found != 0 || ch[0].Meta.TotalPages != 0 || ch[0].Meta.Page.Current != 1 || ch[0].Meta.Page.Size != 20 {
			t.Errorf("no match: %+v", ch)
		}

		// Projections, and the metadata of each hit.
		ch = c.search(t, "db1", "articles", `{"filter":{"id":1},"include_fields":["id","brand"]}`)
		if got := string(ch[0].Hits[0].Data); got != `{"id":1,"brand":"Acme"}` {
			t.Errorf("include_fields: %s", got)
		}
		if ch[0].Hits[0].Metadata.CreatedAt == "" {
			t.Errorf("hit without created_at")
		}
		ch = c.search(t, "db1", "articles", `{"filter":{"id":5},"exclude_fields":["body","tags","scores","maker","blob","ref","at","title"]}`)
		if got := string(ch[0].Hits[0].Data); got != `{"id":5,"brand":"Toolery","price":30,"stock":1,"active":false}` {
			t.Errorf("exclude_fields: %s", got)
		}
		// A whole hit is the document as stored.
		ch = c.search(t, "db1", "articles", `{"filter":{"id":3}}`)
		if got := string(ch[0].Hits[0].Data); got != articles[2] {
			t.Errorf("hit %s, want %s", got, articles[2])
		}
	})
}

// TestSearchSeesWrites: a search right after a write sees it (the search
// waits for the index to catch up with what was acknowledged).
func TestSearchSeesWrites(t *testing.T) {
	eachBackendWith(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.Ops.SearchWait = 2 * time.Second
	}), func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "writes", `{"title":"writes","properties":{"id":{"type":"integer"},"t":{"type":"string"},"n":{"type":"integer"}},"primary_key":["id"]}`)
		for i := 1; i <= 20; i++ {
			c.insert(t, "db1", "writes", fmt.Sprintf(`{"id":%d,"t":"word%d shared","n":%d}`, i, i, i))
			if got := c.searchIDs(t, "db1", "writes", fmt.Sprintf(`{"q":"word%d"}`, i)); !slices.Equal(got, []string{fmt.Sprint(i)}) {
				t.Fatalf("right after inserting %d, search finds %v", i, got)
			}
		}
		c.ok(t, "PUT", docPath("db1", "writes", "update"), `{"filter":{"id":3},"fields":{"$set":{"t":"changed","n":300}}}`)
		if got := c.searchIDs(t, "db1", "writes", `{"q":"word3"}`); len(got) != 0 {
			t.Errorf("after the update, the old text still finds %v", got)
		}
		ch := c.search(t, "db1", "writes", `{"q":"changed","filter":{"n":300}}`)
		if got := hitField(t, ch, "t"); !slices.Equal(got, []string{`"changed"`}) || ch[0].Hits[0].Metadata.UpdatedAt == "" {
			t.Errorf("after the update: %v", got)
		}
		c.ok(t, "PUT", docPath("db1", "writes", "replace"), `{"documents":[{"id":4,"t":"replaced"}]}`)
		if got := c.searchIDs(t, "db1", "writes", `{"q":"replaced"}`); !slices.Equal(got, []string{"4"}) {
			t.Errorf("after the replace: %v", got)
		}
		c.ok(t, "DELETE", docPath("db1", "writes", "delete"), `{"filter":{"n":{"$lte":10}}}`)
		ch = c.search(t, "db1", "writes", `{"q":"shared","page_size":100}`)
		if ch[0].Meta.Found != 10 || len(hitField(t, ch, "id")) != 10 {
			t.Errorf("after deleting 10 of 20: found %d, %d hits", ch[0].Meta.Found, len(hitField(t, ch, "id")))
		}
		// A transaction's writes are seen once committed, not before.
		tx := c.okObject(t, "POST", dbPath("db1", "transactions/begin"), "")
		txCtx := obj(t, tx, "tx_ctx")
		req, _ := http.NewRequest("POST", c.base+docPath("db1", "writes", "insert"), strings.NewReader(`{"documents":[{"id":99,"t":"intx"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Tigris-Tx-Id", str(t, txCtx, "id"))
		req.Header.Set("Tigris-Tx-Origin", str(t, txCtx, "origin"))
		if r := c.doRequest(t, req); r.status != 200 {
			t.Fatalf("insert in tx: %s", r)
		}
		// On PostgreSQL the log cannot be read past an open transaction, so
		// a search may wait for it and answer 503; it never shows the write.
		if r := c.do(t, "POST", docPath("db1", "writes", "search"), `{"q":"intx"}`); r.status == 200 {
			if got := hitField(t, c.search(t, "db1", "writes", `{"q":"intx"}`), "id"); len(got) != 0 {
				t.Errorf("an uncommitted write is found: %v", got)
			}
		} else {
			wantError(t, r, 503, "UNAVAILABLE", "the search index has not caught up with the latest writes yet; retry later")
		}
		req, _ = http.NewRequest("POST", c.base+dbPath("db1", "transactions/commit"), nil)
		req.Header.Set("Tigris-Tx-Id", str(t, txCtx, "id"))
		req.Header.Set("Tigris-Tx-Origin", str(t, txCtx, "origin"))
		if r := c.doRequest(t, req); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		if got := c.searchIDs(t, "db1", "writes", `{"q":"intx"}`); !slices.Equal(got, []string{"99"}) {
			t.Errorf("after the commit: %v", got)
		}
	})
}

// TestSearchSchemaChangeAndDrop: a field added by a schema change is
// searchable in documents written after it; a dropped and re-created
// collection finds none of the old documents; a dropped database's
// collections are gone from search.
func TestSearchSchemaChangeAndDrop(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "evolving", `{"title":"evolving","properties":{"id":{"type":"integer"},"a":{"type":"string"}},"primary_key":["id"]}`)
		c.insert(t, "db1", "evolving", `{"id":1,"a":"alpha"}`)
		c.createColl(t, "db1", "evolving", `{"title":"evolving","properties":{"id":{"type":"integer"},"a":{"type":"string"},"b":{"type":"string"},"n":{"type":"integer"}},"primary_key":["id"]}`)
		c.insert(t, "db1", "evolving", `{"id":2,"a":"alpha","b":"beta","n":5}`)
		if got := c.searchIDs(t, "db1", "evolving", `{"q":"beta","search_fields":["b"]}`); !slices.Equal(got, []string{"2"}) {
			t.Errorf("new field b: %v", got)
		}
		if got := c.searchIDs(t, "db1", "evolving", `{"filter":{"n":{"$gt":1}}}`); !slices.Equal(got, []string{"2"}) {
			t.Errorf("new field n: %v", got)
		}

		c.ok(t, "DELETE", collPath("db1", "evolving", "drop"), "")
		wantError(t, c.do(t, "POST", docPath("db1", "evolving", "search"), `{}`), 404, "NOT_FOUND", anyMessage)
		c.createColl(t, "db1", "evolving", `{"title":"evolving","properties":{"id":{"type":"integer"},"a":{"type":"string"}},"primary_key":["id"]}`)
		if got := c.searchIDs(t, "db1", "evolving", `{"q":"alpha"}`); len(got) != 0 {
			t.Errorf("the re-created collection finds old documents %v", got)
		}
		c.insert(t, "db1", "evolving", `{"id":7,"a":"alpha"}`)
		if got := c.searchIDs(t, "db1", "evolving", `{"q":"alpha"}`); !slices.Equal(got, []string{"7"}) {
			t.Errorf("the re-created collection: %v", got)
		}
		c.ok(t, "DELETE", dbPath("db1", "drop"), "")
		c.createDB(t, "db1")
		c.createColl(t, "db1", "evolving", `{"title":"evolving","properties":{"id":{"type":"integer"},"a":{"type":"string"}},"primary_key":["id"]}`)
		if got := c.searchIDs(t, "db1", "evolving", `{"q":"alpha"}`); len(got) != 0 {
			t.Errorf("after the database was dropped and re-created: %v", got)
		}
	})
}

func TestSearchErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupArticles(t, c)
		c.createColl(t, "db1", "msgs", messagesSchema)
		for _, tc := range []struct {
			path, body string
			status     int
			code, msg  string
		}{
			{docPath("db1", "articles", "search"), `{"search_fields":["nope"]}`, 400, "INVALID_ARGUMENT", "search field 'nope' is not in the collection's schema"},
			{docPath("db1", "articles", "search"), `{"search_fields":["price"]}`, 400, "INVALID_ARGUMENT", "search field 'price' is of type number: text is searched in string fields only"},
			{docPath("db1", "articles", "search"), `{"include_fields":["id"],"exclude_fields":["body"]}`, 400, "INVALID_ARGUMENT", "include_fields and exclude_fields cannot both be given"},
			{docPath("db1", "articles", "search"), `{"page":-1}`, 400, "INVALID_ARGUMENT", "page and page_size must not be negative"},
			{docPath("db1", "articles", "search"), `{"page_size":-1}`, 400, "INVALID_ARGUMENT", "page and page_size must not be negative"},
			{docPath("db1", "articles", "search"), `{"page_size":1001}`, 400, "INVALID_ARGUMENT", "page_size 1001 is above the limit of 1000"},
			{docPath("db1", "articles", "search"), `{"page_size":1000,"page":11}`, 400, "INVALID_ARGUMENT", "page 11 of size 1000 reaches past the first 10000 hits, the most a search serves"},
			{docPath("db1", "articles", "search"), `{"sort":[{"price":"$asc"},{"stock":"$asc"},{"id":"$asc"}]}`, 400, "INVALID_ARGUMENT", "sort takes at most 2 fields, got 3"},
			{docPath("db1", "articles", "search"), `{"sort":[{"maker":"$asc"}]}`, 400, "INVALID_ARGUMENT", "sort field 'maker' is of type object: sorts are on integer, number, date-time, bool and string fields"},
			{docPath("db1", "articles", "search"), `{"sort":[{"nope":"$asc"}]}`, 400, "INVALID_ARGUMENT", "sort field 'nope' is not in the collection's schema"},
			{docPath("db1", "articles", "search"), `{"sort":[{"price":"up"}]}`, 400, "INVALID_ARGUMENT", "sort order of 'price' must be $asc or $desc, not 'up'"},
			{docPath("db1", "articles", "search"), `{"facet":{"active":{"size":3}}}`, 400, "INVALID_ARGUMENT", "facet field 'active' is of type bool: facets are counted on string, integer and number fields"},
			{docPath("db1", "articles", "search"), `{"facet":{"nope":{}}}`, 400, "INVALID_ARGUMENT", "facet field 'nope' is not in the collection's schema"},
			{docPath("db1", "articles", "search"), `{"facet":{"brand":{"size":-1}}}`, 400, "INVALID_ARGUMENT", "size of facet 'brand' must not be negative"},
			{docPath("db1", "articles", "search"), `{"facet":{"brand":3}}`, 400, "INVALID_ARGUMENT", `facet 'brand' must be an object such as {"size":10}`},
			{docPath("db1", "articles", "search"), `{"q":"\"open phrase"}`, 400, "INVALID_ARGUMENT", "q has a phrase without its closing quote"},
			{docPath("db1", "articles", "search"), `{"q":"` + strings.Repeat("fox ", 1025) + `"}`, 400, "INVALID_ARGUMENT", "q is 4100 bytes, above the limit of 4096"},
			{docPath("db1", "articles", "search"), `{"q":"` + strings.Repeat("ox ", 513) + `","search_fields":["title","body"]}`, 400, "INVALID_ARGUMENT", "q's words times its search fields are 1026 (513 × 2), above the limit of 1024: give fewer words or search_fields"},
			{collPath("db1", "msgs", "messages/search"), `{"q":"` + strings.Repeat("ox ", 1025) + `"}`, 400, "INVALID_ARGUMENT", "q's words times its search fields are 2050 (1025 × 2), above the limit of 1024: give fewer words or search_fields"},
			{docPath("db1", "articles", "search"), `{"filter":{"nope":1}}`, 400, "INVALID_ARGUMENT", anyMessage},
			{docPath("db1", "articles", "search"), `{"filter":{"stock":"x"}}`, 400, "INVALID_ARGUMENT", anyMessage},
			{docPath("db1", "articles", "search"), `{"q":1}`, 400, "INVALID_ARGUMENT", anyMessage},
			{docPath("db1", "articles", "search"), `{`, 400, "INVALID_ARGUMENT", anyMessage},
			{docPath("db1", "nope", "search"), `{}`, 404, "NOT_FOUND", anyMessage},
			{docPath("nodb", "articles", "search"), `{}`, 404, "NOT_FOUND", anyMessage},
			{collPath("db1", "msgs", "messages/search"), `{"facet":{"nope":{}}}`, 400, "INVALID_ARGUMENT", "facet field 'nope' is not in the collection's schema"},
			{collPath("db1", "msgs", "messages/search"), `{"include_fields":["a"],"exclude_fields":["b"]}`, 400, "INVALID_ARGUMENT", "include_fields and exclude_fields cannot both be given"},
			{collPath("db1", "nope", "messages/search"), `{}`, 404, "NOT_FOUND", anyMessage},
			{collPath("db1", "msgs", "messages/search"), `{"search_fields":["n"]}`, 400, "INVALID_ARGUMENT", "search field 'n' is of type int64: text is searched in string fields only"},
			{collPath("db1", "msgs", "messages/search"), `{"sort":[{"n":"$asc"},{"kind":"$asc"},{"text":"$asc"}]}`, 400, "INVALID_ARGUMENT", "sort takes at most 2 fields, got 3"},
			{collPath("db1", "msgs", "messages/search"), `{"filter":{"n":"x"}}`, 400, "INVALID_ARGUMENT", anyMessage},
			{collPath("db1", "msgs", "messages/search"), `{"page_size":-1}`, 400, "INVALID_ARGUMENT", "page and page_size must not be negative"},
		} {
			wantError(t, c.do(t, "POST", tc.path, tc.body), tc.status, tc.code, tc.msg)
		}
		// The body's shape is checked before the collection is looked up.
		wantError(t, c.do(t, "POST", docPath("db1", "nope", "search"), `{"sort":[{"price":"up"}]}`), 400, "INVALID_ARGUMENT", "sort order of 'price' must be $asc or $desc, not 'up'")
		// The names are checked before the body.
		wantError(t, c.do(t, "POST", docPath("db1", "bad name", "search"), `{`), 400, "INVALID_ARGUMENT", anyMessage)
	})
}

// testLog writes a node's log into the test's.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestSearchRestartAndRebuild stops a node and starts it again on the
// same data and search directories: the index catches up from its
// watermark with what was written while it was running and is served at
// once; an index directory removed while the node was down is rebuilt
// from the documents, or the stored messages (searches answer 503 until
// it is ready); a dropped collection's directory is removed. On both
// backends: the indexes live on the node's disk whatever the store.
func TestSearchRestartAndRebuild(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		data, searchDir := b.Durable(t), t.TempDir()
		start := func() (*node.Node, *client) {
			n := startNode(t, data.Open(), node.DefaultConfigWith(func(nc *node.Config) {
				nc.Search.Dir = searchDir
				nc.Logger = slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
			}))
			return n, newClient("http://" + n.Addr().String())
		}
		n, c := start()
		c.createDB(t, "db1")
		c.createColl(t, "db1", "coll_a", `{"title":"coll_a","properties":{"id":{"type":"integer"},"t":{"type":"string"}},"primary_key":["id"]}`)
		c.createColl(t, "db1", "coll_b", `{"title":"coll_b","properties":{"id":{"type":"integer"},"t":{"type":"string"}},"primary_key":["id"]}`)
		c.createColl(t, "db1", "msgs", messagesSchema)
		var docs, msgs []string
		for i := 1; i <= 300; i++ {
			docs = append(docs, fmt.Sprintf(`{"id":%d,"t":"doc%d common"}`, i, i))
			msgs = append(msgs, fmt.Sprintf(`{"kind":"k%d","n":%d,"text":"message common"}`, i%3, i))
		}
		c.insert(t, "db1", "coll_a", docs...)
		c.insert(t, "db1", "coll_b", docs[:50]...)
		c.publish(t, msgs[:120]...)
		c.ok(t, "DELETE", docPath("db1", "coll_a", "delete"), `{"filter":{"id":{"$gt":250}}}`)
		// A search waits for the indexer to pass every write before it, so
		// the indexes exist with their watermarks when the node stops: one
		// the indexer had not reached yet would be missing at the restart
		// and rebuilt, which is right but not what this part tests.
		c.search(t, "db1", "coll_a", `{"q":"common","page":1}`)
		c.search(t, "db1", "coll_b", `{"q":"common","page":1}`)
		c.msgSearch(t, `{"q":"common","page":1}`)
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		dirs := searchDirs(t, searchDir)
		if len(dirs) != 3 {
			t.Fatalf("search directory holds %v, want three indexes", dirs)
		}

		n, c = start()
		if got := c.search(t, "db1", "coll_a", `{"q":"common","page":1}`)[0].Meta.Found; got != 250 {
			t.Errorf("after a restart, a finds %d, want 250", got)
		}
		c.insert(t, "db1", "coll_a", `{"id":1000,"t":"later"}`)
		if got := c.searchIDs(t, "db1", "coll_a", `{"q":"later"}`); !slices.Equal(got, []string{"1000"}) {
			t.Errorf("a write after the restart: %v", got)
		}
		c.publish(t, msgs[120:]...)
		if got := c.msgSearch(t, `{"q":"common","page":1}`)[0].Meta.Found; got != 300 {
			t.Errorf("messages after the restart: found %d, want 300", got)
		}
		st := n.Stats().Search
		if len(st.Indexes) != 3 {
			t.Errorf("search stats: %+v, want three indexes", st)
		}
		for _, ix := range st.Indexes {
			if !ix.Ready || ix.DiskBytes == 0 || (ix.Collection == "coll_a" && ix.Documents != 251) || (ix.Collection == "msgs" && ix.Documents != 300) {
				t.Errorf("index stats %+v", ix)
			}
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}

		// Remove a's and the messages' indexes: they are rebuilt; b's is
		// served as it was.
		for _, id := range []int64{collID(t, st, "coll_a"), collID(t, st, "msgs")} {
			if err := os.RemoveAll(filepath.Join(searchDir, fmt.Sprint(id))); err != nil {
				t.Fatal(err)
			}
		}
		n, c = start()
		t.Cleanup(func() { n.Close() })
		deadline := time.Now().Add(30 * time.Second)
		for _, path := range []string{docPath("db1", "coll_a", "search"), docPath("db1", "coll_b", "search"), msgPath("db1", "msgs", "search")} {
			for {
				r := c.do(t, "POST", path, `{"q":"common","page":1}`)
				if r.status == 503 {
					e, _ := errorOf(t, r)
					if e.Retry == nil || e.Retry.Delay <= 0 {
						t.Errorf("503 without a retry delay: %s", r)
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s still not searchable: %s", path, r)
					}
					time.Sleep(50 * time.Millisecond)
					continue
				}
				if r.status != 200 {
					t.Fatalf("search %s: %s", path, r)
				}
				break
			}
		}
		if got := c.search(t, "db1", "coll_a", `{"q":"common","page":1}`)[0].Meta.Found; got != 250 {
			t.Errorf("after the rebuild, a finds %d, want 250", got)
		}
		if got := c.searchIDs(t, "db1", "coll_a", `{"q":"later"}`); !slices.Equal(got, []string{"1000"}) {
			t.Errorf("after the rebuild: %v", got)
		}
		if got := c.search(t, "db1", "coll_b", `{"q":"common","page":1}`)[0].Meta.Found; got != 50 {
			t.Errorf("b finds %d, want 50", got)
		}
		ch := c.msgSearch(t, `{"q":"common","filter":{"n":{"$gt":290}},"facet":{"kind":{}},"sort":[{"n":"$asc"}],"page":1}`)
		if got := hitField(t, ch, "n"); ch[0].Meta.Found != 10 || !slices.Equal(got, []string{"291", "292", "293", "294", "295", "296", "297", "298", "299", "300"}) {
			t.Errorf("rebuilt messages index: found %d, %v", ch[0].Meta.Found, got)
		}
		if counts := ch[0].Facets["kind"].Counts; len(counts) != 3 {
			t.Errorf("rebuilt messages index: facet kind %v", counts)
		}

		// Dropping a collection removes its index's directory; dropping the
		// database removes the others'.
		st = n.Stats().Search
		bDir := filepath.Join(searchDir, fmt.Sprint(collID(t, st, "coll_b")))
		if _, err := os.Stat(bDir); err != nil {
			t.Fatalf("b's index directory: %v", err)
		}
		c.ok(t, "DELETE", collPath("db1", "coll_b", "drop"), "")
		waitGone(t, bDir)
		if got := searchDirs(t, searchDir); len(got) != 2 {
			t.Errorf("after dropping b: %v, want a's and the messages' indexes", got)
		}
		c.ok(t, "DELETE", dbPath("db1", "drop"), "")
		for _, d := range searchDirs(t, searchDir) {
			waitGone(t, filepath.Join(searchDir, d))
		}
	})
}

// searchDirs lists the index directories under dir.
func searchDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// collID is the id of a collection's index, from the search stats.
func collID(t *testing.T, st search.Stats, coll string) int64 {
	t.Helper()
	for _, ix := range st.Indexes {
		if ix.Collection == coll {
			return ix.CollectionID
		}
	}
	t.Fatalf("no index of %s in %+v", coll, st)
	return 0
}

// waitGone waits for the indexer to remove a directory (it applies a drop
// when it reads it from the log, after the drop is acknowledged).
func waitGone(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(dir)
		if os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still there (%v) after its collection was dropped", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A streamed search goes on past pages whose index hits all fall to the
// documents' own check: the index matches an array loosely (some element
// for each operator), the documents exactly (one element for all), and
// the real matches may come only on a later page.
func TestSearchPagesPastLooseHits(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "nums", `{"title":"nums","properties":{"id":{"type":"integer"},"n":{"type":"array","items":{"type":"integer"}}},"primary_key":["id"]}`)
		var docs []string
		for id := 1; id <= 4; id++ {
			docs = append(docs, fmt.Sprintf(`{"id":%d,"n":[1,5]}`, id)) // 5 >= 2 and 1 <= 3, but no element in [2, 3]
		}
		docs = append(docs, `{"id":5,"n":[2]}`, `{"id":6,"n":[3,9]}`)
		c.insert(t, "db1", "nums", docs...)
		body := `{"filter":{"n":{"$gte":2,"$lte":3}},"sort":[{"id":"$asc"}],"page_size":2}`
		if got := c.searchIDs(t, "db1", "nums", body); !slices.Equal(got, []string{"5", "6"}) {
			t.Errorf("streamed search: ids %v, want [5 6]", got)
		}
		// The read with the same filter agrees.
		if got := c.docs(t, "db1", "nums", `{"filter":{"n":{"$gte":2,"$lte":3}}}`); len(got) != 2 {
			t.Errorf("read: %v, want ids 5 and 6", got)
		}
	})
}

// Without q and without sort, hits come in storage-key order (primary
// key order here); with q, a filter only selects: the hits keep the order
// q alone ranks them in.
func TestSearchOrderWithoutTextAndFilterScores(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "order", `{"title":"order","properties":{"id":{"type":"integer"},"t":{"type":"string"},"n":{"type":"number"},"g":{"type":"string"}},"primary_key":["id"]}`)
		var docs []string
		for _, id := range []int{7, 3, 11, 1, 9, 5, 2, 8} {
			// Many different numbers, so that a range spans many of the
			// index's terms; the text's length varies the BM25 scores.
			docs = append(docs, fmt.Sprintf(`{"id":%d,"t":"apple %s","n":%g,"g":"g%d"}`, id, strings.Repeat("pear ", id), float64(id)*1.37, id%2))
		}
		c.insert(t, "db1", "order", docs...)
		if got := c.searchIDs(t, "db1", "order", `{"filter":{"n":{"$gte":2,"$lt":14}}}`); !slices.Equal(got, []string{"2", "3", "5", "7", "8", "9"}) {
			t.Errorf("filter only: %v, want key order [2 3 5 7 8 9]", got)
		}
		if got := c.searchIDs(t, "db1", "order", `{"filter":{"g":"g1"},"page_size":2}`); !slices.Equal(got, []string{"1", "3", "5", "7", "9", "11"}) {
			t.Errorf("filter only, pages of 2: %v", got)
		}
		ranked := c.searchIDs(t, "db1", "order", `{"q":"apple"}`)
		var want []string
		for _, id := range ranked {
			var n int
			fmt.Sscan(id, &n)
			if v := float64(n) * 1.37; v >= 2 && v < 14 {
				want = append(want, id)
			}
		}
		if got := c.searchIDs(t, "db1", "order", `{"q":"apple","filter":{"n":{"$gte":2,"$lt":14}}}`); !slices.Equal(got, want) {
			t.Errorf("q with a filter: %v, want q's own order restricted to the filter %v (q alone: %v)", got, want, ranked)
		}
	})
}

// Strings of 128 bytes and more are indexed for filters, facets and sorts
// by their first 128 bytes; the hits of a filter are exact all the same,
// the documents' own check deciding between values that share them.
func TestSearchLongStrings(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "texts", `{"title":"texts","properties":{"id":{"type":"integer"},"s":{"type":"string"}},"primary_key":["id"]}`)
		prefix := strings.Repeat("Long text ", 13) // 130 bytes
		at128 := prefix[:128]
		c.insert(t, "db1", "texts",
			fmt.Sprintf(`{"id":1,"s":%q}`, prefix+"alpha"),
			fmt.Sprintf(`{"id":2,"s":%q}`, prefix+"beta"),
			fmt.Sprintf(`{"id":3,"s":%q}`, at128),
			fmt.Sprintf(`{"id":4,"s":%q}`, prefix[:100]),
			`{"id":5,"s":"short"}`)
		for _, tc := range []struct {
			filter string
			want   []string
		}{
			{fmt.Sprintf(`{"s":%q}`, prefix+"beta"), []string{"2"}},
			{fmt.Sprintf(`{"s":%q}`, at128), []string{"3"}},
			{fmt.Sprintf(`{"s":{"$gt":%q}}`, at128), []string{"1", "2", "5"}},
			{fmt.Sprintf(`{"s":{"$gt":%q}}`, prefix+"alpha"), []string{"2", "5"}},
			{fmt.Sprintf(`{"s":{"$lt":%q}}`, prefix+"beta"), []string{"1", "3", "4"}},
			{fmt.Sprintf(`{"s":{"$lte":%q}}`, at128), []string{"3", "4"}},
			{fmt.Sprintf(`{"s":{"$gte":%q}}`, prefix+"beta"), []string{"2", "5"}},
			{fmt.Sprintf(`{"s":%q}`, strings.ToUpper(prefix+"beta")), nil},
		} {
			if got := c.searchIDs(t, "db1", "texts", `{"filter":`+tc.filter+`,"sort":[{"id":"$asc"}]}`); !slices.Equal(got, tc.want) {
				t.Errorf("filter %s: %v, want %v", tc.filter, got, tc.want)
			}
		}
		ci := fmt.Sprintf(`{"filter":{"s":%q},"collation":{"case":"ci"}}`, strings.ToUpper(prefix+"beta"))
		if got := c.searchIDs(t, "db1", "texts", ci); !slices.Equal(got, []string{"2"}) {
			t.Errorf("case-insensitive: %v", got)
		}
		// Sorts and facets see the first 128 bytes: the three values that
		// share them tie (in key order) and count as one.
		if got := c.searchIDs(t, "db1", "texts", `{"sort":[{"s":"$asc"}]}`); !slices.Equal(got, []string{"4", "1", "2", "3", "5"}) {
			t.Errorf("sorted by s: %v", got)
		}
		counts := map[string]int64{}
		for _, fc := range c.search(t, "db1", "texts", `{"facet":{"s":{}},"page":1}`)[0].Facets["s"].Counts {
			counts[fc.Value] = fc.Count
		}
		if len(counts) != 3 || counts[at128] != 3 || counts[prefix[:100]] != 1 || counts["short"] != 1 {
			t.Errorf("facet s: %v", counts)
		}
		// The text itself is searched whole.
		if got := c.searchIDs(t, "db1", "texts", `{"q":"beta"}`); !slices.Equal(got, []string{"2"}) {
			t.Errorf("q beta: %v", got)
		}
	})
}

// TestPrettyDocumentsStayOnOneLine: a document inserted pretty-printed is
// stored as written, and reads and searches (whose items are one line
// each) answer it compacted, with the same content.
func TestPrettyDocumentsStayOnOneLine(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "items", stockSchema)
		c.insert(t, "db1", "items", "{\n  \"id\": 1,\r\n  \"name\": \"a <b> & c\",\n\t\"qty\": 2\n}")
		want := `{"id":1,"name":"a <b> & c","qty":2}`
		if got := c.all(t, "db1", "items"); len(got) != 1 || got[0] != want {
			t.Errorf("read: %q, want %q", got, want)
		}
		if got := hitField(t, c.search(t, "db1", "items", `{"q":"c"}`), "name"); len(got) != 1 || got[0] != `"a <b> & c"` {
			t.Errorf("search: names %q", got)
		}
		chunks := c.search(t, "db1", "items", `{}`)
		if len(chunks) != 1 || len(chunks[0].Hits) != 1 || string(chunks[0].Hits[0].Data) != want {
			t.Errorf("search: %+v, want one hit %s", chunks, want)
		}
	})
}
