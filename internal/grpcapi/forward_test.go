package grpcapi_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// Over gRPC as over HTTP: a call of a transaction that another node holds
// is relayed to it, unary and streaming calls alike (the original's
// forwarding scenario: begin on one node, write and read on the other,
// commit there); a transaction of a node that is gone answers the
// original's errors for a lost session.
func TestForwardingOverGRPC(t *testing.T) {
	var data backendtest.Durable
	for _, b := range backendtest.All {
		if b.Name == "postgres" {
			data = b.Durable(t)
		}
	}
	named := func(id string) *server {
		return start(t, data.Open(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Sessions.Origin = id
			nc.Cluster.Lease = 500 * time.Millisecond
		}))
	}
	a, b := named("node-a"), named("node-b")
	withUsers(t, a)
	begin, err := a.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "db1"})
	if err != nil {
		t.Fatal(err)
	}
	tx := begin.TxCtx
	if tx.Origin != "node-a" {
		t.Fatalf("begin on node-a: origin %q", tx.Origin)
	}
	inTx := func() context.Context {
		return metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", tx.Id, "tigris-tx-origin", tx.Origin)
	}
	var header metadata.MD
	if _, err := b.rpc.Insert(inTx(), &api.InsertRequest{Project: "db1", Collection: "users",
		Documents: [][]byte{[]byte(`{"id":1,"name":"ann"}`), []byte(`{"id":2,"name":"bob"}`)}}, grpc.Header(&header)); err != nil {
		t.Fatalf("insert on node-b: %v", err)
	}
	if ids := header.Get("x-request-id"); len(ids) != 1 {
		t.Errorf("a relayed call's request ids %v, want one", ids)
	}
	if _, err := b.rpc.Update(inTx(), &api.UpdateRequest{Project: "db1", Collection: "users", Filter: []byte(`{"id":2}`), Fields: []byte(`{"$set":{"name":"bea"}}`)}); err != nil {
		t.Fatalf("update on node-b: %v", err)
	}
	want := []string{`{"id":1,"name":"ann"}`, `{"id":2,"name":"bea"}`}
	if got := readAll(t, b, inTx(), `{}`); !slices.Equal(got, want) {
		t.Fatalf("a streamed read in the transaction on node-b: %v, want %v", got, want)
	}
	if got := readAll(t, b, ctx(t), `{}`); len(got) != 0 {
		t.Fatalf("outside the transaction before its commit: %v", got)
	}
	// An error of the node that holds the transaction comes back as it is.
	_, err = b.rpc.Insert(inTx(), &api.InsertRequest{Project: "db1", Collection: "nope", Documents: [][]byte{[]byte(`{"id":3}`)}})
	if grpcstatus.Code(err) != codes.NotFound {
		t.Fatalf("insert into a missing collection, relayed: %v, want NOT_FOUND", err)
	}
	if _, err := b.rpc.CommitTransaction(inTx(), &api.CommitTransactionRequest{Project: "db1"}); err != nil {
		t.Fatalf("commit on node-b: %v", err)
	}
	for _, s := range []*server{a, b} {
		if got := readAll(t, s, ctx(t), `{}`); !slices.Equal(got, want) {
			t.Fatalf("after the commit: %v, want %v", got, want)
		}
	}

	// node-a goes: its transaction is lost.
	begin, err = a.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "db1"})
	if err != nil {
		t.Fatal(err)
	}
	tx = begin.TxCtx
	if err := a.n.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = b.rpc.Insert(inTx(), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":3,"name":"cy"}`)}})
	if st := grpcstatus.Convert(err); st.Code() != codes.Internal || st.Message() != "session is gone" {
		t.Fatalf("a call of a gone node's transaction: %v, want INTERNAL session is gone", err)
	}
	_, err = b.rpc.CommitTransaction(inTx(), &api.CommitTransactionRequest{Project: "db1"})
	if st := grpcstatus.Convert(err); st.Code() != codes.NotFound || st.Message() != "session not found" {
		t.Fatalf("commit of a gone node's transaction: %v, want NOT_FOUND session not found", err)
	}
}
