// Package streams turns the change log into the API's streams: change
// events of a collection and the messages of a messages collection. A
// stream is a reader of the log with a position (a Cursor); it picks the
// records it wants with a Selector and gets them one committed transaction
// at a time, in commit order.
//
// Every stream reads through a changelog.Reader, so the log's trimmer
// holds back for it (within the log's bound). One Hub per log is one
// reader for every stream that has caught up with it: it wakes when a
// commit becomes durable, reads and decodes each new entry once, and hands
// each subscription the records its selector picks. A subscription that
// starts behind the hub (resumed from an old position) first reads through
// a reader of its own, at its own pace, and joins the hub once it has
// caught up, so a long catch-up costs nobody else anything. A hub with no
// subscription has no reader: it does not hold the trimmer, and the first
// subscription to join hands it its reader, positioned where it caught up.
//
// Memory stays bounded: what the hub hands a subscription waits in that
// subscription's queue until its consumer takes it, and a consumer that lets
// more than Options.MaxPending bytes pile up is ended with an error that
// says so. It is never skipped ahead: it reconnects with the position of the
// last item it got, and reads what it missed from the log. All the queues
// together are bounded too (Options.MaxPendingTotal), and so is the number
// of subscriptions open at once (Options.MaxStreams).
package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
)

// Options configure a Hub. Zero values take the defaults.
type Options struct {
	// MaxPending bounds, per subscription, the bytes of changes handed to
	// it and not yet taken by its consumer; past it the subscription ends
	// with RESOURCE_EXHAUSTED. A single transaction larger than the bound
	// is still delivered when nothing else is waiting.
	MaxPending int
	// MaxPendingTotal bounds the bytes queued for all the subscriptions
	// together, so that many consumers a little behind cannot hold what
	// one far behind may not. A batch that would take the total past it
	// first ends the subscription furthest behind (whose oldest queued
	// change is the oldest; of those, the one holding the most; it may be
	// the one receiving) with RESOURCE_EXHAUSTED, and
	// lets its queue go at once: its consumer resumes from the last item
	// it got, as one that overflowed MaxPending does, and reads the rest
	// from the log. Only when nothing at all is queued does a batch larger
	// than the budget go through, as with MaxPending.
	MaxPendingTotal int64
	// MaxStreams bounds the subscriptions open at once, those catching up
	// included: one more is refused with RESOURCE_EXHAUSTED until one
	// closes. Each holds a goroutine and a connection in its transport,
	// and up to MaxPending of queue.
	MaxStreams int
	// ReadBatch is the most log entries read at once, by the hub and by a
	// subscription catching up. An entry may be as large as a transaction
	// (10 MiB by default), so this bounds what one read holds in memory.
	ReadBatch int
	// Logger reports failures of the hub's own reads.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxPending = 16 << 20
	// DefaultMaxPendingTotal lets sixteen streams fall a whole MaxPending
	// behind at once, or many a little, within 256 MiB.
	DefaultMaxPendingTotal = 256 << 20
	// DefaultMaxStreams is far more streams than a node's writes usually
	// feed, and few enough that their fixed costs (goroutines, sockets
	// and their kernel buffers, render buffers) stay within a small
	// server's memory and its file descriptor limit.
	DefaultMaxStreams = 1000
	DefaultReadBatch  = changelog.DefaultReadBatch
)

// eventOverhead is what an event costs in a queue besides its key and data
// bytes, so that a flood of deletes (no data) is bounded too.
const eventOverhead = 128

// Selector reports whether a stream wants a record, and as what. It runs
// on the hub's goroutine for live subscriptions, so it must be quick and
// must not block; an error ends the subscription.
type Selector func(r *changelog.Record) (Verdict, error)

// Verdict is what a Selector makes of a record.
type Verdict uint8

// The verdicts.
const (
	Skip Verdict = iota // not for this stream
	Take                // for this stream
	// TakeLeaving is for this stream as a document leaving its filter:
	// it matched before the change and does not after (Event.Left).
	TakeLeaving
)

// Event is one record a stream selected.
type Event struct {
	// Cursor is the event's place in the log: a stream resumed from it
	// continues with what follows the event.
	Cursor Cursor
	// Record is the change. Its Key and Data must not be modified.
	Record changelog.Record
	// Last is set on the last event of its transaction that the stream
	// selected.
	Last bool
	// Left is set on a change the stream's filter took as its document
	// leaving the filter (TakeLeaving).
	Left bool
}

// Batch is the events one committed transaction gives a stream, in the
// order the transaction wrote them.
type Batch []Event

