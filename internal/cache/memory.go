package cache

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// MaxVolatileBytes bounds what the volatile caches hold in one node's
// memory, keys and values with entryOverhead each: past it a set that
// would grow them is refused (RESOURCE_EXHAUSTED), so that an editor
// cannot fill the node's memory.
const MaxVolatileBytes = 256 << 20

// entryOverhead is what an entry costs beyond its key and value: the map
// slot, the string and slice headers, the expiry.
const entryOverhead = 64

func entrySize(key string, value []byte) int64 {
	return int64(len(key)+len(value)) + entryOverhead
}

// memory holds the volatile caches' entries on this node, by cache id.
type memory struct {
	mu     sync.RWMutex
	caches map[string]*memCache
	// bytes is what the entries take (entrySize), bounded by max.
	bytes atomic.Int64
	max   int64
}

type memCache struct {
	m       *memory
	mu      sync.Mutex
	entries map[string]entry
}

func newMemory() *memory { return &memory{caches: make(map[string]*memCache), max: MaxVolatileBytes} }

// grow takes room for delta more bytes, or refuses a growth past the
// bound; a shrink (delta <= 0) is always taken.
func (m *memory) grow(delta int64) error {
	if delta <= 0 {
		m.bytes.Add(delta)
		return nil
	}
	for {
		cur := m.bytes.Load()
		if cur+delta > m.max {
			return apierror.Errorf(apierror.ResourceExhausted, "volatile caches hold %d bytes on this node, and the set would take them past the limit of %d: delete keys, give them an expiry, or use a durable cache", cur, m.max)
		}
		if m.bytes.CompareAndSwap(cur, cur+delta) {
			return nil
		}
	}
}

// cache returns cache id's entries, made on first use.
func (m *memory) cache(id string) *memCache {
	m.mu.RLock()
	c := m.caches[id]
	m.mu.RUnlock()
	if c != nil {
		return c
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c = m.caches[id]; c == nil {
		c = &memCache{m: m, entries: make(map[string]entry)}
		m.caches[id] = c
	}
	return c
}

func (m *memory) drop(id string) {
	m.mu.Lock()
	c := m.caches[id]
	delete(m.caches, id)
	m.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var freed int64
	for k, e := range c.entries {
		freed += entrySize(k, e.value)
	}
	c.entries = map[string]entry{}
	m.bytes.Add(-freed)
}

// ids returns the caches held.
func (m *memory) ids() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]string, 0, len(m.caches))
	for id := range m.caches {
		out = append(out, id)
	}
	return out
}

// live returns key's live entry, under c.mu.
func (c *memCache) live(key string, now int64) *entry {
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	if !e.live(now) {
		c.remove(key, e)
		return nil
	}
	return &e
}

// remove deletes key's entry e, under c.mu, and gives back its room.
func (c *memCache) remove(key string, e entry) {
	delete(c.entries, key)
	c.m.bytes.Add(-entrySize(key, e.value))
}

// put stores e under key, under c.mu, if there is room for it in place
// of old (nil if none).
func (c *memCache) put(key string, e entry, old *entry) error {
	delta := entrySize(key, e.value)
	if old != nil {
		delta -= entrySize(key, old.value)
	}
	if err := c.m.grow(delta); err != nil {
		return err
	}
	c.entries[key] = e
	return nil
}

func (m *memory) set(id, key string, value []byte, now int64, o SetOptions, ttl time.Duration) error {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.live(key, now)
	e, err := next(old, append([]byte(nil), value...), now, o, ttl)
	if err != nil {
		return err
	}
	return c.put(key, e, old)
}

func (m *memory) getSet(id, key string, value []byte, now int64) ([]byte, bool, error) {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.live(key, now)
	if err := c.put(key, entry{value: append([]byte(nil), value...)}, old); err != nil {
		return nil, false, err
	}
	if old == nil {
		return nil, false, nil
	}
	return old.value, true, nil
}

func (m *memory) get(id, key string, now int64) *entry {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live(key, now)
}

func (m *memory) del(id, key string, now int64) int64 {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.live(key, now)
	if e == nil {
		return 0
	}
	c.remove(key, *e)
	return 1
}

func (m *memory) keys(id string, now int64) []string {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.entries))
	for k, e := range c.entries {
		if e.live(now) {
			out = append(out, k)
		}
	}
	return out
}

// sweep looks at up to limit entries of cache id and removes those
// expired, and reports how many it looked at and removed. Go's map
// iteration starts at a random place, so successive sweeps sample the
// cache as Redis's active expiry does, each bounded however large it is.
func (m *memory) sweep(id string, now int64, limit int) (looked, removed int) {
	m.mu.RLock()
	c := m.caches[id]
	m.mu.RUnlock()
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if looked >= limit {
			break
		}
		looked++
		if !e.live(now) {
			c.remove(k, e)
			removed++
		}
	}
	return looked, removed
}
