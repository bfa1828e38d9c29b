package pebblekv

import (
	"bytes"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
)

// counterMerger resolves kv.Tx.Add: a merge operand is a counter delta,
// and merging sums operands (and the base value, if any). Addition is
// associative and commutative, so partial merges during compactions are
// sums too. Pebble records the name on disk; never change it.
var counterMerger = &pebble.Merger{
	Name: "folio.counter.add.v1",
	Merge: func(key, value []byte) (pebble.ValueMerger, error) {
		return &counterSum{sum: kv.DecodeCounter(value)}, nil
	},
}

type counterSum struct{ sum int64 }

func (c *counterSum) MergeNewer(value []byte) error {
	c.sum += kv.DecodeCounter(value)
	return nil
}

func (c *counterSum) MergeOlder(value []byte) error {
	c.sum += kv.DecodeCounter(value)
	return nil
}

func (c *counterSum) Finish(includesBase bool) ([]byte, io.Closer, error) {
	return kv.EncodeCounter(c.sum), nil, nil
}

// counterSums holds the counter deltas of a commit group's transactions,
// summed by key, so that the group writes one merge operand for each
// counter instead of one for each transaction: every insert adds to its
// collection's three counters (documents, their bytes, their index's
// bytes), three of the 18 keys it wrote. Nothing reads a group's state
// before the whole group is applied (its view is taken after it), so
// where in the batch a counter's sum lands is invisible, except against
// another write of the same key: a Set, Delete or cleared range after a
// delta must come after it, so such a write first writes the sum so far
// (writeKey, writeRange).
type counterSums struct {
	sums  []groupDelta
	index map[string]int // into sums, by key
}

type groupDelta struct {
	key   []byte // the write buffer's, which outlives the batch's building
	delta int64
	done  bool // written to the batch
}

func (c *counterSums) add(key []byte, delta int64) {
	if i, ok := c.index[string(key)]; ok && !c.sums[i].done {
		c.sums[i].delta += delta
		return
	}
	if c.index == nil {
		c.index = make(map[string]int)
	}
	c.index[string(key)] = len(c.sums)
	c.sums = append(c.sums, groupDelta{key: key, delta: delta})
}

// writeKey writes key's sum so far, if it has one.
func (c *counterSums) writeKey(b *pebble.Batch, key []byte) error {
	if i, ok := c.index[string(key)]; ok {
		return c.writeSum(b, i)
	}
	return nil
}

// writeRange writes the sums so far of the keys in r.
func (c *counterSums) writeRange(b *pebble.Batch, r kv.Range) error {
	for i := range c.sums {
		s := &c.sums[i]
		if bytes.Compare(s.key, r.Begin) >= 0 && bytes.Compare(s.key, r.End) < 0 {
			if err := c.writeSum(b, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// write writes every sum not yet written: the group's last step.
func (c *counterSums) write(b *pebble.Batch) error {
	for i := range c.sums {
		if err := c.writeSum(b, i); err != nil {
			return err
		}
	}
	return nil
}

func (c *counterSums) writeSum(b *pebble.Batch, i int) error {
	s := &c.sums[i]
	if s.done {
		return nil
	}
	s.done = true
	// A sum of zero is written too: the key exists after a delta, whatever
	// the deltas add up to, as it did with one operand per transaction.
	return b.Merge(s.key, kv.EncodeCounter(s.delta), nil)
}
