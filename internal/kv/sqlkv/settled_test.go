package sqlkv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
)

// TestSettledPosition: while a transaction older than a commit is open
// (one of no Folio node, which announces nothing), SettledPosition waits;
// once it ends, it returns a position at or past the commit, which the log
// then shows; a caller that gives up first gets its context's error.
func TestSettledPosition(t *testing.T) {
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t)})
	older, err := s.pool.Begin(bg)
	must(t, err)
	defer older.Rollback(bg)
	_, err = older.Exec(bg, "SELECT pg_current_xact_id()") // holds the horizon from now
	must(t, err)
	committed := run(t, s, func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("v")) })
	type result struct {
		pos kv.Position
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		pos, err := s.SettledPosition(ctx)
		done <- result{pos, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("SettledPosition returned %d, %v while a transaction older than the commit at %d was open", r.pos, r.err, committed)
	case <-time.After(200 * time.Millisecond):
	}
	must(t, older.Commit(bg))
	r := <-done
	if r.err != nil || r.pos < committed {
		t.Fatalf("SettledPosition: %d, %v; want at least %d", r.pos, r.err, committed)
	}
	if last, err := s.LastPosition(bg); err != nil || last < committed {
		t.Fatalf("LastPosition after SettledPosition: %d, %v; want at least %d", last, err, committed)
	}
	// A caller that gives up while the horizon is held gets its context's
	// error, not a position.
	again, err := s.pool.Begin(bg)
	must(t, err)
	defer again.Rollback(bg)
	_, err = again.Exec(bg, "SELECT pg_current_xact_id()")
	must(t, err)
	run(t, s, func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("w")) })
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	if pos, err := s.SettledPosition(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SettledPosition with the horizon held until its context ends: %d, %v", pos, err)
	}
}
