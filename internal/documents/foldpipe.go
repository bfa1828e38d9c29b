package documents

import (
	"context"
	"sync/atomic"

	"github.com/foliodb/folio/internal/aggregate"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/query"
)

// foldBatchBytes bounds the documents one batch of foldDocuments holds:
// large enough that handing a batch over costs nothing per document, small
// enough to stay in the cache while it is folded.
const foldBatchBytes = 64 << 10

// docBatch is a run of stored records copied out of the store's iterator
// (whose bytes are valid only until its next step): record i is
// buf[ends[i-1]:ends[i]], its storage key keys[kends[i-1]:kends[i]]. It
// reads back as a kv.Iterator, so that its records are matched as every
// read matches them (matches).
type docBatch struct {
	buf, keys   []byte
	ends, kends []int
	at          int // records Next has passed
}

func (b *docBatch) reset() {
	b.buf, b.ends, b.keys, b.kends, b.at = b.buf[:0], b.ends[:0], b.keys[:0], b.kends[:0], 0
}

func (b *docBatch) Next() bool {
	if b.at >= len(b.ends) {
		return false
	}
	b.at++
	return true
}

func (b *docBatch) Key() []byte   { return part(b.keys, b.kends, b.at-1) }
func (b *docBatch) Value() []byte { return part(b.buf, b.ends, b.at-1) }
func (b *docBatch) Err() error    { return nil }
func (b *docBatch) Close() error  { return nil }

// part is the i-th of the runs of buf that ends delimit.
func part(buf []byte, ends []int, i int) []byte {
	start := 0
	if i > 0 {
		start = ends[i-1]
	}
	return buf[start:ends[i]]
}

// foldDocuments folds the documents it yields that f matches into folder,
// in two goroutines: the calling one reads the store (the transaction is
// only ever used from it) and copies the records into batches, another
// decodes, matches and folds them, in order, so that the fold is the one
// a single goroutine makes (a float sum adds in the same order). An
// aggregation over many documents so takes two cores where it has them,
// as PostgreSQL's parallel scan does; one that reads few pays a goroutine.
func foldDocuments(ctx context.Context, it query.Iterator, f filter.Filter, folder *aggregate.Folder) error {
	full := make(chan *docBatch, 2)
	free := make(chan *docBatch, 3)
	for range 3 {
		free <- &docBatch{buf: make([]byte, 0, foldBatchBytes+4096)}
	}
	var failed atomic.Bool
	done := make(chan error, 1)
	go func() {
		var err error
		for b := range full {
			if err == nil {
				if err = foldBatch(ctx, b, f, folder); err != nil {
					failed.Store(true)
				}
			}
			free <- b
		}
		done <- err
	}()
	scanErr := func() error {
		b := <-free
		b.reset()
		for n := 1; it.Next(); n++ {
			if n%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if failed.Load() {
					return nil // the fold's error is the answer
				}
			}
			b.keys = append(b.keys, it.Key()...)
			b.kends = append(b.kends, len(b.keys))
			b.buf = append(b.buf, it.Value()...)
			b.ends = append(b.ends, len(b.buf))
			if len(b.buf) >= foldBatchBytes {
				full <- b
				b = <-free
				b.reset()
			}
		}
		if len(b.ends) > 0 {
			full <- b
		}
		return it.Err()
	}()
	close(full)
	foldErr := <-done
	if scanErr != nil {
		return scanErr
	}
	return foldErr
}

// foldBatch matches and folds one batch's records.
func foldBatch(ctx context.Context, b *docBatch, f filter.Filter, folder *aggregate.Folder) error {
	return matches(ctx, b, f, func(_, _ []byte, r Record) (bool, error) {
		return true, folder.Add(r.Data)
	})
}
