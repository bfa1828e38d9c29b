package schema

import (
	"strings"
	"testing"
)

func TestCompatible(t *testing.T) {
	const base = `{"title":"c","description":"v1","properties":{
		"id":{"type":"integer"},
		"name":{"type":"string","maxLength":10},
		"note":{"type":"string"},
		"tags":{"type":"array","items":{"type":"string","maxLength":5}},
		"obj":{"type":"object","properties":{"a":{"type":"integer","format":"int32"},"deep":{"type":"object","properties":{"x":{"type":"string"}}}}},
		"free":{"type":"object"}
	},"primary_key":["id"]}`
	// next returns base with one replacement made.
	next := func(from, to string) string {
		if !strings.Contains(base, from) {
			t.Fatalf("%q not in base schema", from)
		}
		return strings.Replace(base, from, to, 1)
	}
	cases := []struct {
		name, next, err string
	}{
		{"same", base, ""},
		{"description changes", next(`"description":"v1"`, `"description":"v2"`), ""},
		{"field description added", next(`"note":{"type":"string"}`, `"note":{"type":"string","description":"d"}`), ""},
		{"field added", next(`"note":{"type":"string"}`, `"note":{"type":"string"},"added":{"type":"number"}`), ""},
		{"nested field added", next(`"x":{"type":"string"}`, `"x":{"type":"string"},"y":{"type":"boolean"}`), ""},
		{"maxLength grows", next(`"maxLength":10`, `"maxLength":11`), ""},
		{"maxLength dropped", next(`"name":{"type":"string","maxLength":10}`, `"name":{"type":"string"}`), ""},
		{"fields reordered", `{"title":"c","properties":{"free":{"type":"object"},"obj":{"type":"object","properties":{"deep":{"type":"object","properties":{"x":{"type":"string"}}},"a":{"type":"integer","format":"int32"}}},"tags":{"type":"array","items":{"type":"string","maxLength":5}},"note":{"type":"string"},"name":{"type":"string","maxLength":10},"id":{"type":"integer"}},"primary_key":["id"]}`, ""},

		{"field removed", next(`"note":{"type":"string"},`, ``), "removing a field is a backward incompatible change, field 'note'"},
		{"nested field removed", next(`,"deep":{"type":"object","properties":{"x":{"type":"string"}}}`, ``), "removing a field is a backward incompatible change, field 'obj.deep'"},
		{"deep field removed", next(`"x":{"type":"string"}`, `"y":{"type":"string"}`), "removing a field is a backward incompatible change, field 'obj.deep.x'"},
		{"object made free-form", next(`"deep":{"type":"object","properties":{"x":{"type":"string"}}}`, `"deep":{"type":"object"}`), "removing a field is a backward incompatible change, field 'obj.deep.x'"},
		{"free-form given no properties", next(`"free":{"type":"object"}`, `"free":{"type":"object","properties":{}}`), ""},
		{"required added", next(`"primary_key":["id"]`, `"primary_key":["id"],"required":["note"]`), ""},
		{"free-form given properties", next(`"free":{"type":"object"}`, `"free":{"type":"object","properties":{"x":{"type":"string"}}}`), "declaring properties of the free-form object field 'free' is not allowed"},
		{"type change", next(`"note":{"type":"string"}`, `"note":{"type":"integer"}`), "data type mismatch for field 'note', 'string' to 'int64'"},
		{"format change", next(`"note":{"type":"string"}`, `"note":{"type":"string","format":"uuid"}`), "data type mismatch for field 'note', 'string' to 'uuid'"},
		{"integer format change", next(`"a":{"type":"integer","format":"int32"}`, `"a":{"type":"integer"}`), "data type mismatch for field 'obj.a', 'int32' to 'int64'"},
		{"key type change", next(`"id":{"type":"integer"}`, `"id":{"type":"string"}`), "data type mismatch for field 'id', 'int64' to 'string'"},
		{"items type change", next(`"items":{"type":"string","maxLength":5}`, `"items":{"type":"integer"}`), "data type mismatch for field 'tags[]', 'string' to 'int64'"},
		{"maxLength shrinks", next(`"maxLength":10`, `"maxLength":9`), "reducing length of an existing field is not allowed, field 'name'"},
		{"maxLength added", next(`"note":{"type":"string"}`, `"note":{"type":"string","maxLength":100}`), "reducing length of an existing field is not allowed, field 'note'"},
		{"items maxLength shrinks", next(`"maxLength":5`, `"maxLength":4`), "reducing length of an existing field is not allowed, field 'tags[]'"},
		{"key changed", next(`"primary_key":["id"]`, `"primary_key":["name"]`), "primary key changes are not allowed, ['id'] to ['name']"},
		{"key extended", next(`"primary_key":["id"]`, `"primary_key":["id","name"]`), "primary key changes are not allowed, ['id'] to ['id', 'name']"},
		{"collection type", next(`"primary_key":["id"]`, `"collection_type":"messages"`), "changing the collection type is not allowed, 'documents' to 'messages'"},
	}
	old := mustParse(t, "c", base)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, Compatible(old, mustParse(t, "c", c.next)), c.err)
		})
	}
}

func TestCompatibleKeyOrder(t *testing.T) {
	a := mustParse(t, "c", `{"title":"c","properties":{"x":{"type":"string"},"y":{"type":"string"}},"primary_key":["x","y"]}`)
	b := mustParse(t, "c", `{"title":"c","properties":{"x":{"type":"string"},"y":{"type":"string"}},"primary_key":["y","x"]}`)
	wantError(t, Compatible(a, b), "primary key changes are not allowed, ['x', 'y'] to ['y', 'x']")
}

func TestCompatibleDefaultKey(t *testing.T) {
	// A schema stored with a defaulted key can be sent again without it.
	a := mustParse(t, "c", `{"title":"c","properties":{"v":{"type":"string"}}}`)
	b := mustParse(t, "c", `{"title":"c","properties":{"v":{"type":"string"},"w":{"type":"string"}}}`)
	wantError(t, Compatible(a, b), "")
	wantError(t, Compatible(a, mustParse(t, "c", string(a.Raw()))), "")
}
