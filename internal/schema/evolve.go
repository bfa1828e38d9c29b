package schema

import "strings"

// Compatible decides whether a collection whose schema is old may change to
// next (reference §5, schema update rules). Documents stored under old must
// stay valid and keep their keys, so it refuses, with an *Error
// (INVALID_ARGUMENT) that names the field:
//   - a change of collection type or of primary key (fields or their order);
//   - a field removed, at any depth;
//   - a field whose type changes, format included (int32 to int64, string
//     to uuid...), or an object that changes between free-form and declared
//     properties;
//   - a maxLength that shrinks, or appears on a field that had none.
//
// Added fields, dropped or relaxed maxLength, and description changes are
// allowed.
func Compatible(old, next *Schema) error {
	if old.collectionType != next.collectionType {
		return invalidf("changing the collection type is not allowed, '%s' to '%s'", old.collectionType, next.collectionType)
	}
	oldKey, nextKey := keyNames(old), keyNames(next)
	if oldKey != nextKey {
		return invalidf("primary key changes are not allowed, [%s] to [%s]", oldKey, nextKey)
	}
	return compatibleFields(old.fields, next.fields, next.byName, "")
}

func keyNames(s *Schema) string {
	names := make([]string, len(s.primaryKey))
	for i, f := range s.primaryKey {
		names[i] = "'" + f.Name + "'"
	}
	return strings.Join(names, ", ")
}

func compatibleFields(old, next []*Field, nextByName map[string]int, parent string) error {
	for _, o := range old {
		where := joinPath(parent, o.Name)
		i, ok := nextByName[o.Name]
		if !ok {
			return invalidf("removing a field is a backward incompatible change, field '%s'", where)
		}
		if err := compatibleField(o, next[i], where); err != nil {
			return err
		}
	}
	return nil
}

func compatibleField(o, n *Field, where string) error {
	if o.Type != n.Type {
		return invalidf("data type mismatch for field '%s', '%s' to '%s'", where, o.Type, n.Type)
	}
	if shrinks := n.MaxLength > 0 && (o.MaxLength == 0 || n.MaxLength < o.MaxLength); shrinks {
		return invalidf("reducing length of an existing field is not allowed, field '%s'", where)
	}
	switch o.Type {
	case Array:
		if o.noItems {
			return nil // it held no element: any element type will do
		}
		return compatibleField(o.Items, n.Items, where+"[]")
	case Object:
		switch {
		case o.FreeForm && !n.FreeForm:
			return invalidf("declaring properties of the free-form object field '%s' is not allowed", where)
		case !o.FreeForm && n.FreeForm && len(o.Properties) > 0:
			return invalidf("removing a field is a backward incompatible change, field '%s'", joinPath(where, o.Properties[0].Name))
		case !o.FreeForm && !n.FreeForm:
			return compatibleFields(o.Properties, n.Properties, n.byName, where)
		}
	}
	return nil
}
