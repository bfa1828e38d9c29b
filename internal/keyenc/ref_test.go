package keyenc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
)

// This file holds the test oracle: a reference comparison of values written
// straight from the specification (exact numeric order via math/big), value
// equality for round trips, and a generator of tuples from fuzz bytes.

// typeRank orders the element types as the package comment specifies.
func typeRank(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 2
		}
		return 1
	case int, int32, int64, float64:
		return 3
	case string:
		return 4
	case []byte:
		return 5
	case Tuple, []any:
		return 6
	}
	panic(fmt.Sprintf("typeRank: %T", v))
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// refCompare is the specified order of two elements: -1, 0 or +1.
func refCompare(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return sign(ra - rb)
	}
	switch ra {
	case 3:
		return refCompareNum(a, b)
	case 4:
		return sign(bytes.Compare([]byte(a.(string)), []byte(b.(string))))
	case 5:
		return sign(bytes.Compare(a.([]byte), b.([]byte)))
	case 6:
		return refCompareTuple(asTuple(a), asTuple(b))
	}
	return 0 // null, false, true: one value each
}

// refCompareTuple compares element by element; a proper prefix sorts first.
func refCompareTuple(a, b Tuple) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := refCompare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return sign(len(a) - len(b))
}

func asTuple(v any) Tuple {
	if t, ok := v.([]any); ok {
		return Tuple(t)
	}
	return v.(Tuple)
}

// num is a number reduced to what the order looks at.
type num struct {
	inf     int      // -1 for -Inf, +1 for +Inf, 0 for finite
	r       *big.Rat // exact value when finite
	isFloat bool
}

func toNum(v any) num {
	switch v := v.(type) {
	case int:
		return num{r: new(big.Rat).SetInt64(int64(v))}
	case int32:
		return num{r: new(big.Rat).SetInt64(int64(v))}
	case int64:
		return num{r: new(big.Rat).SetInt64(v)}
	case float64:
		if math.IsNaN(v) {
			panic("NaN in oracle")
		}
		if math.IsInf(v, 0) {
			return num{inf: sign(int(math.Copysign(1, v))), isFloat: true}
		}
		return num{r: new(big.Rat).SetFloat64(v), isFloat: true} // exact; -0 is 0
	}
	panic(fmt.Sprintf("toNum: %T", v))
}

// refCompareNum orders numbers by exact value, then int before float.
func refCompareNum(a, b any) int {
	x, y := toNum(a), toNum(b)
	if x.inf != 0 || y.inf != 0 {
		if x.inf == y.inf {
			return 0
		}
		return sign(x.inf - y.inf)
	}
	if c := x.r.Cmp(y.r); c != 0 {
		return c
	}
	switch {
	case x.isFloat == y.isFloat:
		return 0
	case x.isFloat:
		return 1
	}
	return -1
}

