package pebblekv

import (
	"bytes"
	"fmt"

	"github.com/foliodb/folio/internal/kv"
	"github.com/tidwall/btree"
)

// conflictTable remembers what recent commits wrote, so that a committing
// transaction can be checked against every commit after its read version.
// Single keys live in a B-tree with the position of their newest write;
// cleared ranges, rarer, in a list. History at or below the oldest read
// version of any open transaction cannot matter any more and is pruned in
// commit order.
type conflictTable struct {
	keys        *btree.BTreeG[keyWrite]
	ranges      []rangeWrite
	history     []commitWrites // in commit order, for pruning
	historyKeys int            // write ranges in history
	// prunedTo: writes at or below this position are forgotten, so a
	// transaction reading below it cannot be checked.
	prunedTo kv.Position
}

type keyWrite struct {
	key []byte
	pos kv.Position
}

type rangeWrite struct {
	r   kv.Range
	pos kv.Position
}

type commitWrites struct {
	pos    kv.Position
	writes []kv.Range
}

func newConflictTable(start kv.Position) *conflictTable {
	return &conflictTable{
		keys:     btree.NewBTreeGOptions(func(a, b keyWrite) bool { return bytes.Compare(a.key, b.key) < 0 }, btree.Options{NoLocks: true}),
		prunedTo: start,
	}
}

// isPoint tells whether r holds exactly one key (as kv.KeyRange builds it).
func isPoint(r kv.Range) bool {
	return len(r.End) == len(r.Begin)+1 && r.End[len(r.End)-1] == 0 && bytes.HasPrefix(r.End, r.Begin)
}

// check returns a conflict error if a commit after readVersion wrote into
// one of the read ranges.
func (c *conflictTable) check(readVersion kv.Position, reads []kv.Range) error {
	if len(reads) == 0 {
		return nil
	}
	if readVersion < c.prunedTo {
		return fmt.Errorf("%w: read version %d is older than the conflict history (%d)", kv.ErrTxTooOld, readVersion, c.prunedTo)
	}
	for _, r := range reads {
		if isPoint(r) {
			if w, ok := c.keys.Get(keyWrite{key: r.Begin}); ok && w.pos > readVersion {
				return conflictError(r.Begin)
			}
		} else {
			var hit []byte
			c.keys.Ascend(keyWrite{key: r.Begin}, func(w keyWrite) bool {
				if bytes.Compare(w.key, r.End) >= 0 {
					return false
				}
				if w.pos > readVersion {
					hit = w.key
					return false
				}
				return true
			})
			if hit != nil {
				return conflictError(hit)
			}
		}
		for _, w := range c.ranges {
			if w.pos > readVersion && w.r.Overlaps(r) {
				return conflictError(w.r.Begin)
			}
		}
	}
	return nil
}

func conflictError(key []byte) error {
	if len(key) > 32 {
		key = key[:32]
	}
	return fmt.Errorf("%w (key %q)", kv.ErrConflict, key)
}

// record notes the writes of the commit at pos.
func (c *conflictTable) record(pos kv.Position, writes []kv.Range) {
	for _, w := range writes {
		if isPoint(w) {
			c.keys.Set(keyWrite{key: w.Begin, pos: pos})
		} else {
			c.ranges = append(c.ranges, rangeWrite{r: w, pos: pos})
		}
	}
	c.history = append(c.history, commitWrites{pos: pos, writes: writes})
	c.historyKeys += len(writes)
}

// The history may grow by this many commits, or this many written keys,
// between prunes: keys too, or a bulk load of a few huge commits would
// leave millions to prune at once, stalling every commit behind it.
const (
	pruneEveryCommits = 256
	pruneEveryKeys    = 16 << 10
)

func (c *conflictTable) needsPrune() bool {
	return len(c.history) >= pruneEveryCommits || c.historyKeys >= pruneEveryKeys
}

// prune forgets writes at or below oldest.
func (c *conflictTable) prune(oldest kv.Position) {
	if oldest <= c.prunedTo {
		return
	}
	n := 0
	for ; n < len(c.history) && c.history[n].pos <= oldest; n++ {
		h := c.history[n]
		c.historyKeys -= len(h.writes)
		for _, w := range h.writes {
			if !isPoint(w) {
				continue
			}
			// Only drop the key if no later commit wrote it again.
			if cur, ok := c.keys.Get(keyWrite{key: w.Begin}); ok && cur.pos == h.pos {
				c.keys.Delete(cur)
			}
		}
	}
	clear(c.history[:n])
	c.history = c.history[n:]
	if n > 0 && len(c.ranges) > 0 {
		kept := c.ranges[:0]
		for _, w := range c.ranges {
			if w.pos > oldest {
				kept = append(kept, w)
			}
		}
		clear(c.ranges[len(kept):])
		c.ranges = kept
	}
	c.prunedTo = oldest
}
