package keyenc

import (
	"bytes"
	"errors"
	"testing"
)

// checkOrder checks that the encodings of a and b compare as the oracle
// says, and likewise for: the two nested one level down, a against b
// grafted onto the first half of a (so they share a prefix), and every pair
// of their elements taken alone.
func checkOrder(t testing.TB, a, b Tuple) {
	t.Helper()
	compare := func(x, y Tuple) {
		px, py := mustPack(t, x), mustPack(t, y)
		if got, want := sign(bytes.Compare(px, py)), refCompareTuple(x, y); got != want {
			t.Fatalf("compare(%#v, %#v) = %d, want %d\n  %x\n  %x", x, y, got, want, px, py)
		}
	}
	compare(a, b)
	compare(Tuple{a}, Tuple{b})
	graft := append(a[:len(a)/2:len(a)/2], b...)
	compare(a, graft)
	compare(Tuple{a, nil}, Tuple{graft})
	for _, x := range a {
		for _, y := range b {
			compare(Tuple{x}, Tuple{y})
		}
	}
}

// seeds are fuzz inputs for genTuple; see gen.tuple for the ops.
var seeds = [][]byte{
	{},
	{0, 1, 2, 12},
	{14, 4, 13, 9},     // 2^53+1 and 2^63
	{14, 3, 13, 18},    // 2^62+1 and 2^62
	{8, 62, 2, 8, 126}, // 2^62 nudged, as int and float
	{9, 3, 0, 2, 1},
	{9, 3, 2, 0, 0, 11, 0, 9, 1, 0, 12, 0},
	{11, 11, 0, 12, 0, 12, 10, 2, 0, 5},
	{6, 0x40, 0, 0, 0, 0, 0, 0, 1, 3},
	{7, 0x43, 0x50, 0, 0, 0, 0, 0, 1, 1},
	{5, 0x80, 0, 0, 0, 0, 0, 0, 0},
	{15, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRoundTrip(t, genTuple(data))
	})
}

func FuzzOrder(f *testing.F) {
	for _, a := range seeds {
		for _, b := range seeds {
			f.Add(a, b)
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		checkOrder(t, genTuple(a), genTuple(b))
	})
}

func FuzzUnpackNoPanic(f *testing.F) {
	for _, s := range seeds {
		f.Add(mustPack(f, genTuple(s)))
	}
	f.Add([]byte{0x1F, 0x32, 0x01, 0x80, 0x01})
	f.Add([]byte{0x40, 0x40, 0x00, 0xFF, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		tu, err := Unpack(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Unpack(%x): error %v is not ErrMalformed", b, err)
			}
		} else {
			// Canonical: whatever decodes is exactly the encoding of its value.
			p, err := Pack(tu)
			if err != nil || !bytes.Equal(p, b) {
				t.Fatalf("Pack(Unpack(%x) = %#v) = %x, %v", b, tu, p, err)
			}
		}
		for rest := b; len(rest) > 0; {
			var err error
			if _, rest, err = DecodeOne(rest); err != nil {
				break
			}
		}
	})
}

// FuzzAppendStringBytes: a string's bytes encode as the string does.
func FuzzAppendStringBytes(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := AppendStringBytes([]byte{1}, b), AppendString([]byte{1}, string(b)); !bytes.Equal(got, want) {
			t.Fatalf("AppendStringBytes(%x) = %x, AppendString gives %x", b, got, want)
		}
	})
}
