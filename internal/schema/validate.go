package schema

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/suggest"
)

// Validate checks that doc is one JSON object that follows the schema. The
// message of the *Error it returns has the form of the original server's
// validator (santhosh-tekuri/jsonschema):
//
//	json schema validation failed for field '<field>' reason '<reason>'
//
// <field> is the JSON pointer of the offending value without its leading
// slash: "int_value" for a top-level field, "obj/inner" for a nested one,
// "tags/2" for an array element, and "" for the document itself. Unknown
// members are reported on the object that holds them, as
// additionalProperties '<name>' not allowed.
//
// Rules beyond types and formats:
//   - Every object declared with properties is closed; an object declared
//     without properties accepts any members.
//   - A member or array element whose value is null passes whatever its
//     field (the original dropped nulls before validating), even when the
//     field is unknown.
//   - Integers must be written without fraction or exponent and fit the
//     field: int64, or int32 for format int32.
//   - maxLength counts characters (runes) of the decoded string.
//   - The same member twice in one object is refused, so that every reader
//     of the stored bytes sees one value.
//   - The whole document must be valid JSON in UTF-8, free-form parts and
//     null members included.
//
// Validate reads the document once, in place, without decoding it.
func (s *Schema) Validate(doc []byte) error {
	return s.validate(doc, &pass{})
}

// ValidateOpen is Validate, but members the schema does not know are
// taken, at any depth, and not looked at beyond their JSON syntax: they
// are neither indexed nor queryable. It validates a document an update
// changed, whose unknown members can only come from the stored document,
// written with a schema sign-off (ConformOpen): an update must not be
// refused for what it did not write, and every path it sets is checked
// against the schema (ConformValue).
func (s *Schema) ValidateOpen(doc []byte) error {
	return s.validate(doc, &pass{open: true})
}

// pass is how one validation goes: Conform's (conform set: integers given
// as strings are taken, and edits collects their rewrites), and open
// (members the schema does not know are taken).
type pass struct {
	edits   []edit
	conform bool
	open    bool
}

// Conform validates a document a client sent, with Validate's rules but
// one: an integer field also takes a JSON string holding an integer
// ("9223372036854775807"), at any depth, as proto3's JSON mapping writes
// 64-bit integers and clients of the original sent them. It returns the
// document to store: doc itself, or when it held such strings a copy with
// each rewritten as the JSON number it holds, digit for digit (no trip
// through float64), so that everything stored is what Validate accepts.
func (s *Schema) Conform(doc []byte) ([]byte, error) {
	return s.conform(doc, false)
}

// ConformOpen is Conform for a write with the schema signed off (the
// original's Tigris-Schema-Sign-Off header, which turned validation off):
// members the schema does not know are taken and stored as they are, as
// in ValidateOpen. Everything the schema declares is still checked, so
// that what is stored can be indexed and compared.
func (s *Schema) ConformOpen(doc []byte) ([]byte, error) {
	return s.conform(doc, true)
}

func (s *Schema) conform(doc []byte, open bool) ([]byte, error) {
	fixes := &pass{conform: true, open: open}
	if err := s.validate(doc, fixes); err != nil {
		return nil, err
	}
	if len(fixes.edits) == 0 {
		return doc, nil
	}
	return applyEdits(doc, fixes.edits), nil
}

// validate is Validate, Conform or their open forms, as fixes says.
func (s *Schema) validate(doc []byte, fixes *pass) error {
	i := jsonscan.SkipSpace(doc, 0)
	end, err := validateObject(doc, i, s.fields, s.byName, s.required, fixes)
	if err == nil {
		if rest := jsonscan.SkipSpace(doc, end); rest != len(doc) {
			err = &jsonscan.SyntaxError{Offset: rest, Msg: fmt.Sprintf("unexpected %q after the document", doc[rest])}
		}
	}
	switch e := err.(type) {
	case nil:
		return nil
	case *fieldError:
		return e.status()
	default:
		return invalidf("document is not valid JSON: %v", err)
	}
}

