package jsondoc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMembers(t *testing.T) {
	doc := []byte(` { "a" : 1 ,"b\u0063":{"x":[1,2]}, "d":"}" } `)
	ms, closing, err := Members(doc, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Key+"="+string(doc[m.ValueStart:m.End])+"|"+string(doc[m.Start:m.End]))
	}
	want := []string{`a=1|"a" : 1`, `bc={"x":[1,2]}|"b\u0063":{"x":[1,2]}`, `d="}"|"d":"}"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("members %q, want %q", got, want)
	}
	if doc[closing] != '}' || closing != len(doc)-2 {
		t.Errorf("closing brace at %d", closing)
	}
	if _, _, err := Members([]byte(`{"a":}`), 0); err == nil {
		t.Error("no error for a broken object")
	}
}

func TestProject(t *testing.T) {
	doc := `{"id":1, "name" : "ann","tags":["x"],"addr":{"city":"Oslo"}}`
	for _, tc := range []struct {
		include, exclude string
		want             string
	}{
		{"", "", doc},
		{"name id", "", `{"id":1,"name" : "ann"}`},
		{"nope", "", `{}`},
		{"", "tags addr", `{"id":1,"name" : "ann"}`},
		{"", "id", `{"name" : "ann","tags":["x"],"addr":{"city":"Oslo"}}`},
		{"addr.city", "", `{"addr":{"city":"Oslo"}}`},
		{"id addr.city", "", `{"id":1,"addr":{"city":"Oslo"}}`},
		{"addr addr.city", "", `{"addr":{"city":"Oslo"}}`},
		{"addr.city addr", "", `{"addr":{"city":"Oslo"}}`},
		{"addr.nope", "", `{}`},
		{"name.x tags.x", "", `{}`}, // not objects
		{"", "addr.city", `{"id":1,"name" : "ann","tags":["x"],"addr":{}}`},
		{"", "name.x addr.nope", `{"id":1,"name" : "ann","tags":["x"],"addr":{"city":"Oslo"}}`},
	} {
		got, err := Project([]byte(doc), set(tc.include), set(tc.exclude))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("include %q exclude %q: %s, want %s", tc.include, tc.exclude, got, tc.want)
		}
	}
}

// Deeper paths, and paths that share their start.
func TestProjectDeep(t *testing.T) {
	doc := `{"a":{"b":{"c":1,"d":2},"e":3},"f":{"g":4}}`
	for _, tc := range []struct {
		include, exclude string
		want             string
	}{
		{"a.b.c", "", `{"a":{"b":{"c":1}}}`},
		{"a.b.c a.e f.g", "", `{"a":{"b":{"c":1},"e":3},"f":{"g":4}}`},
		{"a.b a.b.c", "", `{"a":{"b":{"c":1,"d":2}}}`},
		{"a.b.x f.x", "", `{}`},
		{"", "a.b.c", `{"a":{"b":{"d":2},"e":3},"f":{"g":4}}`},
		{"", "a.b.c a.b.d f", `{"a":{"b":{},"e":3}}`},
	} {
		got, err := Project([]byte(doc), set(tc.include), set(tc.exclude))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("include %q exclude %q: %s, want %s", tc.include, tc.exclude, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("include %q exclude %q: %s is not JSON", tc.include, tc.exclude, got)
		}
	}
}

func set(names string) map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(names) {
		m[n] = true
	}
	return m
}

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		doc, path, value, want string
	}{
		{`{"a":1, "b":2}`, "a", `"x"`, `{"a":"x", "b":2}`},
		{`{"a":1, "b":2}`, "c", `3`, `{"a":1, "b":2,"c":3}`},
		{`{}`, "c", `3`, `{"c":3}`},
		{` { } `, "c", `3`, ` { "c":3} `},
		{`{"a":{"b":1}}`, "a.b", `2`, `{"a":{"b":2}}`},
		{`{"a":{"b":1}}`, "a.c", `2`, `{"a":{"b":1,"c":2}}`},
		{`{"a":1}`, "x.y.z", `true`, `{"a":1,"x":{"y":{"z":true}}}`},
		{`{"a\u0062":1}`, "ab", `2`, `{"a\u0062":2}`},
		{`{"a":1,"a":2}`, "a", `3`, `{"a":3,"a":2}`}, // the first of duplicate keys
	} {
		got, err := Set([]byte(tc.doc), tc.path, []byte(tc.value))
		if err != nil {
			t.Fatalf("%s set %s: %v", tc.doc, tc.path, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s set %s=%s: %s, want %s", tc.doc, tc.path, tc.value, got, tc.want)
		}
	}
	_, err := Set([]byte(`{"a":{"b":1}}`), "a.b.c", []byte(`1`))
	if err == nil || !strings.HasSuffix(err.Error(), "cannot set 'a.b.c': 'a.b' is not an object") {
		t.Errorf("set below a scalar: %v", err)
	}
}

func TestUnset(t *testing.T) {
	for _, tc := range []struct {
		doc, path, want string
	}{
		{`{"a":1, "b":2, "c":3}`, "a", `{"b":2, "c":3}`},
		{`{"a":1, "b":2, "c":3}`, "b", `{"a":1, "c":3}`},
		{`{"a":1, "b":2, "c":3}`, "c", `{"a":1, "b":2}`},
		{`{"a":1}`, "a", `{}`},
		{`{"a":1}`, "z", `{"a":1}`},
		{`{"a":{"b":1,"c":2}}`, "a.c", `{"a":{"b":1}}`},
		{`{"a":5}`, "a.c", `{"a":5}`},
		{`{"a":1,"a":2}`, "a", `{"a":1}`}, // the last of duplicate keys
	} {
		got, err := Unset([]byte(tc.doc), tc.path)
		if err != nil {
			t.Fatalf("%s unset %s: %v", tc.doc, tc.path, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s unset %s: %s, want %s", tc.doc, tc.path, got, tc.want)
		}
	}
}

// FuzzPatch: setting then unsetting a top-level member gives valid JSON
// that decodes as the same change made to a map.
func FuzzPatch(f *testing.F) {
	f.Add(`{"a":1,"b":[2]}`, "a", `"x"`)
	f.Add(`{}`, "c", `{"d":null}`)
	f.Add(` {"a" : {"b":1} } `, "b", `3.5`)
	f.Fuzz(func(t *testing.T, doc, key, value string) {
		var m map[string]any
		var v any
		if json.Unmarshal([]byte(doc), &m) != nil || json.Unmarshal([]byte(value), &v) != nil || strings.Contains(key, ".") ||
			!utf8.ValidString(doc+key+value) {
			t.Skip()
		}
		if _, _, err := Members([]byte(doc), strings.IndexByte(doc, '{')); err != nil {
			t.Skip() // duplicate keys and the like: not what this checks
		}
		out, err := Set([]byte(doc), key, []byte(value))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("set %q=%s in %s: invalid %s: %v", key, value, doc, out, err)
		}
		m[key] = v
		if !reflect.DeepEqual(got, m) && !hasDuplicates(doc) {
			t.Fatalf("set %q=%s in %s: %s", key, value, doc, out)
		}
		out, err = Unset(out, key)
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("unset %q: invalid %s: %v", key, out, err)
		}
		delete(m, key)
		if !reflect.DeepEqual(got, m) && !hasDuplicates(doc) {
			t.Fatalf("unset %q from %s: %s", key, doc, out)
		}
	})
}

func hasDuplicates(doc string) bool {
	ms, _, err := Members([]byte(doc), strings.IndexByte(doc, '{'))
	if err != nil {
		return true
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Key] {
			return true
		}
		seen[m.Key] = true
	}
	return false
}
