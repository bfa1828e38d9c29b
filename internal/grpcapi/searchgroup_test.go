package grpcapi_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// A search with group_by over gRPC answers the groups as the HTTP 2023
// path does: each page's group entries with their keys and hits, no
// ungrouped hits, found counting groups; pages over groups; a bad
// group_by is INVALID_ARGUMENT.
func TestSearchGroupByOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		var docs [][]byte
		for _, d := range []string{`{"id":1,"name":"ada"}`, `{"id":2,"name":"bob"}`, `{"id":3,"name":"ada"}`, `{"id":4}`, `{"id":5,"name":"ada"}`} {
			docs = append(docs, []byte(d))
		}
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: docs}); err != nil {
			t.Fatal(err)
		}
		search := func(req *api.SearchRequest) ([]string, error) {
			req.Project, req.Collection = "db1", "users"
			st, err := s.rpc.Search(ctx(t), req)
			if err != nil {
				return nil, err
			}
			var pages []string
			for {
				res, err := st.Recv()
				if errors.Is(err, io.EOF) {
					return pages, nil
				}
				if err != nil {
					return nil, err
				}
				if len(res.GetHits()) != 0 {
					t.Errorf("a grouped page with %d ungrouped hits", len(res.GetHits()))
				}
				var groups []string
				for _, g := range res.GetGroup() {
					var ids []string
					for _, h := range g.GetHits() {
						ids = append(ids, strings.TrimSuffix(strings.SplitN(string(h.GetData()), ",", 2)[0][len(`{"id":`):], "}"))
						if h.GetMetadata().GetCreatedAt() == nil {
							t.Errorf("a group's hit without created_at")
						}
					}
					groups = append(groups, strings.Join(g.GetGroupKeys(), "|")+":"+strings.Join(ids, ","))
				}
				pages = append(pages, strings.Join(groups, " ")+" found "+itoa(res.GetMeta().GetFound())+" pages "+itoa(int64(res.GetMeta().GetTotalPages())))
			}
		}
		got, err := search(&api.SearchRequest{GroupBy: []byte(`{"fields":["name"],"limit":2}`), Sort: []byte(`[{"id":"$desc"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		if want := "ada:5,3 :4 bob:2 found 3 pages 1"; len(got) != 1 || got[0] != want {
			t.Errorf("grouped: %q, want %q", got, want)
		}
		got, err = search(&api.SearchRequest{GroupBy: []byte(`{"fields":["name"]}`), Sort: []byte(`[{"id":"$asc"}]`), PageSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"ada:1,3,5 bob:2 found 3 pages 2", ":4 found 3 pages 2"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("pages of groups: %q, want %q", got, want)
		}
		_, err = search(&api.SearchRequest{GroupBy: []byte(`{"fields":["nope"]}`)})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "group_by field 'nope' is not in the collection's schema") {
			t.Errorf("unknown field: %v, want INVALID_ARGUMENT", err)
		}
	})
}