// ValidateValue checks value, the JSON an update sets at the dot path
// ("a.b"), against the schema's field there, with Validate's rules and
// messages: the field is named by its JSON pointer in the document
// ("a/b"), so an update is refused with the words a document carrying the
// value would be.
func (s *Schema) ValidateValue(path string, value []byte) error {
	return s.validateValue(path, value, &pass{})
}

// ConformValue is ValidateValue with Conform's rule for integers given as
// strings: it returns the value to set, value itself or a copy with each
// such string rewritten as the number it holds.
func (s *Schema) ConformValue(path string, value []byte) ([]byte, error) {
	fixes := &pass{conform: true}
	if err := s.validateValue(path, value, fixes); err != nil {
		return nil, err
	}
	if len(fixes.edits) == 0 {
		return value, nil
	}
	return applyEdits(value, fixes.edits), nil
}

func (s *Schema) validateValue(path string, value []byte, fixes *pass) error {
	f, ok := s.Field(path)
	if !ok && s.inFreeForm(path) { // any JSON will do there
		if _, _, err := jsonscan.Whole(value); err != nil {
			return invalidf("value of '%s' is not valid JSON: %v", path, err)
		}
		return nil
	}
	if !ok {
		return invalidf("json schema validation failed for field '%s' reason 'field not in the schema'", path)
	}
	i := jsonscan.SkipSpace(value, 0)
	end, err := validateValue(value, i, f, fixes)
	if err == nil {
		if rest := jsonscan.SkipSpace(value, end); rest != len(value) {
			err = &jsonscan.SyntaxError{Offset: rest, Msg: fmt.Sprintf("unexpected %q after the value", value[rest])}
		}
	}
	switch e := err.(type) {
	case nil:
		return nil
	case *fieldError:
		segments := strings.Split(path, ".")
		for i := len(segments) - 1; i >= 0; i-- {
			e.segments = append(e.segments, segments[i])
		}
		return e.status()
	default:
		return invalidf("value of '%s' is not valid JSON: %v", path, err)
	}
}

// fieldError is a validation failure on its way up: segments holds the path
// from the failing value back towards the root (reversed), filled in only
// once something failed, so that validation itself builds no paths.
type fieldError struct {
	segments []string
	reason   string
	// hint follows the original's message: " (did you mean 'name'?)".
	hint string
}

func (e *fieldError) Error() string { return e.reason }

// status is the API's error for e, in the original's words, then e's hint.
func (e *fieldError) status() *Error {
	return invalidf("json schema validation failed for field '%s' reason '%s'%s", e.pointer(), e.reason, e.hint)
}

func (e *fieldError) pointer() string {
	var b strings.Builder
	for i := len(e.segments) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		// JSON pointer escaping (RFC 6901).
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(e.segments[i]))
	}
	return b.String()
}

func failf(format string, args ...any) *fieldError {
	return &fieldError{reason: fmt.Sprintf(format, args...)}
}

// under adds a path segment to a fieldError passing up through it.
func under(err error, segment string) error {
	if fe, ok := err.(*fieldError); ok {
		fe.segments = append(fe.segments, segment)
	}
	return err
}

func typeError(want string, got jsonscan.Kind) *fieldError {
	if got == jsonscan.Invalid {
		return nil // a syntax error; the caller reports it
	}
	return failf("expected %s, but got %s", want, got)
}

