package engine

import (
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/foliodb/folio/internal/search/fields"
)

// A search without text, sort or facets pages its matches in key order.
// Bleve's collector orders by id by reading every match's id from the
// segment's stored fields (a third of the server's CPU on a filter of
// 3,000 matches), to keep the first page of them. Here a filter's
// bitmaps give the count, and each segment's ids in order (a column of
// the documents by id, and each document's place in it, built once per
// segment) give the first matches of each segment without reading an id;
// only those are read, and merged across segments.

// buildKeyOrder is seg's documents in id order, and each document's place
// in that order.
func buildKeyOrder(seg segmentData) (order, rank []uint32, err error) {
	rank = make([]uint32, seg.Count())
	for i := range rank {
		rank[i] = noRank
	}
	order = make([]uint32, 0, seg.Count())
	place := func(doc uint64) {
		if doc < uint64(len(rank)) {
			rank[doc] = uint32(len(order))
			order = append(order, uint32(doc))
		}
	}
	if err := visitTerms(seg, idField, func(string) func(uint64) { return place }); err != nil {
		return nil, nil, err
	}
	return order, rank, nil
}

// noRank is the place of a document without an id (none should be).
const noRank = math.MaxUint32

// keyOrderPage answers p's page from its filter's bitmaps in key order
// when p has no text, sort or facets to compute (ok false otherwise, or
// when a part of the filter is not a bitmap, or the columns are over
// their budget: the caller then searches through Bleve).
func (s *Searcher) keyOrderPage(ctx context.Context, snap *indexSnapshot, p *Plan, from, size int, withFacets bool) (res *Result, ok bool, err error) {
	if s.Columns == nil || !p.keyOrder() || (withFacets && len(p.Facets) > 0) {
		return nil, false, nil
	}
	if _, all := p.Text.(*query.MatchAllQuery); !all {
		return nil, false, nil
	}
	cols := s.columns()
	ev := &evaluator{snap: snap, segs: snap.Segments(), cols: cols}
	var sets []*roaring.Bitmap
	var rest []query.Query
	switch q := p.Query.(type) {
	case *bitmapFilter:
		sets, rest, err = ev.eval(q.q)
	case *query.MatchAllQuery:
		sets, rest, err = ev.eval(q)
	default:
		return nil, false, nil
	}
	if err == errColumnBudget || (err == nil && (sets == nil || len(rest) > 0)) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	want := from + size // the first this many of each segment may be on the page
	res = &Result{}
	var ids []string
	live(ev.segs, sets)
	for i, ss := range ev.segs {
		bm := sets[i]
		n := bm.GetCardinality()
		res.Found += n
		if n == 0 || want == 0 {
			continue
		}
		ko, err := s.Columns.column(s.ColumnsIndex, ss, idField)
		if err == errColumnBudget {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		docs, placed := firstInOrder(bm, ko, want)
		if !placed {
			return nil, false, nil
		}
		for _, d := range docs {
			id, err := ss.DocID(uint64(d))
			if err != nil {
				return nil, false, err
			}
			ids = append(ids, string(id))
		}
	}
	slices.Sort(ids)
	if from < len(ids) {
		for _, id := range ids[from:min(len(ids), want)] {
			k, err := fields.KeyOf(id)
			if err != nil {
				return nil, false, err
			}
			res.Keys = append(res.Keys, k)
		}
	}
	return res, true, ctx.Err()
}

// firstInOrder is the first want documents of bm in id order: each
// document's place is set in a bitset of places, read back in order.
// placed is false if a document of bm has no place.
func firstInOrder(bm *roaring.Bitmap, ko *numberColumn, want int) (docs []uint32, placed bool) {
	places := make([]uint64, (len(ko.docs)+63)/64)
	it := bm.Iterator()
	for it.HasNext() {
		d := it.Next()
		if int(d) >= len(ko.rank) || ko.rank[d] == noRank {
			return nil, false
		}
		r := ko.rank[d]
		places[r>>6] |= 1 << (r & 63)
	}
	for w, word := range places {
		for word != 0 && len(docs) < want {
			docs = append(docs, ko.docs[w*64+bits.TrailingZeros64(word)])
			word &= word - 1
		}
		if len(docs) == want {
			break
		}
	}
	return docs, true
}
