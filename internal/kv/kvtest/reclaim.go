package kvtest

import (
	"errors"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// Reclaim checks that a store reclaims transactions: one abandoned past the
// maximum age fails with kv.ErrTxTooOld and is dropped from the store's
// open transactions without its owner ending it, and Close ends the rest
// with kv.ErrClosed. s must be open with MaxTxAge maxAge; tracked counts
// the store's open transactions. A backend's tests call it:
//
//	func TestReclaim(t *testing.T) {
//		s := open(t, Options{MaxTxAge: 100 * time.Millisecond})
//		kvtest.Reclaim(t, s, 100*time.Millisecond, s.txs.Len)
//	}
func Reclaim(t *testing.T, s kv.Store, maxAge time.Duration, tracked func() int) {
	old := begin(t, s)
	must(t, old.Set([]byte("a"), []byte("1")))
	it := old.Scan(bg, kv.Range{}, kv.ScanOptions{})
	defer it.Close()
	young := begin(t, s)
	// maxAge must leave room for the two begins: the sweeper may reclaim
	// old before young is tracked otherwise.
	if n := tracked(); n != 2 {
		t.Fatalf("%d transactions tracked, want 2", n)
	}
	time.Sleep(maxAge)
	young.Rollback()
	deadline := time.Now().Add(10 * time.Second)
	for tracked() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("an abandoned transaction was not reclaimed (%d still tracked)", tracked())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A key it did not write, so that the read goes to the backend.
	if _, err := old.Get(bg, []byte("b")); !errors.Is(err, kv.ErrTxTooOld) {
		t.Fatalf("get in a reclaimed transaction: %v, want ErrTxTooOld", err)
	}
	if it.Next() || !errors.Is(it.Err(), kv.ErrTxTooOld) {
		t.Fatalf("scan in a reclaimed transaction: %v, want ErrTxTooOld", it.Err())
	}
	if _, err := old.Commit(bg); !errors.Is(err, kv.ErrTxTooOld) || !kv.IsRetryable(err) {
		t.Fatalf("commit of a reclaimed transaction: %v, want a retryable ErrTxTooOld", err)
	}
	mustMissing(t, begin(t, s), "a")

	open := begin(t, s)
	must(t, s.Close())
	if n := tracked(); n != 0 {
		t.Fatalf("%d transactions tracked after Close", n)
	}
	if _, err := open.Get(bg, []byte("b")); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("get after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Begin(bg); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("begin after Close: %v, want ErrClosed", err)
	}
}
