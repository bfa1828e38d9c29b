// Package sqlkv is Folio's distributed storage backend: the kv interface on a
// PostgreSQL database, shared by any number of Folio nodes.
//
// # Tables
//
// The whole ordered key space is one table, folio_kv (k bytea PRIMARY KEY, v,
// wx, sx), where wx is the 64-bit id (xid8) of the transaction that last wrote
// the row and v IS NULL marks a tombstone. Counter additions are rows of
// folio_delta, summed into reads and folded into folio_kv in the background.
// folio_log has one row per committed writing transaction: its position and
// its change-log entry. See schema.go.
//
// # Transactions
//
// A kv transaction is at most two PostgreSQL transactions on one pooled
// connection, and costs one round trip per read plus one for the commit.
//
//  1. Begin does nothing on the server. The first read takes a connection
//     and opens a SERIALIZABLE READ ONLY DEFERRABLE transaction: a safe
//     snapshot (below), with no locks and no SSI bookkeeping once taken,
//     sent in the same round trip as the read
//     (the read version is fixed there, as FoundationDB fixes it at the
//     first read). Every read (Get, GetMany, Scan, snapshot reads alike)
//     runs in it, through kv.NewTx's read-your-writes overlay. Writes are
//     buffered in the process.
//  2. Commit ends the snapshot and, in the same round trip, runs one
//     SERIALIZABLE transaction that calls folio_apply: it validates the read
//     ranges against the snapshot — a row or counter delta in them whose wx is
//     not visible in the snapshot means another transaction wrote there after
//     we read, and the commit fails with SQLSTATE 40001 — then applies every
//     write with array parameters and inserts the folio_log row. A
//     transaction that read nothing is one PostgreSQL transaction, validated
//     against its own snapshot.
//  3. A read-only transaction's connection goes back to the pool after a
//     ROLLBACK that the caller does not wait for.
//
// Statements go through pgx's statement cache: each is prepared once per
// connection and then sent by name.
//
// Validation gives the kv contract the embedded backend has: a transaction
// conflicts with every transaction that committed after its snapshot and
// wrote into a range it read, phantoms and explicit conflict ranges included,
// while blind writes and snapshot reads conflict with nothing. PostgreSQL's
// SSI covers the remaining case, two commits running at the same moment: the
// validation's reads and the writes are in SERIALIZABLE transactions, so a
// cycle among them fails one with 40001. SSI tracks reads by index page, so
// it also fails commits that merely touched the same pages: a commit that
// PostgreSQL (rather than the validation) fails is sent again, up to
// maxCommitAttempts times, which is exact since the validation checks the
// same read snapshot each time. Serialization failures and deadlocks
// (40001, 40P01) that remain come back as kv.ErrConflict.
//
// # Read-only transactions
//
// SSI may serialize a commit before another that completed first: T1 read
// b and commits beside T2, which writes b; T1's validation ran on a
// snapshot without T2, so it passes, and SSI, seeing one rw-antidependency
// (T1 before T2), lets T1 commit after T2. That order is sound for T1 and
// T2, but a snapshot taken between the two commits holds T2 without T1,
// which precedes it: a read-only transaction reading there sees a state no
// serial order has (Fekete, O'Neil and O'Neil, "A read-only transaction
// anomaly under snapshot isolation", SIGMOD Record 2004; found here by the
// nemesis run, docs/testing.md). So the read snapshot is DEFERRABLE: when
// SERIALIZABLE commits are running as it is taken, PostgreSQL waits for
// them to end and takes another if one of them was serialized before a
// commit the snapshot holds. The wait is that of the commits running then,
// each one statement on the server (TestReadOnlyNeverSeesALaterCommitWithoutAnEarlier
// forces the interleaving). A read-write transaction needs no more: its
// commit validates its reads.
//
// # Counters
//
// Add inserts a delta row, which no concurrent writer can collide with, so
// adds never conflict. A key's value is its stored value plus its deltas
// newer (by transaction id) than the key's last Set or Clear, whose id the
// row keeps in sx: a Set retires older deltas without reading them, and a
// delta from a transaction that ran alongside the Set counts or not by the
// same order as the positions. The maintainer (maintenance.go) folds deltas
// into folio_kv in the background under row locks.
//
// # Positions and the change log
//
// A commit's position is its transaction id (pg_current_xact_id, a 64-bit
// counter that never wraps). Ids are handed out in order and a transaction
// that saw another's writes always has the larger id, so position order is a
// valid commit order. Ids are not handed out in the order commits complete,
// though: the log is read only below the horizon pg_snapshot_xmin of the
// current snapshot, the oldest transaction id still running, below which
// every transaction has ended and no new entry can appear. That is what lets a
// reader that has seen position p rely on having seen everything before p,
// with no sequencer and no shared counter row: Commit knows its position at
// once. Commits are announced on a LISTEN/NOTIFY channel after they end
// (announce.go), a burst of them once; a watcher per store recomputes the
// horizon and wakes WaitLog callers, and checks once a second even when
// nothing was announced.
//
// A transaction that holds an id for long (in any database of the cluster)
// holds the horizon back, and with it the log readers, but not commits.
//
// One case where position order and the serialization order may differ:
// two commits running at the same moment, where one read a range the other
// wrote into without the other reading anything the first wrote. SSI lets
// both commit, ordering the reader first, while the ids may say otherwise.
// Their writes are then disjoint (overlapping writes conflict), so replaying
// the log in position order still gives the stored state; but a snapshot
// taken between the two commits may see the writer without the reader. The
// embedded backend rejects the reader instead. Closing this would take a
// shared serialization point, the bottleneck this design avoids.
package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a Store. Only URL is required.
type Options struct {
	// URL is the PostgreSQL connection string (postgres://user:pass@host/db
	// or the keyword=value form); pgx's parameters apply (sslmode,
	// pool_max_conns, ...).
	URL string
	// Limits on key, value and transaction sizes. MaxKeySize defaults to
	// DefaultMaxKeySize here: PostgreSQL's B-tree refuses longer keys.
	Limits kv.Limits
	// MaxTxAge bounds how long a transaction may stay open: it holds a
	// connection and a snapshot. Older transactions fail with
	// kv.ErrTxTooOld and are reclaimed. Tombstones are kept this long (plus
	// a margin) after they are written, so every node sharing a database
	// must use the same value. Default 10 minutes.
	MaxTxAge time.Duration
	// MaxConns is the size of the connection pool. Every open transaction
	// holds one connection. Default: the URL's pool_max_conns, else 32.
	MaxConns int32
	// AcquireTimeout bounds how long Begin (and a log read) waits for a
	// pooled connection, connecting included; then it fails with
	// kv.ErrBusy if every connection was in use, kv.ErrUnavailable if the
	// server could not be reached. Default 2s.
	AcquireTimeout time.Duration
	// FoldDelay is how long after a commit that added to counters the
	// deltas are folded. Default 100ms.
	FoldDelay time.Duration
	// Logger receives the store's operational messages. Default: discard.
	Logger *slog.Logger

	// tracer sees every statement the pool's connections send (tests count
	// round trips with it).
	tracer pgx.QueryTracer

	// tombstoneMargin is added to MaxTxAge before tombstones go: room for a
	// commit that was checked for age and is still on its way. Tests shorten
	// it.
	tombstoneMargin time.Duration
	// unannouncedCheck is how often the watcher looks for commits that were
	// not announced (default a second). Tests lengthen it, to see that
	// announcements alone wake the other nodes.
	unannouncedCheck time.Duration
}

