package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/messages"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/fields"
)

// rebuildAll rebuilds every index (the log no longer reaches back to them);
// dormant collections stay so.
// The changes the log no longer holds include DDL, so the collections are
// taken from the catalog again, as at the start: one created meanwhile
// gets an index, one dropped loses its own, a changed schema is taken up.
func (ix *Indexer) rebuildAll(ctx context.Context) {
	last, colls, err := ix.catalogAt(ctx)
	if err != nil {
		// The reader's next try fails the same way and comes back here.
		ix.log.Error("search: re-reading the catalog to rebuild the indexes failed", "err", err)
		return
	}
	current := make(map[int64]*catalog.Collection, len(colls))
	for _, c := range colls {
		current[c.ID] = c
	}
	ix.mu.Lock()
	var gone []*collIndex
	for id, ci := range ix.colls {
		if current[id] == nil {
			gone = append(gone, ci)
		}
	}
	ix.mu.Unlock()
	for _, ci := range gone {
		ix.drop(ci)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for id, c := range current {
		ci := ix.colls[id]
		if ci == nil {
			ci = &collIndex{id: c.ID, dbID: c.DB.ID, ns: c.DB.NS, db: c.DB.Name, name: c.Name, kind: c.Schema.CollectionType(), dir: ix.dirOf(c.ID), dormant: true}
			ix.colls[id] = ci
		}
		ci.schema, ci.rev = c.Schema, c.Rev
		if !ci.rebuilding && !ci.dormant {
			ix.startRebuildLocked(ci)
		}
	}
	// The reader reopens at the log's end when no index is ready.
	ix.readerPos = last
}

// startRebuildLocked marks ci as rebuilding and starts its rebuild. The
// caller holds mu.
func (ix *Indexer) startRebuildLocked(ci *collIndex) {
	if ci.idx != nil {
		discardIndex(ci.idx)
		ci.idx = nil
	}
	ci.rebuilding = true
	ci.rebuilds++
	ix.signal()
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		ix.rebuild(ix.ctx, ci)
	}()
}

func (ix *Indexer) startRebuild(ctx context.Context, ci *collIndex) {
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		ix.rebuild(ctx, ci)
	}()
}

