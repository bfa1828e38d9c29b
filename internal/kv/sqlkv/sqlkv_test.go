package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
)

var bg = context.Background()

func mustOpen(t *testing.T, opts Options) *Store {
	t.Helper()
	s, err := Open(bg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, s kv.Store, fn func(tx kv.Tx) error) kv.Position {
	t.Helper()
	pos, err := kv.Run(bg, s, fn)
	must(t, err)
	return pos
}

func counter(t *testing.T, s kv.Store, key string) (int64, bool) {
	t.Helper()
	tx, err := s.Begin(bg)
	must(t, err)
	defer tx.Rollback()
	v, err := tx.Get(bg, []byte(key))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, false
	}
	must(t, err)
	return kv.DecodeCounter(v), true
}

// count runs a COUNT(*) query against the store's database.
func count(t *testing.T, s *Store, query string) int {
	t.Helper()
	var n int
	must(t, s.pool.QueryRow(bg, query).Scan(&n))
	return n
}

// eventually waits for cond, which background work makes true; the limit is
// generous, it only stops a broken test from hanging.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFold: deltas are folded into the stored values without changing any
// value, Sets and Clears retire the deltas before them, and readers see the
// same values before and after folding.
func TestFold(t *testing.T) {
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Millisecond, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	for i := 0; i < 20; i++ {
		run(t, s, func(tx kv.Tx) error {
			tx.Add([]byte("n"), 2)                  // a counter with no stored row
			tx.Add([]byte("a/"+fmt.Sprint(i%3)), 1) // several keys at once
			return nil
		})
	}
	run(t, s, func(tx kv.Tx) error { return tx.Set([]byte("s"), kv.EncodeCounter(100)) })
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("s"), 5) })
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("c"), 7) })
	run(t, s, func(tx kv.Tx) error { return tx.Clear([]byte("c")) })
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("c2"), 7) })
	run(t, s, func(tx kv.Tx) error { return tx.ClearRange(kv.PrefixRange([]byte("c2"))) })
	want := map[string]int64{"n": 40, "a/0": 7, "a/1": 7, "a/2": 6, "s": 105}
	check := func() {
		t.Helper()
		for k, v := range want {
			if got, ok := counter(t, s, k); !ok || got != v {
				t.Fatalf("%s = %d (found %v), want %d", k, got, ok, v)
			}
		}
		for _, k := range []string{"c", "c2"} {
			if got, ok := counter(t, s, k); ok {
				t.Fatalf("cleared counter %s = %d", k, got)
			}
		}
	}
	check()
	eventually(t, "folding every delta", func() bool { return count(t, s, "SELECT count(*) FROM folio_delta") == 0 })
	check()
	// A Set retires deltas by their age, whoever folds them.
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("s"), 1) })
	run(t, s, func(tx kv.Tx) error { return tx.Set([]byte("s"), kv.EncodeCounter(1)) })
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("s"), 1) })
	eventually(t, "folding every delta", func() bool { return count(t, s, "SELECT count(*) FROM folio_delta") == 0 })
	if got, _ := counter(t, s, "s"); got != 2 {
		t.Fatalf("s = %d after set 1 and add 1", got)
	}
}

// TestFoldConflicts: a reader of a counter whose deltas are folded after it
// read still conflicts with the adds it missed.
func TestFoldConflicts(t *testing.T) {
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), FoldDelay: time.Millisecond})
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("n"), 1) })
	reader, err := s.Begin(bg)
	must(t, err)
	defer reader.Rollback()
	if _, err := reader.Get(bg, []byte("n")); err != nil {
		t.Fatal(err)
	}
	run(t, s, func(tx kv.Tx) error { return tx.Add([]byte("n"), 1) })
	eventually(t, "folding every delta", func() bool { return count(t, s, "SELECT count(*) FROM folio_delta") == 0 })
	must(t, reader.Set([]byte("w"), nil))
	if _, err := reader.Commit(bg); !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("commit after a missed add was folded: %v", err)
	}
}

// TestTombstonesCollected: cleared keys leave tombstones for validation,
// which go once no transaction that can still commit may need them; a
// transaction older than that cannot commit.
func TestTombstonesCollected(t *testing.T) {
	const maxAge = 300 * time.Millisecond
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), MaxTxAge: maxAge, tombstoneMargin: 50 * time.Millisecond})
	run(t, s, func(tx kv.Tx) error {
		for i := 0; i < 10; i++ {
			tx.Set([]byte(fmt.Sprintf("t/%d", i)), []byte("x"))
		}
		return nil
	})
	old, err := s.Begin(bg)
	must(t, err)
	defer old.Rollback()
	if _, err := old.Get(bg, []byte("t/1")); err != nil {
		t.Fatal(err)
	}
	run(t, s, func(tx kv.Tx) error { return tx.ClearRange(kv.PrefixRange([]byte("t/"))) })
	if n := count(t, s, "SELECT count(*) FROM folio_kv WHERE v IS NULL"); n != 10 {
		t.Fatalf("%d tombstones after clearing 10 keys", n)
	}
	eventually(t, "collecting the tombstones", func() bool {
		return count(t, s, "SELECT count(*) FROM folio_kv WHERE v IS NULL") == 0
	})
	must(t, old.Set([]byte("w"), nil))
	if _, err := old.Commit(bg); !errors.Is(err, kv.ErrTxTooOld) && !errors.Is(err, kv.ErrConflict) {
		t.Fatalf("commit of a transaction that read a collected key: %v", err)
	}
	if _, ok := counter(t, s, "t/1"); ok {
		t.Fatal("a cleared key came back")
	}
}

