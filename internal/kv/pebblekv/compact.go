package pebblekv

import (
	"context"
	"fmt"

	"github.com/foliodb/folio/internal/kv"
)

// Compact flushes the memtable and compacts every key into the bottom
// level, so that what a load will cost the disk in the end is written now:
// benchmarks of bytes written per write (BenchmarkWriteCost) call it
// after their load.
func (s *Store) Compact(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return kv.ErrClosed
	}
	// Every key sorts below the store's own 0xFF 0xFF.
	if err := s.db.Compact(ctx, []byte{}, []byte{0xFF, 0xFF}, true); err != nil {
		return fmt.Errorf("pebblekv: compact: %w", err)
	}
	return nil
}
