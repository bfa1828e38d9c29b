package pebblekv

import (
	"fmt"
	"sync"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// ReadLog returns at most limit entries, defaultLogLimit when limit is 0
// or less, and says how far it read: the last entry returned when it
// stopped at the limit, the newest position otherwise.
func TestReadLogLimit(t *testing.T) {
	const writers, each = 16, 63 // more entries than defaultLogLimit
	const total = writers * each
	s := newStore(t)
	defer s.Close()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := commitKey(s, fmt.Sprintf("w%02d/%02d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	tests := []struct {
		after kv.Position
		limit int
		want  int // entries
	}{
		{0, 0, defaultLogLimit},
		{0, -1, defaultLogLimit},
		{0, 1, 1},
		{0, 2, 2},
		{10, 2, 2},
		{0, total - 1, total - 1},
		{0, total, total},
		{0, total + 1, total},
		{total - 5, 0, 5},
		{total - 5, 5, 5},
		{total, 0, 0},
	}
	for _, tc := range tests {
		entries, upTo, err := s.ReadLog(bg, tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != tc.want {
			t.Errorf("ReadLog(%d, %d): %d entries, want %d", tc.after, tc.limit, len(entries), tc.want)
			continue
		}
		for i, e := range entries {
			if e.Pos != tc.after+kv.Position(i)+1 {
				t.Fatalf("ReadLog(%d, %d): entry %d at position %d", tc.after, tc.limit, i, e.Pos)
			}
		}
		wantUpTo := kv.Position(total)
		if tc.want > 0 && tc.want < total-int(tc.after) {
			wantUpTo = entries[len(entries)-1].Pos
		}
		if upTo != wantUpTo {
			t.Errorf("ReadLog(%d, %d) read up to %d, want %d", tc.after, tc.limit, upTo, wantUpTo)
		}
	}
}

// LogBytes of (p-1, p] is the size of the entry at p alone, and those
// sizes add up to the whole log's.
func TestLogBytesPerEntry(t *testing.T) {
	s := newStore(t)
	defer s.Close()
	sizes := []int{1, 100, 5000, 30}
	for _, size := range sizes {
		if _, err := kv.Run(bg, s, func(tx kv.Tx) error { return tx.AppendLog(make([]byte, size)) }); err != nil {
			t.Fatal(err)
		}
	}
	var sum int64
	for i, size := range sizes {
		p := kv.Position(i + 1)
		n, err := s.LogBytes(bg, p-1, p)
		if err != nil {
			t.Fatal(err)
		}
		if n < int64(size) || n > int64(size)+64 {
			t.Errorf("LogBytes(%d, %d) = %d, want the entry's %d bytes and its key", p-1, p, n, size)
		}
		sum += n
	}
	if all, err := s.LogBytes(bg, 0, kv.Position(len(sizes))); err != nil || all != sum {
		t.Errorf("LogBytes of the whole log: %d, %v; the entries add up to %d", all, err, sum)
	}
}
