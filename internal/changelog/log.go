// Package changelog is Folio's change log above kv: what goes into it (one
// Record per changed document, published message or DDL change, appended
// in the same transaction as the change) and how it is read (a Reader
// with a position) and kept (the trimmer).
//
// # Readers
//
// A Log is the store's change log with a registry of readers. A Reader is
// opened at a position and reads what was committed after it, in commit
// order, one Entry per committed transaction with its records decoded.
// Read returns what is there now without waiting; Wait blocks until there
// is more (kv.Store.WaitLog: no polling); Next does both. A Reader's
// position is where it has read to: every entry at or before it has been
// returned by Read. The position moves when Read returns, not when the
// caller is done with what it got: a reader that must not lose entries
// across a restart (the search indexer) keeps its own durable watermark
// and opens its reader there.
//
// Records are decoded once per Read, and a record that does not decode
// fails the Read without moving the reader: the log is written by Folio
// only, so such a record is a bug or corruption to report, not to skip.
//
// # Retention and the trimmer
//
// The trimmer (RunTrimmer, or Tick for a test's clock) keeps the log to
// Options.Retention: it removes the entries committed longer than the
// retention ago, so that streams can resume from any position of that
// period. The log stores positions, not times. The trimmer maps one to
// the other by noting, at every tick, the time and the log's last
// position: an entry at or below a position noted at time T was committed
// by T, and one above it after T. It trims below the newest note older
// than the retention, so an entry is kept at least the retention and at
// most one tick longer. Notes live in memory: a restart forgets them, and
// what was committed before it is then kept for the retention counted from
// the restart. Keeping an entry too long is safe; trimming one too early
// never happens.
//
// An open Reader holds the trimmer back: nothing it has not read is
// trimmed, however old. That holds within a bound: a reader whose next
// entry was committed more than Retention + MaxHold ago (its position is
// below a note older than that) is cut off at the next tick. It no longer
// holds the trimmer, which trims as if it were not there, and its next
// Read fails with ErrCutOff: it fell too far behind and
// must resync from a fresh position. So one stalled reader costs at most
// MaxHold of extra log, never the disk. A reader cannot open below where
// the trimmer has trimmed (ErrTrimmed at once), so none is registered
// behind a trim in progress. Without a Retention the log is kept whole,
// no reader is ever cut off, and RunTrimmer returns at once.
//
// Each note also counts the bytes of the entries since the previous one,
// for the byte bound (Options.MaxBytes) and for Bytes, which reports what
// the log takes: so each entry is read once to be counted, not the whole
// log at every ask.
//
// The registry is in memory, per process. Several nodes sharing one
// PostgreSQL cluster each run a trimmer, and each holds back only for its
// own readers: a reader on one node is protected from another node's
// trimmer by the retention alone.
package changelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// Options configure a Log. Zero values take the defaults.
type Options struct {
	// Retention is how long the trimmer keeps an entry after its commit.
	// Zero keeps the whole log: no trimming, no reader cut off.
	Retention time.Duration
	// MaxHold is how much longer than Retention an open reader may keep
	// entries it has not read; past it the reader is cut off. Default: as
	// long as Retention.
	MaxHold time.Duration
	// MaxBytes bounds what the log's entries take (their records as
	// stored): past it the trimmer removes the oldest, whatever the
	// retention, and cuts off the readers that had not read them. Zero:
	// no byte bound.
	MaxBytes int64
	// ReadBatch is the most entries a Read returns when its limit is 0.
	// An entry may be as large as a transaction (10 MiB by default), so
	// this bounds what one read holds in memory.
	ReadBatch int
	// Logger reports the trimmer's work and failures.
	Logger *slog.Logger
}

// DefaultReadBatch is the default of Options.ReadBatch.
const DefaultReadBatch = 32

// Errors of readers, which readers wrap with positions (test with
// errors.Is). They are the storage's, without an API code: the operations
// give them theirs (OUT_OF_RANGE, with a message for a client), as a
// stream's reader words them for its stream.
var (
	// ErrTrimmed: the entries after the reader's position were trimmed.
	ErrTrimmed = errors.New("changelog: the entries after the position were trimmed")
	// ErrAhead: the position is past the end of the log, so it comes from
	// another server or data directory.
	ErrAhead = errors.New("changelog: the position is ahead of the log")
	// ErrCutOff: the reader held the trimmer back for longer than the
	// retention plus MaxHold, and was cut off.
	ErrCutOff = errors.New("changelog: the reader held the trimmer back past the retention and was cut off")
	// ErrCutOffBySize: the log reached its byte bound (Options.MaxBytes)
	// and trimmed entries the reader had not read.
	ErrCutOffBySize = errors.New("changelog: the log's byte bound trimmed entries the reader had not read")
	// ErrReaderClosed: Read or Wait after Close.
	ErrReaderClosed = errors.New("changelog: reader closed")
)

