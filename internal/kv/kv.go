// Package kv is the storage interface every Folio backend implements: an
// ordered key-value space written in serializable transactions, plus a change
// log whose order is the commit order.
//
// The shape follows FoundationDB. A transaction reads from a snapshot taken at
// its read version (fixed at Begin, or at its first read on a backend where
// that saves a round trip, as FoundationDB takes it lazily) and buffers its
// writes; reads see the transaction's own
// writes. Every key range a transaction reads is recorded, and Commit rejects
// the transaction with a retryable conflict if another transaction that
// committed after its read version wrote into one of those ranges. That rule
// makes the isolation serializable, phantoms included. Transactions that only
// read never conflict.
//
// Keys whose first byte is 0xFF are reserved for the backends' own use (the
// change log, metadata); writing one is refused with ErrReservedKey.
//
// kv knows bytes only: nothing in it knows documents.
package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// Store is an open key-value store.
type Store interface {
	// Begin starts a transaction reading at the newest durable commit, as
	// of Begin or of the transaction's first read (the backend's choice).
	// The transaction must end with Commit or Rollback; the store reclaims
	// transactions abandoned for longer than its maximum transaction age.
	Begin(ctx context.Context) (Tx, error)

	// ReadLog returns change-log entries with positions greater than after,
	// in commit order, at most limit of them (limit <= 0 means a backend
	// default), and the position upTo through which it has read: the next
	// call continues after upTo, and WaitLog(ctx, upTo) waits for more. It
	// returns only durable entries, and never an entry at a position lower
	// than one it returned before: a reader that has seen position p has seen
	// every entry committed before it. If entries after `after` were trimmed
	// it fails with ErrLogTrimmed.
	ReadLog(ctx context.Context, after Position, limit int) (entries []LogEntry, upTo Position, err error)

	// WaitLog blocks until a commit after position after is durable, or ctx
	// is done. It does not poll the storage.
	WaitLog(ctx context.Context, after Position) error

	// LastPosition is the position of the newest durable commit.
	LastPosition(ctx context.Context) (Position, error)

	// TrimLog removes log entries at positions below `below`.
	TrimLog(ctx context.Context, below Position) error

	// LogBytes is the size of the change-log entries at positions in
	// (after, upTo]: their records as stored, not the storage's own
	// overhead around them. It reads what it counts, so callers ask for
	// the entries they have not counted yet.
	LogBytes(ctx context.Context, after, upTo Position) (int64, error)

	// Ping tells cheaply whether the store can serve now: nil if it can,
	// an error wrapping ErrUnavailable while its storage cannot be reached,
	// ErrClosed once it is closed. A backend with a server makes at most
	// one short round trip, bounded by its own timeout: health checks call
	// it.
	Ping(ctx context.Context) error

	// Close waits for in-flight commits and releases the store. Open
	// transactions fail afterwards with ErrClosed.
	Close() error
}

// Reader is the read side of a transaction.
type Reader interface {
	// Get returns the value of key, or ErrNotFound.
	Get(ctx context.Context, key []byte) ([]byte, error)
	// GetMany reads several keys as one Get each would, in one round trip
	// on a backend with a server. values[i] is the value of keys[i]: nil if
	// the key has none, a non-nil (possibly empty) slice if it has one.
	GetMany(ctx context.Context, keys [][]byte) (values [][]byte, err error)
	// Scan iterates over the keys in r in order (reverse order when
	// opts.Reverse is set). The iterator must be closed.
	Scan(ctx context.Context, r Range, opts ScanOptions) Iterator
}

