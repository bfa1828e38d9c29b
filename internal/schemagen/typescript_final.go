package schemagen

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// tsFinalReserved are the class names the final text must not take: those
// of tsReserved, and the client's decorators and Generated, which the text
// uses unqualified.
var tsFinalReserved = map[string]bool{
	"Field": true, "PrimaryKey": true, "SearchField": true, "TigrisCollection": true, "Generated": true,
}

// generateTypeScriptFinal writes a class per type, decorated as the final
// client (@tigrisdata/core 1.x) declares models and as the final server
// wrote them: the collection's class @TigrisCollection("name"), each field
// @Field or @PrimaryKey with its data type where the client cannot infer
// it from the property's type (int64, int32, bytes, uuid, date-time),
// then its options, and @SearchField for a search-indexed one. The text
// uses the client's Field, PrimaryKey, SearchField, TigrisCollection,
// TigrisDataTypes and Generated without importing them, and needs
// experimentalDecorators (and emitDecoratorMetadata, which the client
// reads the other types from).
func generateTypeScriptFinal(s *schema.Schema) string {
	var b strings.Builder
	reserved := func(n string) bool { return tsReserved[n] || tsFinalReserved[n] }
	for _, t := range buildModel(s, Final, reserved).Types {
		b.WriteString("\n")
		writePlainComment(&b, "", t.Description)
		if t.Collection != "" {
			b.WriteString("@TigrisCollection(" + jsString(t.Collection) + ")\n")
		}
		b.WriteString("export class " + t.Name + " {")
		for _, f := range t.Fields {
			b.WriteString("\n")
			writePlainComment(&b, "  ", f.Description)
			b.WriteString("  " + tsDecorator(f))
			if f.SearchIndex {
				var opts []string
				if f.Sort {
					opts = append(opts, "sort: true")
				}
				if f.Facet {
					opts = append(opts, "facet: true")
				}
				arg := ""
				if len(opts) > 0 {
					arg = "{" + strings.Join(opts, ", ") + "}"
				}
				b.WriteString("\n  @SearchField(" + arg + ")")
			}
			opt := ""
			if f.AutoGenerate {
				opt = "?"
			}
			b.WriteString("\n  " + tsKey(f.JSON) + opt + ": " + tsClassType(f) + ";\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// writePlainComment writes a description as // comments, without the
// name the other texts begin them with.
func writePlainComment(b *strings.Builder, indent, desc string) {
	if desc == "" {
		return
	}
	for _, line := range commentLines(desc) {
		b.WriteString(strings.TrimRight(indent+"// "+line, " ") + "\n")
	}
}

// tsDecorator is a field's @Field or @PrimaryKey: the data type first
// when the client needs it, then the options.
func tsDecorator(f *fieldDecl) string {
	name := "@Field("
	if f.KeyOrder > 0 {
		name = "@PrimaryKey("
	}
	var args []string
	if f.Dims == 0 {
		if dt := tsExplicitType(f); dt != "" {
			args = append(args, dt)
		}
	}
	var opts []string
	if f.KeyOrder > 0 {
		opts = append(opts, "order: "+strconv.Itoa(f.KeyOrder))
	}
	if f.Dims > 0 {
		opts = append(opts, "elements: "+tsElements(f))
		if f.Dims > 1 {
			opts = append(opts, "depth: "+strconv.Itoa(f.Dims))
		}
	}
	if def := tsDefault(f); def != "" {
		opts = append(opts, "default: "+def)
	}
	if f.AutoGenerate {
		opts = append(opts, "autoGenerate: true")
	}
	// The final server wrote both when a field had both, an object literal
	// with a key twice, which TypeScript refuses; JavaScript would keep
	// the second, createdAt, and so does this.
	switch {
	case f.CreatedAt:
		opts = append(opts, `timestamp: "createdAt"`)
	case f.UpdatedAt:
		opts = append(opts, `timestamp: "updatedAt"`)
	}
	if f.MaxLength > 0 {
		opts = append(opts, "maxLength: "+strconv.Itoa(f.MaxLength))
	}
	if len(opts) > 0 {
		args = append(args, "{ "+strings.Join(opts, ", ")+" }")
	}
	return name + strings.Join(args, ", ") + ")"
}

// tsExplicitType is the TigrisDataTypes member a scalar field's decorator
// names: "" for strings, booleans, numbers and objects, whose type the
// client reads from the property's design type.
func tsExplicitType(f *fieldDecl) string {
	switch {
	case f.Object != nil:
		return ""
	case f.FreeForm:
		return "TigrisDataTypes.OBJECT"
	}
	switch f.Type {
	case schema.String, schema.Bool, schema.Number:
		return ""
	}
	return tsDataType(f)
}

// tsElements is the element type of an array field's decorator.
func tsElements(f *fieldDecl) string {
	if f.Object != nil {
		return f.Object.Name
	}
	return tsDataType(f)
}

// tsDefault is a field's default as the decorator's option: the client's
// Generated values for the functions, JSON (a JavaScript literal) for the
// rest.
func tsDefault(f *fieldDecl) string {
	switch f.DefaultFunc {
	case "now()":
		return "Generated.NOW"
	case "uuid()":
		return "Generated.UUID"
	case "cuid()":
		return "Generated.CUID"
	}
	if f.Default == nil {
		return ""
	}
	var compact bytes.Buffer
	if json.Compact(&compact, f.Default) != nil {
		return string(f.Default)
	}
	return strings.NewReplacer("\u2028", `\u2028`, "\u2029", `\u2029`).Replace(compact.String())
}

// tsClassType is a field's property type in its class: as in the 2022
// interfaces, but a date-time is a Date.
func tsClassType(f *fieldDecl) string {
	if f.Type != schema.DateTime || f.Object != nil || f.FreeForm {
		return tsType(f)
	}
	return strings.Repeat("Array<", f.Dims) + "Date" + strings.Repeat(">", f.Dims)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
