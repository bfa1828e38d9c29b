package keyenc

import (
	"math"
	"math/bits"
)

// Numbers
//
// Every finite non-zero int64 or float64 v is exactly ±2^e * (1 + f) with an
// integer e in [-1074, 1023] and a binary fraction 0 <= f < 1 of at most 62
// bits (int64 needs up to 62 bits after the leading one, float64 up to 52).
// We hold f left-aligned in a uint64: frac = f * 2^64. Zero and ±Inf have
// their own tags. A finite non-zero number is written as
//
//	header (2 bytes) | fraction groups (1 to 9 bytes) | kind (1 byte)
//
// Header: E = e + 1074 is in [0, 2097]. A positive number's header is the
// big-endian uint16 0x1B00 + E, a negative number's is 0x1100 + (2097 - E).
// The first header byte is thus the tag: 0x1B..0x23 for positive,
// 0x11..0x19 for negative numbers.
//
// Fraction groups: frac is cut into 7-bit groups from its top, stopping after
// the last group that holds a one bit (a single group when frac is 0). Each
// group g is written as the byte g<<1 | c, where c is 1 if more groups follow
// and 0 on the last. For negative numbers these bytes are complemented
// (XOR 0xFF).
//
// Kind: 0x01 for int64, 0x02 for float64, never complemented. The zero tag
// is followed by a kind byte too; ±Inf are always float64 and have none.
//
// Why the order is right. Write P(v) for header+groups of a positive v.
//
//  1. P is prefix-free: the header has a fixed length and the groups end at
//     the first byte with c = 0. So two different P(v) first differ at a
//     byte present in both, and complementing every byte reverses their
//     order. (Without prefix-freedom complementing would not reverse it.)
//  2. Positive v < w with e_v < e_w: v < 2^(e_v+1) <= w, and the header of
//     v is smaller. Same e: v < w exactly when f_v < f_w. Let the group
//     strings first differ at group i (both have it, see below). If the
//     7 data bits differ, they are the first differing bits of f_v and f_w,
//     so they order the fractions. If the data bits are equal, one string
//     ends at i (c = 0) and the other goes on (c = 1), and the one that goes
//     on has a one bit further down (we only continue while one bits
//     remain), so it is the larger fraction and has the larger byte. The
//     strings cannot stop agreeing by one running out first, by 1.
//  3. Negative numbers: v < w < 0 exactly when |v| > |w|, i.e. P(|v|) >
//     P(|w|); the header 0x1100 + (2097 - E) reverses e, and complemented
//     groups reverse f (by 1 and 2).
//  4. Across signs the tags order -Inf < negative < zero < positive < +Inf.
//  5. Equal values have equal headers and groups, and the kind byte puts
//     int64 before float64. Unequal values differ before the kind byte, so
//     it never disturbs their order.
//
// The whole element encoding is prefix-free too (the kind byte has a fixed
// length), which the tuple order needs (see the package comment).

const (
	kindInt   = 0x01
	kindFloat = 0x02

	expBias = 1074           // e + expBias >= 0 for the smallest subnormal, 2^-1074
	maxE    = 1023 + expBias // largest biased exponent, 2097
	negBase = tagNegMin << 8 // header of a negative number is negBase + (maxE - E)
	posBase = tagPosMin << 8 // header of a positive number is posBase + E
	maxFrac = 9              // fraction groups: 62 bits need 9 groups of 7

	// Compile-time checks (a negative uint constant does not compile): the
	// headers of positive numbers stay below +Inf's tag, and those of
	// negative numbers below zero's tag.
	_ = uint(tagPosInf<<8 - 1 - (posBase + maxE))
	_ = uint(tagZero<<8 - 1 - (negBase + maxE))
)

// intParts splits u > 0 into e and the left-aligned fraction after its
// leading one bit.
func intParts(u uint64) (e int, frac uint64) {
	e = bits.Len64(u) - 1
	return e, u << (64 - e) // shifting by 64 yields 0 in Go, right for u = 1
}

