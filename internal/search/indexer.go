// Package search is Folio's full-text search: a Bleve index per documents
// collection, fed from the change log, and the translation of a search
// request (text, filter, facets, sort, pages) into Bleve queries.
//
// # The indexer is a change-log reader
//
// The Indexer reads the log in commit order with one changelog.Reader,
// in batches bounded in entries (Options.BatchEntries) and in time
// (Options.BatchTime), and writes what each batch changed in a collection
// as one Bleve batch that also holds the collection's new watermark (the
// log position it has applied up to, under an internal key): the index and
// its watermark move together, so a crash loses at most the batches Bleve
// had not persisted, and their watermark with them. After a restart the
// reader opens at the lowest watermark and each index skips what it
// already holds. Replaying is idempotent: an insert, replace or update
// record carries the whole document after the change, indexed under its
// storage key; a delete removes the key. The indexer follows DDL from the
// log too: a created collection gets an empty index, a schema change
// switches the fields later documents are indexed with, and a dropped
// collection's (or database's) index is closed and its files removed.
//
// # Rebuilds
//
// An index that is missing, unreadable or without a watermark is rebuilt
// in the background, while searches on it answer UNAVAILABLE: the rebuild
// takes the log's last position L first, then reads every document (in
// chunks, each in a transaction of its own), indexes them, and sets the
// watermark to L; the log reader then goes back to L and replays what
// came after. Replaying a suffix of the log in commit order converges to
// the current state whatever the chunks saw, since each record carries the
// whole document. While it runs, the rebuild holds a log reader at L, so
// that the trimmer keeps the entries the replay needs.
//
// # Read your writes
//
// WaitFor blocks until a collection's index has applied the log up to a
// position: a search takes the store's last position when it arrives and
// waits for it, so it sees every write acknowledged before it.
package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/docs"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/status"
)

// Options configure an Indexer. Zero values take the defaults.
type Options struct {
	// Dir holds one index directory per collection id. Empty keeps the
	// indexes in memory: they are rebuilt from the documents at every
	// start (for tests and throwaway nodes).
	Dir string
	// BatchEntries bounds the log entries applied in one Bleve batch, and
	// BatchTime how long the indexer keeps gathering entries for a batch
	// while more keep coming. Defaults 256 and 20ms.
	BatchEntries int
	BatchTime    time.Duration
	// RebuildChunk is how many documents a rebuild reads per transaction
	// and indexes per Bleve batch. Default 1000.
	RebuildChunk int
	// WatermarkEvery is how often the watermark of an index that no entry
	// touched is brought forward, so that a restart does not replay the
	// log from an idle collection's last write. Default 5s.
	WatermarkEvery time.Duration
	Logger         *slog.Logger
}

// Defaults of Options.
const (
	DefaultBatchEntries   = 256
	DefaultBatchTime      = 20 * time.Millisecond
	DefaultRebuildChunk   = 1000
	DefaultWatermarkEvery = 5 * time.Second
)

// Internal keys of an index: its watermark, and the collection it is for
// (a directory moved by hand to another id is not trusted).
var (
	watermarkKey  = []byte("folio.watermark")
	collectionKey = []byte("folio.collection")
)

// retryDelay is the advice sent with UNAVAILABLE while an index is not
// ready or behind.
const retryDelay = time.Second

// Errors of WaitFor and searches.
var (
	ErrRebuilding = &status.Error{Code: status.Unavailable, Message: "the search index of this collection is being rebuilt; retry later", RetryDelay: retryDelay}
	ErrBehind     = &status.Error{Code: status.Unavailable, Message: "the search index has not caught up with the latest writes yet; retry later", RetryDelay: retryDelay}
	ErrNoIndex    = &status.Error{Code: status.Unavailable, Message: "the search index of this collection is not ready yet; retry later", RetryDelay: retryDelay}
	ErrStopped    = &status.Error{Code: status.Unavailable, Message: "search is stopped: the server is shutting down", RetryDelay: retryDelay}
)