// Behind reports whether err tells a reader that the log no longer holds
// what it needs (trimmed, or the reader cut off for holding the trimmer
// back too long or past the byte bound): it must resync, from a fresh
// position or from the data itself.
func Behind(err error) bool {
	return errors.Is(err, ErrTrimmed) || errors.Is(err, ErrCutOff) || errors.Is(err, ErrCutOffBySize)
}

// Log is a store's change log: it opens readers and trims the log around
// them. Its methods are safe for concurrent use.
type Log struct {
	store kv.Store
	opts  Options

	mu      sync.Mutex
	readers map[*Reader]struct{}
	// floor is the lowest position the trimmer may still trim below:
	// entries below it are gone or going, so no reader opens before it.
	floor kv.Position

	trim trimmer

	// tail counts, for Bytes, the entries after the trimmer's last note.
	tail struct {
		sync.Mutex
		from, pos kv.Position // the note's position; counted through pos
		bytes     int64
	}
}

// NewLog returns the change log of store. It starts nothing: the caller
// runs the trimmer (RunTrimmer) if the log has a retention.
func NewLog(store kv.Store, opts Options) *Log {
	if opts.MaxHold <= 0 {
		opts.MaxHold = opts.Retention
	}
	if opts.ReadBatch <= 0 {
		opts.ReadBatch = DefaultReadBatch
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Log{store: store, opts: opts, readers: make(map[*Reader]struct{})}
}

// Store is the store the log belongs to.
func (l *Log) Store() kv.Store { return l.store }

// ReaderStats is one open reader's place in the log.
type ReaderStats struct {
	// Name is the part that reads (OpenReader's name).
	Name     string
	Position kv.Position
}

// Stats is a snapshot of the log's end and its readers, for monitoring.
type Stats struct {
	// LastPosition is the newest durable commit's position.
	LastPosition kv.Position
	Readers      []ReaderStats
}

// Stats reports the log's end and where each open reader is.
func (l *Log) Stats(ctx context.Context) (Stats, error) {
	last, err := l.store.LastPosition(ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("changelog: stats: %w", err)
	}
	st := Stats{LastPosition: last}
	l.mu.Lock()
	defer l.mu.Unlock()
	for r := range l.readers {
		st.Readers = append(st.Readers, ReaderStats{Name: r.name, Position: r.pos})
	}
	return st, nil
}

// Readers is the number of open readers that hold the trimmer back.
func (l *Log) Readers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.readers)
}

// Bytes is what the log's entries take now, their records as stored
// (kv.Store.LogBytes): the bytes the trimmer counted at its ticks, and
// those of the entries committed since its last tick, which Bytes counts
// itself. Each entry is read once to be counted, so a call reads only what
// was committed since the last call or tick. A note's entries count until
// a trim has passed them all: after a trim that an open reader held back
// in the middle of one, up to one trimmer interval's entries that are gone
// still count. Without a trimmer nothing is trimmed and the count is
// exact. On PostgreSQL each node counts the log as its own trimmer keeps
// it.
func (l *Log) Bytes(ctx context.Context) (int64, error) {
	var base counted
	if c := l.trim.counted.Load(); c != nil {
		base = *c
	}
	t := &l.tail
	t.Lock()
	defer t.Unlock()
	if t.from != base.pos {
		t.from, t.pos, t.bytes = base.pos, base.pos, 0
	}
	last, err := l.store.LastPosition(ctx)
	if err != nil {
		return 0, fmt.Errorf("changelog: size of the log: %w", err)
	}
	if last > t.pos {
		n, err := l.store.LogBytes(ctx, t.pos, last)
		if err != nil {
			return 0, fmt.Errorf("changelog: size of the log: %w", err)
		}
		t.pos, t.bytes = last, t.bytes+n
	}
	return base.bytes + t.bytes, nil
}

// OpenReader opens a reader, named for the part that reads (its Stats),
// after position after: its first Read returns
// the entries committed after it. A position ahead of the log fails with
// ErrAhead, and one the trimmer has passed with ErrTrimmed (one trimmed
// before this process started is found by the first Read instead). The
// reader holds the trimmer back until it is closed or cut off.
func (l *Log) OpenReader(ctx context.Context, name string, after kv.Position) (*Reader, error) {
	last, err := l.store.LastPosition(ctx)
	if err != nil {
		return nil, fmt.Errorf("changelog: open a reader: %w", err)
	}
	if after > last {
		return nil, fmt.Errorf("changelog: open a reader after %d, the log ends at %d: %w", after, last, ErrAhead)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if after+1 < l.floor {
		return nil, fmt.Errorf("changelog: open a reader after %d, the log is trimmed below %d: %w", after, l.floor, ErrTrimmed)
	}
	r := &Reader{log: l, name: name, pos: after}
	l.readers[r] = struct{}{}
	return r, nil
}
