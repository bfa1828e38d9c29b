package pebblekv

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv"
)

// A commit group sums its transactions' counter deltas into one merge
// operand a counter, and every key ends as it would with a batch for each
// transaction: a Set, Clear or cleared range of a counter between deltas
// keeps its place among them.
func TestGroupCounterSums(t *testing.T) {
	type write func(w *kv.WriteBuffer)
	add := func(k string, d int64) write { return func(w *kv.WriteBuffer) { w.Add([]byte(k), d) } }
	set := func(k string, v int64) write {
		return func(w *kv.WriteBuffer) { w.Set([]byte(k), kv.EncodeCounter(v)) }
	}
	clear := func(k string) write { return func(w *kv.WriteBuffer) { w.Clear([]byte(k)) } }
	clearRange := func(from, to string) write {
		return func(w *kv.WriteBuffer) { w.ClearRange(kv.Range{Begin: []byte(from), End: []byte(to)}) }
	}
	for _, tc := range []struct {
		name    string
		commits [][]write
		merges  int // the group's merge operands
	}{
		{"one counter", [][]write{{add("a", 1)}, {add("a", 2)}, {add("a", -5)}}, 1},
		{"three counters", [][]write{{add("a", 1), add("b", 10), add("c", 100)}, {add("a", 1), add("b", 20), add("c", 200)}}, 3},
		{"a sum of zero", [][]write{{add("a", 1)}, {add("a", -1)}}, 1},
		{"set between deltas", [][]write{{add("a", 1)}, {set("a", 7)}, {add("a", 2)}, {add("a", 3)}}, 2},
		{"clear between deltas", [][]write{{add("a", 4)}, {clear("a")}, {add("a", 2)}}, 2},
		{"cleared range between deltas", [][]write{{add("a", 4), add("z", 1)}, {clearRange("a", "b")}, {add("a", 2), add("z", 1)}}, 3},
		{"cleared range elsewhere", [][]write{{add("a", 4)}, {clearRange("m", "n")}, {add("a", 2)}}, 1},
		// A range's end is not in it: the counter there keeps one sum.
		{"cleared range ending at a counter", [][]write{{add("b", 4)}, {clearRange("a", "b")}, {add("b", 2)}}, 1},
		// Every counter of a cleared range is written before the clear,
		// not only the first.
		{"cleared range over two counters", [][]write{{add("a", 4), add("a2", 5)}, {clearRange("a", "b")}, {add("a", 2), add("a2", 1)}}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grouped, separate := memPebble(t), memPebble(t)
			var reqs []*kv.CommitRequest
			for _, c := range tc.commits {
				w := kv.NewWriteBuffer()
				for _, fn := range c {
					fn(w)
				}
				reqs = append(reqs, &kv.CommitRequest{Writes: w})
			}
			// Each transaction on its own: the reference.
			for i, r := range reqs {
				b := separate.NewBatch()
				var sums counterSums
				if err := writeCommit(b, &sums, r, kv.Position(i+1), newLogSizes(0), newLogTail(0, 16)); err != nil {
					t.Fatal(err)
				}
				if err := sums.write(b); err != nil {
					t.Fatal(err)
				}
				if err := separate.Apply(b, pebble.Sync); err != nil {
					t.Fatal(err)
				}
			}
			// All of them in one group.
			b := grouped.NewBatch()
			var sums counterSums
			for i, r := range reqs {
				if err := writeCommit(b, &sums, r, kv.Position(i+1), newLogSizes(0), newLogTail(0, 16)); err != nil {
					t.Fatal(err)
				}
			}
			if err := sums.write(b); err != nil {
				t.Fatal(err)
			}
			if n := countMerges(t, b); n != tc.merges {
				t.Errorf("the group's batch holds %d merge operands, want %d", n, tc.merges)
			}
			if err := grouped.Apply(b, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"a", "b", "c", "z"} {
				want, got := counterAt(t, separate, k), counterAt(t, grouped, k)
				if got != want {
					t.Errorf("%s: %s after the group, want %s as with a batch a transaction", k, got, want)
				}
			}
		})
	}
}

func memPebble(t *testing.T) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem(), Merger: counterMerger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// counterAt describes key's value in db: absent, or the counter.
func counterAt(t *testing.T, db *pebble.DB, key string) string {
	t.Helper()
	v, closer, err := db.Get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	return fmt.Sprint(kv.DecodeCounter(v))
}

func countMerges(t *testing.T, b *pebble.Batch) int {
	t.Helper()
	n := 0
	r := b.Reader()
	for {
		kind, key, _, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return n
		}
		if kind == pebble.InternalKeyKindMerge && !bytes.HasPrefix(key, logPrefix) {
			n++
		}
	}
}
