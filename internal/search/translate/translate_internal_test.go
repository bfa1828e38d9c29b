package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/schema"
)

func TestSplitQuery(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want string // parts joined by |, phrases in quotes
		err  bool
	}{
		{"", "", false},
		{"*", "", false},
		{"  * ", "", false},
		{"fox", "fox", false},
		{"quick  brown\tfox", "quick|brown|fox", false},
		{`"brown fox"`, `"brown fox"`, false},
		{`quick "brown fox" jumps`, `quick|"brown fox"|jumps`, false},
		{`a"b c"d`, `a|"b c"|d`, false},
		{`""`, "", false},
		{`"  "`, "", false},
		{`"open`, "", true},
		{`x "open`, "", true},
	} {
		parts, err := splitQuery(tc.q)
		if (err != nil) != tc.err {
			t.Errorf("splitQuery(%q): error %v, want error %v", tc.q, err, tc.err)
			continue
		}
		var got []string
		for _, p := range parts {
			if p.phrase {
				got = append(got, `"`+p.text+`"`)
			} else {
				got = append(got, p.text)
			}
		}
		if strings.Join(got, "|") != tc.want {
			t.Errorf("splitQuery(%q) = %q, want %q", tc.q, strings.Join(got, "|"), tc.want)
		}
	}
}

// FuzzSplitQuery: any text splits or fails cleanly; words never hold a
// space or a quote, phrases never a quote, and nothing is empty.
func FuzzSplitQuery(f *testing.F) {
	for _, s := range []string{"", "*", "a b", `"a b" c`, `"`, `a"b`, "\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		parts, err := splitQuery(q)
		if err != nil {
			if strings.Count(q, `"`)%2 == 0 {
				t.Errorf("splitQuery(%q) failed with balanced quotes: %v", q, err)
			}
			return
		}
		for _, p := range parts {
			if p.text == "" || strings.Contains(p.text, `"`) || (!p.phrase && strings.ContainsAny(p.text, " \t\n")) {
				t.Errorf("splitQuery(%q): bad part %+v", q, p)
			}
		}
	})
}