// validateObject validates the object at doc[i] against the given
// properties, of which those at the indexes required must be present,
// and returns where it ends. fixes is as in Schema.validate.
func validateObject(doc []byte, i int, fields []*Field, byName map[string]int, required []int, fixes *pass) (int, error) {
	if k := jsonscan.KindAt(doc, i); k != jsonscan.Object {
		if fe := typeError("object", k); fe != nil {
			return 0, fe
		}
		return jsonscan.End(doc, i)
	}
	o, err := jsonscan.ObjectAt(doc, i)
	if err != nil {
		return 0, err
	}
	// Members are known fields, so "seen" is a bit per field.
	var seenBuf [2]uint64
	seen := seenBuf[:]
	if n := (len(fields) + 63) / 64; n > len(seen) {
		seen = make([]uint64, n)
	}
	for {
		key, escaped, v, ok, err := o.Next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return o.End(), missingRequired(fields, required, seen)
		}
		var idx int
		if escaped {
			idx, ok = byName[jsonscan.Unquote(key)]
		} else {
			idx, ok = byName[string(key)]
		}
		if !ok {
			if fixes.open || jsonscan.KindAt(doc, v) == jsonscan.Null {
				if err := o.Skip(); err != nil {
					return 0, err
				}
				continue
			}
			return 0, unknownMembers(doc, &o, key, escaped, fields, byName)
		}
		if seen[idx/64]&(1<<(idx%64)) != 0 {
			return 0, failf("duplicate key %s", quote(fields[idx].Name))
		}
		seen[idx/64] |= 1 << (idx % 64)
		e, err := validateValue(doc, v, fields[idx], fixes)
		if err != nil {
			return 0, under(err, fields[idx].Name)
		}
		o.Resume(e)
	}
}

