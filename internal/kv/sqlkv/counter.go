package sqlkv

import "sync"

// maxKnownCounters bounds the counter keys a node remembers as listed.
const maxKnownCounters = 100_000

// knownCounters remembers counter keys this node saw listed in
// folio_counter, so that a commit lists only keys new to the node in a
// transaction of its own (Commit). A key the maintainer removed since is
// listed again by folio_apply itself.
type knownCounters struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

// unknown returns the keys not known as listed.
func (c *knownCounters) unknown(keys [][]byte) [][]byte {
	if len(keys) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for _, k := range keys {
		if _, ok := c.keys[string(k)]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// listed records keys as listed (a commit that added to them landed).
func (c *knownCounters) listed(keys [][]byte) {
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || len(c.keys)+len(keys) > maxKnownCounters {
		c.keys = make(map[string]struct{}, len(keys))
	}
	for _, k := range keys {
		c.keys[string(k)] = struct{}{}
	}
}
