package schemagen

import (
	"go/format"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// generateGo writes a struct per type, as the Tigris Go client of the era
// declares models: every field with a json tag holding its property name,
// key fields with tigris:"primaryKey:N" (and autoGenerate), descriptions as
// comments. The text uses the packages time (date-time) and
// github.com/google/uuid (uuid) without importing them.
//
// The text is gofmt'ed; the original's was not.
func generateGo(s *schema.Schema) string {
	var b strings.Builder
	for _, t := range buildModel(s, Style2022, nil).Types {
		writeGoStruct(&b, t)
	}
	// A partial file of declarations is something go/format accepts; it
	// only fails on text that does not parse, which would be a bug here,
	// and then the unformatted text is still the better answer.
	if out, err := format.Source([]byte(b.String())); err == nil {
		return string(out)
	}
	return b.String()
}

func writeGoStruct(b *strings.Builder, t *typeDecl) {
	b.WriteString("\n")
	writeLineComment(b, "", t.Name, t.Description)
	b.WriteString("type " + t.Name + " struct {\n")
	names := newNamer(nil)
	for _, f := range t.Fields {
		// Two property names can CamelCase alike (user_name, userName):
		// the second becomes UserName1, its json tag keeping it apart.
		name := names.claim(exported(f.JSON))
		writeLineComment(b, "\t", name, f.Description)
		b.WriteString("\t" + name + " " + goType(f) + " " + goTag(f) + "\n")
	}
	b.WriteString("}\n")
}

func goType(f *fieldDecl) string {
	var elem string
	switch {
	case f.Object != nil:
		elem = f.Object.Name
	case f.FreeForm:
		elem = "map[string]any"
	default:
		elem = goScalar(f.Type)
	}
	return strings.Repeat("[]", f.Dims) + elem
}

func goScalar(t schema.Type) string {
	switch t {
	case schema.Int32:
		return "int32"
	case schema.Int64:
		return "int64"
	case schema.Number:
		return "float64"
	case schema.Bool:
		return "bool"
	case schema.Bytes:
		return "[]byte"
	case schema.UUID:
		return "uuid.UUID"
	case schema.DateTime:
		return "time.Time"
	}
	return "string"
}

// goTag is the field's struct tag as a Go literal: a raw string unless the
// property name holds a backquote.
func goTag(f *fieldDecl) string {
	tag := "json:" + strconv.Quote(f.JSON)
	if f.KeyOrder > 0 {
		opts := "primaryKey:" + strconv.Itoa(f.KeyOrder)
		if f.AutoGenerate {
			opts += ",autoGenerate"
		}
		tag += " tigris:" + strconv.Quote(opts)
	}
	if strings.Contains(tag, "`") {
		return strconv.Quote(tag)
	}
	return "`" + tag + "`"
}
