package engine

import (
	"encoding/binary"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// This file is the engine's one door into Bleve's internals: everything
// it takes from scorch and its segments beyond Bleve's public query and
// searcher API is here, and bleve_internals_test.go checks each of these
// assumptions against the Bleve that go.mod pins. A Bleve upgrade that
// changes one fails that test by name, rather than the engine quietly
// answering wrong (or slowly, through a fallback).
//
// What the engine relies on:
//   - an index reader of a scorch index is a *scorch.IndexSnapshot, whose
//     segments are *scorch.SegmentSnapshot, each with an id that stays
//     the same while the segment lives, its deleted documents, and its
//     documents' ids by number;
//   - a document's internal id (index.IndexInternalID) is its number in
//     the snapshot as 8 bytes big-endian, the segments' documents numbered
//     one segment after another (internalID, docNumber);
//   - a segment's dictionary of a field iterates its terms in byte order,
//     and each term's postings give its documents' numbers in the segment;
//   - zap's postings lists hand their documents over as a roaring bitmap
//     (OrInto), of the roaring version this module links;
//   - a document's id is indexed as a term of the field idField, and a
//     boolean as the term "T" or "F" (boolTerm).

type (
	// indexSnapshot is a point-in-time view of a scorch index: its
	// segments, held until the reader is closed.
	indexSnapshot = scorch.IndexSnapshot
	// segmentSnapshot is one segment of a snapshot, with its deletions.
	segmentSnapshot = scorch.SegmentSnapshot
	// segmentData is a segment's immutable data: dictionaries, postings.
	segmentData = segment.Segment
)

// snapshotOf is the scorch snapshot behind r; ok is false for another
// kind of index (whose searches Bleve's own searchers answer).
func snapshotOf(r index.IndexReader) (snap *indexSnapshot, ok bool) {
	snap, ok = r.(*scorch.IndexSnapshot)
	return snap, ok
}

// idField is the field Bleve indexes a document's id under.
const idField = "_id"

// boolTerm is the term Bleve indexes a boolean as.
func boolTerm(b bool) string {
	if b {
		return "T"
	}
	return "F"
}

// internalID is Bleve's internal id of the document numbered n in its
// snapshot, appended to buf.
func internalID(buf []byte, n uint64) index.IndexInternalID {
	return binary.BigEndian.AppendUint64(buf, n)
}

// docNumber is the snapshot's number of the document whose internal id is
// id; ok is false for an id of another form.
func docNumber(id []byte) (n uint64, ok bool) {
	if len(id) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(id), true
}

// visitTerms visits field's terms in seg in order: for each, visit says
// what to do with each document that holds it (nil: skip the term).
func visitTerms(seg segmentData, field string, visit func(term string) func(doc uint64)) error {
	dict, err := seg.Dictionary(field)
	if err != nil {
		return err
	}
	var pl segment.PostingsList
	var pi segment.PostingsIterator
	it := dict.AutomatonIterator(nil, nil, nil)
	for {
		e, err := it.Next()
		if err != nil || e == nil {
			return err
		}
		each := visit(e.Term)
		if each == nil {
			continue
		}
		if pl, err = dict.PostingsList([]byte(e.Term), nil, pl); err != nil {
			return err
		}
		pi = pl.Iterator(false, false, false, pi)
		for {
			p, err := pi.Next()
			if err != nil {
				return err
			}
			if p == nil {
				break
			}
			each(p.Number())
		}
	}
}

// postingsInto is how zap hands over a postings list as a bitmap.
type postingsInto interface {
	OrInto(*roaring.Bitmap)
}

// termPostings adds to each of sets the documents of the matching segment
// of segs that hold term in field.
func termPostings(segs []*segmentSnapshot, field, term string, sets []*roaring.Bitmap) error {
	var pl segment.PostingsList
	var pi segment.PostingsIterator
	for i, ss := range segs {
		dict, err := ss.Segment().Dictionary(field)
		if err != nil {
			return err
		}
		if pl, err = dict.PostingsList([]byte(term), nil, pl); err != nil {
			return err
		}
		if into, ok := pl.(postingsInto); ok {
			into.OrInto(sets[i])
			continue
		}
		pi = pl.Iterator(false, false, false, pi)
		for {
			p, err := pi.Next()
			if err != nil {
				return err
			}
			if p == nil {
				break
			}
			sets[i].Add(uint32(p.Number()))
		}
	}
	return nil
}
