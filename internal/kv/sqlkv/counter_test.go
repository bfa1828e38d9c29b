package sqlkv

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// committer is one SERIALIZABLE transaction on a connection of its own,
// driven step by step so that a test can interleave two commits the way
// concurrent nodes do, which a test going through Commit cannot.
type committer struct {
	t  *testing.T
	tx pgx.Tx
}

func beginCommitter(t *testing.T, s *Store) *committer {
	t.Helper()
	conn, err := s.pool.Acquire(bg)
	must(t, err)
	t.Cleanup(conn.Release)
	tx, err := conn.BeginTx(bg, pgx.TxOptions{IsoLevel: pgx.Serializable})
	must(t, err)
	t.Cleanup(func() { tx.Rollback(bg) })
	return &committer{t: t, tx: tx}
}

// commit calls folio_apply for a transaction that read the keys read (as
// of the commit's own snapshot), set the keys set and added 1 to the keys
// added; it returns the error of the call, if any.
func (c *committer) commit(read, set, added []string) error {
	c.t.Helper()
	var rb, re, sk, sv, ak [][]byte
	var ad []int64
	for _, k := range read {
		rb, re = append(rb, []byte(k)), append(re, kv.KeyAfter([]byte(k)))
	}
	for _, k := range set {
		sk, sv = append(sk, []byte(k)), append(sv, []byte("v"))
	}
	for _, k := range added {
		ak, ad = append(ak, []byte(k)), append(ad, 1)
	}
	_, err := c.tx.Exec(bg, "SELECT folio_apply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
		nil, rb, re, [][]byte(nil), [][]byte(nil), sk, sv, [][]byte(nil), ak, ad, []byte(nil))
	return err
}

// exec runs a statement in the transaction.
func (c *committer) exec(sql string, args ...any) error {
	_, err := c.tx.Exec(bg, sql, args...)
	return err
}

func (c *committer) end() error { return c.tx.Commit(bg) }

func serializationFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40001"
}

// both runs two interleaved transactions (first's statement, second's,
// first's commit, second's commit) and returns how many failed with a
// serialization failure; any other error fails the test. Second's
// statement may wait for first to end (a row lock, a unique index), so it
// runs on its own goroutine.
func both(t *testing.T, first, second *committer, firstStep, secondStep func() error) int {
	t.Helper()
	failed := 0
	end := func(c *committer, err error) {
		t.Helper()
		if err == nil {
			err = c.end()
		}
		switch {
		case err == nil:
		case serializationFailure(err):
			failed++
		default:
			t.Fatalf("%v", err)
		}
	}
	firstErr := firstStep()
	secondDone := make(chan error, 1)
	go func() { secondDone <- secondStep() }()
	select {
	case err := <-secondDone:
		secondDone <- err
	case <-time.After(100 * time.Millisecond): // waiting for first, most likely
	}
	end(first, firstErr)
	end(second, <-secondDone)
	return failed
}

// TestReadersDoNotConflictWithAdds: concurrent transactions that each read
// a key of their own and add to one counter all commit. Before
// folio_counter, validation read folio_delta for every read range, and
// SSI's page lock on that small table failed some of them: 17% of the HTTP
// benchmark's interactive transactions on uniform keys.
func TestReadersDoNotConflictWithAdds(t *testing.T) {
	const workers, each = 8, 40
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Hour})
	run(t, s, func(tx kv.Tx) error {
		for w := 0; w < workers; w++ {
			tx.Set([]byte(fmt.Sprintf("k/%d", w)), []byte("1"))
		}
		return tx.Add([]byte("n"), 1)
	})
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				tx, err := s.Begin(bg)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := tx.Get(bg, []byte(fmt.Sprintf("k/%d", w))); err != nil {
					t.Error(err)
				}
				tx.Add([]byte("n"), 1)
				_, err = tx.Commit(bg)
				tx.Rollback()
				if errors.Is(err, kv.ErrConflict) {
					conflicts.Add(1)
				} else if err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	if n := conflicts.Load(); n > 0 {
		t.Fatalf("%d of %d commits that read keys of their own and added to a counter conflicted", n, workers*each)
	}
	if got, _ := counter(t, s, "n"); got != 1+workers*each {
		t.Fatalf("n = %d, want %d", got, 1+workers*each)
	}
}

// TestCounterWriteSkew: two commits at the same moment, one having read a
// counter that the other adds to and the other having read a key the
// first writes, cannot both commit (that would be write skew), whether
// the counter had deltas before or is new.
func TestCounterWriteSkew(t *testing.T) {
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Hour})
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("old"), 1) })
	for _, n := range []string{"old", "new"} {
		t1, t2 := beginCommitter(t, s), beginCommitter(t, s)
		if failed := both(t, t1, t2,
			func() error { return t1.commit([]string{n}, []string{"x-" + n}, nil) },
			func() error { return t2.commit([]string{"x-" + n}, nil, []string{n}) }); failed == 0 {
			t.Fatalf("counter %q: both commits of a write skew committed", n)
		}
	}
}

