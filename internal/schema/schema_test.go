package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// testSchema has a field of every type, nesting in objects and arrays, and
// a free-form object.
const testSchema = `{
  "title": "test_collection",
  "description": "this schema is for tests",
  "properties": {
    "pkey_int": {"type": "integer"},
    "int_value": {"type": "integer", "format": "int64"},
    "int32_value": {"type": "integer", "format": "int32"},
    "string_value": {"type": "string", "maxLength": 5},
    "bool_value": {"type": "boolean"},
    "double_value": {"type": "number"},
    "bytes_value": {"type": "string", "format": "byte"},
    "b64_value": {"type": "string", "contentEncoding": "base64"},
    "date_time_value": {"type": "string", "format": "date-time"},
    "uuid_value": {"type": "string", "format": "uuid"},
    "array_value": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "product": {"type": "string"}}}},
    "int_array": {"type": "array", "items": {"type": "integer"}},
    "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
    "object_value": {"type": "object", "description": "nested", "properties": {
      "name": {"type": "string"},
      "inner": {"type": "object", "properties": {"x": {"type": "integer", "format": "int32"}}}
    }},
    "free_value": {"type": "object"}
  },
  "primary_key": ["pkey_int"]
}`

func mustParse(t testing.TB, name, raw string) *Schema {
	t.Helper()
	s, err := Parse(name, []byte(raw))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// wantError checks that err is an *Error with code INVALID_ARGUMENT and
// exactly the message want ("" means no error).
func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want *Error %q", err, err, want)
	}
	if se.Code != CodeInvalidArgument || se.Message != want {
		t.Fatalf("error = %s %q\n        want %s %q", se.Code, se.Message, CodeInvalidArgument, want)
	}
}

func TestParseTestSchema(t *testing.T) {
	s := mustParse(t, "test_collection", testSchema)
	if s.Name() != "test_collection" || s.Description() != "this schema is for tests" || s.CollectionType() != Documents {
		t.Errorf("name %q description %q type %q", s.Name(), s.Description(), s.CollectionType())
	}
	if string(s.Raw()) != testSchema {
		t.Errorf("Raw changed the schema:\n%s", s.Raw())
	}
	if pk := s.PrimaryKey(); len(pk) != 1 || pk[0].Name != "pkey_int" || pk[0].Type != Int64 || !pk[0].PrimaryKey {
		t.Errorf("primary key = %+v", pk)
	}
	types := map[string]Type{
		"pkey_int": Int64, "int_value": Int64, "int32_value": Int32, "string_value": String, "bool_value": Bool,
		"double_value": Number, "bytes_value": Bytes, "b64_value": Bytes, "date_time_value": DateTime,
		"uuid_value": UUID, "array_value": Array, "object_value": Object, "object_value.name": String,
		"object_value.inner": Object, "object_value.inner.x": Int32, "free_value": Object, "matrix": Array,
	}
	for path, want := range types {
		f, ok := s.Field(path)
		if !ok || f.Type != want || f.Path != path {
			t.Errorf("Field(%q) = %+v, %v; want type %s", path, f, ok, want)
		}
	}
	for _, path := range []string{"array_value.id", "nope", "object_value.nope", "free_value.x", ""} {
		if f, ok := s.Field(path); ok {
			t.Errorf("Field(%q) = %+v, want none", path, f)
		}
	}
	if f, _ := s.Field("string_value"); f.MaxLength != 5 {
		t.Errorf("maxLength = %d", f.MaxLength)
	}
	if f, _ := s.Field("free_value"); !f.FreeForm {
		t.Errorf("free_value is not free-form")
	}
	if f, _ := s.Field("array_value"); f.Items.Type != Object || f.Items.Properties[1].Path != "array_value.product" {
		t.Errorf("array items = %+v", f.Items)
	}
	if f, _ := s.Field("matrix"); f.Items.Type != Array || f.Items.Items.Type != Number {
		t.Errorf("matrix items = %+v", f.Items)
	}
	var scalars []string
	for _, f := range s.ScalarFields() {
		scalars = append(scalars, f.Path)
	}
	want := "pkey_int int_value int32_value string_value bool_value double_value bytes_value b64_value date_time_value uuid_value object_value.name object_value.inner.x"
	if got := strings.Join(scalars, " "); got != want {
		t.Errorf("ScalarFields =\n %s\nwant\n %s", got, want)
	}
	if len(s.Fields()) != 15 || s.Fields()[0].Name != "pkey_int" || s.Fields()[14].Name != "free_value" {
		t.Errorf("Fields() out of order")
	}
}