// Defaults.
const (
	DefaultMaxKeySize     = 2048
	DefaultMaxTxAge       = 10 * time.Minute
	DefaultMaxConns       = 32
	DefaultAcquireTimeout = 2 * time.Second
	// pingTimeout bounds Ping, connection and round trip each.
	pingTimeout      = time.Second
	DefaultFoldDelay = 100 * time.Millisecond
	defaultLogLimit  = 1000
)

// Store is an open PostgreSQL-backed store. It implements kv.Store.
type Store struct {
	pool   *pgxpool.Pool
	opts   Options
	limits kv.Limits
	log    *slog.Logger
	where  string // the URL without password, for errors

	mu        sync.Mutex
	closed    bool
	inflight  sync.WaitGroup // commits that passed the closed check
	releasing sync.WaitGroup // connections being given back after their transaction

	roundTrips *roundTripCounter
	// commitRetries counts commits tried again after a serialization
	// failure of PostgreSQL's own (Stats).
	commitRetries atomic.Int64
	txs           *kv.Tracker    // open transactions, reclaimed when too old
	counters      *kv.TxCounters // their outcomes (Stats)

	watch    *watcher
	maint    *maintainer
	announce *announcer
	// counterKeys are the counter keys known to be in folio_counter.
	counterKeys knownCounters
	stop        context.CancelFunc
	wg          sync.WaitGroup
}

