// Package pebblekv is Folio's embedded storage backend: the kv interface on
// Pebble, with an optimistic serializable layer and group commit.
//
// How a commit goes (see commit.go):
//
//  1. A transaction reads from a Pebble snapshot of the newest durable commit
//     (its read version) and records the key ranges it reads.
//  2. At commit it hands its read ranges and buffered writes to the
//     sequencer, one goroutine that checks them against the writes of every
//     transaction committed after the read version (conflictTable), assigns
//     commit positions in order, and writes a whole group of transactions to
//     Pebble as one batch without waiting for the disk.
//  3. The syncer goroutine fsyncs the WAL once for every group that arrived
//     meanwhile, then publishes a snapshot taken right after the group as the
//     new read view, then acknowledges the commits.
//
// Pebble makes a batch visible to its own readers before the WAL sync ends,
// so Folio never reads Pebble's latest state: readers only ever get a
// published snapshot, and no reader can see a commit that a crash could take
// back.
//
// Key layout inside Pebble: user keys as they are (never starting with 0xFF);
// 0xFF 'l' + 8-byte big-endian position for change-log entries; 0xFF 'm' ...
// for the store's own metadata.
package pebblekv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv"
)

// Options configure a Store. Only Dir is required.
type Options struct {
	// Dir is the directory holding the Pebble files.
	Dir string
	// Limits on key, value and transaction sizes.
	Limits kv.Limits
	// MaxTxAge bounds how long a transaction may stay open: old snapshots pin
	// data and conflict history. Older transactions fail with
	// kv.ErrTxTooOld and are reclaimed. Default 10 minutes.
	MaxTxAge time.Duration
	// CacheSize is the memory of the store's caches in bytes: a quarter
	// for the values reads found (valueCache, in the Go heap), the rest
	// for Pebble's block cache (outside it). Default 128 MiB.
	CacheSize int64
	// MemTableSize is the largest a memtable grows before it is flushed.
	// A WAL file grows to about its size, and Pebble keeps up to three old
	// ones to reuse. Default DefaultMemTableSize.
	MemTableSize int64
	// Compression is how tables are compressed: CompressSnappy (Pebble's
	// default, the fastest) or CompressZstd (zstd in the bottom levels:
	// about a third less disk for documents of text, and a fifth to a
	// third fewer durable inserts a second on two cores, where compactions
	// take CPU from commits; see docs/benchmarks.md). Default snappy.
	Compression string
	// Logger receives the store's operational messages. Default: discard.
	Logger *slog.Logger
	// FS is the filesystem Pebble's files live in. Default: the operating
	// system's (vfs.Default). Tests give one that loses unsynced writes on
	// a simulated crash, or whose syncs fail.
	FS vfs.FS
}

// The values of Options.Compression.
const (
	CompressSnappy = "snappy"
	CompressZstd   = "zstd"
)

// Defaults.
const (
	DefaultMaxTxAge  = 10 * time.Minute
	DefaultCacheSize = 128 << 20
	// DefaultMemTableSize is Options.MemTableSize's default. Twice Pebble's
	// own: with documents and their index entries, each flushed table
	// overlaps most of the base level, and larger flushes give each
	// compaction more to carry (a 1 KB insert wrote 38.8 KB to disk with
	// 4 MiB, 31.7 KB with 8 MiB, both counting a warm-up's updates too;
	// server CPU per insert was lower in six pairs of seven;
	// docs/benchmarks.md). Larger ones keep more recycled
	// WAL files of their size on disk; the WAL's preallocation is bounded
	// apart (maxPreallocate), so a fresh store stays small.
	DefaultMemTableSize = 8 << 20
	defaultLogLimit     = 1000

	// valueCacheFraction: the value cache gets 1/valueCacheFraction of
	// Options.CacheSize. A quarter of the default holds about 25,000
	// documents of 1 KB: against an eighth, a point read of zipfian keys
	// over 50,000 documents took 7% less CPU and an equality on a unique
	// field up to 19% less (docs/benchmarks.md). Its bytes are Go heap,
	// which the collector lets grow to 1 + GOGC/100 times what is live:
	// the server's resident memory grew by about 100 MB with it.
	valueCacheFraction = 4

	// l0CompactionThreshold is how many overlapping tables L0 gathers
	// before they are compacted into the base level: twice Pebble's 4.
	// Each such compaction rewrites most of the base level, which the
	// index entries of random values make every flush overlap; gathering
	// twice as many rewrites it half as often. A 1 KB insert wrote 25 KB
	// where it wrote 30, at 12% less server CPU; point reads, index
	// lookups and scans (workloads B, C, eq, E) were unchanged within the
	// machine's noise, though each read may look through more L0 tables
	// (docs/benchmarks.md). Pebble's L0StopWritesThreshold (12) is kept.
	l0CompactionThreshold = 8
)

