package keyenc

import (
	"bytes"
	"fmt"
)

// Unpack decodes an encoded tuple. Integers come back as int64, floats as
// float64, nested tuples as Tuple, and []byte values as fresh copies that do
// not alias b. It fails with ErrMalformed if b is not exactly the encoding of
// a tuple (trailing or truncated bytes, unknown tags, non-canonical forms,
// nesting deeper than MaxDepth); it never panics.
func Unpack(b []byte) (Tuple, error) {
	t := make(Tuple, 0, 4)
	for len(b) > 0 {
		v, rest, err := decodeElem(b, 0)
		if err != nil {
			return nil, err
		}
		t = append(t, v)
		b = rest
	}
	return t, nil
}

// DecodeOne decodes the first element of an encoded tuple, with the value
// types Unpack uses, and returns it with the bytes after it, which are the
// encoding of the remaining elements (aliasing b). It
// fails with ErrMalformed if b does not start with an element's encoding
// (including when b is empty).
func DecodeOne(b []byte) (v any, rest []byte, err error) {
	if len(b) == 0 {
		return nil, nil, malformed("no element")
	}
	return decodeElem(b, 0)
}

func malformed(why string) error {
	return fmt.Errorf("%w: %s", ErrMalformed, why)
}

// decodeElem decodes the element at the start of the non-empty b; depth is
// the nesting depth of the tuple holding it (0 at the top level).
func decodeElem(b []byte, depth int) (v any, rest []byte, err error) {
	switch tag := b[0]; {
	case tag == tagNull:
		if depth > 0 {
			// The caller checked that the 0x00 is followed by 0xFF.
			return nil, b[2:], nil
		}
		return nil, b[1:], nil
	case tag == tagFalse:
		return false, b[1:], nil
	case tag == tagTrue:
		return true, b[1:], nil
	case tag >= tagNegInf && tag <= tagPosInf:
		return decodeNumber(b)
	case tag == tagString:
		s, _, rest, err := decodeEscaped(b[1:])
		if err != nil {
			return nil, nil, err
		}
		return string(s), rest, nil
	case tag == tagBytes:
		s, fresh, rest, err := decodeEscaped(b[1:])
		if err != nil {
			return nil, nil, err
		}
		if !fresh {
			s = append([]byte{}, s...) // never alias the input; non-nil when empty
		}
		return s, rest, nil
	case tag == tagNested:
		return decodeNested(b[1:], depth)
	default:
		return nil, nil, malformed(fmt.Sprintf("unknown tag 0x%02x", tag))
	}
}

// decodeEscaped reads escaped data up to its 0x00 terminator. The data is
// returned unescaped; fresh reports whether it was copied, otherwise it
// aliases b (the common case, data without zero bytes, needs no copy here).
func decodeEscaped(b []byte) (s []byte, fresh bool, rest []byte, err error) {
	i := bytes.IndexByte(b, 0x00)
	if i < 0 {
		return nil, false, nil, malformed("unterminated string or bytes")
	}
	if i+1 >= len(b) || b[i+1] != escapeByte {
		return b[:i], false, b[i+1:], nil
	}
	out := make([]byte, 0, i+16)
	for {
		// b[i] is 0x00: an escaped zero byte if 0xFF follows, else the end.
		if i+1 < len(b) && b[i+1] == escapeByte {
			out = append(out, b[:i+1]...)
			b = b[i+2:]
		} else {
			return append(out, b[:i]...), true, b[i+1:], nil
		}
		if i = bytes.IndexByte(b, 0x00); i < 0 {
			return nil, false, nil, malformed("unterminated string or bytes")
		}
	}
}

// decodeNested reads the elements of a nested tuple at depth+1 and its end
// marker; b starts after the nested tag.
func decodeNested(b []byte, depth int) (v any, rest []byte, err error) {
	if depth >= MaxDepth {
		return nil, nil, malformed(fmt.Sprintf("tuples nested deeper than %d", MaxDepth))
	}
	t := Tuple{}
	for {
		if len(b) == 0 {
			return nil, nil, malformed("unterminated nested tuple")
		}
		if b[0] == nestedEnd && (len(b) == 1 || b[1] != escapeByte) {
			return t, b[1:], nil
		}
		v, rest, err := decodeElem(b, depth+1)
		if err != nil {
			return nil, nil, err
		}
		t = append(t, v)
		b = rest
	}
}
