package pebblekv

import (
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
