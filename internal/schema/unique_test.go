package schema

import (
	"strconv"
	"strings"
	"testing"
)

// The unique keyword, on a field and at the top: the keys each accepted
// schema declares (paths, key by key), and the 400 of each refusal.
func TestUnique(t *testing.T) {
	const props = `"id":{"type":"integer"},"email":{"type":"string","unique":%s},"first":{"type":"string"},"last":{"type":"string"},` +
		`"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"string","format":"byte"},"u":{"type":"string","format":"uuid"},` +
		`"t":{"type":"string","format":"date-time"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},` +
		`"o":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"integer"}}},"free":{"type":"object"},` +
		`"v":{"type":"array","format":"vector","dimensions":2}`
	schemaOf := func(emailUnique, top string) string {
		s := `{"title":"c","primary_key":["id"],"properties":{` + strings.Replace(props, "%s", emailUnique, 1) + `}`
		if top != "" {
			s += `,"unique":` + top
		}
		return s + `}`
	}
	for _, tc := range []struct {
		name, schema, want, err string
	}{
		{name: "none", schema: schemaOf("false", ""), want: ""},
		{name: "field", schema: schemaOf("true", ""), want: "email"},
		{name: "composite", schema: schemaOf("false", `[["first","last"]]`), want: "first+last"},
		{name: "field and composite", schema: schemaOf("true", `[["first","last"],["o.city","o.zip"]]`), want: "email first+last o.city+o.zip"},
		{name: "a key of one field at the top", schema: schemaOf("false", `[["n"]]`), want: "n"},
		{name: "every scalar type but boolean", schema: schemaOf("false", `[["n"],["x"],["b"],["u"],["t"]]`), want: "n x b u t"},
		{name: "nested field", schema: `{"title":"c","properties":{"id":{"type":"string"},"o":{"type":"object","properties":{"k":{"type":"string","unique":true}}}},"primary_key":["id"]}`, want: "o.k"},
		{name: "part of a composite primary key", schema: `{"title":"c","properties":{"a":{"type":"string"},"b":{"type":"string","unique":true}},"primary_key":["a","b"]}`, want: "b"},
		{name: "null member is none", schema: schemaOf("false", `null`), want: ""},

		{name: "not a boolean", schema: schemaOf(`"yes"`, ""), err: "unique of field 'email' must be a boolean"},
		{name: "on an array", schema: `{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"array","items":{"type":"string"},"unique":true}}}`, err: "unique is only supported on fields of a scalar type (string, integer, number, uuid, date-time, byte), not on array field 'a'"},
		{name: "on an object", schema: `{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"object","unique":true}}}`, err: "not on object field 'a'"},
		{name: "on a vector", schema: `{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"array","format":"vector","dimensions":2,"unique":true}}}`, err: "not on array field 'a'"},
		{name: "on a boolean", schema: `{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"boolean","unique":true}}}`, err: "unique is not supported on boolean field 'a': two documents at most could have it"},
		{name: "inside an array", schema: `{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"array","items":{"type":"string","unique":true}}}}`, err: "unique is not supported on field 'a', which is inside an array"},
		{name: "inside an object in an array", schema: `{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","unique":true}}}}}}`, err: "unique is not supported on field 'a.k', which is inside an array"},
		{name: "alone on the primary key", schema: `{"title":"c","properties":{"id":{"type":"string","unique":true}},"primary_key":["id"]}`, err: "unique key ['id'] holds the whole primary key, which is unique already"},
		{name: "on the default key", schema: `{"title":"c","properties":{"id":{"type":"string","format":"uuid","unique":true}}}`, err: "holds the whole primary key"},
		{name: "composite over the primary key", schema: schemaOf("false", `[["first","id"]]`), err: "unique key ['first', 'id'] holds the whole primary key, which is unique already"},
		{name: "declared twice", schema: schemaOf("true", `[["email"]]`), err: "unique key ['email'] is declared twice"},
		{name: "declared twice in another order", schema: schemaOf("false", `[["first","last"],["last","first"]]`), err: "unique key ['last', 'first'] is declared twice"},
		{name: "a field twice", schema: schemaOf("false", `[["first","first"]]`), err: "unique key names field 'first' twice"},
		{name: "empty key", schema: schemaOf("false", `[[]]`), err: "a unique key must name at least one field"},
		{name: "not a list", schema: schemaOf("false", `["first","last"]`), err: `unique of the schema must be an array of arrays of field paths, such as [["first", "last"]]`},
		{name: "not an array", schema: schemaOf("false", `true`), err: "unique of the schema must be an array of arrays"},
		{name: "unknown field", schema: schemaOf("false", `[["nick"]]`), err: "unique field 'nick' is not a field of the schema"},
		{name: "field inside an array", schema: schemaOf("false", `[["tags"]]`), err: "not on array field 'tags'"},
		{name: "free-form object member", schema: schemaOf("false", `[["free.k"]]`), err: "unique field 'free.k' is not a field of the schema"},
		{name: "boolean in a composite", schema: schemaOf("false", `[["first","ok"]]`), err: "unique is not supported on boolean field 'ok'"},
		{name: "messages", schema: `{"title":"c","collection_type":"messages","properties":{"a":{"type":"string","unique":true}}}`, err: "unique is only supported on collection type of 'documents'"},
		{name: "too many fields", schema: `{"title":"c","properties":{"id":{"type":"string"},` + fieldList(9) + `},"unique":[[` + pathList(9) + `]]}`, err: "has more than 8 fields"},
		{name: "most fields", schema: `{"title":"c","properties":{"id":{"type":"string"},` + fieldList(8) + `},"unique":[[` + pathList(8) + `]]}`, want: "f0+f1+f2+f3+f4+f5+f6+f7"},
		{name: "too many keys", schema: `{"title":"c","properties":{"id":{"type":"string"},` + fieldList(17) + `},"unique":[` + keyList(17) + `]}`, err: "schema has more than 16 unique keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("c", []byte(tc.schema))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse: %v, want an error with %q", err, tc.err)
				}
				if se, ok := err.(*Error); !ok || se.Code != CodeInvalidArgument {
					t.Fatalf("Parse: %#v, want INVALID_ARGUMENT", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := uniqueNames(s.Unique()); got != tc.want {
				t.Fatalf("unique keys %q, want %q", got, tc.want)
			}
			// A stored schema reads the same keys back.
			stored, err := ParseStored("c", s.Raw())
			if err != nil || uniqueNames(stored.Unique()) != tc.want {
				t.Fatalf("ParseStored: %v, keys %q, want %q", err, uniqueNames(stored.Unique()), tc.want)
			}
		})
	}
}

