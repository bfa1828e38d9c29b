package pebblekv

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// The conflict table keeps single keys (in a B-tree) apart from ranges (in
// a list), and isPoint decides which is which. Ranges shaped nearly like a
// single key, such as two adjacent keys merged into one range (a key and
// the same key with a 0 byte after it), or a range ending one byte past its
// start, must still conflict with writes inside them other than their
// first key; and a key must not conflict with its neighbours. A write
// committed at the transaction's read version, which it saw, never
// conflicts, whatever the shapes.
func TestConflictShapes(t *testing.T) {
	get := func(keys ...string) func(kv.Tx) error {
		return func(tx kv.Tx) error {
			for _, k := range keys {
				if _, err := tx.Get(bg, []byte(k)); err != nil && !errors.Is(err, kv.ErrNotFound) {
					return err
				}
			}
			return nil
		}
	}
	readRange := func(begin, end string) func(kv.Tx) error {
		return func(tx kv.Tx) error {
			return tx.AddReadConflictRange(kv.Range{Begin: []byte(begin), End: []byte(end)})
		}
	}
	set := func(keys ...string) func(kv.Tx) error {
		return func(tx kv.Tx) error {
			for _, k := range keys {
				if err := tx.Set([]byte(k), []byte("v")); err != nil {
					return err
				}
			}
			return nil
		}
	}
	clearRange := func(begin, end string) func(kv.Tx) error {
		return func(tx kv.Tx) error {
			return tx.ClearRange(kv.Range{Begin: []byte(begin), End: []byte(end)})
		}
	}
	tests := []struct {
		name     string
		read     func(kv.Tx) error // what the transaction reads
		write    func(kv.Tx) error // what a commit after its read version writes
		conflict bool
	}{
		{"read k, k written", get("k"), set("k"), true},
		{"read k and k\\x00, k\\x00 written", get("k", "k\x00"), set("k\x00"), true},
		{"read k and k\\x00, k written", get("k", "k\x00"), set("k"), true},
		{"read k, k\\x00 written", get("k"), set("k\x00"), false},
		{"read k\\x00, k written", get("k\x00"), set("k"), false},
		{"read [k, kz), k\\x05 written", readRange("k", "kz"), set("k\x05"), true},
		{"read [k, k\\x01), k\\x00\\x05 written", readRange("k", "k\x01"), set("k\x00\x05"), true},
		{"read [k, kz), kz written", readRange("k", "kz"), set("kz"), false},
		{"read k\\x00, k and k\\x00 written", get("k\x00"), set("k", "k\x00"), true},
		{"read k\\x00, k and k\\x00\\x00 written", get("k\x00"), set("k", "k\x00\x00"), false},
		{"read k\\x05, [k, kz) cleared", get("k\x05"), clearRange("k", "kz"), true},
		{"read kz, [k, kz) cleared", get("kz"), clearRange("k", "kz"), false},
		{"read j, [k, kz) cleared", get("j"), clearRange("k", "kz"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, seen := range []bool{false, true} {
				// The same write committed just before the transaction
				// begins, at its read version, is seen and never conflicts.
				s := newStore(t)
				if seen {
					if _, err := kv.Run(bg, s, tc.write); err != nil {
						t.Fatal(err)
					}
				}
				tx, err := s.Begin(bg)
				if err != nil {
					t.Fatal(err)
				}
				if err := tc.read(tx); err != nil {
					t.Fatal(err)
				}
				if err := tx.Set([]byte("w"), []byte("1")); err != nil { // read-only commits never conflict
					t.Fatal(err)
				}
				if !seen {
					if _, err := kv.Run(bg, s, tc.write); err != nil {
						t.Fatal(err)
					}
				}
				_, err = tx.Commit(bg)
				tx.Rollback()
				s.Close()
				switch {
				case seen && err != nil:
					t.Fatalf("commit after the write it read: %v, want no conflict", err)
				case !seen && tc.conflict && !errors.Is(err, kv.ErrConflict):
					t.Fatalf("commit: %v, want a conflict", err)
				case !seen && !tc.conflict && err != nil:
					t.Fatalf("commit: %v, want no conflict", err)
				}
			}
		})
	}
}

