// Package keyenc encodes tuples of values into byte strings whose bytewise
// order is the order of the values, so that an ordered key-value store can
// sort, seek and range-scan them without decoding. It is the tuple layer of
// FoundationDB with one change: integers and floats form a single number
// domain ordered by exact numeric value.
//
// # Order
//
// Tuples compare element by element; a tuple that is a prefix of another
// sorts first. Elements compare first by type, in this order:
//
//	null < false < true < numbers < strings < bytes < nested tuples
//
// Numbers (int64 and float64 together) compare by exact numeric value, for
// every int64 and every float64: int64(1<<62+1) > float64(1<<62), and
// -Inf and +Inf sit at the ends. An int64 and a float64 of equal value are
// distinct keys (decoding keeps the kind) that sort next to each other, the
// int64 first. -0.0 is encoded as 0.0. NaN has no place in the order and is
// refused with ErrNaN. Strings compare by their bytes (for UTF-8 that is code
// point order), []byte values by their bytes, nested tuples as tuples.
//
// # Format
//
// A tuple is the concatenation of its elements' encodings. Each element
// starts with a tag byte; the gaps between tags are reserved for future
// types.
//
//	0x00            null
//	0x02            false
//	0x03            true
//	0x10            -Inf
//	0x11..0x19      negative finite number (see number.go)
//	0x1A kind       zero; kind is 0x01 for int64, 0x02 for float64
//	0x1B..0x23      positive finite number (see number.go)
//	0x24            +Inf
//	0x30 data 0x00  string; each 0x00 in data is written 0x00 0xFF
//	0x31 data 0x00  []byte; escaped like a string
//	0x40 ... 0x00   nested tuple: its elements, then 0x00; a null inside a
//	                nested tuple is written 0x00 0xFF so the end is unambiguous
//
// A finite non-zero number |v| = 2^e * (1 + f), 0 <= f < 1, is written as a
// two-byte header holding the sign and e, the bits of f in 7-bit groups, and
// a kind byte. See number.go for the layout and the proof of its order.
//
// No tag is 0xFF, so no encoded tuple starts with 0xFF (that first byte is
// reserved for the storage system's own keys), and the byte that follows an
// element inside a tuple is never 0xFF. The second fact is what makes the
// escapes work: when the encoding of one string, []byte or nested tuple is a
// proper prefix of another's (as "a" is of "a\x00", or (1) of (1, null)),
// the longer one continues with the escape byte 0xFF, which sorts after
// whatever may follow the shorter one (a tag, a nested tuple's 0x00 end, or
// nothing). Every other pair of element encodings first differs at a byte
// both have, so the order of elements decides the order of tuples.
//
// Pack(t[:k]) is a prefix of Pack(t), so the tuples that start with a given
// tuple t form one contiguous key range: from Pack(t) to Pack(t) followed by
// 0xFF.
//
// Every byte string that Unpack accepts is the Pack of the tuple it returns:
// the encoding is canonical, and Unpack rejects anything else.
package keyenc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Tuple is an ordered list of elements. An element is nil, bool, int64, int,
// int32, float64, string, []byte, or a nested Tuple or []any. Unpack returns
// integers as int64 and nested tuples as Tuple.
type Tuple []any

// Errors returned by this package, wrapped with detail; test with errors.Is.
var (
	// ErrUnsupported reports an element of a type that has no encoding, or
	// tuples nested deeper than MaxDepth.
	ErrUnsupported = errors.New("keyenc: unsupported element")
	// ErrNaN reports a NaN float, which has no place in the order.
	ErrNaN = errors.New("keyenc: NaN cannot be encoded")
	// ErrMalformed reports bytes that are not the encoding of a tuple.
	ErrMalformed = errors.New("keyenc: malformed encoding")
)

// MaxDepth is the deepest nesting of tuples that Pack and Unpack accept: a
// tuple element that is itself a tuple is at depth 1, and so on. The limit
// bounds recursion on hostile input and on self-referencing slices.
const MaxDepth = 100

// Tag bytes; see the package comment.
const (
	tagNull    = 0x00
	tagFalse   = 0x02
	tagTrue    = 0x03
	tagNegInf  = 0x10
	tagNegMin  = 0x11 // first tag of a negative finite number
	tagZero    = 0x1A
	tagPosMin  = 0x1B // first tag of a positive finite number
	tagPosInf  = 0x24
	tagString  = 0x30
	tagBytes   = 0x31
	tagNested  = 0x40
	nestedEnd  = 0x00
	escapeByte = 0xFF // follows 0x00 inside strings, bytes, and for a nested null
)