var _ kv.Store = (*Store)(nil)

// Open connects to the database in opts.URL, creates Folio's tables there if
// they are missing, and starts the store's background work.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.URL == "" {
		return nil, errors.New("sqlkv: no database URL given")
	}
	where := redact(opts.URL)
	if opts.Limits.MaxKeySize <= 0 {
		opts.Limits.MaxKeySize = DefaultMaxKeySize
	}
	if opts.MaxTxAge <= 0 {
		opts.MaxTxAge = DefaultMaxTxAge
	}
	if opts.FoldDelay <= 0 {
		opts.FoldDelay = DefaultFoldDelay
	}
	if opts.AcquireTimeout <= 0 {
		opts.AcquireTimeout = DefaultAcquireTimeout
	}
	if opts.tombstoneMargin <= 0 {
		opts.tombstoneMargin = time.Minute
	}
	if opts.unannouncedCheck <= 0 {
		opts.unannouncedCheck = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("sqlkv: parse database URL %s: %w", where, err)
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(opts.URL, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	// Everything but commits runs single statements or read-only
	// snapshots: READ COMMITTED whatever the database's default, so that
	// log reads and maintenance never take part in SSI. Commits ask for
	// SERIALIZABLE themselves.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	roundTrips := &roundTripCounter{next: opts.tracer}
	cfg.ConnConfig.Tracer = roundTrips
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "folio"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sqlkv: connect to %s: %w", where, err)
	}
	if err := prepare(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("sqlkv: open %s: %w", where, err)
	}
	s := &Store{
		pool:   pool,
		opts:   opts,
		limits: opts.Limits.WithDefaults(),
		log:    opts.Logger,
		where:  where,

		counters:   kv.NewTxCounters(),
		roundTrips: roundTrips,
	}
	bg, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.maint = newMaintainer(s)
	s.watch = newWatcher(s)
	s.announce = newAnnouncer(s)
	if err := s.watch.refresh(ctx); err != nil {
		stop()
		pool.Close()
		return nil, fmt.Errorf("sqlkv: open %s: read the log horizon: %w", where, err)
	}
	// An abandoned transaction would hold a connection and a snapshot
	// (which holds back VACUUM) forever.
	s.txs = kv.NewTracker(opts.MaxTxAge, s.log)
	s.wg.Add(4)
	go func() { defer s.wg.Done(); s.announce.run(bg) }()
	go func() { defer s.wg.Done(); s.watch.listen(bg) }()
	go func() { defer s.wg.Done(); s.watch.run(bg) }()
	go func() { defer s.wg.Done(); s.maint.run(bg) }()
	s.log.Info("postgres store opened", "url", where)
	return s, nil
}

// prepare checks the server, creates the schema if needed and checks the
// role's privileges, on one connection.
func prepare(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return fmt.Errorf("read the server version: %w", err)
	}
	if version < 130000 {
		return fmt.Errorf("PostgreSQL %d.%d is too old: the postgres backend needs 13 or newer (xid8, pg_current_snapshot)",
			version/10000, version%10000)
	}
	if err := ensureSchema(ctx, conn.Conn()); err != nil {
		return err
	}
	return checkPrivileges(ctx, conn.Conn())
}

// Begin starts a transaction. It takes no connection and makes no round
// trip: the first read opens the transaction's snapshot (and a commit
// without reads needs none).
func (s *Store) Begin(ctx context.Context) (kv.Tx, error) {
	started := time.Now()
	t := &backendTx{s: s, started: started}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, kv.ErrClosed
	}
	s.txs.Add(t, started)
	s.mu.Unlock()
	return kv.NewTx(t, s.limits, s.counters), nil
}

