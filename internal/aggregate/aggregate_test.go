package aggregate

import (
	"errors"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/schema"
)

const testSchema = `{"title":"items","primary_key":["id"],"properties":{
	"id":{"type":"integer"},"kind":{"type":"string"},"price":{"type":"number"},"qty":{"type":"integer"},
	"ok":{"type":"boolean"},"when":{"type":"string","format":"date-time"},"raw":{"type":"string","format":"byte"},
	"tags":{"type":"array","items":{"type":"string"}},
	"addr":{"type":"object","properties":{"city":{"type":"string"}}},
	"free":{"type":"object"}}}`

func testSpec(t *testing.T, req Request) (*Spec, error) {
	t.Helper()
	s, err := schema.Parse("items", []byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(req, s)
}

func TestParseRefuses(t *testing.T) {
	count := `{"n":{"$count":{}}}`
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"no fields", Request{}, "fields is a required member"},
		{"fields not an object", Request{Fields: []byte(`[1]`)}, "fields must be an object"},
		{"no accumulator", Request{Fields: []byte(`{}`)}, "fields names no accumulator"},
		{"unknown accumulator", Request{Fields: []byte(`{"n":{"$cnt":{}}}`)}, "unknown accumulator '$cnt'"},
		{"two operators", Request{Fields: []byte(`{"n":{"$count":{},"$sum":"qty"}}`)}, "must be one accumulator"},
		{"count with an argument", Request{Fields: []byte(`{"n":{"$count":"qty"}}`)}, "$count takes {}"},
		{"sum of no field", Request{Fields: []byte(`{"s":{"$sum":3}}`)}, "$sum takes a field's name"},
		{"sum of an unknown field", Request{Fields: []byte(`{"s":{"$sum":"cost"}}`)}, "'cost', which is not a field"},
		{"sum of a string", Request{Fields: []byte(`{"s":{"$sum":"kind"}}`)}, "$sum cannot take field 'kind' of type string"},
		{"avg of a bool", Request{Fields: []byte(`{"s":{"$avg":"ok"}}`)}, "$avg cannot take field 'ok' of type bool"},
		{"min of an array", Request{Fields: []byte(`{"s":{"$min":"tags"}}`)}, "$min cannot take field 'tags' of type array of string"},
		{"max of bytes", Request{Fields: []byte(`{"s":{"$max":"raw"}}`)}, "$max cannot take field 'raw' of type byte"},
		{"distinct of an object", Request{Fields: []byte(`{"s":{"$count_distinct":"addr"}}`)}, "cannot take field 'addr' of type object"},
		{"name group", Request{Fields: []byte(`{"group":{"$count":{}}}`)}, "'group' names the group's values"},
		{"name with $", Request{Fields: []byte(`{"$n":{"$count":{}}}`)}, "must not be empty or start with '$'"},
		{"name twice", Request{Fields: []byte(`{"n":{"$count":{}},"n":{"$sum":"qty"}}`)}, "fields names 'n' twice"},
		{"group by unknown", Request{GroupBy: []string{"colour"}, Fields: []byte(count)}, "group_by names 'colour'"},
		{"group by object", Request{GroupBy: []string{"addr"}, Fields: []byte(count)}, "group_by field 'addr' is of type object"},
		{"group by free-form", Request{GroupBy: []string{"free"}, Fields: []byte(count)}, "group_by field 'free' is of type object"},
		{"group by twice", Request{GroupBy: []string{"kind", "kind"}, Fields: []byte(count)}, "group_by names 'kind' twice"},
		{"negative limit", Request{Fields: []byte(count), Limit: -1}, "limit must not be negative"},
		{"sort not an array", Request{Fields: []byte(count), Sort: []byte(`{"n":"$asc"}`)}, "sort must be an array"},
		{"sort on unknown", Request{Fields: []byte(count), Sort: []byte(`[{"m":"$asc"}]`)}, "sort names 'm', which is neither"},
		{"sort on a field not grouped", Request{Fields: []byte(count), Sort: []byte(`[{"kind":"$asc"}]`)}, "sort names 'kind', which is neither"},
		{"sort order", Request{Fields: []byte(count), Sort: []byte(`[{"n":"desc"}]`)}, "must be $asc or $desc"},
		{"sort two names", Request{Fields: []byte(count), Sort: []byte(`[{"n":"$asc","m":"$asc"}]`)}, "each sort item names one"},
		{"sort ambiguous", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"kind":{"$count":{}}}`), Sort: []byte(`[{"kind":"$asc"}]`)}, "both a group_by field and an accumulator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testSpec(t, tc.req)
			var ae *apierror.Error
			if !errors.As(err, &ae) || ae.Code != apierror.InvalidArgument || !strings.Contains(ae.Message, tc.want) {
				t.Fatalf("got %v, want INVALID_ARGUMENT with %q", err, tc.want)
			}
		})
	}
}

// fold folds docs with req and returns the result lines.
func fold(t *testing.T, req Request, maxGroups int, docs ...string) ([]string, error) {
	t.Helper()
	spec, err := testSpec(t, req)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFolder(spec, maxGroups)
	for _, d := range docs {
		if err := f.Add([]byte(d)); err != nil {
			return nil, err
		}
	}
	res, err := f.Results()
	var out []string
	for _, r := range res {
		out = append(out, string(r))
	}
	return out, err
}

var foldDocs = []string{
	`{"id":1,"kind":"a","price":10.5,"qty":2,"tags":["x","y","x"],"addr":{"city":"Oslo"},"when":"2024-01-02T00:00:00Z"}`,
	`{"id":2,"kind":"b","price":20,"qty":3,"tags":[],"when":"2023-01-02T00:00:00Z"}`,
	`{"id":3,"kind":"a","price":31,"qty":null,"tags":["y",null],"addr":{"city":"Bergen"}}`,
	`{"id":4,"price":1.25,"qty":5,"addr":{}}`,
	`{"id":5,"kind":"b","qty":9223372036854775807}`,
	`{"id":6,"kind":"b","qty":1}`,
}

func TestFold(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want []string
	}{
		{"one group over all", Request{Fields: []byte(`{"n":{"$count":{}},"p":{"$sum":"price"},"m":{"$avg":"price"}}`)},
			[]string{`{"group":{},"n":6,"p":62.75,"m":15.6875}`}},
		{"by kind, null first", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"n":{"$count":{}},"lo":{"$min":"price"},"hi":{"$max":"price"}}`)},
			[]string{`{"group":{"kind":null},"n":1,"lo":1.25,"hi":1.25}`, `{"group":{"kind":"a"},"n":2,"lo":10.5,"hi":31}`, `{"group":{"kind":"b"},"n":3,"lo":20,"hi":20}`}},
		// 9223372036854775807 + 1 overflows int64: the sum goes on as a float.
		{"integer sum past int64", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"q":{"$sum":"qty"},"m":{"$avg":"qty"}}`), Sort: []byte(`[{"kind":"$desc"}]`)},
			[]string{`{"group":{"kind":"b"},"q":9223372036854776000,"m":3074457345618258400}`, `{"group":{"kind":"a"},"q":2,"m":2}`, `{"group":{"kind":null},"q":5,"m":5}`}},
		{"sort on a sum, limit", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"q":{"$sum":"qty"}}`), Sort: []byte(`[{"q":"$desc"}]`), Limit: 1},
			[]string{`{"group":{"kind":"b"},"q":9223372036854776000}`}},
		{"array elements, each distinct once", Request{GroupBy: []string{"tags"}, Fields: []byte(`{"n":{"$count":{}}}`)},
			[]string{`{"group":{"tags":null},"n":4}`, `{"group":{"tags":"x"},"n":1}`, `{"group":{"tags":"y"},"n":2}`}},
		{"nested path and two fields", Request{GroupBy: []string{"kind", "addr.city"}, Fields: []byte(`{"n":{"$count":{}}}`)},
			[]string{`{"group":{"kind":null,"addr.city":null},"n":1}`, `{"group":{"kind":"a","addr.city":"Bergen"},"n":1}`, `{"group":{"kind":"a","addr.city":"Oslo"},"n":1}`, `{"group":{"kind":"b","addr.city":null},"n":3}`}},
		{"sort by count, ties by group", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"n":{"$count":{}}}`), Sort: []byte(`[{"n":"$asc"}]`)},
			[]string{`{"group":{"kind":null},"n":1}`, `{"group":{"kind":"a"},"n":2}`, `{"group":{"kind":"b"},"n":3}`}},
		{"min and max of date-times and strings, no value is null", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"first":{"$min":"when"},"city":{"$max":"addr.city"},"d":{"$count_distinct":"addr.city"}}`)},
			[]string{`{"group":{"kind":null},"first":null,"city":null,"d":0}`, `{"group":{"kind":"a"},"first":"2024-01-02T00:00:00Z","city":"Oslo","d":2}`, `{"group":{"kind":"b"},"first":"2023-01-02T00:00:00Z","city":null,"d":0}`}},
		{"average of no value", Request{GroupBy: []string{"kind"}, Fields: []byte(`{"m":{"$avg":"price"},"s":{"$sum":"price"}}`), Sort: []byte(`[{"m":"$asc"}]`), Limit: 2},
			[]string{`{"group":{"kind":null},"m":1.25,"s":1.25}`, `{"group":{"kind":"b"},"m":20,"s":20}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fold(t, tc.req, 0, foldDocs...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// No group_by answers its one group even when nothing matched.
func TestFoldNothing(t *testing.T) {
	got, err := fold(t, Request{Fields: []byte(`{"n":{"$count":{}},"s":{"$sum":"qty"},"p":{"$sum":"price"},"m":{"$avg":"qty"},"lo":{"$min":"kind"}}`)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"group":{},"n":0,"s":0,"p":0,"m":null,"lo":null}`; len(got) != 1 || got[0] != want {
		t.Errorf("got %v, want %s", got, want)
	}
	got, err = fold(t, Request{GroupBy: []string{"kind"}, Fields: []byte(`{"n":{"$count":{}}}`)}, 0)
	if err != nil || len(got) != 0 {
		t.Errorf("grouped, nothing matched: %v %v, want no result", got, err)
	}
}

// The bound on groups: exactly maxGroups is answered, one more refused.
func TestFoldGroupBound(t *testing.T) {
	req := Request{GroupBy: []string{"id"}, Fields: []byte(`{"n":{"$count":{}}}`)}
	docs := []string{`{"id":1}`, `{"id":2}`, `{"id":3}`}
	if got, err := fold(t, req, 3, docs...); err != nil || len(got) != 3 {
		t.Fatalf("3 groups, bound 3: %v %v", got, err)
	}
	_, err := fold(t, req, 2, docs...)
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code != apierror.InvalidArgument || !strings.Contains(ae.Message, "more than 2 groups") {
		t.Fatalf("3 groups, bound 2: %v, want INVALID_ARGUMENT naming the bound", err)
	}
	// An array's elements are groups too: one document, three groups.
	_, err = fold(t, Request{GroupBy: []string{"tags"}, Fields: []byte(`{"n":{"$count":{}}}`)}, 2, `{"id":1,"tags":["a","b","c"]}`)
	if !errors.As(err, &ae) || ae.Code != apierror.InvalidArgument {
		t.Fatalf("3 elements, bound 2: %v", err)
	}
}

// A group made from index entries (AddCount, with typed values) is the
// group the same value makes from documents.
func TestAddCountMeetsAdd(t *testing.T) {
	spec, err := testSpec(t, Request{GroupBy: []string{"price"}, Fields: []byte(`{"n":{"$count":{}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFolder(spec, 0)
	for _, d := range []string{`{"id":1,"price":2}`, `{"id":2,"price":2.0}`, `{"id":3}`} {
		if err := f.Add([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.AddCount([]any{2.0}, 3); err != nil {
		t.Fatal(err)
	}
	if err := f.AddCount([]any{nil}, 1); err != nil {
		t.Fatal(err)
	}
	res, err := f.Results()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"group":{"price":null},"n":2}`, `{"group":{"price":2},"n":5}`}
	if len(res) != 2 || string(res[0]) != want[0] || string(res[1]) != want[1] {
		t.Errorf("got %s, want %v", res, want)
	}
}

// collect takes every path's value in one walk: nested, escaped names,
// a path and one below it, the first of two members of a name, and
// nothing where a step is missing or not an object.
func TestCollect(t *testing.T) {
	doc := []byte(` {"a":1,"b":{"c":[1,2],"d":{"e":"x"}},"k\u0069nd":"esc","n":null,"s":"a.b","a":2}`)
	cases := []struct{ path, want string }{
		{"a", "1"}, {"b.c", "[1,2]"}, {"b.d.e", `"x"`}, {"kind", `"esc"`}, {"n", "null"}, {"b.d", `{"e":"x"}`},
		{"missing", ""}, {"a.b", ""}, {"b.d.e.f", ""}, {"b.x", ""}, {"s.a", ""},
	}
	f := &Folder{toks: make([][]byte, len(cases))}
	for i, tc := range cases {
		f.paths = addPath(f.paths, strings.Split(tc.path, "."), i)
	}
	if err := f.collect(doc, 1, f.paths); err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		if got := string(f.toks[i]); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
	}
}

// An integer sum is exact whenever its total fits int64, whatever the
// order of its operands and however far the partial sums go past the
// range; only a total past the range is a float (and inexact).
func TestIntegerSumWraps(t *testing.T) {
	const max, min = "9223372036854775807", "-9223372036854775808"
	doc := func(q string) string { return `{"id":1,"qty":` + q + `}` }
	for _, tc := range []struct {
		qtys []string
		want string
	}{
		{[]string{max, "1", "-1"}, `{"group":{},"s":9223372036854775807}`},
		{[]string{"1", max, "-1"}, `{"group":{},"s":9223372036854775807}`},
		{[]string{"-1", max, "1"}, `{"group":{},"s":9223372036854775807}`},
		{[]string{max, max, min, min, "5"}, `{"group":{},"s":3}`},
		{[]string{min, "-1", "1"}, `{"group":{},"s":-9223372036854775808}`},
		{[]string{max, "1"}, `{"group":{},"s":9223372036854776000}`},
		{[]string{min, "-1"}, `{"group":{},"s":-9223372036854776000}`},
		{[]string{max, max, max}, `{"group":{},"s":27670116110564327000}`},
	} {
		var docs []string
		for _, q := range tc.qtys {
			docs = append(docs, doc(q))
		}
		got, err := fold(t, Request{Fields: []byte(`{"s":{"$sum":"qty"}}`)}, 0, docs...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "") != tc.want {
			t.Errorf("sum of %v: %s, want %s", tc.qtys, strings.Join(got, ""), tc.want)
		}
	}
}
