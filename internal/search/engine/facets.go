package engine

import (
	"slices"
	"sort"
	"strings"

	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/search/fields"
)

// Facets are counted from columns of Folio's own, as the collector hands
// the matches over. Bleve's facets read each match's terms from doc
// values, which are kept in compressed chunks: every match decompressed
// the chunk that held it, for each field, so that a facet search over a
// few dozen matches of large documents spent a third of its time in
// snappy. A column holds one segment's terms of a field, each once, and
// each document's terms as their places among them, built once per
// segment from the field's dictionary and postings, and kept under the
// same budget as the number columns. The counts are the same as Bleve's:
// a document's doc values are its distinct terms of the field, which is
// what its postings give.

// termColumn is one segment's terms of one field, and each document's
// terms as ordinals: places in terms.
type termColumn struct {
	terms  []string  // the dictionary, in order
	values []float64 // for a number shadow ($num.): each term's number
	starts []uint32  // document d's ordinals are ords[starts[d]:starts[d+1]], ascending
	ords   []uint32
}

func (c *termColumn) size() int64 {
	if c == nil {
		return 0
	}
	n := int64(len(c.terms))*16 + int64(len(c.values))*8 + int64(len(c.starts)+len(c.ords))*4
	for _, t := range c.terms {
		n += int64(len(t))
	}
	return n
}

// of is the ordinals of doc's terms.
func (c *termColumn) of(doc uint64) []uint32 {
	if doc+1 >= uint64(len(c.starts)) {
		return nil
	}
	return c.ords[c.starts[doc]:c.starts[doc+1]]
}

// buildTermColumn reads field's dictionary in seg, and each term's
// documents.
func buildTermColumn(seg segmentData, field string) (*termColumn, error) {
	c := &termColumn{}
	number := strings.HasPrefix(field, fields.NumberPrefix)
	var docs, ords []uint32 // docs[i] holds the term ords[i], in term order
	err := visitTerms(seg, field, func(term string) func(uint64) {
		if number {
			x, ok := fields.NumberOf([]byte(term))
			if !ok {
				return nil
			}
			c.values = append(c.values, x)
		}
		ord := uint32(len(c.terms))
		c.terms = append(c.terms, strings.Clone(term))
		return func(doc uint64) {
			docs = append(docs, uint32(doc))
			ords = append(ords, ord)
		}
	})
	if err != nil {
		return nil, err
	}
	n := seg.Count()
	c.starts = make([]uint32, n+1)
	for _, d := range docs {
		if uint64(d) < n {
			c.starts[d+1]++
		}
	}
	for d := uint64(1); d <= n; d++ {
		c.starts[d] += c.starts[d-1]
	}
	c.ords = make([]uint32, c.starts[n])
	next := slices.Clone(c.starts[:n])
	for i, d := range docs {
		if uint64(d) < n {
			c.ords[next[d]] = ords[i]
			next[d]++
		}
	}
	return c, nil
}

// docLocator finds a match's segment and its number there, from Bleve's
// id of it: its number in the snapshot, big-endian, the segments' numbers
// running on from one segment to the next.
type docLocator struct {
	offsets []uint64 // each segment's first document number in the snapshot, then their total
	seg     int      // the segment of the last match: matches come in order
}

func newDocLocator(segs []*segmentSnapshot) docLocator {
	l := docLocator{offsets: make([]uint64, len(segs)+1)}
	for i, ss := range segs {
		l.offsets[i+1] = l.offsets[i] + ss.Segment().Count()
	}
	return l
}

// locate returns the segment of the document id and its number there.
func (l *docLocator) locate(id []byte) (seg int, doc uint64, ok bool) {
	n, ok := docNumber(id)
	if !ok {
		return 0, 0, false
	}
	if n < l.offsets[l.seg] || n >= l.offsets[l.seg+1] {
		l.seg = sort.Search(len(l.offsets)-1, func(i int) bool { return l.offsets[i+1] > n })
		if l.seg >= len(l.offsets)-1 {
			l.seg = 0
			return 0, 0, false
		}
	}
	return l.seg, n - l.offsets[l.seg], true
}

// facetCounter counts a search's facets from the columns of its
// snapshot's segments, one match at a time.
type facetCounter struct {
	docs   docLocator
	facets []*facetCount
}

// facetCount is one facet's counts: of the terms of its keyword shadow,
// and for a number field the stats of its $num. shadow.
type facetCount struct {
	path   string
	size   int
	terms  []*termColumn // each segment's
	counts []*ordCounts  // each segment's; made at its first match
	total  int64         // values seen
	// numbers is each segment's $num. column, for a number field, read
	// into its stats.
	numbers []*termColumn
	numberStats
}

