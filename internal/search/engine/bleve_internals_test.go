package engine

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"

	"github.com/foliodb/folio/internal/search/fields"
)

// checkedWith are the versions of Bleve's modules that segments.go's
// assumptions were last checked against. An upgrade fails
// TestBleveVersionsChecked until someone has read segments.go's list
// against the new versions (TestBleveInternals checks most of it) and
// updated these.
var checkedWith = map[string]string{
	"github.com/blevesearch/bleve/v2":              "v2.5.7",
	"github.com/blevesearch/bleve_index_api":       "v1.2.11",
	"github.com/blevesearch/scorch_segment_api/v2": "v2.3.13",
	"github.com/blevesearch/zapx/v16":              "v16.2.8",
	"github.com/RoaringBitmap/roaring/v2":          "v2.4.5",
}

// goModVersions are the versions go.mod requires of the modules in
// checkedWith.
func goModVersions(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatalf("read go.mod: %v", err)
	}
	out := map[string]string{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 {
			if _, ok := checkedWith[f[0]]; ok {
				out[f[0]] = f[1]
			}
		}
	}
	return out
}

// bleveVersions names the versions go.mod pins, for the failures' messages.
func bleveVersions(t *testing.T) string {
	mods := goModVersions(t)
	var out []string
	for _, m := range slices.Sorted(maps.Keys(checkedWith)) {
		out = append(out, m+" "+mods[m])
	}
	return strings.Join(out, ", ")
}

func TestBleveVersionsChecked(t *testing.T) {
	mods := goModVersions(t)
	for mod, checked := range checkedWith {
		switch got, ok := mods[mod]; {
		case !ok:
			t.Errorf("go.mod no longer requires %s: the engine's reach into Bleve (segments.go) was checked against %s %s; see what replaced it", mod, mod, checked)
		case got != checked:
			t.Errorf("go.mod requires %s %s, but the engine's reach into Bleve's internals (internal/search/engine/segments.go) was last checked against %s: "+
				"read the list at the top of segments.go against the new version (TestBleveInternals checks most of it; run the engine's and search's tests and BenchmarkQueryKinds), then update checkedWith",
				mod, got, checked)
		}
	}
}

// TestBleveInternals checks each assumption segments.go lists, on an index
// of several segments with a deleted document, in memory and on disk (whose
// segments are read from files).
func TestBleveInternals(t *testing.T) {
	for name, dir := range map[string]string{"in memory": "", "on disk": t.TempDir() + "/1"} {
		t.Run(name, func(t *testing.T) {
			checkBleveInternals(t, dir)
		})
	}
}

