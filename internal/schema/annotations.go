package schema

import (
	"bytes"
	"strings"

	"github.com/foliodb/folio/internal/jsonscan"
)

// The field annotations of the final (2023) clients, as the original
// server read them: the flags index, searchIndex, sort, facet, id and
// additionalProperties (booleans, which change nothing here: every field
// is indexed, searchable, sortable and facetable), tags (strings),
// required (field names), maxItems and dimensions (positive integers),
// and those with effects: default, createdAt and updatedAt.

// defaultFuncs are the functions a default may name.
const (
	defaultNow  = "now()"
	defaultUUID = "uuid()"
	defaultCUID = "cuid()"
)

// parseAnnotations reads the annotations of field f (whose type is known)
// from its definition's members ms.
func parseAnnotations(raw []byte, ms members, f *Field, where string) error {
	for _, name := range []string{"index", "searchIndex", "sort", "facet", "id", "additionalProperties", "createdAt", "updatedAt"} {
		m, ok := ms.get(name)
		if !ok {
			continue
		}
		switch m.text(raw) {
		case "true":
			switch name {
			case "createdAt":
				f.CreatedAt = true
			case "updatedAt":
				f.UpdatedAt = true
			case "searchIndex":
				f.SearchIndex = true
			case "sort":
				f.Sorted = true
			case "facet":
				f.Facet = true
			}
		case "false":
		default:
			return invalidf("%s of field '%s' must be a boolean", name, where)
		}
	}
	if (f.CreatedAt || f.UpdatedAt) && f.Type != DateTime {
		what := "createdAt"
		if f.UpdatedAt {
			what = "updatedAt"
		}
		return invalidf("%s is only supported for date-time type, and field '%s' is not one", what, where)
	}
	for _, name := range []string{"dimensions"} { // maxItems: readMaxItems
		m, ok := ms.get(name)
		if !ok {
			continue
		}
		n, isInt := jsonscan.ParseInt(raw[m.start:m.end])
		if !isInt || n < 1 || n > 1<<31-1 {
			return invalidf("%s of field '%s' must be a positive integer", name, where)
		}
		if f.Type != Array {
			return invalidf("%s is only supported on array fields, not on field '%s'", name, where)
		}
		if name == "dimensions" {
			f.Dimensions = int(n)
		}
	}
	if err := parseDistance(raw, ms, f, where); err != nil {
		return err
	}
	for _, name := range []string{"tags", "required"} {
		if m, ok := ms.get(name); ok && !stringArray(raw, m) {
			return invalidf("%s of field '%s' must be an array of strings", name, where)
		}
	}
	if m, ok := ms.get("default"); ok {
		return parseDefault(raw, m, f, where)
	}
	return nil
}

func stringArray(raw []byte, m member) bool {
	if m.kind(raw) != jsonscan.Array {
		return false
	}
	a, _ := jsonscan.ArrayAt(raw, m.start)
	for {
		v, ok, err := a.Next()
		if err != nil {
			return false
		}
		if !ok {
			return true
		}
		if jsonscan.KindAt(raw, v) != jsonscan.String {
			return false
		}
		e, _ := jsonscan.End(raw, v)
		a.Resume(e)
	}
}

// parseDefault reads a field's default: a literal of the field's type, or
// one of the functions now() (date-time fields: the write's time, as
// createdAt), uuid() and cuid() (string fields; uuid() on uuid fields
// too). A literal is checked as a value of the field would be when a
// document without it is written.
func parseDefault(raw []byte, m member, f *Field, where string) error {
	text := raw[m.start:m.end]
	mismatch := func(kind string) error {
		return invalidf("default value of field '%s' must be %s", where, kind)
	}
	switch m.kind(raw) {
	case jsonscan.Bool:
		if f.Type != Bool {
			return mismatch(typeKind(f.Type))
		}
	case jsonscan.Number:
		switch f.Type {
		case Int32, Int64:
			if _, ok := jsonscan.ParseInt(text); !ok {
				return mismatch("an integer")
			}
		case Number:
		default:
			return mismatch(typeKind(f.Type))
		}
	case jsonscan.String:
		if !f.Type.stringLike() {
			return mismatch(typeKind(f.Type))
		}
		s, _ := m.str(raw)
		switch {
		case s == defaultNow:
			if f.Type != DateTime {
				return invalidf("now() is only supported for date-time type, and field '%s' is not one", where)
			}
			f.DefaultFunc = s // the value createdAt gives (defaults.go)
			return nil
		case s == defaultUUID && (f.Type == String || f.Type == UUID), s == defaultCUID && f.Type == String:
			f.DefaultFunc = s
			return nil
		case strings.HasSuffix(s, "()"):
			return invalidf("'%s' function is not supported as the default of field '%s'", s, where)
		}
	case jsonscan.Array:
		if f.Type != Array {
			return mismatch(typeKind(f.Type))
		}
	default:
		return invalidf("unsupported default value for field '%s'", where)
	}
	if _, err := validateValue(text, 0, f, &pass{}); err != nil {
		return invalidf("default value of field '%s' is not valid: %s", where, err)
	}
	f.Default = bytes.Clone(text)
	return nil
}

// typeKind names what a JSON value of a field of type t is.
func typeKind(t Type) string {
	switch t {
	case Bool:
		return "true or false"
	case Int32, Int64:
		return "an integer"
	case Number:
		return "a number"
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "a string"
}

// hasDefaults tells whether any of fields (or of the fields of their
// objects, outside arrays) has a default or createdAt (defaults), or
// updatedAt (stamps).
func hasDefaults(fields []*Field) (defaults, stamps bool) {
	for _, f := range fields {
		defaults = defaults || f.Default != nil || f.DefaultFunc != "" || f.CreatedAt
		stamps = stamps || f.UpdatedAt
		if f.Type == Object {
			d, s := hasDefaults(f.Properties)
			defaults, stamps = defaults || d, stamps || s
		}
	}
	return defaults, stamps
}

// The distances a vector field may be searched by (its "distance"
// annotation, Folio's own). Cosine is the original's, and the default.
const (
	DistanceCosine    = "cosine"
	DistanceEuclidean = "euclidean"
	DistanceDot       = "dot"
)

// parseDistance reads a vector field's distance, cosine when absent.
func parseDistance(raw []byte, ms members, f *Field, where string) error {
	m, ok := ms.get("distance")
	if !ok {
		if f.Vector {
			f.Distance = DistanceCosine
		}
		return nil
	}
	if !f.Vector {
		return invalidf("distance is only supported on vector fields (an array of format vector), not on field '%s'", where)
	}
	d, isString := m.str(raw)
	switch {
	case !isString:
		return invalidf("distance of field '%s' must be a string", where)
	case d == DistanceCosine, d == DistanceEuclidean, d == DistanceDot:
		f.Distance = d
		return nil
	}
	return invalidf("distance of field '%s' must be %q, %q or %q, not %s", where, DistanceCosine, DistanceEuclidean, DistanceDot, quote(d))
}