// floatParts splits a finite non-zero v into sign, e and the left-aligned
// fraction.
func floatParts(v float64) (neg bool, e int, frac uint64) {
	b := math.Float64bits(v)
	neg = b>>63 != 0
	exp := int(b>>52) & 0x7FF
	mant := b & (1<<52 - 1)
	if exp != 0 { // normal: 1.mant * 2^(exp-1023)
		return neg, exp - 1023, mant << 12
	}
	// Subnormal: mant * 2^-1074; its leading one bit is at position l.
	l := bits.Len64(mant) - 1
	return neg, l - expBias, mant << (64 - l)
}

// appendNumber writes a finite non-zero number; see the comment above.
func appendNumber(dst []byte, neg bool, e int, frac uint64, kind byte) []byte {
	E := e + expBias
	var hdr int
	var flip byte
	if neg {
		hdr = negBase + (maxE - E)
		flip = 0xFF
	} else {
		hdr = posBase + E
	}
	dst = append(dst, byte(hdr>>8), byte(hdr))
	for {
		g := byte(frac>>57) << 1
		frac <<= 7
		if frac != 0 {
			g |= 1
		}
		dst = append(dst, g^flip)
		if frac == 0 {
			break
		}
	}
	return append(dst, kind)
}

// decodeNumber decodes a number element whose tag is b[0]; b holds the
// element and what follows it. It accepts only canonical encodings, the
// exact bytes AppendInt or AppendFloat would write for the value it returns.
func decodeNumber(b []byte) (v any, rest []byte, err error) {
	tag := b[0]
	switch {
	case tag == tagNegInf:
		return math.Inf(-1), b[1:], nil
	case tag == tagPosInf:
		return math.Inf(1), b[1:], nil
	case tag == tagZero:
		if len(b) < 2 {
			return nil, nil, malformed("zero without kind byte")
		}
		switch b[1] {
		case kindInt:
			return int64(0), b[2:], nil
		case kindFloat:
			return float64(0), b[2:], nil
		}
		return nil, nil, malformed("bad number kind byte")
	}

	// Finite non-zero: header, fraction groups, kind.
	if len(b) < 2 {
		return nil, nil, malformed("truncated number header")
	}
	hdr := int(b[0])<<8 | int(b[1])
	neg := tag < tagZero
	var E int
	var flip byte
	if neg {
		E = maxE - (hdr - negBase)
		flip = 0xFF
	} else {
		E = hdr - posBase
	}
	if E < 0 || E > maxE {
		return nil, nil, malformed("number exponent out of range")
	}
	e := E - expBias

	var frac uint64
	i := 0
	for ; ; i++ {
		if i == maxFrac {
			return nil, nil, malformed("too many fraction groups")
		}
		if 2+i >= len(b) {
			return nil, nil, malformed("truncated number fraction")
		}
		g := b[2+i] ^ flip
		frac |= uint64(g>>1) << (57 - 7*i)
		if g&1 == 0 {
			if g == 0 && i > 0 { // a last group must hold a one bit
				return nil, nil, malformed("non-canonical number fraction")
			}
			break
		}
	}
	k := 2 + i + 1
	if k >= len(b) {
		return nil, nil, malformed("number without kind byte")
	}
	rest = b[k+1:]

	switch b[k] {
	case kindInt:
		// The value must be an integer in int64 range: e in [0, 63], no
		// fraction bits below the units bit, and e = 63 only for -2^63
		// exactly (frac<<63 alone would let bits above 2^63 through).
		if e < 0 || e > 63 || frac<<e != 0 || (e == 63 && (!neg || frac != 0)) {
			return nil, nil, malformed("int64 kind on a non-int64 value")
		}
		u := uint64(1)<<e | frac>>(64-e)
		if neg {
			return -int64(u), rest, nil // u = 2^63 gives math.MinInt64
		}
		return int64(u), rest, nil
	case kindFloat:
		var fb uint64
		if e >= -1022 { // normal
			if e > 1023 || frac<<52 != 0 {
				return nil, nil, malformed("float64 kind on a non-float64 value")
			}
			fb = uint64(e+1023)<<52 | frac>>12
		} else { // subnormal: the leading one is bit l of the mantissa
			l := e + expBias
			if frac<<l != 0 {
				return nil, nil, malformed("float64 kind on a non-float64 value")
			}
			fb = uint64(1)<<l | frac>>(64-l)
		}
		if neg {
			fb |= 1 << 63
		}
		return math.Float64frombits(fb), rest, nil
	}
	return nil, nil, malformed("bad number kind byte")
}
