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

// run sends announcements, one at a time, until ctx ends; then it sends
// what is left, so that the last commits of a node that closes are heard.
// A send that fails is tried again (merged with what came meanwhile):
// nodes of an older version have no periodic check and rely on it.
func (a *announcer) run(ctx context.Context) {
	retry := time.Duration(0)
	for {
		var again <-chan time.Time
		if retry > 0 {
			again = time.After(retry)
		}
		select {
		case <-a.kick:
		case <-again:
		case <-ctx.Done():
			a.send()
			return
		}
		if a.send() {
			retry = 0
		} else {
			retry = min(max(2*retry, 100*time.Millisecond), 5*time.Second)
		}
	}
}

// send sends the pending announcement, if any, and tells whether it went
// (or there was none). Its context is not the store's, which Close
// cancels before the last send; a payload that failed goes back to
// pending.
func (a *announcer) send() bool {
	a.mu.Lock()
	pos, adds := a.pending, a.adds
	a.pending, a.adds = 0, false
	a.mu.Unlock()
	if pos == 0 {
		return true
	}
	payload := formatPosition(pos)
	if adds {
		payload += " a"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := a.s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", notifyChannel, payload); err != nil {
		a.s.log.Warn("announcing commits failed; will retry (nodes of this version also find them within a second)", "position", payload, "err", err)
		a.mu.Lock()
		a.pending = max(a.pending, pos)
		a.adds = a.adds || adds
		a.mu.Unlock()
		return false
	}
	return true
}
