package cache

import (
	"sync"
	"time"
)

// memory holds the volatile caches' entries on this node, by cache id.
type memory struct {
	mu     sync.RWMutex
	caches map[string]*memCache
}

type memCache struct {
	mu      sync.Mutex
	entries map[string]entry
}

func newMemory() *memory { return &memory{caches: make(map[string]*memCache)} }

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
		c = &memCache{entries: make(map[string]entry)}
		m.caches[id] = c
	}
	return c
}

func (m *memory) drop(id string) {
	m.mu.Lock()
	delete(m.caches, id)
	m.mu.Unlock()
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
		delete(c.entries, key)
		return nil
	}
	return &e
}

func (m *memory) set(id, key string, value []byte, now int64, o SetOptions, ttl time.Duration) error {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := next(c.live(key, now), append([]byte(nil), value...), now, o, ttl)
	if err != nil {
		return err
	}
	c.entries[key] = e
	return nil
}

func (m *memory) getSet(id, key string, value []byte, now int64) ([]byte, bool, error) {
	c := m.cache(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.live(key, now)
	c.entries[key] = entry{value: append([]byte(nil), value...)}
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
	if c.live(key, now) == nil {
		return 0
	}
	delete(c.entries, key)
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
			delete(c.entries, k)
			removed++
		}
	}
	return looked, removed
}
