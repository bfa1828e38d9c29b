package search

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"golang.org/x/sync/semaphore"
)

// Bleve's indexes on disk are written with unsafe_batch on: Batch returns
// once the batch is searchable, and Bleve's persister writes and syncs it
// in the background, several batches in one file when it falls behind or
// naps (persisterNap). Waiting for each batch's file instead made a write
// wait twice as long to be searchable. The watermark is in the same batch,
// so a crash loses only batches whose log entries are replayed at the
// restart.
//
// boundedIndex keeps Bleve's memory bounded: the documents of the batches
// waiting to be persisted weigh at most its budget (four batches of
// Options.BatchBytes), each batch at least a 256th of it, and the next
// Batch waits for the oldest, as long as the persister takes (a disk that
// stalls stalls the indexer, as it did when every Batch waited for its
// file; the indexer writes outside its lock, so searches still answer,
// with their bounded wait). Bleve retries a failed persist and keeps the
// batches' callbacks for the attempt that succeeds.
//
// It also merges the index's segments down once writes pause (settle).
type boundedIndex struct {
	bleveIndex
	budget      int64
	unpersisted *semaphore.Weighted // the weight of the batches not yet persisted
	ctx         context.Context     // done when Close or discard begins
	cancel      context.CancelFunc
	closeOnce   sync.Once
	lastBatch   atomic.Int64 // when the last batch was written, in Unix nanoseconds
}

// bleveIndex names the embedded index apart from its Index method.
type bleveIndex = bleve.Index

const (
	// unpersistedBatches batches of at most Options.BatchBytes of
	// documents each (a rebuild's: of RebuildChunk documents) are what an
	// index holds in memory that is not in a file; lighter batches, at
	// most unpersistedBatches*64 of them.
	unpersistedBatches = 4
	// closeWait is how long Close waits for pending batches to be
	// persisted; what is not is replayed from the log at the next start.
	closeWait = 10 * time.Second
)

// forceMerger is Bleve's scorch index, which merges on request.
type forceMerger interface {
	ForceMerge(ctx context.Context, mo *mergeplan.MergePlanOptions) error
}

// newBoundedIndex bounds idx's unpersisted batches at budget bytes of
// documents; with merger, it merges idx's segments down after writes
// pause for settleAfter.
func newBoundedIndex(idx bleve.Index, budget int64, merger forceMerger, settleAfter time.Duration) *boundedIndex {
	ctx, cancel := context.WithCancel(context.Background())
	x := &boundedIndex{bleveIndex: idx, budget: budget, unpersisted: semaphore.NewWeighted(budget), ctx: ctx, cancel: cancel}
	if merger != nil {
		go x.settle(merger, settleAfter)
	}
	return x
}

// Batch writes b, weighed as a light batch.
func (x *boundedIndex) Batch(b *bleve.Batch) error { return x.batch(b, 0) }

// batch writes b, whose documents are bytes long.
func (x *boundedIndex) batch(b *bleve.Batch, bytes int) error {
	weight := min(max(int64(bytes), x.budget/(unpersistedBatches*64), 1), x.budget)
	if x.ctx.Err() != nil || x.unpersisted.Acquire(x.ctx, weight) != nil {
		return bleve.ErrorIndexClosed
	}
	var once sync.Once
	release := func() { once.Do(func() { x.unpersisted.Release(weight) }) }
	// Bleve calls this once the batch is in a persisted snapshot (after
	// failed attempts, at the one that succeeds).
	b.SetPersistedCallback(func(error) { release() })
	x.lastBatch.Store(time.Now().UnixNano())
	err := x.bleveIndex.Batch(b)
	if err != nil {
		release() // it may never be persisted; the index is rebuilt
	}
	return err
}

// writeBatch writes b, whose documents are bytes long, to idx.
func writeBatch(idx bleve.Index, b *bleve.Batch, bytes int) error {
	if x, ok := idx.(*boundedIndex); ok {
		return x.batch(b, bytes)
	}
	return idx.Batch(b)
}

// settle merges the index's segments down to settledMergePlan's once no
// batch has come for settleAfter. While writes stream in, Bleve merges by
// writeMergePlan, which leaves more, smaller segments behind and so
// rewrites far less (a merge rewrites its segments whole); a search
// visits every segment, so once the writes pause, the index is merged as
// a search would have it.
func (x *boundedIndex) settle(merger forceMerger, settleAfter time.Duration) {
	t := time.NewTicker(settleAfter / 4)
	defer t.Stop()
	var settled int64 // the last batch's time when the index was last merged down
	for {
		select {
		case <-x.ctx.Done():
			return
		case <-t.C:
		}
		last := x.lastBatch.Load()
		if last == settled || time.Since(time.Unix(0, last)) < settleAfter {
			continue
		}
		plan := settledMergePlan
		if err := merger.ForceMerge(x.ctx, &plan); err != nil && x.ctx.Err() == nil {
			continue // one under way, or refused: tried again at the next tick
		}
		settled = last
	}
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
	x.closeOnce.Do(x.cancel)
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	_ = x.unpersisted.Acquire(ctx, x.budget) // every batch's weight back, or the time is up
	return x.bleveIndex.Close()
}

// discard closes the index without waiting for its pending batches: for
// an index about to be removed or rebuilt.
func (x *boundedIndex) discard() error {
	x.closeOnce.Do(x.cancel)
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
