package grpcapi

import (
	"context"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// searchService is the final API's service tigrisdata.search.v1.Search:
// search indexes apart from the collections, over the same ops calls as
// HTTP's /v1/projects/{project}/search/indexes.
type searchService struct {
	api.UnsafeSearchServer
	s *Server
}

func (v searchService) CreateOrUpdateIndex(ctx context.Context, req *api.CreateOrUpdateIndexRequest) (*api.CreateOrUpdateIndexResponse, error) {
	r := ops.IndexRequest{Project: req.GetProject(), Name: req.GetName(), Schema: req.GetSchema(), OnlyCreate: req.GetOnlyCreate()}
	if _, err := v.s.ops.CreateOrUpdateIndex(ctx, caller2023(ctx), r); err != nil {
		return nil, v.s.fail(ctx, err)
	}
	// The original answered "created" whether it created or changed one.
	return &api.CreateOrUpdateIndexResponse{Status: "created"}, nil
}

func (v searchService) GetIndex(ctx context.Context, req *api.GetIndexRequest) (*api.GetIndexResponse, error) {
	info, err := v.s.ops.GetIndex(ctx, caller2023(ctx), ops.IndexRequest{Project: req.GetProject(), Name: req.GetName()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.GetIndexResponse{Index: &api.IndexInfo{Name: info.Name, Schema: info.Schema}}, nil
}

func (v searchService) DeleteIndex(ctx context.Context, req *api.DeleteIndexRequest) (*api.DeleteIndexResponse, error) {
	if err := v.s.ops.DeleteIndex(ctx, caller2023(ctx), ops.IndexRequest{Project: req.GetProject(), Name: req.GetName()}); err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.DeleteIndexResponse{Status: "deleted"}, nil
}

func (v searchService) ListIndexes(ctx context.Context, req *api.ListIndexesRequest) (*api.ListIndexesResponse, error) {
	r := ops.ListIndexesRequest{Project: req.GetProject(), SourceType: req.GetFilter().GetType(), SourceOfColl: req.GetFilter().GetCollection()}
	list, err := v.s.ops.ListIndexes(ctx, caller2023(ctx), r)
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	out := &api.ListIndexesResponse{Indexes: make([]*api.IndexInfo, len(list))}
	for i, idx := range list {
		out.Indexes[i] = &api.IndexInfo{Name: idx.Name, Schema: idx.Schema}
	}
	return out, nil
}

func (v searchService) Get(ctx context.Context, req *api.GetDocumentRequest) (*api.GetDocumentResponse, error) {
	docs, err := v.s.ops.IndexGet(ctx, caller2023(ctx), ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), IDs: req.GetIds()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	// A missing id is an empty hit in its place (protobuf's repeated
	// messages hold no nulls).
	out := &api.GetDocumentResponse{Documents: make([]*api.SearchHit, len(docs))}
	for i, d := range docs {
		out.Documents[i] = &api.SearchHit{}
		if d != nil {
			out.Documents[i] = &api.SearchHit{Data: d.Data, Metadata: &api.SearchHitMeta{CreatedAt: timestamp(d.CreatedAt), UpdatedAt: timestamp(d.UpdatedAt)}}
		}
	}
	return out, nil
}

func (v searchService) CreateById(ctx context.Context, req *api.CreateByIdRequest) (*api.CreateByIdResponse, error) {
	r := ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), IDs: []string{req.GetId()}}
	if len(req.GetDocument()) > 0 {
		r.Documents = [][]byte{req.GetDocument()}
	}
	if err := v.s.ops.IndexCreateByID(ctx, caller2023(ctx), r); err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.CreateByIdResponse{Id: req.GetId()}, nil
}

func docStatuses(statuses []ops.DocStatus) []*api.DocStatus {
	out := make([]*api.DocStatus, len(statuses))
	for i, st := range statuses {
		out[i] = &api.DocStatus{Id: st.ID}
		if st.Err != nil {
			// The original's number, the HTTP status, in the code enum.
			out[i].Error = &api.Error{Code: api.Code(st.OriginalCode()), Message: st.Err.Message}
		}
	}
	return out
}

func (v searchService) Create(ctx context.Context, req *api.CreateDocumentRequest) (*api.CreateDocumentResponse, error) {
	st, err := v.s.ops.IndexCreate(ctx, caller2023(ctx), ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), Documents: req.GetDocuments()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.CreateDocumentResponse{Status: docStatuses(st)}, nil
}

func (v searchService) CreateOrReplace(ctx context.Context, req *api.CreateOrReplaceDocumentRequest) (*api.CreateOrReplaceDocumentResponse, error) {
	st, err := v.s.ops.IndexCreateOrReplace(ctx, caller2023(ctx), ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), Documents: req.GetDocuments()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.CreateOrReplaceDocumentResponse{Status: docStatuses(st)}, nil
}

func (v searchService) Update(ctx context.Context, req *api.UpdateDocumentRequest) (*api.UpdateDocumentResponse, error) {
	st, err := v.s.ops.IndexUpdate(ctx, caller2023(ctx), ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), Documents: req.GetDocuments()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.UpdateDocumentResponse{Status: docStatuses(st)}, nil
}

func (v searchService) Delete(ctx context.Context, req *api.DeleteDocumentRequest) (*api.DeleteDocumentResponse, error) {
	st, err := v.s.ops.IndexDelete(ctx, caller2023(ctx), ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), IDs: req.GetIds()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.DeleteDocumentResponse{Status: docStatuses(st)}, nil
}

func (v searchService) DeleteByQuery(ctx context.Context, req *api.DeleteByQueryRequest) (*api.DeleteByQueryResponse, error) {
	n, err := v.s.ops.IndexDeleteByQuery(ctx, caller2023(ctx), ops.IndexDocumentsRequest{Project: req.GetProject(), Index: req.GetIndex(), Filter: req.GetFilter()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.DeleteByQueryResponse{Count: int32(n)}, nil
}

// Search streams a search's pages, one SearchIndexResponse per page, as
// the collections' Search does.
func (v searchService) Search(req *api.SearchIndexRequest, stream api.Search_SearchServer) error {
	ctx := stream.Context()
	r := ops.IndexSearchRequest{Index: req.GetIndex(),
		SearchRequest: ops.SearchRequest{DB: req.GetProject(), Q: req.GetQ(), SearchFields: req.GetSearchFields(), GroupBy: req.GetGroupBy(), Vector: req.GetVector(),
			Filter: req.GetFilter(), Facet: req.GetFacet(), Sort: req.GetSort(),
			IncludeFields: req.GetIncludeFields(), ExcludeFields: req.GetExcludeFields(),
			PageSize: int(req.GetPageSize()), Page: int(req.GetPage()), Collation: collation(req.GetCollation())}}
	sender := newTimedSender(stream, v.s.writeTimeout)
	defer sender.close()
	err := v.s.ops.IndexSearch(ctx, caller2023(ctx), r, func(p ops.SearchPage) error {
		page := searchResponse(p)
		return sender.send(&api.SearchIndexResponse{Hits: page.Hits, Facets: page.Facets, Meta: page.Meta, Group: page.Group})
	})
	if err != nil {
		return v.s.fail(ctx, err)
	}
	return nil
}
