package search

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/kv"
)

// heldIndex is an index whose batches Bleve never persists until the
// test says so: Batch hands their persisted callbacks over instead.
type heldIndex struct {
	bleveIndex // nil: only Batch and Close are called
	persisted  chan index.BatchCallback
	fail       bool
}

func (h *heldIndex) Batch(b *bleve.Batch) error {
	if h.fail {
		return errors.New("no space left on device")
	}
	h.persisted <- b.PersistedCallback()
	return nil
}

func (h *heldIndex) Close() error { return nil }

// At most maxUnpersisted batches wait to be persisted: the next waits for
// the oldest; a failed batch frees its slot; Close waits for the rest.
func TestBoundedIndexWaitsForPersistence(t *testing.T) {
	held := &heldIndex{persisted: make(chan index.BatchCallback, 100)}
	x := newBoundedIndex(held)
	mem, err := bleve.NewMemOnly(bleve.NewIndexMapping()) // a maker of batches
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for range maxUnpersisted {
		if err := x.Batch(mem.NewBatch()); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- x.Batch(mem.NewBatch()) }()
	select {
	case err := <-done:
		t.Fatalf("batch %d returned (%v) with %d unpersisted", maxUnpersisted+1, err, maxUnpersisted)
	case <-time.After(100 * time.Millisecond):
	}
	(<-held.persisted)(nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A failed batch gives its slot back: with one slot free, a failed
	// batch and then a good one both go through at once.
	(<-held.persisted)(nil)
	held.fail = true
	if err := x.Batch(mem.NewBatch()); err == nil {
		t.Fatal("a failed batch reported success")
	}
	held.fail = false
	go func() { done <- x.Batch(mem.NewBatch()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the failed batch kept its slot")
	}

	closed := make(chan error, 1)
	go func() { closed <- x.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned with batches not persisted")
	case <-time.After(100 * time.Millisecond):
	}
	for range maxUnpersisted {
		(<-held.persisted)(nil)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	// Closed, with every slot taken: a batch is refused at once.
	if err := x.Batch(mem.NewBatch()); !errors.Is(err, bleve.ErrorIndexClosed) {
		t.Fatalf("a batch after Close: %v", err)
	}

	// An index about to be removed is closed without waiting.
	y := newBoundedIndex(&heldIndex{persisted: make(chan index.BatchCallback, 1)})
	if err := y.Batch(mem.NewBatch()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := discardIndex(y); err != nil || time.Since(start) > closeWait/2 {
		t.Fatalf("discard: %v after %s", err, time.Since(start))
	}
}

// Batches written in a burst and the index closed at once: everything,
// watermark included, is there when it is opened again.
func TestBoundedIndexPersistsBeforeClose(t *testing.T) {
	ix := &Indexer{}
	ci := &collIndex{id: 3, db: "db", name: "c", dir: filepath.Join(t.TempDir(), "3")}
	idx, err := ix.create(ci, 1)
	if err != nil {
		t.Fatal(err)
	}
	const batches, per = 20, 50
	for i := range batches {
		b := idx.NewBatch()
		for j := range per {
			if err := b.Index(fmt.Sprintf("%04d", i*per+j), map[string]any{"n": i}); err != nil {
				t.Fatal(err)
			}
		}
		b.SetInternal(watermarkKey, encodePosition(kv.Position(100+i)))
		if err := idx.Batch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.open(ci); err != nil {
		t.Fatal(err)
	}
	defer ci.idx.Close()
	if n, err := ci.idx.DocCount(); err != nil || n != batches*per {
		t.Errorf("reopened: %d documents (%v), want %d", n, err, batches*per)
	}
	if ci.applied != kv.Position(100+batches-1) {
		t.Errorf("reopened at watermark %d, want %d", ci.applied, 100+batches-1)
	}
}

// The indexer writes its batches outside its lock: a batch that waits for
// Bleve's persister leaves searches free to take the lock (and to give up
// after their own bounded wait).
func TestBatchesAreWrittenOutsideTheLock(t *testing.T) {
	held := &heldIndex{persisted: make(chan index.BatchCallback)} // Batch blocks until the test takes its callback
	mem, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	idx := &batchMaker{heldIndex: held, mem: mem}
	ci := &collIndex{id: 1, db: "db", name: "c", idx: newBoundedIndex(idx), applied: 1}
	ix := &Indexer{colls: map[int64]*collIndex{1: ci}, changed: make(chan struct{}), readerPos: 1,
		opts: Options{WatermarkEvery: time.Nanosecond}}
	done := make(chan error, 1)
	go func() { done <- ix.apply(context.Background(), nil, 10) }() // an idle index's watermark batch
	deadline := time.Now().Add(5 * time.Second)
	for !idx.writing.Load() {
		if time.Now().After(deadline) {
			t.Fatal("apply wrote no batch")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if !ix.mu.TryLock() {
		t.Fatal("the indexer's lock is held while a batch waits")
	}
	ix.mu.Unlock()
	(<-held.persisted)(nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ci.applied != 10 || ci.persisted != 10 {
		t.Errorf("after the batch: applied %d, persisted %d, want 10", ci.applied, ci.persisted)
	}
}

// batchMaker is a heldIndex that can make batches and tells when a Batch
// call began.
type batchMaker struct {
	*heldIndex
	mem     bleve.Index
	writing atomic.Bool
}

func (m *batchMaker) NewBatch() *bleve.Batch { return m.mem.NewBatch() }

func (m *batchMaker) Batch(b *bleve.Batch) error {
	m.writing.Store(true)
	return m.heldIndex.Batch(b)
}
