package search

import (
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// Bleve's indexes on disk are written with unsafe_batch on: Batch returns
// once the batch is searchable, and Bleve's persister writes and syncs it
// in the background, several batches in one file when it falls behind.
// Waiting for each batch's file instead made a write wait twice as long
// to be searchable. The watermark is in the same batch, so a crash loses
// only batches whose log entries are replayed at the restart.
//
// boundedIndex keeps Bleve's memory bounded: at most maxUnpersisted
// batches of an index wait to be persisted, and the next Batch waits for
// the oldest, as long as the persister takes (a disk that stalls stalls
// the indexer, as it did when every Batch waited for its file; the
// indexer writes outside its lock, so searches still answer, with their
// bounded wait). Bleve retries a failed persist and keeps the batches'
// callbacks for the attempt that succeeds.
type boundedIndex struct {
	bleveIndex
	unpersisted chan struct{} // a slot per batch not yet persisted
	closed      chan struct{} // closed when Close or discard begins
	closeOnce   sync.Once
}

// bleveIndex names the embedded index apart from its Index method.
type bleveIndex = bleve.Index

const (
	// maxUnpersisted batches of at most Options.BatchBytes of documents
	// each (a rebuild's: of RebuildChunk documents) are all an index holds
	// in memory that is not in a file.
	maxUnpersisted = 4
	// closeWait is how long Close waits for pending batches to be
	// persisted; what is not is replayed from the log at the next start.
	closeWait = 10 * time.Second
)

func newBoundedIndex(idx bleve.Index) *boundedIndex {
	return &boundedIndex{bleveIndex: idx, unpersisted: make(chan struct{}, maxUnpersisted), closed: make(chan struct{})}
}

func (x *boundedIndex) Batch(b *bleve.Batch) error {
	select {
	case x.unpersisted <- struct{}{}:
	case <-x.closed:
		return bleve.ErrorIndexClosed
	}
	var once sync.Once
	release := func() { once.Do(func() { <-x.unpersisted }) }
	// Bleve calls this once the batch is in a persisted snapshot (after
	// failed attempts, at the one that succeeds).
	b.SetPersistedCallback(func(error) { release() })
	err := x.bleveIndex.Batch(b)
	if err != nil {
		release() // it may never be persisted; the index is rebuilt
	}
	return err
}

// SetInternal and DeleteInternal go through Batch, so that Close waits
// for them too: Bleve's own write them unawaited, and a Close right after
// could lose them.
func (x *boundedIndex) SetInternal(key, val []byte) error {
	b := x.NewBatch()
	b.SetInternal(key, val)
	return x.Batch(b)
}

func (x *boundedIndex) DeleteInternal(key []byte) error {
	b := x.NewBatch()
	b.DeleteInternal(key)
	return x.Batch(b)
}

// Close waits, up to closeWait, for the pending batches to be persisted,
// then closes the index.
func (x *boundedIndex) Close() error {
	x.closeOnce.Do(func() { close(x.closed) })
	t := time.NewTimer(closeWait)
	defer t.Stop()
wait:
	for range cap(x.unpersisted) {
		select {
		case x.unpersisted <- struct{}{}:
		case <-t.C:
			break wait
		}
	}
	return x.bleveIndex.Close()
}

// discard closes the index without waiting for its pending batches: for
// an index about to be removed or rebuilt.
func (x *boundedIndex) discard() error {
	x.closeOnce.Do(func() { close(x.closed) })
	return x.bleveIndex.Close()
}

// discardIndex closes an index whose files are about to be removed or
// rebuilt, without waiting for what it has not persisted.
func discardIndex(idx bleve.Index) error {
	if b, ok := idx.(*boundedIndex); ok {
		return b.discard()
	}
	return idx.Close()
}
