package grpcapi_test

import (
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The numbers of the later fields in the generated messages of
// @tigrisdata/core 1.0.0-beta.21 (dist/proto/server/v1/api_pb.js), written
// out here rather than taken from the generated messages, so that a wrong
// number in api/proto fails.
const (
	fieldOptionsLimit    protowire.Number = 3 // UpdateRequestOptions, DeleteRequestOptions
	fieldSubscribeFilter protowire.Number = 4 // SubscribeRequest
	fieldReadSort        protowire.Number = 6 // ReadRequest
)

// withUnknown adds a field to m's encoding by its number, as a later
// client encodes it; the server reads it into the field of that number.
func withUnknown[M proto.Message](m M, num protowire.Number, value any) M {
	b := m.ProtoReflect().GetUnknown()
	switch v := value.(type) {
	case int64:
		b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), uint64(v))
	case string:
		b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), []byte(v))
	}
	m.ProtoReflect().SetUnknown(b)
	return m
}

// The fields later clients of the era add, which alpha.32's messages lack
// (update's and delete's limit, read's sort, subscribe's filter), are
// read; @tigrisdata/core's updateOne and deleteOne depend on the limit
// (tests/clienttest runs the client itself).
func TestLaterClientsFields(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ name, schema string }{
			{"users", `{"title":"users","properties":{"id":{"type":"integer"},"age":{"type":"integer"}},"primary_key":["id"]}`},
			{"orders", `{"title":"orders","collection_type":"messages","properties":{"n":{"type":"integer"}}}`},
		} {
			if _, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: c.name, Schema: []byte(c.schema)}); err != nil {
				t.Fatal(err)
			}
		}
		docs := [][]byte{[]byte(`{"id":1,"age":5}`), []byte(`{"id":2,"age":5}`), []byte(`{"id":3,"age":5}`), []byte(`{"id":4,"age":9}`)}
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: docs}); err != nil {
			t.Fatal(err)
		}
		read := func(req *api.ReadRequest) string {
			t.Helper()
			st, err := s.rpc.Read(ctx(t), req)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for {
				r, err := st.Recv()
				if err == io.EOF {
					return strings.Join(out, " ")
				}
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(r.Data))
			}
		}

		// Update with limit 1: the first match in primary-key order.
		upd, err := s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "db1", Collection: "users", Filter: []byte(`{"age":5}`), Fields: []byte(`{"$set":{"age":6}}`),
			Options: withUnknown(&api.UpdateRequestOptions{}, fieldOptionsLimit, int64(1))})
		if err != nil || upd.ModifiedCount != 1 {
			t.Fatalf("update with limit 1: %v %v", upd, err)
		}
		// Delete with limit 1 (of ids 2 and 3, 2 goes).
		if _, err := s.rpc.Delete(ctx(t), &api.DeleteRequest{Project: "db1", Collection: "users", Filter: []byte(`{"age":5}`),
			Options: withUnknown(&api.DeleteRequestOptions{}, fieldOptionsLimit, int64(1))}); err != nil {
			t.Fatal(err)
		}
		// Read sorted by age, descending.
		got := read(withUnknown(&api.ReadRequest{Project: "db1", Collection: "users", Filter: []byte(`{}`)}, fieldReadSort, `[{"age":"$desc"}]`))
		if want := `{"id":4,"age":9} {"id":1,"age":6} {"id":3,"age":5}`; got != want {
			t.Errorf("after update and delete with limit 1, sorted by age descending: %s, want %s", got, want)
		}

		// Subscribe with a filter.
		sub, err := s.rpc.Subscribe(ctx(t), withUnknown(&api.SubscribeRequest{Db: "db1", Collection: "orders"}, fieldSubscribeFilter, `{"n":{"$gt":1}}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sub.Header(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.Publish(ctx(t), &api.PublishRequest{Db: "db1", Collection: "orders", Messages: [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`), []byte(`{"n":3}`)}}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`{"n":2}`, `{"n":3}`} {
			m, err := sub.Recv()
			if err != nil || string(m.Message) != want {
				t.Fatalf("subscribe with a filter: %v %s, want %s", err, m.GetMessage(), want)
			}
		}
	})
}
