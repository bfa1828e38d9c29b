package changelog

import (
	"context"
	"errors"
	"fmt"

	"github.com/foliodb/folio/internal/kv"
)

// Entry is one committed transaction's records, in the order it wrote
// them, at its commit position.
type Entry struct {
	Pos     kv.Position
	Records []Record
}

// Reader reads the log in commit order from a position. Read, Wait, Next
// and Position are for one goroutine; Close may be called from any.
type Reader struct {
	log  *Log
	name string
	// Under log.mu: the trimmer reads them.
	pos kv.Position
	err error // why the reader can read no more: cut off or closed
}

// Position is where the reader has read to: every entry at or before it
// has been returned.
func (r *Reader) Position() kv.Position {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	return r.pos
}

// Read returns the entries committed after the reader's position, at most
// limit of them (0: Options.ReadBatch), without waiting: none when there
// are none yet. It moves the position past what it returns, and sometimes
// further, past commits that logged nothing. A reader that was cut off
// fails with ErrCutOff, and one whose next entries were trimmed with
// ErrTrimmed; a record that does not decode fails the read, and the
// position stays where it was.
func (r *Reader) Read(ctx context.Context, limit int) ([]Entry, error) {
	pos, err := r.state()
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = r.log.opts.ReadBatch
	}
	raw, upTo, err := r.log.store.ReadLog(ctx, pos, limit)
	if err != nil {
		if _, cut := r.state(); cut != nil {
			return nil, cut // cut off, and trimmed, while reading
		}
		if errors.Is(err, kv.ErrLogTrimmed) {
			return nil, fmt.Errorf("changelog: read after %d: %w (%w)", pos, ErrTrimmed, err)
		}
		return nil, fmt.Errorf("changelog: read after %d: %w", pos, err)
	}
	entries, err := decodeEntries(raw)
	if err != nil {
		return nil, err
	}
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	r.pos = max(r.pos, upTo)
	return entries, nil
}

// Wait blocks until there is an entry after the reader's position, or
// ctx is done. A reader that can read no more returns at once.
func (r *Reader) Wait(ctx context.Context) error {
	pos, err := r.state()
	if err != nil {
		return err
	}
	return r.log.store.WaitLog(ctx, pos)
}

// Next returns the next entries, waiting for a commit when there are
// none yet: it returns at least one entry, or an error.
func (r *Reader) Next(ctx context.Context, limit int) ([]Entry, error) {
	for {
		entries, err := r.Read(ctx, limit)
		if err != nil || len(entries) > 0 {
			return entries, err
		}
		if err := r.Wait(ctx); err != nil {
			return nil, err
		}
	}
}

// Close unregisters the reader: it no longer holds the trimmer back, and
// reads fail with ErrReaderClosed. It is safe to call more than once.
func (r *Reader) Close() {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	delete(r.log.readers, r)
	if r.err == nil {
		r.err = ErrReaderClosed
	}
}

func (r *Reader) state() (kv.Position, error) {
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	return r.pos, r.err
}

// cutOff ends the reader for holding back the entry at or below heldSince,
// a position noted longer than the retention plus the hold ago. The caller
// holds log.mu.
func (r *Reader) cutOff(heldSince kv.Position) {
	delete(r.log.readers, r)
	r.err = fmt.Errorf("changelog: reader after %d, behind a position %d noted more than the retention plus the hold ago: %w", r.pos, heldSince, ErrCutOff)
}

// cutOffBySize ends the reader because the log reached its byte bound
// before the reader read the entries the trim removes. The caller holds
// log.mu.
func (r *Reader) cutOffBySize(maxBytes int64) {
	delete(r.log.readers, r)
	r.err = fmt.Errorf("changelog: reader after %d, behind the entries the log's bound of %d bytes keeps: %w", r.pos, maxBytes, ErrCutOffBySize)
}

func decodeEntries(raw []kv.LogEntry) ([]Entry, error) {
	out := make([]Entry, len(raw))
	for i, e := range raw {
		out[i] = Entry{Pos: e.Pos, Records: make([]Record, len(e.Records))}
		for j, b := range e.Records {
			rec, err := Decode(b)
			if err != nil {
				return nil, fmt.Errorf("changelog: entry %d, record %d: %w", e.Pos, j, err)
			}
			out[i].Records[j] = rec
		}
	}
	return out, nil
}