func TestParseDefaultKey(t *testing.T) {
	cases := []struct {
		name, in, raw string
		keyType       Type
	}{
		{
			"adds id",
			`{"title":"c","properties":{"name":{"type":"string"}}}`,
			`{"title":"c","properties":{"name":{"type":"string"},"id":{"type":"string","format":"uuid","autoGenerate":true}},"primary_key":["id"]}`,
			UUID,
		},
		{
			"keeps layout",
			"{\n  \"properties\": {\n    \"name\": {\"type\": \"string\"}\n  },\n  \"title\": \"c\"\n}\n",
			"{\n  \"properties\": {\n    \"name\": {\"type\": \"string\"},\"id\":{\"type\":\"string\",\"format\":\"uuid\",\"autoGenerate\":true}\n  },\n  \"title\": \"c\",\"primary_key\":[\"id\"]\n}\n",
			UUID,
		},
		{
			"empty properties",
			`{"title":"c","properties":{ }}`,
			`{"title":"c","properties":{"id":{"type":"string","format":"uuid","autoGenerate":true} },"primary_key":["id"]}`,
			UUID,
		},
		{
			"existing id keeps its type",
			`{"title":"c","properties":{"id":{"type":"integer","autoGenerate":true}}}`,
			`{"title":"c","properties":{"id":{"type":"integer","autoGenerate":true}},"primary_key":["id"]}`,
			Int64,
		},
		{
			"null primary key",
			`{"title":"c","properties":{"a":{"type":"string"}},"primary_key":null}`,
			`{"title":"c","properties":{"a":{"type":"string"},"id":{"type":"string","format":"uuid","autoGenerate":true}},"primary_key":["id"]}`,
			UUID,
		},
		{
			"null primary key first",
			`{"primary_key":null,"title":"c","properties":{"a":{"type":"string"}}}`,
			`{"primary_key":["id"],"title":"c","properties":{"a":{"type":"string"},"id":{"type":"string","format":"uuid","autoGenerate":true}}}`,
			UUID,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustParse(t, "c", c.in)
			if string(s.Raw()) != c.raw {
				t.Errorf("Raw =\n%s\nwant\n%s", s.Raw(), c.raw)
			}
			if !json.Valid(s.Raw()) {
				t.Errorf("Raw is not valid JSON")
			}
			pk := s.PrimaryKey()
			if len(pk) != 1 || pk[0].Name != "id" || pk[0].Type != c.keyType || !pk[0].PrimaryKey {
				t.Errorf("primary key = %+v", pk)
			}
			// The stored form parses to the same schema.
			again := mustParse(t, "c", string(s.Raw()))
			if err := Compatible(s, again); err != nil {
				t.Errorf("Raw does not round-trip: %v", err)
			}
		})
	}
}

