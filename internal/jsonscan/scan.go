// Package jsonscan reads JSON text in place: it finds where values start and
// end, walks object members and array elements, and decodes strings and
// integers, without building maps or copying the input.
//
// Folio keeps documents as the exact bytes the client sent. Validation, key
// extraction and filter evaluation all look into those bytes; decoding a whole
// document into map[string]any for each look would cost far more than the
// look itself, and would lose integer precision and member order.
//
// Positions are byte offsets into the input. A value "at i" starts exactly at
// b[i] (no leading whitespace); the end of a value is the offset just past its
// last byte.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted. It is
// encoding/json's limit, so that whatever Go's decoder accepts (for example in
// the HTTP layer) is accepted here too.
const MaxDepth = 10000

// SyntaxError reports malformed JSON and where it was found.
type SyntaxError struct {
	Offset int    // byte offset of the problem
	Msg    string // what was wrong
}

// Error describes the problem and its offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

func errAt(i int, format string, args ...any) error {
	return &SyntaxError{Offset: i, Msg: fmt.Sprintf(format, args...)}
}

// Kind is the JSON type of a value, as told by its first byte.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// String returns the JSON Schema name of the kind ("null", "boolean",
// "number", "string", "array", "object"), the words used in validation
// messages.
func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "invalid"
}

// KindAt returns the kind of the value at b[i], judged by its first byte
// only, or Invalid when i is out of range or the byte starts no value.
func KindAt(b []byte, i int) Kind {
	if i < 0 || i >= len(b) {
		return Invalid
	}
	switch c := b[i]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Invalid
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the offset of the first non-whitespace byte at or after i
// (len(b) if there is none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// Whole checks that b holds exactly one JSON value, with optional whitespace
// around it, and returns where the value starts and ends.
func Whole(b []byte) (start, end int, err error) {
	start = SkipSpace(b, 0)
	if start == len(b) {
		return 0, 0, errAt(start, "unexpected end of input")
	}
	end, err = End(b, start)
	if err != nil {
		return 0, 0, err
	}
	if rest := SkipSpace(b, end); rest != len(b) {
		return 0, 0, errAt(rest, "unexpected %q after the value", b[rest])
	}
	return start, end, nil
}

// End checks the syntax of the value at b[i] and returns the offset just past
// it.
func End(b []byte, i int) (int, error) {
	return end(b, i, 0)
}

func end(b []byte, i, depth int) (int, error) {
	switch KindAt(b, i) {
	case String:
		e, _, err := StringEnd(b, i)
		return e, err
	case Number:
		e, _, err := NumberEnd(b, i)
		return e, err
	case Bool, Null:
		return literalEnd(b, i)
	case Object:
		if depth >= MaxDepth {
			return 0, errAt(i, "nesting deeper than %d", MaxDepth)
		}
		o, err := ObjectAt(b, i)
		if err != nil {
			return 0, err
		}
		for {
			_, _, v, ok, err := o.Next()
			if err != nil {
				return 0, err
			}
			if !ok {
				return o.End(), nil
			}
			e, err := end(b, v, depth+1)
			if err != nil {
				return 0, err
			}
			o.Resume(e)
		}
	case Array:
		if depth >= MaxDepth {
			return 0, errAt(i, "nesting deeper than %d", MaxDepth)
		}
		a, err := ArrayAt(b, i)
		if err != nil {
			return 0, err
		}
		for {
			v, ok, err := a.Next()
			if err != nil {
				return 0, err
			}
			if !ok {
				return a.End(), nil
			}
			e, err := end(b, v, depth+1)
			if err != nil {
				return 0, err
			}
			a.Resume(e)
		}
	}
	if i >= len(b) {
		return 0, errAt(i, "unexpected end of input")
	}
	return 0, errAt(i, "unexpected %q where a value was expected", b[i])
}

// SkipValid returns the offset just past the value at b[i], which must
// be valid JSON: a stored document's, checked when it was written. It finds
// where strings and containers end without checking what they hold, so a
// long string costs one bytes.IndexByte per quote in it (End checks every
// run of text between escapes). On input that is not valid JSON it returns
// an error or an offset that may be wrong, but it never reads outside b.
func SkipValid(b []byte, i int) (int, error) {
	switch KindAt(b, i) {
	case String:
		return skipString(b, i)
	case Object, Array:
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errAt(i, "unexpected end of input")
	}
	return End(b, i) // a number or a literal: short
}

// skipString is the offset past the string that opens at b[i], found by
// its closing quote: the first one after an even run of backslashes.
func skipString(b []byte, i int) (int, error) {
	// Most strings of a document, and nearly every member name, end within
	// a few bytes: a plain loop finds their quote before bytes.IndexByte
	// has set up. A backslash, or a longer string, goes the general way.
	for j := i + 1; j < len(b) && j <= i+16; j++ {
		if c := b[j]; c == '"' {
			return j + 1, nil
		} else if c == '\\' {
			break
		}
	}
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, errAt(i, "unterminated string")
		}
		q += j
		k := q - 1
		for k > i && b[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func literalEnd(b []byte, i int) (int, error) {
	var lit string
	switch b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, errAt(i, "invalid literal, expected %s", lit)
	}
	return i + len(lit), nil
}

// StringEnd checks the string at b[i] (b[i] is the opening quote), which
// must be valid UTF-8, and returns the offset past its closing quote, and whether it contains escapes (when it
// does not, the bytes between the quotes are the string itself).
func StringEnd(b []byte, i int) (end int, escaped bool, err error) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, errAt(i, "expected a string")
	}
	// Runs of text between escapes are checked a run at a time (the next
	// quote and backslash found by bytes.IndexByte, control characters
	// eight bytes at a time, UTF-8 by utf8.Valid): a stored document's long
	// strings are skipped at memory speed by every filter that reads it.
	// Anything amiss goes to the byte loop, which says what and where.
	j, quote := i+1, -1 // quote: the next unescaped quote's offset, once known
	for {
		if quote < j {
			q := bytes.IndexByte(b[j:], '"')
			if q < 0 {
				break
			}
			quote = j + q
		}
		run := b[j:quote]
		if bs := bytes.IndexByte(run, '\\'); bs >= 0 {
			run = run[:bs]
		}
		if hasControl(run) || !utf8.Valid(run) {
			break
		}
		j += len(run)
		if j == quote {
			return j + 1, escaped, nil
		}
		if j+1 >= len(b) {
			break
		}
		switch b[j+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			escaped = true
			j += 2
		case 'u':
			n := escapeLen(b[j:])
			if n == 0 {
				return stringEndFrom(b, i, j, escaped)
			}
			escaped = true
			j += n
		default:
			return stringEndFrom(b, i, j, escaped)
		}
	}
	return stringEndFrom(b, i, j, escaped)
}

