package pebblekv

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// openScan writes a few keys to a new store and returns it with a scan
// over them that has taken its first step and is left open, as a request
// writing its answer to a slow client leaves it.
func openScan(t *testing.T) (*Store, kv.Iterator) {
	t.Helper()
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := kv.Run(ctx, s, func(tx kv.Tx) error {
		for _, k := range []string{"a", "b", "c"} {
			if err := tx.Set([]byte(k), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it := tx.Scan(ctx, kv.Range{Begin: []byte("a"), End: []byte("z")}, kv.ScanOptions{})
	if !it.Next() {
		t.Fatalf("the scan found nothing: %v", it.Err())
	}
	return s, it
}

// Close waits for a scan left open to let go of its snapshot before it
// closes Pebble, which panicked with "element has outstanding references"
// when a node stopped under load with a read still streaming. The scan
// stops at its next step with the store's closing.
func TestCloseWaitsForOpenScans(t *testing.T) {
	s, it := openScan(t)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a scan still read its snapshot", err)
	case <-time.After(200 * time.Millisecond):
	}
	if it.Next() {
		t.Fatal("the scan went on after the store began closing")
	}
	if !errors.Is(it.Err(), kv.ErrClosed) {
		t.Errorf("the scan's error: %v, want %v", it.Err(), kv.ErrClosed)
	}
	it.Close()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the scan was closed")
	}
}

// A scan never closed leaves the store open after closeWait, with an
// error that says so, rather than a panic.
func TestCloseLeavesTheStoreOpenUnderAStuckScan(t *testing.T) {
	defer func(d time.Duration) { closeWait = d }(closeWait)
	closeWait = 100 * time.Millisecond
	s, it := openScan(t)
	err := s.Close()
	if err == nil || !strings.Contains(err.Error(), "1 read snapshots still in use after 100ms") {
		t.Fatalf("Close under a stuck scan: %v", err)
	}
	it.Close() // after Close gave up: no panic either
}