// A schema stored before unknown top-level members were refused still
// parses, with what it says: its collection must still open.
func TestParseStoredKeepsUnknownTopLevelMembers(t *testing.T) {
	raw := `{"title":"c","properties":{"email":{"type":"string"}},"primary_keys":["email"],"ttl":60}`
	if _, err := Parse("c", []byte(raw)); err == nil {
		t.Fatal("Parse accepted unknown top-level members")
	}
	s, err := ParseStored("c", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if pk := s.PrimaryKey(); len(pk) != 1 || pk[0].Name != "id" {
		t.Errorf("primary key = %+v, want the generated id", pk)
	}
	if _, err := ParseStored("c", []byte(`{"title":"c","properties":{"a":{"type":"string","max_length":3}}}`)); err == nil {
		t.Error("ParseStored accepted an unknown member of a field, which no server stored")
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, schema, err string
	}{
		// Accepted.
		{"minimal", `{"title":"c","properties":{"k":{"type":"string"}},"primary_key":["k"]}`, ""},
		{"composite key", `{"title":"c","properties":{"a":{"type":"integer","format":"int32"},"b":{"type":"string","format":"byte"},"c":{"type":"string","format":"date-time"},"d":{"type":"string","format":"uuid"},"e":{"type":"integer"},"f":{"type":"string","contentEncoding":"base64"}},"primary_key":["a","b","c","d","e","f"]}`, ""},
		{"autoGenerate on key", `{"title":"c","properties":{"a":{"type":"integer","format":"int32","autoGenerate":true},"b":{"type":"string","autoGenerate":false}},"primary_key":["a"]}`, ""},
		{"autoGenerate false anywhere", `{"title":"c","properties":{"a":{"type":"string"},"b":{"type":"number","autoGenerate":false}},"primary_key":["a"]}`, ""},
		{"messages", `{"title":"c","collection_type":"messages","properties":{"a":{"type":"string"}}}`, ""},
		{"topic", `{"title":"c","collection_type":"topic","properties":{"a":{"type":"string"}}}`, ""},
		{"messages empty key", `{"title":"c","collection_type":"messages","properties":{"a":{"type":"string"}},"primary_key":[]}`, ""},
		{"explicit documents", `{"title":"c","collection_type":"documents","properties":{"a":{"type":"string"}}}`, ""},
		{"JSON Schema members kept", `{"title":"c","$schema":"x","$id":"y","$comment":"z","type":"object","properties":{"a":{"type":"string"}}}`, ""},
		// What the official clients send at the top level (clientSchemaKeys).
		{"final Go client's members", `{"version":1,"title":"c","description":"d","properties":{"a":{"type":"string"}},"primary_key":["a"],"required":["a"],"index":["a"],"collection_type":"documents","source":{"type":"external"}}`, ""},
		{"TypeScript clients' members", `{"title":"c","additionalProperties":false,"type":"object","properties":{"a":{"type":"string"}},"primary_key":["a"]}`, ""},
		{"2022 TypeScript client's messages key", `{"title":"c","additionalProperties":false,"type":"object","properties":{"a":{"type":"string"}},"collection_type":"messages","key":["a"]}`, ""},
		{"array of objects", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","format":"uuid"}}}}}}`, ""},
		{"descriptions", `{"title":"c","description":"d","properties":{"a":{"type":"string","description":"x"}}}`, ""},
		{"contentEncoding with format byte", `{"title":"c","properties":{"a":{"type":"string","format":"byte","contentEncoding":"base64"}}}`, ""},
		{"sorted hints", `{"title":"c","properties":{"a":{"type":"string","sorted":true},"b":{"type":"integer","sorted":false},"o":{"type":"object","properties":{"d":{"type":"string","format":"date-time","sorted":true}}}}}`, ""},
		{"null optional members", `{"title":"c","description":null,"collection_type":null,"properties":{"a":{"type":"string","format":null,"maxLength":null}}}`, ""},

		// Refused.
		{"not JSON", `{"title":`, "schema is not valid JSON: invalid JSON at offset 9: unexpected end of input"},
		{"not an object", `[]`, "schema must be a JSON object"},
		{"title mismatch", `{"title":"other","properties":{"a":{"type":"string"}}}`, "collection name is not same as schema name 'c' 'other'"},
		{"title missing", `{"properties":{"a":{"type":"string"}}}`, "collection name is not same as schema name 'c' ''"},
		{"title not a string", `{"title":1,"properties":{"a":{"type":"string"}}}`, "collection name is not same as schema name 'c' ''"},
		{"misspelled primary_key", `{"title":"c","properties":{"email":{"type":"string"}},"primary_keys":["email"]}`, "unsupported property found 'primary_keys' in schema (did you mean 'primary_key'?)"},
		{"primary key without underscore", `{"title":"c","properties":{"a":{"type":"string"}},"primarykey":["a"]}`, "unsupported property found 'primarykey' in schema (did you mean 'primary_key'?)"},
		{"misspelled properties", `{"title":"c","propertes":{}}`, "unsupported property found 'propertes' in schema (did you mean 'properties'?)"},
		{"capitalized title", `{"Title":"c","title":"c","properties":{"a":{"type":"string"}}}`, "unsupported property found 'Title' in schema (did you mean 'title'?)"},
		{"ttl not an object", `{"title":"c","properties":{"a":{"type":"string"}},"ttl":60}`, `ttl must be an object such as {"field":"expires_at"} or {"field":"created_at","after":"24h"}`},
		{"indexes at the top", `{"title":"c","properties":{"a":{"type":"string"}},"indexes":["a"]}`, "unsupported property found 'indexes' in schema: a schema has title, description, properties, primary_key, collection_type, unique and ttl"},
		{"unknown top-level member", `{"title":"c","properties":{"a":{"type":"string"}},"foo":null}`, "unsupported property found 'foo' in schema: a schema has title, description, properties, primary_key, collection_type, unique and ttl"},
		{"duplicate top-level key", `{"title":"c","title":"c","properties":{}}`, "duplicate key 'title' in schema"},
		{"properties missing", `{"title":"c"}`, "missing properties field in schema"},
		{"properties null", `{"title":"c","properties":null}`, "missing properties field in schema"},
		{"properties not object", `{"title":"c","properties":[]}`, "properties object is invalid"},
		{"bad collection type", `{"title":"c","collection_type":"queue","properties":{"a":{"type":"string"}}}`, "unsupported collection type 'queue'"},
		{"description not string", `{"title":"c","description":1,"properties":{"a":{"type":"string"}}}`, "schema description must be a string"},
		{"messages with key", `{"title":"c","collection_type":"messages","properties":{"a":{"type":"string"}},"primary_key":["a"]}`, "setting primary key is not supported for messages collection"},
		{"topic with key", `{"title":"c","collection_type":"topic","properties":{"a":{"type":"string"}},"primary_key":["a"]}`, "setting primary key is not supported for messages collection"},
		{"empty key", `{"title":"c","properties":{"a":{"type":"string"}},"primary_key":[]}`, "missing primary key field in schema"},
		{"key not array", `{"title":"c","properties":{"a":{"type":"string"}},"primary_key":"a"}`, "primary_key must be an array of field names"},
		{"key element not string", `{"title":"c","properties":{"a":{"type":"string"}},"primary_key":[1]}`, "primary_key must be an array of field names"},
		{"key element empty", `{"title":"c","properties":{"a":{"type":"string"}},"primary_key":[""]}`, "primary_key must be an array of field names"},
		{"duplicate key field", `{"title":"c","properties":{"a":{"type":"string"}},"primary_key":["a","a"]}`, "duplicate primary key field 'a'"},
		{"key field missing", `{"title":"c","properties":{"a":{"type":"string"}},"primary_key":["b"]}`, "missing primary key 'b' field in schema"},
		{"nested key field", `{"title":"c","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}}}},"primary_key":["o.a"]}`, "missing primary key 'o.a' field in schema"},
		{"number key", `{"title":"c","properties":{"a":{"type":"number"}},"primary_key":["a"]}`, "unsupported primary key type detected 'number' for field 'a'"},
		{"bool key", `{"title":"c","properties":{"a":{"type":"boolean"}},"primary_key":["a"]}`, "unsupported primary key type detected 'bool' for field 'a'"},
		{"array key", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"string"}}},"primary_key":["a"]}`, "unsupported primary key type detected 'array' for field 'a'"},
		{"object key", `{"title":"c","properties":{"a":{"type":"object"}},"primary_key":["a"]}`, "unsupported primary key type detected 'object' for field 'a'"},
		{"default id of wrong type", `{"title":"c","properties":{"id":{"type":"number"}}}`, "unsupported primary key type detected 'number' for field 'id'"},
		{"autoGenerate not on key", `{"title":"c","properties":{"a":{"type":"string"},"b":{"type":"string","autoGenerate":true}},"primary_key":["a"]}`, "autoGenerate is only supported on primary key fields, and 'b' is not one"},
		{"autoGenerate nested", `{"title":"c","properties":{"a":{"type":"string"},"o":{"type":"object","properties":{"a":{"type":"string","autoGenerate":true}}}},"primary_key":["a"]}`, "autoGenerate is only supported on primary key fields, and 'o.a' is not one"},
		{"autoGenerate in items", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"string","autoGenerate":true}}}}`, "autoGenerate is only supported on primary key fields, and 'a[]' is not one"},
		{"autoGenerate in messages", `{"title":"c","collection_type":"messages","properties":{"a":{"type":"string","autoGenerate":true}}}`, "autoGenerate is only supported on primary key fields, and 'a' is not one"},
		{"autoGenerate not bool", `{"title":"c","properties":{"id":{"type":"string","autoGenerate":"yes"}}}`, "autoGenerate of field 'id' must be a boolean"},
		{"sorted not bool", `{"title":"c","properties":{"a":{"type":"string","sorted":"yes"}}}`, "sorted of field 'a' must be a boolean"},
		{"unsupported property", `{"title":"c","properties":{"a":{"type":"string","primary":true}}}`, "unsupported property found 'primary' in field 'a'"},
		{"max_length spelling", `{"title":"c","properties":{"a":{"type":"string","max_length":3}}}`, "unsupported property found 'max_length' in field 'a' (did you mean 'maxLength'?)"},
		{"unsupported nested property", `{"title":"c","properties":{"o":{"type":"object","properties":{"x":{"type":"string","defualt":"a"}}}}}`, "unsupported property found 'defualt' in field 'o.x' (did you mean 'default'?)"},
		{"duplicate property key", `{"title":"c","properties":{"a":{"type":"string","type":"integer"}}}`, "duplicate key 'type' in field 'a'"},
		{"duplicate field", `{"title":"c","properties":{"a":{"type":"string"},"a":{"type":"string"}}}`, "duplicate key 'a' in properties"},
		{"field definition not object", `{"title":"c","properties":{"a":"string"}}`, "definition of field 'a' must be a JSON object"},
		{"empty field name", `{"title":"c","properties":{"":{"type":"string"}}}`, "invalid field name '': a field name must not be empty or contain '.'"},
		{"dotted field name", `{"title":"c","properties":{"a.b":{"type":"string"}}}`, "invalid field name 'a.b': a field name must not be empty or contain '.'"},
		{"field name of an operator", `{"title":"c","properties":{"$and":{"type":"string"}}}`, "invalid field name '$and': a field name must not start with '$', which filters reserve for operators"},
		{"field name starting with $", `{"title":"c","properties":{"$price":{"type":"number"}}}`, "invalid field name '$price': a field name must not start with '$', which filters reserve for operators"},
		{"nested field name starting with $", `{"title":"c","properties":{"o":{"type":"object","properties":{"$eq":{"type":"string"}}}}}`, "invalid field name '$eq' in field 'o': a field name must not start with '$', which filters reserve for operators"},
		{"deep field name starting with $", `{"title":"c","properties":{"o":{"type":"object","properties":{"p":{"type":"object","properties":{"$x":{"type":"string"}}}}}}}`, "invalid field name '$x' in field 'o.p': a field name must not start with '$', which filters reserve for operators"},
		{"items field name starting with $", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"object","properties":{"$or":{"type":"integer"}}}}}}`, "invalid field name '$or' in field 'a[]': a field name must not start with '$', which filters reserve for operators"},
		{"missing type", `{"title":"c","properties":{"a":{"description":"x"}}}`, "missing type for field 'a'"},
		{"type not string", `{"title":"c","properties":{"a":{"type":5}}}`, "type of field 'a' must be a string or an array of strings"},
		{"nullable type", `{"title":"c","properties":{"a":{"type":["null","string"]},"o":{"type":["object","null"],"properties":{"n":{"type":["string","null"]}}},"l":{"type":["array","null"],"items":{"type":["string","null"]}}}}`, ""},
		{"two non-null types", `{"title":"c","properties":{"a":{"type":["null","string","object"]}}}`, "only one non-null type allowed for the field 'a'"},
		{"type list not strings", `{"title":"c","properties":{"a":{"type":["string",1]}}}`, "type of field 'a' must be a string or an array of strings"},
		{"only null", `{"title":"c","properties":{"a":{"type":["null"]}}}`, "missing type for field 'a'"},
		{"required", `{"title":"c","properties":{"a":{"type":"string"},"o":{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}},"required":["a"]}`, ""},
		{"required unknown", `{"title":"c","properties":{"a":{"type":"string"}},"required":["b"]}`, "required field 'b' is not a property of the schema"},
		{"required unknown in object", `{"title":"c","properties":{"o":{"type":"object","properties":{"n":{"type":"string"}},"required":["m"]}}}`, "required field 'm' is not a property of field 'o'"},
		{"required not strings", `{"title":"c","properties":{"a":{"type":"string"}},"required":[1]}`, "required of the schema must be an array of strings"},
		{"empty array", `{"title":"c","properties":{"a":{"type":"array","maxItems":0}}}`, ""},
		{"maxItems negative", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"string"},"maxItems":-1}}}`, "maxItems of field 'a' must be a non-negative integer"},
		{"array without items, maxItems 1", `{"title":"c","properties":{"a":{"type":"array","maxItems":1}}}`, "missing items for array field 'a'"},
		{"unknown type", `{"title":"c","properties":{"a":{"type":"date"}}}`, "unsupported type detected 'date' for field 'a'"},
		{"null type name", `{"title":"c","properties":{"a":{"type":"null"}}}`, "unsupported type detected 'null' for field 'a'"},
		{"integer format", `{"title":"c","properties":{"a":{"type":"integer","format":"int16"}}}`, "unsupported format 'int16' for field 'a'"},
		{"string format", `{"title":"c","properties":{"a":{"type":"string","format":"email"}}}`, "unsupported format 'email' for field 'a'"},
		{"string int32 format", `{"title":"c","properties":{"a":{"type":"string","format":"int32"}}}`, "unsupported format 'int32' for field 'a'"},
		{"number format", `{"title":"c","properties":{"a":{"type":"number","format":"double"}}}`, "unsupported format 'double' for field 'a'"},
		{"format not string", `{"title":"c","properties":{"a":{"type":"string","format":1}}}`, "format of field 'a' must be a string"},
		{"encoding", `{"title":"c","properties":{"a":{"type":"string","contentEncoding":"hex"}}}`, "unsupported encoding 'hex' for field 'a'"},
		{"encoding on integer", `{"title":"c","properties":{"a":{"type":"integer","contentEncoding":"base64"}}}`, "unsupported encoding 'base64' for field 'a'"},
		{"encoding with uuid", `{"title":"c","properties":{"a":{"type":"string","format":"uuid","contentEncoding":"base64"}}}`, "format 'uuid' cannot be combined with contentEncoding 'base64' for field 'a'"},
		{"description not string", `{"title":"c","properties":{"a":{"type":"string","description":true}}}`, "description of field 'a' must be a string"},
		{"maxLength on integer", `{"title":"c","properties":{"a":{"type":"integer","maxLength":3}}}`, "maxLength is only supported on string fields, not on field 'a'"},
		{"maxLength zero", `{"title":"c","properties":{"a":{"type":"string","maxLength":0}}}`, "maxLength of field 'a' must be a positive integer"},
		{"maxLength fraction", `{"title":"c","properties":{"a":{"type":"string","maxLength":1.5}}}`, "maxLength of field 'a' must be a positive integer"},
		{"maxLength string", `{"title":"c","properties":{"a":{"type":"string","maxLength":"3"}}}`, "maxLength of field 'a' must be a positive integer"},
		{"maxLength huge", `{"title":"c","properties":{"a":{"type":"string","maxLength":3000000000}}}`, "maxLength of field 'a' must be a positive integer"},
		{"array without items", `{"title":"c","properties":{"a":{"type":"array"}}}`, "missing items for array field 'a'"},
		{"nested array without items", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"array"}}}}`, "missing items for array field 'a[]'"},
		{"items on string", `{"title":"c","properties":{"a":{"type":"string","items":{"type":"string"}}}}`, "items is only supported on array fields, not on field 'a'"},
		{"bad items type", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"decimal"}}}}`, "unsupported type detected 'decimal' for field 'a[]'"},
		{"items not object", `{"title":"c","properties":{"a":{"type":"array","items":"string"}}}`, "definition of field 'a[]' must be a JSON object"},
		{"properties on string", `{"title":"c","properties":{"a":{"type":"string","properties":{}}}}`, "properties is only supported on object fields, not on field 'a'"},
		{"nested properties not object", `{"title":"c","properties":{"a":{"type":"object","properties":[]}}}`, "properties of field 'a' must be a JSON object"},
		{"bad nested type", `{"title":"c","properties":{"o":{"type":"object","properties":{"p":{"type":"object","properties":{"q":{"type":"float"}}}}}}}`, "unsupported type detected 'float' for field 'o.p.q'"},
		{"bad type in array of objects", `{"title":"c","properties":{"a":{"type":"array","items":{"type":"object","properties":{"q":{"type":"float"}}}}}}`, "unsupported type detected 'float' for field 'a.q'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("c", []byte(c.schema))
			wantError(t, err, c.err)
			if err == nil && s.Name() != "c" {
				t.Errorf("name = %q", s.Name())
			}
		})
	}
}

