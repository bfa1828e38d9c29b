package keyenc

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func mustPack(t testing.TB, tu Tuple) []byte {
	t.Helper()
	b, err := Pack(tu)
	if err != nil {
		t.Fatalf("Pack(%#v): %v", tu, err)
	}
	return b
}

var negZero = math.Copysign(0, -1)

// ascending lists tuples in strictly increasing order, each a tricky
// neighbour of the next.
var ascending = []Tuple{
	{},
	{nil},
	{nil, nil},
	{nil, false},
	{nil, Tuple{}},
	{false},
	{true},
	{true, nil},
	{math.Inf(-1)},
	{-math.MaxFloat64},
	{-0x1p64},
	{-0x1p63 - 2048}, // next float below -2^63
	{int64(math.MinInt64)},
	{-0x1p63},
	{int64(math.MinInt64 + 1)},
	{int64(-(1 << 62) - 1)},
	{int64(-(1 << 62))},
	{-0x1p62},
	{int64(-(1 << 62) + 1)},
	{int64(-(1 << 53) - 1)},
	{int64(-(1 << 53))},
	{-0x1p53},
	{int64(-2)},
	{-2.0},
	{-1.5},
	{int64(-1)},
	{-1.0},
	{-1.0, nil},
	{-0.5},
	{-math.SmallestNonzeroFloat64},
	{int64(0)},
	{int64(0), nil},
	{0.0},
	{math.SmallestNonzeroFloat64},
	{2 * math.SmallestNonzeroFloat64},
	{0x1p-1022 - 0x1p-1074}, // largest subnormal
	{0x1p-1022},             // smallest normal
	{0.5},
	{math.Nextafter(1, 0)},
	{int64(1)},
	{int64(1), "a"},
	{1.0},
	{math.Nextafter(1, 2)},
	{1.5},
	{int64(2)},
	{2.0},
	{int64(1<<53 - 1)},
	{int64(1 << 53)},
	{0x1p53},
	{int64(1<<53 + 1)},
	{int64(1<<53 + 2)},
	{0x1p53 + 2},
	{int64(1<<62 - 1)},
	{int64(1 << 62)},
	{0x1p62},
	{int64(1<<62 + 1)},
	{int64(1<<62 + 1023)},
	{int64(1<<62 + 1024)},
	{0x1p62 + 1024},
	{int64(math.MaxInt64 - 1024)},
	{int64(math.MaxInt64 - 1023)},
	{0x1p63 - 1024}, // largest float below 2^63
	{int64(math.MaxInt64)},
	{0x1p63},
	{0x1p64},
	{math.MaxFloat64},
	{math.Inf(1)},
	{math.Inf(1), nil},
	{""},
	{"", nil},
	{"\x00"},
	{"\x00", nil},
	{"\x00\x00"},
	{"\x00\x01"},
	{"\x01"},
	{"a"},
	{"a", nil},
	{"a", int64(0)},
	{"a", "b"},
	{"a\x00"},
	{"a\x00", nil},
	{"a\x00\x00"},
	{"a\x00b"},
	{"ab"},
	{"a\xff"},
	{"b"},
	{"\xff"},
	{"\xff\x00"},
	{"\xff\xff"},
	{[]byte{}},
	{[]byte{0}},
	{[]byte{0}, nil},
	{[]byte{0, 0xFF}},
	{[]byte{1}},
	{[]byte{0xFF}},
	{Tuple{}},
	{Tuple{}, nil},
	{Tuple{}, Tuple{}},
	{Tuple{nil}},
	{Tuple{nil}, nil},
	{Tuple{nil, nil}},
	{Tuple{nil, int64(1)}},
	{Tuple{nil, Tuple{}}},
	{Tuple{false}},
	{Tuple{int64(1)}},
	{Tuple{1.0}},
	{Tuple{""}},
	{Tuple{"", nil}},
	{Tuple{"\x00"}},
	{Tuple{"a"}},
	{Tuple{Tuple{}}},
	{Tuple{Tuple{nil}}},
	{Tuple{Tuple{nil}, nil}},
	{Tuple{Tuple{Tuple{}}}},
}

func TestOrderTable(t *testing.T) {
	enc := make([][]byte, len(ascending))
	for i, tu := range ascending {
		enc[i] = mustPack(t, tu)
	}
	for i := range ascending {
		for j := range ascending {
			if got, want := sign(bytes.Compare(enc[i], enc[j])), sign(i-j); got != want {
				t.Errorf("compare(%#v, %#v) = %d, want %d\n  %x\n  %x", ascending[i], ascending[j], got, want, enc[i], enc[j])
			}
			// The table itself must agree with the oracle.
			if got, want := refCompareTuple(ascending[i], ascending[j]), sign(i-j); got != want {
				t.Errorf("oracle(%#v, %#v) = %d, want %d", ascending[i], ascending[j], got, want)
			}
		}
	}
}