// Tx is a transaction. Its methods are not safe for concurrent use: a caller
// that shares one transaction between goroutines serializes them itself.
type Tx interface {
	Reader

	// Snapshot returns a view of the transaction whose reads record no read
	// conflict ranges (they still see the transaction's own writes).
	Snapshot() Reader

	// Set writes value under key.
	Set(key, value []byte) error
	// Clear removes key.
	Clear(key []byte) error
	// ClearRange removes every key in r.
	ClearRange(r Range) error
	// Add adds delta to the little-endian int64 counter stored under key
	// (a missing key counts as zero) without reading it: concurrent Adds to
	// one key never conflict with each other. A transaction that reads the
	// key conflicts with concurrent Adds to it, as with any write.
	Add(key []byte, delta int64) error
	// AddReadConflictRange records r as read, as if it had been scanned.
	AddReadConflictRange(r Range) error
	// Expect records that the transaction relies on key holding value (nil:
	// no value), taken from a cache, as if a Get had returned it: the key
	// joins the read ranges, and the value is checked with the
	// transaction's next read from the store (in the same round trip on a
	// backend with a server), or before its commit if it reads nothing
	// more. If the key holds anything else, that read or commit fails with
	// ErrConflict after calling stale (if not nil), so that the cache can
	// drop the value before a retry.
	Expect(key, value []byte, stale func()) error
	// CheckExpected makes Expect's pending checks now, if any are left: a
	// caller about to answer from what it expected, without another read,
	// calls it first.
	CheckExpected(ctx context.Context) error
	// Wrote tells whether the transaction wrote key (a Set, Clear or Add of
	// it, or a ClearRange over it): its reads of key then show its own
	// writes, which a cache must not keep.
	Wrote(key []byte) bool
	// AppendLog appends a record to the transaction's change-log entry. The
	// entry's position is assigned at commit, in commit order, and the entry
	// is written atomically with the transaction's other writes.
	AppendLog(record []byte) error

	// ReadVersion is the commit position the transaction reads at.
	ReadVersion() Position

	// Commit makes the transaction's writes durable and visible. It returns
	// the transaction's commit position, or the read version if the
	// transaction wrote nothing. A conflict gives an error for which
	// IsRetryable is true, and nothing of the transaction is applied.
	Commit(ctx context.Context) (Position, error)
	// Rollback discards the transaction. It is safe to call after Commit
	// and more than once.
	Rollback()
}

// Position is a place in the commit order. Every committed transaction that
// wrote something has a unique position; positions increase in commit order
// and double as commit versions (and transaction ids for change events).
type Position uint64

// LogEntry is one committed transaction's change-log entry.
type LogEntry struct {
	Pos     Position
	Records [][]byte
}

// Range is the half-open key range [Begin, End). A nil End means "to the end
// of the user key space".
type Range struct {
	Begin, End []byte
}

// PrefixRange is the range of every key that starts with prefix.
func PrefixRange(prefix []byte) Range {
	return Range{Begin: prefix, End: PrefixEnd(prefix)}
}

// KeyRange is the range holding exactly key.
func KeyRange(key []byte) Range {
	return Range{Begin: key, End: KeyAfter(key)}
}

// PrefixEnd is the first key after every key that starts with prefix, or nil
// if there is none (a prefix of only 0xFF bytes).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// KeyAfter is the first key after key in byte order.
func KeyAfter(key []byte) []byte {
	k := make([]byte, len(key)+1)
	copy(k, key)
	return k
}

// ScanOptions narrow a Scan.
type ScanOptions struct {
	Reverse bool
	Limit   int // 0 means no limit
}

// Iterator walks the result of a Scan:
//
//	it := tx.Scan(ctx, r, kv.ScanOptions{})
//	defer it.Close()
//	for it.Next() { use(it.Key(), it.Value()) }
//	if err := it.Err(); err != nil { ... }
//
// Key and Value are valid until the next call to Next. The read conflict range
// a Scan records ends where the iteration stopped.
type Iterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

// Errors. Backends wrap these, so test them with errors.Is.
var (
	ErrNotFound      = errors.New("kv: key not found")
	ErrConflict      = errors.New("kv: transaction not committed due to conflict with another transaction")
	ErrTxTooOld      = errors.New("kv: transaction is too old")
	ErrTxDone        = errors.New("kv: transaction already committed or rolled back")
	ErrTxTooLarge    = errors.New("kv: transaction too large")
	ErrKeyTooLarge   = errors.New("kv: key too large")
	ErrValueTooLarge = errors.New("kv: value too large")
	ErrReservedKey   = errors.New("kv: key in the reserved 0xFF key space")
	ErrInvalidRange  = errors.New("kv: invalid range")
	ErrLogTrimmed    = errors.New("kv: change-log position has been trimmed")
	ErrClosed        = errors.New("kv: store closed")
	// ErrDataLoss: the store found stored data damaged (a checksum that
	// does not match). Retrying does not help; restoring a backup does.
	ErrDataLoss = errors.New("kv: stored data is damaged")
	// ErrUnavailable: the storage cannot be reached now (its server is
	// down or restarting, the network is cut, the connection broke); trying
	// again later may work. It is not retryable in the sense of
	// IsRetryable: retrying at once would only wait again.
	ErrUnavailable = errors.New("kv: storage unavailable")
	// ErrBusy is the ErrUnavailable of a store that reached its storage
	// but had no connection to it free within the time it waits for one:
	// too much work at once.
	ErrBusy = fmt.Errorf("%w: no connection free", ErrUnavailable)
	// ErrStorageFull: the storage has no room for more writes (its disk is
	// full, or nearly); reads still work. Writes may work again once space
	// is freed.
	ErrStorageFull = errors.New("kv: storage full")
)

