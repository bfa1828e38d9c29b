package search

import (
	"context"
	"errors"

	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/translate"
)

// A search is translated (package translate) and run by the engine
// (package engine) on the index the Indexer keeps; these are the names
// the operations call them by.

// Request is a search, checked against the collection's schema by
// Prepare.
type Request = translate.Request

// SortField is one sort key.
type SortField = translate.SortField

// Bounds of a request (see translate).
const (
	MaxSortFields    = translate.MaxSortFields
	DefaultFacetSize = translate.DefaultFacetSize
	MaxQueryBytes    = translate.MaxQueryBytes
	MaxQueryTerms    = translate.MaxQueryTerms
)

// Prepared is a checked request, ready to run: the engine's plan.
type Prepared = engine.Plan

// Prepare checks a request against the schema (every error an
// INVALID_ARGUMENT naming what is wrong) and translates it for the
// engine.
func Prepare(s *schema.Schema, req Request) (*Prepared, error) {
	return translate.Prepare(s, req)
}

// Result is one page of hits, in order, with the number of matches.
type Result = engine.Result

// FacetResult is a facet's counts and, for numeric fields, its stats.
type FacetResult = engine.FacetResult

// FacetCount is how many matches hold a value.
type FacetCount = engine.FacetCount

// FacetStats summarizes a field's values over the matches.
type FacetStats = engine.FacetStats

// Searcher runs searches on one collection's index.
type Searcher struct {
	engine engine.Searcher
}

// Searcher returns the searcher of a collection's index, once WaitFor has
// found it ready.
func (ix *Indexer) Searcher(collID int64) (*Searcher, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ci := ix.colls[collID]
	switch {
	case ci == nil:
		return nil, ErrNoIndex
	case ci.rebuilding || ci.idx == nil:
		return nil, ErrRebuilding
	}
	return &Searcher{engine.Searcher{Index: ci.idx, Columns: ix.columns, ColumnsIndex: ci.columnsIndex}}, nil
}

// Page returns the hits from `from` (0-based), at most size of them, and,
// if withFacets, the request's facets: counts, and numeric fields' stats,
// gathered in the same pass over the matches.
func (s *Searcher) Page(ctx context.Context, p *Prepared, from, size int, withFacets bool) (*Result, error) {
	res, err := s.engine.Page(ctx, p, from, size, withFacets)
	if errors.Is(err, engine.ErrClosed) {
		return nil, ErrNoIndex
	}
	return res, err
}

// Matches calls visit with the id of every document p matches (the
// storage key in hex, fields.DocID), in no particular order, and returns
// how many: the allowed set of a filtered vector search.
func (s *Searcher) Matches(ctx context.Context, p *Prepared, visit func(id string) error) (int, error) {
	n, err := s.engine.Matches(ctx, p, visit)
	if errors.Is(err, engine.ErrClosed) {
		return n, ErrNoIndex
	}
	return n, err
}