// Hub tails a change log for its subscriptions.
type Hub struct {
	log    *changelog.Log
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// startOnce runs the hub's goroutine, or, on a Close before any
	// Start, closes done in its place.
	startOnce sync.Once

	mu sync.Mutex
	// pos is where the hub has read to: every entry at or below it has
	// been offered to every live subscription. A subscription may join
	// only with a cursor at or past pos, so it neither misses nor repeats.
	pos  kv.Position
	subs map[*Subscription]struct{}
	// open holds every subscription from Subscribe to Close, live,
	// catching up or ended: what MaxStreams counts, and where a
	// subscription holding queued bytes is found to make room.
	open map[*Subscription]struct{}
	// pending is the sum of the open subscriptions' pending bytes. It
	// grows only on the hub's goroutine, under mu, and shrinks as
	// consumers take batches.
	pending atomic.Int64
	// reading is set while the hub has a reader: its loop's, or one a
	// subscription handed over (handoff) that the loop has not taken yet.
	reading bool
	handoff *changelog.Reader
	// wakeIdle ends the idle loop's wait, when a subscription joins.
	wakeIdle context.CancelFunc
	closed   bool
}

// NewHub returns a hub on log; Start starts it. Close stops it; it also
// stops by itself when the log's store is closed.
func NewHub(log *changelog.Log, opts Options) *Hub {
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.MaxPendingTotal <= 0 {
		opts.MaxPendingTotal = DefaultMaxPendingTotal
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.ReadBatch <= 0 {
		opts.ReadBatch = DefaultReadBatch
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{log: log, opts: opts, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		subs: make(map[*Subscription]struct{}), open: make(map[*Subscription]struct{})}
	return h
}

// Start starts the hub's goroutine, which reads the log while a
// subscription is live.
func (h *Hub) Start(context.Context) error {
	h.startOnce.Do(func() { go h.run() })
	return nil
}

// Close ends every subscription with UNAVAILABLE and stops the hub. A
// subscription opened afterwards fails at once. It is safe to call more
// than once, and on a hub never started.
func (h *Hub) Close() error {
	h.cancel()
	h.startOnce.Do(func() { close(h.done) }) // never started: nothing to wait for
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.endAllLocked(errShuttingDown)
	return nil
}

// Len is the number of subscriptions the hub is feeding.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Stats is a snapshot of what a hub holds, for tests and metrics.
type Stats struct {
	// Open is the subscriptions opened and not closed yet, live or
	// catching up: what Options.MaxStreams bounds.
	Open int
	// Live is the subscriptions the hub feeds (Len).
	Live int
	// PendingBytes is the accounted bytes queued for all of them: what
	// Options.MaxPendingTotal bounds.
	PendingBytes int64
}

// Stats reports what the hub holds now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{Open: len(h.open), Live: len(h.subs), PendingBytes: h.pending.Load()}
}

var errShuttingDown = apierror.Errorf(apierror.Unavailable, "the server is shutting down; resume from the position of the last item received")

func (h *Hub) run() {
	defer close(h.done)
	var rd *changelog.Reader
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, r := range []*changelog.Reader{rd, h.handoff} {
			if r != nil {
				r.Close()
			}
		}
		h.handoff, h.reading = nil, false
	}()
	for {
		h.mu.Lock()
		if h.handoff != nil {
			rd, h.handoff = h.handoff, nil
		}
		if len(h.subs) == 0 || rd == nil {
			// Nobody to read for: let the reader go, so that it holds
			// the trimmer no more, and wait for a subscription to hand
			// over its own.
			if rd != nil {
				rd.Close()
				rd = nil
			}
			h.reading = false
			if err := h.idle(); err != nil {
				h.stop(err)
				return
			}
			continue
		}
		h.mu.Unlock()
		entries, err := rd.Next(h.ctx, h.opts.ReadBatch)
		if err == nil {
			h.dispatch(decoded(entries), rd.Position())
			continue
		}
		if h.ctx.Err() != nil || errors.Is(err, kv.ErrClosed) {
			h.stop(err)
			return
		}
		// The hub cannot go on from where it is: every live subscription
		// learns why and ends, and the hub lets its reader go. A client
		// resuming from its last position reads the log itself and gets
		// the same error if it persists.
		h.opts.Logger.Error("change log stream: read failed", "after", rd.Position(), "err", err)
		h.mu.Lock()
		h.endAllLocked(readError(err, After(rd.Position())))
		h.mu.Unlock()
	}
}

