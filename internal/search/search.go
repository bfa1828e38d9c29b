package search

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
	"github.com/foliodb/folio/internal/search/fields"
	"github.com/foliodb/folio/internal/search/translate"
	"github.com/foliodb/folio/internal/vector"
)

// A search is translated (package translate) and run by the engine
// (package engine) on the index the Indexer keeps; these are the names
// the operations call them by.

// Request is a search, checked against the collection's schema by
// Prepare.
type Request = translate.Request

// SortField is one sort key.
type SortField = translate.SortField

// GroupBy is a request's group_by: the hits grouped by fields' values.
type GroupBy = translate.GroupBy

// HitGroup is one group of a grouped page: its keys and its hits.
type HitGroup = engine.HitGroup

// Bounds of a request (see translate).
const (
	MaxSortFields    = translate.MaxSortFields
	DefaultFacetSize = translate.DefaultFacetSize
	MaxQueryBytes    = translate.MaxQueryBytes
	MaxQueryTerms    = translate.MaxQueryTerms
	MaxGroupFields   = translate.MaxGroupFields
	DefaultGroupHits = translate.DefaultGroupHits
	MaxGroupHits     = translate.MaxGroupHits
	// MaxGroups is the most groups a grouped search counts among its
	// matches; more fail with INVALID_ARGUMENT.
	MaxGroups = engine.MaxGroups
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
	engine  engine.Searcher
	vectors *vectorSet
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
	return &Searcher{engine: engine.Searcher{Index: ci.idx, Columns: ix.columns, ColumnsIndex: ci.columnsIndex}, vectors: ci.vectors}, nil
}

// Page returns the hits from `from` (0-based), at most size of them, and,
// if withFacets, the request's facets: counts, and numeric fields' stats,
// gathered in the same pass over the matches. For a request with a
// group_by, from and size count groups, Result.Groups holds them and
// Found is their number.
func (s *Searcher) Page(ctx context.Context, p *Prepared, from, size int, withFacets bool) (*Result, error) {
	res, err := s.engine.Page(ctx, p, from, size, withFacets)
	switch {
	case errors.Is(err, engine.ErrClosed):
		return nil, ErrNoIndex
	case errors.Is(err, engine.ErrTooManyGroups):
		return nil, apierror.Errorf(apierror.InvalidArgument, "group_by: the matches fall into more than %d groups, the most a search groups; narrow the search with q or a filter", MaxGroups)
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

// VectorQuery is a vector search checked against the schema
// (PrepareVector): the k nearest neighbours of Vector on Field.
type VectorQuery struct {
	Field  string
	Vector []float32
	// TopK is the request's top_k; 0 when it gave none (the caller then
	// takes as many as its pages reach).
	TopK int
}

// VectorHit is a neighbour: its storage key and its distance to the query
// as the field's distance names it (cosine: 1 - cos, in [0, 2];
// euclidean: the L2 distance; dot: the negated dot product).
type VectorHit struct {
	Key      []byte
	Distance float32
}

// MaxTopK bounds a vector search's k (top_k, or the pages it reaches).
const MaxTopK = 10_000

// Nearest returns the k documents whose vectors on q's field are nearest
// q's vector, nearest first. With a filter (not nil), the neighbours are
// chosen among the documents it matches: k of them whenever k match and
// have a vector.
func (s *Searcher) Nearest(ctx context.Context, q *VectorQuery, k int, filter *Prepared) ([]VectorHit, error) {
	f := s.vectors.field(q.Field)
	if f == nil {
		// The schema has the field (PrepareVector), the index not yet:
		// a schema change's rebuild is under way.
		return nil, ErrRebuilding
	}
	var allowed vector.Filter
	if filter != nil {
		set := newMatchSet()
		if _, err := s.Matches(ctx, filter, func(id string) error { set.add(id); return nil }); err != nil {
			return nil, err
		}
		allowed = set
	}
	hits, err := f.idx.SearchEf(q.Vector, k, searchBreadth(f.idx.Len()), allowed)
	if err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "vector search on field '%s': %v", q.Field, err)
	}
	out := make([]VectorHit, 0, len(hits))
	for _, h := range hits {
		key, err := fields.KeyOf(h.Key)
		if err != nil {
			return nil, fmt.Errorf("search: vector hit id %q: %w", h.Key, err)
		}
		out = append(out, VectorHit{Key: key, Distance: h.Distance})
	}
	return out, ctx.Err()
}

// matchSet is the allowed set of a filtered vector search: the matches'
// ids while there are few (a scan of them reads them back), and past
// matchKeysKept, 8-byte fingerprints of them that answer membership
// alone, so that a filter matching millions of documents holds about 20
// bytes a match rather than its id's hex and a map entry (about 100).
// A set of fingerprints says it is too large to scan (Len), so the graph,
// which asks membership only, is searched. Two ids sharing a fingerprint
// (once in about 2^64/n) would let a non-match be a candidate, which the
// documents' own check of the filter then leaves out.
type matchSet struct {
	keys   map[string]struct{}
	prints map[uint64]struct{}
}

// matchKeysKept is how many ids a matchSet keeps before fingerprints: past
// the scan/graph crossing of any index below ten million vectors
// (internal/vector's rule).
var matchKeysKept = 100_000 // a var for tests

var matchSeed = maphash.MakeSeed()

func newMatchSet() *matchSet { return &matchSet{keys: map[string]struct{}{}} }

func (m *matchSet) add(id string) {
	if m.prints == nil && len(m.keys) < matchKeysKept {
		m.keys[id] = struct{}{}
		return
	}
	if m.prints == nil {
		m.prints = make(map[uint64]struct{}, 2*matchKeysKept)
		for k := range m.keys {
			m.prints[maphash.String(matchSeed, k)] = struct{}{}
		}
		m.keys = nil
	}
	m.prints[maphash.String(matchSeed, id)] = struct{}{}
}

func (m *matchSet) Allows(key string) bool {
	if m.prints != nil {
		_, ok := m.prints[maphash.String(matchSeed, key)]
		return ok
	}
	_, ok := m.keys[key]
	return ok
}

func (m *matchSet) Len() int {
	if m.prints != nil {
		return math.MaxInt // never scanned: the fingerprints give no keys back
	}
	return len(m.keys)
}

func (m *matchSet) Keys() iter.Seq[string] {
	return func(yield func(string) bool) {
		for k := range m.keys {
			if !yield(k) {
				return
			}
		}
	}
}

// searchBreadth is the efSearch a vector search of a graph of n vectors
// takes: 80 up to 100,000 vectors, then growing as the square root of n,
// to 512 from about 4,000,000. With efSearch fixed at 64, recall@10 fell
// from 0.988 at 100,000 clustered vectors of 128 dimensions to 0.77 at a
// million; 256 held it at 0.96 there (docs/benchmarks.md, issue 37).
func searchBreadth(n int) int {
	return min(max(int(80*math.Sqrt(float64(n)/100_000)), 80), 512)
}
