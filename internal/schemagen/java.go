package schemagen

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/foliodb/folio/internal/schema"
)

// javaReserved are the class names a generated class must not take: those
// of the classes the text uses without qualifying them.
var javaReserved = map[string]bool{
	"Object": true, "String": true, "Override": true, "Date": true, "UUID": true,
	"Arrays": true, "Objects": true, "Map": true,
	"TigrisCollection": true, "TigrisField": true, "TigrisPrimaryKey": true, "TigrisCollectionType": true,
}

// javaKeywords cannot be field names (nor literals true, false, null).
var javaKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`abstract assert boolean break byte case catch char class const continue
		default do double else enum extends final finally float for goto if implements import instanceof int
		interface long native new package private protected public return short static strictfp super switch
		synchronized this throw throws transient try void volatile while true false null _`) {
		javaKeywords[k] = true
	}
}

// generateJava writes a class per type in the style of the Tigris Java
// client's models: the collection's class public, annotated
// @TigrisCollection and implementing TigrisCollectionType; key fields
// annotated @TigrisPrimaryKey(order = N[, autoGenerate = true]); field
// descriptions as @TigrisField(description = ...); a getter and setter per
// field, an empty and a full constructor, equals and hashCode. The text
// uses java.util's Arrays, Date, Map, Objects and UUID, the annotations of
// com.tigrisdata.db.annotation and com.tigrisdata.db.type's
// TigrisCollectionType without importing them.
//
// Fields are named after their properties, as in the original (Jackson,
// which the client maps documents with, then needs no annotation); a name
// that is not a Java identifier is made one and keeps its property name
// with a fully qualified @JsonProperty.
func generateJava(s *schema.Schema) string {
	var b strings.Builder
	for _, t := range buildModel(s, Style2022, func(n string) bool { return javaReserved[n] }).Types {
		writeJavaClass(&b, t)
	}
	return b.String()
}

// javaField is a field of a class with its Java names.
type javaField struct {
	*fieldDecl
	ident    string // the Java field name
	accessor string // what follows get/is/set
	param    string // the constructor's and the setter's parameter
	typ      string
}

// javaFields names a type's fields in Java. The parameters are named as
// the fields, or in the final style camelCase after the Go field names,
// plural for arrays (arrayValues), as the final server named them.
func javaFields(t *typeDecl, st Style) []javaField {
	idents := newNamer(func(n string) bool { return javaKeywords[n] })
	params := newNamer(func(n string) bool { return javaKeywords[n] })
	// getClass is Object's, and final.
	accessors := newNamer(func(n string) bool { return n == "Class" })
	fields := make([]javaField, len(t.Fields))
	for i, f := range t.Fields {
		id := idents.claim(javaIdent(f.JSON))
		param := id
		if st == Final {
			name := exported(f.JSON)
			if f.Dims > 0 {
				name = plural(name)
			}
			param = params.claim(lowerFirst(name))
		}
		fields[i] = javaField{fieldDecl: f, ident: id, accessor: accessors.claim(upperFirst(id)), param: param, typ: javaType(f)}
	}
	return fields
}

func writeJavaClass(b *strings.Builder, t *typeDecl) {
	fields := javaFields(t, Style2022)
	b.WriteString("\n")
	writeJavaComment(b, "", t.Name, t.Description)
	if t.Collection != "" {
		fmt.Fprintf(b, "@TigrisCollection(value = %s)\n", javaString(t.Collection))
		b.WriteString("public class " + t.Name + " implements TigrisCollectionType {\n")
	} else {
		b.WriteString("class " + t.Name + " {\n")
	}
	writeJavaMembers(b, fields)
	writeJavaConstructors(b, t.Name, fields)
	writeJavaEquals(b, t.Name, fields)
	b.WriteString("}\n")
}

// writeJavaMembers writes a class's fields, with their annotations, and
// their accessors: the same in both styles.
func writeJavaMembers(b *strings.Builder, fields []javaField) {
	for _, f := range fields {
		if f.Description != "" {
			fmt.Fprintf(b, "    @TigrisField(description = %s)\n", javaString(f.Description))
		}
		if f.KeyOrder > 0 {
			auto := ""
			if f.AutoGenerate {
				auto = ", autoGenerate = true"
			}
			fmt.Fprintf(b, "    @TigrisPrimaryKey(order = %d%s)\n", f.KeyOrder, auto)
		}
		if f.ident != f.JSON {
			fmt.Fprintf(b, "    @com.fasterxml.jackson.annotation.JsonProperty(%s)\n", javaString(f.JSON))
		}
		fmt.Fprintf(b, "    private %s %s;\n", f.typ, f.ident)
	}
	for _, f := range fields {
		get := "get"
		if f.typ == "boolean" {
			get = "is" // the JavaBeans spelling of a boolean property's getter
		}
		fmt.Fprintf(b, "\n    public %s %s%s() {\n        return %s;\n    }\n", f.typ, get, f.accessor, f.ident)
		fmt.Fprintf(b, "\n    public void set%s(%s %s) {\n        this.%s = %s;\n    }\n", f.accessor, f.typ, f.param, f.ident, f.param)
	}
}

