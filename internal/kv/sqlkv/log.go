package sqlkv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// lastCommitSQL computes, in one snapshot, the log horizon (every transaction
// below it has ended) and the newest commit below it: the newest position a
// log reader may rely on.
const lastCommitSQL = `SELECT pg_snapshot_xmin(s)::text, greatest(
		coalesce((SELECT max(x) FROM folio_log WHERE x < pg_snapshot_xmin(s)), '0'::xid8),
		(SELECT trimmed_commit FROM folio_meta))::text
	FROM pg_current_snapshot() AS s`

// ReadLog returns the change-log entries after position after, in position
// order, up to the horizon.
func (s *Store) ReadLog(ctx context.Context, after kv.Position, limit int) ([]kv.LogEntry, kv.Position, error) {
	if err := s.usable(); err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = defaultLogLimit
	}
	conn, err := s.acquire(ctx, "read log: get a connection", s.opts.AcquireTimeout)
	if err != nil {
		return nil, 0, err
	}
	defer s.releaseConn(conn)
	// One snapshot for the trim point, the horizon and the entries, so
	// that upTo never passes an entry the reader was not given.
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	b.Queue(`SELECT trimmed_entry::text, greatest(
			coalesce((SELECT max(x) FROM folio_log WHERE x < pg_snapshot_xmin(pg_current_snapshot())), '0'::xid8),
			trimmed_commit)::text
		FROM folio_meta`)
	// ORDER BY names the column: a bare x would sort by the text output.
	b.Queue(`SELECT l.x::text AS pos, l.rec FROM folio_log AS l
		WHERE l.x > $1::text::xid8 AND l.x < pg_snapshot_xmin(pg_current_snapshot()) AND l.rec IS NOT NULL
		ORDER BY l.x LIMIT $2`, formatPosition(after), limit)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, 0, s.fail("read log", err)
	}
	var trimmed, last string
	if err := br.QueryRow().Scan(&trimmed, &last); err != nil {
		return nil, 0, s.fail("read log", err)
	}
	if t := parsePosition(trimmed); after < t {
		return nil, 0, fmt.Errorf("%w: position %d is below the newest trimmed entry %d", kv.ErrLogTrimmed, after, t)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, 0, s.fail("read log", err)
	}
	var entries []kv.LogEntry
	for rows.Next() {
		var pos string
		var rec []byte
		if err := rows.Scan(&pos, &rec); err != nil {
			rows.Close()
			return nil, 0, s.fail("read log", err)
		}
		records, err := kv.DecodeLogRecords(rec)
		if err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("sqlkv: read log at %s: %w", pos, err)
		}
		entries = append(entries, kv.LogEntry{Pos: parsePosition(pos), Records: records})
	}
	if err := rows.Err(); err != nil {
		return nil, 0, s.fail("read log", err)
	}
	if _, err := br.Exec(); err != nil {
		return nil, 0, s.fail("read log", err)
	}
	if len(entries) == limit {
		return entries, entries[len(entries)-1].Pos, nil
	}
	return entries, max(after, parsePosition(last)), nil
}

// WaitLog blocks until a commit after position after is below the horizon,
// or ctx is done. It is woken by the commits' notifications.
func (s *Store) WaitLog(ctx context.Context, after kv.Position) error {
	return s.watch.wait(ctx, after)
}

// LastPosition is the newest commit below the horizon: every commit at or
// before it is visible.
func (s *Store) LastPosition(ctx context.Context) (kv.Position, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	conn, err := s.acquire(ctx, "read the last position: get a connection", s.opts.AcquireTimeout)
	if err != nil {
		return 0, err
	}
	defer s.releaseConn(conn)
	var h, last string
	if err := conn.QueryRow(ctx, lastCommitSQL).Scan(&h, &last); err != nil {
		return 0, s.fail("read the last position", err)
	}
	// Readers waiting for this position need not wait for an announcement.
	s.watch.learn(h, last)
	return parsePosition(last), nil
}

