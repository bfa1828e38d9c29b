package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

var bg = context.Background()

// newManager returns a manager on a fresh embedded store (sessions do not
// depend on the backend), closed when the test ends.
func newManager(t *testing.T, opts Options) (*Manager, kv.Store) {
	t.Helper()
	store := backendtest.OpenPebble(t)
	m := New(store, opts)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, store
}

func begin(t *testing.T, m *Manager, db string) *Session {
	t.Helper()
	s, err := m.Begin(bg, db, owner)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	return s
}

// set runs a request that writes key = value.
func set(t *testing.T, m *Manager, s *Session, key, value string) {
	t.Helper()
	if err := m.Run(bg, s.ID, owner, s.DB, func(tx kv.Tx) error { return tx.Set([]byte(key), []byte(value)) }); err != nil {
		t.Fatalf("set %s in %s: %v", key, s.ID, err)
	}
}

// committed reads key in a new store transaction: what others see.
func committed(t *testing.T, store kv.Store, key string) (string, bool) {
	t.Helper()
	tx, err := store.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	v, err := tx.Get(bg, []byte(key))
	if errors.Is(err, kv.ErrNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(v), true
}

// txOf hands out the store transaction behind a session, so that a test can
// tell whether it was rolled back.
func txOf(t *testing.T, m *Manager, s *Session) kv.Tx {
	t.Helper()
	var inner kv.Tx
	if err := m.Run(bg, s.ID, owner, s.DB, func(tx kv.Tx) error { inner = tx; return nil }); err != nil {
		t.Fatalf("run: %v", err)
	}
	return inner
}

// wantEnded checks that the store transaction was rolled back.
func wantEnded(t *testing.T, tx kv.Tx) {
	t.Helper()
	if _, err := tx.Get(bg, []byte("any")); !errors.Is(err, kv.ErrTxDone) {
		t.Fatalf("the transaction is still usable (get: %v), want rolled back", err)
	}
}

// wantCode checks that err carries the API code.
func wantCode(t *testing.T, what string, err error, code apierror.Code) {
	t.Helper()
	if got := apierror.CodeOf(err); got != code {
		t.Fatalf("%s: %v (code %s), want code %s", what, err, got, code)
	}
}

// wantGone checks the answers for a transaction that is not there: requests
// get INTERNAL "session is gone", commit and rollback NOT_FOUND.
func wantGone(t *testing.T, m *Manager, s *Session) {
	t.Helper()
	called := false
	err := m.Run(bg, s.ID, owner, s.DB, func(kv.Tx) error { called = true; return nil })
	wantCode(t, "request", err, apierror.Internal)
	if called {
		t.Fatal("a request ran in a transaction that is gone")
	}
	wantCode(t, "commit", m.Commit(bg, s.ID, owner), apierror.NotFound)
	wantCode(t, "rollback", m.Rollback(bg, s.ID, owner), apierror.NotFound)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCommitAndRollback(t *testing.T) {
	m, store := newManager(t, Options{Origin: "node-1"})
	s := begin(t, m, "db")
	if s.Origin != "node-1" || m.Origin() != "node-1" {
		t.Fatalf("origin %q, manager %q, want node-1", s.Origin, m.Origin())
	}
	set(t, m, s, "a", "1")
	if _, ok := committed(t, store, "a"); ok {
		t.Fatal("a write is visible before commit")
	}
	if err := m.Commit(bg, s.ID, owner); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if v, _ := committed(t, store, "a"); v != "1" {
		t.Fatalf("a = %q after commit", v)
	}
	wantGone(t, m, s)

	r := begin(t, m, "db")
	set(t, m, r, "b", "2")
	if err := m.Rollback(bg, r.ID, owner); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if _, ok := committed(t, store, "b"); ok {
		t.Fatal("a rolled back write is visible")
	}
	wantGone(t, m, r)
	wantGone(t, m, &Session{ID: "no-such-id", DB: "db"})
	if m.Len() != 0 {
		t.Fatalf("Len = %d", m.Len())
	}
}

// TestFailedRequest: what a failed request did, not what it failed at,
// decides whether the transaction may still commit.
func TestFailedRequest(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		fn       func(tx kv.Tx) error
		poisoned bool
	}{
		{"failed before anything", func(kv.Tx) error { return boom }, false},
		{"failed after reading", func(tx kv.Tx) error {
			tx.Get(bg, []byte("a"))
			it := tx.Scan(bg, kv.Range{}, kv.ScanOptions{})
			for it.Next() {
			}
			it.Close()
			return boom
		}, false},
		{"failed after Set", func(tx kv.Tx) error { tx.Set([]byte("x"), []byte("1")); return boom }, true},
		{"failed after Clear", func(tx kv.Tx) error { tx.Clear([]byte("a")); return boom }, true},
		{"failed after ClearRange", func(tx kv.Tx) error { tx.ClearRange(kv.Range{}); return boom }, true},
		{"failed after Add", func(tx kv.Tx) error { tx.Add([]byte("n"), 1); return boom }, true},
		{"failed after AppendLog", func(tx kv.Tx) error { tx.AppendLog([]byte("r")); return boom }, true},
		{"wrote and succeeded", func(tx kv.Tx) error { return tx.Set([]byte("x"), []byte("1")) }, false},
		// A write the transaction refused changed nothing.
		{"failed after a refused write", func(tx kv.Tx) error {
			if err := tx.Set([]byte{0xFF, 'r'}, []byte("1")); err == nil {
				t.Error("a write of a reserved key succeeded")
			}
			return boom
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, store := newManager(t, Options{})
			s := begin(t, m, "db")
			set(t, m, s, "a", "before")
			runErr := m.Run(bg, s.ID, owner, "db", tc.fn)
			if !tc.poisoned {
				if runErr != nil && !errors.Is(runErr, boom) {
					t.Fatalf("request: %v, want its own outcome", runErr)
				}
				set(t, m, s, "after", "1")
				if err := m.Commit(bg, s.ID, owner); err != nil {
					t.Fatalf("commit after a request that wrote nothing and failed: %v", err)
				}
				if v, _ := committed(t, store, "after"); v != "1" {
					t.Fatal("the commit lost the transaction's writes")
				}
				return
			}
			if runErr == nil {
				t.Fatal("the failing request succeeded")
			}
			// Later requests and the commit answer ABORTED, and nothing of
			// the transaction is applied.
			called := false
			err := m.Run(bg, s.ID, owner, "db", func(kv.Tx) error { called = true; return nil })
			wantCode(t, "request after the failure", err, apierror.Aborted)
			if called {
				t.Fatal("a request ran in a transaction that may only roll back")
			}
			wantCode(t, "commit", m.Commit(bg, s.ID, owner), apierror.Aborted)
			if _, ok := committed(t, store, "a"); ok {
				t.Fatal("a transaction that may only roll back was committed")
			}
			wantGone(t, m, s) // the commit ended it
		})
	}
}

func TestDatabaseBinding(t *testing.T) {
	m, store := newManager(t, Options{})
	s := begin(t, m, "db1")
	if s.DB != "db1" {
		t.Fatalf("DB = %q", s.DB)
	}
	called := false
	err := m.Run(bg, s.ID, owner, "db2", func(kv.Tx) error { called = true; return nil })
	var wrong *WrongDatabaseError
	if !errors.As(err, &wrong) || wrong.Bound != "db1" || wrong.Asked != "db2" {
		t.Fatalf("request on another database: %v, want a WrongDatabaseError from db1 to db2", err)
	}
	if called {
		t.Fatal("a request ran in a transaction of another database")
	}
	// The refused request leaves the transaction as it was.
	set(t, m, s, "a", "1")
	if err := m.Commit(bg, s.ID, owner); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if v, _ := committed(t, store, "a"); v != "1" {
		t.Fatal("the commit lost the write")
	}
}

func TestSweeperIdleTimeout(t *testing.T) {
	m, store := newManager(t, Options{IdleTimeout: 50 * time.Millisecond, MaxLifetime: time.Hour})
	s := begin(t, m, "db")
	set(t, m, s, "a", "1")
	tx := txOf(t, m, s)
	eventually(t, "reclaiming the idle transaction", func() bool { return m.Len() == 0 })
	wantEnded(t, tx)
	wantGone(t, m, s)
	if _, ok := committed(t, store, "a"); ok {
		t.Fatal("an expired transaction's write is visible")
	}
}

func TestSweeperMaxLifetime(t *testing.T) {
	const lifetime = 150 * time.Millisecond
	m, _ := newManager(t, Options{IdleTimeout: time.Hour, MaxLifetime: lifetime})
	s := begin(t, m, "db")
	tx := txOf(t, m, s)
	// Requests keep it from being idle, but not from growing old.
	deadline := time.Now().Add(10 * time.Second)
	for m.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("a transaction in use was never reclaimed for its age")
		}
		err := m.Run(bg, s.ID, owner, "db", func(kv.Tx) error { return nil })
		if err != nil {
			wantCode(t, "request on an expired transaction", err, apierror.Internal)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if age := time.Since(s.created); age < lifetime {
		t.Fatalf("reclaimed after %s, before its lifetime of %s", age, lifetime)
	}
	wantEnded(t, tx)
	wantGone(t, m, s)
}

// TestSweeperSkipsBusy: a request that outlasts the idle timeout keeps its
// transaction; the sweeper reclaims it only once it is idle again.
func TestSweeperSkipsBusy(t *testing.T) {
	const idle = 30 * time.Millisecond
	m, _ := newManager(t, Options{IdleTimeout: idle, MaxLifetime: time.Hour})
	s := begin(t, m, "db")
	err := m.Run(bg, s.ID, owner, "db", func(tx kv.Tx) error {
		if err := tx.Set([]byte("a"), []byte("1")); err != nil {
			return err
		}
		time.Sleep(10 * idle) // many sweeps go by
		if m.Len() != 1 {
			return errors.New("the transaction was dropped during the request")
		}
		if _, err := tx.Get(bg, []byte("a")); err != nil {
			return fmt.Errorf("the transaction was rolled back during the request: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "reclaiming the transaction once idle", func() bool { return m.Len() == 0 })
}

// TestOneRequestAtATime: concurrent requests on one transaction never
// overlap (the store transaction is not safe for concurrent use).
func TestOneRequestAtATime(t *testing.T) {
	m, store := newManager(t, Options{})
	s := begin(t, m, "db")
	const workers, each = 8, 25
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := m.Run(bg, s.ID, owner, "db", func(tx kv.Tx) error {
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					defer inside.Add(-1)
					time.Sleep(50 * time.Microsecond)
					return tx.Add([]byte("n"), 1)
				})
				if err != nil {
					t.Errorf("request: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d requests ran while another was running", n)
	}
	if err := m.Commit(bg, s.ID, owner); err != nil {
		t.Fatal(err)
	}
	if v, _ := committed(t, store, "n"); kv.DecodeCounter([]byte(v)) != workers*each {
		t.Fatalf("n = %d, want %d", kv.DecodeCounter([]byte(v)), workers*each)
	}
}

// TestWaitingRequestHonoursContext: a request waiting for its turn gives up
// when its context ends.
func TestWaitingRequestHonoursContext(t *testing.T) {
	m, _ := newManager(t, Options{})
	s := begin(t, m, "db")
	started, release := make(chan struct{}), make(chan struct{})
	go m.Run(bg, s.ID, owner, "db", func(kv.Tx) error { close(started); <-release; return nil })
	<-started
	defer close(release)
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	err := m.Run(ctx, s.ID, owner, "db", func(kv.Tx) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: %v, want the context's deadline", err)
	}
}

// TestExpiryUnderConcurrency: requests, commits and rollbacks race each
// other and a sweeper with a tiny idle timeout. Every call ends, in time,
// with success or with one of the answers for a transaction that is gone or
// may only roll back.
func TestExpiryUnderConcurrency(t *testing.T) {
	m, _ := newManager(t, Options{IdleTimeout: 10 * time.Millisecond, MaxLifetime: 40 * time.Millisecond})
	const sessions, workers, calls = 16, 8, 150
	var mu sync.Mutex // guards ids
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = begin(t, m, "db").ID
	}
	pick := func(rng *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		return ids[rng.IntN(sessions)]
	}
	var wg sync.WaitGroup
	var ok, gone atomic.Int32
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < calls; i++ {
				if rng.IntN(8) == 0 {
					// Keep new transactions coming.
					s := begin(t, m, "db")
					mu.Lock()
					ids[rng.IntN(sessions)] = s.ID
					mu.Unlock()
				}
				id := pick(rng)
				ctx, cancel := context.WithTimeout(bg, 5*time.Second)
				var err error
				var what string
				switch rng.IntN(6) {
				case 0:
					what, err = "commit", m.Commit(ctx, id, owner)
				case 1:
					what, err = "rollback", m.Rollback(ctx, id, owner)
				default:
					key := []byte(fmt.Sprintf("k/%d/%d", w, i)) // no write conflicts
					fail := rng.IntN(4) == 0
					what = "request"
					err = m.Run(ctx, id, owner, "db", func(tx kv.Tx) error {
						time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
						if err := tx.Set(key, []byte("v")); err != nil {
							return err
						}
						if fail {
							return errors.New("request failed after writing")
						}
						return nil
					})
				}
				cancel()
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, context.DeadlineExceeded):
					t.Errorf("%s on %s hung", what, id)
				case apierror.CodeOf(err) == apierror.Internal && what == "request",
					apierror.CodeOf(err) == apierror.NotFound && what != "request":
					gone.Add(1)
				case apierror.CodeOf(err) == apierror.Aborted,
					err.Error() == "request failed after writing":
				case errors.Is(err, kv.ErrTxTooOld):
					// A request that ran past the store's own limit.
				default:
					t.Errorf("%s on %s: unexpected %v", what, id, err)
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("%d calls succeeded, %d found their transaction gone", ok.Load(), gone.Load())
	eventually(t, "reclaiming every transaction", func() bool { return m.Len() == 0 })
}

// TestClose: Close rolls back every open transaction, waiting for a request
// under way, and stops the sweeper.
func TestClose(t *testing.T) {
	store := backendtest.OpenPebble(t)
	m := New(store, Options{})
	m.Start(context.Background())
	var sessions []*Session
	var txs []kv.Tx
	for i := 0; i < 3; i++ {
		s := begin(t, m, "db")
		set(t, m, s, fmt.Sprint("k", i), "v")
		sessions = append(sessions, s)
		txs = append(txs, txOf(t, m, s))
	}
	started, busyErr := make(chan struct{}), make(chan error, 1)
	var busyDone atomic.Bool
	go func() {
		busyErr <- m.Run(bg, sessions[0].ID, owner, "db", func(tx kv.Tx) error {
			close(started)
			time.Sleep(50 * time.Millisecond)
			defer busyDone.Store(true)
			return tx.Set([]byte("late"), []byte("v"))
		})
	}()
	<-started
	m.Close()
	if !busyDone.Load() {
		t.Fatal("Close returned before the request under way ended")
	}
	if err := <-busyErr; err != nil {
		t.Fatalf("the request under way failed: %v", err)
	}
	if m.Len() != 0 {
		t.Fatalf("Len = %d after Close", m.Len())
	}
	for i, s := range sessions {
		wantEnded(t, txs[i])
		wantGone(t, m, s)
	}
	for _, k := range []string{"k0", "k1", "k2", "late"} {
		if _, ok := committed(t, store, k); ok {
			t.Fatalf("%s is visible after Close rolled its transaction back", k)
		}
	}
	m.Close() // a second Close does nothing
	if _, err := m.Begin(bg, "db", owner); apierror.CodeOf(err) != apierror.Unavailable {
		t.Fatalf("Begin after Close: %v, want UNAVAILABLE", err)
	}
	if m.Len() != 0 {
		t.Fatalf("Len = %d: a begin after Close registered a transaction", m.Len())
	}
}

// MaxOpen bounds the open transactions: a begin beyond it is refused at
// once with UNAVAILABLE and a retry delay, concurrent begins included, and
// every way a transaction ends makes room again.
func TestMaxOpen(t *testing.T) {
	const maxOpen = 3
	m, _ := newManager(t, Options{MaxOpen: maxOpen, IdleTimeout: 200 * time.Millisecond})
	var mu sync.Mutex
	var open []*Session
	var refused int
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			s, err := m.Begin(bg, "db", owner)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				open = append(open, s)
				return
			}
			e, ok := apierror.From(err)
			if !ok || e.Code != apierror.Unavailable || e.RetryDelay <= 0 {
				t.Errorf("begin beyond the bound: %v, want UNAVAILABLE with a retry delay", err)
			}
			refused++
		})
	}
	wg.Wait()
	if len(open) != maxOpen || refused != 10-maxOpen {
		t.Fatalf("%d begins succeeded and %d were refused, want %d and %d", len(open), refused, maxOpen, 10-maxOpen)
	}
	if err := m.Commit(bg, open[0].ID, owner); err != nil {
		t.Fatal(err)
	}
	if err := m.Rollback(bg, open[1].ID, owner); err != nil {
		t.Fatal(err)
	}
	begin(t, m, "db")
	begin(t, m, "db")
	if _, err := m.Begin(bg, "db", owner); apierror.CodeOf(err) != apierror.Unavailable {
		t.Fatalf("begin at the bound again: %v", err)
	}
	// The sweeper's rollbacks of idle transactions make room too.
	deadline := time.Now().Add(10 * time.Second)
	for m.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions still open after their idle timeout", m.Len())
		}
		time.Sleep(20 * time.Millisecond)
	}
	begin(t, m, "db")
}

