package kv

import (
	"bytes"
	"encoding/binary"

	"github.com/tidwall/btree"
)

// OpKind is the kind of a buffered write.
type OpKind uint8

// The kinds of buffered writes.
const (
	OpSet   OpKind = iota + 1 // the key holds Value
	OpClear                   // the key is removed
	OpAdd                     // Delta is added to the key's counter at commit
)

// Mutation is one buffered write to a single key.
type Mutation struct {
	Key   []byte
	Kind  OpKind
	Value []byte // OpSet
	Delta int64  // OpAdd
}

// WriteBuffer holds a transaction's writes until commit and answers reads of
// them. Every entry is newer than the cleared ranges that cover its key
// (ClearRange drops the entries it covers), so commit applies the cleared
// ranges first and then the entries. Backends share it so that
// read-your-writes behaves the same everywhere.
type WriteBuffer struct {
	entries *btree.BTreeG[*Mutation]
	cleared rangeSet
}

func lessMutation(a, b *Mutation) bool { return bytes.Compare(a.Key, b.Key) < 0 }

// NewWriteBuffer returns an empty buffer.
func NewWriteBuffer() *WriteBuffer {
	return &WriteBuffer{entries: btree.NewBTreeGOptions(lessMutation, btree.Options{NoLocks: true})}
}

// Len is the number of single-key mutations buffered.
func (w *WriteBuffer) Len() int { return w.entries.Len() }

// Empty reports whether the buffer holds no write at all.
func (w *WriteBuffer) Empty() bool { return w.entries.Len() == 0 && len(w.cleared) == 0 }

// Set buffers key = value. The buffer keeps the slices: callers pass copies.
func (w *WriteBuffer) Set(key, value []byte) {
	w.entries.Set(&Mutation{Key: key, Kind: OpSet, Value: value})
}

// Clear buffers the removal of key.
func (w *WriteBuffer) Clear(key []byte) {
	w.entries.Set(&Mutation{Key: key, Kind: OpClear})
}

// ClearRange buffers the removal of every key in r, dropping buffered
// writes inside it.
func (w *WriteBuffer) ClearRange(r Range) {
	r = r.Normalize()
	if r.Empty() {
		return
	}
	w.entries.DeleteRange(&Mutation{Key: r.Begin}, &Mutation{Key: r.End}, &btree.DeleteRangeOptions{NoReturn: true})
	w.cleared = w.cleared.add(r)
}

// Add buffers a counter addition, folding it into an earlier buffered write
// of the same key when there is one. The folded write is a new entry, not
// the earlier one changed in place: scans under way iterate over a copy of
// the entries (snapshot) that shares the earlier one with the buffer.
func (w *WriteBuffer) Add(key []byte, delta int64) {
	if m, ok := w.entries.Get(&Mutation{Key: key}); ok {
		folded := &Mutation{Key: m.Key}
		switch m.Kind {
		case OpSet:
			folded.Kind, folded.Value = OpSet, EncodeCounter(DecodeCounter(m.Value)+delta)
		case OpClear:
			folded.Kind, folded.Value = OpSet, EncodeCounter(delta)
		case OpAdd:
			folded.Kind, folded.Delta = OpAdd, m.Delta+delta
		}
		w.entries.Set(folded)
		return
	}
	if w.cleared.find(key) >= 0 {
		w.entries.Set(&Mutation{Key: key, Kind: OpSet, Value: EncodeCounter(delta)})
		return
	}
	w.entries.Set(&Mutation{Key: key, Kind: OpAdd, Delta: delta})
}

// Lookup tells what the buffer knows of key: the buffered mutation if there
// is one, else whether a buffered ClearRange covers it.
func (w *WriteBuffer) Lookup(key []byte) (m *Mutation, cleared bool) {
	if m, ok := w.entries.Get(&Mutation{Key: key}); ok {
		return m, false
	}
	return nil, w.cleared.find(key) >= 0
}

// ClearedRanges returns the buffered cleared ranges, sorted and disjoint.
func (w *WriteBuffer) ClearedRanges() []Range { return w.cleared }

// Mutations calls fn for every buffered single-key mutation in key order.
func (w *WriteBuffer) Mutations(fn func(m *Mutation) bool) {
	w.entries.Scan(fn)
}

// uncleared returns the parts of r not covered by a buffered ClearRange: the
// only parts where stored keys can show through.
func (w *WriteBuffer) uncleared(r Range) []Range { return w.cleared.subtract(r) }

// snapshot returns a copy of the entries that later writes do not change
// (copy-on-write, so it is cheap).
func (w *WriteBuffer) snapshot() *btree.BTreeG[*Mutation] { return w.entries.Copy() }

// EncodeCounter encodes a counter value as Add stores it: 8 bytes,
// little-endian two's complement (as FoundationDB's atomic add).
func EncodeCounter(v int64) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(v))
	return b
}

// DecodeCounter decodes a counter value. Shorter values are zero-extended and
// longer ones truncated to 8 bytes, as FoundationDB does.
func DecodeCounter(b []byte) int64 {
	var buf [8]byte
	copy(buf[:], b)
	return int64(binary.LittleEndian.Uint64(buf[:]))
}
