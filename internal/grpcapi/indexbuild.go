package grpcapi

import (
	"context"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// The index builds of the final API (2023 only). Folio indexes every
// field as it writes and its search index follows the change log, so
// both answer at once with what the original answered once a build had
// finished (see internal/ops/indexbuild.go).

func (s *Server) BuildCollectionIndex(ctx context.Context, req *api.BuildCollectionIndexRequest) (*api.BuildCollectionIndexResponse, error) {
	indexes, err := s.ops.BuildCollectionIndex(ctx, caller2023(ctx), ops.IndexBuildRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.BuildCollectionIndexResponse{Indexes: collectionIndexes(indexes)}, nil
}

func (s *Server) BuildSearchIndex(ctx context.Context, req *api.BuildCollectionSearchIndexRequest) (*api.BuildCollectionSearchIndexResponse, error) {
	st, err := s.ops.BuildSearchIndex(ctx, caller2023(ctx), ops.IndexBuildRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.BuildCollectionSearchIndexResponse{Status: st}, nil
}

// collectionIndexes is the final API's list of a collection's indexes.
func collectionIndexes(in []ops.CollectionIndex) []*api.CollectionIndex {
	out := make([]*api.CollectionIndex, len(in))
	for i, x := range in {
		out[i] = &api.CollectionIndex{Name: x.Name, State: x.State, Fields: make([]*api.Field, len(x.Fields))}
		for j, f := range x.Fields {
			out[i].Fields[j] = &api.Field{Name: f}
		}
	}
	return out
}
