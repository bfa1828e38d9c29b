package pebblekv

import (
	"bytes"
	"sync"

	"github.com/foliodb/folio/internal/kv"
)

// knownValues vouches for values that transactions expected (kv.Tx.Expect:
// the catalog's collection records, checked by every request) without a
// read: it remembers the value a read last found under such a key and the
// position it read at, and the sequencer notes every commit that writes
// the key before the commit is published. A key not written since the read
// holds the same value at any later read version. That spares a point read
// one of its two Pebble Gets. Every write of a user key goes through the
// sequencer (the log's trim writes only the store's own keys), so none
// escapes it.
type knownValues struct {
	mu sync.Mutex
	// assigned is the newest position the sequencer gave a commit: a key
	// first seen may have been written by any commit up to it.
	assigned kv.Position
	keys     map[string]*knownValue
}

type knownValue struct {
	// lastWrite is the newest commit that wrote the key, or for a key
	// first seen, the newest that may have.
	lastWrite kv.Position
	// value is what a read found at position at; present tells a value
	// from none.
	value   []byte
	present bool
	at      kv.Position
}

// maxKnownValues bounds the keys remembered: one per collection a request
// looked up, so a catalog of more collections than this only reads more.
const maxKnownValues = 10000

func newKnownValues(opened kv.Position) *knownValues {
	return &knownValues{assigned: opened, keys: make(map[string]*knownValue)}
}

// holds reports whether key holds value at position at: a read found it
// at some position, and no commit wrote the key since the older of the two.
func (k *knownValues) holds(key, value []byte, at kv.Position) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.keys[string(key)]
	return e != nil && e.lastWrite <= min(e.at, at) && e.present == (value != nil) && bytes.Equal(e.value, value)
}

// saw records that a read at position at found value under key (nil:
// none).
func (k *knownValues) saw(key, value []byte, at kv.Position) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.keys[string(key)]
	if e == nil {
		if len(k.keys) >= maxKnownValues {
			return
		}
		e = &knownValue{lastWrite: k.assigned}
		k.keys[string(key)] = e
	}
	if at >= e.at {
		e.value, e.present, e.at = append(e.value[:0], value...), value != nil, at
	}
}

// wrote notes a commit at pos, before it is published.
func (k *knownValues) wrote(pos kv.Position, w *kv.WriteBuffer) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.assigned = pos
	if len(k.keys) == 0 {
		return
	}
	for _, r := range w.ClearedRanges() {
		k.clearedLocked(r, pos)
	}
	w.Mutations(func(m *kv.Mutation) bool {
		if e := k.keys[string(m.Key)]; e != nil {
			e.lastWrite = pos
		}
		return true
	})
}

func (k *knownValues) clearedLocked(r kv.Range, pos kv.Position) {
	for key, e := range k.keys {
		if r.Contains([]byte(key)) {
			e.lastWrite = pos
		}
	}
}

// Holds implements kv.KnownValues.
func (t *backendTx) Holds(key, value []byte) bool {
	return t.s.known.holds(key, value, t.view.version)
}

// Saw implements kv.KnownValues.
func (t *backendTx) Saw(key, value []byte) { t.s.known.saw(key, value, t.view.version) }
