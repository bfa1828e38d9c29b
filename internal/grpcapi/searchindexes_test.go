package grpcapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"sort"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The Search service over gRPC: the same calls as HTTP's search index
// routes, per-document statuses with the original's numbers, and a
// search that finds every document written before it.
func TestSearchIndexService(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		c := ctx(t)
		sc := api.NewSearchClient(s.conn)
		if _, err := s.rpc.CreateProject(c, &api.CreateProjectRequest{Project: "shop"}); err != nil {
			t.Fatal(err)
		}
		schema := `{"title":"items","properties":{"name":{"type":"string"},"price":{"type":"integer","facet":true},"v":{"type":"array","format":"vector","dimensions":2}}}`
		created, err := sc.CreateOrUpdateIndex(c, &api.CreateOrUpdateIndexRequest{Project: "shop", Name: "items", Schema: []byte(schema)})
		if err != nil || created.Status != "created" {
			t.Fatalf("create: %v %v", created, err)
		}
		_, err = sc.CreateOrUpdateIndex(c, &api.CreateOrUpdateIndexRequest{Project: "shop", Name: "items", Schema: []byte(schema), OnlyCreate: true})
		if code, msg, _ := rpcError(t, err); code != codes.AlreadyExists || msg != "search index already exists 'items'" {
			t.Errorf("only_create: %v %q", code, msg)
		}
		got, err := sc.GetIndex(c, &api.GetIndexRequest{Project: "shop", Name: "items"})
		if err != nil || got.Index.Name != "items" || string(got.Index.Schema) != schema {
			t.Fatalf("get index: %v %v", got, err)
		}
		list, err := sc.ListIndexes(c, &api.ListIndexesRequest{Project: "shop"})
		if err != nil || len(list.Indexes) != 1 {
			t.Fatalf("list: %v %v", list, err)
		}
		_, err = sc.GetIndex(c, &api.GetIndexRequest{Project: "shop", Name: "nope"})
		if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "search index not found 'nope'" {
			t.Errorf("unknown index: %v %q", code, msg)
		}
		_, err = sc.ListIndexes(c, &api.ListIndexesRequest{Project: "ghost"})
		if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "project doesn't exist 'ghost'" {
			t.Errorf("unknown project: %v %q", code, msg)
		}

		docs := [][]byte{[]byte(`{"id":"a","name":"red apple","price":3,"v":[1,0]}`), []byte(`{"id":"b","name":"green apple","price":5,"v":[0,1,2]}`),
			[]byte(`{"id":"c","name":"red cherry","price":7}`)}
		res, err := sc.Create(c, &api.CreateDocumentRequest{Project: "shop", Index: "items", Documents: docs})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Status) != 3 || res.Status[0].Error != nil || res.Status[2].Error != nil ||
			res.Status[1].Id != "b" || res.Status[1].Error == nil || res.Status[1].Error.Code != 400 {
			t.Fatalf("statuses: %v", res.Status)
		}
		again, err := sc.Create(c, &api.CreateDocumentRequest{Project: "shop", Index: "items", Documents: docs[:1]})
		if err != nil || again.Status[0].Error == nil || again.Status[0].Error.Code != 409 || again.Status[0].Error.Message != "A document with id 'a' already exists." {
			t.Fatalf("duplicate: %v %v", again, err)
		}
		upd, err := sc.Update(c, &api.UpdateDocumentRequest{Project: "shop", Index: "items", Documents: [][]byte{[]byte(`{"id":"c","price":8}`)}})
		if err != nil || upd.Status[0].Error != nil {
			t.Fatalf("update: %v %v", upd, err)
		}
		read, err := sc.Get(c, &api.GetDocumentRequest{Project: "shop", Index: "items", Ids: []string{"c", "b"}})
		if err != nil || len(read.Documents) != 2 || string(read.Documents[0].Data) != `{"id":"c","name":"red cherry","price":8}` || read.Documents[1].Data != nil {
			t.Fatalf("get: %v %v", read, err)
		}

		st, err := sc.Search(c, &api.SearchIndexRequest{Project: "shop", Index: "items", Q: "red", Facet: []byte(`{"price":{"size":10}}`), Sort: []byte(`[{"price":"$desc"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		var found int64
		for {
			page, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			found = page.Meta.Found
			if f := page.Facets["price"]; f == nil || f.Stats.GetCount() != 2 || f.Stats.GetSum() != 11 {
				t.Errorf("facet: %v", page.Facets)
			}
			for _, h := range page.Hits {
				var d struct{ ID string }
				if err := json.Unmarshal(h.Data, &d); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, d.ID)
			}
		}
		if found != 2 || len(ids) != 2 || ids[0] != "c" || ids[1] != "a" {
			t.Errorf("search: found %d, ids %v", found, ids)
		}
		// The one document with a vector is the nearest, at its cosine
		// distance (1 - cos 45°), in the hit's match; a wrong query is
		// INVALID_ARGUMENT.
		vec, err := sc.Search(c, &api.SearchIndexRequest{Project: "shop", Index: "items", Vector: []byte(`{"v":[1,1]}`), Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		vp, err := vec.Recv()
		if err != nil || len(vp.Hits) != 1 || vp.Hits[0].Metadata.GetMatch() == nil ||
			math.Abs(vp.Hits[0].Metadata.GetMatch().GetVectorDistance()-(1-math.Sqrt2/2)) > 1e-6 {
			t.Fatalf("vector search: %v %v", vp, err)
		}
		vec, err = sc.Search(c, &api.SearchIndexRequest{Project: "shop", Index: "items", Vector: []byte(`{"v":[1,0,0]}`)})
		if err == nil {
			_, err = vec.Recv()
		}
		if code, msg, _ := rpcError(t, err); code != codes.InvalidArgument || msg != "the query vector has 3 dimensions, field 'v' has 2" {
			t.Errorf("vector of 3 dimensions: %v %q", code, msg)
		}

		del, err := sc.Delete(c, &api.DeleteDocumentRequest{Project: "shop", Index: "items", Ids: []string{"a", "zz"}})
		if err != nil || del.Status[0].Error != nil || del.Status[1].Error.GetCode() != 404 {
			t.Fatalf("delete: %v %v", del, err)
		}
		n, err := sc.DeleteByQuery(c, &api.DeleteByQueryRequest{Project: "shop", Index: "items", Filter: []byte(`{"price":{"$gte":8}}`)})
		if err != nil || n.Count != 1 {
			t.Fatalf("delete by query: %v %v", n, err)
		}
		left, err := sc.Get(c, &api.GetDocumentRequest{Project: "shop", Index: "items", Ids: []string{"a", "c"}})
		if err != nil || left.Documents[0].Data != nil || left.Documents[1].Data != nil {
			t.Fatalf("after deletes: %v %v", left, err)
		}
		if _, err := sc.CreateById(c, &api.CreateByIdRequest{Project: "shop", Index: "items", Id: "z", Document: []byte(`{"name":"zest"}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.DeleteIndex(c, &api.DeleteIndexRequest{Project: "shop", Name: "items"}); err != nil {
			t.Fatal(err)
		}
		list, err = sc.ListIndexes(c, &api.ListIndexesRequest{Project: "shop"})
		names := []string{}
		for _, i := range list.GetIndexes() {
			names = append(names, i.Name)
		}
		sort.Strings(names)
		if err != nil || len(names) != 0 {
			t.Errorf("after delete: %v %v", names, err)
		}
	})
}
