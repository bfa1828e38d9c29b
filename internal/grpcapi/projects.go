package grpcapi

import (
	"context"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// The 2023 API's projects and branches. A project is what a database was
// (the 2022 and 2023 names reach the same data); a branch is a database of
// its own that starts with main's collections. The answers' texts are the
// HTTP API's (internal/httpapi/projects.go).

func (s *Server) CreateProject(ctx context.Context, req *api.CreateProjectRequest) (*api.CreateProjectResponse, error) {
	if err := s.ops.CreateProject(ctx, caller2023(ctx), ops.DatabaseRequest{DB: req.GetProject()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CreateProjectResponse{Message: "project created successfully", Status: "created"}, nil
}

func (s *Server) DeleteProject(ctx context.Context, req *api.DeleteProjectRequest) (*api.DeleteProjectResponse, error) {
	if err := s.ops.DeleteProject(ctx, caller2023(ctx), ops.DatabaseRequest{DB: req.GetProject()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DeleteProjectResponse{Message: "project deleted successfully", Status: "dropped"}, nil
}

func (s *Server) ListProjects(ctx context.Context, _ *api.ListProjectsRequest) (*api.ListProjectsResponse, error) {
	list, err := s.ops.ListProjects(ctx, caller2023(ctx))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListProjectsResponse{Projects: make([]*api.ProjectInfo, len(list))}
	for i, p := range list {
		out.Projects[i] = &api.ProjectInfo{Project: p.Name, Metadata: &api.ProjectMetadata{}}
	}
	return out, nil
}

func (s *Server) CreateBranch(ctx context.Context, req *api.CreateBranchRequest) (*api.CreateBranchResponse, error) {
	if err := s.ops.CreateBranch(ctx, caller2023(ctx), ops.BranchRequest{DB: req.GetProject(), Branch: req.GetBranch()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.CreateBranchResponse{Status: "created"}, nil
}

func (s *Server) DeleteBranch(ctx context.Context, req *api.DeleteBranchRequest) (*api.DeleteBranchResponse, error) {
	if err := s.ops.DeleteBranch(ctx, caller2023(ctx), ops.BranchRequest{DB: req.GetProject(), Branch: req.GetBranch()}); err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.DeleteBranchResponse{Status: "deleted"}, nil
}

func (s *Server) ListBranches(ctx context.Context, req *api.ListBranchesRequest) (*api.ListBranchesResponse, error) {
	list, err := s.ops.ListBranches(ctx, caller2023(ctx), ops.DatabaseRequest{DB: req.GetProject()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	out := &api.ListBranchesResponse{Branches: make([]*api.BranchInfo, len(list))}
	for i, b := range list {
		out.Branches[i] = &api.BranchInfo{Branch: b, Metadata: &api.BranchMetadata{}}
	}
	return out, nil
}

// CreateOrUpdateCollections applies several schemas at once, all or none.
// A schema that fails is an error status naming its index, as over HTTP:
// the original answered OK with the error and failedAtIndex in the
// message, after applying the schemas before it; the final Go client
// turns either into an error.
func (s *Server) CreateOrUpdateCollections(ctx context.Context, req *api.CreateOrUpdateCollectionsRequest) (*api.CreateOrUpdateCollectionsResponse, error) {
	res, err := s.ops.CreateOrUpdateCollections(ctx, caller2023(ctx), ops.CreateCollectionsRequest{DB: req.GetProject(), Branch: req.GetBranch(),
		Tx: txRef(ctx), Schemas: req.GetSchemas(), OnlyCreate: req.GetOnlyCreate()})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	// As the original: "created" for a collection changed too.
	out := &api.CreateOrUpdateCollectionsResponse{Resp: make([]*api.CreateCollectionStatus, len(res.Collections))}
	for i := range out.Resp {
		out.Resp[i] = &api.CreateCollectionStatus{Status: "created"}
	}
	return out, nil
}
