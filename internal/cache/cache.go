// Package cache is Folio's key-value caches (the final API's Cache
// service): a project's named caches of keys and byte values, with
// Redis's SET conditions (only if absent, only if present) and expiry.
//
// A cache's record and, unless the cache is volatile, its entries are in
// the store (keyspace's "k" keys), written in kv transactions like
// documents, so they are as durable as documents, on either engine, and
// go with the project (catalog's DropDatabase clears them). A volatile
// cache's entries are in the memory of the node that wrote them (memory.go):
// no store write, nothing fsynced, lost on restart, and with several nodes
// each node has its own.
//
// An entry carries its expiry time: a read checks it against the clock, so
// an expired entry is never answered, whenever the sweep (sweep.go) gets
// to reclaiming it.
package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// Service keeps the caches: their records and entries in the store, and
// the volatile caches' entries in memory.
type Service struct {
	now     func() time.Time
	memory  *memory
	records *records // the caches' records this node read (records.go)
}

// New returns the caches' service, reading the time from now (nil: the
// system clock; tests give their own).
func New(now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{now: now, memory: newMemory(), records: newRecords()}
}

func (s *Service) nowMs() int64 { return s.now().UnixMilli() }

// Cache is a cache as its record has it.
type Cache struct {
	DB   int64 // the project's database id
	Name string
	// ID tells this cache from one of the same name deleted before it:
	// what a volatile cache's entries are kept under.
	ID       string
	Volatile bool
	// TTL is the time to live of an entry set without one (0: none).
	TTL time.Duration
}