// hasControl tells whether s holds a byte below 0x20: eight bytes at a
// time, a byte less than 0x20 leaves its high bit set in (w - 0x20..) &^ w.
func hasControl(s []byte) bool {
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64(s)
		if (w-0x2020202020202020)&^w&0x8080808080808080 != 0 {
			return true
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// stringEndFrom is StringEnd's byte loop, from b[j] in the string that
// opens at b[i].
func stringEndFrom(b []byte, i, j int, escaped bool) (end int, _ bool, err error) {
	for j < len(b) {
		c := b[j]
		if plain[c] {
			j++
			continue
		}
		switch {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return 0, false, errAt(j, "unterminated escape")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if len(b)-j < 6 {
					return 0, false, errAt(j, "short \\u escape")
				}
				for k := j + 2; k < j+6; k++ {
					if unhex(b[k]) < 0 {
						return 0, false, errAt(k, "invalid hex digit in \\u escape")
					}
				}
				n := escapeLen(b[j:])
				if n == 0 {
					return 0, false, errAt(j, "lone UTF-16 surrogate in \\u escape: it stands for no character")
				}
				j += n
			default:
				return 0, false, errAt(j, "invalid escape \\%c", b[j+1])
			}
		case c < 0x20:
			return 0, false, errAt(j, "control character in string")
		case c < utf8.RuneSelf:
			j++
		default:
			// RFC 8259 requires UTF-8. Refusing anything else keeps every
			// reader of a stored document (comparisons, indexes, clients
			// decoding with replacement characters) seeing the same text.
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, errAt(j, "invalid UTF-8 in string")
			}
			j += size
		}
	}
	return 0, false, errAt(i, "unterminated string")
}

// escapeLen is the length of the \\u escape that s starts with: 6, or 12
// for a surrogate pair; 0 if it is short, not hex, or a surrogate that is
// not the high half of a pair followed by the low half. A lone surrogate
// encodes no character: kept, it would reach the store as text that is
// not UTF-8 once decoded, which is refused like invalid UTF-8 bytes.
func escapeLen(s []byte) int {
	r := hex4(s)
	switch {
	case r < 0:
		return 0
	case !utf16.IsSurrogate(r):
		return 6
	case r < 0xdc00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u':
		if r2 := hex4(s[6:]); r2 >= 0xdc00 && r2 <= 0xdfff {
			return 12
		}
	}
	return 0
}