func checkBleveInternals(t *testing.T, dir string) {
	pinned := bleveVersions(t)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("Bleve's internals changed under the engine (go.mod: %s): %s. The engine relies on it in internal/search/engine/segments.go; see the list there",
			pinned, fmt.Sprintf(format, args...))
	}
	s, idx, an := newTestIndexIn(t, `{"title":"docs","properties":{"id":{"type":"integer"},"n":{"type":"integer"},"on":{"type":"boolean"}},"primary_key":["id"]}`, dir)
	const batches, per = 3, 20
	for from := 0; from < batches*per; from += per {
		b := idx.NewBatch()
		for i := from; i < from+per; i++ {
			addDocument(t, b, s, an, fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, `{"id":%d,"n":%d,"on":%v}`, i, (i*7)%25-5, i%3 == 0))
		}
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	deleted := fields.DocID([]byte("k005"))
	b := idx.NewBatch()
	b.Delete(deleted)
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
	defer r.Close()
	snap, ok := snapshotOf(r)
	if !ok || snap == nil {
		fail("a reader of a scorch index is a %T, not a *scorch.IndexSnapshot: every search falls back to Bleve's own searchers", r)
	}
	segs := snap.Segments()
	if dir == "" && len(segs) < 2 { // on disk, the persister may have merged them
		t.Fatalf("%d segments: the test needs several", len(segs))
	}

	// Internal ids: a document's number in the snapshot, 8 bytes
	// big-endian, segments numbered one after another.
	var offset uint64
	ids := map[string]uint64{} // each live document's number in the snapshot
	for _, ss := range segs {
		n := ss.Segment().Count()
		for d := range n {
			id, err := ss.DocID(d)
			if err != nil {
				fail("segment %d's DocID(%d): %v", ss.Id(), d, err)
			}
			if del := ss.Deleted(); del != nil && del.Contains(uint32(d)) {
				if string(id) != deleted {
					fail("segment %d's Deleted() holds %q, which was not deleted", ss.Id(), id)
				}
				continue
			}
			ext, err := snap.ExternalID(internalID(nil, offset+d))
			if err != nil || ext != string(id) {
				fail("internal id %x (document %d of segment %d, after %d documents of the segments before it) is %q (%v), not %q: internal ids are no longer the snapshot's document numbers big-endian",
					internalID(nil, offset+d), d, ss.Id(), offset, ext, err, id)
			}
			if back, ok := docNumber(internalID(nil, offset+d)); !ok || back != offset+d {
				fail("docNumber does not read back internalID")
			}
			ids[string(id)] = offset + d
		}
		offset += n
	}
	if _, live := ids[deleted]; live || len(ids) != batches*per-1 {
		fail("%d live documents, %q among them %v: Deleted() does not hold the deleted document", len(ids), deleted, ids[deleted] != 0)
	}

	// Bleve's own searchers give the same internal ids.
	tq := bleve.NewTermQuery(fields.DocID([]byte("k042")))
	tq.SetField(idField)
	sr, err := tq.Searcher(context.Background(), r, idx.Mapping(), bsearch.SearcherOptions{Score: "none"})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := sr.Next(&bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(1, 0)})
	sr.Close()
	if err != nil || dm == nil {
		fail("a term query on %s finds no document for k042 (%v): document ids are not indexed under that field", idField, err)
	}
	if n, ok := docNumber(dm.IndexInternalID); !ok || n != ids[fields.DocID([]byte("k042"))] {
		fail("Bleve's term searcher gives k042 the internal id %x, not its number in the snapshot %d", dm.IndexInternalID, ids[fields.DocID([]byte("k042"))])
	}

	// Dictionaries in byte order, postings by number in the segment;
	// every document's id under idField.
	for _, ss := range segs {
		var terms []string
		err := visitTerms(ss.Segment(), idField, func(term string) func(uint64) {
			terms = append(terms, term)
			return func(doc uint64) {
				if id, err := ss.DocID(doc); err != nil || string(id) != term {
					fail("the postings of id %q in segment %d give document %d, whose id is %q (%v)", term, ss.Id(), doc, id, err)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(terms)) != ss.Segment().Count() || !slices.IsSorted(terms) {
			fail("segment %d's %s dictionary has %d terms (sorted: %v) for %d documents", ss.Id(), idField, len(terms), slices.IsSorted(terms), ss.Segment().Count())
		}
		var nums []string
		if err := visitTerms(ss.Segment(), fields.Number("n"), func(term string) func(uint64) {
			nums = append(nums, term)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(nums) == 0 || !slices.IsSorted(nums) {
			fail("segment %d's dictionary of %s iterates %v, not in byte order", ss.Id(), fields.Number("n"), nums)
		}
	}

	// Postings lists hand their documents over as a roaring bitmap, and a
	// boolean is the term "T" or "F".
	dict, err := segs[0].Segment().Dictionary("on")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := dict.PostingsList([]byte(boolTerm(true)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pl.(postingsInto); !ok {
		fail("a postings list (%T) has no OrInto(*roaring.Bitmap) of the roaring this module links: a term's bitmap is read posting by posting, correct but slow", pl)
	}
	sets := []*roaring.Bitmap{roaring.New()}
	if err := termPostings(segs[:1], "on", boolTerm(true), sets); err != nil {
		t.Fatal(err)
	}
	bq := bleve.NewBoolFieldQuery(true)
	bq.SetField("on")
	want := roaring.New()
	bs, err := bq.Searcher(context.Background(), r, idx.Mapping(), bsearch.SearcherOptions{Score: "none"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(16, 0)}
	for {
		dm, err := bs.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if dm == nil {
			break
		}
		if n, _ := docNumber(dm.IndexInternalID); n < segs[0].Segment().Count() {
			want.Add(uint32(n))
		}
		ctx.DocumentMatchPool.Put(dm)
	}
	bs.Close()
	if want.IsEmpty() || !sets[0].Equals(want) {
		fail("the term %q of a boolean field holds %v in the first segment; Bleve's bool query matches %v: booleans are no longer indexed as \"T\" and \"F\"", boolTerm(true), sets[0].ToArray(), want.ToArray())
	}

	// A segment keeps its id while it lives: columns are keyed by it.
	b = idx.NewBatch()
	addDocument(t, b, s, an, []byte("k999"), []byte(`{"id":999,"n":1,"on":true}`))
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	r2, err := ii.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	snap2, _ := snapshotOf(r2)
	same := 0
	for _, ss2 := range snap2.Segments() {
		for _, ss := range segs {
			if ss.Id() == ss2.Id() {
				if ss.Segment().Count() != ss2.Segment().Count() {
					fail("segment %d holds %d documents in one snapshot, %d in the next: a segment's id no longer names the same data", ss.Id(), ss.Segment().Count(), ss2.Segment().Count())
				}
				same++
			}
		}
	}
	if dir == "" && same != len(segs) {
		fail("of %d segments, %d kept their ids in the next snapshot of an index that merges nothing", len(segs), same)
	}
}
