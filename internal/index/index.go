// Package index lays out the index entries that Folio keeps for every field
// of every document, and computes them from a document's JSON.
//
// An entry is a key with an empty value:
//
//	("i", collection id, field path, kind, value, primary key values...)
//
// where value is the field's value encoded with keyenc, so that the entries
// of one field sort by value and then by primary key: an equality is a prefix
// range, a comparison a range. Integers and numbers sort by numeric value,
// strings, uuids and date-times bytewise, bytes by their decoded bytes, false
// before true. A string field's value has up to two entries: kind Exact
// with the string as it is, and kind Folded with Fold of it unless that is
// the same, so that a case-sensitive comparison is one range of Exact
// entries and a case-insensitive one a range of Folded entries and the
// same range of Exact ones. Each element of an array of scalars has an
// entry under the array's path.
// Missing and null values have none: no comparison matches them.
//
// Strings and bytes longer than MaxValueBytes are indexed by their first
// MaxValueBytes bytes, which keeps keys short and within the store's key
// limit; see Truncate for how comparisons use such entries.
package index

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/schema"
)

// MaxValueBytes is how much of a string or bytes value an entry holds.
const MaxValueBytes = 128

// Truncate cuts a string or bytes value to what an entry holds, and reports
// whether it cut. A comparison with a cut value must widen: s > x implies
// cut(s) >= cut(x), s < x implies cut(s) <= cut(x), s = x implies
// cut(s) = cut(x); with an uncut x the comparison holds on cut(s) as is.
func Truncate(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		if len(t) > MaxValueBytes {
			return t[:MaxValueBytes], true
		}
	case []byte:
		if len(t) > MaxValueBytes {
			return t[:MaxValueBytes], true
		}
	}
	return v, false
}

// Fold is the case mapping of the "ci" collation: strings.ToLower, which
// lowers rune by rune with unicode.ToLower (simple case mapping, no full
// Unicode case folding: "ß" does not match "SS"). Filters compare under
// "ci" with it, and the Folded entries of every stored string hold its
// result: changing it changes the on-disk format, and an existing store's
// Folded entries would then have to be rebuilt.
func Fold(s string) string { return strings.ToLower(s) }

// Kind tells the two entries of a string apart.
type Kind int64

// The kinds of entries.
const (
	Exact  Kind = 0 // the value as it is
	Folded Kind = 1 // a string's value after Fold
)

// Entry is one index entry of a document, without its key suffix.
type Entry struct {
	Path  string
	Kind  Kind
	Value []byte // the keyenc encoding of the value: one element
}

// FieldPrefix is the key prefix of every entry of one field and kind.
func FieldPrefix(collID int64, path string, kind Kind) []byte {
	return keyspace.IndexField(collID, path, int64(kind))
}

// Key is the key of an entry for the document whose primary key values are
// encoded in pkSuffix (the part of its document key after the collection's
// document prefix).
func Key(collID int64, e Entry, pkSuffix []byte) []byte {
	k := make([]byte, 0, 24+len(e.Path)+len(e.Value)+len(pkSuffix))
	k = keyspace.AppendIndexField(k, collID, e.Path, int64(e.Kind))
	k = append(k, e.Value...)
	return append(k, pkSuffix...)
}

// PKSuffix returns the primary key part of an index key whose field prefix
// is prefixLen bytes long: what follows the prefix and the value.
func PKSuffix(key []byte, prefixLen int) ([]byte, error) {
	_, rest, err := keyenc.DecodeOne(key[prefixLen:])
	if err != nil {
		return nil, fmt.Errorf("index: corrupt key %x: %w", key, err)
	}
	return rest, nil
}

// EncodeValue encodes a typed value (int64, float64, string, []byte, bool,
// as filter comparisons hold them) as an entry's value.
func EncodeValue(v any) ([]byte, error) {
	switch v := v.(type) {
	case int64:
		return keyenc.AppendInt(nil, v), nil
	case float64:
		return keyenc.AppendFloat(nil, v)
	case string:
		return keyenc.AppendString(nil, v), nil
	case []byte:
		return keyenc.AppendBytes(nil, v), nil
	case bool:
		return keyenc.AppendBool(nil, v), nil
	}
	return nil, fmt.Errorf("index: cannot encode %T", v)
}