func writeJavaConstructors(b *strings.Builder, class string, fields []javaField) {
	// The empty constructor is the one the client's deserializer needs.
	fmt.Fprintf(b, "\n    public %s() {\n    }\n", class)
	if len(fields) == 0 {
		return
	}
	fmt.Fprintf(b, "\n    public %s(\n", class)
	for i, f := range fields {
		sep := ","
		if i == len(fields)-1 {
			sep = ""
		}
		fmt.Fprintf(b, "        %s %s%s\n", f.typ, f.ident, sep)
	}
	b.WriteString("    ) {\n")
	for _, f := range fields {
		fmt.Fprintf(b, "        this.%s = %s;\n", f.ident, f.ident)
	}
	b.WriteString("    }\n")
}

// writeJavaEquals writes equals and hashCode comparing field values: ==
// for primitives, equals for objects, and element by element for arrays.
// (The original compared strings and dates with ==, and hashed arrays by
// identity.)
func writeJavaEquals(b *strings.Builder, class string, fields []javaField) {
	b.WriteString("\n    @Override\n    public boolean equals(Object o) {\n")
	b.WriteString("        if (this == o) {\n            return true;\n        }\n")
	b.WriteString("        if (o == null || getClass() != o.getClass()) {\n            return false;\n        }\n")
	if len(fields) == 0 {
		b.WriteString("        return true;\n    }\n")
	} else {
		fmt.Fprintf(b, "\n        %s other = (%s) o;\n        return", class, class)
		for i, f := range fields {
			if i > 0 {
				b.WriteString(" &&")
			}
			b.WriteString("\n            ")
			// this. because a field may be named o or other.
			a, o := "this."+f.ident, "other."+f.ident
			switch dims := javaDims(f.fieldDecl); {
			case dims > 1:
				fmt.Fprintf(b, "Arrays.deepEquals(%s, %s)", a, o)
			case dims == 1:
				fmt.Fprintf(b, "Arrays.equals(%s, %s)", a, o)
			case javaPrimitive(f.typ):
				fmt.Fprintf(b, "%s == %s", a, o)
			default:
				fmt.Fprintf(b, "Objects.equals(%s, %s)", a, o)
			}
		}
		b.WriteString(";\n    }\n")
	}

	b.WriteString("\n    @Override\n    public int hashCode() {\n        return Objects.hash(")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n            ")
		switch dims := javaDims(f.fieldDecl); {
		case dims > 1:
			fmt.Fprintf(b, "Arrays.deepHashCode(%s)", f.ident)
		case dims == 1:
			fmt.Fprintf(b, "Arrays.hashCode(%s)", f.ident)
		default:
			b.WriteString(f.ident)
		}
	}
	if len(fields) > 0 {
		b.WriteString("\n        ")
	}
	b.WriteString(");\n    }\n")
}

// javaDims is how many array dimensions the field's Java type has: a byte
// string is a byte[].
func javaDims(f *fieldDecl) int {
	if f.Type == schema.Bytes {
		return f.Dims + 1
	}
	return f.Dims
}

func javaPrimitive(typ string) bool {
	switch typ {
	case "int", "long", "double", "boolean":
		return true
	}
	return false
}

func javaType(f *fieldDecl) string {
	var t string
	switch {
	case f.Object != nil:
		t = f.Object.Name
	case f.FreeForm:
		t = "Map<String, Object>"
	default:
		switch f.Type {
		case schema.Int32:
			t = "int"
		case schema.Int64:
			t = "long"
		case schema.Number:
			t = "double"
		case schema.Bool:
			t = "boolean"
		case schema.Bytes:
			t = "byte[]"
		case schema.UUID:
			t = "UUID"
		case schema.DateTime:
			t = "Date"
		default:
			t = "String"
		}
	}
	return t + strings.Repeat("[]", f.Dims)
}

// javaIdent makes a property name a Java identifier: characters that
// cannot be in one become '_', and a leading digit gets a '_' in front.
// Keywords are left to the caller's namer, which numbers them.
func javaIdent(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '$' || unicode.IsLetter(r):
		case unicode.IsDigit(r):
			if i == 0 {
				b.WriteByte('_')
			}
		default:
			r = '_'
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// javaString is s as a Java string literal. Every backslash of s is
// doubled, so that no \u sequence of s is read by javac as a character
// before it reads the literal; the \u escapes written for control
// characters are meant to be (javac allows them in a literal, except line
// breaks, which are written \n and \r).
func javaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeJavaComment is writeLineComment for Java, where a \u sequence is
// read as a character even inside a comment (\u000a would end it):
// backslashes are doubled, which no \u sequence survives.
func writeJavaComment(b *strings.Builder, indent, name, desc string) {
	writeLineComment(b, indent, name, strings.ReplaceAll(desc, `\`, `\\`))
}
