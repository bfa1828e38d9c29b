package engine

import (
	"encoding/hex"
	"fmt"
	"strings"

	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/foliodb/folio/internal/search/fields"
)

// A sort's keys are read from the same term columns as facets. Bleve's
// collector gives each match its sort key before it knows whether the
// match makes the page: the storage key every sort ends with came from the
// segment's stored fields (a chunk decompressed per match: 15% of the
// server's CPU under a common word), and a field's value from its doc
// values. A columnSort gives the same keys from columns: each segment's
// ids for the storage key, the `$num.` and `$kw.` shadows' terms for
// numbers and strings. Dates and booleans keep Bleve's sort.

// columnSort is one key of a sort, read from term columns, or for the
// storage key from id columns.
type columnSort struct {
	cols        []*termColumn // each segment's column of the field
	ids         []*idColumn   // each segment's ids, for the storage key
	docs        docLocator
	desc        bool
	missingLast bool // as Bleve's SortFieldMissingLast
}

// idColumn is one segment's document ids, as the bytes they are the hex
// of (the storage keys: half the memory, in the same order), one after
// another in one string, so that a document's id is a substring of it: a
// sort key without an allocation.
type idColumn struct {
	ids  string
	ends []uint32 // document d's id is ids[ends[d]:ends[d+1]]
}

func (c *idColumn) size() int64 {
	if c == nil {
		return 0
	}
	return int64(len(c.ids)) + int64(len(c.ends))*4
}

func (c *idColumn) of(doc uint64) (string, bool) {
	if doc+1 >= uint64(len(c.ends)) || c.ends[doc] == c.ends[doc+1] {
		return "", false
	}
	return c.ids[c.ends[doc]:c.ends[doc+1]], true
}

// buildIDColumn reads seg's ids and the document of each.
func buildIDColumn(seg segmentData) (*idColumn, error) {
	n := seg.Count()
	keys := make([]string, n)
	total := 0
	var bad error
	err := visitTerms(seg, idField, func(term string) func(uint64) {
		key, err := hex.DecodeString(term)
		if err != nil {
			bad = fmt.Errorf("search: a document id %q is not a storage key in hex", term)
			return nil
		}
		return func(doc uint64) {
			if doc < n {
				keys[doc] = string(key)
				total += len(key)
			}
		}
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Grow(total)
	c := &idColumn{ends: make([]uint32, n+1)}
	for d, k := range keys {
		b.WriteString(k)
		c.ends[d+1] = uint32(b.Len())
	}
	c.ids = b.String()
	return c, nil
}

// columnSortOrder is order with its keys read from columns where it can
// (columnSort), for the segments of snap; errColumnBudget if the columns
// do not all fit.
func columnSortOrder(snap *indexSnapshot, order bsearch.SortOrder, cols indexColumns) (bsearch.SortOrder, error) {
	segs := snap.Segments()
	out := make(bsearch.SortOrder, len(order))
	for i, key := range order {
		var field string
		var desc, missingLast bool
		switch k := key.(type) {
		case *bsearch.SortDocID:
			cs := &columnSort{ids: make([]*idColumn, len(segs)), docs: newDocLocator(segs), desc: k.Desc}
			for n, ss := range segs {
				var err error
				if cs.ids[n], err = cols.nc.idsColumn(cols.index, ss); err != nil {
					return nil, err
				}
			}
			out[i] = cs
			continue
		case *bsearch.SortField:
			if k.Type != bsearch.SortFieldAsString || k.Mode != bsearch.SortFieldDefault ||
				!(strings.HasPrefix(k.Field, fields.NumberPrefix) || strings.HasPrefix(k.Field, fields.KeywordPrefix)) {
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
// where Bleve places it; for the storage key, the match's id (as bytes,
// which order as their hex, Bleve's id, does).
func (s *columnSort) Value(d *bsearch.DocumentMatch) string {
	if seg, doc, ok := s.docs.locate(d.IndexInternalID); ok {
		if s.ids != nil {
			if id, ok := s.ids[seg].of(doc); ok {
				return id
			}
		} else if ords := s.cols[seg].of(doc); len(ords) > 0 {
			return s.cols[seg].terms[ords[0]]
		}
	}
	if s.missingLast == s.desc {
		return bsearch.LowTerm
	}
	return bsearch.HighTerm
}

func (s *columnSort) UpdateVisitor(string, []byte)    {}
func (s *columnSort) DecodeValue(value string) string { return value }
func (s *columnSort) Descending() bool                { return s.desc }
func (s *columnSort) RequiresDocID() bool             { return false }
func (s *columnSort) RequiresScoring() bool           { return false }
func (s *columnSort) RequiresFields() []string        { return nil }

// Reverse turns the order around, as Bleve's own sorts do for a search
// before a given hit.
func (s *columnSort) Reverse() {
	s.desc, s.missingLast = !s.desc, !s.missingLast
}

func (s *columnSort) Copy() bsearch.SearchSort {
	c := *s
	return &c
}
