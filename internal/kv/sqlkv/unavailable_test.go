package sqlkv

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// What says the server is out of reach, and what is a statement's own
// failure.
func TestUnreachable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // terminating connection due to administrator command
		{&pgconn.PgError{Code: "57P03"}, true}, // the database system is starting up
		{&pgconn.PgError{Code: "53300"}, true}, // too many connections
		{&pgconn.PgError{Code: "08006"}, true}, // connection failure
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "42P01"}, false},
		{&pgconn.PgError{Code: "28P01"}, false}, // a refused password fails again
		{&pgconn.PgError{Code: "3D000"}, false}, // so does a missing database
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", IsTemporary: true}}, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}, false},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}, false},
		{fmt.Errorf("receive message failed: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("x: %w", pgconn.ErrConnClosed), true},
		{pgx.ErrNoRows, false},
		{errors.New("something else"), false},
	} {
		if got := unreachable(tc.err); got != tc.want {
			t.Errorf("unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// Begin waits for a connection at most AcquireTimeout, then fails with
// kv.ErrBusy (a kind of kv.ErrUnavailable), instead of waiting for as long
// as the transactions holding every connection stay open.
func TestBeginWaitIsBounded(t *testing.T) {
	const wait = 300 * time.Millisecond
	s := mustOpen(t, Options{URL: pgtest.NewDatabase(t), MaxConns: 2, AcquireTimeout: wait})
	if s.MaxConns() != 2 {
		t.Fatalf("MaxConns() = %d, want 2", s.MaxConns())
	}
	held := make([]kv.Tx, 2)
	for i := range held {
		tx, err := s.Begin(bg)
		must(t, err)
		defer tx.Rollback()
		// The first read takes the connection.
		if _, err := tx.Get(bg, []byte("k")); !errors.Is(err, kv.ErrNotFound) {
			t.Fatal(err)
		}
		held[i] = tx
	}
	// Begin itself takes no connection; the first read, or a commit that
	// read nothing, waits for one and gives up.
	tx, err := s.Begin(bg)
	must(t, err)
	defer tx.Rollback()
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"first read", func() error { _, err := tx.Get(bg, []byte("k")); return err }},
		{"blind commit", func() error {
			must(t, tx.Set([]byte("k"), []byte("v")))
			_, err := tx.Commit(bg)
			return err
		}},
	} {
		start := time.Now()
		err := step.do()
		took := time.Since(start)
		if !errors.Is(err, kv.ErrBusy) || !errors.Is(err, kv.ErrUnavailable) {
			t.Fatalf("%s with every connection held: %v, want kv.ErrBusy", step.what, err)
		}
		if took < wait || took > wait+5*time.Second {
			t.Errorf("%s gave up after %s, want about %s", step.what, took, wait)
		}
	}
	held[0].Rollback()
	tx, err = s.Begin(bg)
	must(t, err)
	if _, err := tx.Get(bg, []byte("k")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("read once a connection is free: %v", err)
	}
	tx.Rollback()
}

// A transaction whose connection the server ends fails with
// kv.ErrUnavailable, and the store recovers on new connections.
func TestLostConnectionIsUnavailable(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := mustOpen(t, Options{URL: url})
	run(t, s, func(tx kv.Tx) error { return tx.Set([]byte("k"), []byte("v")) })
	tx, err := s.Begin(bg)
	must(t, err)
	defer tx.Rollback()
	// Begin takes no connection: the first read does, and keeps it.
	if _, err := tx.Get(bg, []byte("k")); err != nil {
		t.Fatal(err)
	}

	admin, err := pgx.Connect(bg, url)
	must(t, err)
	defer admin.Close(bg)
	// The pids are kept, to wait below for exactly those backends to exit.
	rows, err := admin.Query(bg, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	must(t, err)
	ended, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	must(t, err)
	_, err = admin.Exec(bg, `SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, ended)
	must(t, err)
	if len(ended) == 0 {
		t.Fatal("no connection of the store's to end")
	}
	// pg_terminate_backend only signals; wait until the backends are gone.
	eventually(t, "the ended backends exit", func() bool {
		var left int
		err := admin.QueryRow(bg, `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)`, ended).Scan(&left)
		return err == nil && left == 0
	})

	if _, err := tx.Get(bg, []byte("k")); !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("read on a terminated connection: %v, want kv.ErrUnavailable", err)
	}
	eventually(t, "a new transaction reads again", func() bool {
		tx, err := s.Begin(bg)
		if err != nil {
			return false
		}
		defer tx.Rollback()
		_, err = tx.Get(bg, []byte("k"))
		return err == nil
	})
	must(t, s.Ping(bg))
}
