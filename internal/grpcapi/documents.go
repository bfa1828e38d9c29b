package grpcapi

import (
	"context"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// timestamp is a metadata time; none when unset, as HTTP leaves it out.
func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// setTime sets ts to t and returns it; none when t is unset, as
// timestamp's.
func setTime(ts *timestamppb.Timestamp, t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	ts.Seconds, ts.Nanos = t.Unix(), int32(t.Nanosecond())
	return ts
}

// written is a write's answer R allocated with its metadata and the
// metadata's time: one allocation where three were, in every write.
type written[R any] struct {
	res  R
	meta api.ResponseMetadata
	at   timestamppb.Timestamp
}

// time is t in w's timestamp; none when unset, as timestamp's.
func (w *written[R]) time(t time.Time) *timestamppb.Timestamp { return setTime(&w.at, t) }

func collation(c *api.Collation) ops.Collation { return ops.Collation{Case: c.GetCase()} }

// keys turns a write's primary keys (JSON objects) into the response's
// bytes. The official Go client unmarshals each into the document it
// inserted, which is how generated keys reach the application.
func keys(res *ops.WriteResult) [][]byte {
	if len(res.Keys) == 0 {
		return nil
	}
	out := make([][]byte, len(res.Keys))
	for i, k := range res.Keys {
		out[i] = k
	}
	return out
}

func (s *Server) Insert(ctx context.Context, req *api.InsertRequest) (*api.InsertResponse, error) {
	res, err := s.ops.Insert(ctx, callerOn(ctx, req.GetBranch()), ops.WriteDocumentsRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(),
		Tx: txRef(ctx), Documents: req.GetDocuments(), SchemaSignedOff: signedOff(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	w := new(written[api.InsertResponse])
	w.meta.CreatedAt = w.time(res.Time)
	w.res.Metadata, w.res.Status, w.res.Keys = &w.meta, "inserted", keys(res)
	return &w.res, nil
}

func (s *Server) Replace(ctx context.Context, req *api.ReplaceRequest) (*api.ReplaceResponse, error) {
	res, err := s.ops.Replace(ctx, callerOn(ctx, req.GetBranch()), ops.WriteDocumentsRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(),
		Tx: txRef(ctx), Documents: req.GetDocuments(), SchemaSignedOff: signedOff(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	w := new(written[api.ReplaceResponse])
	w.meta.CreatedAt = w.time(res.Time)
	w.res.Metadata, w.res.Status, w.res.Keys = &w.meta, "replaced", keys(res)
	return &w.res, nil
}

func (s *Server) Update(ctx context.Context, req *api.UpdateRequest) (*api.UpdateResponse, error) {
	res, err := s.ops.Update(ctx, callerOn(ctx, req.GetBranch()), ops.UpdateRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Fields: req.GetFields(), Collation: collation(req.GetOptions().GetCollation()),
		Limit: req.GetOptions().GetLimit()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	w := new(written[api.UpdateResponse])
	w.meta.UpdatedAt = w.time(res.Time)
	w.res.Metadata, w.res.Status, w.res.ModifiedCount = &w.meta, "updated", int32(res.Modified)
	return &w.res, nil
}

func (s *Server) Delete(ctx context.Context, req *api.DeleteRequest) (*api.DeleteResponse, error) {
	res, err := s.ops.Delete(ctx, callerOn(ctx, req.GetBranch()), ops.DeleteRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Collation: collation(req.GetOptions().GetCollation()),
		Limit: req.GetOptions().GetLimit()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	// The count goes in 2023's field and in Folio's, which its Go client
	// read before 2023's was defined.
	w := new(written[api.DeleteResponse])
	w.meta.DeletedAt = w.time(res.Time)
	w.res.Metadata, w.res.Status, w.res.DeletedCount, w.res.ModifiedCount = &w.meta, "deleted", int32(res.Modified), int64(res.Modified)
	return &w.res, nil
}

// Read streams what a collection holds, one ReadResponse per document (or
// stored message). Without a sort (which alpha.32's clients cannot send,
// and later ones may) reads come in primary-key order (publish order for
// messages).
func (s *Server) Read(req *api.ReadRequest, stream api.Tigris_ReadServer) error {
	ctx := stream.Context()
	r := readRequest(ctx, req)
	sender := newTimedSender(stream, s.writeTimeout)
	defer sender.close()
	// One answer, its metadata and times, for every document: a send has
	// encoded its message by the time it returns (or the call is over).
	var a struct {
		res              api.ReadResponse
		meta             api.ResponseMetadata
		created, updated timestamppb.Timestamp
	}
	a.res.Metadata = &a.meta
	err := s.ops.Read(ctx, callerOn(ctx, req.GetBranch()), r, func(item ops.Item) error {
		// The item's bytes, valid only during this call, may be sent as
		// they are, for the same reason.
		a.res.Data, a.res.ResumeToken = item.Data, item.ResumeToken
		a.meta.CreatedAt = setTime(&a.created, item.CreatedAt)
		a.meta.UpdatedAt = setTime(&a.updated, item.UpdatedAt)
		return sender.send(&a.res)
	})
	if err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

// readRequest is the operations' request of a read (or an explain).
func readRequest(ctx context.Context, req *api.ReadRequest) ops.ReadRequest {
	opts := req.GetOptions()
	return ops.ReadRequest{Malformed: unknownOptions(opts), DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Fields: req.GetFields(), Limit: opts.GetLimit(), Skip: opts.GetSkip(), Offset: opts.GetOffset(),
		Collation: collation(opts.GetCollation()), Sort: req.GetSort()}
}

// Count counts the documents a filter matches (2023 only). Its request
// has no collation: the filter's comparisons are case-sensitive.
func (s *Server) Count(ctx context.Context, req *api.CountRequest) (*api.CountResponse, error) {
	n, err := s.ops.Count(ctx, caller2023(ctx), ops.CountRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(),
		Tx: txRef(ctx), Filter: req.GetFilter()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CountResponse{Count: n}, nil
}

// Import inserts documents into a collection that it may create, or
// whose schema it may widen, from them (2023 only); it answers as Insert
// does. The request's options hold nothing a server reads.
func (s *Server) Import(ctx context.Context, req *api.ImportRequest) (*api.ImportResponse, error) {
	res, err := s.ops.Import(ctx, caller2023(ctx), ops.ImportRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(),
		Tx: txRef(ctx), Documents: req.GetDocuments(), CreateCollection: req.GetCreateCollection(),
		PrimaryKey: req.GetPrimaryKey(), AutoGenerated: req.GetAutogenerated()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	w := new(written[api.ImportResponse])
	w.meta.CreatedAt = w.time(res.Time)
	w.res.Metadata, w.res.Status, w.res.Keys = &w.meta, "inserted", keys(res)
	return &w.res, nil
}

// The original's read types in an explain's answer.
const (
	readTypePrimary   = "primary index"
	readTypeSecondary = "secondary index"
)

// Explain tells how a read would be served (2023 only). The original's
// fields say whether a secondary index serves the filter (read_type) and
// echo the filter and sort; Folio's plan, which names the index ranges,
// goes in its own fields (the original's field and key_range, which
// describe its index's keys, are left empty).
func (s *Server) Explain(ctx context.Context, req *api.ReadRequest) (*api.ExplainResponse, error) {
	ex, err := s.ops.Explain(ctx, caller2023(ctx), readRequest(ctx, req))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	readType := readTypePrimary
	if strings.HasPrefix(ex.Plan, "index") {
		readType = readTypeSecondary
	}
	return &api.ExplainResponse{Collection: req.GetCollection(), ReadType: readType, Filter: string(req.GetFilter()), Sorting: string(req.GetSort()),
		Plan: ex.Plan, Candidates: int64(ex.Candidates), Matched: int64(ex.Matched), KeysRead: ex.KeysRead}, nil
}

const mdSchemaSignOff = "tigris-schema-sign-off"

// signedOff reads the original's tigris-schema-sign-off metadata (see
// ops.WriteDocumentsRequest.SchemaSignedOff).
func signedOff(ctx context.Context) bool {
	return mdValue(ctx, stateOf(ctx), mdSchemaSignOff, gatewayMDPrefix+mdSchemaSignOff) == "true"
}
