package grpcapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// grpcVersioned is a schema of collection coll with fields fields more than
// two, at version v (0 leaves the member out).
func grpcVersioned(coll string, fields, v int) []byte {
	props := `"int_value":{"type":"integer"},"string_value":{"type":"string"}`
	for i := 1; i <= fields; i++ {
		props += fmt.Sprintf(`,"string_value%d":{"type":"string"}`, i)
	}
	version := ""
	if v != 0 {
		version = fmt.Sprintf(`"version":%d,`, v)
	}
	return []byte(fmt.Sprintf(`{%s"title":"%s","properties":{%s}}`, version, coll, props))
}

// Schema versions over gRPC, as the final Go client sends them (with
// Tigris-Schema-Version in its metadata, which the original ignored): the
// original's TestSchemaVersion's refusals with their codes and messages,
// the transaction case, and describe's schema.
func TestSchemaVersionOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		if _, err := s.rpc.CreateProject(ctx(t), &api.CreateProjectRequest{Project: "app"}); err != nil {
			t.Fatal(err)
		}
		asClient := func(c context.Context) context.Context {
			return metadata.AppendToOutgoingContext(c, "tigris-schema-version", "1")
		}
		create := func(c context.Context, coll string, fields, v int) error {
			_, err := s.rpc.CreateOrUpdateCollection(asClient(c), &api.CreateOrUpdateCollectionRequest{Project: "app", Branch: "main",
				Collection: coll, Schema: grpcVersioned(coll, fields, v)})
			return err
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(create(ctx(t), "coll", 0, 0))   // coll's version 1
		must(create(ctx(t), "coll_1", 0, 0)) // coll_1's 1
		must(create(ctx(t), "coll_1", 1, 0)) // coll_1's 2
		wantRPCError(t, create(ctx(t), "coll", 1, 1), codes.InvalidArgument, "next schema version should be 3")
		must(create(ctx(t), "coll", 1, 5))
		must(create(ctx(t), "coll", 2, 6))
		must(create(ctx(t), "coll_1", 2, 7))
		wantRPCError(t, create(ctx(t), "coll", 1, 3), codes.InvalidArgument, "schema version cannot be less than 5")
		wantRPCError(t, create(ctx(t), "coll", 2, 5), codes.InvalidArgument, "historical schema mismatch. provided version 5. current version 7")
		must(create(ctx(t), "coll", 1, 5))
		must(create(ctx(t), "coll", 2, 7))
		wantRPCError(t, create(ctx(t), "coll", 1, 7), codes.InvalidArgument, "historical schema mismatch. provided version 7. current version 7")

		begin, err := s.rpc.BeginTransaction(ctx(t), &api.BeginTransactionRequest{Project: "app", Branch: "main"})
		must(err)
		tx := metadata.AppendToOutgoingContext(ctx(t), "tigris-tx-id", begin.TxCtx.Id, "tigris-tx-origin", begin.TxCtx.Origin)
		must(create(tx, "coll", 2, 7))
		wantRPCError(t, create(tx, "coll_1", 1, 5), codes.InvalidArgument, "collection schema version should be the same in the transaction. got 5 expected 7")
		must(create(tx, "coll_1", 2, 7))
		_, err = s.rpc.CommitTransaction(tx, &api.CommitTransactionRequest{Project: "app", Branch: "main"})
		must(err)

		// Describe's schema is the one last changed, with its version;
		// no answer carries the header.
		var header metadata.MD
		desc, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "app", Branch: "main", Collection: "coll"}, grpc.Header(&header))
		must(err)
		var sch struct {
			Version int `json:"version"`
		}
		if err := json.Unmarshal(desc.Schema, &sch); err != nil || sch.Version != 6 {
			t.Errorf("described schema %s (%v), want version 6", desc.Schema, err)
		}
		if v := header.Get("tigris-schema-version"); len(v) != 0 {
			t.Errorf("the answer's Tigris-Schema-Version: %v", v)
		}
	})
}
