package search

import (
	"strings"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bsearch "github.com/blevesearch/bleve/v2/search"
)

// A sort's keys are read from the same term columns as facets. Bleve's
// collector gives each match its sort key before it knows whether the
// match makes the page: the storage key every sort ends with came from the
// segment's stored fields (a chunk decompressed per match: 15% of the
// server's CPU under a common word), and a field's value from its doc
// values. A columnSort gives the same keys from columns: the `_id` terms
// for the storage key, the `$num.` and `$kw.` shadows' terms for numbers
// and strings. Dates and booleans keep Bleve's sort.

// columnSort is one key of a sort, read from term columns.
type columnSort struct {
	cols        []*termColumn // each segment's column of the field
	docs        docLocator
	desc        bool
	missingLast bool // as Bleve's SortFieldMissingLast
}

// columnSortOrder is order with its keys read from columns where it can
// (columnSort), for the segments of snap; errColumnBudget if the columns
// do not all fit.
func columnSortOrder(snap *scorch.IndexSnapshot, order bsearch.SortOrder, cols indexColumns) (bsearch.SortOrder, error) {
	segs := snap.Segments()
	out := make(bsearch.SortOrder, len(order))
	for i, key := range order {
		var field string
		var desc, missingLast bool
		switch k := key.(type) {
		case *bsearch.SortDocID:
			field, desc = idField, k.Desc
		case *bsearch.SortField:
			if k.Type != bsearch.SortFieldAsString || k.Mode != bsearch.SortFieldDefault ||
				!(strings.HasPrefix(k.Field, numberPrefix) || strings.HasPrefix(k.Field, keywordPrefix)) {
				out[i] = key
				continue
			}
			field, desc, missingLast = k.Field, k.Desc, k.Missing == bsearch.SortFieldMissingLast
		default:
			out[i] = key
			continue
		}
		cs := &columnSort{cols: make([]*termColumn, len(segs)), docs: newDocLocator(segs), desc: desc, missingLast: missingLast}
		for n, ss := range segs {
			var err error
			if cs.cols[n], err = cols.nc.termsColumn(cols.index, ss, field); err != nil {
				return nil, err
			}
		}
		out[i] = cs
	}
	return out, nil
}

// Value is the match's first term of the field in dictionary order, as
// Bleve's SortField gives it from doc values (which hold a document's
// terms in that order), or the term that places a match without one
// where Bleve places it.
func (s *columnSort) Value(d *bsearch.DocumentMatch) string {
	if seg, doc, ok := s.docs.locate(d.IndexInternalID); ok {
		if ords := s.cols[seg].of(doc); len(ords) > 0 {
			return s.cols[seg].terms[ords[0]]
		}
	}
	if s.missingLast == s.desc {
		return bsearch.LowTerm
	}
	return bsearch.HighTerm
}

func (s *columnSort) UpdateVisitor(string, []byte)  {}
func (s *columnSort) DecodeValue(value string) string { return value }
func (s *columnSort) Descending() bool               { return s.desc }
func (s *columnSort) RequiresDocID() bool            { return false }
func (s *columnSort) RequiresScoring() bool          { return false }
func (s *columnSort) RequiresFields() []string       { return nil }

// Reverse turns the order around, as Bleve's own sorts do for a search
// before a given hit.
func (s *columnSort) Reverse() {
	s.desc, s.missingLast = !s.desc, !s.missingLast
}

func (s *columnSort) Copy() bsearch.SearchSort {
	c := *s
	return &c
}