// EscapeByte is the byte that, after a zero byte inside a string, bytes or
// nested tuple, tells that the zero is data and the element goes on; no
// element begins with it. A reader comparing encoded prefixes needs it:
// the encoding of "a" is a prefix of that of "a\x00b".
const EscapeByte = escapeByte

// Pack returns the encoding of t. It fails with ErrUnsupported for an element
// of another type or nesting deeper than MaxDepth, and with ErrNaN for a NaN.
func Pack(t Tuple) ([]byte, error) {
	return AppendPack(make([]byte, 0, 16*len(t)), t)
}

// AppendPack appends the encoding of t to dst and returns the extended slice.
// On error it returns dst unchanged (its contents beyond len(dst) may have
// been overwritten).
func AppendPack(dst []byte, t Tuple) ([]byte, error) {
	out := dst
	for _, v := range t {
		var err error
		if out, err = appendElem(out, v, 0); err != nil {
			return dst, err
		}
	}
	return out, nil
}

// appendElem appends one element; depth is the nesting depth of the tuple
// holding v (0 for the top level), which decides how a null is written.
func appendElem(dst []byte, v any, depth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		if depth > 0 {
			return append(dst, tagNull, escapeByte), nil
		}
		return append(dst, tagNull), nil
	case bool:
		return AppendBool(dst, v), nil
	case int64:
		return AppendInt(dst, v), nil
	case int:
		return AppendInt(dst, int64(v)), nil
	case int32:
		return AppendInt(dst, int64(v)), nil
	case float64:
		return AppendFloat(dst, v)
	case string:
		return AppendString(dst, v), nil
	case []byte:
		return AppendBytes(dst, v), nil
	case Tuple:
		return appendNested(dst, v, depth)
	case []any:
		return appendNested(dst, v, depth)
	default:
		return dst, fmt.Errorf("%w: type %T", ErrUnsupported, v)
	}
}

func appendNested(dst []byte, t []any, depth int) ([]byte, error) {
	if depth >= MaxDepth {
		return dst, fmt.Errorf("%w: tuples nested deeper than %d", ErrUnsupported, MaxDepth)
	}
	dst = append(dst, tagNested)
	for _, v := range t {
		var err error
		if dst, err = appendElem(dst, v, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, nestedEnd), nil
}

// AppendBool appends the encoding of b, as Pack writes it.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, tagTrue)
	}
	return append(dst, tagFalse)
}

// AppendString appends the encoding of s, as Pack writes it.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, tagString)
	// Copy the runs between zero bytes in one append each, so the common
	// case (no zero bytes) is a single copy.
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			return append(dst, 0x00)
		}
		dst = append(dst, s[:i+1]...)
		dst = append(dst, escapeByte)
		s = s[i+1:]
	}
}

// AppendBytes appends the encoding of b as a []byte element, as Pack writes
// it. A nil b is an empty []byte, not a null.
func AppendBytes(dst []byte, b []byte) []byte {
	return appendEscaped(dst, tagBytes, b)
}

// AppendStringBytes appends the encoding of the string whose bytes are b,
// as AppendString(dst, string(b)) would, without making the string: for
// callers that hold a string's bytes (a JSON token) and no string.
func AppendStringBytes(dst []byte, b []byte) []byte {
	return appendEscaped(dst, tagString, b)
}

// appendEscaped appends tag, b with every zero byte escaped, and the
// terminator.
func appendEscaped(dst []byte, tag byte, b []byte) []byte {
	dst = append(dst, tag)
	// As AppendString; a shared generic version would allocate converting
	// b to a string for strings.IndexByte.
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			dst = append(dst, b...)
			return append(dst, 0x00)
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, escapeByte)
		b = b[i+1:]
	}
}

// AppendInt appends the encoding of the integer v, as Pack writes it.
func AppendInt(dst []byte, v int64) []byte {
	if v == 0 {
		return append(dst, tagZero, kindInt)
	}
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u // two's complement: also right for math.MinInt64 (2^63)
	}
	e, frac := intParts(u)
	return appendNumber(dst, neg, e, frac, kindInt)
}

// AppendFloat appends the encoding of the float v, as Pack writes it; -0.0 is
// written as 0.0. It fails with ErrNaN for a NaN and then returns dst
// unchanged.
func AppendFloat(dst []byte, v float64) ([]byte, error) {
	switch {
	case v != v:
		return dst, ErrNaN
	case v == 0: // 0.0 and -0.0
		return append(dst, tagZero, kindFloat), nil
	case math.IsInf(v, 1):
		return append(dst, tagPosInf), nil
	case math.IsInf(v, -1):
		return append(dst, tagNegInf), nil
	}
	neg, e, frac := floatParts(v)
	return appendNumber(dst, neg, e, frac, kindFloat), nil
}