// AddedUnique is what a schema change adds; removing a key adds nothing,
// and a key written in another order is the same key.
func TestAddedUnique(t *testing.T) {
	parse := func(top string) *Schema {
		s, err := Parse("c", []byte(`{"title":"c","properties":{"id":{"type":"string"},"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}},"unique":`+top+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct{ old, next, want string }{
		{`[]`, `[["a"]]`, "a"},
		{`[["a"]]`, `[]`, ""},
		{`[["a"]]`, `[["a"],["b","c"]]`, "b+c"},
		{`[["b","c"]]`, `[["c","b"]]`, ""},
		{`[["b","c"]]`, `[["b"]]`, "b"},
	} {
		if got := uniqueNames(AddedUnique(parse(tc.old), parse(tc.next))); got != tc.want {
			t.Errorf("%s to %s adds %q, want %q", tc.old, tc.next, got, tc.want)
		}
	}
	// Adding or removing a key is a compatible change.
	if err := Compatible(parse(`[]`), parse(`[["a"]]`)); err != nil {
		t.Errorf("adding a unique key: %v", err)
	}
	if err := Compatible(parse(`[["a"]]`), parse(`[]`)); err != nil {
		t.Errorf("removing a unique key: %v", err)
	}
}

func uniqueNames(keys []UniqueKey) string {
	var out []string
	for _, k := range keys {
		var ps []string
		for _, f := range k.Fields {
			ps = append(ps, f.Path)
		}
		out = append(out, strings.Join(ps, "+"))
	}
	return strings.Join(out, " ")
}

func fieldList(n int) string {
	var out []string
	for i := range n {
		out = append(out, `"f`+strconv.Itoa(i)+`":{"type":"string"}`)
	}
	return strings.Join(out, ",")
}

func pathList(n int) string {
	var out []string
	for i := range n {
		out = append(out, `"f`+strconv.Itoa(i)+`"`)
	}
	return strings.Join(out, ",")
}

func keyList(n int) string {
	var out []string
	for i := range n {
		out = append(out, `["f`+strconv.Itoa(i)+`"]`)
	}
	return strings.Join(out, ",")
}