// TestTwoNodes: two stores on one database, as two Folio nodes would be.
// Writers on both commit concurrently, some of them on one hot key; a
// reader on each node follows the log and both must see the same entries,
// in the same order, all of them, and be woken by the other node's commits.
func TestTwoNodes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	nodes := []*Store{mustOpen(t, Options{URL: url}), mustOpen(t, Options{URL: url})}
	const writersPerNode, each = 3, 40
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	seen := make([]chan []kv.Position, len(nodes))
	var target atomic.Uint64 // the last commit, once the writers are done
	for n, s := range nodes {
		seen[n] = make(chan []kv.Position, 1)
		go func() {
			var got []kv.Position
			after := kv.Position(0)
			for {
				entries, upTo, err := s.ReadLog(bg, after, 0)
				if err != nil {
					t.Error(err)
					break
				}
				for _, e := range entries {
					got = append(got, e.Pos)
				}
				// Done once told to stop and past the last commit: a read
				// may come back short while another transaction of the
				// cluster holds the horizon back for a moment.
				if upTo == after && ctx.Err() != nil && kv.Position(target.Load()) <= after {
					break
				}
				after = upTo
				wctx, wcancel := context.WithTimeout(ctx, time.Second)
				s.WaitLog(wctx, after)
				wcancel()
			}
			seen[n] <- got
		}()
	}
	var mu sync.Mutex
	var committed []kv.Position
	var wg sync.WaitGroup
	for n, s := range nodes {
		for w := 0; w < writersPerNode; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					id := fmt.Sprintf("n%d-w%d-%d", n, w, i)
					pos, err := kv.RunWith(bg, s, kv.RunOptions{MaxAttempts: 100}, func(tx kv.Tx) error {
						if i%4 == 0 { // a quarter of them fight over one key
							if _, err := tx.Get(bg, []byte("hot")); err != nil && !errors.Is(err, kv.ErrNotFound) {
								return err
							}
							tx.Set([]byte("hot"), []byte(id))
						}
						tx.Set([]byte("doc/"+id), []byte(id))
						tx.Add([]byte("count"), 1)
						return tx.AppendLog([]byte(id))
					})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					committed = append(committed, pos)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	// Let the readers catch up with everything, then stop them. The last
	// commit is the highest position a writer got back, not LastPosition:
	// that stops below any transaction still open in the cluster (another
	// test's, or autovacuum's), so it can lag the commits made here.
	var last kv.Position
	for _, p := range committed {
		last = max(last, p)
	}
	for _, s := range nodes {
		wctx, wcancel := context.WithTimeout(bg, 30*time.Second)
		for {
			p, err := s.LastPosition(bg)
			must(t, err)
			if p >= last {
				break
			}
			must(t, s.WaitLog(wctx, p))
		}
		wcancel()
	}
	target.Store(uint64(last))
	cancel()
	var first []kv.Position
	for n := range nodes {
		got := <-seen[n]
		if len(got) != len(committed) {
			t.Fatalf("node %d's reader saw %d entries, %d committed", n, len(got), len(committed))
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("node %d's reader saw %d after %d", n, got[i], got[i-1])
			}
		}
		if n == 0 {
			first = got
		} else if fmt.Sprint(got) != fmt.Sprint(first) {
			t.Fatal("the two nodes' readers saw different logs")
		}
	}
	if got, _ := counter(t, nodes[1], "count"); got != int64(len(committed)) {
		t.Fatalf("count = %d, %d commits", got, len(committed))
	}
}

func TestOpenErrors(t *testing.T) {
	// Nothing listens on port 1.
	_, err := Open(bg, Options{URL: "postgres://folio:secret@127.0.0.1:1/db?connect_timeout=5"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("unreachable server: %v", err)
	}

	// A role that may connect but has no rights on the tables.
	dbURL := pgtest.NewDatabase(t)
	owner := mustOpen(t, Options{URL: dbURL})
	if _, err := owner.pool.Exec(bg, "CREATE ROLE folio_test_reader LOGIN PASSWORD 'pw'"); err != nil {
		t.Skipf("cannot create a role on this server: %v", err)
	}
	t.Cleanup(func() {
		owner.pool.Exec(bg, "DROP OWNED BY folio_test_reader")
		owner.pool.Exec(bg, "DROP ROLE folio_test_reader")
	})
	u, _ := url.Parse(dbURL)
	u.User = url.UserPassword("folio_test_reader", "pw")
	_, err = Open(bg, Options{URL: u.String()})
	if err == nil || !strings.Contains(err.Error(), "lacks privileges") || strings.Contains(err.Error(), ":pw@") {
		t.Fatalf("role without privileges: %v", err)
	}
	t.Log(err)
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=disable": "postgres://u@h:5432/db?sslmode=disable",
		"postgresql://h/db?password=secret&x=1":         "postgresql://h/db?password=redacted&x=1",
		"host=h user=u password=secret dbname=d":        "host=h user=u password=redacted dbname=d",
		"host=h password = 'se cret' dbname=d":          "host=h password = redacted dbname=d",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSchemaTwice: opening a database that has the schema changes nothing,
// and concurrent first opens do not trip over each other.
func TestSchemaConcurrentOpen(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(bg, Options{URL: dbURL})
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(bg, dbURL)
	must(t, err)
	defer conn.Close(bg)
	var version int
	must(t, conn.QueryRow(bg, "SELECT schema_version FROM folio_meta").Scan(&version))
	if version != schemaVersion {
		t.Fatalf("schema version %d", version)
	}
}

// testLogger sends a store's messages to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
