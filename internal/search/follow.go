package search

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/fields"
)

// run follows the log until ctx is done, starting over after a failure.
func (ix *Indexer) run(ctx context.Context) {
	delay := 100 * time.Millisecond
	for {
		err := ix.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, kv.ErrClosed) {
			ix.log.Warn("search: the store is closed: the indexer stops", "err", err)
			return
		}
		if errors.Is(err, errRewind) {
			delay = 100 * time.Millisecond
			continue
		}
		if changelog.Behind(err) {
			// The log no longer holds what the indexes need: every index
			// is rebuilt from the documents.
			ix.log.Error("search: the change log was trimmed past the indexer: rebuilding every index", "err", err)
			ix.rebuildAll(ctx)
			continue
		}
		ix.log.Error("search: following the change log failed; retrying", "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

var errRewind = errors.New("search: rewind the log reader")

// startPosition is where the reader opens: the lowest position some ready
// index still needs.
func (ix *Indexer) startPosition() kv.Position {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	start := ix.readerPos
	if ix.hasRewind {
		start = min(start, ix.rewind)
		ix.hasRewind = false
	}
	for _, ci := range ix.colls {
		if !ci.rebuilding && !ci.dormant {
			start = min(start, ci.applied)
		}
	}
	ix.readerPos, ix.readTo = start, start
	return start
}

// follow reads the log from the start position and applies it, until an
// error, or a rewind request (errRewind).
func (ix *Indexer) follow(ctx context.Context) error {
	start := ix.startPosition()
	r, err := ix.openReader(ctx, start)
	if err != nil {
		return err
	}
	defer ix.closeReader(r)
	ix.releaseHolds(start)
	for {
		entries, err := ix.gather(ctx, r)
		if err != nil {
			return err
		}
		if err := ix.apply(ctx, entries, r.Position()); err != nil {
			return err
		}
		ix.keepVectors(time.Now())
	}
}

// openReader opens a log reader, counted in Readers.
func (ix *Indexer) openReader(ctx context.Context, after kv.Position) (*changelog.Reader, error) {
	r, err := ix.clog.OpenReader(ctx, "search", after)
	if err == nil {
		ix.mu.Lock()
		ix.readers++
		ix.mu.Unlock()
	}
	return r, err
}

func (ix *Indexer) closeReader(r *changelog.Reader) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.closeReaderLocked(r)
}

func (ix *Indexer) closeReaderLocked(r *changelog.Reader) {
	r.Close()
	ix.readers--
}

// Readers is how many change-log readers the indexer holds open: its own,
// and one per rebuild until the log is replayed from its position.
func (ix *Indexer) Readers() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.readers
}

// releaseHolds closes the readers of finished rebuilds: the main reader,
// opened at start, now holds the log for them.
func (ix *Indexer) releaseHolds(start kv.Position) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	kept := ix.holds[:0]
	for _, h := range ix.holds {
		if h.Position() >= start {
			ix.closeReaderLocked(h)
		} else {
			kept = append(kept, h)
		}
	}
	ix.holds = kept
}