// plain marks the bytes that stand for themselves inside a string: ASCII
// other than control characters, quote and backslash. One table lookup per
// byte is the fast path of StringEnd.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// NumberEnd checks the number at b[i] against JSON's grammar and returns the
// offset past it, and whether it is written as an integer (no fraction and no
// exponent).
func NumberEnd(b []byte, i int) (end int, isInt bool, err error) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return 0, false, errAt(j, "invalid number")
	}
	isInt = true
	if j < len(b) && b[j] == '.' {
		isInt = false
		j++
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return 0, false, errAt(j, "invalid number: no digits after the decimal point")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		isInt = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return 0, false, errAt(j, "invalid number: no digits in the exponent")
		}
	}
	return j, isInt, nil
}

// ParseInt converts a JSON integer token (as checked by NumberEnd, without
// fraction or exponent) to an int64. ok is false when the token is not such
// an integer or does not fit in 64 bits. It exists because strconv.ParseInt
// needs a string, and converting each token would allocate.
func ParseInt(tok []byte) (n int64, ok bool) {
	neg := false
	if len(tok) > 0 && tok[0] == '-' {
		neg = true
		tok = tok[1:]
	}
	if len(tok) == 0 || len(tok) > 1 && tok[0] == '0' {
		return 0, false
	}
	// Accumulate as a negative number: its range is one larger, which is
	// what lets -9223372036854775808 parse.
	const minInt64 = -1 << 63
	var v int64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v < (minInt64+d)/10 {
			return 0, false
		}
		v = v*10 - d
	}
	if !neg {
		if v == minInt64 {
			return 0, false
		}
		v = -v
	}
	return v, true
}

// Unquote returns the string a JSON string literal stands for; s is the text
// between the quotes, as checked by StringEnd. Invalid surrogate escapes
// become U+FFFD, as in encoding/json.
func Unquote(s []byte) string {
	return string(AppendUnquote(nil, s))
}