// Entries returns the index entries of a document (a JSON object that
// follows s), sorted and without duplicates.
func Entries(s *schema.Schema, doc []byte) ([]Entry, error) {
	var out []Entry
	start := jsonscan.SkipSpace(doc, 0)
	if err := walkObject(doc, start, s.Fields(), &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	dedup := out[:0]
	for i, e := range out {
		if i == 0 || less(out[i-1], e) {
			dedup = append(dedup, e)
		}
	}
	return dedup, nil
}

func less(a, b Entry) bool {
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return bytes.Compare(a.Value, b.Value) < 0
}

func walkObject(doc []byte, at int, fields []*schema.Field, out *[]Entry) error {
	obj, err := jsonscan.ObjectAt(doc, at)
	if err != nil {
		return err
	}
	for {
		key, escaped, value, ok, err := obj.Next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		name := string(key)
		if escaped {
			name = jsonscan.Unquote(key)
		}
		f := fieldNamed(fields, name)
		end, err := jsonscan.End(doc, value)
		if err != nil {
			return err
		}
		obj.Resume(end)
		if f == nil || jsonscan.KindAt(doc, value) == jsonscan.Null {
			continue
		}
		switch {
		case f.Type.Scalar():
			if err := addScalar(doc[value:end], f.Path, f.Type, out); err != nil {
				return fmt.Errorf("field %s: %w", f.Path, err)
			}
		case f.Type == schema.Object && !f.FreeForm:
			if err := walkObject(doc, value, f.Properties, out); err != nil {
				return err
			}
		case f.Type == schema.Array && f.Items != nil && f.Items.Type.Scalar():
			if err := walkArray(doc, value, f.Path, f.Items.Type, out); err != nil {
				return err
			}
		}
	}
}

func fieldNamed(fields []*schema.Field, name string) *schema.Field {
	for _, f := range fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func walkArray(doc []byte, at int, path string, t schema.Type, out *[]Entry) error {
	arr, err := jsonscan.ArrayAt(doc, at)
	if err != nil {
		return err
	}
	for {
		value, ok, err := arr.Next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		end, err := jsonscan.End(doc, value)
		if err != nil {
			return err
		}
		arr.Resume(end)
		if jsonscan.KindAt(doc, value) == jsonscan.Null {
			continue
		}
		if err := addScalar(doc[value:end], path, t, out); err != nil {
			return fmt.Errorf("field %s: %w", path, err)
		}
	}
}

// ScalarValue decodes one JSON scalar (not null) of schema type t into the typed
// value its entry holds before any cut: int64 for integers, float64 for
// numbers, bool, string for strings, uuids and date-times, []byte for
// bytes; nil for a type that has no entry. Aggregates group documents by
// it, so that a group read from the documents and one read from the
// entries are the same value.
func ScalarValue(tok []byte, t schema.Type) (any, error) {
	switch t {
	case schema.Int32, schema.Int64:
		n, ok := jsonscan.ParseInt(tok)
		if !ok {
			return nil, fmt.Errorf("not an integer: %s", tok)
		}
		return n, nil
	case schema.Number:
		return strconv.ParseFloat(string(tok), 64)
	case schema.Bool:
		return tok[0] == 't', nil
	case schema.String, schema.UUID, schema.DateTime:
		return stringValue(tok), nil
	case schema.Bytes:
		return base64.StdEncoding.DecodeString(stringValue(tok))
	}
	return nil, nil
}

// addScalar appends the entries of one JSON scalar of schema type t.
func addScalar(tok []byte, path string, t schema.Type, out *[]Entry) error {
	v, err := ScalarValue(tok, t)
	if err != nil || v == nil {
		return err
	}
	cut, _ := Truncate(v)
	enc, err := EncodeValue(cut)
	if err != nil {
		return err
	}
	*out = append(*out, Entry{Path: path, Kind: Exact, Value: enc})
	// A string that folds to itself (as written, or as far as entries
	// keep of it) needs no Folded entry: its Exact one holds the same
	// value, and case-insensitive lookups read both kinds. Most strings
	// in real data are so (identifiers, emails, lower-case words), and the
	// Folded entries were nearly half the index.
	if t == schema.String {
		if folded, _ := Truncate(Fold(v.(string))); folded != cut {
			*out = append(*out, Entry{Path: path, Kind: Folded, Value: keyenc.AppendString(nil, folded.(string))})
		}
	}
	return nil
}

// stringValue decodes a JSON string token (with its quotes).
func stringValue(tok []byte) string {
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	return jsonscan.Unquote(inner)
}

// Diff returns the entries of old that next lacks and those of next that old
// lacks; both inputs are sorted as Entries returns them.
func Diff(old, next []Entry) (removed, added []Entry) {
	i, j := 0, 0
	for i < len(old) || j < len(next) {
		switch {
		case j == len(next) || (i < len(old) && less(old[i], next[j])):
			removed = append(removed, old[i])
			i++
		case i == len(old) || less(next[j], old[i]):
			added = append(added, next[j])
			j++
		default:
			i++
			j++
		}
	}
	return removed, added
}

// Value returns the value of the scalar field f (one Schema.Field
// reaches, outside arrays) in doc: its JSON text and its whole value, not
// cut as an entry holds it (see Truncate). tok is nil when the document
// lacks the field or has it null, which have no entries.
func Value(doc []byte, f *schema.Field) (tok []byte, v any, err error) {
	at := jsonscan.SkipSpace(doc, 0)
	path := f.Path
	for {
		name, rest, nested := strings.Cut(path, ".")
		if jsonscan.KindAt(doc, at) != jsonscan.Object {
			return nil, nil, nil
		}
		if at, err = member(doc, at, name); err != nil || at < 0 {
			return nil, nil, err
		}
		if !nested {
			break
		}
		path = rest
	}
	if jsonscan.KindAt(doc, at) == jsonscan.Null {
		return nil, nil, nil
	}
	end, err := jsonscan.End(doc, at)
	if err != nil {
		return nil, nil, err
	}
	tok = doc[at:end]
	if v, err = ScalarValue(tok, f.Type); err != nil {
		return nil, nil, fmt.Errorf("field %s: %w", f.Path, err)
	}
	return tok, v, nil
}

// member returns where the value of the member called name of the object
// at doc[at] starts, or -1 if it has none.
func member(doc []byte, at int, name string) (int, error) {
	obj, err := jsonscan.ObjectAt(doc, at)
	if err != nil {
		return -1, err
	}
	for {
		key, escaped, value, ok, err := obj.Next()
		if err != nil || !ok {
			return -1, err
		}
		if string(key) == name || (escaped && jsonscan.Unquote(key) == name) {
			return value, nil
		}
		end, err := jsonscan.End(doc, value)
		if err != nil {
			return -1, err
		}
		obj.Resume(end)
	}
}
