package pebblekv

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
)

var _ kv.Store = (*Store)(nil)

// ReadLog returns durable log entries after position after, in commit order.
func (s *Store) ReadLog(ctx context.Context, after kv.Position, limit int) ([]kv.LogEntry, kv.Position, error) {
	if limit <= 0 {
		limit = defaultLogLimit
	}
	v, err := s.acquire()
	if err != nil {
		return nil, 0, err
	}
	defer s.release(v)
	s.mu.Lock()
	trimmed := s.trimmed
	s.mu.Unlock()
	if after+1 < trimmed {
		return nil, 0, fmt.Errorf("%w: position %d is below the oldest kept position %d", kv.ErrLogTrimmed, after, trimmed)
	}
	if after >= v.version {
		return nil, v.version, nil
	}
	entries, err := s.logEntries(ctx, v, after, limit)
	if err != nil {
		return nil, 0, err
	}
	// A full read ends at its last entry (more may follow); a short one
	// has read everything up to the view's version.
	if len(entries) == limit {
		return entries, entries[len(entries)-1].Pos, nil
	}
	return entries, v.version, nil
}

// logEntries reads up to limit entries after position after, as of view
// v: from the log's tail in memory when it holds them, else from Pebble.
// Each entry's records are a copy: readers may keep or change them.
func (s *Store) logEntries(ctx context.Context, v *view, after kv.Position, limit int) ([]kv.LogEntry, error) {
	if tail, ok := s.logTail.read(nil, after, v.version, limit); ok {
		entries := make([]kv.LogEntry, len(tail))
		for i, e := range tail {
			records, err := kv.DecodeLogRecords(append([]byte(nil), e.value...))
			if err != nil {
				return nil, readError(fmt.Sprintf("read log at %d", e.pos), err)
			}
			entries[i] = kv.LogEntry{Pos: e.pos, Records: records}
		}
		return entries, nil
	}
	it, err := v.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: logKey(after + 1), UpperBound: logKey(v.version + 1)})
	if err != nil {
		return nil, readError("read log", err)
	}
	defer it.Close()
	var entries []kv.LogEntry
	for ok := it.First(); ok; ok = it.Next() {
		val, err := it.ValueAndErr()
		if err != nil {
			return nil, readError("read log", err)
		}
		records, err := kv.DecodeLogRecords(append([]byte(nil), val...))
		if err != nil {
			return nil, readError(fmt.Sprintf("read log at %x", it.Key()), err)
		}
		entries = append(entries, kv.LogEntry{Pos: kv.Position(binary.BigEndian.Uint64(it.Key()[len(logPrefix):])), Records: records})
		if len(entries) == limit {
			return entries, nil
		}
	}
	if err := it.Error(); err != nil {
		return nil, readError("read log", err)
	}
	return entries, nil
}

// WaitLog blocks until a commit after position after is durable. Once a
// write to disk has failed, it returns that failure instead: no commit
// after it will be published.
func (s *Store) WaitLog(ctx context.Context, after kv.Position) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return kv.ErrClosed
		}
		if s.current.version > after {
			s.mu.Unlock()
			return nil
		}
		if err := s.failure; err != nil {
			s.mu.Unlock()
			return err
		}
		ch := s.notify
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// LogBytes sums the sizes of the log entries in (after, upTo], keys and
// values, from the newest published snapshot.
func (s *Store) LogBytes(ctx context.Context, after, upTo kv.Position) (int64, error) {
	v, err := s.acquire()
	if err != nil {
		return 0, err
	}
	defer s.release(v)
	// A trim deletes from the database, not from the snapshot: what it
	// removed is skipped here, as ReadLog refuses it.
	s.mu.Lock()
	from := max(after+1, s.trimmed)
	s.mu.Unlock()
	if upTo < from {
		return 0, nil
	}
	if n, ok := s.logSizes.between(from-1, upTo); ok {
		return n, nil
	}
	// Once damage was found, no scan: the store takes no writes, so the
	// log neither grows nor can be trimmed, and each read of a damaged
	// block costs Pebble's search for a flipped bit (up to 40 KiB times 8
	// checksums of the block: seconds of CPU), which made the trimmer's
	// tick and every /metrics scrape wait on it.
	if err := s.damage.err(); err != nil {
		return 0, err
	}
	it, err := v.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: logKey(from), UpperBound: logKey(upTo + 1)})
	if err != nil {
		return 0, readError("size of the log", err)
	}
	defer it.Close()
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		lv := it.LazyValue() // its length without reading a separated value
		n += int64(len(it.Key()) + lv.Len())
	}
	if err := it.Error(); err != nil {
		return 0, readError("size of the log", err)
	}
	return n, nil
}

// TrimLog removes log entries below position below.
func (s *Store) TrimLog(ctx context.Context, below kv.Position) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return kv.ErrClosed
	}
	if s.failure != nil {
		s.mu.Unlock()
		return s.failure
	}
	if err := s.disk.err(); err != nil {
		// A trim is a write too: Pebble would wait for room, or fail its
		// WAL. It frees space only once compacted, which needs room too.
		s.mu.Unlock()
		return err
	}
	if below > s.current.version+1 {
		below = s.current.version + 1
	}
	if below <= s.trimmed {
		s.mu.Unlock()
		return nil
	}
	// Readers learn of the trim before the entries go, so none of them
	// misses an entry silently.
	s.trimmed = below
	s.mu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	var pos [8]byte
	binary.BigEndian.PutUint64(pos[:], uint64(below))
	if err := b.DeleteRange(logKey(0), logKey(below), nil); err != nil {
		return err
	}
	if err := b.Set(metaTrimKey, pos[:], nil); err != nil {
		return err
	}
	if err := s.fatalToError(func() error { return s.db.Apply(b, pebble.Sync) }); err != nil {
		return s.fail(fmt.Errorf("pebblekv: trim log: %w", err))
	}
	return nil
}
