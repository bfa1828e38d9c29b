// Package session keeps the interactive transactions that clients hold
// across requests: begun by one request, used by later ones that carry its
// id, ended by commit or rollback, or reclaimed when idle or too old.
package session

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
)

// Defaults of Options.
const (
	DefaultIdleTimeout = 2 * time.Minute
	DefaultMaxLifetime = 10 * time.Minute
)

// Options configure a Manager.
type Options struct {
	// Origin is this node's identity, handed to clients with each
	// transaction so that they (or a proxy) come back to this node.
	Origin string
	// IdleTimeout: a transaction with no request for this long is rolled
	// back. MaxLifetime: a transaction older than this is rolled back.
	IdleTimeout, MaxLifetime time.Duration
	// MaxOpen bounds the transactions open at once; 0 or less: unlimited.
	// Each holds a storage connection for as long as its client keeps it
	// open, so a node keeps the bound below its store's connections: a
	// begin beyond it is answered UNAVAILABLE at once, rather than letting
	// forgotten transactions starve every other request.
	MaxOpen int
	Logger  *slog.Logger
}

// Manager is the table of open transactions.
type Manager struct {
	store kv.Store
	opts  Options

	mu       sync.Mutex
	sessions map[string]*Session
	opening  int  // begins between their check of MaxOpen and their entry in sessions
	closed   bool // no more transactions begin
	started  bool // the sweeper runs

	// How transactions ended, for Stats.
	committed, aborted, rolledBack, expired atomic.Uint64

	stop chan struct{}
	done chan struct{}
}

// Session is one client transaction. Requests on it run one at a time.
type Session struct {
	ID     string
	DB     string
	Origin string
	// Owner is who began it (the caller's application, in its
	// namespace): nobody else may use it.
	Owner   string
	created time.Time

	turn     chan struct{} // a one-slot semaphore: whoever holds it may use tx
	tx       kv.Tx
	lastUsed time.Time // guarded by turn
	ended    bool      // guarded by turn
	failed   error     // a write failed midway: the transaction can only roll back
}

// Errors of the reference (§2) for transactions that are not there.
var (
	errGone     = &apierror.Error{Code: apierror.Internal, Message: "session is gone"}
	errNotFound = &apierror.Error{Code: apierror.NotFound, Message: "session not found"}
	// Folio's: a transaction is its owner's alone.
	errNotOwner = &apierror.Error{Code: apierror.PermissionDenied, Message: "the transaction was begun by another application: only it may use the transaction"}
)