var (
	metaVersionKey = []byte{0xFF, 'm', 'v'} // the newest commit position
	metaTrimKey    = []byte{0xFF, 'm', 't'} // log positions below this are trimmed
	logPrefix      = []byte{0xFF, 'l'}
)

func logKey(pos kv.Position) []byte {
	k := make([]byte, 10)
	copy(k, logPrefix)
	binary.BigEndian.PutUint64(k[2:], uint64(pos))
	return k
}

// Store is an open embedded store. It implements kv.Store.
type Store struct {
	db     *pebble.DB
	opts   Options
	limits kv.Limits
	log    *slog.Logger

	// mu guards the published read view and the log trim point. Begin
	// takes the current view and registers the transaction in txs under
	// mu, so that oldestReadVersion, which reads both under mu, never
	// misses a transaction that holds the current view.
	mu      sync.Mutex
	current *view
	notify  chan struct{} // closed and replaced at each publication
	trimmed kv.Position   // log entries below this position are gone
	closed  bool
	failure error // set when a write to disk failed: the store refuses work
	// damage is what Pebble found damaged while serving: from the first
	// find on, commits fail (damage.go has the rule).
	damage *damage
	// disk says whether there is room for commits (diskfull.go).
	disk *diskSpace

	// batches counts the groups written, so that tests can tell that
	// groups held several commits.
	batches atomic.Int64
	// batchKeys and batchBytes count the entries and bytes of the groups'
	// batches (Stats.Written).
	batchKeys, batchBytes atomic.Int64
	// counters count the transactions' outcomes; groupSizes the commits
	// of each group written, syncTimes each WAL fsync (Stats).
	counters   *kv.TxCounters
	groupSizes *kv.Histogram
	syncTimes  *kv.Histogram
	// logSizes: the sizes of the log entries written since open, which
	// the sequencer notes and LogBytes reads.
	logSizes *logSizes
	// logTail: the newest log entries, which ReadLog serves from memory.
	logTail *logTail
	// values keeps values reads found, and vouches for values
	// transactions expect (kv.KnownValues).
	values *valueCache

	// views counts the read snapshots not yet closed (guarded by mu), and
	// viewsClosed is signalled as they close: Close waits for the last
	// iterator to let go of its snapshot before it closes Pebble, which
	// panics when a table is still referenced.
	views       int
	viewsClosed *sync.Cond

	txs      *kv.Tracker    // open transactions, reclaimed when too old
	inflight sync.WaitGroup // commits between their check of closed and their outcome
	commits  chan *commitRequest
	// checkpoints go through the sequencer, which cuts them between groups.
	checkpoints chan *checkpointRequest
	groups      chan *group
	stop        chan struct{}
	wg          sync.WaitGroup
	// exit ends the process when Pebble's commit pipeline is stuck (see
	// fatalToError): exitProcess, or a test's, which returns.
	exit func()
}

// view is a published read snapshot: everything committed up to version,
// and durable. Transactions and log readers hold references to it.
type view struct {
	version kv.Position
	snap    *pebble.Snapshot
	refs    int // guarded by Store.mu; the store itself holds one while current
}

// Open opens (creating if needed) the store in opts.Dir.
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("pebblekv: no directory given")
	}
	if opts.MaxTxAge <= 0 {
		opts.MaxTxAge = DefaultMaxTxAge
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.MemTableSize <= 0 {
		opts.MemTableSize = DefaultMemTableSize
	}
	switch opts.Compression {
	case "":
		opts.Compression = CompressSnappy
	case CompressSnappy, CompressZstd:
	default:
		return nil, fmt.Errorf("pebblekv: compression %q: want %s or %s", opts.Compression, CompressSnappy, CompressZstd)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if err := checkMarkers(opts.FS, opts.Dir); err != nil {
		return nil, err
	}
	dmg := newDamage(opts.Logger)
	disk := newDiskSpace(opts.FS, opts.Dir, diskReserve(opts.MemTableSize), opts.Logger)
	listener := disk.listener()
	// Pebble's default for damaged data is its logger's Fatalf: the
	// process would end in the middle of a request.
	listener.DataCorruption = dmg.report
	blockBytes, valueBytes := cacheSplit(opts.CacheSize)
	cache := pebble.NewCache(blockBytes)
	defer cache.Unref()
	popts := pebbleOptions(opts, cache, listener)
	db, err := openPebble(opts.Dir, popts)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:          db,
		opts:        opts,
		limits:      opts.Limits.WithDefaults(),
		log:         opts.Logger,
		damage:      dmg,
		notify:      make(chan struct{}),
		commits:     make(chan *commitRequest, 1024),
		checkpoints: make(chan *checkpointRequest),
		groups:      make(chan *group, 16),
		stop:        make(chan struct{}),
		disk:        disk,
		exit:        exitProcess,

		counters:   kv.NewTxCounters(),
		groupSizes: kv.NewHistogram(groupSizeBuckets),
		syncTimes:  kv.NewHistogram(kv.CommitBuckets),
	}
	version, err := readPosition(db, metaVersionKey)
	if err != nil {
		db.Close()
		return nil, err
	}
	if s.trimmed, err = readPosition(db, metaTrimKey); err != nil {
		db.Close()
		return nil, err
	}
	s.viewsClosed = sync.NewCond(&s.mu)
	s.current = s.newView(version)
	s.logSizes = newLogSizes(version)
	s.logTail = newLogTail(version, maxLogTail)
	s.values = newValueCache(version, valueBytes)
	seq := newSequencer(s, version)
	s.txs = kv.NewTracker(opts.MaxTxAge, s.log)
	s.wg.Add(2)
	go func() { defer s.wg.Done(); seq.run() }()
	go func() { defer s.wg.Done(); s.runSyncer() }()
	s.log.Info("pebble store opened", "dir", opts.Dir, "position", version)
	return s, nil
}

