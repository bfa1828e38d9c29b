package streams

import (
	"context"
	"sync"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
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
	pending int // accounted bytes of the queued batches the hub handed over
	// taken is the position of the batch Next last returned while its
	// consumer has not come back for more (it is writing it to its
	// client), and 0 once it waits for more: a stream whose client stopped
	// reading is stuck on an old one, outside the queue.
	taken kv.Position
	err   error // why the subscription ended, once it has
	wake  chan struct{}
}

type queued struct {
	batch Batch
	size  int // accounted bytes; 0 for batches read while catching up
}

// errClosed ends a subscription its consumer closed.
var errClosed = apierror.Errorf(apierror.Cancelled, "stream closed")

// Subscribe opens a stream of the records sel selects, committed after the
// cursor. It reads the log from there before it returns, so a cursor the
// log no longer holds fails here (OUT_OF_RANGE), before anything is sent,
// and so does a cursor ahead of the log (one from another data directory).
func (h *Hub) Subscribe(ctx context.Context, after Cursor, sel Selector) (*Subscription, error) {
	s := &Subscription{hub: h, sel: sel, after: after, wake: make(chan struct{}, 1)}
	if err := h.openSub(s); err != nil {
		return nil, err
	}
	rd, err := h.log.OpenReader(ctx, "streams", after.readAfter())
	if err != nil {
		h.leave(s)
		return nil, readError(err, after)
	}
	s.rd = rd
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
			s.hub.pending.Add(-int64(q.size))
			s.taken = q.batch[0].Cursor.Pos
			s.mu.Unlock()
			return q.batch, nil
		}
		s.taken = 0 // back for more with nothing queued: all it took is out
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

// Close ends the subscription and releases what it holds: its place
// among the open subscriptions (Options.MaxStreams), its queue and its
// reader. It is safe to call more than once, and from any goroutine.
func (s *Subscription) Close() {
	// Ended first: the hub no longer lets it join, and so never takes
	// over the reader closed here, nor queues anything more. The queue
	// goes before the hub forgets s, so that the hub's total never counts
	// bytes of a subscription it cannot find.
	s.end(errClosed)
	s.drop()
	s.hub.leave(s)
	s.mu.Lock()
	rd := s.rd
	s.rd = nil
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

// pick is called by the hub, under its lock, with each new entry: it
// returns what s selects of it, and its accounted size; nothing once s has
// ended.
func (s *Subscription) pick(e *entry) (Batch, int, error) {
	s.mu.Lock()
	after, ended := s.after, s.err != nil
	s.mu.Unlock()
	if ended {
		return nil, 0, nil
	}
	return pick(e, after, s.sel)
}

// fits returns the error s must end with if size more bytes would take its
// queue past maxPending: its consumer has fallen too far behind.
func (s *Subscription) fits(size, maxPending int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && s.pending > 0 && s.pending+size > maxPending {
		return apierror.Errorf(apierror.ResourceExhausted, "the stream fell too far behind (more than %d bytes of changes waiting for it) and was ended; resume from the position of the last item received", maxPending)
	}
	return nil
}

// enqueue is called by the hub, under its lock, to queue a batch that
// fits; a subscription that has ended meanwhile takes nothing more.
func (s *Subscription) enqueue(b Batch, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.queue = append(s.queue, queued{batch: b, size: size})
	s.pending += size
	s.hub.pending.Add(int64(size))
	s.signal()
}

// backlog is the position of s's oldest change not yet out to its
// consumer's client (queued, or taken and still being written), that of
// its oldest queued change, and the bytes it holds of the hub's total;
// none if it holds no bytes.
func (s *Subscription) backlog() (out, queued kv.Position, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == 0 {
		return 0, 0, 0
	}
	queued = s.queue[0].batch[0].Cursor.Pos
	out = queued
	if s.taken != 0 {
		out = min(out, s.taken)
	}
	return out, queued, s.pending
}

// drop lets an ended subscription's queue go at once, rather than when its
// consumer takes it: Next then returns the error. Its consumer resumes
// from the last item it took, so nothing is lost.
func (s *Subscription) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hub.pending.Add(-int64(s.pending))
	s.queue, s.pending = nil, 0
	s.signal()
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
