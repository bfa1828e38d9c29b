package pebblekv

import (
	"bytes"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/foliodb/folio/internal/kv"
)

// valueCache keeps values that reads found, so that a later read of the same
// key is served from memory instead of Pebble: a point read's Get, through
// the memtables and every level's tables, was a seventh of the server's CPU
// under point reads. It also vouches for values that transactions expected
// (kv.Tx.Expect: the catalog's collection records, checked by every
// request) without a read.
//
// Each entry holds the value a read found at position at, and lastWrite:
// the newest commit that wrote the key, or for a key first seen, the newest
// that may have. The sequencer notes every commit that writes a key here
// before the commit is published (wrote). So an entry whose lastWrite is
// at or below at holds the key's value at every position from lastWrite on,
// until the next commit that writes the key, which is not visible to any
// read before wrote has run: it serves a read at version v if lastWrite <= v.
// Every write of a user key goes through the sequencer (the log's trim
// writes only the store's own keys), so none escapes it.
//
// Its memory is bounded: entries are spread over shards by key, each with
// its share of the budget; a shard over it evicts entries not used since
// the last sweep passed them (a clock, sampled).
type valueCache struct {
	// assigned is the newest position the sequencer gave a commit: a key
	// first seen may have been written by any commit up to it. It is
	// stored before the commit's keys are noted, and loaded under the key's
	// shard lock, so a first read that races a commit of its key either
	// gets the new position or is found and marked by the commit.
	assigned atomic.Uint64
	seed     maphash.Seed
	// maxValue is the largest value kept: a few big documents must not
	// push out many small ones.
	maxValue int
	shards   [valueCacheShards]valueShard

	hits, misses atomic.Int64
}

type valueShard struct {
	mu      sync.Mutex
	entries map[string]*cachedValue
	bytes   int // keys, values and per-entry overhead
	budget  int
	_       [40]byte // keeps shards' locks on separate cache lines
}

type cachedValue struct {
	key       string
	lastWrite kv.Position
	// value is what a read found at position at; present tells a value
	// from none.
	value   []byte
	present bool
	at      kv.Position
	// used is set by a hit and cleared by the eviction sweep passing by.
	used bool
}

const (
	valueCacheShards = 16
	// entryOverhead approximates an entry's memory beside its key and
	// value: the struct, the map slot and the string header.
	entryOverhead = 96
	// minValueCache is the least a cache is given: the catalog records
	// Expect vouches for must fit whatever the configured size.
	minValueCache = 1 << 20
)

// newValueCache returns a cache of about size bytes (at least
// minValueCache) that has seen commits up to opened.
func newValueCache(opened kv.Position, size int64) *valueCache {
	size = max(size, minValueCache)
	c := &valueCache{seed: maphash.MakeSeed(), maxValue: int(min(size/64, 64<<10))}
	c.assigned.Store(uint64(opened))
	for i := range c.shards {
		c.shards[i].entries = make(map[string]*cachedValue)
		c.shards[i].budget = int(size / valueCacheShards)
	}
	return c
}

func (c *valueCache) shard(key []byte) *valueShard {
	return &c.shards[maphash.Bytes(c.seed, key)%valueCacheShards]
}

// appendValue appends the value key holds at position at to dst, if the
// cache knows it: ok tells whether it does, present whether the key holds
// a value at all.
func (c *valueCache) appendValue(dst, key []byte, at kv.Position) (_ []byte, present, ok bool) {
	sh := c.shard(key)
	sh.mu.Lock()
	e := sh.entries[string(key)]
	if e == nil || e.lastWrite > min(e.at, at) {
		sh.mu.Unlock()
		c.misses.Add(1)
		return dst, false, false
	}
	e.used = true
	present = e.present
	dst = append(dst, e.value...)
	sh.mu.Unlock()
	c.hits.Add(1)
	return dst, present, true
}

// holds reports whether key holds value (nil: none) at position at.
func (c *valueCache) holds(key, value []byte, at kv.Position) bool {
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entries[string(key)]
	return e != nil && e.lastWrite <= min(e.at, at) && e.present == (value != nil) && bytes.Equal(e.value, value)
}

// saw records that a read at position at found value under key, or none
// if not present.
func (c *valueCache) saw(key, value []byte, present bool, at kv.Position) {
	if len(value) > c.maxValue {
		return
	}
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entries[string(key)]
	if e == nil {
		e = &cachedValue{key: string(key), lastWrite: kv.Position(c.assigned.Load())}
		sh.entries[e.key] = e
		sh.bytes += entryOverhead + len(e.key)
	}
	if at >= e.at {
		sh.bytes -= cap(e.value)
		e.value, e.present, e.at = append(e.value[:0], value...), present, at
		sh.bytes += cap(e.value)
	}
	for sh.bytes > sh.budget && len(sh.entries) > 1 {
		sh.evict(e)
	}
}

// evict removes one entry other than keep: the first not used since the
// sweep last passed it, among a few from a random place in the map.
func (sh *valueShard) evict(keep *cachedValue) {
	const sample = 8
	var victim *cachedValue
	n := 0
	for _, e := range sh.entries {
		if e == keep {
			continue
		}
		victim = e
		if !e.used {
			break
		}
		e.used = false
		if n++; n == sample {
			break
		}
	}
	delete(sh.entries, victim.key)
	sh.bytes -= entryOverhead + len(victim.key) + cap(victim.value)
}

// wrote notes a commit at pos, before it is published.
func (c *valueCache) wrote(pos kv.Position, w *kv.WriteBuffer) {
	c.assigned.Store(uint64(pos))
	if len(w.ClearedRanges()) > 0 {
		// A cleared range (a collection dropped) empties the cache rather
		// than find its keys: that would take the sequencer through every
		// entry while commits wait. A key read again is marked as first
		// seen, at or after pos.
		for i := range c.shards {
			sh := &c.shards[i]
			sh.mu.Lock()
			sh.entries, sh.bytes = make(map[string]*cachedValue), 0
			sh.mu.Unlock()
		}
	}
	w.Mutations(func(m *kv.Mutation) bool {
		sh := c.shard(m.Key)
		sh.mu.Lock()
		if e := sh.entries[string(m.Key)]; e != nil {
			e.lastWrite = pos
		}
		sh.mu.Unlock()
		return true
	})
}

// size returns the bytes the cache holds.
func (c *valueCache) size() int64 {
	var n int64
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += int64(sh.bytes)
		sh.mu.Unlock()
	}
	return n
}

// Holds implements kv.KnownValues.
func (t *backendTx) Holds(key, value []byte) bool {
	return t.s.values.holds(key, value, t.view.version)
}

// Saw implements kv.KnownValues.
func (t *backendTx) Saw(key, value []byte) { t.s.values.saw(key, value, value != nil, t.view.version) }
