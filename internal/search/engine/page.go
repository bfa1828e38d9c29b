package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	"github.com/blevesearch/bleve/v2/search/facet"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/search/fields"
)

// Plan is a search translated into Bleve's terms, ready to run on any
// index of the collection (search.Prepare makes it).
type Plan struct {
	// Text is the request's text alone: a MatchAllQuery without one.
	Text query.Query
	// Query is what is searched: the text and the filter (NewFilter).
	Query query.Query
	// Sort is the order of the hits; it ends with the storage key
	// (bsearch.SortDocID), so that pages are stable.
	Sort bsearch.SortOrder
	// Score is Bleve's scoring mode: "" (BM25) when hits are ranked by
	// relevance, "none" when no score decides their order, which spares
	// scoring every match and lets Bleve merge a filter's term lists as
	// bitmaps.
	Score string
	// Facets are the facets to count, when a page asks for them.
	Facets []Facet
	// Group, if set, groups the hits by fields' values (group.go).
	Group *Group
}

// Facet is one facet of a plan.
type Facet struct {
	Path    string
	Size    int  // how many of the most frequent values
	Numeric bool // a number field: its stats too, from its $num. shadow
}

// keyOrder tells whether the plan's hits come in storage-key order alone.
func (p *Plan) keyOrder() bool {
	if len(p.Sort) != 1 {
		return false
	}
	_, byKey := p.Sort[0].(*bsearch.SortDocID)
	return byKey
}

// Result is one page of hits, in order, with the number of matches.
type Result struct {
	Keys  [][]byte // the hits' storage keys
	Found uint64
	// Facets is set when the page was asked for with facets.
	Facets map[string]FacetResult
	// Groups are the page's groups, for a plan with a Group: Found then
	// counts groups, and Keys is empty.
	Groups []HitGroup
}

// FacetResult is a facet's counts and, for numeric fields, its stats.
type FacetResult struct {
	Counts []FacetCount
	Stats  FacetStats
}

// FacetCount is how many matches hold a value.
type FacetCount struct {
	Value string
	Count int64
}

// FacetStats summarizes a field's values over the matches. Avg, Min, Max
// and Sum are set for numeric fields only.
type FacetStats struct {
	Count              int64
	Avg, Min, Max, Sum *float64
}

// Searcher runs plans on one index.
type Searcher struct {
	Index bleve.Index
	// Columns answer number ranges, key-order pages, facets and sorts
	// from columns of the index's segments; nil: Bleve's own alone.
	Columns *Columns
	// ColumnsIndex is Index's number among the columns' indexes
	// (Columns.NewIndex).
	ColumnsIndex uint64
}

func (s *Searcher) columns() indexColumns { return indexColumns{s.Columns, s.ColumnsIndex} }

// ErrClosed: the index was closed before the search took its snapshot
// (dropped, rebuilt, shut down).
var ErrClosed = errors.New("search: the index is closed")

// Page returns the hits from `from` (0-based), at most size of them, and,
// if withFacets, the request's facets: counts, and numeric fields' stats,
// gathered in the same pass over the matches from their doc values.
func (s *Searcher) Page(ctx context.Context, p *Plan, from, size int, withFacets bool) (*Result, error) {
	ii, err := s.Index.Advanced()
	if err != nil {
		return nil, ErrClosed
	}
	// A snapshot holds its segments until it is closed: an index closed
	// under the search (dropped, rebuilt, shut down) stays readable to it.
	r, err := ii.Reader()
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	snap, ok := snapshotOf(r)
	if ok && snap == nil {
		return nil, ErrClosed // closed before the snapshot was taken
	}
	defer r.Close()
	if p.Group != nil {
		return s.groupPage(ctx, r, snap, ok, p, from, size, withFacets)
	}
	if ok {
		if res, done, err := s.keyOrderPage(ctx, snap, p, from, size, withFacets); done || err != nil {
			return res, err
		}
	}
	ran, err := s.prepareRun(ctx, r, snap, ok, p, size, from, withFacets)
	if err != nil {
		return nil, err
	}
	defer ran.searcher.Close()
	if err := ran.coll.Collect(ran.ctx, ran.searcher, r); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := ran.result(p)
	for _, h := range ran.coll.Results() {
		k, err := fields.KeyOf(h.ID)
		if err != nil {
			return nil, fmt.Errorf("search: hit id %q: %w", h.ID, err)
		}
		out.Keys = append(out.Keys, k)
	}
	return out, nil
}

// run is a search ready to be collected: its searcher (to be closed), its
// collector and the order that collector sorts by, and what counts its
// facets.
type run struct {
	ctx      context.Context
	searcher bsearch.Searcher
	coll     *collector.TopNCollector
	order    bsearch.SortOrder
	facets   *facetCounter
	stats    map[string]*statsBuilder
}