// The history is pruned once it holds pruneEveryCommits commits or
// pruneEveryKeys written ranges, not before.
func TestConflictPruneSchedule(t *testing.T) {
	point := func(i int) kv.Range { return kv.KeyRange(fmt.Appendf(nil, "k%06d", i)) }
	tests := []struct {
		name    string
		commits int // recorded, each writing keys keys
		keys    int
		want    bool
	}{
		{"no commit", 0, 0, false},
		{"one commit fewer than the bound", pruneEveryCommits - 1, 1, false},
		{"as many commits as the bound", pruneEveryCommits, 1, true},
		{"one key fewer than the bound", 1, pruneEveryKeys - 1, false},
		{"as many keys as the bound", 1, pruneEveryKeys, true},
		{"as many keys as the bound in two commits", 2, pruneEveryKeys / 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newConflictTable(0)
			n := 0
			for pos := 1; pos <= tc.commits; pos++ {
				writes := make([]kv.Range, tc.keys)
				for i := range writes {
					writes[i] = point(n)
					n++
				}
				c.record(kv.Position(pos), writes)
			}
			if got := c.needsPrune(); got != tc.want {
				t.Errorf("needsPrune after %d commits of %d keys: %v, want %v", tc.commits, tc.keys, got, tc.want)
			}
		})
	}
}

// prune forgets exactly the writes at or below the oldest read version: a
// key rewritten after it, and ranges cleared after it, still conflict;
// what is forgotten no longer takes memory; a read version below the
// pruned point is refused as too old.
func TestConflictPrune(t *testing.T) {
	key := func(s string) kv.Range { return kv.KeyRange([]byte(s)) }
	span := func(b, e string) kv.Range { return kv.Range{Begin: []byte(b), End: []byte(e)} }
	// Positions 1 to 6: a, b and [r0, r5) at 1 to 3, a again and [r5, r9) at
	// 4 and 5, c at 6.
	history := [][]kv.Range{{key("a")}, {key("b")}, {span("r0", "r5")}, {key("a")}, {span("r5", "r9")}, {key("c")}}
	tests := []struct {
		oldest   kv.Position
		history  int      // commits kept
		keys     []string // single keys kept
		ranges   int      // cleared ranges kept
		prunedTo kv.Position
	}{
		{0, 6, []string{"a", "b", "c"}, 2, 0},
		{1, 5, []string{"a", "b", "c"}, 2, 1}, // a's entry is position 4's
		{2, 4, []string{"a", "c"}, 2, 2},
		{3, 3, []string{"a", "c"}, 1, 3},
		{4, 2, []string{"c"}, 1, 4},
		{5, 1, []string{"c"}, 0, 5},
		{6, 0, nil, 0, 6},
		{7, 0, nil, 0, 7},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("oldest ", tc.oldest), func(t *testing.T) {
			c := newConflictTable(0)
			for i, writes := range history {
				c.record(kv.Position(i+1), writes)
			}
			c.prune(tc.oldest)
			var keys []string
			c.keys.Scan(func(w keyWrite) bool {
				keys = append(keys, string(w.key))
				return true
			})
			if len(c.history) != tc.history || !slices.Equal(keys, tc.keys) || len(c.ranges) != tc.ranges || c.prunedTo != tc.prunedTo {
				t.Fatalf("after prune(%d): %d commits, keys %q, %d ranges, pruned to %d; want %d, %q, %d, %d",
					tc.oldest, len(c.history), keys, len(c.ranges), c.prunedTo, tc.history, tc.keys, tc.ranges, tc.prunedTo)
			}
			wantHistoryKeys := 0
			for _, h := range c.history {
				wantHistoryKeys += len(h.writes)
			}
			if c.historyKeys != wantHistoryKeys {
				t.Errorf("historyKeys %d, want %d", c.historyKeys, wantHistoryKeys)
			}
			// A transaction reading at the oldest version conflicts with
			// every later write, as before the prune, and only with those.
			for _, writes := range history {
				read := writes[0]
				want := false
				for j, later := range history {
					want = want || kv.Position(j+1) > tc.oldest && later[0].Overlaps(read)
				}
				if err := c.check(tc.oldest, []kv.Range{read}); want != errors.Is(err, kv.ErrConflict) || !want && err != nil {
					t.Errorf("a read at %d of %q: %v, want a conflict: %v", tc.oldest, read.Begin, err, want)
				}
			}
			if tc.oldest > 0 {
				if err := c.check(tc.oldest-1, []kv.Range{key("z")}); !errors.Is(err, kv.ErrTxTooOld) {
					t.Errorf("a read at %d, below the pruned point: %v, want ErrTxTooOld", tc.oldest-1, err)
				}
			}
		})
	}
	// A prune to an older point than the last changes nothing.
	c := newConflictTable(0)
	for i, writes := range history {
		c.record(kv.Position(i+1), writes)
	}
	c.prune(3)
	c.prune(2)
	if len(c.history) != 3 || c.prunedTo != 3 {
		t.Errorf("prune(2) after prune(3): %d commits kept, pruned to %d; want 3, 3", len(c.history), c.prunedTo)
	}
}
