package sqlkv

import (
	"errors"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestCommitRetriesPostgresConflicts: a commit that PostgreSQL fails with a
// serialization error of its own is sent again, and lands unless Folio's
// validation finds a key it read written since its snapshot. The failure is
// made by a plain transaction that updates the key the commit sets and ends
// while the commit waits for its row lock ("could not serialize access due
// to concurrent update").
func TestCommitRetriesPostgresConflicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		read     string // the key the transaction reads before it sets "k"
		conflict bool   // whether the commit must fail after its retry
	}{
		{"blind write to the key", "other", false},
		{"read the key the other wrote", "k", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pgtest.NewDatabase(t)
			s := mustOpen(t, Options{URL: url})
			run(t, s, func(tx kv.Tx) error {
				must(t, tx.Set([]byte("k"), []byte("before")))
				return tx.Set([]byte("other"), []byte("x"))
			})

			tx, err := s.Begin(bg)
			must(t, err)
			defer tx.Rollback()
			if _, err := tx.Get(bg, []byte(tc.read)); err != nil {
				t.Fatal(err)
			}
			must(t, tx.Set([]byte("k"), []byte("mine")))

			other, err := pgx.Connect(bg, url)
			must(t, err)
			defer other.Close(bg)
			otherTx, err := other.Begin(bg)
			must(t, err)
			defer otherTx.Rollback(bg)
			_, err = otherTx.Exec(bg, `UPDATE folio_kv SET v = 'theirs', wx = pg_current_xact_id(), sx = pg_current_xact_id() WHERE k = 'k'`)
			must(t, err)

			done := make(chan error, 1)
			go func() { _, err := tx.Commit(bg); done <- err }()
			watcher, err := pgx.Connect(bg, url)
			must(t, err)
			defer watcher.Close(bg)
			eventually(t, "the commit waits for the row lock", func() bool {
				var waiting int
				err := watcher.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
				return err == nil && waiting > 0
			})
			must(t, otherTx.Commit(bg))
			err = <-done

			if got := s.Stats().CommitRetries; got != 1 {
				t.Errorf("commit retries: %d, want 1", got)
			}
			want := "mine"
			if tc.conflict {
				want = "theirs"
				if !errors.Is(err, kv.ErrConflict) || !strings.Contains(err.Error(), "folio:") {
					t.Fatalf("commit: %v, want Folio's validation to report the conflict", err)
				}
			} else if err != nil {
				t.Fatalf("commit: %v, want it to land once tried again", err)
			}
			var got string
			must(t, s.pool.QueryRow(bg, `SELECT convert_from(v, 'UTF8') FROM folio_kv WHERE k = 'k'`).Scan(&got))
			if got != want {
				t.Errorf("k holds %q, want %q", got, want)
			}
		})
	}
}
