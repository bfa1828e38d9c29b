package engine

import (
	"context"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// deadlineQuery is one word or phrase of q in one field, whose search
// gives up once its context is done. Bleve looks at the context only
// between its collector's matches (every 1,024) and not while it builds
// the searchers, so a q whose words each match many documents but never
// all together walked the whole index in one step, long past the
// request's deadline.
type deadlineQuery struct {
	query.Query
}

// Deadline is q, whose searchers give up once the search's context is
// done.
func Deadline(q query.Query) query.Query { return deadlineQuery{q} }

func (q deadlineQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := q.Query.Searcher(ctx, r, m, opts)
	if err != nil {
		return nil, err
	}
	return &deadlineSearcher{Searcher: s, ctx: ctx, done: ctx.Done()}, nil
}

// deadlineSearcher fails its steps once ctx is done; Bleve's searchers
// above it pass the error up to the collector.
type deadlineSearcher struct {
	bsearch.Searcher
	ctx  context.Context
	done <-chan struct{}
}

func (s *deadlineSearcher) Next(sctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	select {
	case <-s.done:
		return nil, s.ctx.Err()
	default:
		return s.Searcher.Next(sctx)
	}
}

func (s *deadlineSearcher) Advance(sctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	select {
	case <-s.done:
		return nil, s.ctx.Err()
	default:
		return s.Searcher.Advance(sctx, id)
	}
}

// Optimize passes Bleve's optimizations through to the searcher wrapped:
// unscored, a conjunction or disjunction of terms becomes one of their
// bitmaps (which has no walk to stop); scored, a conjunction narrows its
// terms to their intersection.
func (s *deadlineSearcher) Optimize(kind string, octx index.OptimizableContext) (index.OptimizableContext, error) {
	if o, ok := s.Searcher.(index.Optimizable); ok {
		return o.Optimize(kind, octx)
	}
	return nil, nil
}
