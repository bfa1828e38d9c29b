package cache

import (
	"testing"

	"github.com/foliodb/folio/internal/apierror"
)

// The volatile caches' bytes on a node are bounded: a set that would take
// them past the bound is refused and changes nothing, and deleting,
// expiring, replacing with less or dropping a cache gives the room back.
func TestVolatileBytesBounded(t *testing.T) {
	m := newMemory()
	m.max = 3 * entrySize("k0", make([]byte, 100))
	value := make([]byte, 100)
	for _, k := range []string{"k0", "k1", "k2"} {
		if err := m.set("c", k, value, 0, SetOptions{}, 0); err != nil {
			t.Fatalf("set %s within the bound: %v", k, err)
		}
	}
	if err := m.set("c", "k3", value, 0, SetOptions{}, 0); !isCode(err, apierror.ResourceExhausted) {
		t.Fatalf("a set past the bound: %v, want RESOURCE_EXHAUSTED", err)
	}
	if m.get("c", "k3", 0) != nil || m.bytes.Load() != m.max {
		t.Fatalf("the refused set left k3 or %d bytes counted (bound %d)", m.bytes.Load(), m.max)
	}
	if _, _, err := m.getSet("c", "k3", value, 0); !isCode(err, apierror.ResourceExhausted) {
		t.Errorf("a getset past the bound: %v", err)
	}
	// Replacing a value with one as large fits.
	if err := m.set("c", "k0", value, 0, SetOptions{}, 0); err != nil {
		t.Errorf("replacing within the bound: %v", err)
	}
	if m.del("c", "k0", 0) != 1 {
		t.Fatal("del k0")
	}
	if err := m.set("c", "k3", value, 0, SetOptions{PX: 10}, 0); err != nil {
		t.Fatalf("a set once a key is deleted: %v", err)
	}
	// k3 expires at 10 ms: once swept its room is back.
	if _, removed := m.sweep("c", 11, 10); removed != 1 {
		t.Fatalf("sweep removed %d, want k3", removed)
	}
	if err := m.set("c", "k4", value, 11, SetOptions{}, 0); err != nil {
		t.Fatalf("a set once an entry expired: %v", err)
	}
	m.drop("c")
	if n := m.bytes.Load(); n != 0 {
		t.Errorf("after the cache's drop %d bytes are counted", n)
	}
}
