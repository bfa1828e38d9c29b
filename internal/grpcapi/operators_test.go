package grpcapi_test

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The filter and update operators of issue 36 over gRPC, on both
// backends: the same ops code as HTTP, reached through the published
// messages' bytes.
func TestOperatorsOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{
			[]byte(`{"id":1,"name":"Alice Smith"}`), []byte(`{"id":2,"name":"bob"}`), []byte(`{"id":3,"name":"Carol Smith"}`)}}); err != nil {
			t.Fatal(err)
		}
		for filter, want := range map[string][]string{
			`{"id":{"$in":[3,1]}}`:                        {`{"id":1,"name":"Alice Smith"}`, `{"id":3,"name":"Carol Smith"}`},
			`{"name":{"$regex":"^[A-Z]"},"id":{"$ne":1}}`: {`{"id":3,"name":"Carol Smith"}`},
			`{"name":{"$not":"Smith"}}`:                   {`{"id":2,"name":"bob"}`},
		} {
			if got := readAll(t, s, ctx(t), filter); !slices.Equal(got, want) {
				t.Errorf("read %s: %v, want %v", filter, got, want)
			}
		}
		if _, err := s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "db1", Collection: "users", Filter: []byte(`{"name":{"$contains":"Smith"}}`),
			Fields: []byte(`{"$set":{"name":"Smith"}}`)}); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, ctx(t), `{"name":"Smith"}`); len(got) != 2 {
			t.Errorf("after the update by $contains: %v, want two documents", got)
		}
		_, err := firstRecv(t, s, `{"name":{"$regex":"a("}}`)
		if code, msg, _ := rpcError(t, err); code != codes.InvalidArgument || msg == "" {
			t.Errorf("an invalid $regex: %v %q, want InvalidArgument", code, msg)
		}
		_, err = s.rpc.Update(ctx(t), &api.UpdateRequest{Project: "db1", Collection: "users", Filter: []byte(`{"id":1}`), Fields: []byte(`{"$divide":{"id":0}}`)})
		if code, _, _ := rpcError(t, err); code != codes.InvalidArgument {
			t.Errorf("an update refused ($divide of the key by 0): %v, want InvalidArgument", code)
		}
	})
}

// firstRecv opens a read with filter and returns its first message's error.
func firstRecv(t *testing.T, s *server, filter string) (*api.ReadResponse, error) {
	t.Helper()
	st, err := s.rpc.Read(ctx(t), &api.ReadRequest{Project: "db1", Collection: "users", Filter: []byte(filter)})
	if err != nil {
		return nil, err
	}
	return st.Recv()
}