// missingRequired is the error for the required fields an object lacks
// (seen: a bit per field present), in the original's words; nil when it
// lacks none. A field a write fills in (a default, a generated key) is
// not missing.
func missingRequired(fields []*Field, required []int, seen []uint64) error {
	var missing []string
	for _, idx := range required {
		if seen[idx/64]&(1<<(idx%64)) == 0 && !fields[idx].filled() {
			missing = append(missing, quote(fields[idx].Name))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return failf("missing properties: %s", strings.Join(missing, ", "))
}

// unknownMembers builds the additionalProperties error for an object whose
// member key is not in the schema, naming every other unknown non-null
// member too, as the original validator did, and then the fields they
// were probably meant to be.
func unknownMembers(doc []byte, o *jsonscan.ObjectReader, key []byte, escaped bool, fields []*Field, byName map[string]int) error {
	names := []string{keyString(key, escaped)}
	if err := o.Skip(); err != nil {
		return err
	}
	for {
		k, esc, v, ok, err := o.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if _, known := byName[keyString(k, esc)]; !known && jsonscan.KindAt(doc, v) != jsonscan.Null {
			names = append(names, keyString(k, esc))
		}
		if err := o.Skip(); err != nil {
			return err
		}
	}
	hint := misspelled(names, fields)
	for i, n := range names {
		names[i] = quote(n)
	}
	fe := failf("additionalProperties %s not allowed", strings.Join(names, ", "))
	fe.hint = hint
	return fe
}

// maxHints bounds the unknown members misspelled looks at: a document may
// have many, and each costs a comparison with every field.
const maxHints = 3

// misspelled names the fields that unknown member names were probably
// meant to be: " (did you mean 'name'?)" for one, " (did you mean 'name'
// for 'nmae', 'age' for 'aeg'?)" for several; "" when none is close.
func misspelled(names []string, fields []*Field) string {
	candidates := make([]string, len(fields))
	for i, f := range fields {
		candidates[i] = f.Name
	}
	var hints []string
	last := ""
	for _, n := range names[:min(len(names), maxHints)] {
		if c := suggest.Closest(n, candidates); c != "" {
			hints = append(hints, quote(c)+" for "+quote(n))
			last = c
		}
	}
	switch {
	case len(hints) == 0:
		return ""
	case len(names) == 1:
		return " (did you mean " + quote(last) + "?)"
	}
	return " (did you mean " + strings.Join(hints, ", ") + "?)"
}

func keyString(key []byte, escaped bool) string {
	if escaped {
		return jsonscan.Unquote(key)
	}
	return string(key)
}

// validateValue validates the value at doc[i] against f and returns where it
// ends. fixes is as in Schema.validate.
func validateValue(doc []byte, i int, f *Field, fixes *pass) (int, error) {
	k := jsonscan.KindAt(doc, i)
	if k == jsonscan.Null {
		if !f.takesNull() {
			return 0, typeError(jsonType(f.Type), k)
		}
		return jsonscan.End(doc, i)
	}
	switch f.Type {
	case Int32, Int64:
		if k == jsonscan.String && fixes.conform {
			return integerString(doc, i, f, fixes)
		}
		if k != jsonscan.Number {
			return failIfKnown(doc, i, typeError(expected(f), k))
		}
		e, isInt, err := jsonscan.NumberEnd(doc, i)
		if err != nil {
			return 0, err
		}
		if !isInt {
			return 0, failf("expected %s, but got number", expected(f))
		}
		n, ok := jsonscan.ParseInt(doc[i:e])
		if !ok {
			return 0, failf("%s is not valid 'int64'", quote(string(doc[i:e])))
		}
		if f.Type == Int32 && int64(int32(n)) != n {
			return 0, failf("%s is not valid 'int32'", quote(string(doc[i:e])))
		}
		return e, nil
	case Number:
		if k != jsonscan.Number {
			return failIfKnown(doc, i, typeError(expected(f), k))
		}
		e, _, err := jsonscan.NumberEnd(doc, i)
		if err != nil {
			return 0, err
		}
		// Numbers are stored, indexed and compared as 64-bit floats: one
		// that does not fit (1e400) could be neither.
		if _, err := strconv.ParseFloat(string(doc[i:e]), 64); err != nil {
			return 0, failf("%s is out of the range of a 64-bit floating point number", quote(string(doc[i:e])))
		}
		return e, nil
	case Bool:
		if k != jsonscan.Bool {
			return failIfKnown(doc, i, typeError(expected(f), k))
		}
		return jsonscan.End(doc, i)
	case String, Bytes, UUID, DateTime:
		if k != jsonscan.String {
			return failIfKnown(doc, i, typeError(expected(f), k))
		}
		return validateString(doc, i, f)
	case Array:
		if k != jsonscan.Array {
			return failIfKnown(doc, i, typeError(expected(f), k))
		}
		a, err := jsonscan.ArrayAt(doc, i)
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			v, ok, err := a.Next()
			if err != nil {
				return 0, err
			}
			if !ok {
				if f.LimitItems && n > f.MaxItems {
					return 0, failf("maximum %d items required, but found %d items", f.MaxItems, n)
				}
				if f.Vector && f.Dimensions > 0 && n != f.Dimensions {
					return 0, failf("a vector of %d dimensions is required, but found %d", f.Dimensions, n)
				}
				if f.Vector {
					if err := checkVectorValues(doc[i:a.End()], f.Distance); err != nil {
						return 0, err
					}
				}
				return a.End(), nil
			}
			n++
			if f.noItems { // no element type: only their count matters
				e, err := jsonscan.End(doc, v)
				if err != nil {
					return 0, err
				}
				a.Resume(e)
				continue
			}
			e, err := validateValue(doc, v, f.Items, fixes)
			if err != nil {
				return 0, under(err, strconv.Itoa(a.Index()))
			}
			a.Resume(e)
		}
	case Object:
		if k != jsonscan.Object {
			return failIfKnown(doc, i, typeError(expected(f), k))
		}
		if f.FreeForm {
			return jsonscan.End(doc, i)
		}
		return validateObject(doc, i, f.Properties, f.byName, f.required, fixes)
	}
	return 0, fmt.Errorf("schema: field %q has no type", f.Path)
}

// jsonType is the JSON schema type of a field's values.
func jsonType(t Type) string {
	switch t {
	case Int32, Int64:
		return "integer"
	case Number:
		return "number"
	case Bool:
		return "boolean"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "string"
}

// expected is what a value of f must be, in the original's words: its
// JSON type, "or null" when it takes null.
func expected(f *Field) string {
	if f.takesNull() {
		return jsonType(f.Type) + " or null"
	}
	return jsonType(f.Type)
}

// integerString checks the string at doc[i], the value of the integer
// field f, holds an integer written as JSON writes one (no sign but '-', no
// leading zero, no space) that fits f, and appends the edit that replaces
// the string by that number. Anything else is the type error a string
// gets where an integer is due.
func integerString(doc []byte, i int, f *Field, fixes *pass) (int, error) {
	e, escaped, err := jsonscan.StringEnd(doc, i)
	if err != nil {
		return 0, err
	}
	digits := doc[i+1 : e-1]
	if escaped {
		return 0, failf("expected %s, but got string", expected(f))
	}
	n, ok := jsonscan.ParseInt(digits)
	if !ok {
		if end, isInt, err := jsonscan.NumberEnd(digits, 0); err == nil && isInt && end == len(digits) {
			return 0, failf("%s is not valid 'int64'", quote(string(digits)))
		}
		return 0, failf("expected %s, but got string", expected(f))
	}
	if f.Type == Int32 && int64(int32(n)) != n {
		return 0, failf("%s is not valid 'int32'", quote(string(digits)))
	}
	fixes.edits = append(fixes.edits, edit{start: i, end: e, text: string(digits)})
	return e, nil
}

// failIfKnown returns fe, or the syntax error at doc[i] when the value there
// is not JSON at all (fe is nil then).
func failIfKnown(doc []byte, i int, fe *fieldError) (int, error) {
	if fe != nil {
		return 0, fe
	}
	return jsonscan.End(doc, i)
}

// validateString checks the string at doc[i] against f's maxLength and
// format.
func validateString(doc []byte, i int, f *Field) (int, error) {
	e, escaped, err := jsonscan.StringEnd(doc, i)
	if err != nil {
		return 0, err
	}
	if f.MaxLength == 0 && f.Type == String {
		return e, nil
	}
	s := doc[i+1 : e-1]
	if escaped {
		var buf [128]byte
		s = jsonscan.AppendUnquote(buf[:0], s)
	}
	if f.MaxLength > 0 {
		if n := utf8.RuneCount(s); n > f.MaxLength {
			return 0, failf("length must be <= %d, but got %d", f.MaxLength, n)
		}
	}
	var valid bool
	switch f.Type {
	case Bytes:
		valid = validBase64(s)
	case UUID:
		valid = validUUID(s)
	case DateTime:
		valid = validDateTime(s)
	default:
		valid = true
	}
	if !valid {
		return 0, failf("%s is not valid %s", quote(string(s)), quote(formatName(f.Type)))
	}
	return e, nil
}

// formatName is the JSON schema format a type's values are checked against.
func formatName(t Type) string {
	if t == Bytes {
		return "byte"
	}
	return t.String()
}

// validBase64 reports whether s is standard base64 with padding, as the
// original's "byte" format required.
func validBase64(s []byte) bool {
	var buf [256]byte
	dst := buf[:]
	if n := base64.StdEncoding.DecodedLen(len(s)); n > len(dst) {
		dst = make([]byte, n)
	}
	_, err := base64.StdEncoding.Decode(dst, s)
	return err == nil
}

// quote puts single quotes around s the way the original validator did in
// its messages: like Go quoting, but with ' escaped instead of ".
func quote(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}

// inFreeForm reports whether the dot path reaches inside a free-form
// object field ("d.f1" where d is one), which takes any value there.
func (s *Schema) inFreeForm(path string) bool {
	for i := strings.LastIndexByte(path, '.'); i > 0; i = strings.LastIndexByte(path[:i], '.') {
		if f, ok := s.Field(path[:i]); ok {
			return f.Type == Object && f.FreeForm
		}
	}
	return false
}

// checkVectorValues refuses what a vector index cannot hold: a component
// past float32's range (vectors are kept as float32), and under cosine
// distance a vector of zero length (no direction). Its elements have been
// validated as numbers.
func checkVectorValues(array []byte, distance string) error {
	a, err := jsonscan.ArrayAt(array, 0)
	if err != nil {
		return err
	}
	var norm float64
	for {
		v, ok, err := a.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		e, _, err := jsonscan.NumberEnd(array, v)
		if err != nil {
			return err
		}
		x, err := strconv.ParseFloat(string(array[v:e]), 32)
		if err != nil {
			return failf("%s is out of the range of a vector's components (32-bit floating point numbers)", quote(string(array[v:e])))
		}
		norm += x * x
		a.Resume(e)
	}
	if distance == DistanceCosine && norm == 0 {
		return failf("a vector of length zero has no direction, so no cosine distance to another")
	}
	return nil
}