// idle waits, with h.mu held on entry and released, until a subscription
// joins, the hub is closed (nil) or the store closes (its error).
func (h *Hub) idle() error {
	ctx, cancel := context.WithCancel(h.ctx)
	h.wakeIdle = cancel
	h.mu.Unlock()
	// No commit comes after the largest position: this waits for the
	// join to cancel ctx, or for the store to close.
	err := h.log.Store().WaitLog(ctx, math.MaxUint64)
	cancel()
	if h.ctx.Err() != nil {
		return h.ctx.Err()
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// stop ends every subscription after the hub's loop failed for good (the
// store closed, or Close).
func (h *Hub) stop(err error) {
	if h.ctx.Err() == nil && !errors.Is(err, kv.ErrClosed) {
		h.opts.Logger.Error("change log stream stopped", "err", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	h.endAllLocked(errShuttingDown)
}

func (h *Hub) endAllLocked(err error) {
	for s := range h.subs {
		delete(h.subs, s)
		s.end(err)
	}
}

// dispatch offers entries to every live subscription. It holds the hub's
// lock throughout, so that a subscription joining meanwhile waits and then
// starts exactly after upTo.
func (h *Hub) dispatch(entries []entry, upTo kv.Position) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		for i := range entries {
			if !h.offerLocked(s, &entries[i]) {
				break
			}
		}
	}
	h.pos = max(h.pos, upTo)
}

// offerLocked queues for s what it selects of e, within the bounds, and
// reports whether s is still live. It ends s if its selector fails or its
// consumer let more than MaxPending wait, and makes room within
// MaxPendingTotal first.
func (h *Hub) offerLocked(s *Subscription, e *entry) bool {
	b, size, err := s.pick(e)
	if err == nil && len(b) > 0 {
		err = s.fits(size, h.opts.MaxPending)
	}
	if err != nil {
		h.endLocked(s, err)
		return false
	}
	if len(b) == 0 {
		return true
	}
	if !h.makeRoomLocked(s, size) {
		return false
	}
	s.enqueue(b, size)
	return true
}

// makeRoomLocked ends, furthest behind first, the subscriptions whose
// queues must go so that size more bytes fit in MaxPendingTotal. It
// reports false if s itself was ended.
func (h *Hub) makeRoomLocked(s *Subscription, size int) bool {
	for h.pending.Load()+int64(size) > h.opts.MaxPendingTotal {
		v := h.furthestBehindLocked()
		if v == nil {
			return true // nothing is queued: the batch goes alone
		}
		h.endLocked(v, h.errOverBudget())
		v.drop()
		if v == s {
			return false
		}
	}
	return true
}

// furthestBehindLocked is the open subscription whose oldest change not
// yet out to its client (queued, or taken and still being written) is the
// oldest; of those, the one whose oldest queued change is; of those, the
// one holding the most; nil if none holds any bytes. Bytes alone would not
// do: one that keeps up holds the batch just handed to it, as much as one
// far behind may hold; nor would the queue alone: one whose client stopped
// reading is stuck writing an old batch while its queue holds only the
// newest change, as the queue of one that keeps up does. It is called only
// when the budget is full, so a scan costs nothing the rest of the time.
func (h *Hub) furthestBehindLocked() *Subscription {
	var far *Subscription
	var farOut, farQueued kv.Position
	most := 0
	for s := range h.open {
		out, queued, n := s.backlog()
		if n == 0 {
			continue
		}
		if far == nil || out < farOut || (out == farOut && (queued < farQueued || (queued == farQueued && n > most))) {
			far, farOut, farQueued, most = s, out, queued, n
		}
	}
	return far
}

func (h *Hub) errOverBudget() error {
	return apierror.Errorf(apierror.ResourceExhausted, "the server's streams together had more than %d bytes of changes waiting for their clients (--stream-buffer-total-bytes) and this stream was the furthest behind, so it was ended; resume from the position of the last item received", h.opts.MaxPendingTotal)
}

func (h *Hub) endLocked(s *Subscription, err error) {
	delete(h.subs, s)
	s.end(err)
}

// openSub registers s as open, unless MaxStreams are open already or the hub
// is closed.
func (h *Hub) openSub(s *Subscription) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errShuttingDown
	}
	if len(h.open) >= h.opts.MaxStreams {
		return apierror.Errorf(apierror.ResourceExhausted, "too many open streams: this server serves at most %d events and subscribe streams at once (--max-streams); close one or try again later", h.opts.MaxStreams)
	}
	h.open[s] = struct{}{}
	return nil
}

