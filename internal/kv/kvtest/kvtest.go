// Package kvtest is the conformance suite every kv backend passes. A backend
// runs it with one call:
//
//	func TestConformance(t *testing.T) {
//		kvtest.Run(t, kvtest.Harness{New: func(t *testing.T) kv.Store { ... }})
//	}
//
// and the crash test with Crash (see crash.go).
package kvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// Harness tells the suite how to get stores of the backend under test.
type Harness struct {
	// New returns an empty, open store. The suite closes it.
	New func(t *testing.T) kv.Store
	// SpuriousConflicts: the backend may reject a commit that wrote with a
	// conflict no other commit explains (sqlkv: a commit racing the
	// background fold of counter deltas into the same rows). The random
	// model test then accepts such conflicts instead of failing.
	SpuriousConflicts bool
}

// Run runs every conformance test against the backend.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s kv.Store)
	}{
		{"GetSetClear", testGetSetClear},
		{"ReadYourWritesGet", testReadYourWritesGet},
		{"ReadYourWritesScan", testReadYourWritesScan},
		{"GetMany", testGetMany},
		{"GetManyConflicts", testGetManyConflicts},
		{"Expect", testExpect},
		{"ExpectAfterWrites", testExpectAfterWrites},
		{"ScanOrderBoundsLimit", testScanOrderBoundsLimit},
		{"ScanWhileWriting", testScanWhileWriting},
		{"Isolation", testIsolation},
		{"ReadVersionFixedByFirstRead", testReadVersionFixedByFirstRead},
		{"WriteSkewRejected", testWriteSkew},
		{"PhantomRejected", testPhantom},
		{"ReadOnlyNeverConflicts", testReadOnlyNeverConflicts},
		{"BlindWritesDoNotConflict", testBlindWrites},
		{"SnapshotReadsDoNotConflict", testSnapshotReads},
		{"ScanRecordsOnlyWhatItRead", testScanStopsEarly},
		{"ExplicitReadConflictRange", testExplicitConflictRange},
		{"ClearRangeConflicts", testClearRangeConflicts},
		{"AtomicAdd", testAtomicAdd},
		{"ConcurrentAddsNeverConflict", testConcurrentAdds},
		{"AddConflictsWithReaders", testAddConflictsWithReaders},
		{"LogCommitOrderAndAtomicity", testLogOrder},
		{"LogWait", testLogWait},
		{"LogTrim", testLogTrim},
		{"LogBytes", testLogBytes},
		{"LogConcurrentReadersSeeNoGaps", testLogNoGaps},
		{"TxLifecycle", testTxLifecycle},
		{"Ping", testPing},
		{"Limits", testLimits},
		{"RunRetriesConflicts", testRunRetries},
		{"Bank", testBank},
		{"RandomAgainstModel", func(t *testing.T, s kv.Store) { testModel(t, s, h) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := h.New(t)
			t.Cleanup(func() { s.Close() })
			tc.fn(t, s)
		})
	}
}

var bg = context.Background()

