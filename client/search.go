package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
)

// SearchRequest is a full-text search (docs/api.md "Search"). Every
// member is optional: the zero request matches every document.
type SearchRequest struct {
	// Q is the text: words and "quoted phrases", each of which a hit
	// holds in one of SearchFields (default: every string field).
	Q            string
	SearchFields []string
	Filter       Filter
	// Facets asks, per field, for its most frequent values among the
	// matches: how many (0 takes the server's 10).
	Facets map[string]int
	// Sort orders hits (at most 2 fields); default by relevance.
	Sort          []SortField
	IncludeFields []string
	ExcludeFields []string
	// Page asks for one page (from 1); 0 streams every page.
	Page, PageSize  int
	CaseInsensitive bool
}

// MarshalJSON writes the request as the API's search body.
func (r SearchRequest) MarshalJSON() ([]byte, error) {
	type facet struct {
		Size int `json:"size,omitempty"`
	}
	body := struct {
		Q             string           `json:"q,omitempty"`
		SearchFields  []string         `json:"search_fields,omitempty"`
		Filter        Filter           `json:"filter,omitzero"`
		Facet         map[string]facet `json:"facet,omitempty"`
		Sort          []SortField      `json:"sort,omitempty"`
		IncludeFields []string         `json:"include_fields,omitempty"`
		ExcludeFields []string         `json:"exclude_fields,omitempty"`
		Page          int              `json:"page,omitempty"`
		PageSize      int              `json:"page_size,omitempty"`
		Collation     *collation       `json:"collation,omitempty"`
	}{Q: r.Q, SearchFields: r.SearchFields, Filter: r.Filter, Sort: r.Sort, IncludeFields: r.IncludeFields,
		ExcludeFields: r.ExcludeFields, Page: r.Page, PageSize: r.PageSize}
	if len(r.Facets) > 0 {
		body.Facet = map[string]facet{}
		for f, n := range r.Facets {
			body.Facet[f] = facet{Size: n}
		}
	}
	if r.CaseInsensitive {
		body.Collation = &collation{Case: "ci"}
	}
	return json.Marshal(body)
}

// SearchPage is one page of a search's hits, with the facets of every
// match.
type SearchPage[T any] struct {
	Hits   []Hit[T]         `json:"hits"`
	Facets map[string]Facet `json:"facets"`
	Meta   SearchMeta       `json:"meta"`
}

// Hit is a document a search found.
type Hit[T any] struct {
	Data     T        `json:"data"`
	Metadata Metadata `json:"metadata"`
}

// Facet is a field's most frequent values among a search's matches.
type Facet struct {
	Counts []FacetCount `json:"counts"`
	Stats  FacetStats   `json:"stats"`
}

// FacetCount is a value and how many matches hold it. Values are strings
// (a number's is its shortest decimal).
type FacetCount struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// FacetStats counts a field's values; the others are set for numeric
// fields only.
type FacetStats struct {
	Count int64    `json:"count"`
	Avg   *float64 `json:"avg,omitempty"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	Sum   *float64 `json:"sum,omitempty"`
}

// SearchMeta tells where a page stands among the matches.
type SearchMeta struct {
	Found      int64 `json:"found"`
	TotalPages int64 `json:"total_pages"`
	Page       struct {
		Current int `json:"current"`
		Size    int `json:"size"`
	} `json:"page"`
}

// Search runs a full-text search and streams its pages: one, if
// req.Page is set, else every page that has hits (one empty page when
// nothing matched).
func (c *Collection[T]) Search(ctx context.Context, req SearchRequest) iter.Seq2[*SearchPage[T], error] {
	return func(yield func(*SearchPage[T], error) bool) {
		stopped := false
		err := c.s.stream(ctx, "search", routeSearch, c.name, req, func(raw json.RawMessage) bool {
			var p SearchPage[T]
			if err := json.Unmarshal(raw, &p); err != nil {
				stopped = !yield(nil, fmt.Errorf("search %s: decode a page: %w", c.name, err))
			} else {
				stopped = !yield(&p, nil)
			}
			return !stopped
		})
		if err != nil && !stopped {
			yield(nil, err)
		}
	}
}