// prepareRun makes the searcher and the collector of a page of size hits
// from `from`: the sort keys and facets read from columns where they fit,
// Bleve's own where they do not.
func (s *Searcher) prepareRun(ctx context.Context, r bindex.IndexReader, snap *indexSnapshot, ok bool, p *Plan, size, from int, withFacets bool) (*run, error) {
	if s.Columns != nil {
		ctx = withColumns(ctx, s.columns())
	}
	ctx = context.WithValue(ctx, bsearch.GetScoringModelCallbackKey,
		bsearch.GetScoringModelCallbackFn(func() string { return bindex.BM25Scoring }))
	searcher, err := p.Query.Searcher(ctx, r, s.Index.Mapping(), bsearch.SearcherOptions{Score: p.Score})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	ran := &run{ctx: ctx, searcher: searcher, order: p.Sort}
	fail := func(err error) (*run, error) {
		ran.searcher.Close()
		return nil, fmt.Errorf("search: %w", err)
	}
	if ok && s.Columns != nil {
		switch so, err := columnSortOrder(snap, p.Sort, s.columns()); {
		case err == nil:
			ran.order = so
		case err != errColumnBudget: // over the budget, Bleve's sort serves
			return fail(err)
		}
	}
	ran.coll = collector.NewTopNCollector(size, from, ran.order)
	if withFacets && len(p.Facets) > 0 && ok && s.Columns != nil {
		ran.facets, err = newFacetCounter(snap, p.Facets, s.columns())
		switch {
		case err == errColumnBudget: // Bleve's facets below
		case err != nil:
			return fail(err)
		default:
			ran.searcher = &facetSearcher{Searcher: ran.searcher, fc: ran.facets}
		}
	}
	if withFacets && len(p.Facets) > 0 && ran.facets == nil {
		fb := bsearch.NewFacetsBuilder(r)
		ran.stats = map[string]*statsBuilder{}
		for _, f := range p.Facets {
			fb.Add(f.Path, facet.NewTermsFacetBuilder(fields.Keyword(f.Path), f.Size))
			if f.Numeric {
				ran.stats[f.Path] = &statsBuilder{field: fields.Number(f.Path)}
				fb.Add(statsPrefix+f.Path, ran.stats[f.Path])
			}
		}
		ran.coll.SetFacetsBuilder(fb)
	}
	return ran, nil
}

// result is a collected run's count of matches and facets.
func (ran *run) result(p *Plan) *Result {
	out := &Result{Found: ran.coll.Total()}
	if ran.facets != nil {
		out.Facets = ran.facets.results()
	} else if ran.stats != nil {
		out.Facets = facetResults(p, ran.coll.FacetResults(), ran.stats)
	}
	return out
}

// statsPrefix names a numeric field's stats among the facets, apart from
// its counts.
const statsPrefix = "$stats."

func facetResults(p *Plan, res bsearch.FacetResults, stats map[string]*statsBuilder) map[string]FacetResult {
	out := make(map[string]FacetResult, len(p.Facets))
	for _, f := range p.Facets {
		path := f.Path
		fr := FacetResult{Counts: []FacetCount{}}
		if r := res[path]; r != nil {
			if r.Terms != nil {
				for _, t := range r.Terms.Terms() {
					fr.Counts = append(fr.Counts, FacetCount{Value: t.Term, Count: int64(t.Count)})
				}
			}
			fr.Stats.Count = int64(r.Total)
		}
		if sb := stats[path]; sb != nil {
			fr.Stats = sb.stats()
		}
		out[path] = fr
	}
	return out
}

// statsBuilder sums a numeric field over the matches, from the doc values
// of its $num. shadow (Bleve's facets count values but cannot sum them):
// the facets of a search whose columns are over their budget.
type statsBuilder struct {
	field string
	numberStats
}

func (b *statsBuilder) StartDoc() {}
func (b *statsBuilder) EndDoc()   {}
func (b *statsBuilder) Field() string {
	return b.field
}
func (b *statsBuilder) Size() int { return 64 }

func (b *statsBuilder) UpdateVisitor(term []byte) {
	if x, ok := fields.NumberOf(term); ok {
		b.add(x)
	}
}

func (b *statsBuilder) Result() *bsearch.FacetResult {
	return &bsearch.FacetResult{Field: b.field, Total: int(b.n)}
}

// numberStats are a facet's stats: the count, sum, minimum and maximum of
// a number field's values over the matches, a document's distinct values
// each once.
type numberStats struct {
	n             int64
	sum, min, max float64
}

func (st *numberStats) add(x float64) {
	if st.n == 0 || x < st.min {
		st.min = x
	}
	if st.n == 0 || x > st.max {
		st.max = x
	}
	st.n++
	st.sum += x
}

func (st *numberStats) stats() FacetStats {
	out := FacetStats{Count: st.n}
	if st.n > 0 {
		avg, sum, mn, mx := st.sum/float64(st.n), st.sum, st.min, st.max
		out.Avg, out.Sum, out.Min, out.Max = &avg, &sum, &mn, &mx
	}
	return out
}
