package pebblekv

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/foliodb/folio/internal/kv"
)

// maxGroup bounds how many transactions share one Pebble batch.
const maxGroup = 512

// commitRequest travels from a committing transaction to the sequencer and
// back with the outcome.
type commitRequest struct {
	// ctx is the committing caller's: a commit still queued when it ends
	// is dropped, not applied.
	ctx context.Context
	// state is queued until the sequencer takes the commit (taken) or its
	// caller gives up waiting (abandoned), whichever comes first.
	state atomic.Int32
	req   *kv.CommitRequest
	// writes are req's write ranges, worked out by the committing
	// goroutine so that the sequencer, which everyone waits on, does not.
	writes []kv.Range
	pos    kv.Position
	err    error
	done   chan struct{}
}

// The states of a commitRequest.
const (
	queued int32 = iota
	taken
	abandoned
)

// group is a set of accepted commits written to Pebble as one batch and
// awaiting the WAL sync.
type group struct {
	commits []*commitRequest
	view    *view // snapshot taken right after the batch, published after the sync
}

// commit hands req to the sequencer and waits until it is durable and
// visible, or rejected.
func (s *Store) commit(ctx context.Context, req *kv.CommitRequest) (kv.Position, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, kv.ErrClosed
	}
	if s.failure != nil {
		s.mu.Unlock()
		return 0, s.failure
	}
	if err := s.damage.err(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()
	if err := s.disk.check(); err != nil {
		return 0, err
	}

	c := &commitRequest{ctx: ctx, req: req, writes: req.WriteRanges(), done: make(chan struct{})}
	select {
	case s.commits <- c:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		if c.state.CompareAndSwap(queued, abandoned) {
			// The sequencer will skip it: the caller may be told it failed.
			return 0, ctx.Err()
		}
		// The sequencer took it: it will be applied or rejected whatever
		// the caller's context does, so wait for the outcome rather than
		// report a commit as failed that then lands. It is not applied
		// when the disk is full (see diskfull.go), so this wait is short.
		<-c.done
	}
	return c.pos, c.err
}

// sequencer orders commits. It owns the conflict history and the next
// position; nothing else touches them.
type sequencer struct {
	s         *Store
	last      kv.Position
	conflicts *conflictTable
}

func newSequencer(s *Store, last kv.Position) *sequencer {
	return &sequencer{s: s, last: last, conflicts: newConflictTable(last)}
}

func (q *sequencer) run() {
	defer close(q.s.groups)
	for {
		var first *commitRequest
		select {
		case first = <-q.s.commits:
		case c := <-q.s.checkpoints:
			q.cutCheckpoint(c)
			continue
		case <-q.s.stop:
			// Close waited for every in-flight commit, so nothing is queued.
			return
		}
		pending := []*commitRequest{first}
	drain:
		for len(pending) < maxGroup {
			select {
			case c := <-q.s.commits:
				pending = append(pending, c)
			default:
				break drain
			}
		}
		q.process(pending)
	}
}

// process checks and applies one group.
func (q *sequencer) process(pending []*commitRequest) {
	pending = take(pending)
	err := q.s.failed()
	if err == nil {
		// Pebble may wait for room without end on a full disk, and apply
		// the group whenever room comes back: never hand it one then.
		err = q.s.disk.check()
	}
	if err != nil {
		for _, c := range pending {
			c.err = err
			close(c.done)
		}
		return
	}
	if len(pending) == 0 {
		return
	}
	// Pruning asks every open transaction for its read version: do it
	// once the history has grown, not for every group.
	if q.conflicts.needsPrune() {
		q.conflicts.prune(q.s.oldestReadVersion())
	}
	b := q.s.db.NewBatch()
	var sums counterSums
	accepted := pending[:0:0]
	for _, c := range pending {
		if err := q.conflicts.check(c.req.ReadVersion, c.req.ReadRanges); err != nil {
			c.err = err
			close(c.done)
			continue
		}
		q.last++
		c.pos = q.last
		if err := writeCommit(b, &sums, c.req, c.pos, q.s.logSizes, q.s.logTail); err != nil {
			// Only a malformed request can fail here; the batch may hold
			// part of it, so the whole group goes.
			q.failGroup(b, pending, fmt.Errorf("pebblekv: build batch: %w", err))
			return
		}
		q.conflicts.record(c.pos, c.writes)
		q.s.values.wrote(c.pos, c.req.Writes)
		accepted = append(accepted, c)
	}
	if len(accepted) == 0 {
		b.Close()
		return
	}
	if err := sums.write(b); err != nil {
		q.failGroup(b, pending, fmt.Errorf("pebblekv: build batch: %w", err))
		return
	}
	var pos [8]byte
	binary.BigEndian.PutUint64(pos[:], uint64(q.last))
	b.Set(metaVersionKey, pos[:], nil)
	// No sync here: the syncer syncs once for every group that queued up,
	// and nobody reads this state before then.
	if err := q.s.fatalToError(func() error { return q.s.db.Apply(b, pebble.NoSync) }); err != nil {
		q.failGroup(b, pending, fmt.Errorf("pebblekv: write: %w", err))
		return
	}
	q.s.batchKeys.Add(int64(b.Count()))
	q.s.batchBytes.Add(int64(b.Len()))
	b.Close()
	q.s.batches.Add(1)
	q.s.groupSizes.Observe(float64(len(accepted)))
	q.s.groups <- &group{commits: accepted, view: q.s.newView(q.last)}
}

