package grpcapi

import (
	"context"

	api "github.com/tigrisdata/tigris-client-go/api/server/v1"

	"github.com/foliodb/folio/internal/ops"
)

// The responses' texts are the HTTP API's (internal/httpapi), word for
// word: clients of either transport match on them.

func (s *Server) CreateDatabase(ctx context.Context, req *api.CreateDatabaseRequest) (*api.CreateDatabaseResponse, error) {
	if err := s.ops.CreateDatabase(ctx, caller(ctx), ops.DatabaseRequest{DB: req.GetDb()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CreateDatabaseResponse{Message: "database created successfully", Status: "created"}, nil
}

func (s *Server) DropDatabase(ctx context.Context, req *api.DropDatabaseRequest) (*api.DropDatabaseResponse, error) {
	if err := s.ops.DropDatabase(ctx, caller(ctx), ops.DatabaseRequest{DB: req.GetDb()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DropDatabaseResponse{Message: "database dropped successfully", Status: "dropped"}, nil
}

func (s *Server) ListDatabases(ctx context.Context, req *api.ListDatabasesRequest) (*api.ListDatabasesResponse, error) {
	dbs, err := s.ops.ListDatabases(ctx, caller(ctx))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListDatabasesResponse{Databases: make([]*api.DatabaseInfo, len(dbs))}
	for i, d := range dbs {
		out.Databases[i] = &api.DatabaseInfo{Db: d.Name, Metadata: &api.DatabaseMetadata{}}
	}
	return out, nil
}

func (s *Server) DescribeDatabase(ctx context.Context, req *api.DescribeDatabaseRequest) (*api.DescribeDatabaseResponse, error) {
	d, err := s.ops.DescribeDatabase(ctx, caller(ctx), ops.DatabaseRequest{DB: req.GetDb()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.DescribeDatabaseResponse{Db: d.Name, Metadata: &api.DatabaseMetadata{}, Size: d.Size,
		Collections: make([]*api.CollectionDescription, len(d.Collections))}
	withSizes(out, d.Size, d.IndexSize, d.LogSize)
	for i, c := range d.Collections {
		out.Collections[i] = &api.CollectionDescription{Collection: c.Name, Metadata: &api.CollectionMetadata{}, Schema: c.Schema, Size: c.Size}
		withSizes(out.Collections[i], c.Size, c.IndexSize, -1)
	}
	return out, nil
}

func (s *Server) ListCollections(ctx context.Context, req *api.ListCollectionsRequest) (*api.ListCollectionsResponse, error) {
	list, err := s.ops.ListCollections(ctx, caller(ctx), ops.DatabaseRequest{DB: req.GetDb(), Tx: txRef(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListCollectionsResponse{Db: req.GetDb(), Collections: make([]*api.CollectionInfo, len(list))}
	for i, c := range list {
		out.Collections[i] = &api.CollectionInfo{Collection: c.Name, Metadata: &api.CollectionMetadata{}}
	}
	return out, nil
}

func (s *Server) CreateOrUpdateCollection(ctx context.Context, req *api.CreateOrUpdateCollectionRequest) (*api.CreateOrUpdateCollectionResponse, error) {
	res, err := s.ops.CreateOrUpdateCollection(ctx, caller(ctx), ops.CreateCollectionRequest{DB: req.GetDb(), Collection: req.GetCollection(), Tx: txRef(ctx),
		Schema: req.GetSchema(), OnlyCreate: req.GetOnlyCreate()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	// The original sends the same message and status for an update.
	return &api.CreateOrUpdateCollectionResponse{Message: "collection of type '" + res.Type + "' created successfully", Status: "created"}, nil
}

func (s *Server) DropCollection(ctx context.Context, req *api.DropCollectionRequest) (*api.DropCollectionResponse, error) {
	err := s.ops.DropCollection(ctx, caller(ctx), ops.CollectionRequest{DB: req.GetDb(), Collection: req.GetCollection(), Tx: txRef(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DropCollectionResponse{Message: "collection dropped successfully", Status: "dropped"}, nil
}

func (s *Server) DescribeCollection(ctx context.Context, req *api.DescribeCollectionRequest) (*api.DescribeCollectionResponse, error) {
	d, err := s.ops.DescribeCollection(ctx, caller(ctx), ops.CollectionRequest{DB: req.GetDb(), Collection: req.GetCollection(), Tx: txRef(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.DescribeCollectionResponse{Collection: d.Name, Metadata: &api.CollectionMetadata{}, Schema: d.Schema, Size: d.Size}
	withSizes(out, d.Size, d.IndexSize, -1)
	return out, nil
}