// acquire takes a pooled connection, waiting at most wait: a request must
// never wait unboundedly for one, however long other transactions hold
// theirs. Past wait it fails with kv.ErrBusy when every connection was in
// use, and with kv.ErrUnavailable when one was being opened and the
// server did not answer.
func (s *Store) acquire(ctx context.Context, doing string, wait time.Duration) (*pgxpool.Conn, error) {
	waitCtx, cancel := context.WithTimeoutCause(ctx, wait, errAcquireWait)
	defer cancel()
	conn, err := s.pool.Acquire(waitCtx)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(waitCtx), errAcquireWait) {
		if st := s.pool.Stat(); st.AcquiredConns() >= st.MaxConns() {
			return nil, fmt.Errorf("sqlkv: %s: %w within %s (all %d in use)", doing, kv.ErrBusy, wait, st.MaxConns())
		}
		return nil, fmt.Errorf("sqlkv: %s: %w: no connection to %s within %s", doing, kv.ErrUnavailable, s.where, wait)
	}
	return nil, s.fail(doing, err)
}

var errAcquireWait = errors.New("sqlkv: waited too long for a connection")

// MaxConns is the size of the connection pool: nodes bound what may hold
// connections for long (interactive transactions, streaming reads) below it.
func (s *Store) MaxConns() int { return int(s.pool.Stat().MaxConns()) }

// Ping checks that a pooled connection answers a trivial statement, each
// step within a second.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.usable(); err != nil {
		return err
	}
	conn, err := s.acquire(ctx, "ping: get a connection", pingTimeout)
	if err != nil {
		return err
	}
	defer s.releaseConn(conn)
	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := conn.Ping(pingCtx); err != nil {
		if ctx.Err() == nil && pingCtx.Err() != nil {
			return fmt.Errorf("sqlkv: ping %s: %w: no answer within %s", s.where, kv.ErrUnavailable, pingTimeout)
		}
		return s.fail("ping", err)
	}
	return nil
}

func (s *Store) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return kv.ErrClosed
	}
	return nil
}

// releaseConnLater is releaseConn without waiting for the ROLLBACK of a
// read snapshot: a read-only request answers one round trip sooner. Once
// the store is closing it releases at once, so that Close can wait for the
// ones under way.
func (s *Store) releaseConnLater(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' || conn.Conn().IsClosed() {
		conn.Release()
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.releaseConn(conn)
		return
	}
	s.releasing.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.releasing.Done()
		s.releaseConn(conn)
	}()
}

// releaseConn returns a connection to the pool, ending whatever transaction
// it is in first (the pool would close it otherwise).
func (s *Store) releaseConn(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' && !conn.Conn().IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
	conn.Release()
}

// Close ends open transactions, waits for in-flight commits, stops the
// background work and closes the connection pool.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// No Begin registers a transaction once closed is set.
	s.txs.ExpireAll(kv.ErrClosed)
	s.inflight.Wait()
	s.releasing.Wait()
	s.stop()
	s.wg.Wait()
	s.txs.Stop()
	s.watch.close()
	s.pool.Close()
	return nil
}

// fail wraps a database error with what was being done and where, mapping
// serialization failures and deadlocks to kv.ErrConflict.
func (s *Store) fail(doing string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && isConflict(err) {
		return fmt.Errorf("%w: %s", kv.ErrConflict, pgErr.Message)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlkv: %s: %w", doing, err)
	}
	if unreachable(err) {
		return fmt.Errorf("sqlkv: %s on %s: %w: %w", doing, s.where, kv.ErrUnavailable, err)
	}
	return fmt.Errorf("sqlkv: %s on %s: %w", doing, s.where, err)
}

// unreachable tells whether err says that the server could not be reached,
// or that the connection to it was lost, rather than that a statement
// failed: trying again later may work. A statement's own errors (a
// constraint, a bad query, a refused login, a missing database) are not:
// they would fail again.
func unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		case "53300": // too_many_connections
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection_exception
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return !dnsErr.IsNotFound // a host name that does not exist is a mistake
	}
	// Dial, read and write failures; a TLS alert from the server (a
	// refused certificate) is an answer, not a lost connection.
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op != "remote error" {
		return true
	}
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED)
}

// parsePosition reads an xid8 printed as text.
func parsePosition(s string) kv.Position {
	n, _ := strconv.ParseUint(s, 10, 64)
	return kv.Position(n)
}

func formatPosition(p kv.Position) string { return strconv.FormatUint(uint64(p), 10) }

var passwordParam = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redact returns the connection string without its password, fit for
// errors and logs.
func redact(conn string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "redacted")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return passwordParam.ReplaceAllString(conn, "${1}redacted")
}
