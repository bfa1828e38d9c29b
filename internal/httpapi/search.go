package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/ops"
)

// searchBody is the body of documents/search (reference §8).
type searchBody struct {
	Q             string          `json:"q"`
	SearchFields  []string        `json:"search_fields"`
	Filter        json.RawMessage `json:"filter"`
	Facet         json.RawMessage `json:"facet"`
	Sort          json.RawMessage `json:"sort"`
	IncludeFields []string        `json:"include_fields"`
	ExcludeFields []string        `json:"exclude_fields"`
	Page          int64Option     `json:"page"`
	PageSize      int64Option     `json:"page_size"`
	Collation     collation       `json:"collation"`
	Branch        string          `json:"branch"`
	// GroupBy and Vector are the 2023 API's; a 2022 path leaves them
	// unread, as it does branch.
	GroupBy json.RawMessage `json:"group_by"`
	Vector  json.RawMessage `json:"vector"`
}

// search streams a search's pages, one {"result":...} line per page.
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	var body searchBody
	malformed := decode(r, &body, nil)
	req := ops.SearchRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Branch: branchOf(r, body.Branch),
		Q: body.Q, SearchFields: body.SearchFields, Filter: body.Filter, Facet: body.Facet, Sort: body.Sort,
		IncludeFields: body.IncludeFields, ExcludeFields: body.ExcludeFields,
		Page: clampInt(int64(body.Page)), PageSize: clampInt(int64(body.PageSize)), Collation: body.Collation.ops()}
	if isProjectRoute(r) {
		req.GroupBy, req.Vector = body.GroupBy, body.Vector
	}
	stream := searchStream(w, s.publicFor(r), req.Page > 0)
	err := s.ops.Search(r.Context(), caller(r), req, func(p ops.SearchPage) error {
		tail, err := searchChunkTail(p)
		if err != nil {
			return err
		}
		return stream.sendAppend(func(b []byte) []byte { return appendSearchChunk(b, p, tail) })
	})
	return stream.finish(err)
}

// searchStream is the stream of a search's pages. Every page is flushed
// as it comes, except when one was asked for: that one is written when
// the handler returns, with the end of the body, in one write rather
// than a flush and then the end.
func searchStream(w http.ResponseWriter, public func(error) *apierror.Error, onePage bool) *stream {
	if onePage {
		return newBatchedStream(w, public)
	}
	return newStream(w, public)
}

// clampInt keeps a client's number within int32, so that an absurd value
// is refused by the limits rather than wrapped around.
func clampInt(v int64) int {
	return int(max(min(v, 1<<31-1), -1<<31))
}

type searchResult struct {
	Hits   []searchHit            `json:"hits"`
	Facets map[string]searchFacet `json:"facets"`
	Meta   searchMeta             `json:"meta"`
}

type searchHit struct {
	Data     json.RawMessage `json:"data"`
	Metadata metadata        `json:"metadata"`
}

type searchFacet struct {
	Counts []facetCount `json:"counts"`
	Stats  facetStats   `json:"stats"`
}

type facetCount struct {
	Count int64  `json:"count"`
	Value string `json:"value"`
}

type facetStats struct {
	Avg   *float64 `json:"avg,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	Min   *float64 `json:"min,omitempty"`
	Sum   *float64 `json:"sum,omitempty"`
	Count int64    `json:"count"`
}

type searchMeta struct {
	Found      int64 `json:"found"`
	TotalPages int32 `json:"total_pages"`
	Page       struct {
		Current int32 `json:"current"`
		Size    int32 `json:"size"`
	} `json:"page"`
}

// appendSearchChunk appends a page's JSON, as encoding/json makes of
// searchChunk(p) but for the hits' documents, which go in as they are
// stored (appendDocument) rather than checked and copied byte by byte (an
// eighth of a search's CPU with mail-sized documents), then tail. A
// grouped page's groups follow its (empty) hits as the original's
// "group": [{"group_keys":[...],"hits":[...]}].
func appendSearchChunk(b []byte, p ops.SearchPage, tail []byte) []byte {
	b = append(b, `{"hits":`...)
	b = appendSearchHits(b, p.Hits)
	if p.Groups != nil {
		b = append(b, `,"group":[`...)
		for i, g := range p.Groups {
			if i > 0 {
				b = append(b, ',')
			}
			keys, _ := json.Marshal(g.Keys) // strings cannot fail
			if g.Keys == nil {
				keys = []byte("[]")
			}
			b = append(b, `{"group_keys":`...)
			b = append(b, keys...)
			b = append(b, `,"hits":`...)
			b = appendSearchHits(b, g.Hits)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, tail...)
}

// appendSearchHits appends hits as a JSON array.
func appendSearchHits(b []byte, hits []ops.SearchHit) []byte {
	b = append(b, '[')
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"data":`...)
		b = appendDocument(b, h.Data)
		b = append(b, `,"metadata":{`...)
		if !h.CreatedAt.IsZero() {
			b = append(b, `"created_at":"`...)
			b = h.CreatedAt.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
		if !h.UpdatedAt.IsZero() {
			if !h.CreatedAt.IsZero() {
				b = append(b, ',')
			}
			b = append(b, `"updated_at":"`...)
			b = h.UpdatedAt.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
		if h.VectorDistance != nil {
			if !h.CreatedAt.IsZero() || !h.UpdatedAt.IsZero() {
				b = append(b, ',')
			}
			b = append(b, `"match":{"vector_distance":`...)
			b = strconv.AppendFloat(b, *h.VectorDistance, 'g', -1, 64)
			b = append(b, '}')
		}
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// searchChunkTail is the JSON of a page after its hits: facets and meta,
// through encoding/json, and the closing brace.
func searchChunkTail(p ops.SearchPage) ([]byte, error) {
	c := searchChunk(ops.SearchPage{Facets: p.Facets, Found: p.Found, TotalPages: p.TotalPages, Page: p.Page, Size: p.Size})
	b, err := json.Marshal(struct {
		Facets map[string]searchFacet `json:"facets"`
		Meta   searchMeta             `json:"meta"`
	}{c.Facets, c.Meta})
	if err != nil {
		return nil, err
	}
	b[0] = ',' // in place of the object's opening brace
	return b, nil
}

func searchChunk(p ops.SearchPage) searchResult {
	out := searchResult{Hits: make([]searchHit, len(p.Hits)), Facets: make(map[string]searchFacet, len(p.Facets))}
	for i, h := range p.Hits {
		out.Hits[i] = searchHit{Data: h.Data, Metadata: metadata{CreatedAt: timestamp(h.CreatedAt), UpdatedAt: timestamp(h.UpdatedAt)}}
	}
	for name, f := range p.Facets {
		out.Facets[name] = facet(f)
	}
	out.Meta.Found, out.Meta.TotalPages = p.Found, p.TotalPages
	out.Meta.Page.Current, out.Meta.Page.Size = p.Page, p.Size
	return out
}

func facet(f ops.SearchFacet) searchFacet {
	out := searchFacet{Counts: make([]facetCount, len(f.Counts))}
	for i, c := range f.Counts {
		out.Counts[i] = facetCount{Count: c.Count, Value: c.Value}
	}
	out.Stats = facetStats{Avg: f.Stats.Avg, Max: f.Stats.Max, Min: f.Stats.Min, Sum: f.Stats.Sum, Count: f.Stats.Count}
	return out
}
