package sqlkv

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/jackc/pgx/v5"
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
	// RoundTrips counts the exchanges with the server since the store
	// opened: a statement sent alone, a batch of pipelined statements, a
	// statement prepared. On a network they are most of a request's time.
	RoundTrips int64
	// CommitRetries counts commits sent again because PostgreSQL, rather
	// than Folio's validation, failed them with a serialization failure or
	// a deadlock (two commits whose keys shared an index page, or wrote the
	// same row); a retry may still find a true conflict.
	CommitRetries int64
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
		RoundTrips:        s.roundTrips.n.Load(),
		CommitRetries:     s.commitRetries.Load(),
	}
}

// roundTripCounter is the pool's pgx tracer: it counts round trips, then
// hands each event to next (nil: none).
type roundTripCounter struct {
	n    atomic.Int64
	next pgx.QueryTracer
}

func (c *roundTripCounter) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	if c.next != nil {
		return c.next.TraceQueryStart(ctx, conn, d)
	}
	return ctx
}

func (c *roundTripCounter) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryEndData) {
	if c.next != nil {
		c.next.TraceQueryEnd(ctx, conn, d)
	}
}

func (c *roundTripCounter) TraceBatchStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	if t, ok := c.next.(pgx.BatchTracer); ok {
		return t.TraceBatchStart(ctx, conn, d)
	}
	return ctx
}

func (c *roundTripCounter) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchQueryData) {
	if t, ok := c.next.(pgx.BatchTracer); ok {
		t.TraceBatchQuery(ctx, conn, d)
	}
}

func (c *roundTripCounter) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, d pgx.TraceBatchEndData) {
	if t, ok := c.next.(pgx.BatchTracer); ok {
		t.TraceBatchEnd(ctx, conn, d)
	}
}

func (c *roundTripCounter) TracePrepareStart(ctx context.Context, conn *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	c.n.Add(1)
	if t, ok := c.next.(pgx.PrepareTracer); ok {
		return t.TracePrepareStart(ctx, conn, d)
	}
	return ctx
}

func (c *roundTripCounter) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, d pgx.TracePrepareEndData) {
	if t, ok := c.next.(pgx.PrepareTracer); ok {
		t.TracePrepareEnd(ctx, conn, d)
	}
}
