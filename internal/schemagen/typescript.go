package schemagen

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/foliodb/folio/internal/schema"
)

// tsReserved are the type names a generated interface must not take: the
// global types the text itself uses, whose names an interface would shadow
// or merge into, and the client's types it refers to.
var tsReserved = map[string]bool{
	"Array": true, "Record": true, "Object": true, "String": true, "Number": true,
	"Boolean": true, "Date": true, "Map": true, "Set": true, "Promise": true,
	"Symbol": true, "Function": true, "Error": true, "BigInt": true,
	"TigrisSchema": true, "TigrisDataTypes": true, "TigrisCollectionType": true,
}

// generateTypeScript writes, per type, an interface and the TigrisSchema
// constant describing it, as @tigrisdata/core's generated code of late
// 2022 did: the collection's interface extends TigrisCollectionType and
// both it and its constant are exported; nested ones are not. The text
// uses TigrisCollectionType, TigrisDataTypes and TigrisSchema from
// "@tigrisdata/core/dist/types" without importing them.
//
// int64 values are typed string: JavaScript numbers lose precision past
// 2^53, and the client sends and reads them as strings (reference §10b).
func generateTypeScript(s *schema.Schema) string {
	var b strings.Builder
	for _, t := range buildModel(s, Style2022, func(n string) bool { return tsReserved[n] }).Types {
		writeTSInterface(&b, t)
		writeTSSchema(&b, t)
	}
	return b.String()
}

func writeTSInterface(b *strings.Builder, t *typeDecl) {
	b.WriteString("\n")
	writeLineComment(b, "", t.Name, t.Description)
	if t.Collection != "" {
		b.WriteString("export interface " + t.Name + " extends TigrisCollectionType {\n")
	} else {
		b.WriteString("interface " + t.Name + " {\n")
	}
	for _, f := range t.Fields {
		writeLineComment(b, "  ", f.JSON, f.Description)
		opt := ""
		if f.AutoGenerate {
			opt = "?" // the server fills it in: a new document may leave it out
		}
		b.WriteString("  " + tsKey(f.JSON) + opt + ": " + tsType(f) + ";\n")
	}
	b.WriteString("}\n")
}

func writeTSSchema(b *strings.Builder, t *typeDecl) {
	b.WriteString("\n")
	if t.Collection != "" {
		b.WriteString("export ")
	}
	b.WriteString("const " + tsSchemaName(t) + ": TigrisSchema<" + t.Name + "> = {\n")
	for _, f := range t.Fields {
		b.WriteString("  " + tsKey(f.JSON) + ": {\n")
		if f.Dims > 0 {
			b.WriteString("    type: TigrisDataTypes.ARRAY,\n")
		} else {
			b.WriteString("    type: " + tsDataType(f) + ",\n")
		}
		if f.KeyOrder > 0 {
			b.WriteString("    primary_key: {\n      order: " + strconv.Itoa(f.KeyOrder) + ",\n")
			if f.AutoGenerate {
				b.WriteString("      autoGenerate: true,\n")
			}
			b.WriteString("    },\n")
		}
		writeTSItems(b, f, f.Dims, "    ")
		b.WriteString("  },\n")
	}
	b.WriteString("};\n")
}

// writeTSItems writes the items of an array field with dims dimensions
// left: an array of arrays has items of type ARRAY with items of their own.
func writeTSItems(b *strings.Builder, f *fieldDecl, dims int, indent string) {
	if dims == 0 {
		return
	}
	b.WriteString(indent + "items: {\n")
	if dims > 1 {
		b.WriteString(indent + "  type: TigrisDataTypes.ARRAY,\n")
		writeTSItems(b, f, dims-1, indent+"  ")
	} else {
		b.WriteString(indent + "  type: " + tsDataType(f) + ",\n")
	}
	b.WriteString(indent + "},\n")
}

func tsSchemaName(t *typeDecl) string { return lowerFirst(t.Name) + "Schema" }

// tsDataType is what a field's (or its elements') schema entry says its
// type is: a TigrisDataTypes member, or the schema constant of its type.
func tsDataType(f *fieldDecl) string {
	if f.Object != nil {
		return tsSchemaName(f.Object)
	}
	switch f.Type {
	case schema.Int32:
		return "TigrisDataTypes.INT32"
	case schema.Int64:
		return "TigrisDataTypes.INT64"
	case schema.Number:
		return "TigrisDataTypes.NUMBER"
	case schema.Bool:
		return "TigrisDataTypes.BOOLEAN"
	case schema.Bytes:
		return "TigrisDataTypes.BYTE_STRING"
	case schema.UUID:
		return "TigrisDataTypes.UUID"
	case schema.DateTime:
		return "TigrisDataTypes.DATE_TIME"
	case schema.Object:
		return "TigrisDataTypes.OBJECT"
	}
	return "TigrisDataTypes.STRING"
}

// tsType is the field's TypeScript type in its interface.
func tsType(f *fieldDecl) string {
	var t string
	switch {
	case f.Object != nil:
		t = f.Object.Name
	case f.FreeForm:
		t = "Record<string, unknown>"
	case f.Type == schema.Int32, f.Type == schema.Number:
		t = "number"
	case f.Type == schema.Bool:
		t = "boolean"
	default: // int64, strings, bytes (base64), uuid, date-time
		t = "string"
	}
	for range f.Dims {
		t = "Array<" + t + ">"
	}
	return t
}

// tsKey is a property name as an interface or object literal key: as it
// is when it is an identifier, quoted otherwise ("first-name").
func tsKey(name string) string {
	if isTSIdentifier(name) {
		return name
	}
	q, _ := json.Marshal(name) // a JSON string is a JavaScript string literal
	return string(q)
}

func isTSIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// writeLineComment writes a description as // comments starting with the
// name, as the original did in TypeScript and Java.
func writeLineComment(b *strings.Builder, indent, name, desc string) {
	if desc == "" {
		return
	}
	for i, line := range commentLines(desc) {
		if i == 0 {
			line = name + " " + line
		}
		b.WriteString(strings.TrimRight(indent+"// "+line, " ") + "\n")
	}
}
