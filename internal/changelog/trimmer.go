package changelog

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// trimmer is the state of the Log's trimmer: its notes of where the log
// ended when. Its lock serializes ticks.
type trimmer struct {
	mu    sync.Mutex
	notes []note // oldest first
	// counted is what the notes count, published at the end of every
	// tick for Bytes, which must not wait for a tick's trim.
	counted atomic.Pointer[counted]
}

type note struct {
	at    time.Time
	pos   kv.Position
	bytes int64 // of the entries after the previous note's position, through pos
}

// counted is the bytes of the notes' entries the log still holds, through
// the newest note's position.
type counted struct {
	pos   kv.Position
	bytes int64
}

// TrimInterval is how often RunTrimmer ticks: a sixteenth of the
// retention, between one second and ten minutes; with a byte bound, at
// least every ten seconds, so that a burst of writes overshoots the bound
// by ten seconds' worth at most.
func (l *Log) TrimInterval() time.Duration {
	every := 10 * time.Minute
	if l.opts.Retention > 0 {
		every = min(max(l.opts.Retention/16, time.Second), every)
	}
	if l.opts.MaxBytes > 0 {
		every = min(every, 10*time.Second)
	}
	return every
}

// trims reports whether the log has a bound to keep it to.
func (l *Log) trims() bool { return l.opts.Retention > 0 || l.opts.MaxBytes > 0 }

