package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPrefixEndAndKeyAfter(t *testing.T) {
	for _, tc := range []struct{ prefix, end []byte }{
		{[]byte("a"), []byte("b")},
		{[]byte("ab"), []byte("ac")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\x00\xff\xff"), []byte("a\x01")},
		{[]byte("\xfe\xff"), []byte("\xff")},
		{[]byte("\xff"), nil},
		{[]byte("\xff\xff"), nil},
		{[]byte{}, nil},
	} {
		if got := PrefixEnd(tc.prefix); !bytes.Equal(got, tc.end) || (got == nil) != (tc.end == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.prefix, got, tc.end)
		}
		if r := PrefixRange(tc.prefix); !bytes.Equal(r.Begin, tc.prefix) || !bytes.Equal(r.End, tc.end) {
			t.Errorf("PrefixRange(%q) = %q", tc.prefix, r)
		}
	}
	for _, k := range [][]byte{{}, []byte("a"), []byte("a\xff")} {
		want := append(slices.Clone(k), 0)
		if got := KeyAfter(k); !bytes.Equal(got, want) {
			t.Errorf("KeyAfter(%q) = %q, want %q", k, got, want)
		}
		if r := KeyRange(k); !bytes.Equal(r.Begin, k) || !bytes.Equal(r.End, want) {
			t.Errorf("KeyRange(%q) = %q", k, r)
		}
	}
}

// rangeKeys is every key of up to three bytes over a small alphabet that
// holds every bound rangeTests draw (and the end of the user key space):
// two unions of ranges whose bounds are all in it are equal if they hold
// the same of its keys, and a range holds a key iff it holds one of them.
var rangeKeys = func() [][]byte {
	alphabet := []byte{0x00, 0x01, 0x02, 0xFF}
	keys := [][]byte{{}}
	for n, prev := 0, [][]byte{{}}; n < 3; n++ {
		var next [][]byte
		for _, p := range prev {
			for _, c := range alphabet {
				next = append(next, append(slices.Clone(p), c))
			}
		}
		keys, prev = append(keys, next...), next
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}()

// randomRange draws a range whose bounds are keys of up to two bytes (an
// empty or inverted one at times, an open End at times).
func randomRange(rng *rand.Rand) Range {
	key := func() []byte {
		b := make([]byte, rng.IntN(3))
		for i := range b {
			b[i] = []byte{0x00, 0x01, 0x02}[rng.IntN(3)]
		}
		return b
	}
	r := Range{Begin: key(), End: key()}
	if rng.IntN(6) == 0 {
		r.End = nil
	}
	return r
}

// holds is the brute-force Contains.
func holds(r Range, k []byte) bool {
	end := r.End
	if end == nil {
		end = userKeyEnd
	}
	return bytes.Compare(r.Begin, k) <= 0 && bytes.Compare(k, end) < 0
}

func inAny(rs []Range, k []byte) bool {
	return slices.ContainsFunc(rs, func(r Range) bool { return holds(r, k) })
}

// checkSet checks that rs is sorted, non-empty, disjoint and that no two
// of its ranges touch, as MergeRanges and rangeSet promise.
func checkSet(t *testing.T, what string, rs []Range) {
	t.Helper()
	for i, r := range rs {
		if r.End == nil || bytes.Compare(r.Begin, r.End) >= 0 {
			t.Fatalf("%s: range %d %q is empty or open in %q", what, i, r, rs)
		}
		if i > 0 && bytes.Compare(rs[i-1].End, r.Begin) >= 0 {
			t.Fatalf("%s: ranges %d and %d overlap or touch in %q", what, i-1, i, rs)
		}
	}
}

// TestRangesAgainstModel checks the range helpers against brute force on
// random ranges (some empty or inverted): Empty, Contains, Overlaps,
// MergeRanges and the rangeSet the write buffer keeps its cleared ranges
// in.
func TestRangesAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	for round := range 3000 {
		a, b := randomRange(rng), randomRange(rng)
		empty := !slices.ContainsFunc(rangeKeys, func(k []byte) bool { return holds(a, k) })
		if a.Empty() != empty {
			t.Fatalf("%q.Empty() = %v", a, a.Empty())
		}
		// Overlaps is asked of non-empty ranges only (the read and write
		// ranges of transactions).
		overlap := slices.ContainsFunc(rangeKeys, func(k []byte) bool { return holds(a, k) && holds(b, k) })
		if !a.Empty() && !b.Empty() && a.Overlaps(b) != overlap {
			t.Fatalf("%q.Overlaps(%q) = %v", a, b, a.Overlaps(b))
		}
		for _, k := range rangeKeys {
			if a.Contains(k) != holds(a, k) {
				t.Fatalf("%q.Contains(%q) = %v", a, k, a.Contains(k))
			}
		}

		rs := make([]Range, 1+rng.IntN(5))
		for i := range rs {
			rs[i] = randomRange(rng)
		}
		orig := slices.Clone(rs)
		merged := MergeRanges(rs)
		checkSet(t, fmt.Sprintf("MergeRanges(%q)", orig), merged)
		var set rangeSet
		for i, r := range orig {
			set = set.add(r)
			checkSet(t, fmt.Sprintf("round %d: rangeSet after adding %q", round, orig[:i+1]), set)
		}
		sub := set.subtract(b)
		checkSet(t, fmt.Sprintf("%q.subtract(%q)", set, b), sub)
		for _, k := range rangeKeys {
			if inAny(merged, k) != inAny(orig, k) {
				t.Fatalf("MergeRanges(%q) = %q: differs at %q", orig, merged, k)
			}
			if inAny(set, k) != inAny(orig, k) {
				t.Fatalf("rangeSet of %q = %q: differs at %q", orig, set, k)
			}
			if i := set.find(k); (i >= 0) != inAny(orig, k) || (i >= 0 && !holds(set[i], k)) {
				t.Fatalf("%q.find(%q) = %d", set, k, i)
			}
			if inAny(sub, k) != (holds(b, k) && !inAny(orig, k)) {
				t.Fatalf("%q.subtract(%q) = %q: differs at %q", set, b, sub, k)
			}
		}
	}
}