// openPebble opens Pebble's store in dir, saying so when another process
// has it open.
func openPebble(dir string, popts *pebble.Options) (*pebble.DB, error) {
	db, err := pebble.Open(dir, popts)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
		// Pebble holds an exclusive lock on its LOCK file while open.
		return nil, fmt.Errorf("pebblekv: data directory %s is in use by another Folio process (it holds the lock on %s): stop that one, or give this one another --data-dir: %w",
			dir, filepath.Join(dir, "LOCK"), err)
	}
	if err != nil {
		return nil, fmt.Errorf("pebblekv: open %s: %w", dir, err)
	}
	return db, nil
}

// pebbleOptions are the Pebble options of a store opened with opts.
// cacheSplit shares Options.CacheSize between Pebble's block cache and the
// value cache, which gets 1/valueCacheFraction of it.
func cacheSplit(size int64) (blockBytes, valueBytes int64) {
	valueBytes = size / valueCacheFraction
	return size - valueBytes, valueBytes
}

func pebbleOptions(opts Options, cache *pebble.Cache, listener *pebble.EventListener) *pebble.Options {
	popts := &pebble.Options{
		Cache:                 cache,
		Merger:                counterMerger,
		FormatMajorVersion:    pebble.FormatNewest,
		MemTableSize:          uint64(opts.MemTableSize),
		L0CompactionThreshold: l0CompactionThreshold,
		Logger:                pebbleLogger{opts.Logger},
		FS:                    boundedPreallocFS{opts.FS},
		EventListener:         listener,
	}
	if opts.Compression == CompressZstd {
		// Fast compression where tables are rewritten often, zstd in the
		// bottom levels where most of the data settles.
		popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionBalanced })
	}
	return popts
}

func readPosition(db *pebble.DB, key []byte) (kv.Position, error) {
	v, closer, err := db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, readError(fmt.Sprintf("read %q", key), err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("pebblekv: corrupt metadata %q", key)
	}
	return kv.Position(binary.BigEndian.Uint64(v)), nil
}

// Begin starts a transaction at the newest durable commit.
func (s *Store) Begin(ctx context.Context) (kv.Tx, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, kv.ErrClosed
	}
	if s.failure != nil {
		return nil, s.failure
	}
	t := &backendTx{s: s, view: s.current, started: time.Now()}
	t.view.refs++
	s.txs.Add(t, t.started)
	return kv.NewTx(t, s.limits, s.counters), nil
}

// acquire takes a reference on the current view.
func (s *Store) acquire() (*view, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, kv.ErrClosed
	}
	s.current.refs++
	return s.current, nil
}

// newView takes a snapshot of everything committed, up to version, with
// one reference, counted in views.
func (s *Store) newView(version kv.Position) *view {
	v := &view{version: version, snap: s.db.NewSnapshot(), refs: 1}
	s.mu.Lock()
	s.views++
	s.mu.Unlock()
	return v
}

// releaseLocked drops a reference on v, closing its snapshot when v is no
// longer current and nobody reads it.
func (s *Store) releaseLocked(v *view) {
	v.refs--
	if v.refs == 0 {
		v.snap.Close()
		s.views--
		s.viewsClosed.Broadcast()
	}
}

func (s *Store) release(v *view) {
	s.mu.Lock()
	s.releaseLocked(v)
	s.mu.Unlock()
}

// publish makes v the read view of new transactions and wakes log waiters.
func (s *Store) publish(v *view) {
	s.mu.Lock()
	old := s.current
	s.current = v
	s.releaseLocked(old)
	close(s.notify)
	s.notify = make(chan struct{})
	s.mu.Unlock()
}

// oldestReadVersion is the lowest read version any open transaction may
// still commit with: conflict history at or below it can go.
func (s *Store) oldestReadVersion() kv.Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.txs.OldestReadVersion(s.current.version)
}

