package sqlkv

import (
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// Stats is a snapshot of the store's connection pool (pgxpool's own
// statistics), for monitoring.
type Stats struct {
	// MaxConns is the pool's size; TotalConns the connections open or
	// being opened, of which AcquiredConns are held by a transaction or a
	// background task, IdleConns wait for one, and ConstructingConns are
	// being opened.
	MaxConns, TotalConns, AcquiredConns, IdleConns, ConstructingConns int32
	// Acquires is the connections handed out since the store opened;
	// EmptyAcquires those that had to wait because none was idle, and
	// CanceledAcquires the waits given up (the acquire timeout, or the
	// caller gone). AcquireWait is the total time spent waiting.
	Acquires, EmptyAcquires, CanceledAcquires int64
	AcquireWait                               time.Duration
	// NewConns is the connections opened since the store opened.
	NewConns int64
}

// TxCounters are the outcomes of the store's transactions (kv.Counted).
func (s *Store) TxCounters() *kv.TxCounters { return s.counters }

// Stats reports the connection pool now.
func (s *Store) Stats() Stats {
	p := s.pool.Stat()
	return Stats{
		MaxConns:          p.MaxConns(),
		TotalConns:        p.TotalConns(),
		AcquiredConns:     p.AcquiredConns(),
		IdleConns:         p.IdleConns(),
		ConstructingConns: p.ConstructingConns(),
		Acquires:          p.AcquireCount(),
		EmptyAcquires:     p.EmptyAcquireCount(),
		CanceledAcquires:  p.CanceledAcquireCount(),
		AcquireWait:       p.AcquireDuration(),
		NewConns:          p.NewConnsCount(),
	}
}
