package schema

import (
	"slices"
	"strings"

	"github.com/foliodb/folio/internal/jsonscan"
)

// Unique keys (Folio's own, not the original's): a field declared with
// "unique": true, or a list of fields named in the schema's top-level
// "unique" member ("unique": [["first", "last"]]), whose values no two
// documents share. A document that lacks one of a key's fields, or has it
// null, is not checked for that key. The writes check them (package
// documents) against the index entries every field already has.

// MaxUniqueKeys bounds the unique keys of a schema, and MaxUniqueKeyFields
// the fields of one: every write of a document reads the index entries of
// each key's values, so each key costs every write a lookup.
const (
	MaxUniqueKeys      = 16
	MaxUniqueKeyFields = 8
)

// UniqueKey is a set of fields whose values, taken together, no two
// documents of the collection share.
type UniqueKey struct {
	// Fields are the key's fields: scalar fields reachable by
	// Schema.Field (not inside arrays), none of them boolean.
	Fields []*Field
}

// Names lists the key's field paths for messages: 'email', or 'first',
// 'last'.
func (k UniqueKey) Names() string {
	names := make([]string, len(k.Fields))
	for i, f := range k.Fields {
		names[i] = "'" + f.Path + "'"
	}
	return strings.Join(names, ", ")
}

// paths is the key's field paths in a fixed order, to compare keys.
func (k UniqueKey) paths() string {
	ps := make([]string, len(k.Fields))
	for i, f := range k.Fields {
		ps[i] = f.Path
	}
	slices.Sort(ps)
	return strings.Join(ps, "\x00")
}

// Unique returns the schema's unique keys: those of fields marked unique,
// in schema order, then those of the top-level "unique" member, in its
// order.
func (s *Schema) Unique() []UniqueKey { return s.unique }

// AddedUnique returns the unique keys of next that old does not have:
// those a schema change adds, which the documents stored under old must
// be checked against.
func AddedUnique(old, next *Schema) []UniqueKey {
	var added []UniqueKey
	for _, k := range next.unique {
		if !slices.ContainsFunc(old.unique, func(o UniqueKey) bool { return o.paths() == k.paths() }) {
			added = append(added, k)
		}
	}
	return added
}

// readFieldUnique reads a field's "unique": a boolean, true only on a
// field of a scalar type other than boolean.
func readFieldUnique(raw []byte, ms members, f *Field, where string) error {
	m, ok := ms.get("unique")
	if !ok {
		return nil
	}
	switch m.text(raw) {
	case "true":
	case "false":
		return nil
	default:
		return invalidf("unique of field '%s' must be a boolean", where)
	}
	if err := uniqueType(f, where); err != nil {
		return err
	}
	f.Unique = true
	return nil
}

// uniqueType refuses a unique key on a field whose values cannot be one:
// arrays, objects (vectors are arrays), and booleans, which would let two
// documents at most hold the field.
func uniqueType(f *Field, where string) error {
	switch {
	case f.Type == Bool:
		return invalidf("unique is not supported on boolean field '%s': two documents at most could have it", where)
	case !f.Type.Scalar():
		return invalidf("unique is only supported on fields of a scalar type (string, integer, number, uuid, date-time, byte), not on %s field '%s'", f.Type, where)
	}
	return nil
}

// readUnique builds s.unique from the fields marked unique and from the
// top-level member m (present if has), once the fields and the primary
// key are known.
func (s *Schema) readUnique(raw []byte, m member, has bool) error {
	if err := uniqueInArrays(s.fields, false); err != nil {
		return err
	}
	for _, f := range s.scalars {
		if f.Unique {
			if err := s.addUnique(UniqueKey{Fields: []*Field{f}}); err != nil {
				return err
			}
		}
	}
	if !has {
		return nil
	}
	bad := invalidf(`unique of the schema must be an array of arrays of field paths, such as [["first", "last"]]`)
	if m.kind(raw) != jsonscan.Array {
		return bad
	}
	a, _ := jsonscan.ArrayAt(raw, m.start)
	for {
		v, ok, err := a.Next()
		if err != nil {
			return bad
		}
		if !ok {
			return nil
		}
		e, _ := jsonscan.End(raw, v)
		a.Resume(e)
		key, err := s.readUniqueKey(raw, member{start: v, end: e}, bad)
		if err != nil {
			return err
		}
		if err := s.addUnique(key); err != nil {
			return err
		}
	}
}

// readUniqueKey reads one element of the top-level "unique": a list of
// distinct field paths.
func (s *Schema) readUniqueKey(raw []byte, m member, bad error) (UniqueKey, error) {
	if !stringArray(raw, m) {
		return UniqueKey{}, bad
	}
	var key UniqueKey
	a, _ := jsonscan.ArrayAt(raw, m.start)
	for {
		v, ok, _ := a.Next()
		if !ok {
			break
		}
		e, _, _ := jsonscan.StringEnd(raw, v)
		a.Resume(e)
		path := unquoteSpan(raw, v, e)
		f, ok := s.paths[path]
		if !ok {
			return UniqueKey{}, invalidf("unique field '%s' is not a field of the schema (nested fields are named by dot paths, fields inside arrays cannot be unique)", path)
		}
		if err := uniqueType(f, path); err != nil {
			return UniqueKey{}, err
		}
		if slices.Contains(key.Fields, f) {
			return UniqueKey{}, invalidf("unique key names field '%s' twice", path)
		}
		key.Fields = append(key.Fields, f)
	}
	switch {
	case len(key.Fields) == 0:
		return UniqueKey{}, invalidf("a unique key must name at least one field")
	case len(key.Fields) > MaxUniqueKeyFields:
		return UniqueKey{}, invalidf("unique key [%s] has more than %d fields", key.Names(), MaxUniqueKeyFields)
	}
	return key, nil
}

// addUnique adds a key, refusing one that means nothing: one declared
// twice, or one holding the whole primary key (unique already).
func (s *Schema) addUnique(k UniqueKey) error {
	if s.collectionType != Documents {
		return invalidf("unique is only supported on collection type of 'documents'")
	}
	if slices.ContainsFunc(s.unique, func(o UniqueKey) bool { return o.paths() == k.paths() }) {
		return invalidf("unique key [%s] is declared twice", k.Names())
	}
	if !slices.ContainsFunc(s.primaryKey, func(pk *Field) bool { return !slices.Contains(k.Fields, pk) }) {
		return invalidf("unique key [%s] holds the whole primary key, which is unique already", k.Names())
	}
	if len(s.unique) == MaxUniqueKeys {
		return invalidf("schema has more than %d unique keys", MaxUniqueKeys)
	}
	s.unique = append(s.unique, k)
	return nil
}

// uniqueInArrays refuses a field marked unique inside an array: each
// element would be a value of its own, which is not what a unique key of
// a document means here.
func uniqueInArrays(fields []*Field, inArray bool) error {
	for _, f := range fields {
		if f.Unique && inArray {
			return invalidf("unique is not supported on field '%s', which is inside an array", f.Path)
		}
		if f.Items != nil {
			if err := uniqueInArrays([]*Field{f.Items}, true); err != nil {
				return err
			}
		}
		if err := uniqueInArrays(f.Properties, inArray); err != nil {
			return err
		}
	}
	return nil
}
