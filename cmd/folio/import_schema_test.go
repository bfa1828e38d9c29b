package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The rules of schema inference, one sample each: what a field's values
// make, and which field becomes the key.
func TestInferSchema(t *testing.T) {
	for _, tc := range []struct {
		name, sample, key string
		want, err         string
	}{
		{name: "scalars and id", sample: `{"id":1,"n":2,"x":1.5,"b":true,"s":"a"}`,
			want: `{"title":"c","properties":{"id":{"type":"integer"},"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},"s":{"type":"string"}},"primary_key":["id"]}`},
		{name: "integers and decimals are numbers", sample: "{\"id\":1,\"v\":1}\n{\"id\":2,\"v\":2.5}\n{\"id\":3,\"v\":1e3}",
			want: `{"title":"c","properties":{"id":{"type":"integer"},"v":{"type":"number"}},"primary_key":["id"]}`},
		{name: "dates only when every string is one", sample: "{\"id\":\"a\",\"d\":\"2025-01-02T03:04:05Z\",\"e\":\"2025-01-02T03:04:05.5+01:00\"}\n{\"id\":\"b\",\"d\":\"2025-01-02\",\"e\":null}",
			want: `{"title":"c","properties":{"id":{"type":"string"},"d":{"type":"string"},"e":{"type":"string","format":"date-time"}},"primary_key":["id"]}`},
		{name: "only nulls", sample: `{"id":1,"z":null}`,
			want: `{"title":"c","properties":{"id":{"type":"integer"},"z":{"type":"string"}},"primary_key":["id"]}`},
		{name: "nested objects and arrays, fields in order of first appearance", sample: "{\"id\":1,\"o\":{\"b\":1},\"a\":[{\"k\":\"x\"}]}\n{\"id\":2,\"o\":{\"a\":\"s\",\"b\":2},\"a\":[],\"later\":[[1,2.5]]}",
			want: `{"title":"c","properties":{"id":{"type":"integer"},"o":{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}}},"a":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}},"later":{"type":"array","items":{"type":"array","items":{"type":"number"}}}},"primary_key":["id"]}`},
		{name: "no id: a generated one", sample: `{"name":"x"}`,
			want: `{"title":"c","properties":{"id":{"type":"string","format":"uuid","autoGenerate":true},"name":{"type":"string"}},"primary_key":["id"]}`},
		{name: "the key given", sample: "{\"id\":1,\"email\":\"a\"}\n{\"id\":1,\"email\":\"b\"}", key: "email",
			want: `{"title":"c","properties":{"id":{"type":"integer"},"email":{"type":"string"}},"primary_key":["email"]}`},
		{name: "two types", sample: "{\"id\":1,\"v\":1}\n{\"id\":2,\"v\":\"1\"}", err: "field v holds integer and string"},
		{name: "two types nested", sample: "{\"id\":1,\"o\":{\"v\":[true]}}\n{\"id\":2,\"o\":{\"v\":[1]}}", err: "field o.v[] holds boolean and integer"},
		{name: "id repeated", sample: "{\"id\":1}\n{\"id\":1}", err: "id cannot be the key: documents 1 and 2 of the sample both have 1"},
		{name: "id missing in some", sample: "{\"id\":1}\n{\"x\":1}", err: "id cannot be the key: document 2 of the sample has none"},
		{name: "id not a scalar key", sample: `{"id":1.5}`, err: "a key is an integer or a string"},
		{name: "key given missing", sample: `{"id":1}`, key: "nope", err: "--primary-key nope: no document of the sample has it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sample []json.RawMessage
			for _, l := range strings.Split(tc.sample, "\n") {
				sample = append(sample, json.RawMessage(l))
			}
			got, err := inferSchema("c", sample, tc.key)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q (schema %s)", err, tc.err, got)
				}
				if exitCode(err) != exitUsage {
					t.Errorf("exit code %d for %v, want %d", exitCode(err), err, exitUsage)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v\nwant %s", got, err, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
		})
	}
}

// A CSV column's type is the narrowest every non-empty cell fits, and a
// cell is typed by its field's type or refused.
func TestCSVTypes(t *testing.T) {
	header := []string{"i", "n", "b", "s", "e"}
	rows := []record{{cells: []string{"1", "1", "true", "1", ""}}, {cells: []string{"-2", "2.5", "FALSE", "x", ""}}}
	got := csvColumnTypes(header, rows)
	want := map[string]string{"i": "integer", "n": "number", "b": "boolean", "s": "string", "e": "string"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("column %s: %s, want %s", k, got[k], v)
		}
	}
	for _, tc := range []struct{ cell, typ, want, err string }{
		{"42", "integer", "42", ""},
		{"4.2", "integer", "", "not an integer"},
		{"99999999999999999999", "integer", "", "not an integer"},
		{"1e3", "number", "1000", ""},
		{"True", "boolean", "true", ""},
		{"yes", "boolean", "", "not true or false"},
		{`{"a":1}`, "object", `{"a":1}`, ""},
		{`[1,`, "array", "", "not JSON"},
		{`say "hi"`, "string", `"say \"hi\""`, ""},
		{"7", "", `"7"`, ""},
	} {
		v, err := typedCell(tc.cell, tc.typ)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q as %s: %s, %v; want an error with %q", tc.cell, tc.typ, v, err, tc.err)
			}
			continue
		}
		if err != nil || string(v) != tc.want {
			t.Errorf("%q as %s: %s, %v; want %s", tc.cell, tc.typ, v, err, tc.want)
		}
	}
}

// Whatever the sample, inference makes a schema that is JSON, or says why
// it cannot.
func FuzzInferSchema(f *testing.F) {
	f.Add("{\"id\":1,\"o\":{\"a\":[1,2.5]}}\n{\"id\":2,\"d\":\"2025-01-02T03:04:05Z\"}")
	f.Add("{\"x\":null}\n{\"x\":[[]]}")
	f.Add(`{"\u00e9\"":{"":true}}`)
	f.Fuzz(func(t *testing.T, text string) {
		var sample []json.RawMessage
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); len(l) == 0 || l[0] != '{' || !json.Valid([]byte(l)) {
				return
			}
			sample = append(sample, json.RawMessage(l))
		}
		schema, err := inferSchema("c", sample, "")
		if err == nil && !json.Valid(schema) {
			t.Fatalf("not JSON: %s", schema)
		}
	})
}
