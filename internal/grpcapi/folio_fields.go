package grpcapi

import (
	api "github.com/tigrisdata/tigris-client-go/api/server/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/foliodb/folio/internal/ops"
)

// Folio's own fields: what the HTTP API has and the published messages
// lack, carried over gRPC for Folio's Go client (client/) in fields of
// numbers far above any the published definitions use. Other clients
// skip them as unknown fields, and send none.
const (
	// EventsRequestOptions and SubscribeRequestOptions: start_after
	// (string), the position to resume after; SubscribeRequestOptions:
	// collation (a Collation message).
	fieldStartAfter       protowire.Number = 1001
	fieldSubscribeCollate protowire.Number = 1002
	// StreamEvent and SubscribeResponse: position (string).
	fieldPosition protowire.Number = 1001
	// DeleteResponse: modified_count (int64).
	fieldDeleteCount protowire.Number = 1001
	// PublishResponse: keys (repeated bytes), each a read's resume token;
	// not field 3, which the official clients parse as JSON (streams.go).
	fieldPublishKeys protowire.Number = 1001
	// CreateApplicationRequest and Application: role and namespace
	// (strings), which alpha.32's messages lack.
	fieldAppRole      protowire.Number = 1001
	fieldAppNamespace protowire.Number = 1002
	// DescribeDatabaseResponse, CollectionDescription and
	// DescribeCollectionResponse: sizes, a message of documents (1),
	// indexes (2) and, for a database, log (3), all int64 (HTTP's
	// "sizes").
	fieldSizes protowire.Number = 1001
)

// withSizes appends a sizes message to m's unknown fields; log < 0
// leaves the log's size out.
func withSizes(m proto.Message, documents, indexes, log int64) {
	var sizes []byte
	for i, v := range []int64{documents, indexes, log} {
		if v >= 0 {
			sizes = protowire.AppendTag(sizes, protowire.Number(i+1), protowire.VarintType)
			sizes = protowire.AppendVarint(sizes, uint64(v))
		}
	}
	b := protowire.AppendTag(m.ProtoReflect().GetUnknown(), fieldSizes, protowire.BytesType)
	m.ProtoReflect().SetUnknown(protowire.AppendBytes(b, sizes))
}

// collationField reads a Collation message held in an unknown field.
func collationField(m proto.Message, num protowire.Number) ops.Collation {
	b := unknownBytes(m, num)
	if b == nil {
		return ops.Collation{}
	}
	var c api.Collation
	if proto.Unmarshal(b, &c) != nil {
		return ops.Collation{}
	}
	return collation(&c)
}

// withString appends a string field to m's unknown fields, if s is set.
func withString(m proto.Message, num protowire.Number, s string) {
	if s == "" {
		return
	}
	b := protowire.AppendTag(m.ProtoReflect().GetUnknown(), num, protowire.BytesType)
	m.ProtoReflect().SetUnknown(protowire.AppendString(b, s))
}

// withBytes appends a repeated bytes field to m's unknown fields.
func withBytes(m proto.Message, num protowire.Number, values [][]byte) {
	b := m.ProtoReflect().GetUnknown()
	for _, v := range values {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendBytes(b, v)
	}
	m.ProtoReflect().SetUnknown(b)
}

// withVarint appends an integer field to m's unknown fields.
func withVarint(m proto.Message, num protowire.Number, v int64) {
	b := protowire.AppendTag(m.ProtoReflect().GetUnknown(), num, protowire.VarintType)
	m.ProtoReflect().SetUnknown(protowire.AppendVarint(b, uint64(v)))
}
