// Package search is Folio's full-text search: a Bleve index per collection
// (of documents or of messages), fed from the change log, and searched
// through the rooms below it:
//
//   - fields: the layout of a document as Bleve fields, which the indexer
//     writes, the translation names and the engine reads;
//   - translate: a search request (text, filter, facets, sort) checked
//     against the schema and translated into the engine's Plan;
//   - engine: a Plan run on one index, through Bleve's searchers and the
//     engine's own over the index's segments (number columns, bitmaps,
//     facets, sorts, key order, phrases), its reach into Bleve's internals
//     in one file.
//
// This package is the indexer, which keeps the indexes, and the names the
// operations call (Prepare, Searcher.Page).
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
// record carries the whole document after the change, and a publish
// record the whole message, indexed under its storage key; a delete
// removes the key. The indexer follows DDL from the log too: a created
// collection gets an empty index, a schema change switches the fields
// later documents are indexed with, and a dropped collection's (or
// database's) index is closed and its files removed.
//
// # Built at the first search
//
// A collection has no index until it is first searched: most collections
// are never searched, and indexing every field of every document into a
// full-text index costs more disk than the documents themselves (five
// times them in the store's disk-footprint measurement, docs/benchmarks.md)
// and much of a write's CPU. Such a collection is dormant: the indexer
// follows its DDL but indexes none of its writes. Its first search starts
// a build from the documents (a rebuild, below) and waits for it up to
// the search's own bound, then answers UNAVAILABLE with a retry delay;
// from then on the index is kept up to date like any other, across
// restarts (an index directory is what marks a collection as searched).
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
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search/engine"
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
	// BatchBytes bounds the bytes of documents a batch gathers: it stops
	// at the first read that reaches it, and reads ask for fewer entries
	// when the last ones were large. Default 8 MiB.
	BatchBytes int
	// RebuildChunk is how many documents a rebuild reads per transaction
	// and indexes per Bleve batch. Default 1000.
	RebuildChunk int
	// WatermarkEvery is how often the watermark of an index that no entry
	// touched is brought forward, so that a restart does not replay the
	// log from an idle collection's last write. Default 5s.
	WatermarkEvery time.Duration
	// NumberColumnBytes bounds the memory of the engine's columns, which
	// answer number ranges, key-order pages, facets and sorts. Default
	// DefaultNumberColumnBytes.
	NumberColumnBytes int64
	// Ready, if set, must succeed before the indexer reads the catalog
	// (the store brought up to date); it is retried as loading is.
	Ready  func(context.Context) error
	Logger *slog.Logger
	// Catalog and Docs are the node's catalog cache and document service,
	// shared with the operations; nil makes the indexer its own (tests).
	Catalog *catalog.Catalog
	Docs    *documents.Service
}

// Defaults of Options.
const (
	DefaultNumberColumnBytes = engine.DefaultColumnBytes
	DefaultBatchEntries      = 256
	DefaultBatchTime         = 20 * time.Millisecond
	DefaultBatchBytes        = 8 << 20
	DefaultRebuildChunk      = 1000
	DefaultWatermarkEvery    = 5 * time.Second
)

// Internal keys of an index: its watermark, the collection it is for (a
// directory moved by hand to another id is not trusted), and the format
// of its fields.
var (
	watermarkKey  = []byte("folio.watermark")
	collectionKey = []byte("folio.collection")
	formatKey     = []byte("folio.format")
)

// indexFormat is the version of the fields a document is indexed as
// (package fields): an index of another version, or of none (made before
// versions were kept), is rebuilt at the start, since its terms would not
// answer today's queries. 2: keyword terms cut at 128 bytes, numbers'
// sort and stats from $num. shadows. 3: numbers only as $num. shadows (no
// prefix-coded terms: ranges read number columns), -0 as 0.
const indexFormat = 3

// retryDelay is the advice sent with UNAVAILABLE while an index is not
// ready or behind.
const retryDelay = time.Second

