package schemagen

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// generateGoFinal writes a struct per type as the final server did: not
// gofmt'ed (one space between a field's name, type and tag), an array
// field named in the plural (ArrayValues), a nullable field a pointer, a
// json tag only where the property name is not the field's, and a tigris
// tag for every annotation the Go client reads (primaryKey, default,
// autoGenerate, updatedAt, createdAt, maxLength, required, searchIndex,
// sort, facet, in that order).
func generateGoFinal(s *schema.Schema) string {
	var b strings.Builder
	for _, t := range buildModel(s, Final, nil).Types {
		b.WriteString("\n")
		writeLineComment(&b, "", t.Name, t.Description)
		b.WriteString("type " + t.Name + " struct {")
		names := newNamer(nil)
		for _, f := range t.Fields {
			name := exported(f.JSON)
			if f.Dims > 0 {
				name = plural(name)
			}
			name = names.claim(name)
			b.WriteString(strings.TrimSuffix("\n"+lineComment("\t", name, f.Description), "\n"))
			b.WriteString("\n\t" + name + " " + goTypeFinal(f))
			if tag := goTagFinal(f, name); tag != "" {
				b.WriteString(" " + tag)
			}
		}
		b.WriteString("\n}\n")
	}
	return b.String()
}

// lineComment is what writeLineComment writes.
func lineComment(indent, name, desc string) string {
	var b strings.Builder
	writeLineComment(&b, indent, name, desc)
	return b.String()
}

// goTypeFinal is goType with the pointers of nullable values. Unlike the
// final server, which wrote one [] whatever the depth, it writes every
// dimension of an array of arrays.
func goTypeFinal(f *fieldDecl) string {
	t := goType(f)
	if f.Dims > 0 && f.ItemsNullable {
		t = strings.Repeat("[]", f.Dims) + "*" + strings.TrimPrefix(t, strings.Repeat("[]", f.Dims))
	}
	if f.Nullable {
		t = "*" + t
	}
	return t
}

// goTagFinal is the field's struct tag literal, "" when it needs none.
func goTagFinal(f *fieldDecl, name string) string {
	var parts []string
	if f.JSON != name {
		parts = append(parts, "json:"+strconv.Quote(f.JSON))
	}
	var opts []string
	if f.KeyOrder > 0 {
		opts = append(opts, "primaryKey:"+strconv.Itoa(f.KeyOrder))
	}
	if def := goDefault(f); def != "" {
		opts = append(opts, "default:"+def)
	}
	for _, o := range []struct {
		on   bool
		name string
	}{{f.AutoGenerate, "autoGenerate"}, {f.UpdatedAt, "updatedAt"}, {f.CreatedAt, "createdAt"}} {
		if o.on {
			opts = append(opts, o.name)
		}
	}
	if f.MaxLength > 0 {
		opts = append(opts, "maxLength:"+strconv.Itoa(f.MaxLength))
	}
	for _, o := range []struct {
		on   bool
		name string
	}{{f.Required, "required"}, {f.SearchIndex, "searchIndex"}, {f.Sort, "sort"}, {f.Facet, "facet"}} {
		if o.on {
			opts = append(opts, o.name)
		}
	}
	if len(opts) > 0 {
		parts = append(parts, "tigris:"+strconv.Quote(strings.Join(opts, ",")))
	}
	if len(parts) == 0 {
		return ""
	}
	tag := strings.Join(parts, " ")
	if strings.Contains(tag, "`") {
		return strconv.Quote(tag)
	}
	return "`" + tag + "`"
}

// goDefault is a default as the Go client's tag reads it: a string in
// single quotes, its own quotes escaped; anything else as its JSON.
func goDefault(f *fieldDecl) string {
	if f.DefaultFunc != "" {
		return "'" + f.DefaultFunc + "'"
	}
	if f.Default == nil {
		return ""
	}
	var s string
	if json.Unmarshal(f.Default, &s) == nil {
		return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
	}
	var compact bytes.Buffer
	if json.Compact(&compact, f.Default) != nil {
		return string(f.Default)
	}
	return compact.String()
}