// IsRetryable reports whether err is one that a new attempt of the same
// transaction may not hit: a conflict or a transaction that grew too old.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, ErrTxTooOld)
}

// Limits are the sizes a store refuses to exceed. Zero values take defaults.
type Limits struct {
	MaxKeySize   int // bytes; default 10 KiB
	MaxValueSize int // bytes; default 1 MiB
	MaxTxSize    int // bytes of keys and values written; default 10 MiB
}

// Default limits.
const (
	DefaultMaxKeySize   = 10 << 10
	DefaultMaxValueSize = 1 << 20
	DefaultMaxTxSize    = 10 << 20
)

// WithDefaults fills the zero fields of l with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxKeySize <= 0 {
		l.MaxKeySize = DefaultMaxKeySize
	}
	if l.MaxValueSize <= 0 {
		l.MaxValueSize = DefaultMaxValueSize
	}
	if l.MaxTxSize <= 0 {
		l.MaxTxSize = DefaultMaxTxSize
	}
	return l
}

// CheckKey validates a user key against the limits.
func (l Limits) CheckKey(key []byte) error {
	if len(key) > 0 && key[0] == 0xFF {
		return fmt.Errorf("%w: %q", ErrReservedKey, truncate(key))
	}
	if len(key) > l.MaxKeySize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrKeyTooLarge, len(key), l.MaxKeySize)
	}
	return nil
}

// CheckValue validates a value against the limits.
func (l Limits) CheckValue(value []byte) error {
	if len(value) > l.MaxValueSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrValueTooLarge, len(value), l.MaxValueSize)
	}
	return nil
}

// CheckRange validates a range given to ClearRange or a conflict range.
func (l Limits) CheckRange(r Range) error {
	if len(r.Begin) > 0 && r.Begin[0] == 0xFF {
		return fmt.Errorf("%w: %q", ErrReservedKey, truncate(r.Begin))
	}
	if r.End != nil && CompareKeys(r.Begin, r.End) > 0 {
		return fmt.Errorf("%w: begin %q after end %q", ErrInvalidRange, truncate(r.Begin), truncate(r.End))
	}
	if len(r.Begin) > l.MaxKeySize || len(r.End) > l.MaxKeySize+1 {
		return fmt.Errorf("%w: range bound longer than %d bytes", ErrKeyTooLarge, l.MaxKeySize)
	}
	return nil
}

func truncate(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}

// EncodeLogRecords frames the records of one log entry as one value:
// a uvarint count, then each record as a uvarint length and its bytes.
func EncodeLogRecords(records [][]byte) []byte {
	n := binary.MaxVarintLen64
	for _, r := range records {
		n += binary.MaxVarintLen64 + len(r)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(records)))
	for _, r := range records {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// DecodeLogRecords reverses EncodeLogRecords.
func DecodeLogRecords(b []byte) ([][]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return nil, errors.New("kv: corrupt log entry header")
	}
	b = b[n:]
	records := make([][]byte, 0, count)
	for i := uint64(0); i < count; i++ {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, errors.New("kv: corrupt log entry record")
		}
		records = append(records, b[n:n+int(l)])
		b = b[n+int(l):]
	}
	return records, nil
}

// Checkpointer is a store that can write a consistent copy of itself while
// it serves: the embedded store. A store without it (PostgreSQL) is backed
// up with its own server's tools.
type Checkpointer interface {
	// Checkpoint writes a copy of the store into dir, which must not exist
	// and should be on the store's own filesystem (files are hard-linked
	// where they can be). The copy holds every commit up to the position it
	// returns, and none after it; commits wait while it is cut.
	Checkpoint(ctx context.Context, dir string) (Position, error)
	// Dir is the store's directory: a checkpoint cut beside it is fast.
	Dir() string
}
