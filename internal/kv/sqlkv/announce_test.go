package sqlkv

import (
	"context"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
)

// TestAnnouncements: a commit on one node wakes a log reader waiting on
// another, through the announcement alone (the periodic check is off);
// and so does a commit through folio_commit, as nodes of an older schema
// version make them, which announces inside the transaction.
func TestAnnouncements(t *testing.T) {
	url := pgtest.NewDatabase(t)
	quiet := Options{URL: url, unannouncedCheck: time.Hour}
	a, b := mustOpen(t, quiet), mustOpen(t, quiet)
	for _, how := range []string{"Commit", "folio_commit"} {
		after, err := b.LastPosition(bg)
		must(t, err)
		woken := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(bg, 30*time.Second)
			defer cancel()
			woken <- b.WaitLog(ctx, after)
		}()
		time.Sleep(50 * time.Millisecond) // let the reader wait
		switch how {
		case "Commit":
			run(t, a, func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("v")) })
		case "folio_commit":
			_, err := a.pool.Exec(bg, "SELECT folio_commit(NULL, NULL, NULL, NULL, NULL, $1, $2, NULL, NULL, NULL, NULL)",
				[][]byte{[]byte("k")}, [][]byte{[]byte("w")})
			must(t, err)
		}
		if err := <-woken; err != nil {
			t.Fatalf("a reader on another node, after a commit by %s: %v", how, err)
		}
	}
}
