package sqlkv

import (
	"context"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// announcer tells every node's watcher about this node's commits, on the
// notification channel, after the commits have ended. A NOTIFY sent inside
// the committing transaction makes PostgreSQL take a database-wide lock
// when that transaction commits and hold it until the commit is done, so
// that notifying commits commit one at a time: with it, BenchmarkCommit ran
// at about half the rate. Sent afterwards in a transaction of its own, the
// notification holds that lock only for an instant, and a burst of commits
// is announced once, by its newest position. This node's own watcher and
// maintainer hear at once, without the round trip.
//
// A node that stops between a commit and its announcement leaves the other
// nodes to find the commit by themselves: their watchers check once a
// second (watcher.run).
type announcer struct {
	s    *Store
	kick chan struct{}

	mu      sync.Mutex
	pending kv.Position // newest commit not announced yet, 0 if none
	adds    bool        // whether a pending commit added to counters
}

func newAnnouncer(s *Store) *announcer {
	return &announcer{s: s, kick: make(chan struct{}, 1)}
}

// committed records a commit at pos to announce.
func (a *announcer) committed(pos kv.Position, adds bool) {
	a.s.watch.heard(pos)
	if adds {
		a.s.maint.kickFold()
	}
	a.mu.Lock()
	a.pending = max(a.pending, pos)
	a.adds = a.adds || adds
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// take returns the announcement to send, if any, and clears it.
func (a *announcer) take() (payload string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending == 0 {
		return "", false
	}
	payload = formatPosition(a.pending)
	if a.adds {
		payload += " a"
	}
	a.pending, a.adds = 0, false
	return payload, true
}

// run sends announcements, one at a time, until ctx ends; then it sends
// what is left, so that the last commits of a node that closes are heard.
func (a *announcer) run(ctx context.Context) {
	for {
		select {
		case <-a.kick:
			a.send(ctx)
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.Background(), time.Second)
			a.send(last)
			cancel()
			return
		}
	}
}

func (a *announcer) send(ctx context.Context) {
	payload, ok := a.take()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := a.s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, payload); err != nil && ctx.Err() == nil {
		a.s.log.Warn("announcing commits failed; other nodes will find them within a second", "position", payload, "err", err)
	}
}