// take claims the commits whose callers still wait, and rejects those whose
// context ended while they were queued: pending's commits that remain are
// applied or rejected by the sequencer, whatever their callers do.
func take(pending []*commitRequest) []*commitRequest {
	kept := pending[:0]
	for _, c := range pending {
		if !c.state.CompareAndSwap(queued, taken) {
			continue // abandoned: its caller has returned
		}
		if err := c.ctx.Err(); err != nil {
			c.err = err
			close(c.done)
			continue
		}
		kept = append(kept, c)
	}
	return kept
}

// failGroup rejects every commit of the group and stops the store: the
// sequencer's state may no longer match the disk.
func (q *sequencer) failGroup(b *pebble.Batch, pending []*commitRequest, err error) {
	b.Close()
	err = q.s.fail(err)
	for _, c := range pending {
		select {
		case <-c.done:
		default:
			c.err = err
			close(c.done)
		}
	}
}

// writeCommit adds one transaction's writes and log entry to b: cleared
// ranges first, then single-key mutations (which are newer); it notes the
// entry's size in sizes, and the entry in tail. Its counter deltas go to
// sums, which the group writes once for all its commits.
func writeCommit(b *pebble.Batch, sums *counterSums, req *kv.CommitRequest, pos kv.Position, sizes *logSizes, tail *logTail) error {
	for _, r := range req.Writes.ClearedRanges() {
		if err := sums.writeRange(b, r); err != nil {
			return err
		}
		if err := b.DeleteRange(r.Begin, r.End, nil); err != nil {
			return err
		}
	}
	var err error
	req.Writes.Mutations(func(m *kv.Mutation) bool {
		switch m.Kind {
		case kv.OpSet:
			if err = sums.writeKey(b, m.Key); err == nil {
				err = b.Set(m.Key, m.Value, nil)
			}
		case kv.OpClear:
			if err = sums.writeKey(b, m.Key); err == nil {
				err = b.Delete(m.Key, nil)
			}
		case kv.OpAdd:
			sums.add(m.Key, m.Delta)
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if len(req.Log) > 0 {
		key, value := logKey(pos), kv.EncodeLogRecords(req.Log)
		if err := b.Set(key, value, nil); err != nil {
			return err
		}
		sizes.add(pos, int64(len(key)+len(value)))
		tail.add(pos, value)
	}
	return nil
}

// runSyncer makes groups durable and visible in order.
func (s *Store) runSyncer() {
	for g := range s.groups {
		groups := []*group{g}
	drain:
		for {
			select {
			case more, ok := <-s.groups:
				if !ok {
					break drain
				}
				groups = append(groups, more)
			default:
				break drain
			}
		}
		// A write or sync that failed before stopped the store: what these
		// groups hold came after the failure, and is never published (see
		// fail), nor synced, since Pebble's WAL is unusable then.
		err := s.failed()
		if err == nil {
			// One fsync makes every group so far durable: the WAL is
			// written in order.
			start := time.Now()
			err = s.fatalToError(func() error { return s.db.LogData(nil, pebble.Sync) })
			s.syncTimes.Observe(time.Since(start).Seconds())
			if err != nil {
				err = s.fail(fmt.Errorf("pebblekv: sync: %w", err))
			}
		}
		last := groups[len(groups)-1]
		for _, g := range groups {
			if g != last || err != nil {
				s.release(g.view)
			}
		}
		if err == nil {
			s.publish(last.view)
		}
		for _, g := range groups {
			for _, c := range g.commits {
				if err != nil {
					c.pos, c.err = 0, err
				}
				close(c.done)
			}
		}
	}
}

// fail stops the store from taking more work after a write to disk failed,
// and wakes the log waiters so that they get the failure rather than wait
// for commits that will never come. Nothing written after the failure is
// ever published: whether Pebble still holds it is not known, and a crash
// could take it back.
//
// The commits in flight were written to the WAL, and Pebble may replay
// them at the next start: their outcome is unknown, so the failure is no
// kv.ErrStorageFull, which tells the client to retry (and an $increment
// retried would be applied twice). It says that a restart is needed, and
// the API answers it as an internal error, without a retry delay.
//
// It returns the failure that stopped the store: err, or one before it.
func (s *Store) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failure == nil {
		restart := "restart the server"
		if isNoSpace(err) {
			restart = "the disk is full: free space on it, then restart the server"
		}
		err = fmt.Errorf("pebblekv: the store stopped at a failed write to disk, and takes no more writes; the writes in flight then may or may not be applied at the next start; %s: %w", restart, err)
		s.failure = err
		s.log.Error("store stopped after a write failure", "err", err)
		close(s.notify)
		s.notify = make(chan struct{})
	}
	return s.failure
}

func (s *Store) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failure
}
