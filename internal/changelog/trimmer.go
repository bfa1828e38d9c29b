package changelog

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// trimmer is the state of the Log's trimmer: its notes of where the log
// ended when. Its lock serializes ticks.
type trimmer struct {
	mu    sync.Mutex
	notes []note // oldest first
}

type note struct {
	at  time.Time
	pos kv.Position
}

// TrimInterval is how often RunTrimmer ticks: a sixteenth of the
// retention, between one second and ten minutes.
func (l *Log) TrimInterval() time.Duration {
	return min(max(l.opts.Retention/16, time.Second), 10*time.Minute)
}

// RunTrimmer keeps the log to the retention until ctx is done or the store
// closes, ticking every TrimInterval. Without a retention it returns at
// once. Run it on one goroutine.
func (l *Log) RunTrimmer(ctx context.Context) {
	if l.opts.Retention <= 0 {
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

// Tick is one step of the trimmer at time now: it notes where the log ends,
// cuts off the readers that hold back entries committed more than the
// retention plus MaxHold before now, and trims what was committed more
// than the retention before now and every remaining reader has read.
// RunTrimmer calls it with the clock; tests call it with their own times,
// which must not go backwards.
func (l *Log) Tick(ctx context.Context, now time.Time) error {
	if l.opts.Retention <= 0 {
		return nil
	}
	t := &l.trim
	t.mu.Lock()
	defer t.mu.Unlock()
	last, err := l.store.LastPosition(ctx)
	if err != nil {
		return err
	}
	t.notes = append(t.notes, note{at: now, pos: last})
	retained := t.newestBefore(now.Add(-l.opts.Retention))
	if retained < 0 {
		return nil
	}
	bound := t.newestBefore(now.Add(-l.opts.Retention - l.opts.MaxHold))

	below := t.notes[retained].pos + 1
	l.mu.Lock()
	for r := range l.readers {
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
	if below <= l.floor {
		l.mu.Unlock()
		t.forget(bound)
		return nil
	}
	// Raised before the trim, so that no reader opens below it meanwhile.
	l.floor = below
	l.mu.Unlock()
	if err := l.store.TrimLog(ctx, below); err != nil {
		return err
	}
	t.forget(bound)
	l.opts.Logger.Debug("change log trimmed", "below", below)
	return nil
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

// forget drops the notes older than the bound's: the bound only moves on,
// and the retention's note is never older than it, so no later tick needs
// them.
func (t *trimmer) forget(bound int) {
	if bound > 0 {
		t.notes = append(t.notes[:0], t.notes[bound:]...)
	}
}
