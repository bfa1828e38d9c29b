package pebblekv

import (
	"sync"

	"github.com/foliodb/folio/internal/kv"
)

// logTail keeps the newest log entries in memory as the sequencer writes
// them, so that the log's readers, who follow close behind the writers
// (the search indexer, event streams, subscribers), read them from here
// instead of opening a Pebble iterator over every level for each few
// entries: that was 3% of the server's CPU under inserts. Older entries
// are read from Pebble as before.
type logTail struct {
	mu sync.Mutex
	// floor: every entry written after it is in entries, in position
	// order; bytes is the memory they hold (tailEntrySize), at most max.
	floor   kv.Position
	entries []tailEntry
	bytes   int
	max     int
}

type tailEntry struct {
	pos   kv.Position
	value []byte // the encoded records, never changed once added
}

// maxLogTail bounds the bytes of values logTail keeps: at a few thousand
// commits a second of 1 KB documents, about a second of them.
const maxLogTail = 4 << 20

func newLogTail(opened kv.Position, max int) *logTail {
	return &logTail{floor: opened, max: max}
}

// add records the entry the sequencer wrote at pos, before the commit is
// published. Positions come in increasing order; value is not changed
// after.
func (l *logTail) add(pos kv.Position, value []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	size := tailEntrySize(value)
	if size > l.max {
		// Too big to keep: the tail starts after it.
		clear(l.entries)
		l.floor, l.entries, l.bytes = pos, l.entries[:0], 0
		return
	}
	if l.bytes+size > l.max {
		// Drop the older half (by bytes), so that dropping is rare.
		drop, freed := 0, 0
		for drop < len(l.entries) && (freed < l.bytes/2 || l.bytes-freed+size > l.max) {
			freed += tailEntrySize(l.entries[drop].value)
			drop++
		}
		l.floor = l.entries[drop-1].pos
		l.bytes -= freed
		n := copy(l.entries, l.entries[drop:])
		clear(l.entries[n:])
		l.entries = l.entries[:n]
	}
	l.entries = append(l.entries, tailEntry{pos: pos, value: value})
	l.bytes += size
}

// tailEntrySize is the memory an entry holds: its value's array and the
// entry itself, so that many small entries count too.
func tailEntrySize(value []byte) int { return cap(value) + 32 }

// read appends to dst the entries in (after, upTo], at most limit of them
// (0: no limit), if it holds every entry there; ok false sends the reader
// to Pebble.
func (l *logTail) read(dst []tailEntry, after, upTo kv.Position, limit int) (_ []tailEntry, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after < l.floor {
		return dst, false
	}
	// The first entry after after: entries are in position order.
	lo, hi := 0, len(l.entries)
	for lo < hi {
		if m := (lo + hi) / 2; l.entries[m].pos <= after {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for _, e := range l.entries[lo:] {
		if e.pos > upTo || limit > 0 && len(dst) == limit {
			break
		}
		dst = append(dst, e)
	}
	return dst, true
}
