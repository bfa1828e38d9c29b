package pebblekv

import (
	"errors"
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
