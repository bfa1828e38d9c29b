package grpcapi_test

import (
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The additions of late 2022 that need no field alpha.32's messages lack
// (names with a dash, integers as strings inside documents, filters on
// arrays of primitives), over gRPC with the requests of the HTTP suite
// (apitest/late2022_test.go): the documents and filters are JSON bytes,
// read by the same operations.

// readColl reads a collection's documents matching filter (with options,
// if any) to the end of the stream.
func readColl(t *testing.T, s *server, db, coll, filter string, opts *api.ReadRequestOptions) []string {
	t.Helper()
	st, err := s.rpc.Read(ctx(t), &api.ReadRequest{Project: db, Collection: coll, Filter: []byte(filter), Options: opts})
	if err != nil {
		t.Fatalf("read %s %s: %v", coll, filter, err)
	}
	out := []string{}
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("read %s %s: %v", coll, filter, err)
		}
		out = append(out, string(r.Data))
	}
}

func createColl(t *testing.T, s *server, db, coll, schema string) {
	t.Helper()
	if _, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: db, Collection: coll, Schema: []byte(schema)}); err != nil {
		t.Fatalf("create collection %s.%s: %v", db, coll, err)
	}
}

func insertDocs(t *testing.T, s *server, db, coll string, docs ...string) []string {
	t.Helper()
	req := &api.InsertRequest{Project: db, Collection: coll}
	for _, d := range docs {
		req.Documents = append(req.Documents, []byte(d))
	}
	res, err := s.rpc.Insert(ctx(t), req)
	if err != nil {
		t.Fatalf("insert into %s.%s: %v", db, coll, err)
	}
	var keys []string
	for _, k := range res.Keys {
		keys = append(keys, string(k))
	}
	return keys
}

func wantStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func wantRPCError(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	if got, gotMsg, _ := rpcError(t, err); got != code || gotMsg != msg {
		t.Errorf("error %v %q, want %v %q", got, gotMsg, code, msg)
	}
}

func TestNamesWithDashOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "test-coll"}); err != nil {
			t.Fatal(err)
		}
		createColl(t, s, "test-coll", "test-coll", `{"title":"test-coll","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`)
		wantStrings(t, "keys", insertDocs(t, s, "test-coll", "test-coll", `{"id":1}`), []string{`{"id":1}`})
		wantStrings(t, "documents", readColl(t, s, "test-coll", "test-coll", `{}`, nil), []string{`{"id":1}`})
		list, err := s.rpc.ListCollections(ctx(t), &api.ListCollectionsRequest{Project: "test-coll"})
		if err != nil || len(list.Collections) != 1 || list.Collections[0].Collection != "test-coll" {
			t.Errorf("list collections: %v %v", list, err)
		}
		desc, err := describeDatabase2022(ctx(t), s.conn, "test-coll")
		if err != nil || desc.Db != "test-coll" || len(desc.Collections) != 1 || desc.Collections[0].Collection != "test-coll" {
			t.Errorf("describe database: %v %v", desc, err)
		}
		// A dash is not allowed first, as over HTTP.
		_, err = s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "-coll"})
		wantRPCError(t, err, codes.InvalidArgument, "invalid database name '-coll': a name starts with a letter, then has letters, digits, '_' or '-', 2 to 128 characters in all")
		_, err = s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "test-coll", Collection: "-coll",
			Schema: []byte(`{"title":"-coll","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`)})
		wantRPCError(t, err, codes.InvalidArgument, "invalid collection name '-coll': a name starts with a letter, then has letters, digits, '_' or '-', 2 to 128 characters in all")
		if _, err := s.rpc.DropCollection(ctx(t), &api.DropCollectionRequest{Project: "test-coll", Collection: "test-coll"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.DropDatabase(ctx(t), &api.DropDatabaseRequest{Db: "test-coll"}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestIntegersAsStringsOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
			t.Fatal(err)
		}
		createColl(t, s, "db1", "nums", `{"title":"nums","properties":{
			"pkey_int":{"type":"integer"},"int_value":{"type":"integer"},"small":{"type":"integer","format":"int32"},
			"obj":{"type":"object","properties":{"n":{"type":"integer"}}},"arr":{"type":"array","items":{"type":"integer"}}},
			"primary_key":["pkey_int"]}`)

		// Beyond float64's exact range, as strings: stored and returned as
		// the exact numbers, the key included.
		keys := insertDocs(t, s, "db1", "nums", `{"pkey_int":"9223372036854775799","int_value":"9223372036854775800"}`)
		wantStrings(t, "keys", keys, []string{`{"pkey_int":9223372036854775799}`})
		insertDocs(t, s, "db1", "nums", `{"pkey_int":1,"small":"-5","obj":{"n":"12"},"arr":["1",2,"-3"]}`)
		wantStrings(t, "stored as numbers", readColl(t, s, "db1", "nums", `{}`, nil), []string{
			`{"pkey_int":1,"small":-5,"obj":{"n":12},"arr":[1,2,-3]}`,
			`{"pkey_int":9223372036854775799,"int_value":9223372036854775800}`})

		// Replace and $set alike; the key as a string finds the document.
		if _, err := s.rpc.Replace(ctx(t), &api.ReplaceRequest{Project: "db1", Collection: "nums",
			Documents: [][]byte{[]byte(`{"pkey_int":"1","int_value":"-9223372036854775808"}`)}}); err != nil {
			t.Fatal(err)
		}
		upd, err := s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "db1", Collection: "nums", Filter: []byte(`{"pkey_int":"9223372036854775799"}`),
			Fields: []byte(`{"$set":{"int_value":"7","obj":{"n":"8"},"arr":["9"]}}`)})
		if err != nil || upd.ModifiedCount != 1 {
			t.Fatalf("update by a key given as a string: %v %v", upd, err)
		}
		wantStrings(t, "after replace and update", readColl(t, s, "db1", "nums", `{}`, nil), []string{
			`{"pkey_int":1,"int_value":-9223372036854775808}`,
			`{"pkey_int":9223372036854775799,"int_value":7,"obj":{"n":8},"arr":[9]}`})
		wantStrings(t, "filter", readColl(t, s, "db1", "nums", `{"int_value":{"$lt":"0"}}`, nil), []string{
			`{"pkey_int":1,"int_value":-9223372036854775808}`})

		// Strings that are not such integers are refused, with HTTP's
		// message; nothing is written.
		const prefix = "json schema validation failed for field "
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "nums", Documents: [][]byte{[]byte(`{"pkey_int":2,"int_value":"9223372036854775808"}`)}})
		wantRPCError(t, err, codes.InvalidArgument, prefix+"'int_value' reason ''9223372036854775808' is not valid 'int64''")
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "nums", Documents: [][]byte{[]byte(`{"pkey_int":2,"small":"2147483648"}`)}})
		wantRPCError(t, err, codes.InvalidArgument, prefix+"'small' reason ''2147483648' is not valid 'int32''")
		_, err = s.rpc.Replace(ctx(t), &api.ReplaceRequest{Project: "db1", Collection: "nums", Documents: [][]byte{[]byte(`{"pkey_int":1,"obj":{"n":"1e3"}}`)}})
		wantRPCError(t, err, codes.InvalidArgument, prefix+"'obj/n' reason 'expected integer or null, but got string'")
		_, err = s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "db1", Collection: "nums", Filter: []byte(`{"pkey_int":1}`), Fields: []byte(`{"$set":{"int_value":"x"}}`)})
		wantRPCError(t, err, codes.InvalidArgument, prefix+"'int_value' reason 'expected integer or null, but got string'")
		wantStrings(t, "after the refused writes", readColl(t, s, "db1", "nums", `{}`, nil), []string{
			`{"pkey_int":1,"int_value":-9223372036854775808}`,
			`{"pkey_int":9223372036854775799,"int_value":7,"obj":{"n":8},"arr":[9]}`})
	})
}

func TestArrayFiltersOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
			t.Fatal(err)
		}
		createColl(t, s, "db1", "places", `{"title":"places","properties":{
			"id":{"type":"integer"},"string_arr":{"type":"array","items":{"type":"string"}},
			"nums":{"type":"array","items":{"type":"number"}},
			"obj":{"type":"object","properties":{"arr_primitive":{"type":"array","items":{"type":"integer"}}}}},
			"primary_key":["id"]}`)
		insertDocs(t, s, "db1", "places",
			`{"id":1,"string_arr":["paris","london"],"nums":[1.5,10],"obj":{"arr_primitive":[1,2]}}`,
			`{"id":2,"string_arr":["Paris"],"nums":[3],"obj":{"arr_primitive":[2,3]}}`,
			`{"id":3,"string_arr":["london","paris"],"nums":[],"obj":{"arr_primitive":[]}}`)
		ci := &api.ReadRequestOptions{Collation: &api.Collation{Case: "ci"}}
		for _, tc := range []struct {
			filter string
			opts   *api.ReadRequestOptions
			want   string
		}{
			{`{"string_arr":"paris"}`, nil, "1 3"},
			{`{"string_arr":"paris"}`, ci, "1 2 3"},
			{`{"string_arr":["paris","london"]}`, nil, "1"},
			{`{"string_arr":["paris"]}`, nil, ""},
			{`{"obj.arr_primitive":2}`, nil, "1 2"},
			{`{"obj.arr_primitive":[]}`, nil, "3"},
			{`{"nums":{"$gt":5}}`, nil, "1"},
			{`{"$or":[{"string_arr":"london"},{"nums":3}]}`, nil, "1 2 3"},
		} {
			var ids []string
			for _, d := range readColl(t, s, "db1", "places", tc.filter, tc.opts) {
				ids = append(ids, strings.SplitN(strings.TrimPrefix(d, `{"id":`), ",", 2)[0])
			}
			if got := strings.Join(ids, " "); got != tc.want {
				t.Errorf("filter %s (collation %v): ids %q, want %q", tc.filter, tc.opts.GetCollation(), got, tc.want)
			}
		}
		// An update and a delete find documents by an array element too.
		upd, err := s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "db1", Collection: "places", Filter: []byte(`{"string_arr":"london"}`),
			Fields: []byte(`{"$set":{"nums":[0]}}`)})
		if err != nil || upd.ModifiedCount != 2 {
			t.Fatalf("update by an array element: %v %v", upd, err)
		}
		if _, err := s.rpc.Delete(ctx(t), &api.DeleteRequest{Project: "db1", Collection: "places", Filter: []byte(`{"obj.arr_primitive":3}`)}); err != nil {
			t.Fatal(err)
		}
		wantStrings(t, "after the update and the delete", readColl(t, s, "db1", "places", `{}`, nil), []string{
			`{"id":1,"string_arr":["paris","london"],"nums":[0],"obj":{"arr_primitive":[1,2]}}`,
			`{"id":3,"string_arr":["london","paris"],"nums":[0],"obj":{"arr_primitive":[]}}`})
	})
}
