package schemagen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// typeDecl is one type to generate: the collection's, or that of an object
// field (or of the elements of an array of objects).
type typeDecl struct {
	Name        string // CamelCase, unique among the types of one schema
	Description string
	// Collection is the collection's name for the collection's own type,
	// empty for the types of nested objects.
	Collection string
	Fields     []*fieldDecl
}

// fieldDecl is one field of a type.
type fieldDecl struct {
	JSON        string // the property name, as the schema has it
	Description string
	// Type is the type of the field's value, or for an array that of its
	// innermost elements; Dims is how many arrays wrap it.
	Type schema.Type
	Dims int
	// Object is the generated type of an object with properties; nil for
	// scalars and for free-form objects (FreeForm), which have no type of
	// their own.
	Object   *typeDecl
	FreeForm bool
	// KeyOrder is the field's place in the primary key, from 1; 0 when it
	// is not part of it.
	KeyOrder     int
	AutoGenerate bool

	// The annotations only the final server's text carries (Final).
	MaxLength                int
	Required                 bool
	SearchIndex, Sort, Facet bool
	Default                  []byte // a JSON literal
	DefaultFunc              string // "now()", "uuid()", "cuid()"
	CreatedAt, UpdatedAt     bool
	// Nullable is the field's ("type":["string","null"]); ItemsNullable
	// that of an array's innermost elements.
	Nullable, ItemsNullable bool
}

// model is what every language's generator walks: the schema's types in
// the order they are to be written, so that a type comes after the types
// of its fields, as in the original's output.
type model struct {
	Types []*typeDecl
}

// buildModel walks a schema into its types. reserved says which type
// names a language cannot use (TypeScript's Array, Java's String...): a
// type that would get one is numbered instead, as a clash between two
// nested types is. Two nested objects with the same fields are given one
// type, as in the original: the first one's.
//
// In the 2022 style the collection's type takes its name first, so that a
// nested type of the same name (a field "user" in collection "users") is
// the one numbered, and fields keep their schema order. In the Final
// style, as the final server did, fields come in name order and the
// collection's type is named last (User1 after a nested User); two
// nested objects then share a type only when every annotation the text
// shows is the same too.
func buildModel(s *schema.Schema, st Style, reserved func(string) bool) *model {
	b := &modelBuilder{style: st, names: newNamer(reserved), byBody: make(map[string]*typeDecl)}
	top := &typeDecl{Description: s.Description(), Collection: s.Name()}
	if st != Final {
		top.Name = b.names.claim(typeName(s.Name()))
	}
	keyOrder := make(map[*schema.Field]int, len(s.PrimaryKey()))
	for i, f := range s.PrimaryKey() {
		keyOrder[f] = i + 1
	}
	top.Fields = b.fields(s.Fields(), keyOrder)
	if st == Final {
		top.Name = b.names.claim(typeName(s.Name()))
	}
	b.types = append(b.types, top)
	return &model{Types: b.types}
}

type modelBuilder struct {
	style  Style
	names  *namer
	byBody map[string]*typeDecl // by body(): the types already generated
	types  []*typeDecl
}

func (b *modelBuilder) fields(fields []*schema.Field, keyOrder map[*schema.Field]int) []*fieldDecl {
	if b.style == Final {
		// The final server read properties into a map and sorted its keys.
		fields = slices.SortedStableFunc(slices.Values(fields), func(a, b *schema.Field) int { return strings.Compare(a.Name, b.Name) })
	}
	out := make([]*fieldDecl, 0, len(fields))
	for _, f := range fields {
		d := &fieldDecl{JSON: f.Name, Description: f.Description, KeyOrder: keyOrder[f], AutoGenerate: f.AutoGenerate,
			MaxLength: f.MaxLength, Required: f.Required, SearchIndex: f.SearchIndex, Sort: f.Sorted, Facet: f.Facet,
			Default: f.Default, DefaultFunc: f.DefaultFunc, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, Nullable: f.Nullable}
		elem := f
		for elem.Type == schema.Array {
			elem = elem.Items
			d.Dims++
			d.ItemsNullable = elem.Nullable
		}
		d.Type = elem.Type
		switch {
		case elem.Type != schema.Object:
		case elem.FreeForm:
			d.FreeForm = true
		default:
			// Named after the field, not after the element: an array
			// "addresses" of objects holds Address values.
			d.Object = b.object(f.Name, elem)
		}
		out = append(out, d)
	}
	return out
}

// object returns the type of an object field named name, generating it
// unless a type with the same fields exists already.
func (b *modelBuilder) object(name string, f *schema.Field) *typeDecl {
	t := &typeDecl{Description: f.Description, Fields: b.fields(f.Properties, nil)}
	key := body(t, b.style)
	if existing, ok := b.byBody[key]; ok {
		return existing
	}
	t.Name = b.names.claim(typeName(name))
	b.byBody[key] = t
	b.types = append(b.types, t)
	return t
}

// body is a text that two nested types share exactly when they would be
// generated the same but for their names.
func body(t *typeDecl, st Style) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%q", t.Description)
	for _, f := range t.Fields {
		obj := ""
		if f.Object != nil {
			obj = f.Object.Name
		}
		fmt.Fprintf(&sb, "|%q %q %d %d %q %t %d %t", f.JSON, f.Description, f.Type, f.Dims, obj, f.FreeForm, f.KeyOrder, f.AutoGenerate)
		if st == Final {
			fmt.Fprintf(&sb, " %d %t %t %t %t %q %q %t %t %t %t", f.MaxLength, f.Required, f.SearchIndex, f.Sort, f.Facet,
				f.Default, f.DefaultFunc, f.CreatedAt, f.UpdatedAt, f.Nullable, f.ItemsNullable)
		}
	}
	return sb.String()
}

// commentLines splits a description into the lines of a line comment.
// Every line break a language knows (\r, \r\n, JavaScript's U+2028 and
// U+2029) starts a new line, since in a line comment it would end the
// comment; other control characters and the byte order mark, which Go
// refuses anywhere in a source file, become spaces.
func commentLines(desc string) []string {
	desc = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n").Replace(desc)
	desc = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || r == '\ufeff' {
			return ' '
		}
		return r
	}, desc)
	return strings.Split(desc, "\n")
}