// set commits the given key/value pairs in one transaction.
func set(t *testing.T, s kv.Store, kvs ...string) kv.Position {
	t.Helper()
	pos, err := kv.Run(bg, s, func(tx kv.Tx) error {
		for i := 0; i+1 < len(kvs); i += 2 {
			if err := tx.Set([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	return pos
}

func begin(t *testing.T, s kv.Store) kv.Tx {
	t.Helper()
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	t.Cleanup(tx.Rollback)
	return tx
}

func mustGet(t *testing.T, r kv.Reader, key string) string {
	t.Helper()
	v, err := r.Get(bg, []byte(key))
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v)
}

func mustMissing(t *testing.T, r kv.Reader, key string) {
	t.Helper()
	v, err := r.Get(bg, []byte(key))
	if !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("get %q: want ErrNotFound, got %q, %v", key, v, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// scan returns "k=v" strings of a scan.
func scan(t *testing.T, r kv.Reader, begin, end string, opts kv.ScanOptions) []string {
	t.Helper()
	rng := kv.Range{Begin: []byte(begin)}
	if end != "" {
		rng.End = []byte(end)
	}
	it := r.Scan(bg, rng, opts)
	defer it.Close()
	var out []string
	for it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan [%q,%q): %v", begin, end, err)
	}
	return out
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func commit(t *testing.T, tx kv.Tx) kv.Position {
	t.Helper()
	pos, err := tx.Commit(bg)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return pos
}

func wantConflict(t *testing.T, tx kv.Tx) {
	t.Helper()
	_, err := tx.Commit(bg)
	if !errors.Is(err, kv.ErrConflict) || !kv.IsRetryable(err) {
		t.Fatalf("commit: want a retryable conflict, got %v", err)
	}
}

func counter(t *testing.T, r kv.Reader, key string) int64 {
	t.Helper()
	v, err := r.Get(bg, []byte(key))
	if errors.Is(err, kv.ErrNotFound) {
		return 0
	}
	must(t, err)
	return kv.DecodeCounter(v)
}

func testGetSetClear(t *testing.T, s kv.Store) {
	mustMissing(t, begin(t, s), "a")
	set(t, s, "a", "1", "b", "2")
	tx := begin(t, s)
	if got := mustGet(t, tx, "a"); got != "1" {
		t.Fatalf("a = %q", got)
	}
	must(t, tx.Clear([]byte("a")))
	must(t, tx.Set([]byte("b"), []byte("22")))
	must(t, tx.Set([]byte("empty"), nil))
	commit(t, tx)
	r := begin(t, s)
	mustMissing(t, r, "a")
	if got := mustGet(t, r, "b"); got != "22" {
		t.Fatalf("b = %q", got)
	}
	if v, err := r.Get(bg, []byte("empty")); err != nil || len(v) != 0 {
		t.Fatalf("empty value: %q, %v", v, err)
	}
}

func testReadYourWritesGet(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "2", "c", "3", "n", "9")
	tx := begin(t, s)
	must(t, tx.Set([]byte("a"), []byte("10")))
	must(t, tx.Clear([]byte("b")))
	must(t, tx.Set([]byte("new"), []byte("x")))
	must(t, tx.ClearRange(kv.Range{Begin: []byte("c"), End: []byte("o")}))
	must(t, tx.Set([]byte("d"), []byte("after-clear")))
	if got := mustGet(t, tx, "a"); got != "10" {
		t.Fatalf("a = %q", got)
	}
	mustMissing(t, tx, "b")
	mustMissing(t, tx, "c")
	mustMissing(t, tx, "n")
	mustMissing(t, tx, "new") // set before the ClearRange covering it
	if got := mustGet(t, tx, "d"); got != "after-clear" {
		t.Fatalf("d = %q", got)
	}
	// The snapshot view sees the same own writes.
	if got := mustGet(t, tx.Snapshot(), "a"); got != "10" {
		t.Fatalf("snapshot a = %q", got)
	}
	// Others see nothing before commit.
	other := begin(t, s)
	if got := mustGet(t, other, "a"); got != "1" {
		t.Fatalf("other a = %q", got)
	}
	commit(t, tx)
	after := begin(t, s)
	equal(t, "after commit", scan(t, after, "", "", kv.ScanOptions{}), []string{"a=10", "d=after-clear"})
}

// testGetMany reads stored, missing, empty, buffered and counter keys at
// once, and wants what a Get of each gives.
func testGetMany(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "", "c", "3", "d", "4", "o1", "x", "p", string(kv.EncodeCounter(40)))
	_, err := kv.Run(bg, s, func(tx kv.Tx) error {
		if err := tx.Add([]byte("n"), 5); err != nil {
			return err
		}
		return tx.Add([]byte("p"), 2)
	})
	must(t, err)
	tx := begin(t, s)
	must(t, tx.Set([]byte("c"), []byte("new")))
	must(t, tx.Set([]byte("e"), nil))
	must(t, tx.Clear([]byte("d")))
	must(t, tx.ClearRange(kv.PrefixRange([]byte("o"))))
	must(t, tx.Add([]byte("n"), 2))
	must(t, tx.Add([]byte("fresh"), 1))
	keys := []string{"a", "b", "missing", "c", "d", "o1", "n", "fresh", "e", "p", "a"}
	want := []string{"1", "", "<none>", "new", "<none>", "<none>", "7", "1", "", "42", "1"}
	counters := map[string]bool{"n": true, "fresh": true, "p": true}
	show := func(key string, v []byte, found bool) string {
		switch {
		case !found:
			return "<none>"
		case counters[key]:
			return fmt.Sprint(kv.DecodeCounter(v))
		}
		return string(v)
	}
	bkeys := make([][]byte, len(keys))
	for i, k := range keys {
		bkeys[i] = []byte(k)
	}
	// GetManyInto's buffer starts with bytes of its own, to be written
	// over, and is used twice: the second read must not see the first's.
	buf := []byte("stale bytes of an earlier read")
	for _, r := range []struct {
		name    string
		reader  kv.Reader
		getMany func() ([][]byte, error)
	}{
		{"tx", tx, func() ([][]byte, error) { return tx.GetMany(bg, bkeys) }},
		{"snapshot", tx.Snapshot(), func() ([][]byte, error) { return tx.Snapshot().GetMany(bg, bkeys) }},
		{"GetManyInto", tx, func() ([][]byte, error) { return kv.GetManyInto(bg, tx, bkeys, &buf) }},
		{"GetManyInto again", tx, func() ([][]byte, error) {
			if _, err := kv.GetManyInto(bg, tx, [][]byte{[]byte("c"), []byte("a"), []byte("missing"), []byte("p")}, &buf); err != nil {
				return nil, err
			}
			return kv.GetManyInto(bg, tx, bkeys, &buf)
		}},
	} {
		got, err := r.getMany()
		must(t, err)
		if len(got) != len(keys) {
			t.Fatalf("%s: %d values for %d keys", r.name, len(got), len(keys))
		}
		for i, k := range keys {
			v, err := r.reader.Get(bg, bkeys[i])
			if err != nil && !errors.Is(err, kv.ErrNotFound) {
				t.Fatal(err)
			}
			one := show(k, v, err == nil)
			if many := show(k, got[i], got[i] != nil); many != want[i] || one != want[i] {
				t.Errorf("%s: %q: GetMany %q, Get %q, want %q", r.name, k, many, one, want[i])
			}
		}
	}
	if got, err := tx.GetMany(bg, nil); err != nil || len(got) != 0 {
		t.Fatalf("no keys: %q, %v", got, err)
	}
	long := make([]byte, 1<<20)
	if _, err := tx.GetMany(bg, [][]byte{[]byte("a"), long}); !errors.Is(err, kv.ErrKeyTooLarge) {
		t.Fatalf("a key over the limit: %v", err)
	}
	// After a commit from elsewhere, a transaction that read nothing yet
	// reads it; one that read keeps its snapshot.
	r := begin(t, s)
	mustGet(t, r, "a")
	set(t, s, "a", "2")
	if got, err := r.GetMany(bg, [][]byte{[]byte("a")}); err != nil || string(got[0]) != "1" {
		t.Fatalf("repeat read in GetMany: %q, %v", got, err)
	}
}

// testExpect: a value taken from a cache is checked with the next read (a
// Get, a GetMany, a scan, a snapshot read) or at commit; a stale one fails
// that read or commit with a retryable conflict and calls its stale func;
// the key counts as read.
func testExpect(t *testing.T, s kv.Store) {
	set(t, s, "cat", "v1", "doc", "d")
	type step struct {
		name string
		do   func(tx kv.Tx) error
	}
	reads := []step{
		{"Get", func(tx kv.Tx) error { _, err := tx.Get(bg, []byte("doc")); return err }},
		{"Get of a missing key", func(tx kv.Tx) error {
			if _, err := tx.Get(bg, []byte("nothing")); !errors.Is(err, kv.ErrNotFound) {
				return err
			}
			return nil
		}},
		{"snapshot Get", func(tx kv.Tx) error { _, err := tx.Snapshot().Get(bg, []byte("doc")); return err }},
		{"GetMany", func(tx kv.Tx) error { _, err := tx.GetMany(bg, [][]byte{[]byte("doc"), []byte("x")}); return err }},
		{"Scan", func(tx kv.Tx) error {
			it := tx.Scan(bg, kv.Range{Begin: []byte("d"), End: []byte("e")}, kv.ScanOptions{})
			defer it.Close()
			for it.Next() {
			}
			return it.Err()
		}},
		{"CheckExpected", func(tx kv.Tx) error { return tx.CheckExpected(bg) }},
		{"commit", func(tx kv.Tx) error {
			if err := tx.Set([]byte("w"), []byte("1")); err != nil {
				return err
			}
			_, err := tx.Commit(bg)
			return err
		}},
	}
	for _, r := range reads {
		for _, c := range []struct {
			key, value string
			absent     bool
			stale      bool
		}{
			{key: "cat", value: "v1"},
			{key: "none", absent: true},
			{key: "cat", value: "v0", stale: true},
			{key: "cat", absent: true, stale: true},
			{key: "none", value: "v1", stale: true},
		} {
			tx := begin(t, s)
			var value []byte
			if !c.absent {
				value = []byte(c.value)
			}
			called := false
			must(t, tx.Expect([]byte(c.key), value, func() { called = true }))
			err := r.do(tx)
			switch {
			case c.stale && (!errors.Is(err, kv.ErrConflict) || !kv.IsRetryable(err) || !called):
				t.Errorf("%s after a stale Expect(%q, %q): %v (stale called: %v), want a retryable conflict", r.name, c.key, value, err, called)
			case !c.stale && (err != nil || called):
				t.Errorf("%s after Expect(%q, %q): %v (stale called: %v)", r.name, c.key, value, err, called)
			}
			if c.stale && r.name != "commit" {
				if _, err := tx.Commit(bg); !errors.Is(err, kv.ErrConflict) {
					t.Errorf("%s: commit after a failed expectation: %v", r.name, err)
				}
			}
			tx.Rollback()
		}
	}
	// The key counts as read: a write to it after the transaction's
	// snapshot makes its commit conflict.
	tx := begin(t, s)
	must(t, tx.Expect([]byte("cat"), []byte("v1"), nil))
	mustGet(t, tx, "doc")
	set(t, s, "cat", "v2")
	must(t, tx.Set([]byte("w"), []byte("2")))
	wantConflict(t, tx)
}

// testExpectAfterWrites: an expectation that held before, and that a
// backend may vouch for without a read since (kv.KnownValues), fails once
// the key is written or cleared, whether by a key write or a range clear;
// and it holds at a transaction's own snapshot, taken before the write.
func testExpectAfterWrites(t *testing.T, s kv.Store) {
	set(t, s, "cat", "v1", "doc", "d")
	expect := func(tx kv.Tx, value string) (stale bool, err error) {
		t.Helper()
		var v []byte
		if value != "" {
			v = []byte(value)
		}
		must(t, tx.Expect([]byte("cat"), v, func() { stale = true }))
		_, err = tx.Get(bg, []byte("doc"))
		return stale, err
	}
	holds := func(value, when string) {
		t.Helper()
		tx := begin(t, s)
		defer tx.Rollback()
		if stale, err := expect(tx, value); stale || err != nil {
			t.Fatalf("%s: Expect(cat, %q): %v (stale: %v)", when, value, err, stale)
		}
	}
	fails := func(value, when string) {
		t.Helper()
		tx := begin(t, s)
		defer tx.Rollback()
		if stale, err := expect(tx, value); !stale || !errors.Is(err, kv.ErrConflict) {
			t.Fatalf("%s: Expect(cat, %q): %v (stale: %v), want a conflict", when, value, err, stale)
		}
	}
	for i := 0; i < 3; i++ {
		holds("v1", "unchanged")
	}
	before := begin(t, s) // its snapshot, taken by its first read, holds v1 whatever comes next
	defer before.Rollback()
	mustGet(t, before, "doc")
	set(t, s, "other", "x")
	holds("v1", "after a write of another key")
	set(t, s, "cat", "v2")
	fails("v1", "after the key was written")
	holds("v2", "the new value")
	holds("v2", "the new value again")
	if stale, err := expect(before, "v1"); stale || err != nil {
		t.Fatalf("at a snapshot before the write: Expect(cat, v1): %v (stale: %v)", err, stale)
	}
	if _, err := kv.Run(bg, s, func(tx kv.Tx) error { return tx.ClearRange(kv.Range{Begin: []byte("c"), End: []byte("d")}) }); err != nil {
		t.Fatal(err)
	}
	fails("v2", "after a range clear")
	holds("", "absent after the clear")
	holds("", "absent again")
	set(t, s, "cat", "v3")
	fails("", "written again")
	holds("v3", "the newest value")
}

// testGetManyConflicts: GetMany (and GetManyInto) records every key it
// read as Get does, and a snapshot GetMany none.
func testGetManyConflicts(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "1")
	t1, t2, t3 := begin(t, s), begin(t, s), begin(t, s)
	if _, err := t1.GetMany(bg, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	if _, err := kv.GetManyInto(bg, t3, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, &buf); err != nil {
		t.Fatal(err)
	}
	if _, err := t2.Snapshot().GetMany(bg, [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	must(t, t1.Set([]byte("x"), []byte("1")))
	must(t, t2.Set([]byte("y"), []byte("1")))
	must(t, t3.Set([]byte("z"), []byte("1")))
	set(t, s, "c", "new") // a key that was missing when read
	wantConflict(t, t1)
	commit(t, t2)
	set(t, s, "b", "2")
	wantConflict(t, t3)
}

func testReadYourWritesScan(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
	tx := begin(t, s)
	must(t, tx.Set([]byte("b"), []byte("20")))
	must(t, tx.Clear([]byte("c")))
	must(t, tx.Set([]byte("cc"), []byte("new")))
	must(t, tx.ClearRange(kv.Range{Begin: []byte("d"), End: []byte("e")}))
	must(t, tx.Add([]byte("a0"), 7))
	want := []string{"a=1", "a0=" + string(kv.EncodeCounter(7)), "b=20", "cc=new", "e=5"}
	equal(t, "forward", scan(t, tx, "", "", kv.ScanOptions{}), want)
	rev := make([]string, len(want))
	for i := range want {
		rev[i] = want[len(want)-1-i]
	}
	equal(t, "reverse", scan(t, tx, "", "", kv.ScanOptions{Reverse: true}), rev)
	equal(t, "limit", scan(t, tx, "a0", "", kv.ScanOptions{Limit: 2}), []string{"a0=" + string(kv.EncodeCounter(7)), "b=20"})
	equal(t, "reverse limit", scan(t, tx, "", "cc", kv.ScanOptions{Reverse: true, Limit: 2}), []string{"b=20", "a0=" + string(kv.EncodeCounter(7))})
	// Clearing everything then writing one key shows only that key.
	must(t, tx.ClearRange(kv.Range{Begin: []byte("")}))
	must(t, tx.Set([]byte("z"), []byte("last")))
	equal(t, "after clear all", scan(t, tx, "", "", kv.ScanOptions{}), []string{"z=last"})
}

func testScanOrderBoundsLimit(t *testing.T, s kv.Store) {
	var kvs []string
	for i := 0; i < 50; i++ {
		kvs = append(kvs, fmt.Sprintf("k%03d", i), fmt.Sprint(i))
	}
	kvs = append(kvs, "j", "before", "l", "after", "k\x00", "zero")
	set(t, s, kvs...)
	tx := begin(t, s)
	got := scan(t, tx, "k", "l", kv.ScanOptions{})
	if len(got) != 51 || got[0] != "k\x00=zero" || got[1] != "k000=0" || got[50] != "k049=49" {
		t.Fatalf("bounded scan: %d keys, %q ... %q", len(got), got[0], got[len(got)-1])
	}
	for i := 2; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("out of order: %q then %q", got[i-1], got[i])
		}
	}
	equal(t, "half-open end", scan(t, tx, "k010", "k013", kv.ScanOptions{}), []string{"k010=10", "k011=11", "k012=12"})
	equal(t, "reverse bounded", scan(t, tx, "k010", "k013", kv.ScanOptions{Reverse: true}), []string{"k012=12", "k011=11", "k010=10"})
	equal(t, "limit", scan(t, tx, "k", "", kv.ScanOptions{Limit: 3}), []string{"k\x00=zero", "k000=0", "k001=1"})
	equal(t, "reverse limit open end", scan(t, tx, "k", "", kv.ScanOptions{Reverse: true, Limit: 2}), []string{"l=after", "k049=49"})
	equal(t, "empty range", scan(t, tx, "k5", "k6", kv.ScanOptions{}), nil)
	pr := kv.PrefixRange([]byte("k04"))
	it := tx.Scan(bg, pr, kv.ScanOptions{})
	n := 0
	for it.Next() {
		n++
	}
	must(t, it.Err())
	it.Close()
	if n != 10 {
		t.Fatalf("prefix k04: %d keys, want 10", n)
	}
	// A range whose begin is after its end is refused.
	it = tx.Scan(bg, kv.Range{Begin: []byte("b"), End: []byte("a")}, kv.ScanOptions{})
	if it.Next() || !errors.Is(it.Err(), kv.ErrInvalidRange) {
		t.Fatalf("inverted range: want ErrInvalidRange, got %v", it.Err())
	}
	it.Close()
}

func testScanWhileWriting(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "2", "c", "3")
	tx := begin(t, s)
	it := tx.Scan(bg, kv.Range{}, kv.ScanOptions{})
	defer it.Close()
	var got []string
	for it.Next() {
		got = append(got, string(it.Key()))
		// Writes during the scan do not disturb it.
		must(t, tx.Set([]byte("b2"), []byte("x")))
		must(t, tx.Clear([]byte("c")))
	}
	must(t, it.Err())
	equal(t, "scan during writes", got, []string{"a", "b", "c"})
	equal(t, "scan after writes", scan(t, tx, "", "", kv.ScanOptions{}), []string{"a=1", "b=2", "b2=x"})

	// Nor do adds folded into buffered writes the scan has yet to reach
	// (found by the random model test).
	must(t, tx.Set([]byte("s"), []byte("set")))
	must(t, tx.Clear([]byte("t")))
	must(t, tx.Add([]byte("u"), 1))
	want := scan(t, tx, "r", "", kv.ScanOptions{})
	for _, reverse := range []bool{false, true} {
		it := tx.Scan(bg, kv.Range{Begin: []byte("r")}, kv.ScanOptions{Reverse: reverse})
		got = nil
		for it.Next() {
			got = append(got, string(it.Key())+"="+string(it.Value()))
			for _, k := range []string{"s", "t", "u"} {
				must(t, tx.Add([]byte(k), 1))
			}
		}
		must(t, it.Err())
		it.Close()
		if reverse {
			slices.Reverse(got)
		}
		equal(t, fmt.Sprintf("scan during adds (reverse %v)", reverse), got, want)
		want = scan(t, tx, "r", "", kv.ScanOptions{})
	}
}

func testIsolation(t *testing.T, s kv.Store) {
	set(t, s, "x", "1")
	reader := begin(t, s)
	if got := mustGet(t, reader, "x"); got != "1" {
		t.Fatalf("x = %q", got)
	}
	set(t, s, "x", "2", "y", "new")
	// The reader keeps its snapshot: repeatable reads, no phantoms.
	if got := mustGet(t, reader, "x"); got != "1" {
		t.Fatalf("repeat read x = %q", got)
	}
	mustMissing(t, reader, "y")
	equal(t, "snapshot scan", scan(t, reader, "", "", kv.ScanOptions{}), []string{"x=1"})
	// A new transaction sees the commit.
	if got := mustGet(t, begin(t, s), "x"); got != "2" {
		t.Fatalf("new tx x = %q", got)
	}
}

// testReadVersionFixedByFirstRead: a transaction reads at the newest commit
// when it begins or, on a backend that takes its snapshot lazily, when it
// first reads; from its first read on, it keeps that snapshot. Either is a
// valid serialization point, since it has observed nothing before.
func testReadVersionFixedByFirstRead(t *testing.T, s kv.Store) {
	set(t, s, "x", "1")
	tx := begin(t, s)
	set(t, s, "x", "2")
	first := mustGet(t, tx, "x")
	if first != "1" && first != "2" {
		t.Fatalf("first read x = %q, want 1 (snapshot at Begin) or 2 (at the first read)", first)
	}
	set(t, s, "x", "3")
	if got := mustGet(t, tx, "x"); got != first {
		t.Fatalf("x read %q, then %q", first, got)
	}
	// Whichever it is, a commit after the first read that wrote what the
	// transaction read conflicts.
	must(t, tx.Set([]byte("y"), []byte("1")))
	wantConflict(t, tx)
	// And a transaction that read nothing conflicts with nothing.
	blind := begin(t, s)
	must(t, blind.Set([]byte("x"), []byte("4")))
	set(t, s, "x", "5")
	commit(t, blind)
}

func testWriteSkew(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "1")
	t1, t2 := begin(t, s), begin(t, s)
	mustGet(t, t1, "a")
	mustGet(t, t1, "b")
	mustGet(t, t2, "a")
	mustGet(t, t2, "b")
	must(t, t1.Set([]byte("a"), []byte("0")))
	must(t, t2.Set([]byte("b"), []byte("0")))
	commit(t, t1)
	wantConflict(t, t2)
	r := begin(t, s)
	if mustGet(t, r, "a") != "0" || mustGet(t, r, "b") != "1" {
		t.Fatalf("after write skew: a=%s b=%s", mustGet(t, r, "a"), mustGet(t, r, "b"))
	}
}

func testPhantom(t *testing.T, s kv.Store) {
	set(t, s, "p/", "marker")
	t1, t2 := begin(t, s), begin(t, s)
	equal(t, "t1 empty", scan(t, t1, "q/", "q0", kv.ScanOptions{}), nil)
	equal(t, "t2 empty", scan(t, t2, "q/", "q0", kv.ScanOptions{}), nil)
	must(t, t1.Set([]byte("q/1"), []byte("one")))
	must(t, t2.Set([]byte("q/2"), []byte("two")))
	commit(t, t1)
	wantConflict(t, t2)
	equal(t, "after phantom", scan(t, begin(t, s), "q/", "q0", kv.ScanOptions{}), []string{"q/1=one"})
}

func testReadOnlyNeverConflicts(t *testing.T, s kv.Store) {
	set(t, s, "a", "1")
	ro := begin(t, s)
	mustGet(t, ro, "a")
	scan(t, ro, "", "", kv.ScanOptions{})
	set(t, s, "a", "2", "b", "3")
	if pos, err := ro.Commit(bg); err != nil || pos != ro.ReadVersion() {
		t.Fatalf("read-only commit: %v, %v (read version %d)", pos, err, ro.ReadVersion())
	}
}

func testBlindWrites(t *testing.T, s kv.Store) {
	t1, t2 := begin(t, s), begin(t, s)
	must(t, t1.Set([]byte("k"), []byte("1")))
	must(t, t2.Set([]byte("k"), []byte("2")))
	p1 := commit(t, t1)
	p2 := commit(t, t2)
	if p2 <= p1 {
		t.Fatalf("positions not increasing: %d then %d", p1, p2)
	}
	if got := mustGet(t, begin(t, s), "k"); got != "2" {
		t.Fatalf("last writer should win, k = %q", got)
	}
}

func testSnapshotReads(t *testing.T, s kv.Store) {
	set(t, s, "a", "1", "b", "1")
	tx := begin(t, s)
	mustGet(t, tx.Snapshot(), "a")
	scan(t, tx.Snapshot(), "", "", kv.ScanOptions{})
	set(t, s, "a", "2", "c", "2")
	must(t, tx.Set([]byte("b"), []byte("x")))
	commit(t, tx)
}

func testScanStopsEarly(t *testing.T, s kv.Store) {
	set(t, s, "s/a", "1", "s/b", "2", "s/c", "3", "s/d", "4")
	// A scan that stops after two keys read [s/, s/b]; writes past that are
	// not conflicts, writes inside are.
	tx := begin(t, s)
	equal(t, "limited", scan(t, tx, "s/", "s0", kv.ScanOptions{Limit: 2}), []string{"s/a=1", "s/b=2"})
	must(t, tx.Set([]byte("out"), []byte("1")))
	set(t, s, "s/c", "30", "s/zz", "new")
	commit(t, tx)

	tx = begin(t, s)
	equal(t, "limited", scan(t, tx, "s/", "s0", kv.ScanOptions{Limit: 2}), []string{"s/a=1", "s/b=2"})
	must(t, tx.Set([]byte("out"), []byte("2")))
	set(t, s, "s/a5", "inside")
	wantConflict(t, tx)

	// The same in reverse: reading [s/c, s0) from the end.
	tx = begin(t, s)
	equal(t, "reverse limited", scan(t, tx, "s/", "s0", kv.ScanOptions{Reverse: true, Limit: 2}), []string{"s/zz=new", "s/d=4"})
	must(t, tx.Set([]byte("out"), []byte("3")))
	set(t, s, "s/a6", "before")
	commit(t, tx)

	tx = begin(t, s)
	scan(t, tx, "s/", "s0", kv.ScanOptions{Reverse: true, Limit: 2})
	must(t, tx.Set([]byte("out"), []byte("4")))
	set(t, s, "s/e", "inside")
	wantConflict(t, tx)

	// An iterator closed early records up to where it stopped.
	tx = begin(t, s)
	it := tx.Scan(bg, kv.Range{Begin: []byte("s/"), End: []byte("s0")}, kv.ScanOptions{})
	if !it.Next() {
		t.Fatal("no first key")
	}
	it.Close()
	must(t, tx.Set([]byte("out"), []byte("5")))
	set(t, s, "s/y", "outside the read part")
	commit(t, tx)
}

func testExplicitConflictRange(t *testing.T, s kv.Store) {
	tx := begin(t, s)
	mustMissing(t, tx.Snapshot(), "w") // fixes the read version (see testReadVersionFixedByFirstRead)
	must(t, tx.AddReadConflictRange(kv.Range{Begin: []byte("r/"), End: []byte("r0")}))
	must(t, tx.Set([]byte("w"), []byte("1")))
	set(t, s, "r/x", "1")
	wantConflict(t, tx)
}

func testClearRangeConflicts(t *testing.T, s kv.Store) {
	set(t, s, "c/1", "1", "c/2", "2")
	tx := begin(t, s)
	mustGet(t, tx, "c/2")
	must(t, tx.Set([]byte("w"), []byte("1")))
	other := begin(t, s)
	must(t, other.ClearRange(kv.PrefixRange([]byte("c/"))))
	commit(t, other)
	wantConflict(t, tx)
}

func testAtomicAdd(t *testing.T, s kv.Store) {
	tx := begin(t, s)
	must(t, tx.Add([]byte("n"), 5))
	must(t, tx.Add([]byte("n"), -2))
	if got := counter(t, tx, "n"); got != 3 {
		t.Fatalf("own adds: %d", got)
	}
	commit(t, tx)
	// Tried again on a conflict: a backend may fold the deltas just added
	// into the stored value while this reads them (sqlkv does, after its
	// FoldDelay), a conflict for a reader of a counter with recent adds.
	_, err := kv.Run(context.Background(), s, func(tx kv.Tx) error {
		if err := tx.Add([]byte("n"), 10); err != nil {
			return err
		}
		if got := counter(t, tx, "n"); got != 13 {
			t.Fatalf("add over stored value: %d", got)
		}
		return nil
	})
	must(t, err)
	// Set then add, clear then add, clear range then add.
	tx = begin(t, s)
	must(t, tx.Set([]byte("m"), kv.EncodeCounter(100)))
	must(t, tx.Add([]byte("m"), 1))
	must(t, tx.Clear([]byte("n")))
	must(t, tx.Add([]byte("n"), 4))
	must(t, tx.ClearRange(kv.PrefixRange([]byte("o"))))
	must(t, tx.Add([]byte("o1"), 2))
	commit(t, tx)
	r := begin(t, s)
	if m, n, o := counter(t, r, "m"), counter(t, r, "n"), counter(t, r, "o1"); m != 101 || n != 4 || o != 2 {
		t.Fatalf("m=%d n=%d o1=%d, want 101 4 2", m, n, o)
	}
	// A plain value set by another transaction becomes the base of an add.
	set(t, s, "p", string(kv.EncodeCounter(-7)))
	tx = begin(t, s)
	must(t, tx.Add([]byte("p"), 7))
	commit(t, tx)
	if got := counter(t, begin(t, s), "p"); got != 0 {
		t.Fatalf("p = %d", got)
	}
}

func testTxLifecycle(t *testing.T, s kv.Store) {
	tx := begin(t, s)
	must(t, tx.Set([]byte("a"), []byte("1")))
	commit(t, tx)
	if _, err := tx.Get(bg, []byte("a")); !errors.Is(err, kv.ErrTxDone) {
		t.Fatalf("get after commit: %v", err)
	}
	if err := tx.Set([]byte("b"), nil); !errors.Is(err, kv.ErrTxDone) {
		t.Fatalf("set after commit: %v", err)
	}
	if _, err := tx.Commit(bg); !errors.Is(err, kv.ErrTxDone) {
		t.Fatalf("second commit: %v", err)
	}
	tx.Rollback() // harmless after commit

	tx = begin(t, s)
	must(t, tx.Set([]byte("rolled"), []byte("back")))
	it := tx.Scan(bg, kv.Range{}, kv.ScanOptions{})
	tx.Rollback()
	tx.Rollback()
	if it.Next() {
		t.Fatal("scan after rollback returned a key")
	}
	it.Close()
	if _, err := tx.Commit(bg); !errors.Is(err, kv.ErrTxDone) {
		t.Fatalf("commit after rollback: %v", err)
	}
	mustMissing(t, begin(t, s), "rolled")
}

func testPing(t *testing.T, s kv.Store) {
	for range 3 { // cheap and repeatable
		if err := s.Ping(bg); err != nil {
			t.Fatalf("ping an open store: %v", err)
		}
	}
	tx := begin(t, s) // a transaction open does not make the store unready
	if err := s.Ping(bg); err != nil {
		t.Fatalf("ping with a transaction open: %v", err)
	}
	tx.Rollback()
	must(t, s.Close())
	if err := s.Ping(bg); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("ping a closed store: %v, want kv.ErrClosed", err)
	}
}

func testLimits(t *testing.T, s kv.Store) {
	tx := begin(t, s)
	big := bytes.Repeat([]byte("k"), kv.DefaultMaxKeySize+1)
	if err := tx.Set(big, nil); !errors.Is(err, kv.ErrKeyTooLarge) {
		t.Fatalf("big key: %v", err)
	}
	if err := tx.Set([]byte("v"), make([]byte, kv.DefaultMaxValueSize+1)); !errors.Is(err, kv.ErrValueTooLarge) {
		t.Fatalf("big value: %v", err)
	}
	for _, k := range [][]byte{{0xFF}, {0xFF, 'l', 0}} {
		if err := tx.Set(k, nil); !errors.Is(err, kv.ErrReservedKey) {
			t.Fatalf("reserved key %q: %v", k, err)
		}
		if _, err := tx.Get(bg, k); !errors.Is(err, kv.ErrReservedKey) {
			t.Fatalf("get reserved key %q: %v", k, err)
		}
	}
	// The user key space ends before 0xFF: an open-ended scan never shows
	// the backend's own keys.
	must(t, tx.Set([]byte("\xfe"), []byte("last")))
	commit(t, tx)
	set(t, s, "x", "y") // makes sure something is in the log too
	equal(t, "whole space", scan(t, begin(t, s), "", "", kv.ScanOptions{}), []string{"x=y", "\xfe=last"})

	// A transaction that grows too large fails whole.
	tx = begin(t, s)
	chunk := make([]byte, kv.DefaultMaxValueSize)
	var err error
	for i := 0; err == nil && i < 20; i++ {
		err = tx.Set([]byte(fmt.Sprintf("big/%d", i)), chunk)
	}
	if !errors.Is(err, kv.ErrTxTooLarge) {
		t.Fatalf("large transaction: %v", err)
	}
	if _, err := tx.Commit(bg); !errors.Is(err, kv.ErrTxTooLarge) {
		t.Fatalf("commit of a too-large transaction: %v", err)
	}
	equal(t, "nothing of it", scan(t, begin(t, s), "big/", "big0", kv.ScanOptions{}), nil)
}
