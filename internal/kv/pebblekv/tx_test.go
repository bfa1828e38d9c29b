package pebblekv

import (
	"errors"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// A scan open when the sweeper reclaims its transaction stops at its next
// step with the reason (ErrTxTooOld), and does not go on reading.
func TestReclaimedScanStops(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, err := commitKey(s, k); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	it := tx.Scan(bg, kv.Range{Begin: []byte("a"), End: []byte("z")}, kv.ScanOptions{})
	defer it.Close()
	if !it.Next() || string(it.Key()) != "a" {
		t.Fatalf("the scan's first step: %q, %v", it.Key(), it.Err())
	}
	if n := s.txs.Sweep(time.Now().Add(2 * DefaultMaxTxAge)); n != 1 {
		t.Fatalf("the sweeper reclaimed %d transactions, want 1", n)
	}
	if it.Next() {
		t.Fatalf("a scan of a reclaimed transaction went on to %q", it.Key())
	}
	if !errors.Is(it.Err(), kv.ErrTxTooOld) {
		t.Fatalf("a scan of a reclaimed transaction stopped with %v, want ErrTxTooOld", it.Err())
	}

}