// owner is the owner of the tests' transactions.
const owner = "1/app"

// A transaction is its owner's alone: another caller can neither use nor
// end it, and its owner still can.
func TestOwnerOnly(t *testing.T) {
	m, _ := newManager(t, Options{})
	s, err := m.Begin(bg, "db", owner)
	if err != nil {
		t.Fatal(err)
	}
	called := false
	wantCode(t, "run", m.Run(bg, s.ID, "1/intruder", "db", func(kv.Tx) error { called = true; return nil }), apierror.PermissionDenied)
	wantCode(t, "commit", m.Commit(bg, s.ID, "2/app"), apierror.PermissionDenied)
	wantCode(t, "rollback", m.Rollback(bg, s.ID, "1/"), apierror.PermissionDenied)
	if called {
		t.Fatal("another caller's request ran in the transaction")
	}
	if err := m.Run(bg, s.ID, owner, "db", func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(bg, s.ID, owner); err != nil {
		t.Fatal(err)
	}
}

// TestStats: the open transactions, the oldest one's age, and how each
// ended (committed, aborted by a conflict, rolled back, expired).
func TestStats(t *testing.T) {
	m, store := newManager(t, Options{IdleTimeout: time.Hour, MaxLifetime: time.Second})
	if st := m.Stats(); st != (Stats{}) {
		t.Fatalf("stats of an empty table: %+v", st)
	}
	old := begin(t, m, "db")
	time.Sleep(20 * time.Millisecond)
	young := begin(t, m, "db")
	if st := m.Stats(); st.Open != 2 || st.OldestAge < 20*time.Millisecond || st.OldestAge > time.Since(old.created)+time.Millisecond {
		t.Fatalf("two open, the oldest begun %v ago: %+v", time.Since(old.created), st)
	}
	// young reads "k", a transaction of the store's writes it, so young's
	// commit conflicts.
	if err := m.Run(bg, young.ID, owner, "db", func(tx kv.Tx) error {
		if _, err := tx.Get(bg, []byte("k")); !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return tx.Set([]byte("j"), []byte("1"))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Run(bg, store, func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(bg, young.ID, owner); !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("commit: %v, want a conflict", err)
	}
	set(t, m, old, "a", "1")
	if err := m.Commit(bg, old.ID, owner); err != nil {
		t.Fatal(err)
	}
	if err := m.Rollback(bg, begin(t, m, "db").ID, owner); err != nil {
		t.Fatal(err)
	}
	begin(t, m, "db")
	eventually(t, "expiry", func() bool { return m.Len() == 0 })
	want := Stats{Committed: 1, Aborted: 1, RolledBack: 1, Expired: 1}
	if st := m.Stats(); st != want {
		t.Fatalf("%+v, want %+v", st, want)
	}
}