func TestParseSorted(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","properties":{"a":{"type":"string","sorted":true},"b":{"type":"integer","sorted":false},"o":{"type":"object","properties":{"d":{"type":"number","sorted":true}}}}}`)
	for path, want := range map[string]bool{"a": true, "b": false, "o.d": true} {
		f, ok := s.Field(path)
		if !ok || f.Sorted != want {
			t.Errorf("field %s: %+v, want sorted %v", path, f, want)
		}
	}
}

func TestParseCollectionType(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","collection_type":"topic","properties":{"a":{"type":"string"}}}`)
	if s.CollectionType() != Messages || len(s.PrimaryKey()) != 0 {
		t.Errorf("type %q key %v", s.CollectionType(), s.PrimaryKey())
	}
	if _, ok := s.Field("id"); ok {
		t.Errorf("messages collection got an id field")
	}
	if string(s.Raw()) != `{"title":"c","collection_type":"topic","properties":{"a":{"type":"string"}}}` {
		t.Errorf("Raw = %s", s.Raw())
	}
}

// wideSchema has n field definitions: an id and n-1 strings.
func wideSchema(n int) string {
	var b strings.Builder
	b.WriteString(`{"title":"c","properties":{"id":{"type":"integer"}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `,"f%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// deepSchema has a field nested depth deep: objects, with an array's items
// as the last level.
func deepSchema(depth int) string {
	inner := `{"type":"array","items":{"type":"string"}}`
	for range depth - 2 {
		inner = `{"type":"object","properties":{"o":` + inner + `}}`
	}
	return `{"title":"c","properties":{"id":{"type":"integer"},"o":` + inner + `}}`
}

func TestParseLimits(t *testing.T) {
	cases := []struct {
		name, schema, err string
	}{
		{"fields at the limit", wideSchema(MaxFields), ""},
		{"fields past the limit", wideSchema(MaxFields + 1), "schema has more than 2000 fields"},
		{"nested fields count", `{"title":"c","properties":{"id":{"type":"integer"},"o":{"type":"object","properties":` +
			strings.TrimPrefix(strings.TrimSuffix(wideSchema(MaxFields-1), `}`), `{"title":"c","properties":`) + `}}}`, "schema has more than 2000 fields"},
		{"far past the limit", wideSchema(90_000), "schema has more than 2000 fields"},
		{"depth at the limit", deepSchema(MaxDepth), ""},
		{"depth past the limit", deepSchema(MaxDepth + 1), "schema nests fields more than 16 deep, at field '" + strings.Repeat("o.", 15) + "o[]'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("c", []byte(c.schema))
			wantError(t, err, c.err)
		})
	}
}

// A schema of many fields parses in time linear in its size.
func BenchmarkParseWide(b *testing.B) {
	raw := []byte(wideSchema(MaxFields))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse("c", raw); err != nil {
			b.Fatal(err)
		}
	}
}

