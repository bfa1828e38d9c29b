package pebblekv

import (
	"sort"
	"sync"

	"github.com/foliodb/folio/internal/kv"
)

// logSizes remembers, for the log entries written since the store opened,
// the running total of their sizes by position, so that LogBytes answers
// from memory for recent positions instead of reading the entries back.
// The change log's trimmer asks every ten seconds for the size of what was
// written since its last tick; reading that back from the tables was 5% of
// the server's CPU under an insert load. Only the newest entries are kept
// (maxLogSizes): an older range is read back as before.
type logSizes struct {
	mu sync.Mutex
	// floor: every entry after it is in sizes; base is the running total
	// up to and including it.
	floor kv.Position
	base  int64
	sizes []logSize // by position
	max   int
}

type logSize struct {
	pos kv.Position
	cum int64 // the running total up to and including the entry at pos
}

// maxLogSizes bounds the entries logSizes keeps (16 bytes each): at a few
// thousand commits a second, some tens of seconds of them.
const maxLogSizes = 1 << 16

func newLogSizes(opened kv.Position) *logSizes {
	return &logSizes{floor: opened, max: maxLogSizes}
}

// add records the entry the sequencer wrote at pos, n bytes of key and
// value. Positions come in increasing order.
func (l *logSizes) add(pos kv.Position, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cum := l.base
	if len(l.sizes) > 0 {
		cum = l.sizes[len(l.sizes)-1].cum
	}
	if len(l.sizes) >= l.max {
		half := len(l.sizes) / 2
		l.floor, l.base = l.sizes[half-1].pos, l.sizes[half-1].cum
		l.sizes = append(l.sizes[:0], l.sizes[half:]...)
	}
	l.sizes = append(l.sizes, logSize{pos: pos, cum: cum + n})
}

// between returns the size of the entries in (after, upTo], if it knows
// every one of them.
func (l *logSizes) between(after, upTo kv.Position) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lo, ok1 := l.cumAt(after)
	hi, ok2 := l.cumAt(upTo)
	return hi - lo, ok1 && ok2
}

// cumAt is the running total up to and including position p.
func (l *logSizes) cumAt(p kv.Position) (int64, bool) {
	if p < l.floor {
		return 0, false
	}
	i := sort.Search(len(l.sizes), func(i int) bool { return l.sizes[i].pos > p })
	if i == 0 {
		return l.base, true
	}
	return l.sizes[i-1].cum, true
}