// New returns a Manager; Start starts its sweeper, which rolls back the
// transactions that expire.
func New(store kv.Store, opts Options) *Manager {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxLifetime <= 0 {
		opts.MaxLifetime = DefaultMaxLifetime
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{store: store, opts: opts, sessions: map[string]*Session{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// Start starts the sweeper. Transactions may begin before it, but none
// expires until it runs.
func (m *Manager) Start(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return nil
	}
	m.started = true
	go m.sweep()
	return nil
}

// Origin is this node's identity.
func (m *Manager) Origin() string { return m.opts.Origin }

// MaxLifetime is the longest a transaction stays open.
func (m *Manager) MaxLifetime() time.Duration { return m.opts.MaxLifetime }

// Begin opens a transaction bound to database db and to its owner.
func (m *Manager) Begin(ctx context.Context, db, owner string) (*Session, error) {
	if err := m.reserve(); err != nil {
		return nil, err
	}
	tx, err := m.store.Begin(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opening--
	if err != nil {
		return nil, err
	}
	if m.closed {
		tx.Rollback()
		return nil, errClosed
	}
	now := time.Now()
	s := &Session{ID: newID(), DB: db, Origin: m.opts.Origin, Owner: owner, created: now, lastUsed: now, tx: tx, turn: make(chan struct{}, 1)}
	m.sessions[s.ID] = s
	return s, nil
}

// tooManyRetryDelay is the retry advice sent with a begin refused for
// MaxOpen: transactions end within seconds when their clients are well.
const tooManyRetryDelay = time.Second

// reserve counts a begin against MaxOpen, or refuses it.
func (m *Manager) reserve() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errClosed
	}
	if m.opts.MaxOpen > 0 && len(m.sessions)+m.opening >= m.opts.MaxOpen {
		return &apierror.Error{Code: apierror.Unavailable, RetryDelay: tooManyRetryDelay, Message: fmt.Sprintf(
			"this node has too many open transactions (the limit is %d): commit or roll back those you hold, or retry later", m.opts.MaxOpen)}
	}
	m.opening++
	return nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // a version 4 UUID, as the original handed out
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Run runs fn, for owner, in the transaction id, bound to database db, after the
// requests on it that came first. A request that fails after it wrote
// something leaves the transaction failed: how much of the request was
// applied is unknown, so the transaction may only be rolled back (a commit
// answers ABORTED). One that failed before writing (a bad document, a
// missing collection, any read) leaves it as it was: what fn wrote, not
// what it was meant to do, decides.
func (m *Manager) Run(ctx context.Context, id, owner, db string, fn func(tx kv.Tx) error) error {
	s, err := m.acquire(ctx, id, owner)
	if err != nil {
		return err
	}
	defer s.release()
	if s.DB != db {
		return &WrongDatabaseError{ID: id, Bound: s.DB, Asked: db}
	}
	if s.failed != nil {
		return s.failed
	}
	tracked := &writeTracker{Tx: s.tx}
	err = fn(tracked)
	if err != nil && tracked.wrote {
		s.failed = &apierror.Error{Code: apierror.Aborted, Message: fmt.Sprintf("transaction aborted: an earlier request in it failed (%v); roll it back", err)}
	}
	return err
}

// WrongDatabaseError is Run's error for a request on another database than
// its transaction's: the caller, which knows what the names stand for,
// says it in the API's words.
type WrongDatabaseError struct {
	ID           string
	Bound, Asked string // the transaction's database and the request's
}

func (e *WrongDatabaseError) Error() string {
	return fmt.Sprintf("transaction %s belongs to database '%s', not '%s'", e.ID, e.Bound, e.Asked)
}

// Commit commits owner's transaction and forgets it, whatever the outcome.
func (m *Manager) Commit(ctx context.Context, id, owner string) error {
	s, err := m.end(ctx, id, owner)
	if err != nil {
		return err
	}
	defer s.release()
	if s.failed != nil {
		s.tx.Rollback()
		m.aborted.Add(1)
		return s.failed
	}
	if _, err = s.tx.Commit(ctx); err != nil {
		m.aborted.Add(1)
		return err
	}
	m.committed.Add(1)
	return nil
}

// Rollback discards owner's transaction and forgets it.
func (m *Manager) Rollback(ctx context.Context, id, owner string) error {
	s, err := m.end(ctx, id, owner)
	if err != nil {
		return err
	}
	defer s.release()
	s.tx.Rollback()
	m.rolledBack.Add(1)
	return nil
}

// end takes the transaction's turn and removes it from the table.
func (m *Manager) end(ctx context.Context, id, owner string) (*Session, error) {
	s, err := m.acquire(ctx, id, owner)
	if err != nil {
		if err == errGone {
			return nil, errNotFound
		}
		return nil, err
	}
	s.ended = true
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
	return s, nil
}

// acquire finds a live session of owner's and waits for its turn.
func (m *Manager) acquire(ctx context.Context, id, owner string) (*Session, error) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if !ok {
		return nil, errGone
	}
	if s.Owner != owner {
		return nil, errNotOwner
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.ended { // ended while we waited
		<-s.turn
		return nil, errGone
	}
	return s, nil
}

func (s *Session) release() {
	s.lastUsed = time.Now()
	<-s.turn
}

// Len is the number of open transactions.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// Stats is a snapshot of the interactive transactions, for monitoring.
type Stats struct {
	// Open is the transactions open now; OldestAge the age of the oldest
	// of them (zero when none is open).
	Open      int
	OldestAge time.Duration
	// Committed, Aborted (a commit that failed: a conflict, or a
	// transaction an earlier request left failed), RolledBack (by their
	// clients) and Expired (idle or too old, rolled back by the sweeper)
	// count how transactions ended since the node started.
	Committed, Aborted, RolledBack, Expired uint64
}

// Stats reports the open transactions and how many ended each way.
func (m *Manager) Stats() Stats {
	now := time.Now()
	st := Stats{Committed: m.committed.Load(), Aborted: m.aborted.Load(), RolledBack: m.rolledBack.Load(), Expired: m.expired.Load()}
	m.mu.Lock()
	defer m.mu.Unlock()
	st.Open = len(m.sessions)
	for _, s := range m.sessions {
		st.OldestAge = max(st.OldestAge, now.Sub(s.created))
	}
	return st
}

// sweep rolls back transactions that are idle or too old.
func (m *Manager) sweep() {
	defer close(m.done)
	every := min(m.opts.IdleTimeout, m.opts.MaxLifetime) / 4
	every = max(min(every, 5*time.Second), 10*time.Millisecond)
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-ticker.C:
			m.mu.Lock()
			candidates := make([]*Session, 0)
			for _, s := range m.sessions {
				candidates = append(candidates, s)
			}
			m.mu.Unlock()
			for _, s := range candidates {
				m.reclaim(s, now)
			}
		}
	}
}

// reclaim rolls s back if it is idle or too old. A session busy with a
// request is left for the next sweep (unless past its lifetime: the store's
// own age limit then fails the request).
func (m *Manager) reclaim(s *Session, now time.Time) {
	select {
	case s.turn <- struct{}{}:
	default:
		return
	}
	defer func() { <-s.turn }()
	if s.ended {
		return
	}
	idle, age := now.Sub(s.lastUsed), now.Sub(s.created)
	if idle < m.opts.IdleTimeout && age < m.opts.MaxLifetime {
		return
	}
	s.ended = true
	s.tx.Rollback()
	m.mu.Lock()
	delete(m.sessions, s.ID)
	m.mu.Unlock()
	m.expired.Add(1)
	m.opts.Logger.Info("transaction rolled back: expired", "id", s.ID, "db", s.DB,
		"idle", idle.Round(time.Millisecond), "age", age.Round(time.Millisecond))
}

// errClosed answers a begin after Close: the node is shutting down.
var errClosed = &apierror.Error{Code: apierror.Unavailable, Message: "the server is shutting down: begin the transaction again on another node or after the restart"}

// Close stops the sweeper and rolls back every open transaction. Later
// begins fail; calling it again does nothing.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	started := m.started
	m.mu.Unlock()
	close(m.stop)
	if started {
		<-m.done
	}
	m.mu.Lock()
	open := m.sessions
	m.sessions = map[string]*Session{}
	m.mu.Unlock()
	for _, s := range open {
		s.turn <- struct{}{}
		s.ended = true
		s.tx.Rollback()
		<-s.turn
	}
	return nil
}

// writeTracker notes whether a request wrote into the transaction. A write
// the transaction refused (a key too large, a reserved key) changed
// nothing, so only a write that succeeded counts.
type writeTracker struct {
	kv.Tx
	wrote bool
}

func (w *writeTracker) note(err error) error {
	if err == nil {
		w.wrote = true
	}
	return err
}

func (w *writeTracker) Set(key, value []byte) error { return w.note(w.Tx.Set(key, value)) }
func (w *writeTracker) Clear(key []byte) error      { return w.note(w.Tx.Clear(key)) }
func (w *writeTracker) ClearRange(r kv.Range) error { return w.note(w.Tx.ClearRange(r)) }
func (w *writeTracker) Add(key []byte, delta int64) error {
	return w.note(w.Tx.Add(key, delta))
}
func (w *writeTracker) AppendLog(record []byte) error { return w.note(w.Tx.AppendLog(record)) }