func TestLimits(t *testing.T) {
	l := Limits{MaxKeySize: 4, MaxValueSize: 8, MaxTxSize: 20}.WithDefaults()
	if l != (Limits{MaxKeySize: 4, MaxValueSize: 8, MaxTxSize: 20}) {
		t.Fatalf("WithDefaults changed set limits: %+v", l)
	}
	if d := (Limits{MaxKeySize: -1}).WithDefaults(); d != (Limits{DefaultMaxKeySize, DefaultMaxValueSize, DefaultMaxTxSize}) {
		t.Fatalf("defaults: %+v", d)
	}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{l.CheckKey([]byte("abcd")), nil},
		{l.CheckKey([]byte("abcde")), ErrKeyTooLarge},
		{l.CheckKey([]byte{}), nil},
		{l.CheckKey([]byte{0xFF}), ErrReservedKey},
		{l.CheckKey([]byte{0xFE, 0xFF}), nil},
		{l.CheckValue(make([]byte, 8)), nil},
		{l.CheckValue(make([]byte, 9)), ErrValueTooLarge},
		{l.CheckRange(Range{Begin: []byte("abcd"), End: []byte("abcd\x00")}), nil},
		{l.CheckRange(Range{Begin: []byte("abcde"), End: []byte("b")}), ErrKeyTooLarge},
		{l.CheckRange(Range{Begin: []byte("a"), End: []byte("abcde\x00")}), ErrKeyTooLarge},
		{l.CheckRange(Range{Begin: []byte("b"), End: []byte("b")}), nil},
		{l.CheckRange(Range{Begin: []byte("b"), End: []byte("a")}), ErrInvalidRange},
		{l.CheckRange(Range{Begin: []byte("b")}), nil},
		{l.CheckRange(Range{Begin: []byte{0xFF}}), ErrReservedKey},
		{l.CheckRange(Range{Begin: []byte{}, End: []byte{0xFF}}), nil},
	} {
		if !errors.Is(tc.err, tc.want) || (tc.want == nil) != (tc.err == nil) {
			t.Errorf("got %v, want %v", tc.err, tc.want)
		}
	}
}

func TestLogRecords(t *testing.T) {
	for _, records := range [][][]byte{
		{},
		{{}},
		{[]byte("a")},
		{[]byte("one"), {}, []byte("three"), bytes.Repeat([]byte("x"), 300)},
	} {
		enc := EncodeLogRecords(records)
		got, err := DecodeLogRecords(enc)
		if err != nil || len(got) != len(records) {
			t.Fatalf("DecodeLogRecords(EncodeLogRecords(%q)) = %q, %v", records, got, err)
		}
		for i := range got {
			if !bytes.Equal(got[i], records[i]) {
				t.Fatalf("record %d: %q, want %q", i, got[i], records[i])
			}
		}
		// Every cut of an entry is refused.
		for n := range len(enc) {
			if got, err := DecodeLogRecords(enc[:n]); err == nil {
				t.Fatalf("DecodeLogRecords(%q), cut from %q: %q, no error", enc[:n], enc, got)
			}
		}
	}
}

// TestTxSizeLimit: a transaction may write exactly MaxTxSize bytes of keys
// and values; the write past it fails, and so does every later write and
// the commit.
func TestTxSizeLimit(t *testing.T) {
	tx := NewTx(&memBackend{}, Limits{MaxTxSize: 10}, nil)
	defer tx.Rollback()
	if err := tx.Set([]byte("abcd"), []byte("ef")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("gh"), []byte("ij")); err != nil {
		t.Fatalf("write up to the limit: %v", err)
	}
	if err := tx.Clear([]byte("k")); !errors.Is(err, ErrTxTooLarge) {
		t.Fatalf("write past the limit: %v, want ErrTxTooLarge", err)
	}
	if err := tx.Set([]byte{}, nil); !errors.Is(err, ErrTxTooLarge) {
		t.Fatalf("a write after the failed one: %v, want ErrTxTooLarge", err)
	}
	if _, err := tx.Commit(context.Background()); !errors.Is(err, ErrTxTooLarge) {
		t.Fatalf("commit: %v, want ErrTxTooLarge", err)
	}

	// An Add counts its key and 8 bytes, a ClearRange its two bounds.
	tx = NewTx(&memBackend{}, Limits{MaxTxSize: 13}, nil)
	defer tx.Rollback()
	if err := tx.Add([]byte("k"), 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.ClearRange(Range{Begin: []byte("ab"), End: []byte("cd")}); err != nil {
		t.Fatalf("write up to the limit: %v", err)
	}
	if err := tx.Clear([]byte("x")); !errors.Is(err, ErrTxTooLarge) {
		t.Fatalf("write past the limit: %v, want ErrTxTooLarge", err)
	}
}
