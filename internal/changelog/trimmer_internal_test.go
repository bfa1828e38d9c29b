package changelog

import (
	"context"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// The trimmer forgets the notes it no longer needs once it has trimmed:
// ticking for days keeps a retention's worth of them, not one per tick.
func TestTrimmerForgetsOldNotes(t *testing.T) {
	ctx := context.Background()
	s := backendtest.OpenPebble(t)
	l := NewLog(s, Options{Retention: time.Hour})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200 {
		if _, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.AppendLog((&Record{Op: Insert}).Encode()) }); err != nil {
			t.Fatal(err)
		}
		if err := l.Tick(ctx, t0.Add(time.Duration(i)*15*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(l.trim.notes); n > 10 {
		t.Fatalf("%d notes kept after 200 ticks a quarter of an hour apart, with a retention of an hour", n)
	}
}
