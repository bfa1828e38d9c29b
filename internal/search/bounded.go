package search

import (
	"errors"
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
// the oldest.
type boundedIndex struct {
	bleveIndex
	unpersisted chan struct{} // a slot per batch not yet persisted
}

const (
	// maxUnpersisted batches of at most Options.BatchBytes of documents
	// each (a rebuild's: of RebuildChunk documents) are all an index holds
	// in memory that is not in a file.
	maxUnpersisted = 4
	// persistWait is how long a batch waits for the persister to free a
	// slot before the index is taken as broken (and rebuilt).
	persistWait = 30 * time.Second
	// closeWait is how long Close waits for pending batches to be
	// persisted; what is not is replayed from the log at the next start.
	closeWait = 10 * time.Second
)

// errNotPersisting is Batch's answer when Bleve has persisted nothing for
// persistWait.
var errNotPersisting = errors.New("search: the index has persisted nothing for 30s")

// bleveIndex names the embedded index apart from its Index method.
type bleveIndex = bleve.Index

func newBoundedIndex(idx bleve.Index) *boundedIndex {
	return &boundedIndex{bleveIndex: idx, unpersisted: make(chan struct{}, maxUnpersisted)}
}

func (x *boundedIndex) Batch(b *bleve.Batch) error {
	t := time.NewTimer(persistWait)
	defer t.Stop()
	select {
	case x.unpersisted <- struct{}{}:
	case <-t.C:
		return errNotPersisting
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

// Close waits, up to closeWait, for the pending batches to be persisted,
// then closes the index.
func (x *boundedIndex) Close() error {
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
