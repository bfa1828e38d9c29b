package cache

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// The sweep reclaims expired entries: a read never answers one, so the
// sweep only frees their space. Every node sweeps; a sweep is idempotent
// (it clears an entry only if it still holds the expiry its index entry
// names, in a transaction that reads it), so two nodes sweeping at once
// conflict at worst, and one retries to find the work done.

// SweepBatch bounds the index entries (durable caches) or the entries
// looked at (each volatile cache) of one batch of a sweep; maxBatches
// bounds the batches of one sweep, which ends early when a batch finds
// less than a full one's work.
const (
	SweepBatch = 1000
	maxBatches = 20
)

// SweepInterval is how often Run sweeps.
const SweepInterval = time.Second

// Run sweeps every interval (SweepInterval if 0) until ctx ends.
func (s *Service) Run(ctx context.Context, store kv.Store, interval time.Duration, log *slog.Logger) {
	if interval <= 0 {
		interval = SweepInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.Sweep(ctx, store); err != nil && ctx.Err() == nil && log != nil {
			log.Warn("cache sweep failed; the next one tries again", "err", err)
		}
	}
}

// Sweep reclaims expired entries, at most maxBatches batches of each
// kind, and reports how many entries it removed.
func (s *Service) Sweep(ctx context.Context, store kv.Store) (int, error) {
	removed := 0
	for range maxBatches {
		n, indexed, err := s.sweepStored(ctx, store)
		removed += n
		if err != nil {
			return removed, err
		}
		if indexed < SweepBatch {
			break
		}
	}
	n, err := s.sweepMemory(ctx, store)
	return removed + n, err
}

// sweepStored clears one batch of the expiry index up to now, and the
// entries behind it that still expire then.
func (s *Service) sweepStored(ctx context.Context, store kv.Store) (removed, indexed int, err error) {
	_, err = kv.Run(ctx, store, func(tx kv.Tx) error {
		removed, indexed = 0, 0
		it := tx.Scan(ctx, keyspace.CacheExpiredBy(s.nowMs()-1), kv.ScanOptions{Limit: SweepBatch})
		defer it.Close()
		for it.Next() {
			indexed++
			at, db, name, key, err := keyspace.CacheExpiryKey(it.Key())
			if err != nil {
				return err
			}
			if err := tx.Clear(it.Key()); err != nil {
				return err
			}
			ek := keyspace.CacheEntry(db, name, key)
			v, err := tx.Get(ctx, ek)
			if errors.Is(err, kv.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if e, err := decodeEntry(v); err == nil && e.expiresAt != at {
				continue // set again since: its own index entry stands for it
			}
			if err := tx.Clear(ek); err != nil {
				return err
			}
			removed++
		}
		return it.Err()
	})
	return removed, indexed, err
}

// sweepMemory drops the volatile caches deleted (on this node or another)
// and looks at up to SweepBatch*maxBatches entries of each other one for
// expired entries: all of a smaller cache, a sample of a larger one
// (memory.sweep).
func (s *Service) sweepMemory(ctx context.Context, store kv.Store) (int, error) {
	ids := s.memory.ids()
	if len(ids) == 0 {
		return 0, nil
	}
	live, err := s.volatileIDs(ctx, store)
	if err != nil {
		return 0, err
	}
	removed := 0
	now := s.nowMs()
	for _, id := range ids {
		if !live[id] {
			s.memory.drop(id)
			continue
		}
		_, n := s.memory.sweep(id, now, SweepBatch*maxBatches)
		removed += n
	}
	return removed, nil
}

// volatileIDs returns the ids of every volatile cache of every project.
func (s *Service) volatileIDs(ctx context.Context, store kv.Store) (map[string]bool, error) {
	ids := map[string]bool{}
	_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		clear(ids)
		it := tx.Snapshot().Scan(ctx, keyspace.AllCaches(), kv.ScanOptions{})
		defer it.Close()
		for it.Next() {
			var r record
			if err := json.Unmarshal(it.Value(), &r); err == nil && r.Volatile {
				ids[r.ID] = true
			}
		}
		return it.Err()
	})
	return ids, err
}