// Errors of WaitFor and searches.
var (
	ErrRebuilding = &apierror.Error{Code: apierror.Unavailable, Message: "the search index of this collection is being rebuilt; retry later", RetryDelay: retryDelay}
	ErrBuilding   = &apierror.Error{Code: apierror.Unavailable, Message: "the search index of this collection is being built for its first search; retry later", RetryDelay: retryDelay}
	ErrBehind     = &apierror.Error{Code: apierror.Unavailable, Message: "the search index has not caught up with the latest writes yet; retry later", RetryDelay: retryDelay}
	ErrNoIndex    = &apierror.Error{Code: apierror.Unavailable, Message: "the search index of this collection is not ready yet; retry later", RetryDelay: retryDelay}
	ErrStopped    = &apierror.Error{Code: apierror.Unavailable, Message: "search is stopped: the server is shutting down", RetryDelay: retryDelay}
)

// Indexer keeps a Bleve index per collection up to date with the change
// log. Its methods are safe for concurrent use.
type Indexer struct {
	clog  *changelog.Log
	store kv.Store
	opts  Options
	log   *slog.Logger
	cat   *catalog.Catalog
	docs  *documents.Service
	mu    sync.Mutex
	colls map[int64]*collIndex
	// columns answer the number ranges, facets and sorts of every
	// index's searches.
	columns *engine.Columns
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
	// entryBytes is the mean size of the entries of the reader's last
	// read, for the size of the next (the reader's goroutine only).
	entryBytes int

	// ctx ends when the indexer is closed: the reader's and the rebuilds'.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// collIndex is one collection's index.
type collIndex struct {
	id, dbID int64
	ns       int64 // the database's namespace
	db, name string
	dir      string // "" in memory
	// kind tells where a rebuild reads (documents or messages); a schema
	// change cannot change it.
	kind schema.CollectionType

	// Under Indexer.mu.
	schema *schema.Schema
	rev    int64
	idx    bleve.Index // nil while rebuilding or dormant
	// vectors are the vector fields' indexes (vectors.go), set with idx;
	// nil when the schema has none.
	vectors *vectorSet
	// saving is held by whoever writes the vectors' snapshot into dir or
	// makes dir anew (a rebuild), so that a snapshot of a set being
	// replaced never lands in the new index's directory.
	saving sync.Mutex
	// columnsIndex is idx's number among the number columns' indexes.
	columnsIndex uint64
	rebuilding   bool
	dormant      bool // no index until the collection is first searched
	firstBuild   bool // rebuilding is its first build, for its first search
	rebuilds     int  // rebuilds started since the indexer started
	// damaged is why the last rebuild cannot succeed: the documents it
	// reads are damaged (kv.ErrDataLoss). Searches answer it rather than
	// wait; the rebuild is not tried again before the next start.
	damaged   error
	dropped   bool
	applied   kv.Position // every entry at or before it is in idx
	persisted kv.Position // the watermark last written into idx (persisted by Bleve soon after)
	persistAt time.Time
}

// New returns an indexer over log's store; Start starts it.
func New(clog *changelog.Log, opts Options) *Indexer {
	if opts.BatchEntries <= 0 {
		opts.BatchEntries = DefaultBatchEntries
	}
	if opts.BatchTime <= 0 {
		opts.BatchTime = DefaultBatchTime
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if opts.RebuildChunk <= 0 {
		opts.RebuildChunk = DefaultRebuildChunk
	}
	if opts.WatermarkEvery <= 0 {
		opts.WatermarkEvery = DefaultWatermarkEvery
	}
	if opts.NumberColumnBytes <= 0 {
		opts.NumberColumnBytes = DefaultNumberColumnBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Catalog == nil {
		opts.Catalog = catalog.New()
	}
	if opts.Docs == nil {
		opts.Docs = documents.New()
	}
	return &Indexer{clog: clog, store: clog.Store(), opts: opts, log: opts.Logger, cat: opts.Catalog, docs: opts.Docs,
		colls: make(map[int64]*collIndex), changed: make(chan struct{}), columns: engine.NewColumns(opts.NumberColumnBytes)}
}

// Start starts the indexer in the background: it opens the index of every
// collection (scheduling a rebuild of those missing or
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
	if ix.opts.Ready != nil {
		if err := ix.opts.Ready(ctx); err != nil {
			return err
		}
	}
	// The position first, then the catalog: a collection created after
	// the position is in the log the reader will read.
	last, colls, err := ix.catalogAt(ctx)
	if err != nil {
		return fmt.Errorf("search: start: %w", err)
	}
	ix.mu.Lock()
	ix.readerPos = last
	ix.caughtUpAt = time.Now()
	var rebuild []*collIndex
	for _, c := range colls {
		ci := &collIndex{id: c.ID, dbID: c.DB.ID, ns: c.DB.NS, db: c.DB.Name, name: c.Name, kind: c.Schema.CollectionType(), schema: c.Schema, rev: c.Rev, dir: ix.dirOf(c.ID)}
		ix.colls[c.ID] = ci
		if err := ix.open(ci); errors.Is(err, errNotBuilt) {
			ci.dormant = true
		} else if err != nil {
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

// catalogAt returns the log's last position, then every collection of the
// catalog: one created after the position is in the log that follows it.
func (ix *Indexer) catalogAt(ctx context.Context) (kv.Position, []*catalog.Collection, error) {
	last, err := ix.store.LastPosition(ctx)
	if err != nil {
		return 0, nil, err
	}
	var colls []*catalog.Collection
	_, err = kv.Run(ctx, ix.store, func(tx kv.Tx) error {
		colls = colls[:0]
		dbs, err := ix.cat.AllDatabases(ctx, tx)
		if err != nil {
			return err
		}
		for _, db := range dbs {
			cs, err := ix.cat.ListCollections(ctx, tx, db)
			if err != nil {
				return err
			}
			colls = append(colls, cs...)
			// A search index's documents are a collection's, indexed alike.
			if cs, err = ix.cat.IndexCollections(ctx, tx, db); err != nil {
				return err
			}
			colls = append(colls, cs...)
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("list the collections: %w", err)
	}
	return last, colls, nil
}

// Close stops the indexer and closes its indexes, each after Bleve has
// persisted what it holds (waiting up to closeWait; the log replays the
// rest at the next start). Safe to call more than once.
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
		if vs := ci.vectors; ci.idx != nil && vs != nil && ci.dir != "" && ci.applied > vs.savedPos {
			// The last snapshot: the next start replays nothing for it.
			var err error
			if vs.changes == 0 && vs.savedPos != 0 {
				err = moveVectorsPosition(ci.dir, ci.applied)
			} else {
				err = vs.save(ci.dir, ci.applied)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("search: save the vectors of %s.%s: %w", ci.db, ci.name, err))
			}
		}
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
// from the schema (see package fields), so the mapping only picks BM25 and
// serves the analyzers to queries.
func newMapping() *mapping.IndexMappingImpl {
	m := bleve.NewIndexMapping()
	m.ScoringModel = bindex.BM25Scoring
	m.DefaultMapping = bleve.NewDocumentDisabledMapping()
	return m
}

// scorchConfig is what every index is created and opened with: the
// settings that bound its memory, spelled out rather than left to Bleve's
// defaults (package variables that a Bleve upgrade may change). Opening
// passes them too, so an index made by an older Folio gets them.
func scorchConfig() map[string]any {
	return map[string]any{
		// Batch returns once its segment is searchable, and the
		// persister writes it in the background; boundedIndex bounds the
		// batches waiting for that.
		"unsafe_batch": true,
		// Only the current snapshot is kept in the root file; older
		// segments are removed once no search holds them.
		"numSnapshotsToKeep": 1,
		"scorchPersisterOptions": map[string]any{
			// One worker merges the in-memory segments (at most the
			// boundedIndex's budget) into one and writes it, after a nap
			// that lets the batches of a stream of small writes gather:
			// one file and one sync for them all, and fewer files to merge.
			"NumPersisterWorkers":           1,
			"MaxSizeInMemoryMergePerWorker": 0,
			"PersisterNapTimeMSec":          int(persisterNap / time.Millisecond),
		},
		"scorchMergePlanOptions": planConfig(writeMergePlan),
	}
}

// planConfig is o as Bleve's configuration takes it (JSON, which the
// plan's function fields do not go into).
func planConfig(o mergeplan.MergePlanOptions) map[string]any {
	return map[string]any{
		"MaxSegmentsPerTier":   o.MaxSegmentsPerTier,
		"SegmentsPerMergeTask": o.SegmentsPerMergeTask,
		"TierGrowth":           o.TierGrowth,
		"MaxSegmentSize":       o.MaxSegmentSize,
		"FloorSegmentSize":     o.FloorSegmentSize,
		"ReclaimDeletesWeight": o.ReclaimDeletesWeight,
	}
}

// persisterNap is how long Bleve's persister waits for more batches
// before it writes what it has (a search does not wait for it).
const persisterNap = 50 * time.Millisecond

// settledMergePlan is how an index's segments on disk are merged once
// its writes pause (boundedIndex.settle): ten at a time in tiers of ten,
// the smallest tier counted as FloorSegmentSize documents, and none grows
// past MergeMaxSegmentDocs documents. A merge's memory (a document-number
// map per input segment, 8 bytes a document, and one term's postings at
// a time) stays bounded whatever the collection's size, and so does the
// number of segments a search visits (about ten per tier).
var settledMergePlan = mergeplan.MergePlanOptions{
	MaxSegmentsPerTier:   10,
	SegmentsPerMergeTask: 10,
	TierGrowth:           10.0,
	MaxSegmentSize:       MergeMaxSegmentDocs,
	FloorSegmentSize:     2000,
	ReclaimDeletesWeight: 2.0,
}

// writeMergePlan is how Bleve merges them while writes stream in: the
// same with a smallest tier of 100 documents. With 2,000, an index of a
// few thousand documents was allowed four segments, so each small batch's
// segment was merged into the same growing one, rewriting it whole a few
// times a second: under 16 writers of the mail corpus, merges wrote 265 MB
// in 10 s for 2,000 new documents, and took 42% of the server's CPU.
var writeMergePlan = func() mergeplan.MergePlanOptions {
	o := settledMergePlan
	o.FloorSegmentSize = 100
	return o
}()

// settleAfter is how long an index goes without a batch before its
// segments are merged down to settledMergePlan's.
const settleAfter = time.Second

// MergeMaxSegmentDocs is the most documents a merge puts in one segment.
const MergeMaxSegmentDocs = 2_000_000

// bound wraps an index on disk in a boundedIndex: four batches' worth of
// documents waiting for the persister, and its segments merged down once
// writes pause.
func (ix *Indexer) bound(idx bleve.Index) *boundedIndex {
	var merger forceMerger
	if adv, err := idx.Advanced(); err == nil {
		merger, _ = adv.(forceMerger)
	}
	return newBoundedIndex(idx, int64(unpersistedBatches*max(ix.opts.BatchBytes, 1)), merger, settleAfter)
}

// open opens an existing index of ci with its watermark. The caller holds
// mu.
func (ix *Indexer) open(ci *collIndex) error {
	if ci.dir == "" {
		return errNotBuilt // in memory: nothing kept from the last run
	}
	if _, err := os.Stat(ci.dir); errors.Is(err, fs.ErrNotExist) {
		return errNotBuilt
	} else if err != nil {
		return err
	}
	opened, err := bleve.OpenUsing(ci.dir, scorchConfig())
	if err != nil {
		return err
	}
	idx := ix.bound(opened)
	wm, err := readPosition(idx, watermarkKey)
	if err == nil {
		var id kv.Position
		if id, err = readPosition(idx, collectionKey); err == nil && int64(id) != ci.id {
			err = fmt.Errorf("the index is of collection id %d", id)
		}
	}
	if err == nil {
		if f, ferr := readPosition(idx, formatKey); ferr != nil || f != indexFormat {
			err = fmt.Errorf("the index's fields are of format %d, not %d (%v)", f, indexFormat, ferr)
		}
	}
	var vs *vectorSet
	applied := wm
	if err == nil && len(vectorFieldsOf(ci.schema)) > 0 {
		var at kv.Position
		if vs, at, err = loadVectors(ci.dir, ci.schema); err == nil {
			// Both go back to the older of the two: the replay
			// converges the other.
			applied = min(wm, at)
		}
	}
	if err != nil {
		idx.Close()
		return err
	}
	ci.idx, ci.vectors, ci.applied, ci.persisted, ci.persistAt = idx, vs, applied, wm, time.Now()
	ci.columnsIndex = ix.columns.NewIndex()
	return nil
}

// errNotBuilt is open's answer for a collection without an index: one
// never searched (or whose index directory was removed), left dormant.
var errNotBuilt = errors.New("no index: the collection was never searched")

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
// was there), holding position at as its watermark; with at 0 (a rebuild,
// which writes its watermark once every document is in) it holds none, so
// that one cut short by a crash is found without a watermark and rebuilt,
// not taken for an index that has everything up to position 0.
func (ix *Indexer) create(ci *collIndex, at kv.Position) (bleve.Index, error) {
	var idx bleve.Index
	var err error
	if ci.dir == "" {
		// Scorch without a path keeps its segments in memory: the same
		// engine (and BM25 statistics) as on disk, unlike NewMemOnly's
		// older key-value index.
		idx, err = bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, scorchConfig())
	} else {
		if err = os.RemoveAll(ci.dir); err != nil {
			return nil, err
		}
		idx, err = bleve.NewUsing(ci.dir, newMapping(), scorch.Name, scorch.Name, scorchConfig())
		if err == nil {
			idx = ix.bound(idx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("search: create the index of %s.%s: %w", ci.db, ci.name, err)
	}
	b := idx.NewBatch()
	b.SetInternal(collectionKey, encodePosition(kv.Position(ci.id)))
	b.SetInternal(formatKey, encodePosition(indexFormat))
	if at != 0 {
		b.SetInternal(watermarkKey, encodePosition(at))
	}
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
// up to position at, or ctx is done (ErrBehind). A dormant collection's
// index is built, waited for until ctx is done (ErrBuilding). An index
// being rebuilt fails with ErrRebuilding unless the rebuild ends within
// RebuildWait, and
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
		case ci != nil && ci.damaged != nil:
			ix.mu.Unlock()
			return ci.damaged
		case ci != nil && ci.dormant:
			ci.dormant, ci.firstBuild = false, true
			ix.log.Info("search: first search of a collection: building its index", "db", ci.db, "collection", ci.name)
			ix.startRebuildLocked(ci)
		case ci != nil && ci.rebuilding && rebuildWait == nil && !ci.firstBuild:
			// A first build is waited for until ctx is done, by every
			// search that comes during it.
			rebuildWait = time.After(RebuildWait)
		case ci != nil && ci.applied >= at:
			ix.mu.Unlock()
			return nil
		case ci == nil && ix.loaded && ix.readerPos >= at && !ix.hasRewind:
			ix.mu.Unlock()
			return ErrNoIndex
		}
		first := ci != nil && ci.firstBuild
		ch := ix.changed
		ix.mu.Unlock()
		select {
		case <-ch:
		case <-rebuildWait:
			if first {
				return ErrBuilding
			}
			return ErrRebuilding
		case <-ctx.Done():
			if first {
				return ErrBuilding
			}
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