func TestEquivalentEncodings(t *testing.T) {
	same := [][2]Tuple{
		{{negZero}, {0.0}},
		{{int(7)}, {int64(7)}},
		{{int32(-7)}, {int64(-7)}},
		{{[]any{nil, "x"}}, {Tuple{nil, "x"}}},
		{{[]byte(nil)}, {[]byte{}}},
	}
	for _, p := range same {
		if a, b := mustPack(t, p[0]), mustPack(t, p[1]); !bytes.Equal(a, b) {
			t.Errorf("Pack(%#v) = %x, Pack(%#v) = %x, want equal", p[0], a, p[1], b)
		}
	}
}

// TestGolden pins the format: a change here breaks every stored key.
func TestGolden(t *testing.T) {
	cases := []struct {
		t    Tuple
		want []byte
	}{
		{Tuple{nil}, []byte{0x00}},
		{Tuple{false, true}, []byte{0x02, 0x03}},
		{Tuple{int64(0), 0.0}, []byte{0x1A, 0x01, 0x1A, 0x02}},
		{Tuple{math.Inf(-1), math.Inf(1)}, []byte{0x10, 0x24}},
		// 1 = 2^0: E = 1074 = 0x432, header 0x1B00+0x432.
		{Tuple{int64(1)}, []byte{0x1F, 0x32, 0x00, 0x01}},
		{Tuple{1.0}, []byte{0x1F, 0x32, 0x00, 0x02}},
		// 1.5 = 2^0 * 1.1b: one group 1000000b, last.
		{Tuple{1.5}, []byte{0x1F, 0x32, 0x80, 0x02}},
		// -1: header 0x1100 + (2097-1074) = 0x14FF, group complemented.
		{Tuple{int64(-1)}, []byte{0x14, 0xFF, 0xFF, 0x01}},
		// 5 = 2^2 * 1.01b.
		{Tuple{int64(5)}, []byte{0x1F, 0x34, 0x40, 0x01}},
		// 2^7+1: fraction 0000001b, a second group is not needed.
		{Tuple{int64(129)}, []byte{0x1F, 0x39, 0x02, 0x01}},
		// 2^8+1: fraction 00000001b: groups 0000000 (more) and 1000000.
		{Tuple{int64(257)}, []byte{0x1F, 0x3A, 0x01, 0x80, 0x01}},
		{Tuple{"a\x00b"}, []byte{0x30, 'a', 0x00, 0xFF, 'b', 0x00}},
		{Tuple{[]byte{}}, []byte{0x31, 0x00}},
		{Tuple{Tuple{nil, "x"}, nil}, []byte{0x40, 0x00, 0xFF, 0x30, 'x', 0x00, 0x00, 0x00}},
	}
	for _, c := range cases {
		if got := mustPack(t, c.t); !bytes.Equal(got, c.want) {
			t.Errorf("Pack(%#v) = % x, want % x", c.t, got, c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	var all Tuple
	for _, tu := range ascending {
		all = append(all, tu...)
		checkRoundTrip(t, tu)
	}
	checkRoundTrip(t, all)
	for _, f := range specialFloats {
		checkRoundTrip(t, Tuple{f})
	}
	for _, v := range specialInts {
		checkRoundTrip(t, Tuple{v})
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkRoundTrip(t, Tuple{int64(r.Uint64()), int64(r.Uint64() >> (r.Uint() % 64))})
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) {
			checkRoundTrip(t, Tuple{f})
		}
	}
}

// checkRoundTrip checks Unpack(Pack(t)), element-wise decoding, and that the
// prefixes of t pack to prefixes of Pack(t) whose ranges hold Pack(t).
func checkRoundTrip(t testing.TB, tu Tuple) {
	t.Helper()
	b, err := Pack(tu)
	if err != nil {
		t.Fatalf("Pack(%#v): %v", tu, err)
	}
	if len(b) > 0 && b[0] == 0xFF {
		t.Fatalf("Pack(%#v) starts with 0xFF", tu)
	}
	got, err := Unpack(b)
	if err != nil {
		t.Fatalf("Unpack(Pack(%#v) = %x): %v", tu, b, err)
	}
	if want := normalize(tu); !sameValue(want, got) {
		t.Fatalf("Unpack(Pack(%#v)) = %#v, want %#v", tu, got, want)
	}

	rest := b
	for i, v := range tu {
		var d any
		if d, rest, err = DecodeOne(rest); err != nil {
			t.Fatalf("DecodeOne element %d of %x: %v", i, b, err)
		}
		if !sameValue(normalize(v), d) {
			t.Fatalf("DecodeOne element %d = %#v, want %#v", i, d, v)
		}
		// Pack(t[:i+1]) is a prefix of Pack(t), ending where element i ends.
		p := mustPack(t, tu[:i+1])
		if !bytes.Equal(p, b[:len(b)-len(rest)]) {
			t.Fatalf("Pack(t[:%d]) = %x is not the prefix of %x before %x", i+1, p, b, rest)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("DecodeOne left %x", rest)
	}

	pre := []byte("prefix")
	ab, err := AppendPack(pre[:len(pre):len(pre)], tu)
	if err != nil || !bytes.Equal(ab[:len(pre)], pre) || !bytes.Equal(ab[len(pre):], b) {
		t.Fatalf("AppendPack = %x, %v; want prefix then %x", ab, err, b)
	}
}

// TestNumberBoundaries sorts many numbers near the places where int64 and
// float64 precision change, with the oracle, and checks that the encodings
// come out in the same order, equal exactly when the oracle says so. Both
// orders are total, so agreement on neighbours means agreement everywhere.
func TestNumberBoundaries(t *testing.T) {
	var vals []any
	vals = append(vals, specialInts[0], specialInts[2])
	for _, f := range specialFloats {
		vals = append(vals, f)
	}
	for _, v := range specialInts {
		vals = append(vals, v)
	}
	for k := 0; k < 64; k++ {
		p := math.Ldexp(1, k)
		for d := -3; d <= 3; d++ {
			vals = append(vals, nudge(p, d), nudge(-p, d), nudge(p+p/2, d))
			if k < 63 {
				vals = append(vals, addClamped(1<<k, d), addClamped(-(1<<k), d), addClamped(1<<k+1<<k/2, d))
			}
		}
		vals = append(vals, math.Ldexp(1, -k), math.Ldexp(-1.25, -k-1000), math.Ldexp(1, 960+k))
	}
	vals = append(vals, addClamped(math.MinInt64, 3), addClamped(math.MaxInt64, -3))
	checkSortedAgree(t, vals)
}

func checkSortedAgree(t *testing.T, vals []any) {
	slices.SortStableFunc(vals, refCompare)
	enc := make([][]byte, len(vals))
	for i, v := range vals {
		enc[i] = mustPack(t, Tuple{v})
	}
	for i := 1; i < len(vals); i++ {
		want := refCompare(vals[i-1], vals[i])
		if got := sign(bytes.Compare(enc[i-1], enc[i])); got != want {
			t.Errorf("compare(%#v, %#v) = %d, want %d\n  %x\n  %x", vals[i-1], vals[i], got, want, enc[i-1], enc[i])
		}
	}
}

// TestRandomOrder compares random numbers, plus random pairs of generated
// tuples.
func TestRandomOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var vals []any
	for range 5000 {
		switch r.IntN(4) {
		case 0:
			vals = append(vals, int64(r.Uint64()))
		case 1:
			vals = append(vals, int64(r.Uint64()>>(r.Uint()%64)))
		case 2:
			f := math.Float64frombits(r.Uint64())
			if !math.IsNaN(f) {
				vals = append(vals, f)
			}
		case 3:
			vals = append(vals, float64(int64(r.Uint64()>>(r.Uint()%64))))
		}
	}
	checkSortedAgree(t, vals)

	buf := make([]byte, 64)
	for range 20000 {
		for i := range buf {
			buf[i] = byte(r.Uint())
		}
		a := genTuple(buf[:r.IntN(64)])
		b := genTuple(buf[r.IntN(64):])
		checkOrder(t, a, b)
	}
}

func TestErrors(t *testing.T) {
	cyclic := []any{nil}
	cyclic[0] = cyclic
	deep := Tuple{}
	for range MaxDepth - 1 { // MaxDepth levels of nesting
		deep = Tuple{deep}
	}
	cases := []struct {
		t    Tuple
		want error
	}{
		{Tuple{math.NaN()}, ErrNaN},
		{Tuple{"ok", Tuple{1.0, math.NaN()}}, ErrNaN},
		{Tuple{uint64(1)}, ErrUnsupported},
		{Tuple{float32(1)}, ErrUnsupported},
		{Tuple{struct{}{}}, ErrUnsupported},
		{Tuple{map[string]any{}}, ErrUnsupported},
		{Tuple{cyclic}, ErrUnsupported},
		{Tuple{Tuple{deep}}, ErrUnsupported},
	}
	for _, c := range cases {
		dst := []byte("keep")
		got, err := AppendPack(dst, c.t)
		if !errors.Is(err, c.want) {
			t.Errorf("AppendPack(%#v) error %v, want %v", c.t, err, c.want)
		}
		if string(got) != "keep" {
			t.Errorf("AppendPack(%#v) returned %q on error, want dst unchanged", c.t, got)
		}
	}
	if _, err := Pack(Tuple{deep}); err != nil {
		t.Errorf("Pack at MaxDepth: %v", err)
	}
	if b, err := AppendFloat([]byte("x"), math.NaN()); !errors.Is(err, ErrNaN) || string(b) != "x" {
		t.Errorf("AppendFloat(NaN) = %q, %v", b, err)
	}
}

func TestUnpackMalformed(t *testing.T) {
	deep := bytes.Repeat([]byte{tagNested}, MaxDepth+1)
	deep = append(deep, bytes.Repeat([]byte{nestedEnd}, MaxDepth+1)...)
	cases := [][]byte{
		{0xFF},
		{0x01},
		{0x00, 0xFF},                   // nested-null escape at the top level
		{0x30, 'a'},                    // unterminated string
		{0x30, 'a', 0x00, 0xFF},        // escape without terminator
		{0x31},                         // unterminated bytes
		{0x40, 0x00, 0xFF},             // unterminated nested tuple
		{0x40},                         // unterminated nested tuple
		{0x1A},                         // zero without kind
		{0x1A, 0x03},                   // bad kind
		{0x1F},                         // truncated header
		{0x1F, 0x32},                   // no fraction
		{0x1F, 0x32, 0x01},             // fraction never ends
		{0x1F, 0x32, 0x00},             // no kind
		{0x1F, 0x32, 0x00, 0x00},       // bad kind
		{0x1F, 0x32, 0x01, 0x00, 0x01}, // trailing zero group
		{0x14, 0xFF, 0xFE, 0xFF, 0x01}, // negative trailing zero group
		{0x1F, 0x32, 0x80, 0x01},       // 1.5 as int64
		{0x1F, 0x31, 0x00, 0x01},       // 0.5 as int64
		{0x23, 0x32, 0x00, 0x02},       // exponent past the range
		{0x23, 0x31, 0x00, 0x01},       // 2^1023 as int64
		{0x1F, 0x71, 0x00, 0x01},       // 2^63 as positive int64
		{0x14, 0xC0, 0x31, 0x01},       // -(2^63 + 2^62 + ...) as int64 (found by fuzzing)
		{0x14, 0xC0, 0xDF, 0x01},       // -(2^63 + 2^60) as int64
		{0x1F, 0x32, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x02, 0x02}, // ten groups
		{0x1F, 0x32, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x02, 0x02},       // 63 fraction bits as float64
		{0x1B, 0x00, 0x80, 0x02}, // 2^-1074 * 1.5 is not a float64
		{0x19, 0xFF, 0xFF, 0x02}, // negative exponent past the range
		deep,
	}
	for _, b := range cases {
		if tu, err := Unpack(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("Unpack(% x) = %#v, %v; want ErrMalformed", b, tu, err)
		}
	}
	if _, _, err := DecodeOne(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("DecodeOne(nil) error %v", err)
	}
	if _, err := Unpack(deep[1 : len(deep)-1]); err != nil {
		t.Errorf("Unpack at MaxDepth: %v", err)
	}
}

func TestUnpackDoesNotAlias(t *testing.T) {
	b := mustPack(t, Tuple{[]byte("abc"), "def"})
	tu, err := Unpack(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 'z'
	}
	if !bytes.Equal(tu[0].([]byte), []byte("abc")) || tu[1].(string) != "def" {
		t.Errorf("decoded values changed with the input: %#v", tu)
	}
}

func TestHelpersMatchPack(t *testing.T) {
	var key []byte
	key = AppendBool(key, false)
	key = AppendBool(key, true)
	key = AppendInt(key, -42)
	key, _ = AppendFloat(key, 2.5)
	key = AppendString(key, "a\x00b")
	key = AppendBytes(key, []byte{0, 0xFF})
	want := mustPack(t, Tuple{false, true, int64(-42), 2.5, "a\x00b", []byte{0, 0xFF}})
	if !bytes.Equal(key, want) {
		t.Errorf("helpers built % x, Pack built % x", key, want)
	}
}