// newFacetCounter builds, or finds, every column the facets need in
// snap's segments; errColumnBudget if they do not all fit.
func newFacetCounter(snap *indexSnapshot, facets []Facet, cols indexColumns) (*facetCounter, error) {
	segs := snap.Segments()
	fc := &facetCounter{docs: newDocLocator(segs)}
	for _, facet := range facets {
		f := &facetCount{path: facet.Path, size: max(facet.Size, 0), terms: make([]*termColumn, len(segs)), counts: make([]*ordCounts, len(segs))}
		if facet.Numeric {
			f.numbers = make([]*termColumn, len(segs))
		}
		for i, ss := range segs {
			var err error
			if f.terms[i], err = cols.nc.termsColumn(cols.index, ss, fields.Keyword(facet.Path)); err != nil {
				return nil, err
			}
			if f.numbers != nil {
				if f.numbers[i], err = cols.nc.termsColumn(cols.index, ss, fields.Number(facet.Path)); err != nil {
					return nil, err
				}
			}
		}
		fc.facets = append(fc.facets, f)
	}
	return fc, nil
}

// add counts the match with Bleve's id id (the document's number in the
// snapshot, big-endian).
func (fc *facetCounter) add(id []byte) {
	seg, doc, ok := fc.docs.locate(id)
	if !ok {
		return
	}
	for _, f := range fc.facets {
		col := f.terms[seg]
		if ords := col.of(doc); len(ords) > 0 {
			if f.counts[seg] == nil {
				f.counts[seg] = newOrdCounts(len(col.terms))
			}
			for _, o := range ords {
				f.counts[seg].add(o)
			}
			f.total += int64(len(ords))
		}
		if f.numbers != nil {
			nums := f.numbers[seg]
			for _, o := range nums.of(doc) {
				f.add(nums.values[o])
			}
		}
	}
}

// ordCounts counts the matches of each ordinal of a segment's column:
// in an array when the field has few distinct values, in a map when it
// has many, so that a few matches of a field of unique values cost what
// they hold, not a counter for every value.
type ordCounts struct {
	dense  []uint32
	sparse map[uint32]uint32
}

// DenseOrdinals is the most distinct values of a segment's field that a
// facet counts in an array (16 KiB); more are counted in a map. A variable
// for the tests, which count both ways.
var DenseOrdinals = 4096

func newOrdCounts(terms int) *ordCounts {
	if terms <= DenseOrdinals {
		return &ordCounts{dense: make([]uint32, terms)}
	}
	return &ordCounts{sparse: map[uint32]uint32{}}
}

func (c *ordCounts) add(o uint32) {
	if c.dense != nil {
		c.dense[o]++
	} else {
		c.sparse[o]++
	}
}

// each calls fn with every ordinal counted and its count.
func (c *ordCounts) each(fn func(o, n uint32)) {
	for o, n := range c.dense {
		if n > 0 {
			fn(uint32(o), n)
		}
	}
	for o, n := range c.sparse {
		fn(o, n)
	}
}

// results are the facets, each value's count summed over the segments,
// the most frequent first (ties in value order) as Bleve orders them.
func (fc *facetCounter) results() map[string]FacetResult {
	out := make(map[string]FacetResult, len(fc.facets))
	for _, f := range fc.facets {
		fr := FacetResult{Counts: f.top(), Stats: FacetStats{Count: f.total}}
		if f.numbers != nil {
			fr.Stats = f.stats()
		}
		out[f.path] = fr
	}
	return out
}

// top is the facet's size most frequent values. A field may hold a value
// per document, so the values are not sorted, only kept while among the
// best so far.
func (f *facetCount) top() []FacetCount {
	best := make([]FacetCount, 0, min(f.size, 64))
	if f.size == 0 {
		return best
	}
	consider := func(v string, c int64) {
		x := FacetCount{Value: v, Count: c}
		if len(best) == f.size && !before(x, best[len(best)-1]) {
			return
		}
		i, _ := slices.BinarySearchFunc(best, x, func(a, b FacetCount) int {
			if before(a, b) {
				return -1
			}
			return 1
		})
		if len(best) == f.size {
			best = best[:len(best)-1]
		}
		best = slices.Insert(best, i, x)
	}
	var segs []int // the segments with matches
	for seg, counts := range f.counts {
		if counts != nil {
			segs = append(segs, seg)
		}
	}
	if len(segs) == 1 { // each value once: no need to add up
		f.counts[segs[0]].each(func(o, c uint32) { consider(f.terms[segs[0]].terms[o], int64(c)) })
		return best
	}
	byValue := map[string]int64{}
	for _, seg := range segs {
		f.counts[seg].each(func(o, c uint32) { byValue[f.terms[seg].terms[o]] += int64(c) })
	}
	for v, c := range byValue {
		consider(v, c)
	}
	return best
}

// before tells whether a facet count goes before b: more frequent, or as
// frequent and first in value order.
func before(a, b FacetCount) bool {
	return a.Count > b.Count || (a.Count == b.Count && a.Value < b.Value)
}

// facetSearcher hands its searcher's matches to the collector, counting
// each one's facets on the way. It is the searcher Bleve's collector
// calls, which only ever calls Next; a parent that called both Advance
// and Next could count a match twice.
type facetSearcher struct {
	bsearch.Searcher
	fc *facetCounter
}

func (s *facetSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	dm, err := s.Searcher.Next(ctx)
	if dm != nil {
		s.fc.add(dm.IndexInternalID)
	}
	return dm, err
}

func (s *facetSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	dm, err := s.Searcher.Advance(ctx, id)
	if dm != nil {
		s.fc.add(dm.IndexInternalID)
	}
	return dm, err
}
