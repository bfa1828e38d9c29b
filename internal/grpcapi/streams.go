package grpcapi

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Events streams the changes of a documents collection from now on, or
// after the position in Folio's start_after field. The published messages
// have no field for a stream's position: Folio's own (start_after and
// position, from 1001) carry it, for its Go client; other clients cannot
// resume a stream. Folio's filter (1001) and collation narrow it, and its
// left_filter marks a change that took a document out of the filter.
func (s *Server) Events(req *api.EventsRequest, stream api.Tigris_EventsServer) error {
	ctx := stream.Context()
	opts := req.GetOptions()
	src, err := s.ops.Events(ctx, caller(ctx), ops.EventsRequest{Malformed: unknownOptions(opts), DB: req.GetDb(), Collection: req.GetCollection(), Tx: txRef(ctx),
		StartAfter: opts.GetStartAfter(), Filter: req.GetFilter(), Collation: collation(opts.GetCollation())})
	if err != nil {
		return s.fail(ctx, err)
	}
	return s.serveStream(ctx, stream, src, func(it *ops.StreamItem) proto.Message {
		return &api.EventsResponse{Event: &api.StreamEvent{TxId: it.TxID[:], Collection: it.Collection, Op: it.Op, Key: it.Key, Data: it.Data, Last: it.Last,
			Position: it.Position, LeftFilter: it.LeftFilter, Expired: it.Expired}}
	})
}

// Subscribe streams the messages published to a messages collection from
// now on, of the partitions asked for and, from later clients, only those
// their filter matches (a field alpha.32's message lacks).
func (s *Server) Subscribe(req *api.SubscribeRequest, stream api.Tigris_SubscribeServer) error {
	ctx := stream.Context()
	parts := req.GetOptions().GetPartitions()
	partitions := make([]int64, len(parts))
	for i, p := range parts {
		partitions[i] = int64(p)
	}
	src, err := s.ops.Subscribe(ctx, caller(ctx), ops.SubscribeRequest{Malformed: unknownOptions(req.GetOptions()), DB: req.GetDb(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Partitions: partitions, Filter: req.GetFilter(),
		StartAfter: req.GetOptions().GetStartAfter(), Collation: collation(req.GetOptions().GetCollation())})
	if err != nil {
		return s.fail(ctx, err)
	}
	return s.serveStream(ctx, stream, src, func(it *ops.StreamItem) proto.Message {
		return &api.SubscribeResponse{Message: it.Data, Position: it.Position}
	})
}

// serveStream sends what an open stream selects until the client goes away
// or the stream ends: at shutdown, or when its client fell too far behind,
// with the error that says so (UNAVAILABLE, RESOURCE_EXHAUSTED) as the
// call's status. A client that does not read an item within the write
// timeout is cut off (timedSender).
func (s *Server) serveStream(ctx context.Context, stream grpc.ServerStream, src *ops.Stream, message func(*ops.StreamItem) proto.Message) error {
	defer src.Close()
	// The headers go out at once, as HTTP's status line does: once a
	// client has them, everything committed from then on reaches it.
	// (gRPC would otherwise send them with the first item.)
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	sender := newTimedSender(stream, s.writeTimeout)
	defer sender.close()
	for {
		items, err := src.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return grpcstatus.FromContextError(ctx.Err()).Err() // the client went away: nobody to tell
			}
			return s.fail(ctx, err)
		}
		for i := range items {
			if err := sender.send(message(&items[i])); err != nil {
				if ctx.Err() != nil {
					return grpcstatus.FromContextError(ctx.Err()).Err()
				}
				return s.fail(ctx, err)
			}
		}
	}
}

// Publish stores messages in a messages collection, in the client's
// transaction if the call carries one. The response carries no keys, as
// the original's did not: the clients read PublishResponse.keys as each
// message's key in JSON, to copy into the message (@tigrisdata/core throws
// on anything else, from a callback, which ends the process), and a
// message's key here is an opaque resume token, which only HTTP's keys
// hand out, and Folio's own field (resume_tokens, 1001).
func (s *Server) Publish(ctx context.Context, req *api.PublishRequest) (*api.PublishResponse, error) {
	res, err := s.ops.Publish(ctx, caller(ctx), ops.PublishRequest{DB: req.GetDb(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Messages: req.GetMessages(), Partition: int64(req.GetOptions().GetPartition())})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.PublishResponse{Metadata: &api.ResponseMetadata{CreatedAt: timestamp(res.Time)}, Status: "published", ResumeTokens: res.Keys}, nil
}
