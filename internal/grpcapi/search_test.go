package grpcapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// A search over gRPC finds what the same search over HTTP finds: the same
// hits, facet counts and pages.
func TestSearchAsOverHTTP(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		var docs [][]byte
		for _, d := range []string{`{"id":1,"name":"quick brown fox"}`, `{"id":2,"name":"lazy dog"}`, `{"id":3,"name":"brown dog"}`, `{"id":4,"name":"fox"}`} {
			docs = append(docs, []byte(d))
		}
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: docs}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ body string }{
			{`{"q":"brown","facet":{"name":{"size":5}},"page_size":1}`},
			{`{"q":"fox","filter":{"id":{"$gt":1}},"page":1}`},
			{`{"q":"","sort":[{"id":"$desc"}],"page_size":3,"page":1}`},
		} {
			var req struct {
				Q        string          `json:"q"`
				Filter   json.RawMessage `json:"filter"`
				Facet    json.RawMessage `json:"facet"`
				Sort     json.RawMessage `json:"sort"`
				PageSize int32           `json:"page_size"`
				Page     int32           `json:"page"`
			}
			if err := json.Unmarshal([]byte(tc.body), &req); err != nil {
				t.Fatal(err)
			}
			st, err := s.rpc.Search(ctx(t), &api.SearchRequest{Project: "db1", Collection: "users", Q: req.Q, Filter: req.Filter,
				Facet: req.Facet, Sort: req.Sort, PageSize: req.PageSize, Page: req.Page})
			if err != nil {
				t.Fatal(err)
			}
			var overGRPC []string
			for {
				res, err := st.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.body, err)
				}
				overGRPC = append(overGRPC, renderPage(res.GetHits(), res.GetFacets(), res.GetMeta()))
			}
			status, body, _ := httpDo(t, s.http1, "POST", s.base+"/v1/databases/db1/collections/users/documents/search", tc.body)
			if status != 200 {
				t.Fatalf("%s over HTTP: %d %s", tc.body, status, body)
			}
			var overHTTP []string
			for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
				var chunk struct {
					Result struct {
						Hits []struct {
							Data json.RawMessage `json:"data"`
						} `json:"hits"`
						Facets map[string]struct {
							Counts []struct {
								Count int64  `json:"count"`
								Value string `json:"value"`
							} `json:"counts"`
						} `json:"facets"`
						Meta struct {
							Found      int64 `json:"found"`
							TotalPages int32 `json:"total_pages"`
							Page       struct{ Current, Size int32 }
						} `json:"meta"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(line), &chunk); err != nil {
					t.Fatalf("%s over HTTP: %v: %s", tc.body, err, line)
				}
				r := chunk.Result
				hits := make([]*api.SearchHit, len(r.Hits))
				for i, h := range r.Hits {
					hits[i] = &api.SearchHit{Data: h.Data}
				}
				facets := map[string]*api.SearchFacet{}
				for name, f := range r.Facets {
					fc := &api.SearchFacet{}
					for _, c := range f.Counts {
						fc.Counts = append(fc.Counts, &api.FacetCount{Count: c.Count, Value: c.Value})
					}
					facets[name] = fc
				}
				overHTTP = append(overHTTP, renderPage(hits, facets, &api.SearchMetadata{Found: r.Meta.Found, TotalPages: r.Meta.TotalPages,
					Page: &api.Page{Current: r.Meta.Page.Current, Size: r.Meta.Page.Size}}))
			}
			if g, h := strings.Join(overGRPC, "\n"), strings.Join(overHTTP, "\n"); g != h || len(overGRPC) == 0 || !strings.Contains(g, "hits [{") {
				t.Errorf("%s:\n over gRPC %s\n over HTTP %s", tc.body, g, h)
			}
		}
	})
}

// renderPage shows a search page for comparison: hits in order, facet
// counts by name, and the page metadata.
func renderPage(hits []*api.SearchHit, facets map[string]*api.SearchFacet, meta *api.SearchMetadata) string {
	var hs []string
	for _, h := range hits {
		hs = append(hs, string(h.GetData()))
	}
	var fs []string
	for name, f := range facets {
		var cs []string
		for _, c := range f.GetCounts() {
			cs = append(cs, c.GetValue()+"="+itoa(c.GetCount()))
		}
		fs = append(fs, name+":"+strings.Join(cs, ","))
	}
	sort.Strings(fs)
	return "hits [" + strings.Join(hs, " ") + "] facets [" + strings.Join(fs, " ") + "] found " + itoa(meta.GetFound()) +
		" pages " + itoa(int64(meta.GetTotalPages())) + " page " + itoa(int64(meta.GetPage().GetCurrent())) + "/" + itoa(int64(meta.GetPage().GetSize()))
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Search over gRPC serves a messages collection too (one Search call, as
// HTTP's messages/search): the published messages, with their publish
// time and no updated_at.
func TestSearchMessagesOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
			t.Fatal(err)
		}
		_, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "orders",
			Schema: []byte(`{"title":"orders","collection_type":"messages","properties":{"n":{"type":"integer"},"t":{"type":"string"}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		msgs := [][]byte{[]byte(`{"n":1,"t":"red apple"}`), []byte(`{"n":2,"t":"green pear"}`), []byte(`{"t":"red pear","n":3}`)}
		if _, err := s.rpc.Publish(ctx(t), &api.PublishRequest{Db: "db1", Collection: "orders", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		st, err := s.rpc.Search(ctx(t), &api.SearchRequest{Project: "db1", Collection: "orders", Q: "red", Sort: []byte(`[{"n":"$desc"}]`),
			Facet: []byte(`{"t":{}}`)})
		if err != nil {
			t.Fatal(err)
		}
		var pages []*api.SearchResponse
		for {
			res, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, res)
		}
		if len(pages) != 1 || len(pages[0].GetHits()) != 2 {
			t.Fatalf("pages %v", pages)
		}
		for i, want := range []string{`{"t":"red pear","n":3}`, `{"n":1,"t":"red apple"}`} {
			h := pages[0].GetHits()[i]
			if string(h.GetData()) != want || h.GetMetadata().GetCreatedAt() == nil || h.GetMetadata().GetUpdatedAt() != nil {
				t.Errorf("hit %d: %s %v, want %s with created_at only", i, h.GetData(), h.GetMetadata(), want)
			}
		}
		if got := renderPage(nil, pages[0].GetFacets(), pages[0].GetMeta()); got != "hits [] facets [t:red apple=1,red pear=1] found 2 pages 1 page 1/20" {
			t.Errorf("facets and meta: %s", got)
		}
	})
}
