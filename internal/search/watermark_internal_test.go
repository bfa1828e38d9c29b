package search

import (
	"path/filepath"
	"testing"
)

// A rebuild's new index has no watermark until every document is in: one
// cut short (a crash mid-rebuild) is not opened at the next start, and so
// is rebuilt, where with watermark 0 it was taken as complete and the
// whole log replayed into it, or every index rebuilt if the log no
// longer reached back to 0.
func TestRebuildIndexHasNoWatermarkUntilDone(t *testing.T) {
	ix := &Indexer{}
	ci := &collIndex{id: 7, db: "db", name: "c", dir: filepath.Join(t.TempDir(), "7")}
	idx, err := ix.create(ci, 0)
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
	if err := ix.open(ci); err == nil {
		ci.idx.Close()
		t.Fatal("an index created for a rebuild, without its watermark yet, was opened")
	}
	// One created from the log, at its collection's creation, has one.
	if idx, err = ix.create(ci, 5); err != nil {
		t.Fatal(err)
	}
	idx.Close()
	if err := ix.open(ci); err != nil || ci.applied != 5 {
		t.Fatalf("an index created at position 5: %v, applied %d", err, ci.applied)
	}
	ci.idx.Close()
}

// An index whose fields are of another format than today's (or of none,
// made before formats were kept) is not opened, and so is rebuilt: its
// terms would not answer today's queries.
func TestIndexOfAnotherFormatIsNotOpened(t *testing.T) {
	ix := &Indexer{}
	ci := &collIndex{id: 9, db: "db", name: "c", dir: filepath.Join(t.TempDir(), "9")}
	for _, format := range [][]byte{nil, encodePosition(indexFormat - 1)} {
		idx, err := ix.create(ci, 5)
		if err != nil {
			t.Fatal(err)
		}
		if format == nil {
			err = idx.DeleteInternal(formatKey)
		} else {
			err = idx.SetInternal(formatKey, format)
		}
		if err != nil {
			t.Fatal(err)
		}
		idx.Close()
		if err := ix.open(ci); err == nil {
			ci.idx.Close()
			t.Fatalf("an index of format %x was opened", format)
		}
	}
	idx, err := ix.create(ci, 5)
	if err != nil {
		t.Fatal(err)
	}
	idx.Close()
	if err := ix.open(ci); err != nil {
		t.Fatalf("an index of today's format: %v", err)
	}
	ci.idx.Close()
}
