package schema

import (
	"strings"
	"testing"
	"time"
)

// Each annotation of the final clients: accepted where it fits, refused
// with a 400's message where it does not.
func TestAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name, field, err string
		check            func(f *Field) bool
	}{
		{name: "index flags", field: `{"type":"string","index":true,"searchIndex":true,"sort":true,"facet":false,"id":false}`},
		{name: "flag not a boolean", field: `{"type":"string","index":"yes"}`, err: "index of field 'f' must be a boolean"},
		{name: "tags", field: `{"type":"string","tags":["a","b"]}`},
		{name: "tags not strings", field: `{"type":"string","tags":[1]}`, err: "tags of field 'f' must be an array of strings"},
		{name: "createdAt", field: `{"type":"string","format":"date-time","createdAt":true}`, check: func(f *Field) bool { return f.CreatedAt }},
		{name: "updatedAt", field: `{"type":"string","format":"date-time","updatedAt":true}`, check: func(f *Field) bool { return f.UpdatedAt }},
		{name: "createdAt on a string", field: `{"type":"string","createdAt":true}`, err: "createdAt is only supported for date-time type"},
		{name: "updatedAt on an integer", field: `{"type":"integer","updatedAt":true}`, err: "updatedAt is only supported for date-time type"},
		{name: "now()", field: `{"type":"string","format":"date-time","default":"now()"}`, check: func(f *Field) bool { return f.DefaultFunc == "now()" && !f.CreatedAt }},
		{name: "now() with createdAt", field: `{"type":"string","format":"date-time","default":"now()","createdAt":true}`, check: func(f *Field) bool { return f.DefaultFunc == "now()" && f.CreatedAt }},
		{name: "search hints kept", field: `{"type":"string","searchIndex":true,"sort":true,"facet":true}`, check: func(f *Field) bool { return f.SearchIndex && f.Sorted && f.Facet }},
		{name: "search hints false", field: `{"type":"string","searchIndex":false,"sort":false,"facet":false}`, check: func(f *Field) bool { return !f.SearchIndex && !f.Sorted && !f.Facet }},
		{name: "now() on a string", field: `{"type":"string","default":"now()"}`, err: "now() is only supported for date-time type"},
		{name: "uuid()", field: `{"type":"string","format":"uuid","default":"uuid()"}`, check: func(f *Field) bool { return f.DefaultFunc == "uuid()" }},
		{name: "cuid()", field: `{"type":"string","default":"cuid()"}`, check: func(f *Field) bool { return f.DefaultFunc == "cuid()" }},
		{name: "unknown function", field: `{"type":"string","default":"rand()"}`, err: "'rand()' function is not supported"},
		{name: "literal string", field: `{"type":"string","default":"x"}`, check: func(f *Field) bool { return string(f.Default) == `"x"` }},
		{name: "literal integer", field: `{"type":"integer","default":5}`, check: func(f *Field) bool { return string(f.Default) == `5` }},
		{name: "literal number", field: `{"type":"number","default":1.5}`},
		{name: "literal bool", field: `{"type":"boolean","default":false}`, check: func(f *Field) bool { return string(f.Default) == `false` }},
		{name: "literal array", field: `{"type":"array","items":{"type":"integer"},"default":[1,2]}`},
		{name: "null default is none", field: `{"type":"integer","default":null}`, check: func(f *Field) bool { return f.Default == nil }},
		{name: "string for an integer", field: `{"type":"integer","default":"5"}`, err: "default value of field 'f' must be an integer"},
		{name: "decimal for an integer", field: `{"type":"integer","default":1.5}`, err: "default value of field 'f' must be an integer"},
		{name: "integer for a string", field: `{"type":"string","default":5}`, err: "default value of field 'f' must be a string"},
		{name: "integer for a bool", field: `{"type":"boolean","default":1}`, err: "must be true or false"},
		{name: "object default", field: `{"type":"object","default":{}}`, err: "unsupported default value for field 'f'"},
		{name: "array of wrong elements", field: `{"type":"array","items":{"type":"integer"},"default":["a"]}`, err: "default value of field 'f' is not valid"},
		{name: "too long", field: `{"type":"string","maxLength":2,"default":"abc"}`, err: "default value of field 'f' is not valid"},
		{name: "bad date-time", field: `{"type":"string","format":"date-time","default":"yesterday"}`, err: "default value of field 'f' is not valid"},
		{name: "vector", field: `{"type":"array","format":"vector","dimensions":3}`, check: func(f *Field) bool { return f.Vector && f.Dimensions == 3 && f.Items.Type == Number }},
		{name: "vector with items", field: `{"type":"array","format":"vector","dimensions":2,"items":{"type":"number"}}`, check: func(f *Field) bool { return f.Vector }},
		{name: "dimensions not positive", field: `{"type":"array","format":"vector","dimensions":0}`, err: "dimensions of field 'f' must be a positive integer"},
		// The bounds at their edges: 1 and 2^31-1 are the first and last
		// dimensions, as 0 and 2^31-1 are for maxItems.
		{name: "one dimension", field: `{"type":"array","format":"vector","dimensions":1}`, check: func(f *Field) bool { return f.Dimensions == 1 }},
		{name: "most dimensions", field: `{"type":"array","format":"vector","dimensions":4096}`, check: func(f *Field) bool { return f.Dimensions == 4096 }},
		{name: "dimensions past the limit", field: `{"type":"array","format":"vector","dimensions":4097}`, err: "field 'f' has 4097 dimensions, above the limit of 4096"},
		{name: "dimensions past 2^31-2", field: `{"type":"array","format":"vector","dimensions":2147483647}`, err: "above the limit of 4096"},
		{name: "no dimensions", field: `{"type":"array","format":"vector"}`, err: "Field 'f' type 'vector' is missing dimensions"},
		{name: "dimensions past 2^31-1", field: `{"type":"array","format":"vector","dimensions":2147483648}`, err: "dimensions of field 'f' must be a positive integer"},
		{name: "maxItems 0", field: `{"type":"array","items":{"type":"integer"},"maxItems":0}`, check: func(f *Field) bool { return f.LimitItems && f.MaxItems == 0 }},
		{name: "maxItems 2^31-1", field: `{"type":"array","items":{"type":"integer"},"maxItems":2147483647}`, check: func(f *Field) bool { return f.LimitItems && f.MaxItems == 1<<31-1 }},
		{name: "maxItems past 2^31-1", field: `{"type":"array","items":{"type":"integer"},"maxItems":2147483648}`, err: "maxItems of field 'f' must be a non-negative integer"},
		{name: "maxItems on a string", field: `{"type":"string","maxItems":3}`, err: "maxItems is only supported on array fields"},
		{name: "vector format on a string", field: `{"type":"string","format":"vector"}`, err: "unsupported format 'vector'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("c", []byte(`{"title":"c","properties":{"id":{"type":"integer"},"f":`+tc.field+`},"primary_key":["id"]}`))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				if se, ok := err.(*Error); ok && se.Code != "INVALID_ARGUMENT" {
					t.Errorf("code %s, want INVALID_ARGUMENT", se.Code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f, _ := s.Field("f")
			if tc.check != nil && !tc.check(f) {
				t.Errorf("field parsed as %+v", f)
			}
		})
	}
}