// maxLength takes 1 to 2^31-1.
func TestMaxLengthBounds(t *testing.T) {
	for _, tc := range []struct {
		n  string
		ok bool
	}{
		{"0", false}, {"1", true}, {"2147483647", true}, {"2147483648", false}, {"-1", false},
	} {
		_, err := Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{"id":{"type":"integer"},"s":{"type":"string","maxLength":`+tc.n+`}}}`))
		if (err == nil) != tc.ok {
			t.Errorf("maxLength %s: %v, want ok %v", tc.n, err, tc.ok)
		}
	}
}

// The String of a type past the name table is "unknown", not a panic.
func TestTypeStringUnknown(t *testing.T) {
	for _, typ := range []Type{Type(len(typeNames)), Type(len(typeNames) + 5)} {
		if got := typ.String(); got != "unknown" {
			t.Errorf("Type(%d).String() = %q", int(typ), got)
		}
	}
}

// An object with no properties, declared so or with "properties":{}, is
// free-form, as the original read both.
func TestParseFreeForm(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","properties":{"a":{"type":"object"},"b":{"type":"object","properties":{}},"c":{"type":"object","properties":{"x":{"type":"string"}}}}}`)
	for path, want := range map[string]bool{"a": true, "b": true, "c": false} {
		if f, _ := s.Field(path); f.FreeForm != want {
			t.Errorf("%s: FreeForm = %v, want %v", path, f.FreeForm, want)
		}
	}
	if err := s.Validate([]byte(`{"b":{"f1":"A","f2":{"g":[1]}}}`)); err != nil {
		t.Fatal(err)
	}
}

