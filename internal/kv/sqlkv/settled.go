package sqlkv

import (
	"context"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// SettledPosition returns the position of the newest commit visible now,
// once the log's horizon has passed it: a position at or past every commit
// acknowledged before the call, which log readers can reach. LastPosition
// alone may be below such a commit, since it stops at the horizon, below
// every transaction still open (an older transaction in the cluster holds
// it back). So a caller that must see its clients' acknowledged writes
// through the log (a search reading its own writes) waits here, until ctx
// is done, for the transactions older than those commits to end.
func (s *Store) SettledPosition(ctx context.Context) (kv.Position, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	conn, err := s.acquire(ctx, "read the newest commit: get a connection", s.opts.AcquireTimeout)
	if err != nil {
		return 0, err
	}
	var newest string
	// A statement sees the rows of every transaction committed before it
	// began, those above the horizon included.
	err = conn.QueryRow(ctx, `SELECT coalesce(max(x), '0'::xid8)::text FROM folio_log`).Scan(&newest)
	s.releaseConn(conn)
	if err != nil {
		return 0, s.fail("read the newest commit", err)
	}
	target := parsePosition(newest)
	delay := time.Millisecond
	for {
		last, err := s.LastPosition(ctx)
		if err != nil || last >= target {
			return target, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 20*time.Millisecond)
	}
}