// Indexer keeps a Bleve index per documents collection up to date with the
// change log. Its methods are safe for concurrent use.
type Indexer struct {
	clog  *changelog.Log
	store kv.Store
	opts  Options
	log   *slog.Logger
	cat   *catalog.Catalog
	docs  *docs.Service

	mu    sync.Mutex
	colls map[int64]*collIndex
	// readerPos is where the log reader has read to: every ready index
	// holds what it needs of the entries at or before it.
	readerPos kv.Position
	// readTo is where the reader has read to, applied or not: a rebuild
	// that ends below it needs the reader to come back.
	readTo kv.Position
	// rewind, if set, is a position the reader must go back to (a
	// rebuild finished there).
	rewind    kv.Position
	hasRewind bool
	// wake interrupts the reader's wait for a commit (a rewind came).
	wake context.CancelFunc
	// holds are the readers rebuilds hold at their positions, closed once
	// the main reader has gone back to them.
	holds []*changelog.Reader
	// changed is closed and replaced whenever an index moves on.
	changed chan struct{}
	readers int // open log readers, see Readers
	// caughtUpAt is when the reader last found nothing more to read, for
	// the lag in seconds.
	caughtUpAt time.Time
	closed     bool
	loaded     bool // the collections are known (load has run)

	// ctx ends when the indexer is closed: the reader's and the rebuilds'.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// collIndex is one collection's index.
type collIndex struct {
	id, dbID int64
	db, name string
	dir      string // "" in memory

	// Under Indexer.mu.
	schema     *schema.Schema
	rev        int64
	idx        bleve.Index // nil while rebuilding
	rebuilding bool
	rebuilds   int // rebuilds started since the indexer started
	dropped    bool
	applied    kv.Position // every entry at or before it is in idx
	persisted  kv.Position // the watermark written into idx
	persistAt  time.Time
}

// New returns an indexer over log's store; Start starts it.
func New(clog *changelog.Log, opts Options) *Indexer {
	if opts.BatchEntries <= 0 {
		opts.BatchEntries = DefaultBatchEntries
	}
	if opts.BatchTime <= 0 {
		opts.BatchTime = DefaultBatchTime
	}
	if opts.RebuildChunk <= 0 {
		opts.RebuildChunk = DefaultRebuildChunk
	}
	if opts.WatermarkEvery <= 0 {
		opts.WatermarkEvery = DefaultWatermarkEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Indexer{clog: clog, store: clog.Store(), opts: opts, log: opts.Logger, cat: catalog.New(), docs: docs.New(),
		colls: make(map[int64]*collIndex), changed: make(chan struct{})}
}

// Start starts the indexer in the background: it opens the index of every
// documents collection (scheduling a rebuild of those missing or
// unreadable), removes the indexes of collections that no longer exist,
// and follows the log. A store that cannot be read yet does not fail the
// start: the indexer retries, and searches answer UNAVAILABLE meanwhile.
func (ix *Indexer) Start(ctx context.Context) error {
	if ix.opts.Dir != "" {
		if err := os.MkdirAll(ix.opts.Dir, 0o755); err != nil {
			return fmt.Errorf("search: index directory: %w", err)
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	ix.ctx, ix.cancel = runCtx, cancel
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		delay := 100 * time.Millisecond
		for {
			err := ix.load(runCtx)
			if err == nil {
				break
			}
			if runCtx.Err() != nil {
				return
			}
			ix.log.Error("search: loading the collections failed; retrying", "err", err, "retry_in", delay)
			select {
			case <-runCtx.Done():
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, 10*time.Second)
		}
		ix.run(runCtx)
	}()
	return nil
}

// load opens the indexes of the collections the catalog lists.
func (ix *Indexer) load(ctx context.Context) error {
	// The position first, then the catalog: a collection created after
	// the position is in the log the reader will read.
	last, err := ix.store.LastPosition(ctx)
	if err != nil {
		return fmt.Errorf("search: start: %w", err)
	}
	var colls []*catalog.Collection
	_, err = kv.Run(ctx, ix.store, func(tx kv.Tx) error {
		colls = colls[:0]
		dbs, err := ix.cat.ListDatabases(ctx, tx)
		if err != nil {
			return err
		}
		for _, db := range dbs {
			cs, err := ix.cat.ListCollections(ctx, tx, db)
			if err != nil {
				return err
			}
			colls = append(colls, cs...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("search: list the collections: %w", err)
	}
	ix.mu.Lock()
	ix.readerPos = last
	ix.caughtUpAt = time.Now()
	var rebuild []*collIndex
	for _, c := range colls {
		if c.Schema.CollectionType() != schema.Documents {
			continue
		}
		ci := &collIndex{id: c.ID, dbID: c.DB.ID, db: c.DB.Name, name: c.Name, schema: c.Schema, rev: c.Rev, dir: ix.dirOf(c.ID)}
		ix.colls[c.ID] = ci
		if err := ix.open(ci); err != nil {
			ix.log.Warn("search: index unreadable or missing: rebuilding it", "db", ci.db, "collection", ci.name, "dir", ci.dir, "err", err)
			ci.rebuilding, ci.rebuilds = true, 1
			rebuild = append(rebuild, ci)
		}
	}
	ix.loaded = true
	ix.signal()
	ix.mu.Unlock()
	ix.removeStrays()
	for _, ci := range rebuild {
		ix.startRebuild(ctx, ci)
	}
	return nil
}

// Close stops the indexer and closes its indexes; what Bleve holds is
// persisted with its watermark. Safe to call more than once.
func (ix *Indexer) Close() error {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil
	}
	ix.closed = true
	ix.mu.Unlock()
	if ix.cancel != nil {
		ix.cancel()
	}
	ix.wg.Wait()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var errs []error
	for _, ci := range ix.colls {
		if ci.idx != nil {
			if err := ci.idx.Close(); err != nil {
				errs = append(errs, fmt.Errorf("search: close the index of %s.%s: %w", ci.db, ci.name, err))
			}
			ci.idx = nil
		}
	}
	for _, h := range ix.holds {
		ix.closeReaderLocked(h)
	}
	ix.holds = nil
	ix.signal()
	return errors.Join(errs...)
}

func (ix *Indexer) dirOf(collID int64) string {
	if ix.opts.Dir == "" {
		return ""
	}
	return filepath.Join(ix.opts.Dir, strconv.FormatInt(collID, 10))
}

// newMapping is the index mapping: documents are built field by field
// from the schema (see fields.go), so the mapping only picks BM25 and
// serves the analyzers to queries.
func newMapping() *mapping.IndexMappingImpl {
	m := bleve.NewIndexMapping()
	m.ScoringModel = bindex.BM25Scoring
	m.DefaultMapping = bleve.NewDocumentDisabledMapping()
	return m
}

// open opens an existing index of ci with its watermark. The caller holds
// mu.
func (ix *Indexer) open(ci *collIndex) error {
	if ci.dir == "" {
		return errors.New("in memory: nothing kept from the last run")
	}
	if _, err := os.Stat(ci.dir); err != nil {
		return err
	}
	idx, err := bleve.Open(ci.dir)
	if err != nil {
		return err
	}
	wm, err := readPosition(idx, watermarkKey)
	if err == nil {
		var id kv.Position
		if id, err = readPosition(idx, collectionKey); err == nil && int64(id) != ci.id {
			err = fmt.Errorf("the index is of collection id %d", id)
		}
	}
	if err != nil {
		idx.Close()
		return err
	}
	ci.idx, ci.applied, ci.persisted, ci.persistAt = idx, wm, wm, time.Now()
	return nil
}

func readPosition(idx bleve.Index, key []byte) (kv.Position, error) {
	v, err := idx.GetInternal(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("no %s in the index", key)
	}
	return kv.Position(binary.BigEndian.Uint64(v)), nil
}

func encodePosition(p kv.Position) []byte { return binary.BigEndian.AppendUint64(nil, uint64(p)) }

// create makes a new, empty index for ci at its directory (removing what
// was there), holding position at as its watermark.
func (ix *Indexer) create(ci *collIndex, at kv.Position) (bleve.Index, error) {
	var idx bleve.Index
	var err error
	if ci.dir == "" {
		// Scorch without a path keeps its segments in memory: the same
		// engine (and BM25 statistics) as on disk, unlike NewMemOnly's
		// older key-value index.
		idx, err = bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, map[string]any{})
	} else {
		if err = os.RemoveAll(ci.dir); err != nil {
			return nil, err
		}
		idx, err = bleve.NewUsing(ci.dir, newMapping(), scorch.Name, scorch.Name, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("search: create the index of %s.%s: %w", ci.db, ci.name, err)
	}
	b := idx.NewBatch()
	b.SetInternal(collectionKey, encodePosition(kv.Position(ci.id)))
	b.SetInternal(watermarkKey, encodePosition(at))
	if err := idx.Batch(b); err != nil {
		idx.Close()
		return nil, fmt.Errorf("search: create the index of %s.%s: %w", ci.db, ci.name, err)
	}
	return idx, nil
}

// removeStrays removes the index directories of collections that are gone
// (dropped while the server was down).
func (ix *Indexer) removeStrays() {
	if ix.opts.Dir == "" {
		return
	}
	entries, err := os.ReadDir(ix.opts.Dir)
	if err != nil {
		ix.log.Warn("search: list the index directory", "err", err)
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, e := range entries {
		id, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || !e.IsDir() {
			continue
		}
		if _, ok := ix.colls[id]; !ok {
			if err := os.RemoveAll(filepath.Join(ix.opts.Dir, e.Name())); err != nil {
				ix.log.Warn("search: remove the index of a dropped collection", "dir", e.Name(), "err", err)
			}
		}
	}
}

// signal wakes the waiters of WaitFor. The caller holds mu.
func (ix *Indexer) signal() {
	close(ix.changed)
	ix.changed = make(chan struct{})
}

// WaitFor blocks until the index of collection collID has applied the log
// up to position at, or ctx is done (ErrBehind). An index being rebuilt
// fails with ErrRebuilding unless the rebuild ends within RebuildWait, and
// a collection the indexer does not know once it has read past at with
// ErrNoIndex.
func (ix *Indexer) WaitFor(ctx context.Context, collID int64, at kv.Position) error {
	// A rebuild of a small collection (one created just now, or any after
	// a start with indexes in memory) takes milliseconds: worth a short
	// wait, unlike a long one, which answers at once after it.
	var rebuildWait <-chan time.Time
	for {
		ix.mu.Lock()
		if ix.closed {
			ix.mu.Unlock()
			return ErrStopped
		}
		ci := ix.colls[collID]
		switch {
		case ci != nil && ci.rebuilding && rebuildWait == nil:
			rebuildWait = time.After(RebuildWait)
		case ci != nil && ci.applied >= at:
			ix.mu.Unlock()
			return nil
		case ci == nil && ix.loaded && ix.readerPos >= at && !ix.hasRewind:
			ix.mu.Unlock()
			return ErrNoIndex
		}
		ch := ix.changed
		ix.mu.Unlock()
		select {
		case <-ch:
		case <-rebuildWait:
			return ErrRebuilding
		case <-ctx.Done():
			if rebuildWait != nil {
				return ErrRebuilding
			}
			return ErrBehind
		}
	}
}

// RebuildWait is how long WaitFor waits for an index being rebuilt before
// it answers ErrRebuilding.
const RebuildWait = 500 * time.Millisecond

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
		if errors.Is(err, changelog.ErrTrimmed) || errors.Is(err, changelog.ErrCutOff) {
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
		if !ci.rebuilding {
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
	}
}

// openReader opens a log reader, counted in Readers.
func (ix *Indexer) openReader(ctx context.Context, after kv.Position) (*changelog.Reader, error) {
	r, err := ix.clog.OpenReader(ctx, after)
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
// takes what more comes within BatchTime, up to BatchEntries. It returns
// errRewind when a rebuild asks the reader to go back.
func (ix *Indexer) gather(ctx context.Context, r *changelog.Reader) ([]changelog.Entry, error) {
	var out []changelog.Entry
	var deadline time.Time
	for len(out) < ix.opts.BatchEntries {
		if ix.rewindPending(r.Position()) {
			return nil, errRewind
		}
		entries, err := r.Read(ctx, ix.opts.BatchEntries-len(out))
		if err != nil {
			return nil, err
		}
		ix.mu.Lock()
		ix.readTo = r.Position()
		ix.mu.Unlock()
		out = append(out, entries...)
		if len(entries) > 0 {
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
		if !ci.rebuilding && ci.applied >= ix.readerPos && ci.applied < pos {
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
	batches := make(map[*collIndex]*bleve.Batch)
	for _, e := range entries {
		for _, rec := range e.Records {
			if err := ix.applyRecord(e.Pos, rec, eligible, batches, an); err != nil {
				return err
			}
		}
	}
	now := time.Now()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for ci, b := range batches {
		if ci.dropped || ci.rebuilding || ci.idx == nil {
			continue
		}
		b.SetInternal(watermarkKey, encodePosition(upTo))
		if err := ci.idx.Batch(b); err != nil {
			// The index is unusable: rebuild it rather than stall the log
			// for every collection.
			ix.log.Error("search: writing to an index failed: rebuilding it", "db", ci.db, "collection", ci.name, "err", err)
			ix.startRebuildLocked(ci)
			continue
		}
		ci.applied, ci.persisted, ci.persistAt = upTo, upTo, now
	}
	for ci := range eligible {
		if ci.dropped || ci.rebuilding || ci.idx == nil || ci.applied >= upTo {
			continue
		}
		ci.applied = upTo
		if now.Sub(ci.persistAt) >= ix.opts.WatermarkEvery {
			b := ci.idx.NewBatch()
			b.SetInternal(watermarkKey, encodePosition(upTo))
			if err := ci.idx.Batch(b); err == nil {
				ci.persisted, ci.persistAt = upTo, now
			}
		}
	}
	ix.readerPos = max(ix.readerPos, upTo)
	ix.signal()
	return ctx.Err()
}

func (ix *Indexer) analyzers() (analyzers, error) {
	m := newMapping()
	text := m.AnalyzerNamed("standard")
	kw := m.AnalyzerNamed("keyword")
	if text == nil || kw == nil {
		return analyzers{}, errors.New("search: the standard and keyword analyzers are not registered")
	}
	return analyzers{text: text, keyword: kw}, nil
}

// applyRecord applies one record: DDL at once, document changes into
// their collection's batch.
func (ix *Indexer) applyRecord(pos kv.Position, rec changelog.Record, eligible map[*collIndex]bool, batches map[*collIndex]*bleve.Batch, an analyzers) error {
	ix.mu.Lock()
	ci := ix.colls[rec.CollID]
	ix.mu.Unlock()
	switch rec.Op {
	case changelog.CollectionCreated:
		if ci != nil {
			return nil // known from the catalog at start
		}
		s, err := schema.Parse(rec.Collection, rec.Data)
		if err != nil {
			ix.log.Error("search: a logged schema does not parse; the collection is not indexed", "db", rec.DB, "collection", rec.Collection, "err", err)
			return nil
		}
		if s.CollectionType() != schema.Documents {
			return nil
		}
		ci = &collIndex{id: rec.CollID, dbID: rec.DBID, db: rec.DB, name: rec.Collection, schema: s, rev: rec.Rev, dir: ix.dirOf(rec.CollID)}
		idx, err := ix.create(ci, pos)
		if err != nil {
			return err
		}
		ix.mu.Lock()
		ci.idx, ci.applied, ci.persisted, ci.persistAt = idx, pos, pos, time.Now()
		ix.colls[ci.id] = ci
		ix.mu.Unlock()
		eligible[ci] = true
	case changelog.SchemaChanged:
		if ci == nil {
			return nil
		}
		s, err := schema.Parse(rec.Collection, rec.Data)
		if err != nil {
			ix.log.Error("search: a logged schema does not parse; keeping the previous one", "db", rec.DB, "collection", rec.Collection, "err", err)
			return nil
		}
		ix.mu.Lock()
		if rec.Rev > ci.rev {
			ci.schema, ci.rev = s, rec.Rev
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
	case changelog.Insert, changelog.Replace, changelog.Update, changelog.Delete:
		ix.mu.Lock()
		skip := ci == nil || !eligible[ci] || ci.rebuilding || ci.idx == nil || pos <= ci.applied
		var s *schema.Schema
		var idx bleve.Index
		if !skip {
			s, idx = ci.schema, ci.idx
		}
		ix.mu.Unlock()
		if skip {
			return nil
		}
		b := batches[ci]
		if b == nil {
			b = idx.NewBatch()
			batches[ci] = b
		}
		if rec.Op == changelog.Delete {
			b.Delete(docID(rec.Key))
			return nil
		}
		d, err := buildDocument(rec.Key, rec.Data, s, an)
		if err != nil {
			ix.log.Error("search: a logged document does not parse; it is not indexed", "db", rec.DB, "collection", rec.Collection, "err", err)
			b.Delete(docID(rec.Key))
			return nil
		}
		return b.IndexAdvanced(d)
	}
	return nil
}

// drop closes a dropped collection's index and removes its files.
func (ix *Indexer) drop(ci *collIndex) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ci.dropped = true
	delete(ix.colls, ci.id)
	if ci.idx != nil {
		ci.idx.Close()
		ci.idx = nil
	}
	if ci.dir != "" && !ci.rebuilding {
		if err := os.RemoveAll(ci.dir); err != nil {
			ix.log.Warn("search: remove the index of a dropped collection", "dir", ci.dir, "err", err)
		}
	}
	ix.signal()
}

// rebuildAll rebuilds every index (the log no longer reaches back to them).
func (ix *Indexer) rebuildAll(ctx context.Context) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.readerPos = 0
	for _, ci := range ix.colls {
		if !ci.rebuilding {
			ix.startRebuildLocked(ci)
		}
	}
	// The reader reopens at the log's end when no index is ready.
	if last, err := ix.store.LastPosition(ctx); err == nil {
		ix.readerPos = last
	}
}

// startRebuildLocked marks ci as rebuilding and starts its rebuild. The
// caller holds mu.
func (ix *Indexer) startRebuildLocked(ci *collIndex) {
	if ci.idx != nil {
		ci.idx.Close()
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
	idx, err := ix.create(ci, 0)
	if err != nil {
		return 0, err
	}
	n, err := ix.indexDocuments(ctx, ci, idx)
	if err == nil {
		b := idx.NewBatch()
		b.SetInternal(watermarkKey, encodePosition(last))
		err = idx.Batch(b)
	}
	if err != nil {
		idx.Close()
		return 0, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ci.dropped {
		idx.Close()
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
	ci.idx, ci.rebuilding = idx, false
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
func (ix *Indexer) indexDocuments(ctx context.Context, ci *collIndex, idx bleve.Index) (int, error) {
	an, err := ix.analyzers()
	if err != nil {
		return 0, err
	}
	rng := keyspace.Documents(ci.id)
	total := 0
	for {
		var s *schema.Schema
		var keys, datas [][]byte
		_, err := kv.Run(ctx, ix.store, func(tx kv.Tx) error {
			keys, datas = keys[:0], datas[:0]
			coll, err := ix.cat.Lookup(ctx, tx, ci.db, ci.name)
			switch {
			case status.CodeOf(err) == status.NotFound:
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
				r, err := docs.DecodeRecord(it.Value())
				if err != nil {
					return fmt.Errorf("%w at %x", err, it.Key())
				}
				keys = append(keys, append([]byte(nil), it.Key()...))
				datas = append(datas, append([]byte(nil), r.Data...))
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
		for i, k := range keys {
			d, err := buildDocument(k, datas[i], s, an)
			if err != nil {
				ix.log.Error("search: a stored document does not parse; it is not indexed", "db", ci.db, "collection", ci.name, "err", err)
				continue
			}
			if err := b.IndexAdvanced(d); err != nil {
				return total, err
			}
		}
		if err := idx.Batch(b); err != nil {
			return total, fmt.Errorf("search: index the documents of %s.%s: %w", ci.db, ci.name, err)
		}
		total += len(keys)
		if len(keys) < ix.opts.RebuildChunk {
			return total, nil
		}
		rng.Begin = append(keys[len(keys)-1], 0) // the next key after the last
	}
}

// Stats is a snapshot of the indexer, for metrics.
type Stats struct {
	// LogReaders is the change-log readers the indexer holds open.
	LogReaders int
	// Position is where the log reader has read to; LastPosition the
	// log's end when the snapshot was taken; LagPositions the difference.
	Position, LastPosition kv.Position
	LagPositions           uint64
	// LagSeconds is how long the reader has been behind the log's end:
	// zero when it is caught up, else the time since it last was.
	LagSeconds float64
	Indexes    []IndexStats
}

// IndexStats describes one collection's index.
type IndexStats struct {
	DB, Collection string
	CollectionID   int64
	Ready          bool        // false while it is being rebuilt
	Rebuilds       int         // rebuilds started since the indexer started
	Applied        kv.Position // its watermark in memory
	Documents      uint64
	DiskBytes      int64 // its directory's size; 0 in memory
}

// Stats reports the indexer's lag and its indexes' sizes. It walks the
// index directories, so it is for a metrics scrape, not a hot path.
func (ix *Indexer) Stats(ctx context.Context) Stats {
	last, _ := ix.store.LastPosition(ctx)
	ix.mu.Lock()
	st := Stats{LogReaders: ix.readers, Position: ix.readerPos, LastPosition: last}
	if last > ix.readerPos {
		st.LagPositions = uint64(last - ix.readerPos)
		st.LagSeconds = time.Since(ix.caughtUpAt).Seconds()
	}
	type snap struct {
		s   IndexStats
		idx bleve.Index
		dir string
	}
	var snaps []snap
	for _, ci := range ix.colls {
		snaps = append(snaps, snap{IndexStats{DB: ci.db, Collection: ci.name, CollectionID: ci.id, Ready: !ci.rebuilding, Rebuilds: ci.rebuilds, Applied: ci.applied}, ci.idx, ci.dir})
	}
	ix.mu.Unlock()
	for _, sn := range snaps {
		if sn.idx != nil {
			sn.s.Documents, _ = sn.idx.DocCount()
		}
		if sn.dir != "" {
			sn.s.DiskBytes = dirSize(sn.dir)
		}
		st.Indexes = append(st.Indexes, sn.s)
	}
	return st
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