// LogBytes sums the sizes of the log rows' records in (after, upTo], and
// eight bytes a row for its position.
func (s *Store) LogBytes(ctx context.Context, after, upTo kv.Position) (int64, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	if upTo <= after {
		return 0, nil
	}
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(octet_length(rec) + 8), 0)::bigint FROM folio_log
		WHERE x > $1::text::xid8 AND x <= $2::text::xid8 AND rec IS NOT NULL`,
		formatPosition(after), formatPosition(upTo)).Scan(&n)
	if err != nil {
		return 0, s.fail("size of the log", err)
	}
	return n, nil
}

// TrimLog removes the log rows below position below (never above the
// horizon), and records what it removed so that readers behind it get
// kv.ErrLogTrimmed instead of a silent gap.
func (s *Store) TrimLog(ctx context.Context, below kv.Position) error {
	if err := s.usable(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `WITH gone AS (
			DELETE FROM folio_log WHERE x < least($1::text::xid8, pg_snapshot_xmin(pg_current_snapshot()))
			RETURNING x, rec IS NOT NULL AS entry)
		UPDATE folio_meta SET
			trimmed_entry = greatest(trimmed_entry, coalesce((SELECT max(x) FROM gone WHERE entry), '0'::xid8)),
			trimmed_commit = greatest(trimmed_commit, coalesce((SELECT max(x) FROM gone), '0'::xid8))`,
		formatPosition(below))
	if err != nil {
		return s.fail("trim log", err)
	}
	return nil
}

// watcher follows the commits of every node through LISTEN/NOTIFY and keeps
// the newest commit below the horizon, for WaitLog.
type watcher struct {
	s    *Store
	kick chan struct{} // a notification arrived: recompute

	mu       sync.Mutex
	last     kv.Position   // newest commit below the horizon
	horizon  kv.Position   // oldest running transaction id when last computed
	notified kv.Position   // newest position a notification announced
	waiting  int           // WaitLog callers waiting now
	changed  chan struct{} // closed and replaced when last grows
	closed   bool
}

func newWatcher(s *Store) *watcher {
	return &watcher{s: s, kick: make(chan struct{}, 1), changed: make(chan struct{})}
}

func (w *watcher) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// refresh recomputes the horizon and the newest commit below it.
func (w *watcher) refresh(ctx context.Context) error {
	var h, last string
	if err := w.s.pool.QueryRow(ctx, lastCommitSQL).Scan(&h, &last); err != nil {
		return err
	}
	w.learn(h, last)
	return nil
}

// learn takes in a horizon and a newest commit below it (lastCommitSQL's
// answer), waking the readers waiting for it.
func (w *watcher) learn(h, last string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.horizon = max(w.horizon, parsePosition(h)) // an answer may arrive after a newer one
	if l := parsePosition(last); l > w.last && !w.closed {
		w.last = l
		close(w.changed)
		w.changed = make(chan struct{})
	}
}

// lastPosition is the newest commit below the horizon when last computed.
func (w *watcher) lastPosition() kv.Position {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// behind tells whether a commit was announced that the horizon has not
// passed yet: some older transaction is still running.
func (w *watcher) behind() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notified >= w.horizon
}

// run recomputes after notifications. When an announced commit is still
// above the horizon, the transaction holding the horizon back may end
// without notifying (it need not be Folio's), so run checks again with a
// growing delay until the horizon passes. It also checks once a second
// when nothing was heard: a node that stopped right after a commit did not
// announce it.
func (w *watcher) run(ctx context.Context) {
	var delay time.Duration
	for {
		wait := delay
		if wait == 0 {
			wait = w.s.opts.unannouncedCheck
		}
		recheck := time.After(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-recheck:
		}
		if err := w.refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.s.log.Warn("log watcher: refresh failed", "err", err)
			delay = time.Second
			continue
		}
		if w.behind() {
			delay = min(max(2*delay, time.Millisecond), 250*time.Millisecond)
		} else {
			delay = 0
		}
	}
}

// listen holds a LISTEN connection, reconnecting when it breaks.
func (w *watcher) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for {
		err := w.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		w.s.log.Warn("log watcher: listen connection lost", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (w *watcher) listenOnce(ctx context.Context) error {
	cfg := w.s.pool.Config().ConnConfig.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) { w.notify(n.Payload) }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// Commits may have happened while nobody listened.
	w.poke()
	w.s.maint.kickFold()
	for {
		if err := conn.PgConn().WaitForNotification(ctx); err != nil {
			return err
		}
	}
}

// notify handles one commit's notification: "<position>", or
// "<position> a" when the commit added to counters.
func (w *watcher) notify(payload string) {
	pos, adds, _ := strings.Cut(payload, " ")
	if adds == "a" {
		w.s.maint.kickFold()
	}
	w.heard(parsePosition(pos))
}

// heard handles a commit at p, announced or made on this node. The horizon
// is recomputed only when a reader waits for it: under a stream of commits
// with nobody waiting (or a reader busy with what it read), a query per
// commit cost the kv layer a third of its commit rate. A reader that comes
// to wait then has it recomputed (wait).
func (w *watcher) heard(p kv.Position) {
	w.mu.Lock()
	w.notified = max(w.notified, p)
	waiting := w.waiting > 0
	w.mu.Unlock()
	if waiting {
		w.poke()
	}
}

func (w *watcher) wait(ctx context.Context, after kv.Position) error {
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return kv.ErrClosed
		}
		if w.last > after {
			w.mu.Unlock()
			return nil
		}
		ch := w.changed
		w.waiting++
		stale := w.notified > w.last // heard of commits while nobody waited
		w.mu.Unlock()
		if stale {
			w.poke()
		}
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = ctx.Err()
		}
		w.mu.Lock()
		w.waiting--
		w.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.changed)
	}
}