// TestCounterKeysCollected: the keys of counters that are gone leave
// folio_counter, live ones stay, and an Add after the removal is seen by
// validation again.
func TestCounterKeysCollected(t *testing.T) {
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Millisecond, MaxTxAge: 2 * time.Second})
	run(t, s, func(tx kv.Tx) error {
		tx.Add([]byte("g/1"), 1)
		tx.Add([]byte("g/2"), 1)
		return tx.Add([]byte("live"), 1)
	})
	if n := count(t, s, "SELECT count(*) FROM folio_counter"); n != 3 {
		t.Fatalf("%d counter keys after adding to 3", n)
	}
	run(t, s, func(tx kv.Tx) error { return tx.ClearRange(kv.PrefixRange([]byte("g/"))) })
	eventually(t, "collecting the cleared counters' keys", func() bool {
		return count(t, s, "SELECT count(*) FROM folio_counter WHERE k <> 'live'") == 0
	})
	if n := count(t, s, "SELECT count(*) FROM folio_counter WHERE k = 'live'"); n != 1 {
		t.Fatal("a live counter's key was collected")
	}
	reader, err := s.Begin(bg)
	must(t, err)
	defer reader.Rollback()
	if _, err := reader.Get(bg, []byte("g/1")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("cleared counter read: %v", err)
	}
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("g/1"), 1) })
	must(t, reader.Set([]byte("w"), nil))
	if _, err := reader.Commit(bg); !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("commit of a reader of a counter added to after its key was collected: %v", err)
	}
}

// TestCounterCollectionRacesAdd: the maintainer removing a counter's key
// and an Add to that counter, at the same moment, never leave deltas
// whose key is not in folio_counter (validation would miss them).
func TestCounterCollectionRacesAdd(t *testing.T) {
	for _, addFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("addFirst=%v", addFirst), func(t *testing.T) {
			s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Hour})
			run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("g"), 1) })
			run(t, s, func(tx kv.Tx) error { return tx.ClearRange(kv.PrefixRange([]byte("g"))) })
			gc, adder := beginCommitter(t, s), beginCommitter(t, s)
			remove := func() error { return gc.exec(removeGoneCounters, [][]byte{[]byte("g")}) }
			add := func() error { return adder.commit(nil, nil, []string{"g"}) }
			var failed int
			if addFirst {
				failed = both(t, adder, gc, add, remove)
			} else {
				failed = both(t, gc, adder, remove, add)
			}
			if n := count(t, s, "SELECT count(*) FROM folio_delta AS d WHERE NOT EXISTS (SELECT 1 FROM folio_counter AS c WHERE c.k = d.k)"); n != 0 {
				t.Fatalf("%d deltas without their key in folio_counter (%d of the two failed)", n, failed)
			}
			t.Logf("%d of the two failed", failed)
		})
	}
}

// TestCounterUpgrade: a store of schema version 2 (no folio_counter) gets
// the keys of its pending deltas listed when a newer node opens it, so
// that validation finds the deltas written before the upgrade.
func TestCounterUpgrade(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := mustOpen(t, Options{URL: url, FoldDelay: time.Hour})
	run(t, s, func(tx kv.Tx) error { tx.Add([]byte("a"), 1); return tx.Add([]byte("b"), 2) })
	reader, err := s.Begin(bg)
	must(t, err)
	defer reader.Rollback()
	if _, err := reader.Get(bg, []byte("a")); err != nil {
		t.Fatal(err)
	}
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("a"), 1) })
	// As a version 2 store was: no listed keys.
	_, err = s.pool.Exec(bg, "DROP TABLE folio_counter; UPDATE folio_meta SET schema_version = 2")
	must(t, err)
	mustOpen(t, Options{URL: url, FoldDelay: time.Hour})
	if n := count(t, s, "SELECT count(*) FROM folio_counter WHERE k IN ('a', 'b')"); n != 2 {
		t.Fatalf("%d of the 2 keys with deltas listed after the upgrade", n)
	}
	must(t, reader.Set([]byte("w"), nil))
	if _, err := reader.Commit(bg); !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("commit of a reader of a counter added to before the upgrade: %v", err)
	}
}

// TestFirstAddsDoNotConflict: Adds to a key no one added to before, from
// many transactions at once (a new collection's first inserts), all
// commit: concurrent Adds never conflict, whether or not the key is
// listed in folio_counter yet.
func TestFirstAddsDoNotConflict(t *testing.T) {
	const workers, rounds = 8, 10
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Hour})
	for round := 0; round < rounds; round++ {
		key := []byte(fmt.Sprintf("new/%d", round))
		var start sync.WaitGroup
		start.Add(1)
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			go func() {
				tx, err := s.Begin(bg)
				if err != nil {
					errs <- err
					return
				}
				defer tx.Rollback()
				tx.Add(key, 1)
				start.Wait()
				_, err = tx.Commit(bg)
				errs <- err
			}()
		}
		start.Done()
		for w := 0; w < workers; w++ {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a first Add to a new key failed: %v", round, err)
			}
		}
		if got, _ := counter(t, s, string(key)); got != workers {
			t.Fatalf("%s = %d, want %d", key, got, workers)
		}
	}
}
