package pebblekv

import (
	"context"
	"fmt"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

var _ kv.Checkpointer = (*Store)(nil)

// checkpointRequest travels from Checkpoint to the sequencer and back.
type checkpointRequest struct {
	dir string
	// begin, if set, also begins a transaction at the checkpoint's
	// position (CheckpointWithSnapshot).
	begin bool
	tx    kv.Tx
	pos   kv.Position
	err   error
	done  chan struct{}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.opts.Dir }

// Checkpoint writes a consistent copy of the store into dir (which must not
// exist), with Pebble's checkpoint: tables are hard-linked when dir is on
// the store's filesystem (copied otherwise), the WAL and the manifest are
// copied. The sequencer cuts it between two groups, once every group it
// wrote is durable and published, so the copy holds exactly the commits up
// to the returned position: commits wait meanwhile, which is why dir should
// be beside the store (milliseconds: links and a WAL of a few MiB).
func (s *Store) Checkpoint(ctx context.Context, dir string) (kv.Position, error) {
	c, err := s.checkpoint(ctx, dir, false)
	if err != nil {
		return 0, err
	}
	return c.pos, nil
}

// CheckpointWithSnapshot is Checkpoint that also returns a transaction
// reading the store exactly as the copy holds it (at the returned
// position), begun while commits wait: a copy can then be checked against
// its source. The caller rolls it back.
func (s *Store) CheckpointWithSnapshot(ctx context.Context, dir string) (kv.Position, kv.Tx, error) {
	c, err := s.checkpoint(ctx, dir, true)
	if err != nil {
		return 0, nil, err
	}
	return c.pos, c.tx, nil
}

func (s *Store) checkpoint(ctx context.Context, dir string, begin bool) (*checkpointRequest, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, kv.ErrClosed
	}
	if s.failure != nil {
		s.mu.Unlock()
		return nil, s.failure
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()

	c := &checkpointRequest{dir: dir, begin: begin, done: make(chan struct{})}
	s.checkpoints <- c
	// Once queued it runs whatever ctx does: Pebble's checkpoint cannot be
	// stopped halfway, and the sequencer answers every request.
	<-c.done
	return c, c.err
}

// cutCheckpoint runs on the sequencer, so no group is written while it
// does: it waits for the groups written so far to be published (their
// sync), then lets Pebble write the checkpoint.
func (q *sequencer) cutCheckpoint(c *checkpointRequest) {
	defer close(c.done)
	start := time.Now()
	defer func() {
		if c.err == nil {
			q.s.log.Info("checkpoint cut", "dir", c.dir, "position", c.pos, "commits_held", time.Since(start))
		}
	}()
	if err := q.s.waitPublished(q.last); err != nil {
		c.err = err
		return
	}
	if c.begin {
		tx, err := q.s.Begin(context.Background())
		if err != nil {
			c.err = err
			return
		}
		c.tx = tx
	}
	if err := q.s.db.Checkpoint(c.dir); err != nil {
		if c.tx != nil {
			c.tx.Rollback()
			c.tx = nil
		}
		c.err = fmt.Errorf("pebblekv: checkpoint into %s: %w", c.dir, err)
		return
	}
	c.pos = q.last
}

// waitPublished blocks until the read view has reached position pos, or
// the store has failed.
func (s *Store) waitPublished(pos kv.Position) error {
	for {
		s.mu.Lock()
		if s.failure != nil {
			s.mu.Unlock()
			return s.failure
		}
		if s.current.version >= pos {
			s.mu.Unlock()
			return nil
		}
		ch := s.notify
		s.mu.Unlock()
		<-ch
	}
}
