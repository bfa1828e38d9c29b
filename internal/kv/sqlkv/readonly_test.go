package sqlkv

import (
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestReadOnlyNeverSeesALaterCommitWithoutAnEarlier is the read-only
// anomaly (Fekete, O'Neil and O'Neil, "A read-only transaction anomaly
// under snapshot isolation", 2004) that the nemesis run found on this
// backend (docs/testing.md): T1 reads b, then sets a; T2 sets b; T1's
// commit runs beside T2's, so its validation (whose snapshot predates T2's
// commit) passes, and PostgreSQL's SSI, seeing one rw-antidependency (T1
// before T2), lets it commit after T2. A read-only T3 that takes its
// snapshot between the two commits would see T2's b without T1's a,
// though T1 is serialized before T2: the cycle T2 →wr T3 →rw T1 →rw T2.
// T3's snapshot must be one that no later commit can precede (a safe
// snapshot). The interleaving is forced: a plain transaction holds the row
// lock of a, so T1's commit stops after its validation, at its write.
func TestReadOnlyNeverSeesALaterCommitWithoutAnEarlier(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := mustOpen(t, Options{URL: url})
	run(t, s, func(tx kv.Tx) error {
		must(t, tx.Set([]byte("a"), []byte("a0")))
		return tx.Set([]byte("b"), []byte("b0"))
	})

	t1, err := s.Begin(bg)
	must(t, err)
	defer t1.Rollback()
	if _, err := t1.Get(bg, []byte("b")); err != nil {
		t.Fatal(err)
	}
	must(t, t1.Set([]byte("a"), []byte("a1")))

	locker, err := pgx.Connect(bg, url)
	must(t, err)
	defer locker.Close(bg)
	lock, err := locker.Begin(bg)
	must(t, err)
	defer lock.Rollback(bg)
	_, err = lock.Exec(bg, `SELECT 1 FROM folio_kv WHERE k = 'a' FOR UPDATE`)
	must(t, err)

	watcher, err := pgx.Connect(bg, url)
	must(t, err)
	defer watcher.Close(bg)
	waiting := func(column, value string) func() bool {
		return func() bool {
			var n int
			err := watcher.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND `+column+` = $1`, value).Scan(&n)
			return err == nil && n > 0
		}
	}

	t1done := make(chan error, 1)
	go func() { _, err := t1.Commit(bg); t1done <- err }()
	// T1's commit has validated (its snapshot has no T2) and waits at a.
	eventually(t, "T1's commit waits for a's row lock", waiting("wait_event_type", "Lock"))

	run(t, s, func(tx kv.Tx) error { return tx.Set([]byte("b"), []byte("b1")) }) // T2

	type view struct {
		a, b string
		err  error
	}
	t3done := make(chan view, 1)
	go func() {
		var v view
		_, v.err = kv.Run(bg, s, func(tx kv.Tx) error {
			a, err := tx.Get(bg, []byte("a"))
			if err != nil {
				return err
			}
			b, err := tx.Get(bg, []byte("b"))
			v.a, v.b = string(a), string(b)
			return err
		})
		t3done <- v
	}()
	// T3 either has its view at once (a snapshot taken whatever runs
	// beside it) or waits for a safe one; either way, T1 may then go on.
	var v view
	got := false
	eventually(t, "T3 reads or waits for a safe snapshot", func() bool {
		select {
		case v = <-t3done:
			got = true
			return true
		default:
			return waiting("wait_event", "SafeSnapshot")()
		}
	})
	must(t, lock.Rollback(bg))
	t1err := <-t1done
	if !got {
		v = <-t3done
	}
	must(t, v.err)

	if t1err == nil && v.b == "b1" && v.a != "a1" {
		t.Fatalf("T3 saw T2's b (%s) without T1's a (%s), and T1 committed though it read b before T2 wrote it: "+
			"no serial order has T3's view", v.b, v.a)
	}
	t.Logf("T1's commit: %v; T3 saw a=%s b=%s", t1err, v.a, v.b)
}
