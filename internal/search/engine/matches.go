package engine

import (
	"context"
	"fmt"

	bsearch "github.com/blevesearch/bleve/v2/search"
)

// Matches calls visit with the id (fields.DocID: the storage key in hex)
// of every document p matches, in no particular order, and returns how
// many it visited. It serves a filter that must be known whole before
// anything else is chosen (a vector search's, whose neighbours are chosen
// among the matches); p's sort, score and facets play no part. The filter
// runs as a page's does (bitmaps where its parts allow), and each match's
// id is read from the segment's stored fields: a filter of many matches
// costs a read each.
func (s *Searcher) Matches(ctx context.Context, p *Plan, visit func(id string) error) (int, error) {
	ii, err := s.Index.Advanced()
	if err != nil {
		return 0, ErrClosed
	}
	r, err := ii.Reader()
	if err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	if snap, ok := snapshotOf(r); ok && snap == nil {
		return 0, ErrClosed
	}
	defer r.Close()
	if s.Columns != nil {
		ctx = withColumns(ctx, s.columns())
	}
	searcher, err := p.Query.Searcher(ctx, r, s.Index.Mapping(), bsearch.SearcherOptions{Score: "none"})
	if err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	defer searcher.Close()
	sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(1+searcher.DocumentMatchPoolSize(), 0), IndexReader: r}
	n := 0
	for {
		if n%1024 == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		m, err := searcher.Next(sctx)
		if err != nil {
			return n, fmt.Errorf("search: %w", err)
		}
		if m == nil {
			return n, nil
		}
		id, err := r.ExternalID(m.IndexInternalID)
		sctx.DocumentMatchPool.Put(m)
		if err != nil {
			return n, fmt.Errorf("search: %w", err)
		}
		if err := visit(id); err != nil {
			return n, err
		}
		n++
	}
}
