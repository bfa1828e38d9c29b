package streams

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// Trimmer keeps the change log to a retention period: it removes the
// entries committed more than the period ago, so that streams can resume
// from any position of that period and no further back.
//
// The log stores positions, not times. The trimmer maps one to the other
// by noting, at every tick, the time and the log's last position: an entry
// at or below a position noted at time T was committed by T. It trims below
// the newest note that is older than the retention, so an entry is kept at
// least the retention and at most one tick longer. Notes live in memory: a
// restart forgets them, and what was committed before it is then kept for
// the retention counted from the restart. Keeping an entry too long is safe;
// trimming one too early never happens.
type Trimmer struct {
	store     kv.Store
	retention time.Duration
	log       *slog.Logger
	notes     []note // oldest first
}

type note struct {
	at  time.Time
	pos kv.Position
}

// NewTrimmer returns a trimmer that keeps retention's worth of log.
func NewTrimmer(store kv.Store, retention time.Duration, log *slog.Logger) *Trimmer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Trimmer{store: store, retention: retention, log: log}
}

// Interval is how often Run ticks: a sixteenth of the retention, between
// one second and ten minutes.
func (t *Trimmer) Interval() time.Duration {
	return min(max(t.retention/16, time.Second), 10*time.Minute)
}

// Run ticks until ctx is done or the store closes.
func (t *Trimmer) Run(ctx context.Context) {
	tick := time.NewTicker(t.Interval())
	defer tick.Stop()
	for {
		if err := t.Tick(ctx, time.Now()); err != nil {
			if ctx.Err() != nil || errors.Is(err, kv.ErrClosed) {
				return
			}
			t.log.Error("change log retention: trim failed", "err", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// Tick notes where the log ends at now and trims what was committed before
// now minus the retention.
func (t *Trimmer) Tick(ctx context.Context, now time.Time) error {
	last, err := t.store.LastPosition(ctx)
	if err != nil {
		return err
	}
	t.notes = append(t.notes, note{at: now, pos: last})
	cut := -1
	for i, n := range t.notes {
		if now.Sub(n.at) >= t.retention {
			cut = i
		}
	}
	if cut < 0 {
		return nil
	}
	below := t.notes[cut].pos + 1
	t.notes = t.notes[cut+1:]
	if err := t.store.TrimLog(ctx, below); err != nil {
		return err
	}
	t.log.Debug("change log trimmed", "below", below)
	return nil
}
