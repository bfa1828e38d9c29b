package kv

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Reclaimable is a backend transaction as a Tracker sees it: something that
// can be ended from outside while its owner may still be using it.
type Reclaimable interface {
	// ReadVersion is the position the transaction reads at. The tracker
	// calls it with its lock held, so it must not block or take locks that
	// are held around calls into the tracker.
	ReadVersion() Position
	// Expire frees what the transaction holds and makes its later use fail
	// with reason (a nil reason: it ended normally). It reports whether the
	// transaction still held anything, false once it has ended. It must be
	// safe to call concurrently with the owner's use and more than once, and
	// it removes the transaction from the tracker itself.
	Expire(reason error) bool
}

// Tracker keeps a store's open transactions. A transaction abandoned without
// Commit or Rollback still pins what it reads from (a snapshot, a
// connection, conflict history), so a sweeper expires the ones open for
// longer than the maximum age, and the store ends the rest when it closes.
// Every backend keeps its transactions in one, so that they all reclaim them
// by the same rules.
type Tracker struct {
	maxAge time.Duration
	log    *slog.Logger

	mu   sync.Mutex
	open map[Reclaimable]time.Time // when each transaction began

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// NewTracker returns an empty tracker and starts its sweeper, which expires
// the transactions older than maxAge with ErrTxTooOld and logs each to
// logger. Stop ends the sweeper.
func NewTracker(maxAge time.Duration, logger *slog.Logger) *Tracker {
	tr := newTracker(maxAge, logger)
	go tr.sweepLoop()
	return tr
}

// newTracker returns a tracker without its sweeper: tests sweep by hand.
func newTracker(maxAge time.Duration, logger *slog.Logger) *Tracker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Tracker{
		maxAge: maxAge,
		log:    logger,
		open:   make(map[Reclaimable]time.Time),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Add registers a transaction that began at started.
func (tr *Tracker) Add(t Reclaimable, started time.Time) {
	tr.mu.Lock()
	tr.open[t] = started
	tr.mu.Unlock()
}

// Remove forgets a transaction; forgetting one that is not there is a no-op.
func (tr *Tracker) Remove(t Reclaimable) {
	tr.mu.Lock()
	delete(tr.open, t)
	tr.mu.Unlock()
}

// Len is the number of open transactions.
func (tr *Tracker) Len() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.open)
}

// OldestReadVersion is the lowest read version of the open transactions, or
// newest if that is lower (or none is open): what a store may still be asked
// to check a commit against.
func (tr *Tracker) OldestReadVersion(newest Position) Position {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	oldest := newest
	for t := range tr.open {
		oldest = min(oldest, t.ReadVersion())
	}
	return oldest
}

// Sweep expires, with ErrTxTooOld, the transactions that at now have been
// open for longer than the maximum age. It returns how many it reclaimed.
func (tr *Tracker) Sweep(now time.Time) int {
	type aged struct {
		t   Reclaimable
		age time.Duration
	}
	var old []aged
	tr.mu.Lock()
	for t, started := range tr.open {
		if age := now.Sub(started); age > tr.maxAge {
			old = append(old, aged{t, age})
		}
	}
	tr.mu.Unlock()
	// Expire outside the lock: it takes the transaction's own lock, which
	// its owner may hold while it calls into the tracker.
	reason := fmt.Errorf("%w: open for more than %s", ErrTxTooOld, tr.maxAge)
	n := 0
	for _, o := range old {
		if o.t.Expire(reason) {
			n++
			tr.log.Warn("transaction reclaimed after exceeding the maximum age",
				"age", o.age.Round(time.Millisecond), "max_age", tr.maxAge)
		}
	}
	return n
}

// ExpireAll expires every open transaction with reason (ErrClosed when the
// store closes). The caller stops new ones from being added first. It
// returns how many it reclaimed.
func (tr *Tracker) ExpireAll(reason error) int {
	tr.mu.Lock()
	open := make([]Reclaimable, 0, len(tr.open))
	for t := range tr.open {
		open = append(open, t)
	}
	tr.mu.Unlock()
	n := 0
	for _, t := range open {
		if t.Expire(reason) {
			n++
		}
	}
	return n
}

// Stop ends the sweeper and waits for it. It is safe to call more than once.
func (tr *Tracker) Stop() {
	tr.stopOnce.Do(func() { close(tr.stop) })
	<-tr.done
}

// sweepLoop sweeps a few times per maximum age, so that a transaction is
// reclaimed soon after it grows too old, but at most once a second.
func (tr *Tracker) sweepLoop() {
	defer close(tr.done)
	ticker := time.NewTicker(sweepInterval(tr.maxAge))
	defer ticker.Stop()
	for {
		select {
		case <-tr.stop:
			return
		case now := <-ticker.C:
			tr.Sweep(now)
		}
	}
}

func sweepInterval(maxAge time.Duration) time.Duration {
	return min(max(maxAge/4, 10*time.Millisecond), time.Second)
}
