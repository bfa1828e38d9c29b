package engine

import (
	"context"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// A filter is evaluated a segment at a time into bitmaps of the segment's
// documents: a term's postings, a number range from the number columns,
// intersections and unions of those. Under Bleve's searchers, a
// conjunction walks its parts' postings side by side, advancing one to
// the other's document for every candidate: on a filter-only search of
// 100,000 documents that walk (a tag of 10,000 documents beside a range
// of 30,000) was most of the time, where intersecting the two bitmaps
// takes microseconds.

// bitmapFilter is a translated filter, searched through bitmaps where its
// parts allow (evaluator.eval) and through Bleve's searchers for the rest.
type bitmapFilter struct {
	q query.Query
}

// NewFilter is the filter q (a translated filter: conjunctions,
// disjunctions, terms, booleans and number ranges, and any other query),
// searched a segment at a time through bitmaps where its parts allow.
func NewFilter(q query.Query) query.Query { return &bitmapFilter{q} }

func (f *bitmapFilter) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	cols, ok := columnsOf(ctx)
	snap, isScorch := snapshotOf(r)
	if !ok || !isScorch {
		return f.q.Searcher(ctx, r, m, opts)
	}
	ev := &evaluator{snap: snap, segs: snap.Segments(), cols: cols}
	sets, rest, err := ev.eval(f.q)
	switch {
	case err == errColumnBudget:
		return f.q.Searcher(ctx, r, m, opts)
	case err != nil:
		return nil, err
	case sets == nil:
		return f.q.Searcher(ctx, r, m, opts)
	}
	bs := newBitmapSearcher(snap, live(ev.segs, sets), opts)
	if len(rest) == 0 {
		return bs, nil
	}
	parts := []bsearch.Searcher{bs}
	for _, q := range rest {
		s, err := q.Searcher(ctx, r, m, opts)
		if err != nil {
			for _, p := range parts {
				p.Close()
			}
			return nil, err
		}
		parts = append(parts, s)
	}
	return searcher.NewConjunctionSearcher(ctx, r, parts, opts)
}

// evaluator computes filters' bitmaps over one snapshot.
type evaluator struct {
	snap *indexSnapshot
	segs []*segmentSnapshot
	cols indexColumns
}

// eval is q's documents per segment (nil if no part of q can be a
// bitmap), and the parts of q that must be searched beside them: q
// matches the documents in the bitmaps that rest matches too.
func (ev *evaluator) eval(q query.Query) (sets []*roaring.Bitmap, rest []query.Query, err error) {
	switch q := q.(type) {
	case *query.ConjunctionQuery:
		// Ranges come last: beside a smaller set they narrow it rather
		// than make bitmaps of their own.
		var ranges []*NumberRange
		for _, c := range conjuncts(q, nil) {
			if r, ok := c.(*NumberRange); ok {
				ranges = append(ranges, r)
				continue
			}
			cs, crest, err := ev.eval(c)
			if err != nil {
				return nil, nil, err
			}
			rest = append(rest, crest...)
			if cs == nil {
				continue
			}
			if sets == nil {
				sets = cs
				continue
			}
			for i := range sets {
				sets[i].And(cs[i])
			}
		}
		for _, r := range ranges {
			if sets == nil {
				if sets, err = r.bitmaps(ev.snap, ev.cols); err != nil {
					return nil, nil, err
				}
				continue
			}
			if err := r.narrow(ev.snap, ev.cols, sets); err != nil {
				return nil, nil, err
			}
		}
		return sets, rest, nil
	case *query.DisjunctionQuery:
		if q.Min > 1 {
			return nil, []query.Query{q}, nil
		}
		sets = ev.empty()
		for _, d := range q.Disjuncts {
			ds, drest, err := ev.eval(d)
			if err != nil {
				return nil, nil, err
			}
			if ds == nil || len(drest) > 0 {
				return nil, []query.Query{q}, nil // a union needs every part as a bitmap
			}
			for i := range sets {
				sets[i].Or(ds[i])
			}
		}
		return sets, nil, nil
	case *query.TermQuery:
		sets, err = ev.term(q.FieldVal, q.Term)
		return sets, nil, err
	case *query.BoolFieldQuery:
		sets, err = ev.term(q.FieldVal, boolTerm(q.Bool))
		return sets, nil, err
	case *NumberRange:
		sets, err = q.bitmaps(ev.snap, ev.cols)
		return sets, nil, err
	case *query.MatchAllQuery:
		sets = ev.empty()
		for i, ss := range ev.segs {
			sets[i].AddRange(0, ss.Segment().Count())
		}
		return sets, nil, nil
	case *query.MatchNoneQuery:
		return ev.empty(), nil, nil
	}
	return nil, []query.Query{q}, nil
}

