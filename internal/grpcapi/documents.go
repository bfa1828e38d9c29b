package grpcapi

import (
	"context"
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
	res, err := s.ops.Insert(ctx, caller(ctx), ops.WriteDocumentsRequest{DB: req.GetProject(), Collection: req.GetCollection(), Tx: txRef(ctx), Documents: req.GetDocuments()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.InsertResponse{Metadata: &api.ResponseMetadata{CreatedAt: timestamp(res.Time)}, Status: "inserted", Keys: keys(res)}, nil
}

func (s *Server) Replace(ctx context.Context, req *api.ReplaceRequest) (*api.ReplaceResponse, error) {
	res, err := s.ops.Replace(ctx, caller(ctx), ops.WriteDocumentsRequest{DB: req.GetProject(), Collection: req.GetCollection(), Tx: txRef(ctx), Documents: req.GetDocuments()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.ReplaceResponse{Metadata: &api.ResponseMetadata{CreatedAt: timestamp(res.Time)}, Status: "replaced", Keys: keys(res)}, nil
}

func (s *Server) Update(ctx context.Context, req *api.UpdateRequest) (*api.UpdateResponse, error) {
	res, err := s.ops.Update(ctx, caller(ctx), ops.UpdateRequest{DB: req.GetProject(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Fields: req.GetFields(), Collation: collation(req.GetOptions().GetCollation()),
		Limit: req.GetOptions().GetLimit()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.UpdateResponse{Metadata: &api.ResponseMetadata{UpdatedAt: timestamp(res.Time)}, Status: "updated", ModifiedCount: int32(res.Modified)}, nil
}

func (s *Server) Delete(ctx context.Context, req *api.DeleteRequest) (*api.DeleteResponse, error) {
	res, err := s.ops.Delete(ctx, caller(ctx), ops.DeleteRequest{DB: req.GetProject(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Collation: collation(req.GetOptions().GetCollation()),
		Limit: req.GetOptions().GetLimit()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	// The count goes in 2023's field and in Folio's, which its Go client
	// read before 2023's was defined.
	return &api.DeleteResponse{Metadata: &api.ResponseMetadata{DeletedAt: timestamp(res.Time)}, Status: "deleted",
		DeletedCount: int32(res.Modified), ModifiedCount: int64(res.Modified)}, nil
}

// Read streams what a collection holds, one ReadResponse per document (or
// stored message). Without a sort (which alpha.32's clients cannot send,
// and later ones may) reads come in primary-key order (publish order for
// messages).
func (s *Server) Read(req *api.ReadRequest, stream api.Tigris_ReadServer) error {
	ctx := stream.Context()
	opts := req.GetOptions()
	r := ops.ReadRequest{DB: req.GetProject(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Fields: req.GetFields(), Limit: opts.GetLimit(), Skip: opts.GetSkip(), Offset: opts.GetOffset(),
		Collation: collation(opts.GetCollation()), Sort: req.GetSort()}
	sender := newTimedSender(stream, s.writeTimeout)
	defer sender.close()
	err := s.ops.Read(ctx, caller(ctx), r, func(item ops.Item) error {
		// The send encodes the message before it returns, so the item's
		// bytes, valid only during this call, may be sent as they are.
		return sender.send(&api.ReadResponse{Data: item.Data, ResumeToken: item.ResumeToken,
			Metadata: &api.ResponseMetadata{CreatedAt: timestamp(item.CreatedAt), UpdatedAt: timestamp(item.UpdatedAt)}})
	})
	if err != nil {
		return s.fail(ctx, err)
	}
	return nil
}