// join makes s live if the hub has not read past upTo, where s's reader rd
// has read to. It reports whether s joined; when it did, s no longer owns
// rd, and the hub reports whether it took rd over: a hub without a reader
// continues from rd, any other leaves rd to the caller to close.
func (h *Hub) join(s *Subscription, upTo kv.Position, rd *changelog.Reader) (joined, took bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false, false, errShuttingDown
	}
	if h.reading && h.pos > upTo {
		return false, false, nil
	}
	if !s.goLive(upTo) {
		return false, false, nil // ended meanwhile
	}
	h.subs[s] = struct{}{}
	if h.reading {
		return true, false, nil
	}
	h.reading, h.handoff, h.pos = true, rd, upTo
	if h.wakeIdle != nil {
		h.wakeIdle()
		h.wakeIdle = nil
	}
	return true, true, nil
}

// leave forgets s, which holds nothing queued any more.
func (h *Hub) leave(s *Subscription) {
	h.mu.Lock()
	delete(h.subs, s)
	delete(h.open, s)
	h.mu.Unlock()
}

func (h *Hub) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// entry is a log entry with its records decoded. The records alias the
// entry's bytes, which nobody modifies.
type entry struct {
	pos     kv.Position
	records []changelog.Record
	size    int // accounted bytes of all records
}

func decoded(entries []changelog.Entry) []entry {
	out := make([]entry, len(entries))
	for i, e := range entries {
		out[i] = entry{pos: e.Pos, records: e.Records}
		for j := range e.Records {
			out[i].size += recordSize(&e.Records[j])
		}
	}
	return out
}

func recordSize(r *changelog.Record) int {
	return len(r.Key) + len(r.Data) + len(r.Before) + eventOverhead
}

// pick returns the events of e after the cursor that sel selects, and
// their accounted size. When it selects only part of the entry it copies
// the records' bytes, so that a queue holding them does not keep the whole
// entry alive: the accounted size is then what is really held.
func pick(e *entry, after Cursor, sel Selector) (Batch, int, error) {
	var b Batch
	for i := range e.records {
		if !after.before(e.pos, i) {
			continue
		}
		v, err := sel(&e.records[i])
		if err != nil {
			return nil, 0, err
		}
		if v != Skip {
			ev := Event{Cursor: Cursor{Pos: e.pos, Index: uint32(i)}, Record: e.records[i], Left: v == TakeLeaving}
			// The document before the change served the selector; no
			// consumer reads it, and a partial copy need not hold it.
			ev.Record.Before = nil
			b = append(b, ev)
		}
	}
	if len(b) == 0 {
		return nil, 0, nil
	}
	// The last event stands for the rest of the transaction too: nothing
	// after it in the entry is for this stream, so resuming from it needs
	// nothing of the entry, which matters once the log is trimmed up to it.
	b[len(b)-1].Last = true
	b[len(b)-1].Cursor = After(e.pos)
	if len(b) == len(e.records) {
		return b, e.size, nil
	}
	n := 0
	for i := range b {
		n += len(b[i].Record.Key) + len(b[i].Record.Data)
	}
	buf := make([]byte, 0, n)
	size := 0
	for i := range b {
		r := &b[i].Record
		buf = append(buf, r.Key...)
		r.Key = buf[len(buf)-len(r.Key):]
		if r.Data != nil {
			buf = append(buf, r.Data...)
			r.Data = buf[len(buf)-len(r.Data):]
		}
		size += recordSize(r)
	}
	return b, size, nil
}

// readError turns a failed read of the log after c into the error a
// stream ends with.
func readError(err error, c Cursor) error {
	switch {
	case errors.Is(err, changelog.ErrTrimmed), errors.Is(err, kv.ErrLogTrimmed):
		return apierror.Errorf(apierror.OutOfRange, "position '%s' is older than the oldest change the log still keeps (see the server's log retention); open the stream without a position to start from now", c)
	case errors.Is(err, changelog.ErrAhead):
		return apierror.Errorf(apierror.OutOfRange, "position '%s' is ahead of this server's change log: it comes from another server or data directory", c)
	case errors.Is(err, changelog.ErrCutOff):
		return apierror.Errorf(apierror.OutOfRange, "the stream fell too far behind the change log (it kept changes older than the log's retention allows) and was ended; open the stream without a position to start from now")
	case errors.Is(err, changelog.ErrCutOffBySize):
		return apierror.Errorf(apierror.OutOfRange, "the stream fell too far behind the change log (the log reached its size bound and dropped changes the stream had not sent) and was ended; open the stream without a position to start from now")
	case errors.Is(err, kv.ErrClosed):
		return errShuttingDown
	}
	return fmt.Errorf("streams: read the change log after position %d: %w", c.Pos, err)
}