// conjuncts appends q's conjuncts to out, with those of the conjunctions
// among them spliced in: a range within a nested conjunction (a field's
// two bounds) narrows the sets of the conjunction around it too.
func conjuncts(q *query.ConjunctionQuery, out []query.Query) []query.Query {
	for _, c := range q.Conjuncts {
		if inner, ok := c.(*query.ConjunctionQuery); ok {
			out = conjuncts(inner, out)
		} else {
			out = append(out, c)
		}
	}
	return out
}

// live takes the deleted documents of each of segs out of sets, in
// place, and returns it.
func live(segs []*segmentSnapshot, sets []*roaring.Bitmap) []*roaring.Bitmap {
	for i, ss := range segs {
		if del := ss.Deleted(); del != nil && !sets[i].IsEmpty() {
			sets[i].AndNot(del)
		}
	}
	return sets
}

func (ev *evaluator) empty() []*roaring.Bitmap {
	sets := make([]*roaring.Bitmap, len(ev.segs))
	for i := range sets {
		sets[i] = roaring.New()
	}
	return sets
}

// term is the documents that hold term in field, per segment.
func (ev *evaluator) term(field, term string) ([]*roaring.Bitmap, error) {
	sets := ev.empty()
	if err := termPostings(ev.segs, field, term, sets); err != nil {
		return nil, err
	}
	return sets, nil
}

// bitmapOf is the set of docs, numbers below n, given in any order:
// through a dense bitset when they are many for n, else sorted first
// (roaring's AddMany is quadratic on unsorted numbers). 6,000 of 20,000:
// 12 µs, where sorting them and adding them in order took 66 µs.
func bitmapOf(docs []uint32, n uint64) *roaring.Bitmap {
	if uint64(len(docs))*64 < n {
		sorted := slices.Clone(docs)
		slices.Sort(sorted)
		bm := roaring.New()
		bm.AddMany(sorted)
		return bm
	}
	dense := make([]uint64, (n+63)/64)
	for _, d := range docs {
		dense[d>>6] |= 1 << (d & 63)
	}
	return roaring.FromDense(dense, false)
}

// segmentHits are a segment's matching documents.
type segmentHits struct {
	offset uint64 // the snapshot's number of the segment's first document
	docs   *roaring.Bitmap
}

// bitmapSearcher hands out the documents of its segments' bitmaps in
// order. Its score is a constant: it only ever filters.
type bitmapSearcher struct {
	segs   []segmentHits
	seg    int // the segment it reads
	it     roaring.IntPeekable
	count  uint64
	scored bool
}

// newBitmapSearcher searches sets, the live matching documents of each
// of snap's segments (by the segment's own numbers; see live).
func newBitmapSearcher(snap *indexSnapshot, sets []*roaring.Bitmap, opts bsearch.SearcherOptions) *bitmapSearcher {
	s := &bitmapSearcher{scored: opts.Score != "none"}
	var offset uint64
	for i, ss := range snap.Segments() {
		start := offset
		offset += ss.Segment().Count() // scorch numbers a snapshot's documents segment after segment
		if n := sets[i].GetCardinality(); n > 0 {
			s.segs = append(s.segs, segmentHits{offset: start, docs: sets[i]})
			s.count += n
		}
	}
	return s
}

func (s *bitmapSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	for s.seg < len(s.segs) {
		if s.it == nil {
			s.it = s.segs[s.seg].docs.Iterator()
		}
		if s.it.HasNext() {
			return s.match(ctx, s.segs[s.seg].offset+uint64(s.it.Next())), nil
		}
		s.seg++
		s.it = nil
	}
	return nil, nil
}

// Advance moves to the first document at or after id. A searcher never
// goes back: asked for an id behind it, it gives its next document.
func (s *bitmapSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	n, ok := docNumber(id)
	if !ok {
		return s.Next(ctx)
	}
	for s.seg+1 < len(s.segs) && s.segs[s.seg+1].offset <= n {
		s.seg++
		s.it = nil
	}
	if s.seg < len(s.segs) && n >= s.segs[s.seg].offset {
		if s.it == nil {
			s.it = s.segs[s.seg].docs.Iterator()
		}
		if local := n - s.segs[s.seg].offset; local <= math.MaxUint32 {
			s.it.AdvanceIfNeeded(uint32(local))
		} else {
			s.it = roaring.New().Iterator() // past this segment
		}
	}
	return s.Next(ctx)
}

func (s *bitmapSearcher) match(ctx *bsearch.SearchContext, n uint64) *bsearch.DocumentMatch {
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = internalID(dm.IndexInternalID[:0], n)
	if s.scored {
		dm.Score = 1
	}
	return dm
}

func (s *bitmapSearcher) Close() error               { return nil }
func (s *bitmapSearcher) Weight() float64            { return 1 }
func (s *bitmapSearcher) SetQueryNorm(float64)       {}
func (s *bitmapSearcher) Count() uint64              { return s.count }
func (s *bitmapSearcher) Min() int                   { return 0 }
func (s *bitmapSearcher) Size() int                  { return 64 + 32*len(s.segs) }
func (s *bitmapSearcher) DocumentMatchPoolSize() int { return 1 }