// rebuild rebuilds ci's index until it succeeds, the collection is
// dropped, or ctx is done.
func (ix *Indexer) rebuild(ctx context.Context, ci *collIndex) {
	delay := 100 * time.Millisecond
	for {
		start := time.Now()
		n, err := ix.rebuildOnce(ctx, ci)
		if err == nil {
			ix.log.Info("search: index rebuilt", "db", ci.db, "collection", ci.name, "documents", n, "took", time.Since(start))
			return
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, kv.ErrDataLoss) {
			ix.log.Error("search: rebuilding an index failed on damaged data: its searches answer DATA_LOSS until the store is restored", "db", ci.db, "collection", ci.name, "err", err)
			ix.mu.Lock()
			ci.damaged = err
			ix.signal()
			ix.mu.Unlock()
			return
		}
		ix.log.Error("search: rebuilding an index failed; retrying", "db", ci.db, "collection", ci.name, "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// rebuildOnce builds ci's index from the documents: see the package
// comment for why the log's position is taken first.
func (ix *Indexer) rebuildOnce(ctx context.Context, ci *collIndex) (int, error) {
	last, err := ix.store.LastPosition(ctx)
	if err != nil {
		return 0, err
	}
	hold, err := ix.openReader(ctx, last)
	if err != nil {
		return 0, err
	}
	handed := false
	defer func() {
		if !handed {
			ix.closeReader(hold)
		}
	}()
	// The directory is made anew while no snapshot of the vectors is
	// being saved into it (saveVectors).
	ci.saving.Lock()
	idx, err := ix.create(ci, 0)
	ci.saving.Unlock()
	if err != nil {
		return 0, err
	}
	ix.mu.Lock()
	s := ci.schema
	ix.mu.Unlock()
	vs := newVectorSet(s)
	n, err := ix.indexDocuments(ctx, ci, idx, vs)
	if err == nil {
		// The vectors' snapshot first: an index found without its
		// watermark (a crash between the two) is rebuilt whole.
		ci.saving.Lock()
		if err = vs.save(ci.dir, last); err == nil && vs != nil {
			vs.changes, vs.savedAt, vs.savedPos = 0, time.Now(), last
		}
		ci.saving.Unlock()
	}
	if err == nil {
		b := idx.NewBatch()
		b.SetInternal(watermarkKey, encodePosition(last))
		err = idx.Batch(b)
	}
	if err != nil {
		discardIndex(idx) // built again from the start
		return 0, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ci.dropped && !ix.closed && !vs.sameFields(ci.schema) {
		// The schema's vector fields changed during the build.
		discardIndex(idx)
		return 0, errVectorFieldsChanged
	}
	if ci.dropped {
		discardIndex(idx)
		if ci.dir != "" {
			os.RemoveAll(ci.dir)
		}
		return n, nil
	}
	if ix.closed {
		// Complete, with its watermark: the next start opens it.
		idx.Close()
		return n, nil
	}
	ci.idx, ci.vectors, ci.rebuilding, ci.firstBuild = idx, vs, false, false
	ci.columnsIndex = ix.columns.NewIndex()
	ci.applied, ci.persisted, ci.persistAt = last, last, time.Now()
	// The main reader goes back to last if it is past it; until then this
	// rebuild's reader keeps the log from being trimmed there. A main
	// reader at or below last holds the log itself: the deferred close
	// lets this one go.
	if last < max(ix.readerPos, ix.readTo) {
		ix.holds = append(ix.holds, hold)
		handed = true
		if !ix.hasRewind || last < ix.rewind {
			ix.rewind = last
		}
		ix.hasRewind = true
		if ix.wake != nil {
			ix.wake()
		}
	}
	ix.signal()
	return n, nil
}

// indexDocuments indexes every document of ci in chunks, each read in a
// transaction of its own (a long scan must not outlive the store's
// transaction age), with the collection's current schema.
func (ix *Indexer) indexDocuments(ctx context.Context, ci *collIndex, idx bleve.Index, vs *vectorSet) (int, error) {
	an, err := ix.analyzers()
	if err != nil {
		return 0, err
	}
	rng, decode := keyspace.Documents(ci.id), decodeDocument
	if ci.kind == schema.Messages {
		rng, decode = keyspace.Messages(ci.id), messages.Decode
	}
	total := 0
	for {
		var s *schema.Schema
		var keys, datas [][]byte
		_, err := kv.Run(ctx, ix.store, func(tx kv.Tx) error {
			keys, datas = keys[:0], datas[:0]
			coll, err := ix.cat.LookupSearchable(ctx, tx, ci.ns, ci.db, ci.name)
			switch {
			case apierror.CodeOf(err) == apierror.NotFound:
				return nil // dropped: the log will say so
			case err != nil:
				return err
			case coll.ID != ci.id:
				return nil
			}
			s = coll.Schema
			it := tx.Scan(ctx, rng, kv.ScanOptions{Limit: ix.opts.RebuildChunk})
			defer it.Close()
			for it.Next() {
				data, err := decode(it.Value())
				if err != nil {
					return fmt.Errorf("%w at %x", err, it.Key())
				}
				keys = append(keys, append([]byte(nil), it.Key()...))
				datas = append(datas, append([]byte(nil), data...))
			}
			return it.Err()
		})
		if err != nil {
			return total, fmt.Errorf("search: read the documents of %s.%s: %w", ci.db, ci.name, err)
		}
		if len(keys) == 0 {
			return total, nil
		}
		b := idx.NewBatch()
		bytes := 0
		for i, k := range keys {
			bytes += len(k) + len(datas[i])
			d, err := fields.BuildDocument(k, datas[i], s, an)
			if err != nil {
				ix.log.Error("search: a stored document does not parse; it is not indexed", "db", ci.db, "collection", ci.name, "err", err)
				continue
			}
			if err := b.IndexAdvanced(d); err != nil {
				return total, err
			}
			if err := vs.put(d.ID(), datas[i]); err != nil {
				ix.log.Warn("search: a stored document's vector cannot be indexed; vector searches do not find it", "db", ci.db, "collection", ci.name, "err", err)
			}
		}
		if err := writeBatch(idx, b, bytes); err != nil {
			return total, fmt.Errorf("search: index the documents of %s.%s: %w", ci.db, ci.name, err)
		}
		total += len(keys)
		if len(keys) < ix.opts.RebuildChunk {
			return total, nil
		}
		rng.Begin = append(keys[len(keys)-1], 0) // the next key after the last
	}
}

// decodeDocument returns the JSON of a stored document record.
func decodeDocument(v []byte) ([]byte, error) {
	r, err := documents.DecodeRecord(v)
	return r.Data, err
}

// errVectorFieldsChanged fails a rebuild whose schema's vector fields
// changed while it read the documents: it starts again.
var errVectorFieldsChanged = errors.New("search: the vector fields changed during the rebuild")