// TestQueryLimits: q's bytes and its words times the fields searched are
// bounded, counted as the search would run them: each word of a phrase,
// a repeated word each time, stop words not, a search field given twice
// once.
func TestQueryLimits(t *testing.T) {
	props := []string{`"id":{"type":"integer"}`, `"n":{"type":"number"}`}
	for i := range 200 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"string"}`, i))
	}
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{`+strings.Join(props, ",")+`},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("ox ", n)) }
	for _, tc := range []struct {
		name   string
		q      string
		fields []string
		err    string // "" when accepted
	}{
		{"q at the byte limit", strings.Repeat("x", MaxQueryBytes), nil, ""},
		{"q past the byte limit", strings.Repeat("x", MaxQueryBytes+1), nil, "q is 4097 bytes, above the limit of 4096"},
		{"stop words past the byte limit", strings.Repeat("the ", MaxQueryBytes/4+1), nil, "q is 4100 bytes, above the limit of 4096"},
		{"5 words in every field", words(5), nil, ""},
		{"6 words in every field", words(6), nil, "q's words times its search fields are 1200 (6 × 200), above the limit of 1024: give fewer words or search_fields"},
		{"stop words do not count", "the a of " + words(5), nil, ""},
		{"each word of a phrase counts", `"quick brown fox" ` + words(3), nil, "q's words times its search fields are 1200 (6 × 200), above the limit of 1024: give fewer words or search_fields"},
		{"a word of two terms counts twice", "fox-trot " + words(4), nil, "q's words times its search fields are 1200 (6 × 200), above the limit of 1024: give fewer words or search_fields"},
		{"1024 words in one field", words(1024), []string{"f0"}, ""},
		{"1025 words in one field", words(1025), []string{"f0"}, "q's words times its search fields are 1025 (1025 × 1), above the limit of 1024: give fewer words or search_fields"},
		{"512 words in two fields", words(512), []string{"f0", "f1"}, ""},
		{"513 words in two fields", words(513), []string{"f0", "f1"}, "q's words times its search fields are 1026 (513 × 2), above the limit of 1024: give fewer words or search_fields"},
		{"a field given twice counts once", words(512), []string{"f0", "f1", "f0", "f1", "f1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(s, Request{Q: tc.q, SearchFields: tc.fields})
			got := ""
			if err != nil {
				se, ok := apierror.From(err)
				if !ok || se.Code != apierror.InvalidArgument {
					t.Fatalf("error %v, want an INVALID_ARGUMENT", err)
				}
				got = se.Message
			}
			if got != tc.err {
				t.Errorf("got error %q, want %q", got, tc.err)
			}
		})
	}
}

// A search field given twice is searched once: the query is the one of
// the field given once.
func TestSearchFieldsDeduplicated(t *testing.T) {
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},"body":{"type":"string"}},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	once, err := Prepare(s, Request{Q: `fox "brown fox"`, SearchFields: []string{"title", "body"}})
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Prepare(s, Request{Q: `fox "brown fox"`, SearchFields: []string{"title", "body", "title", "body", "title"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(once.Text, twice.Text) {
		t.Errorf("search fields given twice: query %s, want %s", queryJSON(t, twice.Text), queryJSON(t, once.Text))
	}
}

func queryJSON(t *testing.T, q query.Query) string {
	b, err := json.Marshal(q)
	if err != nil {
		return fmt.Sprintf("%#v", q)
	}
	return string(b)
}

// TestGroupBy: group_by takes string, integer and number fields (nested
// by dot path) and arrays of them, at most MaxGroupFields of them each
// once, and a limit from 1 to MaxGroupHits (0: DefaultGroupHits); every
// other request is an INVALID_ARGUMENT naming what is wrong.
func TestGroupBy(t *testing.T) {
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{"id":{"type":"integer"},`+
		`"city":{"type":"string"},"n":{"type":"integer"},"x":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},`+
		`"ns":{"type":"array","items":{"type":"integer"}},"ok":{"type":"boolean"},"at":{"type":"string","format":"date-time"},`+
		`"addr":{"type":"object","properties":{"zip":{"type":"string"}}},"vec":{"type":"array","format":"vector","dimensions":3},`+
		`"objs":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}}},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		group     GroupBy
		wantPaths []string
		wantHits  int
		err       string // a part of the message; "" for none
	}{
		{"string", GroupBy{Fields: []string{"city"}}, []string{"city"}, DefaultGroupHits, ""},
		{"numbers and a limit", GroupBy{Fields: []string{"n", "x"}, Limit: 7}, []string{"n", "x"}, 7, ""},
		{"nested and arrays", GroupBy{Fields: []string{"addr.zip", "tags", "ns"}, Limit: MaxGroupHits}, []string{"addr.zip", "tags", "ns"}, MaxGroupHits, ""},
		{"no fields", GroupBy{}, nil, 0, "at least one field"},
		{"too many fields", GroupBy{Fields: []string{"city", "n", "x", "tags"}}, nil, 0, "at most 3 fields, got 4"},
		{"twice", GroupBy{Fields: []string{"city", "city"}}, nil, 0, "'city' is given twice"},
		{"unknown", GroupBy{Fields: []string{"nope"}}, nil, 0, "'nope' is not in the collection's schema"},
		{"inside an array of objects", GroupBy{Fields: []string{"objs.a"}}, nil, 0, "'objs.a' is not in the collection's schema"},
		{"boolean", GroupBy{Fields: []string{"ok"}}, nil, 0, "'ok' is of type bool"},
		{"date-time", GroupBy{Fields: []string{"at"}}, nil, 0, "'at' is of type"},
		{"object", GroupBy{Fields: []string{"addr"}}, nil, 0, "'addr' is of type object"},
		{"vector", GroupBy{Fields: []string{"vec"}}, nil, 0, "'vec' is of type vector"},
		{"array of objects", GroupBy{Fields: []string{"objs"}}, nil, 0, "'objs' is of type array of object"},
		{"limit too large", GroupBy{Fields: []string{"city"}, Limit: MaxGroupHits + 1}, nil, 0, "limit 100 is out of range"},
		{"negative limit", GroupBy{Fields: []string{"city"}, Limit: -1}, nil, 0, "limit -1 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group
			p, err := Prepare(s, Request{GroupBy: &g})
			if tc.err != "" {
				var ae *apierror.Error
				if err == nil || !errors.As(err, &ae) || ae.Code != apierror.InvalidArgument || !strings.Contains(ae.Message, tc.err) {
					t.Fatalf("got %v, want INVALID_ARGUMENT with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Group == nil || !reflect.DeepEqual(p.Group.Paths, tc.wantPaths) || p.Group.Hits != tc.wantHits {
				t.Fatalf("group %+v, want %v with %d hits", p.Group, tc.wantPaths, tc.wantHits)
			}
		})
	}
	if p, err := Prepare(s, Request{}); err != nil || p.Group != nil {
		t.Fatalf("no group_by: %+v, %v", p, err)
	}
}

// TestTextQueryShape: a q with words searches them; a q whose words are
// all stop words, or a schema with nothing to search, matches nothing; a
// stop word beside other words is dropped, not required.
func TestTextQueryShape(t *testing.T) {
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{"id":{"type":"integer"},"title":{"type":"string"},"n":{"type":"number"}},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	numbers, err := schema.Parse("nums", []byte(`{"title":"nums","properties":{"id":{"type":"integer"},"n":{"type":"number"}},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	prepare := func(s *schema.Schema, q string) query.Query {
		t.Helper()
		p, err := Prepare(s, Request{Q: q})
		if err != nil {
			t.Fatal(err)
		}
		return p.Text
	}
	if _, ok := prepare(s, "fox").(*query.MatchNoneQuery); ok {
		t.Error(`q "fox" on a string field matches nothing`)
	}
	if _, ok := prepare(s, "the").(*query.MatchNoneQuery); !ok {
		t.Errorf(`q "the" (a stop word alone): %s, want match none`, queryJSON(t, prepare(s, "the")))
	}
	if _, ok := prepare(numbers, "fox").(*query.MatchNoneQuery); !ok {
		t.Errorf(`q "fox" with no string field: %s, want match none`, queryJSON(t, prepare(numbers, "fox")))
	}
	if got, want := prepare(s, "the fox"), prepare(s, "fox"); !reflect.DeepEqual(got, want) {
		t.Errorf(`q "the fox": %s, want the query of "fox", %s`, queryJSON(t, got), queryJSON(t, want))
	}
}

// A search takes MaxSortFields sort keys, not one more.
func TestSortFieldsBound(t *testing.T) {
	s, err := schema.Parse("docs", []byte(`{"title":"docs","properties":{"id":{"type":"integer"},"a":{"type":"integer","sort":true},"b":{"type":"integer","sort":true},"c":{"type":"integer","sort":true}},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	keys := []SortField{{Path: "a"}, {Path: "b"}, {Path: "c"}}
	if _, err := Prepare(s, Request{Sort: keys[:MaxSortFields]}); err != nil {
		t.Errorf("%d sort keys: %v, want them taken", MaxSortFields, err)
	}
	_, err = Prepare(s, Request{Sort: keys[:MaxSortFields+1]})
	if se, ok := apierror.From(err); !ok || se.Code != apierror.InvalidArgument || se.Message != "sort takes at most 2 fields, got 3" {
		t.Errorf("%d sort keys: %v, want an INVALID_ARGUMENT", MaxSortFields+1, err)
	}
}