type record struct {
	ID        string    `json:"id"`
	Volatile  bool      `json:"volatile,omitempty"`
	TTLMs     uint64    `json:"ttl_ms,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Options are a new cache's.
type Options struct {
	TTLMs    uint64
	Volatile bool
}

func notFound(name string) error {
	return apierror.Errorf(apierror.NotFound, "cache not found '%s'", name)
}

// Create creates cache name in database db, or fails with ALREADY_EXISTS.
func (s *Service) Create(ctx context.Context, tx kv.Tx, db int64, name string, o Options) error {
	key := keyspace.Cache(db, name)
	if _, err := tx.Get(ctx, key); err == nil {
		return apierror.Errorf(apierror.AlreadyExists, "cache already exist '%s'", name)
	} else if !errors.Is(err, kv.ErrNotFound) {
		return err
	}
	if o.TTLMs > uint64(maxTTL/time.Millisecond) {
		return errExpiry
	}
	var id [8]byte
	rand.Read(id[:])
	b, err := json.Marshal(record{ID: hex.EncodeToString(id[:]), Volatile: o.Volatile, TTLMs: o.TTLMs, CreatedAt: s.now().UTC()})
	if err != nil {
		return err
	}
	return tx.Set(key, b)
}

// Lookup returns cache name of database db, or NOT_FOUND.
func (s *Service) Lookup(ctx context.Context, tx kv.Reader, db int64, name string) (*Cache, error) {
	v, err := tx.Get(ctx, keyspace.Cache(db, name))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, notFound(name)
	}
	if err != nil {
		return nil, err
	}
	return parseRecord(db, name, v)
}

func parseRecord(db int64, name string, v []byte) (*Cache, error) {
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("cache: record of %q: %w", name, err)
	}
	return &Cache{DB: db, Name: name, ID: r.ID, Volatile: r.Volatile, TTL: time.Duration(r.TTLMs) * time.Millisecond}, nil
}

// Delete removes a cache and its entries, or fails with NOT_FOUND.
func (s *Service) Delete(ctx context.Context, tx kv.Tx, db int64, name string) error {
	c, err := s.Lookup(ctx, tx, db, name)
	if err != nil {
		return err
	}
	if err := tx.Clear(keyspace.Cache(db, name)); err != nil {
		return err
	}
	if c.Volatile {
		// This node's entries go now; another node's at its next sweep,
		// which finds the record gone.
		s.memory.drop(c.ID)
		return nil
	}
	return tx.ClearRange(keyspace.CacheEntries(db, name))
}

// List returns the names of database db's caches, in name order.
func (s *Service) List(ctx context.Context, tx kv.Reader, db int64) ([]string, error) {
	it := tx.Scan(ctx, keyspace.Caches(db), kv.ScanOptions{})
	defer it.Close()
	var names []string
	for it.Next() {
		name, err := keyspace.LastString(it.Key())
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, it.Err()
}

// Set sets key's value in cache c under o's conditions and expiry. A
// volatile cache's entry is written in memory (tx is not used, and may be
// nil); a durable one's in tx.
func (s *Service) Set(ctx context.Context, tx kv.Tx, c *Cache, key string, value []byte, o SetOptions) error {
	if err := checkEntry(key, value); err != nil {
		return err
	}
	if c.Volatile {
		return s.memory.set(c.ID, key, value, s.nowMs(), o, c.TTL)
	}
	var old *entry
	if o.NX || o.XX {
		found, err := s.get(ctx, tx, c, key)
		if err != nil {
			return err
		}
		old = found
	}
	e, err := next(old, value, s.nowMs(), o, c.TTL)
	if err != nil {
		return err
	}
	return s.put(tx, c, key, e)
}

// GetSet sets key's value, without expiry, and returns the value it had
// (found false if it had none, or it had expired).
func (s *Service) GetSet(ctx context.Context, tx kv.Tx, c *Cache, key string, value []byte) (old []byte, found bool, err error) {
	if err := checkEntry(key, value); err != nil {
		return nil, false, err
	}
	if c.Volatile {
		return s.memory.getSet(c.ID, key, value, s.nowMs())
	}
	prev, err := s.get(ctx, tx, c, key)
	if err != nil {
		return nil, false, err
	}
	if err := s.put(tx, c, key, entry{value: value}); err != nil {
		return nil, false, err
	}
	if prev == nil {
		return nil, false, nil
	}
	return prev.value, true, nil
}

// Get returns key's value and the time it has left (0: no expiry), or
// NOT_FOUND if it is absent or expired.
func (s *Service) Get(ctx context.Context, tx kv.Reader, c *Cache, key string) (value []byte, left time.Duration, err error) {
	if err := checkEntry(key, nil); err != nil {
		return nil, 0, err
	}
	now := s.nowMs()
	var e *entry
	if c.Volatile {
		e = s.memory.get(c.ID, key, now)
	} else if e, err = s.get(ctx, tx, c, key); err != nil {
		return nil, 0, err
	}
	if e == nil {
		return nil, 0, errKeyNotFound
	}
	if e.expiresAt != 0 {
		// At its very expiry millisecond an entry is still there: it has
		// 1 ms left, as 0 would say it never expires.
		left = time.Duration(max(e.expiresAt-now, 1)) * time.Millisecond
	}
	return e.value, left, nil
}

// Del removes key, and returns how many entries it removed (0 or 1: an
// expired entry counts as absent).
func (s *Service) Del(ctx context.Context, tx kv.Tx, c *Cache, key string) (int64, error) {
	if err := checkEntry(key, nil); err != nil {
		return 0, err
	}
	if c.Volatile {
		return s.memory.del(c.ID, key, s.nowMs()), nil
	}
	e, err := s.get(ctx, tx, c, key)
	if err != nil || e == nil {
		return 0, err
	}
	return 1, tx.Clear(keyspace.CacheEntry(c.DB, c.Name, key))
}

// get reads key's live entry from the store (nil: none).
func (s *Service) get(ctx context.Context, tx kv.Reader, c *Cache, key string) (*entry, error) {
	v, err := tx.Get(ctx, keyspace.CacheEntry(c.DB, c.Name, key))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e, err := decodeEntry(v)
	if err != nil {
		return nil, err
	}
	if !e.live(s.nowMs()) {
		return nil, nil
	}
	return &e, nil
}

// put writes key's entry, and its expiry index entry if it expires. The
// index entry of an expiry the key had before stays: the sweep finds the
// entry's expiry changed and clears only the index entry.
func (s *Service) put(tx kv.Tx, c *Cache, key string, e entry) error {
	if err := tx.Set(keyspace.CacheEntry(c.DB, c.Name, key), e.encode()); err != nil {
		return err
	}
	if e.expiresAt == 0 {
		return nil
	}
	return tx.Set(keyspace.CacheExpiry(e.expiresAt, c.DB, c.Name, key), nil)
}

// The bounds of a keys call's pages.
const (
	// DefaultKeysPage is how many keys a page of keys holds when the
	// request gives no count; MaxKeysPage bounds a count asked for.
	DefaultKeysPage = 100
	MaxKeysPage     = 1000
	// keysScanBudget bounds the entries one page's transaction reads, so
	// that a pattern that matches little does not hold one transaction
	// over the whole cache: a page may hold fewer keys than its count.
	keysScanBudget = 10_000
)

// KeysRequest is a keys call's: Pattern is a glob (Match; "" is "*"),
// Cursor is where an earlier call's page ended (0: the start), Count the
// keys a page holds at most.
type KeysRequest struct {
	Pattern string
	Cursor  uint64
	Count   int64
}

// KeysPage is a page of a keys call: its keys, and the cursor to resume
// after it (0 after the last page).
type KeysPage struct {
	Keys   []string
	Cursor uint64
}

// Keys pages through cache c's live keys that match the pattern, in key
// order for a durable cache, calling send with each page that has keys.
// A cursor counts the entries passed (matched or not) from the start, so
// resuming from one skips that many; entries written or removed between
// two pages may be seen twice or not at all, as with Redis's SCAN. Each
// page is read in a transaction of its own (run), which looks the cache
// up again: a cache deleted meanwhile ends the call with NOT_FOUND.
func (s *Service) Keys(ctx context.Context, run func(func(tx kv.Tx) error) error, c *Cache, req KeysRequest, send func(KeysPage) error) error {
	count := int(req.Count)
	if count <= 0 {
		count = DefaultKeysPage
	}
	count = min(count, MaxKeysPage)
	pattern := req.Pattern
	if pattern == "" {
		pattern = "*"
	}
	if c.Volatile {
		return s.memoryKeys(c, pattern, req.Cursor, count, send)
	}
	cursor := req.Cursor // entries passed so far
	skip := req.Cursor   // entries still to skip before the first page
	var after []byte     // the key of the last entry passed, once there is one
	for {
		var page KeysPage
		var passed uint64
		var last []byte
		done := false
		err := run(func(tx kv.Tx) error {
			page.Keys, passed, done = page.Keys[:0], 0, false
			if _, err := s.Lookup(ctx, tx, c.DB, c.Name); err != nil {
				return err
			}
			r := keyspace.CacheEntries(c.DB, c.Name)
			if after != nil {
				r.Begin = kv.KeyAfter(after)
			}
			it := tx.Snapshot().Scan(ctx, r, kv.ScanOptions{})
			defer it.Close()
			now := s.nowMs()
			last = nil
			for len(page.Keys) < count && passed < keysScanBudget {
				if !it.Next() {
					done = true
					break
				}
				passed++
				last = it.Key()
				if passed <= skip {
					continue
				}
				e, err := decodeEntry(it.Value())
				if err != nil {
					return err
				}
				key, err := keyspace.CacheEntryKey(it.Key())
				if err != nil {
					return err
				}
				if e.live(now) && Match(pattern, key) {
					page.Keys = append(page.Keys, key)
				}
			}
			if err := it.Err(); err != nil {
				return err
			}
			if last != nil {
				last = append([]byte(nil), last...)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if last != nil {
			after = last
			skipped := min(skip, passed)
			skip -= skipped
			cursor += passed - skipped
		}
		page.Cursor = cursor
		if done {
			page.Cursor = 0
		}
		if len(page.Keys) > 0 {
			if err := send(page); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
	}
}

// memoryKeys is Keys for a volatile cache: the keys as they are at the
// call's start, in key order.
func (s *Service) memoryKeys(c *Cache, pattern string, cursor uint64, count int, send func(KeysPage) error) error {
	keys := s.memory.keys(c.ID, s.nowMs())
	sort.Strings(keys)
	pos := min(cursor, uint64(len(keys)))
	for pos < uint64(len(keys)) {
		page := KeysPage{}
		for pos < uint64(len(keys)) && len(page.Keys) < count {
			if k := keys[pos]; Match(pattern, k) {
				page.Keys = append(page.Keys, k)
			}
			pos++
		}
		page.Cursor = pos
		if pos == uint64(len(keys)) {
			page.Cursor = 0
		}
		if len(page.Keys) > 0 {
			if err := send(page); err != nil {
				return err
			}
		}
	}
	return nil
}