// RunTrimmer keeps the log to the retention and the byte bound until ctx
// is done or the store closes, ticking every TrimInterval. Without either
// bound it returns at once. Run it on one goroutine.
func (l *Log) RunTrimmer(ctx context.Context) {
	if !l.trims() {
		return
	}
	tick := time.NewTicker(l.TrimInterval())
	defer tick.Stop()
	for {
		if err := l.Tick(ctx, time.Now()); err != nil {
			if ctx.Err() != nil || errors.Is(err, kv.ErrClosed) {
				return
			}
			l.opts.Logger.Error("change log retention: trim failed", "err", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// Tick is one step of the trimmer at time now: it notes where the log ends
// (and, with a byte bound, what the entries since the last note take),
// cuts off the readers that hold back entries committed more than the
// retention plus MaxHold before now or that are behind the byte bound, and
// trims what was committed more than the retention before now and every
// remaining reader has read, and whatever the byte bound leaves out.
// RunTrimmer calls it with the clock; tests call it with their own times,
// which must not go backwards.
func (l *Log) Tick(ctx context.Context, now time.Time) error {
	if !l.trims() {
		return nil
	}
	t := &l.trim
	t.mu.Lock()
	defer t.mu.Unlock()
	defer l.publishCounted()
	last, err := l.store.LastPosition(ctx)
	if err != nil {
		return err
	}
	// Each note counts its entries, for the byte bound and for Bytes; the
	// first counts everything the log still holds.
	n := note{at: now, pos: last}
	var prev kv.Position
	if len(t.notes) > 0 {
		prev = t.notes[len(t.notes)-1].pos
	}
	if n.bytes, err = l.store.LogBytes(ctx, prev, last); err != nil {
		return err
	}
	t.notes = append(t.notes, n)

	// The time bound: trim what the retention's note covers, unless a
	// reader still needs it; cut off the readers past the hold.
	retained, bound := -1, -1
	if l.opts.Retention > 0 {
		retained = t.newestBefore(now.Add(-l.opts.Retention))
		bound = t.newestBefore(now.Add(-l.opts.Retention - l.opts.MaxHold))
	}
	// The byte bound: trim the oldest entries, whoever still needs them,
	// down to the newest that fit in the bound.
	l.mu.Lock()
	floor := l.floor
	l.mu.Unlock()
	over, room := -1, int64(0)
	if l.opts.MaxBytes > 0 {
		over, room = t.overBytes(l.opts.MaxBytes, floor)
	}
	if retained < 0 && over < 0 {
		return nil
	}

	var below, sizeBelow kv.Position
	if retained >= 0 {
		below = t.notes[retained].pos + 1
	}
	var kept int64 // what the note over keeps, once the trim is done
	if over >= 0 {
		if sizeBelow, kept, err = l.splitNote(ctx, over, room, floor); err != nil {
			return err
		}
	}
	l.mu.Lock()
	for r := range l.readers {
		if r.pos+1 < sizeBelow {
			r.cutOffBySize(l.opts.MaxBytes)
			l.opts.Logger.Warn("change log reader cut off: the log reached its byte bound before the reader read what it held",
				"reader_at", r.pos, "trimmed_below", sizeBelow, "max_bytes", l.opts.MaxBytes)
			continue
		}
		// r needs the entries after r.pos. If one of them is at or below
		// the bound's note, it was committed before that note was taken.
		if bound >= 0 && r.pos < t.notes[bound].pos {
			r.cutOff(t.notes[bound].pos)
			l.opts.Logger.Warn("change log reader cut off: it held the log back past the retention plus the hold",
				"reader_at", r.pos, "bound", t.notes[bound].pos, "retention", l.opts.Retention, "max_hold", l.opts.MaxHold)
			continue
		}
		below = min(below, r.pos+1)
	}
	below = max(below, sizeBelow)
	if below <= l.floor {
		l.mu.Unlock()
		t.forget(bound)
		return nil
	}
	// Raised before the trim, so that no reader opens below it meanwhile.
	floorBefore := l.floor
	l.floor = below
	l.mu.Unlock()
	if err := l.store.TrimLog(ctx, below); err != nil {
		// Nothing was trimmed: lowered again, the next tick tries again
		// (below <= floor would take the log for trimmed), and readers may
		// open on what is still there.
		l.mu.Lock()
		if l.floor == below {
			l.floor = floorBefore
		}
		l.mu.Unlock()
		return err
	}
	if over >= 0 && below == sizeBelow {
		t.notes[over].bytes = kept
	}
	t.forget(bound)
	t.dropTrimmed(below)
	l.opts.Logger.Debug("change log trimmed", "below", below)
	return nil
}

// publishCounted publishes what the notes count for Bytes. The caller
// holds l.trim.mu.
func (l *Log) publishCounted() {
	t := &l.trim
	if len(t.notes) == 0 {
		return
	}
	l.mu.Lock()
	floor := l.floor
	l.mu.Unlock()
	c := &counted{pos: t.notes[len(t.notes)-1].pos}
	for _, n := range t.notes {
		// As overBytes counts them: a note's entries until floor passes
		// its position.
		if n.pos >= floor {
			c.bytes += n.bytes
		}
	}
	t.counted.Store(c)
}

// overBytes is the index of the oldest note whose following notes' entries
// take at most max bytes, when the entries above floor take more than
// that (the log must then be trimmed into that note), and the room the
// bound leaves for that note's newest entries; -1 when they fit. A note's
// entries count until floor passes its position: one that a trim cut in
// the middle (a reader held it) may count too much, which splitNote then
// finds out.
func (t *trimmer) overBytes(max int64, floor kv.Position) (int, int64) {
	var tail int64
	for i := len(t.notes) - 1; i >= 0; i-- {
		if t.notes[i].pos < floor {
			return -1, 0
		}
		if tail+t.notes[i].bytes > max {
			return i, max - tail
		}
		tail += t.notes[i].bytes
	}
	return -1, 0
}

// splitNote returns the lowest position from which the entries of note i
// take at most room bytes, and what they take: the note counts only those
// once the log is trimmed there (not before: a trim that fails leaves them). The note
// may hold a whole burst of writes (every entry between two ticks): trimming
// it whole would empty the log rather than keep it to the bound. Sizes only
// grow towards older entries, so a binary search of LogBytes finds the
// position; LogBytes answers recent ranges from memory on the embedded
// store, and with one indexed sum on PostgreSQL.
func (l *Log) splitNote(ctx context.Context, i int, room int64, floor kv.Position) (kv.Position, int64, error) {
	n := &l.trim.notes[i]
	lo := max(floor, 1) // the lowest position the note may still hold (the log starts at 1)
	if i > 0 {
		lo = max(lo, l.trim.notes[i-1].pos+1)
	}
	// The answer is in [lo, n.pos+1]; from n.pos+1 the note keeps nothing.
	hi, kept := n.pos+1, int64(0)
	for lo < hi {
		mid := lo + (hi-lo)/2
		b, err := l.store.LogBytes(ctx, mid-1, n.pos)
		if err != nil {
			return 0, 0, err
		}
		if b <= room {
			hi, kept = mid, b
		} else {
			lo = mid + 1
		}
	}
	return hi, kept, nil
}

// newestBefore is the index of the newest note taken at or before t, or -1.
func (t *trimmer) newestBefore(at time.Time) int {
	i := -1
	for j, n := range t.notes {
		if n.at.After(at) {
			break
		}
		i = j
	}
	return i
}

// dropTrimmed drops the notes whose entries are all below floor, trimmed:
// no bound needs them, and without a retention nothing else would.
func (t *trimmer) dropTrimmed(floor kv.Position) {
	i := 0
	for i < len(t.notes) && t.notes[i].pos+1 < floor {
		i++
	}
	t.notes = append(t.notes[:0], t.notes[i:]...)
}

// forget drops the notes older than the bound's: the bound only moves on,
// and the retention's note is never older than it, so no later tick needs
// them.
func (t *trimmer) forget(bound int) {
	if bound > 0 {
		t.notes = append(t.notes[:0], t.notes[bound:]...)
	}
}
