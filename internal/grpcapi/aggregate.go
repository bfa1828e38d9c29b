package grpcapi

import (
	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// folioService is Folio's own service, tigrisdata.v1.Folio (folio.proto):
// the calls no published generation has, over the same operations.
type folioService struct {
	api.UnsafeFolioServer
	s *Server
}

// Aggregate streams one AggregateResponse per group, its result the JSON
// object a line of documents/aggregate holds; with explain, one message
// saying how it ran instead.
func (v folioService) Aggregate(req *api.AggregateRequest, stream api.Folio_AggregateServer) error {
	s, ctx := v.s, stream.Context()
	r := ops.AggregateRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Filter: req.GetFilter(), Collation: collation(req.GetCollation()), GroupBy: req.GetGroupBy(), Fields: req.GetFields(),
		Sort: req.GetSort(), Limit: req.GetLimit(), Explain: req.GetExplain()}
	sender := newTimedSender(stream, s.writeTimeout)
	defer sender.close()
	var res api.AggregateResponse
	ex, err := s.ops.Aggregate(ctx, callerOn(ctx, req.GetBranch()), r, func(result []byte) error {
		res.Result = result
		return sender.send(&res)
	})
	if err == nil && ex != nil {
		err = sender.send(&api.AggregateResponse{Explain: &api.AggregateExplanation{Plan: ex.Plan, Groups: int64(ex.Groups), Matched: ex.Matched, KeysRead: ex.KeysRead}})
	}
	if err != nil {
		return s.fail(ctx, err)
	}
	return nil
}
