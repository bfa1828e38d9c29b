package grpcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The 2023 document calls over gRPC (Count, Explain, Import and the index
// builds), on each engine: their answers, and the errors of a missing
// collection or database and of a filter that is not one.

// withPeople creates db1 with a people collection of five documents, two
// of them aged 30.
func withPeople(t *testing.T, s *server) {
	t.Helper()
	if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
		t.Fatal(err)
	}
	createColl(t, s, "db1", "people", `{"title":"people","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"},
		"address":{"type":"object","properties":{"city":{"type":"string"}}},"tags":{"type":"array","items":{"type":"string"}}}}`)
	insertDocs(t, s, "db1", "people", `{"id":1,"name":"ann","age":30,"address":{"city":"Oslo"}}`, `{"id":2,"name":"bob","age":41}`,
		`{"id":3,"name":"cy","age":30}`, `{"id":4,"name":"dee","age":25}`, `{"id":5,"name":"Ann","age":52}`)
}

func TestCountOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withPeople(t, s)
		for filter, want := range map[string]int64{`{}`: 5, `{"age":30}`: 2, `{"age":{"$gt":29}}`: 4, `{"name":"ann"}`: 1, `{"age":99}`: 0,
			`{"$or":[{"age":25},{"name":"bob"}]}`: 2} {
			res, err := s.rpc.Count(ctx(t), &api.CountRequest{Project: "db1", Collection: "people", Filter: []byte(filter)})
			if err != nil {
				t.Fatalf("count %s: %v", filter, err)
			}
			if res.Count != want {
				t.Errorf("count %s = %d, want %d", filter, res.Count, want)
			}
		}
		// In a transaction, the count sees the transaction's own writes.
		begin, err := s.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "db1"})
		if err != nil {
			t.Fatal(err)
		}
		tx := metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin)
		if _, err := s.rpc.Insert(tx, &api.InsertRequest{Project: "db1", Collection: "people", Documents: [][]byte{[]byte(`{"id":6,"age":30}`)}}); err != nil {
			t.Fatal(err)
		}
		for c, want := range map[string]int64{"in the transaction": 3, "outside it": 2} {
			call := ctx(t)
			if c == "in the transaction" {
				call = tx
			}
			if res, err := s.rpc.Count(call, &api.CountRequest{Project: "db1", Collection: "people", Filter: []byte(`{"age":30}`)}); err != nil || res.Count != want {
				t.Errorf("count %s: %v (%v), want %d", c, res, err, want)
			}
		}
		if _, err := s.rpc.RollbackTransaction(tx, &api.RollbackTransactionRequest{Project: "db1"}); err != nil {
			t.Fatal(err)
		}

		count := func(db, coll, filter string) error {
			_, err := s.rpc.Count(ctx(t), &api.CountRequest{Project: db, Collection: coll, Filter: []byte(filter)})
			return err
		}
		wantCode(t, "unknown collection", count("db1", "nope", `{}`), codes.NotFound)
		wantCode(t, "unknown database", count("nope", "people", `{}`), codes.NotFound)
		wantCode(t, "a filter that is not an object", count("db1", "people", `[1]`), codes.InvalidArgument)
		wantCode(t, "an unknown operator", count("db1", "people", `{"age":{"$near":3}}`), codes.InvalidArgument)
		wantCode(t, "a filter that is not JSON", count("db1", "people", `{"age":`), codes.InvalidArgument)
	})
}

func TestExplainOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withPeople(t, s)
		for _, tc := range []struct {
			filter, sort string
			readType     string
			matched      int64
		}{
			{`{"age":30}`, "", "secondary index", 2},
			{`{"id":3}`, "", "primary index", 1},
			{`{}`, `[{"age":"$desc"}]`, "", 5},
		} {
			res, err := s.rpc.Explain(ctx(t), &api.ReadRequest{Project: "db1", Collection: "people", Filter: []byte(tc.filter), Sort: []byte(tc.sort)})
			if err != nil {
				t.Fatalf("explain %s: %v", tc.filter, err)
			}
			if res.Collection != "people" || res.Filter != tc.filter || res.Sorting != tc.sort || res.Plan == "" || res.Matched != tc.matched || res.KeysRead <= 0 ||
				(tc.readType != "" && res.ReadType != tc.readType) || (res.ReadType != "primary index" && res.ReadType != "secondary index") {
				t.Errorf("explain %s %s: %v", tc.filter, tc.sort, res)
			}
			// The plan is the one HTTP's explain reports for the same read.
			body, _ := json.Marshal(map[string]json.RawMessage{"filter": json.RawMessage(tc.filter), "sort": json.RawMessage(orNull(tc.sort))})
			code, out, _ := httpDo(t, s.http1, "POST", s.base+"/v1/databases/db1/collections/people/documents/explain", string(body))
			var overHTTP struct {
				Plan string `json:"plan"`
			}
			if code != 200 || json.Unmarshal([]byte(out), &overHTTP) != nil || overHTTP.Plan != res.Plan {
				t.Errorf("explain %s over HTTP: %d %s; over gRPC plan %q", tc.filter, code, out, res.Plan)
			}
		}
		// An index plan names the index's ranges.
		res, err := s.rpc.Explain(ctx(t), &api.ReadRequest{Project: "db1", Collection: "people", Filter: []byte(`{"age":30}`)})
		if err != nil || !strings.Contains(res.Plan, "age = 30") {
			t.Errorf("explain of age 30: %v (%v)", res, err)
		}

		explain := func(db, coll, filter string) error {
			_, err := s.rpc.Explain(ctx(t), &api.ReadRequest{Project: db, Collection: coll, Filter: []byte(filter)})
			return err
		}
		wantCode(t, "unknown collection", explain("db1", "nope", `{}`), codes.NotFound)
		wantCode(t, "unknown database", explain("nope", "people", `{}`), codes.NotFound)
		wantCode(t, "a filter that is not an object", explain("db1", "people", `"x"`), codes.InvalidArgument)
		wantCode(t, "an unknown operator", explain("db1", "people", `{"age":{"$near":3}}`), codes.InvalidArgument)
		_, err = s.rpc.Explain(ctx(t), &api.ReadRequest{Project: "db1", Collection: "people", Filter: []byte(`{}`), Sort: []byte(`[{"nope":"$asc"}]`)})
		wantCode(t, "a sort on no field", err, codes.InvalidArgument)
	})
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func TestImportOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withPeople(t, s)

		// Into a collection that does not exist: created from the documents,
		// with the key and the generated field asked for.
		res, err := s.rpc.Import(ctx(t), &api.ImportRequest{Project: "db1", Collection: "cities", CreateCollection: true,
			PrimaryKey: []string{"code"}, Autogenerated: []string{"code"},
			Documents: [][]byte{[]byte(`{"name":"Oslo","pop":700000}`), []byte(`{"name":"Bergen","pop":290000,"coast":true}`)}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != "inserted" || len(res.Keys) != 2 || res.Metadata.GetCreatedAt() == nil {
			t.Fatalf("import: %v", res)
		}
		var key map[string]any
		if err := json.Unmarshal(res.Keys[0], &key); err != nil || key["code"] == nil {
			t.Errorf("an import's key %s: want the generated code", res.Keys[0])
		}
		if got := readColl(t, s, "db1", "cities", `{"coast":true}`, nil); len(got) != 1 || !strings.Contains(got[0], `"Bergen"`) {
			t.Errorf("the imported cities with a coast: %v", got)
		}
		desc, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "db1", Collection: "cities"})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"primary_key":["code"]`, `"pop"`, `"coast"`} {
			if !strings.Contains(compact(t, desc.Schema), want) {
				t.Errorf("the inferred schema %s lacks %s", desc.Schema, want)
			}
		}

		// Into an existing collection: a new field widens its schema.
		if _, err := s.rpc.Import(ctx(t), &api.ImportRequest{Project: "db1", Collection: "people",
			Documents: [][]byte{[]byte(`{"id":7,"name":"eve","age":33,"email":"eve@example.com"}`)}}); err != nil {
			t.Fatal(err)
		}
		if got := readColl(t, s, "db1", "people", `{"email":"eve@example.com"}`, nil); len(got) != 1 {
			t.Errorf("the imported person read by the new field: %v", got)
		}

		imp := func(coll string, create bool, docs ...string) error {
			req := &api.ImportRequest{Project: "db1", Collection: coll, CreateCollection: create}
			for _, d := range docs {
				req.Documents = append(req.Documents, []byte(d))
			}
			_, err := s.rpc.Import(ctx(t), req)
			return err
		}
		wantCode(t, "a missing collection not to be created", imp("nope", false, `{"a":1}`), codes.NotFound)
		wantCode(t, "no documents", imp("people", false), codes.InvalidArgument)
		wantCode(t, "a document that is not JSON", imp("people", false, `{"id":`), codes.InvalidArgument)
		wantCode(t, "a field of two types", imp("mixed", true, `{"id":1,"v":1}`, `{"id":2,"v":"x"}`), codes.InvalidArgument)
		_, err = s.rpc.Import(ctx(t), &api.ImportRequest{Project: "nope", Collection: "things", CreateCollection: true, Documents: [][]byte{[]byte(`{"a":1}`)}})
		wantCode(t, "unknown database", err, codes.NotFound)
		// A refused import leaves nothing: no collection, no document.
		list, err := s.rpc.ListCollections(ctx(t), &api.ListCollectionsRequest{Project: "db1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Collections {
			if c.Collection == "mixed" || c.Collection == "nope" {
				t.Errorf("a refused import created collection %s", c.Collection)
			}
		}
		if got := readColl(t, s, "db1", "people", `{}`, nil); len(got) != 6 {
			t.Errorf("people after the refused imports: %d documents, want 6", len(got))
		}
	})
}

func TestIndexBuildsOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withPeople(t, s)
		res, err := s.rpc.BuildCollectionIndex(ctx(t), &api.BuildCollectionIndexRequest{Project: "db1", Collection: "people"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i, x := range res.Indexes {
			// The two system indexes first, without fields.
			if system := i < 2; x.State != "INDEX ACTIVE" || system && len(x.Fields) != 0 || !system && (len(x.Fields) != 1 || x.Fields[0].Name != x.Name) {
				t.Errorf("index %v", x)
			}
			names = append(names, x.Name)
		}
		slices.Sort(names[2:])
		wantStrings(t, "the indexes", names, []string{"_tigris_created_at", "_tigris_updated_at", "address.city", "age", "id", "name", "tags"})

		search, err := s.rpc.BuildSearchIndex(ctx(t), &api.BuildCollectionSearchIndexRequest{Project: "db1", Collection: "people"})
		if err != nil || search.Status != "success" {
			t.Errorf("search index build: %v (%v)", search, err)
		}

		_, err = s.rpc.BuildCollectionIndex(ctx(t), &api.BuildCollectionIndexRequest{Project: "db1", Collection: "nope"})
		wantCode(t, "collection index of an unknown collection", err, codes.NotFound)
		_, err = s.rpc.BuildSearchIndex(ctx(t), &api.BuildCollectionSearchIndexRequest{Project: "nope", Collection: "people"})
		wantCode(t, "search index of an unknown database", err, codes.NotFound)
		_, err = s.rpc.BuildSearchIndex(ctx(t), &api.BuildCollectionSearchIndexRequest{Project: "db1"})
		wantCode(t, "search index of no collection", err, codes.InvalidArgument)
	})
}

// The request log has a line for each of the 2023 document calls, with
// its method and, for a failure, its code, as for every other call (a
// success's line is at debug level, and has no code).
func TestRequestLogSees2023Calls(t *testing.T) {
	logs := &syncBuffer{}
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	withPeople(t, s)
	for _, tc := range []struct {
		method, code string
		call         func(id string) error
	}{
		{"Count", "OK", func(id string) error {
			_, err := s.rpc.Count(withID(t, id), &api.CountRequest{Project: "db1", Collection: "people", Filter: []byte(`{}`)})
			return err
		}},
		{"Count", "INVALID_ARGUMENT", func(id string) error {
			_, err := s.rpc.Count(withID(t, id), &api.CountRequest{Project: "db1", Collection: "people", Filter: []byte(`[]`)})
			return err
		}},
		{"Explain", "OK", func(id string) error {
			_, err := s.rpc.Explain(withID(t, id), &api.ReadRequest{Project: "db1", Collection: "people", Filter: []byte(`{"age":30}`)})
			return err
		}},
		{"Explain", "NOT_FOUND", func(id string) error {
			_, err := s.rpc.Explain(withID(t, id), &api.ReadRequest{Project: "db1", Collection: "nope", Filter: []byte(`{}`)})
			return err
		}},
		{"Import", "OK", func(id string) error {
			_, err := s.rpc.Import(withID(t, id), &api.ImportRequest{Project: "db1", Collection: "people", Documents: [][]byte{[]byte(`{"id":8}`)}})
			return err
		}},
		{"BuildCollectionIndex", "NOT_FOUND", func(id string) error {
			_, err := s.rpc.BuildCollectionIndex(withID(t, id), &api.BuildCollectionIndexRequest{Project: "nope", Collection: "people"})
			return err
		}},
		{"BuildSearchIndex", "OK", func(id string) error {
			_, err := s.rpc.BuildSearchIndex(withID(t, id), &api.BuildCollectionSearchIndexRequest{Project: "db1", Collection: "people"})
			return err
		}},
	} {
		id := "log-" + tc.method + "-" + tc.code
		if err := tc.call(id); (err == nil) != (tc.code == "OK") {
			t.Errorf("%s: %v, want %s", tc.method, err, tc.code)
		}
		l := waitLogLine(t, logs, id)
		if l["method"] != "/tigrisdata.v1.Tigris/"+tc.method || l["transport"] != "grpc" || (tc.code != "OK" && l["code"] != tc.code) || (tc.code == "OK" && l["code"] != nil) {
			t.Errorf("%s's log line %v, want its method and code %s", tc.method, l, tc.code)
		}
	}
}

// wantCode fails t unless err is a gRPC error of code.
func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %v", what, code)
		return
	}
	if got, msg, _ := rpcError(t, err); got != code {
		t.Errorf("%s: %v %q, want %v", what, got, msg, code)
	}
}

// withID is a call's context with a request id of the client's.
func withID(t *testing.T, id string) context.Context {
	return metadata.AppendToOutgoingContext(ctx(t), "x-request-id", id)
}

// compact is a JSON text without its spaces.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return b.String()
}