func TestFillDefaults(t *testing.T) {
	s, err := Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{"id":{"type":"integer"},
		"n":{"type":"integer","default":7},"s":{"type":"string","default":"x"},"u":{"type":"string","format":"uuid","default":"uuid()"},
		"created":{"type":"string","format":"date-time","createdAt":true},"updated":{"type":"string","format":"date-time","updatedAt":true},
		"o":{"type":"object","properties":{"at":{"type":"string","format":"date-time","default":"now()"},"k":{"type":"integer"}}},
		"free":{"type":"object"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2023, 6, 1, 2, 3, 4, 5, time.UTC)
	oldUUID := newUUID
	newUUID = func() string { return "6ba7b810-9dad-41d1-80b4-00c04fd430c8" }
	t.Cleanup(func() { newUUID = oldUUID })
	const stamp = `"2023-06-01T02:03:04.000000005Z"`
	for _, tc := range []struct{ doc, want, updated string }{
		{`{"id":1}`, `{"id":1,"n":7,"s":"x","u":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","created":` + stamp + `,"o":{"at":` + stamp + `}}`,
			`{"id":1,"updated":` + stamp + `}`},
		{`{"id":1,"n":0,"s":"given","u":"00000000-0000-4000-8000-000000000000","created":"2020-01-01T00:00:00Z","o":{"k":1,"at":"2020-01-01T00:00:00Z"},"updated":"2020-01-01T00:00:00Z"}`,
			`{"id":1,"n":0,"s":"given","u":"00000000-0000-4000-8000-000000000000","created":"2020-01-01T00:00:00Z","o":{"k":1,"at":"2020-01-01T00:00:00Z"},"updated":"2020-01-01T00:00:00Z"}`,
			`{"id":1,"n":0,"s":"given","u":"00000000-0000-4000-8000-000000000000","created":"2020-01-01T00:00:00Z","o":{"k":1,"at":"2020-01-01T00:00:00Z"},"updated":` + stamp + `}`},
		{`{ "id":1, "n":null, "o":{} }`, `{ "id":1, "n":7, "o":{"at":` + stamp + `},"s":"x","u":"6ba7b810-9dad-41d1-80b4-00c04fd430c8","created":` + stamp + ` }`,
			`{ "id":1, "n":null, "o":{},"updated":` + stamp + ` }`},
	} {
		got, err := s.FillDefaults([]byte(tc.doc), at)
		if err != nil || string(got) != tc.want {
			t.Errorf("FillDefaults(%s) = %s, %v\nwant %s", tc.doc, got, err, tc.want)
		}
		if err := s.Validate(got); err != nil {
			t.Errorf("filled document %s does not validate: %v", got, err)
		}
		got, err = s.StampUpdate([]byte(tc.doc), at)
		if err != nil || string(got) != tc.updated {
			t.Errorf("StampUpdate(%s) = %s, %v\nwant %s", tc.doc, got, err, tc.updated)
		}
	}
	// Schemas without defaults leave documents as they are (no copy).
	plain, _ := Parse("p", []byte(`{"title":"p","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`))
	doc := []byte(`{"id":1}`)
	if got, _ := plain.FillDefaults(doc, at); &got[0] != &doc[0] {
		t.Error("FillDefaults copied a document its schema gives no default")
	}
}

// Which fields make FillDefaults do anything: a default, a default
// function or createdAt, at the top or inside an object, each alone in its
// schema (beside the key, which has a default of its own where it can), so
// that no other field turns the filling on for it.
func TestFillDefaultsOnlyOneSource(t *testing.T) {
	at := time.Date(2023, 6, 1, 2, 3, 4, 0, time.UTC)
	const stamp = `"2023-06-01T02:03:04Z"`
	for _, tc := range []struct{ name, props, doc, want string }{
		{"literal default", `"id":{"type":"integer","default":1},"n":{"type":"integer","default":7}`, `{}`, `{"id":1,"n":7}`},
		{"default function", `"id":{"type":"string","format":"date-time","default":"now()"},"t":{"type":"string","format":"date-time","default":"now()"}`,
			`{}`, `{"id":` + stamp + `,"t":` + stamp + `}`},
		{"inside an object", `"id":{"type":"integer"},"o":{"type":"object","properties":{"n":{"type":"integer","default":7}}}`, `{"id":1}`, `{"id":1,"o":{"n":7}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{`+tc.props+`}}`))
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.FillDefaults([]byte(tc.doc), at)
			if err != nil || string(got) != tc.want {
				t.Errorf("FillDefaults(%s) = %s, %v; want %s", tc.doc, got, err, tc.want)
			}
		})
	}
}