// normalize maps a value to what Unpack should return for it.
func normalize(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float64:
		if v == 0 {
			return 0.0 // -0.0 encodes as 0.0
		}
		return v
	case []byte:
		if v == nil {
			return []byte{}
		}
		return v
	case []any:
		return normalize(Tuple(v))
	case Tuple:
		out := make(Tuple, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// sameValue reports whether a and b are identical values of identical type
// (floats by bit pattern, so -0.0 and 0.0 differ).
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case float64:
		bf, ok := b.(float64)
		return ok && math.Float64bits(a) == math.Float64bits(bf)
	case []byte:
		bb, ok := b.([]byte)
		return ok && bb != nil && bytes.Equal(a, bb)
	case Tuple:
		bt, ok := b.(Tuple)
		if !ok || len(a) != len(bt) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], bt[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// gen builds values from fuzz bytes. It leans towards values that are close
// to each other (ints next to floats, powers of two, escapes) so that two
// independently generated tuples often agree for a while and then differ in
// a subtle place.
type gen struct {
	data   []byte
	budget int // elements left to generate; keeps each fuzz run fast
}

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) u64() uint64 {
	var buf [8]byte
	n := copy(buf[:], g.data)
	g.data = g.data[n:]
	return binary.BigEndian.Uint64(buf[:])
}

// delta is a small signed adjustment in [-2, 2].
func (g *gen) delta() int { return int(g.byte()%5) - 2 }

var specialFloats = []float64{
	math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 1, -1, 0.5, -0.5,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
	-math.SmallestNonzeroFloat64, 0x1p-1022, -0x1p-1022, 0x1p-1022 - 0x1p-1074,
	0x1p63, -0x1p63, 0x1p62, 0x1p53, 0x1p53 + 2, -0x1p53, 1 << 52, 0x1p64,
}

var specialInts = []int64{
	math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1,
	1 << 53, 1<<53 + 1, -(1<<53 + 1), 1<<62 + 1, 1 << 62, -(1 << 62), -(1<<62 + 1),
	1<<63 - 1024, 1<<63 - 1025, 1<<63 - 2048, 0, 1, -1, 127, 128, 255, 256,
}

func nudge(f float64, d int) float64 {
	for ; d > 0; d-- {
		f = math.Nextafter(f, math.Inf(1))
	}
	for ; d < 0; d++ {
		f = math.Nextafter(f, math.Inf(-1))
	}
	return f
}

func addClamped(v int64, d int) int64 {
	if d > 0 && v > math.MaxInt64-int64(d) || d < 0 && v < math.MinInt64-int64(d) {
		return v
	}
	return v + int64(d)
}

var alphabet = []byte{0x00, 0x01, 'a', 'b', 0xFE, 0xFF}

func (g *gen) str() []byte {
	n := int(g.byte() % 6)
	s := make([]byte, n)
	for i := range s {
		b := g.byte()
		if b >= 0xF0 { // occasionally any byte at all
			s[i] = g.byte()
		} else {
			s[i] = alphabet[int(b)%len(alphabet)]
		}
	}
	return s
}

// tuple reads elements until the data or the budget runs out or, inside a
// nested tuple, an end op; at most 8 elements.
func (g *gen) tuple(depth int) Tuple {
	t := Tuple{}
	for len(g.data) > 0 && len(t) < 8 && g.budget > 0 {
		g.budget--
		op := g.byte() % 16
		var v any
		switch op {
		case 0:
			v = nil
		case 1:
			v = false
		case 2:
			v = true
		case 3:
			v = int64(g.u64())
		case 4:
			v = int64(int8(g.byte()))
		case 5: // any float bits; NaN becomes -0.0
			f := math.Float64frombits(g.u64())
			if math.IsNaN(f) {
				f = math.Copysign(0, -1)
			}
			v = f
		case 6: // a float next to an int64
			v = nudge(float64(int64(g.u64())), g.delta())
		case 7: // an int64 next to a float
			f := math.Float64frombits(g.u64())
			if f >= -0x1p63 && f < 0x1p63 {
				v = addClamped(int64(f), g.delta())
			} else {
				v = int64(g.u64())
			}
		case 8: // ± a power of two, nudged, as int or float
			b := g.byte()
			p := int64(1) << (b % 63)
			if b&0x80 != 0 {
				p = -p
			}
			if b&0x40 != 0 {
				v = nudge(float64(p), g.delta())
			} else {
				v = addClamped(p, g.delta())
			}
		case 9:
			v = string(g.str())
		case 10:
			v = g.str()
		case 11:
			if depth < 4 {
				v = g.tuple(depth + 1)
			} else {
				v = Tuple{}
			}
		case 12:
			if depth > 0 {
				return t
			}
			v = nil
		case 13:
			v = specialFloats[int(g.byte())%len(specialFloats)]
		case 14:
			v = specialInts[int(g.byte())%len(specialInts)]
		case 15: // other accepted integer types
			if g.byte()&1 == 0 {
				v = int(int64(g.u64()))
			} else {
				v = int32(g.u64())
			}
		}
		t = append(t, v)
	}
	return t
}

func genTuple(data []byte) Tuple {
	g := gen{data: data, budget: 64}
	return g.tuple(0)
}
