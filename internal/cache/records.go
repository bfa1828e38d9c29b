package cache

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// A cache call needs its cache's record, and reading it (with the
// project's database record before it) cost a store transaction per call,
// more than the call's own work on a volatile cache. So a node remembers
// the records it reads, by namespace, project and cache name:
//
//   - a volatile cache's calls use a record read less than RecordBound ago
//     without any transaction. A cache deleted or created again on another
//     node is served from its old record (its entries on this node, under
//     the old id) for at most that long; on this node, DeleteCache and
//     CreateCache forget the record at once;
//   - a durable cache's calls use a remembered record, whatever its age,
//     only as the transaction's expectation (kv.Tx.Expect): the transaction
//     fails with a retryable conflict, forgetting it, if the record changed
//     or went (its project dropped, or dropped and created again), so a
//     durable entry is never read or written through a stale record.

// RecordBound is how long a node serves a volatile cache from a record it
// read without reading it again: how long a cache deleted or created
// again on another node may still be answered from the old one here.
const RecordBound = time.Second

// maxRecords bounds the records remembered; past it they start over.
const maxRecords = 4096

// RecordKey names a cache as a call does: its namespace, its project's
// name and its own.
type RecordKey struct {
	NS            int64
	Project, Name string
}

// remembered is a cache's record as read at readAt.
type remembered struct {
	cache  *Cache
	bytes  []byte // the record as stored, for Expect
	readAt time.Time
	forget func()
}

type records struct {
	mu    sync.RWMutex
	by    map[RecordKey]*remembered
	epoch uint64 // counts forgets, so that a read older than one is not kept
}

func newRecords() *records { return &records{by: make(map[RecordKey]*remembered)} }

func (r *records) load(k RecordKey) *remembered {
	r.mu.RLock()
	e := r.by[k]
	r.mu.RUnlock()
	return e
}

// RecordRead is what a lookup notes before its transaction starts: when
// (the bound counts from before the snapshot) and the epoch (a forget
// since then makes what it reads too old to keep).
type RecordRead struct {
	at    time.Time
	epoch uint64
}

// BeginRead notes the time and epoch before a transaction that may look a
// cache up (LookupRemembering).
func (s *Service) BeginRead() RecordRead {
	s.records.mu.RLock()
	defer s.records.mu.RUnlock()
	return RecordRead{at: s.now(), epoch: s.records.epoch}
}

// Fresh returns cache k if it is volatile and this node read its record
// less than RecordBound ago, or nil: a volatile call then needs no
// transaction.
func (s *Service) Fresh(k RecordKey) *Cache {
	e := s.records.load(k)
	if e == nil || !e.cache.Volatile || s.now().Sub(e.readAt) >= RecordBound {
		return nil
	}
	return e.cache
}

// Expected returns durable cache k as this node last read its record,
// having made tx expect that record (kv.Tx.Expect), or nil if it has none
// remembered. The caller reads or commits before it answers (or calls
// tx.CheckExpected), which fails with a retryable conflict if the record
// changed.
func (s *Service) Expected(tx kv.Tx, k RecordKey) (*Cache, error) {
	e := s.records.load(k)
	if e == nil || e.cache.Volatile {
		return nil, nil
	}
	if err := tx.Expect(keyspace.Cache(e.cache.DB, k.Name), e.bytes, e.forget); err != nil {
		return nil, err
	}
	return e.cache, nil
}

// LookupRemembering is Lookup of cache k in database db, which also
// remembers the record it read as of read (BeginRead), unless tx wrote it
// or a forget came since.
func (s *Service) LookupRemembering(ctx context.Context, tx kv.Tx, k RecordKey, db int64, read RecordRead) (*Cache, error) {
	key := keyspace.Cache(db, k.Name)
	v, err := tx.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, notFound(k.Name)
	}
	if err != nil {
		return nil, err
	}
	c, err := parseRecord(db, k.Name, v)
	if err != nil || tx.Wrote(key) {
		return c, err
	}
	e := &remembered{cache: c, bytes: bytes.Clone(v), readAt: read.at}
	r := s.records
	e.forget = func() {
		r.mu.Lock()
		if r.by[k] == e {
			delete(r.by, k)
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.epoch != read.epoch {
		return c, nil
	}
	if len(r.by) >= maxRecords {
		clear(r.by)
	}
	r.by[k] = e
	return c, nil
}

// Forget forgets cache k's record, after this node created or deleted the
// cache: its next call reads the record again. A volatile cache deleted
// has its entries here dropped too, in case a call through the old record
// wrote some after Delete dropped them.
func (s *Service) Forget(k RecordKey) {
	r := s.records
	r.mu.Lock()
	e := r.by[k]
	delete(r.by, k)
	r.epoch++
	r.mu.Unlock()
	if e != nil && e.cache.Volatile {
		s.memory.drop(e.cache.ID)
	}
}

// ForgetAll forgets every record, after this node dropped a project (and
// its caches with it).
func (s *Service) ForgetAll() {
	r := s.records
	r.mu.Lock()
	clear(r.by)
	r.epoch++
	r.mu.Unlock()
}
