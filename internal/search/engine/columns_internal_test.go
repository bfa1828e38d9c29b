package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/foliodb/folio/internal/search/fields"
)

// numberTestSnapshot indexes docs documents with a number field "n" of
// value i%50 into an index in memory, in batches of batch (a segment
// each), deletes every document i with deleted(i), and returns a snapshot
// of the index (closed when the test ends).
func numberTestSnapshot(t *testing.T, docs, batch int, deleted func(int) bool) *indexSnapshot {
	t.Helper()
	s, idx, an := newTestIndexIn(t, `{"title":"docs","properties":{"id":{"type":"integer"},"n":{"type":"integer"}},"primary_key":["id"]}`, "")
	for from := 0; from < docs; from += batch {
		b := idx.NewBatch()
		for i := from; i < min(docs, from+batch); i++ {
			addDocument(t, b, s, an, fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, `{"id":%d,"n":%d}`, i, i%50))
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	b := idx.NewBatch()
	for i := range docs {
		if deleted(i) {
			b.Delete(fields.DocID(fmt.Appendf(nil, "k%05d", i)))
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	ii, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ii.Reader()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.(*indexSnapshot)
}

// TestRangeSearcherAdvance: a range searcher gives its documents in order,
// exactly the live ones in the range (deleted ones in earlier segments
// shift nothing), and Advance gives the first one at or after the id
// asked for, within a segment and across segments.
func TestRangeSearcherAdvance(t *testing.T) {
	deleted := func(i int) bool { return i < 1400 && i%3 == 0 }
	snap := numberTestSnapshot(t, 3000, 700, deleted)
	if len(snap.Segments()) < 5 {
		t.Fatalf("%d segments: the test needs several", len(snap.Segments()))
	}
	want := map[string]bool{}
	for i := range 3000 {
		if n := i % 50; n >= 10 && n <= 12 && !deleted(i) {
			want[fields.DocID(fmt.Appendf(nil, "k%05d", i))] = true
		}
	}
	q := NewNumberRange("n", fields.NumberKey(10), fields.NumberKey(12))
	ctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(16, 0)}
	cols := indexColumns{NewColumns(DefaultColumnBytes), 1}
	open := func() bsearch.Searcher {
		s, err := q.Searcher(withColumns(context.Background(), cols), snap, nil, bsearch.SearcherOptions{Score: "none"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*bitmapSearcher); !ok {
			t.Fatalf("searcher %T, not the bitmap searcher", s)
		}
		return s
	}
	var all []uint64
	s := open()
	for {
		dm, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if dm == nil {
			break
		}
		id, err := snap.ExternalID(dm.IndexInternalID)
		if err != nil {
			t.Fatal(err)
		}
		if !want[id] {
			t.Fatalf("found %s, which is not a live document in the range", id)
		}
		all = append(all, binary.BigEndian.Uint64(dm.IndexInternalID))
	}
	if len(all) != len(want) || uint64(len(all)) != s.Count() || !slices.IsSorted(all) {
		t.Fatalf("%d documents (count %d), sorted %v; want %d", len(all), s.Count(), slices.IsSorted(all), len(want))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		s := open()
		var at uint64
		for at <= all[len(all)-1] {
			at += uint64(rng.IntN(200))
			id := binary.BigEndian.AppendUint64(nil, at)
			dm, err := s.Advance(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := slices.BinarySearch(all, at)
			if k == len(all) {
				if dm != nil {
					t.Fatalf("Advance(%d) gave %x past the last", at, dm.IndexInternalID)
				}
				break
			}
			if dm == nil || binary.BigEndian.Uint64(dm.IndexInternalID) != all[k] {
				t.Fatalf("Advance(%d) gave %v, want %d", at, dm, all[k])
			}
			at = all[k] + 1
		}
	}
}

// TestNumberColumnsBudget: the columns stay within their byte budget,
// least recently used out first but never one used in the last seconds;
// a column that does not fit is not kept, is not built again while it
// is remembered, evicts no other when even that would not make it fit,
// and its range is answered from the terms; an idle column goes.
func TestNumberColumnsBudget(t *testing.T) {
	snap := numberTestSnapshot(t, 300, 100, func(int) bool { return false })
	segs := snap.Segments()
	if len(segs) != 3 {
		t.Fatalf("%d segments, want 3", len(segs))
	}
	const column = 100 * 12 // 100 values
	nc := NewColumns(2 * column)
	field := fields.Number("n")
	backdate := func(seg int, ago time.Duration) {
		nc.mu.Lock()
		defer nc.mu.Unlock()
		nc.cols[columnKey{1, segs[seg].Id(), field, valueOrder}].used.Store(time.Now().Add(-ago).UnixNano())
	}
	for i := range 2 {
		if _, err := nc.column(1, segs[i], field); err != nil {
			t.Fatal(err)
		}
	}
	// Both columns were just used: the third does not fit beside them.
	if _, err := nc.column(1, segs[2], field); err != errColumnBudget {
		t.Fatalf("a third column beside two busy ones: %v", err)
	}
	if _, err := nc.column(1, segs[2], field); err != errColumnBudget {
		t.Fatalf("the third column asked again: %v", err)
	}
	if c := nc.cols[columnKey{1, segs[2].Id(), field, valueOrder}]; c == nil || c.err != errColumnBudget {
		t.Fatal("the column that did not fit was not remembered: every search would build it again")
	}
	if nc.Bytes() != 2*column {
		t.Fatalf("%d bytes, want the first two columns'", nc.Bytes())
	}
	// Once they have not been used for a while, the older goes for it.
	delete(nc.cols, columnKey{1, segs[2].Id(), field, valueOrder}) // as if idle
	backdate(0, 30*time.Second)
	backdate(1, 20*time.Second)
	if _, err := nc.column(1, segs[2], field); err != nil {
		t.Fatal(err)
	}
	if nc.Bytes() != 2*column {
		t.Fatalf("%d bytes, want two columns'", nc.Bytes())
	}
	if _, ok := nc.cols[columnKey{1, segs[0].Id(), field, valueOrder}]; ok {
		t.Fatal("the least recently used column was kept")
	}
	// A column that would not fit even with every other column gone takes
	// none of them with it.
	keep := NewColumns(column + 100)
	if _, err := keep.column(1, segs[0], idField); err != nil { // 8 bytes a document: 800
		t.Fatal(err)
	}
	keep.mu.Lock()
	keep.cols[columnKey{1, segs[0].Id(), idField, idOrder}].used.Store(time.Now().Add(-30 * time.Second).UnixNano())
	keep.mu.Unlock()
	if _, err := keep.termsColumn(1, segs[0], field); err != errColumnBudget { // values, terms and ordinals: more than the budget
		t.Fatalf("a facet column larger than the budget: %v", err)
	}
	if keep.Bytes() != 800 {
		t.Fatalf("%d bytes after a column that could not fit; want the key order's 800 still there", keep.Bytes())
	}
	// A column larger than the budget: the range reads the terms.
	tiny := NewColumns(column - 1)
	q := NewNumberRange("n", fields.NumberKey(3), fields.NumberKey(3))
	s, err := q.Searcher(withColumns(context.Background(), indexColumns{tiny, 1}), snap, nil, bsearch.SearcherOptions{Score: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*bitmapSearcher); ok || s.Count() != 6 {
		t.Fatalf("the range over the budget: %T counting %d, want the terms' searcher counting 6", s, s.Count())
	}
	if tiny.Bytes() != 0 {
		t.Fatalf("%d bytes after a column over the budget", tiny.Bytes())
	}
	backdate(1, time.Hour)
	backdate(2, time.Hour)
	nc.Prune()
	if nc.Bytes() != 0 || len(nc.cols) != 0 {
		t.Fatalf("%d bytes in %d columns after they were idle", nc.Bytes(), len(nc.cols))
	}
}
