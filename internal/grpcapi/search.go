package grpcapi

import (
	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Search streams a search's pages, as documents/search does: one
// SearchResponse per page. The facet, sort and group_by are JSON bytes,
// read by ops as HTTP's are; a grouped page's groups are its group.
func (s *Server) Search(req *api.SearchRequest, stream api.Tigris_SearchServer) error {
	ctx := stream.Context()
	r := ops.SearchRequest{DB: req.GetProject(), Branch: req.GetBranch(), Collection: req.GetCollection(), Q: req.GetQ(), SearchFields: req.GetSearchFields(),
		Filter: req.GetFilter(), Facet: req.GetFacet(), Sort: req.GetSort(),
		IncludeFields: req.GetIncludeFields(), ExcludeFields: req.GetExcludeFields(),
		PageSize: int(req.GetPageSize()), Page: int(req.GetPage()), Collation: collation(req.GetCollation()), GroupBy: req.GetGroupBy(), Vector: req.GetVector()}
	sender := newTimedSender(stream, s.writeTimeout)
	defer sender.close()
	err := s.ops.Search(ctx, callerOn(ctx, req.GetBranch()), r, func(p ops.SearchPage) error {
		return sender.send(searchResponse(p))
	})
	if err != nil {
		return s.fail(ctx, err)
	}
	return nil
}

func searchResponse(p ops.SearchPage) *api.SearchResponse {
	out := &api.SearchResponse{Hits: make([]*api.SearchHit, len(p.Hits)), Facets: make(map[string]*api.SearchFacet, len(p.Facets)),
		Meta: &api.SearchMetadata{Found: p.Found, TotalPages: p.TotalPages, Page: &api.Page{Current: p.Page, Size: p.Size}}}
	for i, h := range p.Hits {
		out.Hits[i] = searchHit(h)
	}
	for _, g := range p.Groups {
		gh := &api.GroupedSearchHits{GroupKeys: g.Keys, Hits: make([]*api.SearchHit, len(g.Hits))}
		for i, h := range g.Hits {
			gh.Hits[i] = searchHit(h)
		}
		out.Group = append(out.Group, gh)
	}
	for name, f := range p.Facets {
		fc := &api.SearchFacet{Counts: make([]*api.FacetCount, len(f.Counts)),
			Stats: &api.FacetStats{Avg: f.Stats.Avg, Max: f.Stats.Max, Min: f.Stats.Min, Sum: f.Stats.Sum, Count: f.Stats.Count}}
		for i, c := range f.Counts {
			fc.Counts[i] = &api.FacetCount{Count: c.Count, Value: c.Value}
		}
		out.Facets[name] = fc
	}
	return out
}

func searchHit(h ops.SearchHit) *api.SearchHit {
	meta := &api.SearchHitMeta{CreatedAt: timestamp(h.CreatedAt), UpdatedAt: timestamp(h.UpdatedAt)}
	if h.VectorDistance != nil {
		meta.Match = &api.Match{VectorDistance: h.VectorDistance}
	}
	return &api.SearchHit{Data: h.Data, Metadata: meta}
}