// gather returns the next batch of entries: it waits for the first, then
// takes what more comes within BatchTime, up to BatchEntries and
// BatchBytes. It returns errRewind when a rebuild asks the reader to go
// back.
func (ix *Indexer) gather(ctx context.Context, r *changelog.Reader) ([]changelog.Entry, error) {
	var out []changelog.Entry
	var deadline time.Time
	size := 0
	for len(out) < ix.opts.BatchEntries && size < ix.opts.BatchBytes {
		if ix.rewindPending(r.Position()) {
			return nil, errRewind
		}
		entries, err := r.Read(ctx, ix.readLimit(len(out), size))
		if err != nil {
			return nil, err
		}
		ix.mu.Lock()
		ix.readTo = r.Position()
		ix.mu.Unlock()
		out = append(out, entries...)
		if len(entries) > 0 {
			n := entriesSize(entries)
			size += n
			ix.entryBytes = n / len(entries)
			if deadline.IsZero() {
				deadline = time.Now().Add(ix.opts.BatchTime)
			}
			if time.Now().Before(deadline) {
				continue
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		// Nothing to read: the indexes are caught up with the log (the
		// position may have moved past commits that logged nothing).
		ix.caughtUp(r.Position())
		if err := ix.wait(ctx, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readLimit is how many entries the next read asks for, with n entries
// of size bytes gathered: what the batch has room for, in entries and, at
// the mean size of the last read's, in bytes. A transaction is at most the
// store's MaxTxSize, so one read past the bound goes beyond it by that at
// most times the entries it was asked for.
func (ix *Indexer) readLimit(n, size int) int {
	limit := ix.opts.BatchEntries - n
	if ix.entryBytes > 0 {
		limit = min(limit, max(1, (ix.opts.BatchBytes-size)/ix.entryBytes))
	}
	return limit
}

// entriesSize is the bytes of documents and keys the entries carry.
func entriesSize(entries []changelog.Entry) int {
	n := 0
	for _, e := range entries {
		for _, rec := range e.Records {
			n += len(rec.Key) + len(rec.Data)
		}
	}
	return n
}

func (ix *Indexer) rewindPending(pos kv.Position) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.hasRewind && ix.rewind < pos
}

// wait waits for the next commit, or a rewind request.
func (ix *Indexer) wait(ctx context.Context, r *changelog.Reader) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ix.mu.Lock()
	ix.wake = cancel
	rewind := ix.hasRewind
	ix.mu.Unlock()
	defer func() {
		ix.mu.Lock()
		ix.wake = nil
		ix.mu.Unlock()
	}()
	if rewind {
		return nil
	}
	err := r.Wait(wctx)
	if ctx.Err() == nil && wctx.Err() != nil {
		return nil // woken for a rewind
	}
	return err
}

// caughtUp records that the reader has read everything up to pos.
func (ix *Indexer) caughtUp(pos kv.Position) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.caughtUpAt = time.Now()
	if pos <= ix.readerPos {
		return
	}
	// Only an index that holds everything up to where the reader was
	// moves on: one whose rebuild just finished below it waits for the
	// reader to come back to its position.
	for _, ci := range ix.colls {
		if !ci.rebuilding && !ci.dormant && ci.applied >= ix.readerPos && ci.applied < pos {
			ci.applied = pos
		}
	}
	ix.readerPos = pos
	ix.signal()
}

// apply indexes a batch of entries, read up to position upTo. Each
// collection's changes go into one Bleve batch with its new watermark.
func (ix *Indexer) apply(ctx context.Context, entries []changelog.Entry, upTo kv.Position) error {
	an, err := ix.analyzers()
	if err != nil {
		return err
	}
	// The batch is applied to the indexes that hold everything up to
	// where it starts (the reader's position): they alone move to upTo at
	// its end. An index whose rebuild ended below that position, before or
	// during the batch, missed entries: it gets them when the reader goes
	// back to its rebuild's position.
	ix.mu.Lock()
	eligible := make(map[*collIndex]bool, len(ix.colls))
	for _, ci := range ix.colls {
		if !ci.rebuilding && ci.idx != nil && ci.applied >= ix.readerPos {
			eligible[ci] = true
		}
	}
	ix.mu.Unlock()
	batches := make(map[*collIndex]*pendingBatch)
	for _, e := range entries {
		for _, rec := range e.Records {
			if err := ix.applyRecord(e.Pos, rec, eligible, batches, an); err != nil {
				return err
			}
		}
	}
	// The batches are written outside mu: Batch may wait for Bleve's
	// persister (boundedIndex), and searches take mu. Only this goroutine
	// writes to, closes or replaces a ready index, so each is still there
	// after; a rebuild or a drop that began meanwhile is checked for.
	type write struct {
		ci            *collIndex
		idx           bleve.Index
		b             *bleve.Batch
		bytes         int
		watermarkOnly bool
		err           error
	}
	var writes []*write
	now := time.Now()
	ix.mu.Lock()
	for ci, b := range batches {
		if ci.dropped || ci.rebuilding || ci.idx == nil {
			continue
		}
		b.SetInternal(watermarkKey, encodePosition(upTo))
		writes = append(writes, &write{ci: ci, idx: ci.idx, b: b.Batch, bytes: b.bytes})
	}
	for ci := range eligible {
		if _, written := batches[ci]; written || ci.dropped || ci.rebuilding || ci.idx == nil || ci.applied >= upTo {
			continue
		}
		// Nothing of the batch is in this collection: it holds
		// everything up to upTo already, and says so now and then.
		ci.applied = upTo
		if now.Sub(ci.persistAt) >= ix.opts.WatermarkEvery {
			b := ci.idx.NewBatch()
			b.SetInternal(watermarkKey, encodePosition(upTo))
			writes = append(writes, &write{ci: ci, idx: ci.idx, b: b, watermarkOnly: true})
		}
	}
	ix.mu.Unlock()
	for _, w := range writes {
		w.err = writeBatch(w.idx, w.b, w.bytes)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, w := range writes {
		ci := w.ci
		if ci.idx != w.idx || ci.dropped || ci.rebuilding {
			continue
		}
		switch {
		case w.err == nil:
			ci.applied, ci.persisted, ci.persistAt = upTo, upTo, now
		case !w.watermarkOnly:
			// The index is unusable: rebuild it rather than stall the
			// log for every collection.
			ix.log.Error("search: writing to an index failed: rebuilding it", "db", ci.db, "collection", ci.name, "err", w.err)
			ix.startRebuildLocked(ci)
		}
	}
	ix.readerPos = max(ix.readerPos, upTo)
	ix.signal()
	return ctx.Err()
}

func (ix *Indexer) analyzers() (fields.Analyzers, error) { return fields.SharedAnalyzers() }

// applyRecord applies one record: DDL at once, document changes into
// their collection's batch.
func (ix *Indexer) applyRecord(pos kv.Position, rec changelog.Record, eligible map[*collIndex]bool, batches map[*collIndex]*pendingBatch, an fields.Analyzers) error {
	ix.mu.Lock()
	ci := ix.colls[rec.CollID]
	ix.mu.Unlock()
	switch rec.Op {
	case changelog.CollectionCreated:
		if ci != nil {
			return nil // known from the catalog at start
		}
		s, err := schema.ParseStored(rec.Collection, rec.Data)
		if err != nil {
			ix.log.Error("search: a logged schema does not parse; the collection is not indexed", "db", rec.DB, "collection", rec.Collection, "err", err)
			return nil
		}
		// Dormant until its first search (see the package comment).
		ci = &collIndex{id: rec.CollID, dbID: rec.DBID, ns: rec.NS, db: rec.DB, name: rec.Collection, kind: s.CollectionType(), schema: s, rev: rec.Rev, dir: ix.dirOf(rec.CollID), dormant: true}
		ix.mu.Lock()
		ix.colls[ci.id] = ci
		ix.signal()
		ix.mu.Unlock()
	case changelog.SchemaChanged:
		if ci == nil {
			return nil
		}
		s, err := schema.ParseStored(rec.Collection, rec.Data)
		if err != nil {
			ix.log.Error("search: a logged schema does not parse; keeping the previous one", "db", rec.DB, "collection", rec.Collection, "err", err)
			return nil
		}
		ix.mu.Lock()
		if rec.Rev > ci.rev {
			ci.schema, ci.rev = s, rec.Rev
			// Vector fields added, removed or changed: their graphs
			// are built anew from the documents (Bleve's fields follow
			// the schema from the next write on; a graph cannot).
			if ci.idx != nil && !ci.rebuilding && !ci.dropped && !ci.vectors.sameFields(s) {
				ix.log.Info("search: the vector fields of a collection changed: rebuilding its index", "db", ci.db, "collection", ci.name)
				ix.startRebuildLocked(ci)
			}
		}
		ix.mu.Unlock()
	case changelog.CollectionDropped:
		if ci != nil {
			ix.drop(ci)
		}
	case changelog.DatabaseDropped:
		// Its collections' drops came first; this catches any left.
		ix.mu.Lock()
		var gone []*collIndex
		for _, c := range ix.colls {
			if c.dbID == rec.DBID {
				gone = append(gone, c)
			}
		}
		ix.mu.Unlock()
		for _, c := range gone {
			ix.drop(c)
		}
	case changelog.Insert, changelog.Replace, changelog.Update, changelog.Delete, changelog.Publish:
		ix.mu.Lock()
		skip := ci == nil || !eligible[ci] || ci.rebuilding || ci.idx == nil || pos <= ci.applied
		var s *schema.Schema
		var idx bleve.Index
		var vs *vectorSet
		if !skip {
			s, idx, vs = ci.schema, ci.idx, ci.vectors
		}
		ix.mu.Unlock()
		if skip {
			return nil
		}
		b := batches[ci]
		if b == nil {
			b = &pendingBatch{Batch: idx.NewBatch()}
			batches[ci] = b
		}
		b.bytes += len(rec.Key) + len(rec.Data)
		id := fields.DocID(rec.Key)
		if rec.Op == changelog.Delete {
			b.Delete(id)
			vs.remove(id)
			return nil
		}
		d, err := fields.BuildDocument(rec.Key, rec.Data, s, an)
		if err != nil {
			ix.log.Error("search: a logged document does not parse; it is not indexed", "db", rec.DB, "collection", rec.Collection, "err", err)
			b.Delete(id)
			vs.remove(id)
			return nil
		}
		if err := vs.put(id, rec.Data); err != nil {
			ix.log.Warn("search: a logged document's vector cannot be indexed; vector searches do not find it", "db", rec.DB, "collection", rec.Collection, "err", err)
		}
		return b.IndexAdvanced(d)
	}
	return nil
}

// pendingBatch is a collection's batch being gathered, with the bytes of
// the records in it (what it weighs in boundedIndex).
type pendingBatch struct {
	*bleve.Batch
	bytes int
}

// drop closes a dropped collection's index and removes its files.
func (ix *Indexer) drop(ci *collIndex) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ci.dropped = true
	delete(ix.colls, ci.id)
	if ci.idx != nil {
		discardIndex(ci.idx)
		ci.idx = nil
	}
	if ci.dir != "" && !ci.rebuilding {
		if err := os.RemoveAll(ci.dir); err != nil {
			ix.log.Warn("search: remove the index of a dropped collection", "dir", ci.dir, "err", err)
		}
	}
	ix.signal()
}