// ParseStored skips required names that are no property: a schema stored
// before they were refused must still open.
func TestParseStoredRequired(t *testing.T) {
	const raw = `{"title":"c","properties":{"a":{"type":"string"}},"required":["b","a"],"primary_key":["a"]}`
	if _, err := Parse("c", []byte(raw)); err == nil {
		t.Fatal("Parse took a required name that is no property")
	}
	s, err := ParseStored("c", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Field("a"); !f.Required {
		t.Fatal("a is not Required")
	}
}

// The "version" member is the schema version a client asks for (the
// catalog checks it): a whole number that fits uint32, 0 or absent for
// none. A stored schema with another value still opens, without one.
func TestSchemaVersionMember(t *testing.T) {
	for _, tc := range []struct {
		version string // the member's text; "" leaves it out
		want    int64
		err     string
	}{
		{"", 0, ""},
		{"null", 0, ""},
		{"0", 0, ""},
		{"1", 1, ""},
		{"7", 7, ""},
		{"4294967295", 4294967295, ""},
		{"4294967296", 0, "schema version must be a whole number from 0 to 4294967295, not '4294967296'"},
		{"-1", 0, "schema version must be a whole number from 0 to 4294967295, not '-1'"},
		{"1.5", 0, "schema version must be a whole number from 0 to 4294967295, not '1.5'"},
		{"1e2", 0, "schema version must be a whole number from 0 to 4294967295, not '1e2'"},
		{`"3"`, 0, "schema version must be a whole number from 0 to 4294967295, not '3'"},
		{"true", 0, "schema version must be a whole number from 0 to 4294967295, not 'true'"},
	} {
		raw := `{"title":"c","properties":{"a":{"type":"string"}}}`
		if tc.version != "" {
			raw = `{"version":` + tc.version + `,"title":"c","properties":{"a":{"type":"string"}}}`
		}
		s, err := Parse("c", []byte(raw))
		if tc.err != "" {
			if err == nil || err.Error() != "INVALID_ARGUMENT: "+tc.err {
				t.Errorf("version %s: error %v, want %q", tc.version, err, tc.err)
			}
			stored, err := ParseStored("c", []byte(raw))
			if err != nil || stored.Version() != 0 {
				t.Errorf("version %s stored: %v, version %d; want it to open without a version", tc.version, err, stored.Version())
			}
			continue
		}
		if err != nil || s.Version() != tc.want {
			t.Errorf("version %s: %v, version %d; want %d", tc.version, err, s.Version(), tc.want)
		}
	}
}