// LastPosition is the position of the newest durable commit.
func (s *Store) LastPosition(ctx context.Context) (kv.Position, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, kv.ErrClosed
	}
	return s.current.version, nil
}

// Ping reports whether the store still serves: ErrClosed once closed, the
// write failure that stopped it if one did, the damaged data that stopped
// its writes if some was found, kv.ErrStorageFull while its disk has no
// room for commits, and nil otherwise. An embedded store has
// nothing to reach.
func (s *Store) Ping(ctx context.Context) error {
	s.mu.Lock()
	closed, failure := s.closed, s.failure
	s.mu.Unlock()
	if closed {
		return kv.ErrClosed
	}
	if failure != nil {
		return failure
	}
	if err := s.damage.err(); err != nil {
		return err
	}
	return s.disk.check()
}

// Close waits for in-flight commits, then closes Pebble. Transactions still
// open fail afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// No Begin registers a transaction once closed is set.
	s.txs.ExpireAll(kv.ErrClosed)
	s.inflight.Wait()
	close(s.stop)
	s.wg.Wait()
	s.txs.Stop()
	s.mu.Lock()
	s.releaseLocked(s.current)
	close(s.notify)
	// Expired transactions' scans close their iterators at their next
	// step; one whose reader is away (a response being written to a slow
	// client) is waited for, up to closeWait.
	left := s.waitForViewsLocked(closeWait)
	s.mu.Unlock()
	if left > 0 {
		// Closing Pebble under an open iterator panics. Left open, the
		// store is as after a crash, which loses nothing: every commit
		// it acknowledged is in its synced WAL.
		s.log.Error("pebblekv: read snapshots still in use at close: the store is left open, as after a crash (no acknowledged commit is lost)",
			"snapshots", left, "waited", closeWait)
		return fmt.Errorf("pebblekv: %d read snapshots still in use after %s: the store was left open", left, closeWait)
	}
	return s.db.Close()
}

// closeWait bounds how long Close waits for readers to let go of their
// snapshots.
var closeWait = 10 * time.Second

// waitForViewsLocked waits, with s.mu held, until every snapshot is closed
// or d has passed, and returns how many are left.
func (s *Store) waitForViewsLocked(d time.Duration) int {
	timedOut := false
	timer := time.AfterFunc(d, func() {
		s.mu.Lock()
		timedOut = true
		s.viewsClosed.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	for s.views > 0 && !timedOut {
		s.viewsClosed.Wait()
	}
	return s.views
}

// pebbleLogger routes Pebble's messages to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf must not return: Pebble calls it where it cannot go on, and
// carries on as if nothing happened if it returns (a failed commit, a
// failed WAL sync among them, would then look like a success). It panics
// with a fatalError, which the store's own calls into Pebble's commit path
// turn back into an error (see Store.fatalToError); anywhere else the panic
// ends the process, as Pebble intends.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	f := fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			f.cause = err
			break
		}
	}
	p.l.Error(f.msg, "component", "pebble")
	panic(f)
}

// fatalError is the panic value of pebbleLogger.Fatalf. It keeps the error
// among the message's arguments, so that a full disk is told apart.
type fatalError struct {
	msg   string
	cause error
}

func (e fatalError) Error() string { return e.msg }
func (e fatalError) Unwrap() error { return e.cause }

// fatalToError runs fn, a call into Pebble's commit path, and returns the
// fatal error Pebble raised in it through Fatalf as an error. Pebble raises
// one when a commit failed, chiefly its WAL sync, once its commit pipeline
// has returned (holding no lock); the WAL is unusable from then on, which
// is why the caller stops the store.
//
// Any other panic there comes from inside the pipeline: Pebble panics with
// the error of a WAL write that finds an earlier one failed, or of a WAL
// file it cannot create, holding its commit lock, with the batch still
// pending, and never lets go of either. Every later call into the commit
// path (the syncer's sync, a trim, Pebble's Close) would then wait for ever,
// and neither commits nor a shutdown could end. So the process ends, saying
// why (s.exit). Nothing acknowledged is lost: a commit is acknowledged only
// after its WAL sync, the failed write was not, and the WAL is replayed at
// the next start.
func (s *Store) fatalToError(fn func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if f, ok := r.(fatalError); ok {
			err = f
			return
		}
		s.log.Error("Pebble's commit pipeline is stuck after a failed write of its write-ahead log: ending the process; restart it (the log is replayed at the start, no acknowledged write is lost)",
			"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		s.exit()
		// Only a test's exit returns: the store stops as after any
		// failed write.
		err = fmt.Errorf("pebblekv: Pebble's commit pipeline is stuck: %v", r)
	}()
	return fn()
}

// exitProcess is a Store's exit outside tests.
func exitProcess() { os.Exit(1) }