// fill's edits in the order of the document, whatever the order of the
// schema's fields; a nested null replaced by a default of the same length;
// and a document that lacks nothing is returned as it came, not copied.
func TestFillDefaultsEdits(t *testing.T) {
	s, err := Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{"id":{"type":"integer"},
		"n":{"type":"integer","default":7},"o":{"type":"object","properties":{"b":{"type":"boolean","default":true},"k":{"type":"integer"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2023, 6, 1, 2, 3, 4, 0, time.UTC)
	for _, tc := range []struct{ doc, want string }{
		{`{"o":null,"n":null,"id":1}`, `{"o":{"b":true},"n":7,"id":1}`},
		{`{"o":{"k":1},"n":null,"id":1}`, `{"o":{"k":1,"b":true},"n":7,"id":1}`},
		{`{"id":1,"n":1,"o":{"b":null}}`, `{"id":1,"n":1,"o":{"b":true}}`},
		{`{"id":1,"n":1,"o":{"b":false}}`, `{"id":1,"n":1,"o":{"b":false}}`},
	} {
		got, err := s.FillDefaults([]byte(tc.doc), at)
		if err != nil || string(got) != tc.want {
			t.Errorf("FillDefaults(%s) = %s, %v; want %s", tc.doc, got, err, tc.want)
		}
	}
	doc := []byte(`{"id":1,"n":1,"o":{"b":false}}`)
	if got, _ := s.FillDefaults(doc, at); &got[0] != &doc[0] {
		t.Error("FillDefaults copied a document that lacks no default")
	}
}

// A cuid's parts: a counter of 4 base-36 digits that counts on from call to
// call and wraps at 36^4, and 12 digits of randomness that use all 12.
func TestCUIDParts(t *testing.T) {
	saved := cuidCounter.Load()
	t.Cleanup(func() { cuidCounter.Store(saved) })
	for _, tc := range []struct {
		next  uint32
		count string
	}{
		{1, "0001"},
		{35, "000z"},
		{36 * 36, "0100"},
		{36*36*36*36 - 1, "zzzz"},
		{36 * 36 * 36 * 36, "0000"},
		{36*36*36*36 + 37, "0011"},
	} {
		cuidCounter.Store(tc.next - 1)
		if got := newCUID()[9:13]; got != tc.count {
			t.Errorf("cuid made as call %d has counter %q, want %q", tc.next, got, tc.count)
		}
	}
	// Randomness over 36^12 values begins with "0" one time in 36; over a
	// smaller range (36^10) always with "00". 200 cuids whose random parts
	// all begin alike would be a chance of 36^-199.
	first := map[byte]bool{}
	for range 200 {
		first[newCUID()[13]] = true
	}
	if len(first) < 2 {
		t.Errorf("200 cuids' random parts all begin with %v", first)
	}
}

func TestCUID(t *testing.T) {
	a, b := newCUID(), newCUID()
	if len(a) != 25 || a[0] != 'c' || a == b {
		t.Errorf("cuids %q and %q: want 25 characters starting with c, distinct", a, b)
	}
}
