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

// GetManyInto copies the values it reads from the store into the caller's
// buffer (the point of it: a search keeps that buffer from one page to the
// next), one after another, and a missing key takes no room.
func TestGetManyIntoFillsTheBuffer(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"apple", "kiwi"} {
		if _, err := commitKey(s, k); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	buf := make([]byte, 0, 64)
	vs, err := kv.GetManyInto(bg, tx, [][]byte{[]byte("kiwi"), []byte("none"), []byte("apple")}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if string(buf) != "kiwiapple" || string(vs[0]) != "kiwi" || vs[1] != nil || string(vs[2]) != "apple" {
		t.Fatalf("buffer %q, values %q", buf, vs)
	}
	buf[0] = 'K'
	if vs[0][0] != 'K' {
		t.Fatal("the values are not in the caller's buffer")
	}
}
