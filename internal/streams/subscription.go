package streams

import (
	"context"
	"sync"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/status"
)

// Subscription is one stream's reader of the log. Next is meant for one
// consumer goroutine, and Close may be called from any; the hub feeds the
// subscription from its own.
type Subscription struct {
	hub *Hub
	sel Selector

	mu sync.Mutex
	// rd is the subscription's own reader while it catches up; nil once
	// it has joined the hub (which may have taken the reader over) or
	// closed. Only the consumer reads through it.
	rd *changelog.Reader
	// after is the cursor the stream started from, moved up to where the
	// subscription joined the hub: the hub offers entries after its own
	// position, which may be behind, and those at or before after are
	// skipped.
	after   Cursor
	live    bool
	queue   []queued
	pending int   // accounted bytes of the queued batches the hub handed over
	err     error // why the subscription ended, once it has
	wake    chan struct{}
}

type queued struct {
	batch Batch
	size  int // accounted bytes; 0 for batches read while catching up
}

// errClosed ends a subscription its consumer closed.
var errClosed = status.Errorf(status.Cancelled, "stream closed")

// Subscribe opens a stream of the records sel selects, committed after the
// cursor. It reads the log from there before it returns, so a cursor the
// log no longer holds fails here (OUT_OF_RANGE), before anything is sent,
// and so does a cursor ahead of the log (one from another data directory).
func (h *Hub) Subscribe(ctx context.Context, after Cursor, sel Selector) (*Subscription, error) {
	if h.isClosed() {
		return nil, errShuttingDown
	}
	rd, err := h.log.OpenReader(ctx, after.readAfter())
	if err != nil {
		return nil, readError(err, after)
	}
	s := &Subscription{hub: h, sel: sel, after: after, rd: rd, wake: make(chan struct{}, 1)}
	if err := s.catchUp(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Next returns the next batch, waiting for one until ctx is done or the
// subscription ends. Batches come in commit order, each once; after an
// error the subscription is over and Next returns that error again.
func (s *Subscription) Next(ctx context.Context) (Batch, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			q := s.queue[0]
			s.queue[0] = queued{}
			s.queue = s.queue[1:]
			s.pending -= q.size
			s.mu.Unlock()
			return q.batch, nil
		}
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		live := s.live
		s.mu.Unlock()
		if !live {
			if err := s.catchUp(ctx); err != nil {
				s.end(err)
			}
			continue
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Ready reports whether Next has a batch to return without waiting.
func (s *Subscription) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0
}

// Close ends the subscription and releases what it holds. It is safe to
// call more than once, and from any goroutine.
func (s *Subscription) Close() {
	// Ended first: the hub no longer lets it join, and so never takes
	// over the reader closed here.
	s.end(errClosed)
	s.hub.leave(s)
	s.mu.Lock()
	rd := s.rd
	s.rd, s.queue, s.pending = nil, nil, 0
	s.mu.Unlock()
	if rd != nil {
		rd.Close()
	}
}

// catchUp reads the next part of the log through the subscription's own
// reader, queueing what it selects, and joins the hub when it has read to
// the end of the log.
func (s *Subscription) catchUp(ctx context.Context) error {
	if s.hub.isClosed() {
		return errShuttingDown
	}
	s.mu.Lock()
	rd := s.rd
	s.mu.Unlock()
	if rd == nil {
		return errClosed
	}
	read, err := rd.Read(ctx, s.hub.opts.ReadBatch)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return readError(err, s.after)
	}
	entries := decoded(read)
	s.mu.Lock()
	for i := range entries {
		b, _, err := pick(&entries[i], s.after, s.sel)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		if len(b) > 0 {
			// Not counted against MaxPending: a catch-up read holds at
			// most ReadBatch entries, and the consumer takes them before
			// reading more.
			s.queue = append(s.queue, queued{batch: b})
		}
	}
	s.mu.Unlock()
	if len(read) == s.hub.opts.ReadBatch {
		return nil // more to read before there is a point in joining
	}
	joined, took, err := s.hub.join(s, rd.Position(), rd)
	if joined && !took {
		rd.Close()
	}
	return err
}

// goLive is called by the hub, under its lock, when s joins it at upTo.
// It gives up s's reader, and reports false if s has ended meanwhile.
func (s *Subscription) goLive(upTo kv.Position) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	s.live, s.rd = true, nil
	if c := After(upTo); c.Pos > s.after.Pos || (c.Pos == s.after.Pos && s.after.Index != wholeEntry) {
		s.after = c
	}
	return true
}

// offer is called by the hub, under its lock, with each new entry. It
// queues what s selects, or returns the error s must end with: its
// selector's, or RESOURCE_EXHAUSTED when its consumer has fallen too far
// behind.
func (s *Subscription) offer(e *entry, maxPending int) error {
	s.mu.Lock()
	after := s.after
	s.mu.Unlock()
	b, size, err := pick(e, after, s.sel)
	if err != nil || len(b) == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil
	}
	if s.pending > 0 && s.pending+size > maxPending {
		return status.Errorf(status.ResourceExhausted, "the stream fell too far behind (more than %d bytes of changes waiting for it) and was ended; resume from the position of the last item received", maxPending)
	}
	s.queue = append(s.queue, queued{batch: b, size: size})
	s.pending += size
	s.signal()
	return nil
}

// end records why the subscription is over; the first reason stays.
func (s *Subscription) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
