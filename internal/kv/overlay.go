package kv

import (
	"bytes"
	"context"

	"github.com/tidwall/btree"
)

// overlayIterator merges a backend scan with a transaction's buffered writes,
// so that a Scan sees the transaction's own sets, clears and adds. The
// backend is only asked for the parts of the range that no buffered
// ClearRange covers, so cleared keys never come up from it.
type overlayIterator struct {
	ctx     context.Context
	snap    Snapshot
	r       Range
	reverse bool
	limit   int
	count   int

	pieces []Range // uncleared parts of r, in iteration order
	piece  int
	base   RawIterator
	baseOK bool

	buf         btree.IterG[*Mutation]
	bufOK       bool
	bufReleased bool

	// What the previous Next consumed, advanced at the start of the next
	// call so that the returned key and value stay valid until then.
	advanceBase, advanceBuf bool
	started, finished       bool

	key, value []byte
	err        error

	progress *Range // the read conflict range to widen; nil for snapshot reads
	edge     []byte // the bound of progress that the scan moves
	onClose  func()
}

func newOverlayIterator(ctx context.Context, snap Snapshot, wb *WriteBuffer, r Range, opts ScanOptions) *overlayIterator {
	it := &overlayIterator{ctx: ctx, snap: snap, r: r, reverse: opts.Reverse, limit: opts.Limit}
	it.pieces = wb.uncleared(r)
	if it.reverse {
		for i, j := 0, len(it.pieces)-1; i < j; i, j = i+1, j-1 {
			it.pieces[i], it.pieces[j] = it.pieces[j], it.pieces[i]
		}
	}
	it.buf = wb.snapshot().Iter()
	return it
}

func (it *overlayIterator) start() {
	it.started = true
	it.nextBase()
	if it.reverse {
		if it.buf.Seek(&Mutation{Key: it.r.End}) {
			it.bufOK = it.buf.Prev()
		} else {
			it.bufOK = it.buf.Last()
		}
	} else {
		it.bufOK = it.buf.Seek(&Mutation{Key: it.r.Begin})
	}
	it.checkBufBounds()
}

func (it *overlayIterator) checkBufBounds() {
	if !it.bufOK {
		return
	}
	k := it.buf.Item().Key
	if it.reverse {
		it.bufOK = bytes.Compare(k, it.r.Begin) >= 0
	} else {
		it.bufOK = bytes.Compare(k, it.r.End) < 0
	}
}

// nextBase moves the backend side to its next key, opening the next
// uncleared piece when one runs out.
func (it *overlayIterator) nextBase() {
	for {
		if it.base != nil {
			if it.base.Next() {
				it.baseOK = true
				return
			}
			err := it.base.Err()
			it.base.Close()
			it.base = nil
			if err != nil {
				it.err, it.baseOK = err, false
				return
			}
		}
		if it.piece >= len(it.pieces) {
			it.baseOK = false
			return
		}
		it.base = it.snap.Scan(it.ctx, it.pieces[it.piece], it.reverse)
		it.piece++
	}
}

func (it *overlayIterator) nextBuf() {
	if it.reverse {
		it.bufOK = it.buf.Prev()
	} else {
		it.bufOK = it.buf.Next()
	}
	it.checkBufBounds()
}

// ctxCheckEvery is how many keys a scan yields between looks at its
// context: a backend's iterator may not look at it at all (Pebble's does
// not), and a long scan must stop at its caller's deadline.
const ctxCheckEvery = 256

// Next advances to the next visible key.
func (it *overlayIterator) Next() bool {
	if it.finished || it.err != nil {
		return false
	}
	if it.count%ctxCheckEvery == ctxCheckEvery-1 {
		if err := it.ctx.Err(); err != nil {
			it.err = err
			it.release()
			return false
		}
	}
	if it.limit > 0 && it.count >= it.limit {
		it.finish(false)
		return false
	}
	if !it.started {
		it.start()
	}
	for {
		if it.advanceBase {
			it.advanceBase = false
			it.nextBase()
		}
		if it.advanceBuf {
			it.advanceBuf = false
			it.nextBuf()
		}
		if it.err != nil {
			return false
		}
		if !it.baseOK && !it.bufOK {
			it.finish(true)
			return false
		}
		order := 1 // > 0: the buffered write comes first
		if it.baseOK && it.bufOK {
			order = bytes.Compare(it.base.Key(), it.buf.Item().Key)
			if it.reverse {
				order = -order
			}
		} else if it.baseOK {
			order = -1
		}
		if order < 0 {
			it.advanceBase = true
			it.yield(it.base.Key(), it.base.Value())
			return true
		}
		m := it.buf.Item()
		it.advanceBuf = true
		var base []byte
		if order == 0 {
			it.advanceBase = true
			base = it.base.Value()
		}
		switch m.Kind {
		case OpClear:
			continue
		case OpSet:
			it.yield(m.Key, m.Value)
		case OpAdd:
			it.yield(m.Key, EncodeCounter(DecodeCounter(base)+m.Delta))
		}
		return true
	}
}

func (it *overlayIterator) yield(key, value []byte) {
	it.key, it.value = key, value
	it.count++
	if it.progress != nil {
		// One buffer for the whole scan: widening the range must not cost
		// an allocation per key. A new buffer whenever the old one is too
		// small, so that a range handed out before stays intact.
		if it.reverse {
			it.edge = reuse(it.edge, len(key))
			it.edge = append(it.edge, key...)
			it.progress.Begin = it.edge
		} else {
			it.edge = reuse(it.edge, len(key)+1)
			it.edge = append(append(it.edge, key...), 0)
			it.progress.End = it.edge
		}
	}
}

// reuse returns buf emptied if it can hold n bytes, else a new buffer.
func reuse(buf []byte, n int) []byte {
	if cap(buf) >= n {
		return buf[:0]
	}
	return make([]byte, 0, max(n, 2*cap(buf)))
}

// finish ends the iteration; a scan that ran out of keys has read its
// whole range.
func (it *overlayIterator) finish(exhausted bool) {
	it.finished = true
	if exhausted && it.progress != nil {
		if it.reverse {
			it.progress.Begin = it.r.Begin
		} else {
			it.progress.End = it.r.End
		}
	}
	it.release()
}

func (it *overlayIterator) Key() []byte   { return it.key }
func (it *overlayIterator) Value() []byte { return it.value }
func (it *overlayIterator) Err() error    { return it.err }

func (it *overlayIterator) Close() error {
	it.finished = true
	it.release()
	if it.onClose != nil {
		it.onClose()
		it.onClose = nil
	}
	return nil
}

// abort stops the iterator with err (the transaction ended under it).
func (it *overlayIterator) abort(err error) {
	if it.err == nil && !it.finished {
		it.err = err
	}
	it.Close()
}

func (it *overlayIterator) release() {
	if it.base != nil {
		it.base.Close()
		it.base = nil
	}
	it.baseOK = false
	if !it.bufReleased {
		it.bufReleased = true
		it.buf.Release()
	}
}
