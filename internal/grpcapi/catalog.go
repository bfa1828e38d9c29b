package grpcapi

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
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

// DescribeDatabase answers in 2023's shape (DescribeDatabaseResponse).
// 2022's clients call the same method but read another message
// (DescribeDatabaseResponse2022, its fields numbered from db at 1): the
// method is registered with describeDatabaseHandler, which tells the
// generations apart (describesFor2022) and answers each its own.
func (s *Server) DescribeDatabase(ctx context.Context, req *api.DescribeDatabaseRequest) (*api.DescribeDatabaseResponse, error) {
	d, err := s.ops.DescribeDatabase(ctx, caller2023(ctx), ops.DatabaseRequest{DB: req.GetProject(), Branch: req.GetBranch(), SchemaFormat: req.GetSchemaFormat()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DescribeDatabaseResponse{Metadata: &api.DatabaseMetadata{}, Size: d.Size, Collections: collectionDescriptions(d, true), Branches: d.Branches,
		Sizes: &api.Sizes{Documents: d.Size, Indexes: d.IndexSize, Log: max(d.LogSize, 0)}}, nil
}

// describeDatabase2022 is DescribeDatabase in 2022's shape.
func (s *Server) describeDatabase2022(ctx context.Context, req *api.DescribeDatabaseRequest) (*api.DescribeDatabaseResponse2022, error) {
	d, err := s.ops.DescribeDatabase(ctx, caller(ctx), ops.DatabaseRequest{DB: req.GetProject()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DescribeDatabaseResponse2022{Db: d.Name, Metadata: &api.DatabaseMetadata{}, Size: d.Size, Collections: collectionDescriptions(d, false),
		Sizes: &api.Sizes{Documents: d.Size, Indexes: d.IndexSize, Log: max(d.LogSize, 0)}}, nil
}

// describesFor2022 tells which generation sent a DescribeDatabase: 2023's
// clients name a branch (main unless told otherwise: the official Go and
// TypeScript clients both send it) and may ask for a schema_format, where
// 2022's request has the database's name alone. A request of the name
// alone is taken for 2022's, the API Folio was first written to; a
// schema_format is answered with the final server's model types, since no
// 2022 client sends one over gRPC (alpha.32 never sets it). (The user
// agent cannot tell them apart: alpha.32 and v1.0.0 of the Go client both
// send "tigris-client-go/v1.0.0". A 2023 program that uses the Go driver
// directly with no branch configured gets 2022's answer: configure one.)
func describesFor2022(req *api.DescribeDatabaseRequest) bool {
	return req.GetBranch() == "" && req.GetSchemaFormat() == ""
}

// describeDatabaseHandler serves Tigris.DescribeDatabase in place of the
// generated handler, whose answer has one type: it decodes the request
// and answers in the shape of its generation, through the interceptors
// like any call.
func (s *Server) describeDatabaseHandler(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(api.DescribeDatabaseRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	call := func(ctx context.Context, req any) (any, error) {
		if r := req.(*api.DescribeDatabaseRequest); describesFor2022(r) {
			return s.describeDatabase2022(ctx, r)
		}
		return s.DescribeDatabase(ctx, req.(*api.DescribeDatabaseRequest))
	}
	if interceptor == nil {
		return call(ctx, in)
	}
	return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: s, FullMethod: api.Tigris_DescribeDatabase_FullMethodName}, call)
}

// collectionDescriptions are a database's collections as its describe
// answers them; the 2023 answer (for2023) lists each one's indexes, the
// 2022 answer, which had none, does not.
func collectionDescriptions(d *ops.DatabaseDescription, for2023 bool) []*api.CollectionDescription {
	out := make([]*api.CollectionDescription, len(d.Collections))
	for i, c := range d.Collections {
		out[i] = &api.CollectionDescription{Collection: c.Name, Metadata: &api.CollectionMetadata{}, Schema: schemaOf(c), Size: c.Size,
			Sizes: &api.Sizes{Documents: c.Size, Indexes: c.IndexSize}, ExpiredPending: c.ExpiredPending}
		if for2023 {
			out[i].Indexes = collectionIndexes(c.Indexes)
		}
	}
	return out
}

// schemaOf is a described collection's schema: as given, or, when the
// request asked for a schema_format, the JSON object of each format's
// generated source text, as the original sent it (reference §10b).
func schemaOf(d ops.CollectionDescription) []byte {
	if d.Generated == nil {
		return d.Schema
	}
	b, err := json.Marshal(d.Generated)
	if err != nil { // a map of strings always marshals
		panic(err)
	}
	return b
}

func (s *Server) ListCollections(ctx context.Context, req *api.ListCollectionsRequest) (*api.ListCollectionsResponse, error) {
	list, err := s.ops.ListCollections(ctx, callerOn(ctx, req.GetBranch()), ops.DatabaseRequest{DB: req.GetProject(), Branch: req.GetBranch(), Tx: txRef(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListCollectionsResponse{Db: req.GetProject(), Collections: make([]*api.CollectionInfo, len(list))}
	for i, c := range list {
		out.Collections[i] = &api.CollectionInfo{Collection: c.Name, Metadata: &api.CollectionMetadata{}}
	}
	return out, nil
}

func (s *Server) CreateOrUpdateCollection(ctx context.Context, req *api.CreateOrUpdateCollectionRequest) (*api.CreateOrUpdateCollectionResponse, error) {
	res, err := s.ops.CreateOrUpdateCollection(ctx, callerOn(ctx, req.GetBranch()), ops.CreateCollectionRequest{DB: req.GetProject(), Branch: req.GetBranch(),
		Collection: req.GetCollection(), Tx: txRef(ctx),
		Schema: req.GetSchema(), OnlyCreate: req.GetOnlyCreate()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	// The original sends the same message and status for an update.
	return &api.CreateOrUpdateCollectionResponse{Message: "collection of type '" + res.Type + "' created successfully", Status: "created"}, nil
}

func (s *Server) DropCollection(ctx context.Context, req *api.DropCollectionRequest) (*api.DropCollectionResponse, error) {
	err := s.ops.DropCollection(ctx, callerOn(ctx, req.GetBranch()), ops.CollectionRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Tx: txRef(ctx)})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DropCollectionResponse{Message: "collection dropped successfully", Status: "dropped"}, nil
}

func (s *Server) DescribeCollection(ctx context.Context, req *api.DescribeCollectionRequest) (*api.DescribeCollectionResponse, error) {
	// A request with a branch or a schema_format is 2023's (describesFor2022),
	// so its model types are the final server's text.
	c := callerOn(ctx, req.GetBranch())
	c.Projects = c.Projects || req.GetSchemaFormat() != ""
	d, err := s.ops.DescribeCollection(ctx, c, ops.CollectionRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Tx: txRef(ctx),
		SchemaFormat: req.GetSchemaFormat()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.DescribeCollectionResponse{Collection: d.Name, Metadata: &api.CollectionMetadata{}, Schema: schemaOf(*d), Size: d.Size,
		Sizes: &api.Sizes{Documents: d.Size, Indexes: d.IndexSize}, ExpiredPending: d.ExpiredPending}
	// The 2023 answer's members; a 2022 request (the names alone, as
	// describesFor2022 tells) gets its era's answer, which had neither.
	if req.GetBranch() != "" || req.GetSchemaFormat() != "" {
		out.Indexes, out.SearchStatus = collectionIndexes(d.Indexes), d.SearchStatus
	}
	return out, nil
}