// AppendUnquote appends the string the literal text s stands for to dst.
func AppendUnquote(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := i + 1
			for j < len(s) && s[j] != '\\' {
				j++
			}
			dst = append(dst, s[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(s) {
			return dst
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n := decodeU(s[i:])
			dst = utf8.AppendRune(dst, r)
			i += n
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

// decodeU decodes a \uXXXX escape (or a surrogate pair of them) at the start
// of s and returns the rune and the bytes used.
func decodeU(s []byte) (rune, int) {
	r1 := hex4(s)
	if r1 < 0 {
		return utf8.RuneError, len(s)
	}
	if !utf16.IsSurrogate(r1) {
		return r1, 6
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2 := hex4(s[6:]); r2 >= 0 {
			if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
				return r, 12
			}
		}
	}
	return utf8.RuneError, 6
}

func hex4(s []byte) rune {
	if len(s) < 6 {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		d := unhex(c)
		if d < 0 {
			return -1
		}
		r = r<<4 | rune(d)
	}
	return r
}

// AppendQuote appends s as a JSON string literal to dst, escaping what JSON
// requires (quote, backslash and control characters) and nothing else.
func AppendQuote(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ObjectReader walks the members of one object. After Next returns a member,
// the caller reads or skips its value and reports where the value ended with
// Resume (or calls Skip) before calling Next again.
type ObjectReader struct {
	b     []byte
	pos   int
	count int
	end   int
	valid bool // the object is known valid: member names are not checked
}

// ObjectAt starts reading the object at b[i].
func ObjectAt(b []byte, i int) (ObjectReader, error) {
	if i >= len(b) || b[i] != '{' {
		return ObjectReader{}, errAt(i, "expected an object")
	}
	return ObjectReader{b: b, pos: i + 1, end: -1}, nil
}

// ValidObjectAt starts reading the object at b[i], which must be valid
// JSON (a stored document's, checked when it was written), as SkipValid
// reads it: member names are found by their closing quotes without
// checking what they hold. Its values are skipped with SkipValid.
func ValidObjectAt(b []byte, i int) (ObjectReader, error) {
	o, err := ObjectAt(b, i)
	o.valid = true
	return o, err
}

// Next moves to the next member. It returns the member's key as written
// between its quotes (escaped tells whether it holds escapes, in which case
// Unquote gives the key), and the offset of the member's value. ok is false
// once the object has closed; End then tells where.
func (o *ObjectReader) Next() (key []byte, escaped bool, value int, ok bool, err error) {
	if o.end >= 0 {
		return nil, false, 0, false, nil
	}
	b := o.b
	i := SkipSpace(b, o.pos)
	if i < len(b) && b[i] == '}' {
		o.end = i + 1
		return nil, false, 0, false, nil
	}
	if o.count > 0 {
		if i >= len(b) || b[i] != ',' {
			return nil, false, 0, false, errAt(i, "expected ',' or '}' in object")
		}
		i = SkipSpace(b, i+1)
	}
	keyStart := i
	var keyEnd int
	if o.valid && KindAt(b, keyStart) == String {
		keyEnd, err = skipString(b, keyStart)
		escaped = err == nil && bytes.IndexByte(b[keyStart+1:keyEnd-1], '\\') >= 0
	} else {
		keyEnd, escaped, err = StringEnd(b, keyStart)
	}
	if err != nil {
		if KindAt(b, keyStart) == String {
			return nil, false, 0, false, err
		}
		return nil, false, 0, false, errAt(keyStart, "expected a member name in object")
	}
	i = SkipSpace(b, keyEnd)
	if i >= len(b) || b[i] != ':' {
		return nil, false, 0, false, errAt(i, "expected ':' after a member name")
	}
	value = SkipSpace(b, i+1)
	o.count++
	o.pos = value
	return b[keyStart+1 : keyEnd-1], escaped, value, true, nil
}

// Resume records that the current member's value ended at offset end.
func (o *ObjectReader) Resume(end int) { o.pos = end }

// Skip passes over the current member's value, checking its syntax.
func (o *ObjectReader) Skip() error {
	e, err := End(o.b, o.pos)
	if err != nil {
		return err
	}
	o.pos = e
	return nil
}

// End returns the offset just past the object's closing brace, once Next has
// reported the end.
func (o *ObjectReader) End() int { return o.end }

// Count returns the number of members read so far.
func (o *ObjectReader) Count() int { return o.count }

// ArrayReader walks the elements of one array, in the same way as
// ObjectReader walks members.
type ArrayReader struct {
	b     []byte
	pos   int
	count int
	end   int
}

// ArrayAt starts reading the array at b[i].
func ArrayAt(b []byte, i int) (ArrayReader, error) {
	if i >= len(b) || b[i] != '[' {
		return ArrayReader{}, errAt(i, "expected an array")
	}
	return ArrayReader{b: b, pos: i + 1, end: -1}, nil
}

// Next moves to the next element and returns its offset; ok is false once
// the array has closed.
func (a *ArrayReader) Next() (value int, ok bool, err error) {
	if a.end >= 0 {
		return 0, false, nil
	}
	b := a.b
	i := SkipSpace(b, a.pos)
	if i < len(b) && b[i] == ']' {
		a.end = i + 1
		return 0, false, nil
	}
	if a.count > 0 {
		if i >= len(b) || b[i] != ',' {
			return 0, false, errAt(i, "expected ',' or ']' in array")
		}
		i = SkipSpace(b, i+1)
	}
	a.count++
	a.pos = i
	return i, true, nil
}

// Resume records that the current element ended at offset end.
func (a *ArrayReader) Resume(end int) { a.pos = end }

// Skip passes over the current element, checking its syntax.
func (a *ArrayReader) Skip() error {
	e, err := End(a.b, a.pos)
	if err != nil {
		return err
	}
	a.pos = e
	return nil
}

// End returns the offset just past the array's closing bracket, once Next has
// reported the end.
func (a *ArrayReader) End() int { return a.end }

// Index returns the position of the current element (0 for the first).
func (a *ArrayReader) Index() int { return a.count - 1 }

// Members reads the object that is the whole of b: its members' names in
// the order they first appear, and their values as written (of a name
// given twice, the last). It is the ordered counterpart of unmarshaling
// into a map, for JSON whose order means something (a schema's fields, a
// document's columns).
func Members[V ~[]byte](b []byte) (names []string, values map[string]V, err error) {
	start, end, err := Whole(b)
	if err != nil {
		return nil, nil, err
	}
	o, err := ObjectAt(b[:end], start)
	if err != nil {
		return nil, nil, err
	}
	values = map[string]V{}
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return names, values, nil
		}
		e, err := SkipValid(b, v) // Whole checked it
		if err != nil {
			return nil, nil, err
		}
		name := string(key)
		if escaped {
			name = Unquote(key)
		}
		if _, dup := values[name]; !dup {
			names = append(names, name)
		}
		values[name] = V(b[v:e])
		o.Resume(e)
	}
}
