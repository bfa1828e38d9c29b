// Package backendtest runs a test, or a benchmark, once per storage
// backend: the embedded Pebble store and PostgreSQL (on a throwaway cluster
// from pgtest, skipped where its server binaries are missing, failed under
// CI). Every suite that exercises more than kv itself goes through it, so a
// new backend joins every suite with one row in All.
//
// A test binary that uses it calls Main from TestMain, which stops the
// PostgreSQL cluster after the tests:
//
//	func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }
package backendtest

import (
	"context"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/tests/pgtest"
)

// Backend is a storage engine to test on.
type Backend struct {
	Name string
	// Open returns a new, empty store, closed when tb ends (closing it
	// earlier is fine: Close may be called more than once). It skips tb
	// where the backend is not available.
	Open func(tb testing.TB) kv.Store
	// Durable returns data of tb's own that a test opens, closes and
	// opens again: for tests of restarts. It skips tb where the backend is
	// not available.
	Durable func(tb testing.TB) Durable
}

// All is every backend, embedded first.
var All = []Backend{
	{Name: "pebble", Open: OpenPebble, Durable: durablePebble},
	{Name: "postgres", Open: OpenPostgres, Durable: durablePostgres},
}

// OpenPebble opens an embedded store in a temporary directory of tb.
func OpenPebble(tb testing.TB) kv.Store {
	tb.Helper()
	return OpenPebbleAt(tb, tb.TempDir())
}

// OpenPebbleAt opens an embedded store in dir, closed when tb ends: for
// tests that reopen a directory.
func OpenPebbleAt(tb testing.TB, dir string) kv.Store {
	tb.Helper()
	s, err := pebblekv.Open(pebblekv.Options{Dir: dir})
	if err != nil {
		tb.Fatalf("open pebble store: %v", err)
	}
	closeAtEnd(tb, s)
	return s
}

// OpenPostgres opens a PostgreSQL store on a fresh database of the test
// binary's throwaway cluster.
func OpenPostgres(tb testing.TB) kv.Store {
	tb.Helper()
	s, err := sqlkv.Open(context.Background(), sqlkv.Options{URL: pgtest.NewDatabase(tb)})
	if err != nil {
		tb.Fatalf("open postgres store: %v", err)
	}
	closeAtEnd(tb, s)
	return s
}

// Durable is a store's data that outlives the stores opened on it.
type Durable struct {
	// Open opens a store on the data, closed when the test ends (closing
	// it earlier is fine). Each store sees what the last one committed.
	Open func() kv.Store
	// ServeArgs are the `folio serve` flags that open the same data, for
	// tests that run the binary.
	ServeArgs []string
}

func durablePebble(tb testing.TB) Durable {
	dir := tb.TempDir()
	return Durable{Open: func() kv.Store { return OpenPebbleAt(tb, dir) }, ServeArgs: []string{"--data-dir", dir}}
}

func durablePostgres(tb testing.TB) Durable {
	url := pgtest.NewDatabase(tb)
	open := func() kv.Store {
		tb.Helper()
		s, err := sqlkv.Open(context.Background(), sqlkv.Options{URL: url})
		if err != nil {
			tb.Fatalf("open postgres store: %v", err)
		}
		closeAtEnd(tb, s)
		return s
	}
	return Durable{Open: open, ServeArgs: []string{"--engine", "postgres", "--postgres-url", url}}
}

func closeAtEnd(tb testing.TB, s kv.Store) {
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close the %T store: %v", s, err)
		}
	})
}

// Each runs fn as a parallel subtest per backend.
func Each(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range All {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// EachB runs fn as a sub-benchmark per backend, one after the other so
// that they do not compete for the machine.
func EachB(b *testing.B, fn func(b *testing.B, be Backend)) {
	b.Helper()
	for _, be := range All {
		b.Run(be.Name, func(b *testing.B) { fn(b, be) })
	}
}

// Main runs a test binary's tests and then stops the PostgreSQL cluster if
// one was started. Call it from TestMain.
func Main(m *testing.M) int { return pgtest.Main(m) }
