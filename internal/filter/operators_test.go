package filter

import (
	"fmt"
	"strings"
	"testing"
)

const operatorsSchema = `{"title":"c","properties":{
	"id":{"type":"integer"},
	"n":{"type":"integer"},
	"name":{"type":"string"},
	"tags":{"type":"array","items":{"type":"string"}},
	"nums":{"type":"array","items":{"type":"integer"}},
	"addr":{"type":"object","properties":{"city":{"type":"string"}}}
},"primary_key":["id"]}`

func TestOperatorsMatch(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	const doc = `{"id":1,"n":5,"name":"Hello W\u00f6rld","tags":["red","Blue"],"nums":[1,2],"addr":{"city":"Oslo"}}`
	cases := []struct {
		name, filter string
		collation    Collation
		doc          string // doc when empty
		want         bool
	}{
		{"$ne other", `{"n":{"$ne":4}}`, Collation{}, "", true},
		{"$ne same", `{"n":{"$ne":5}}`, Collation{}, "", false},
		{"$ne missing matches", `{"n":{"$ne":5}}`, Collation{}, `{"id":1}`, true},
		{"$ne null matches", `{"n":{"$ne":5}}`, Collation{}, `{"id":1,"n":null}`, true},
		{"$ne ci", `{"name":{"$ne":"hello wörld"}}`, Collation{Case: "ci"}, "", false},
		{"$ne array element", `{"tags":{"$ne":"red"}}`, Collation{}, "", false},
		{"$ne array no element", `{"tags":{"$ne":"green"}}`, Collation{}, "", true},
		{"$ne with a range", `{"n":{"$gt":1,"$ne":5}}`, Collation{}, "", false},
		{"$in one of", `{"n":{"$in":[3,5,7]}}`, Collation{}, "", true},
		{"$in none", `{"n":{"$in":[3,7]}}`, Collation{}, "", false},
		{"$in single", `{"n":{"$in":[5]}}`, Collation{}, "", true},
		{"$in missing", `{"n":{"$in":[5]}}`, Collation{}, `{"id":1}`, false},
		{"$in array element", `{"tags":{"$in":["green","Blue"]}}`, Collation{}, "", true},
		{"$in array whole", `{"nums":{"$in":[[1,2],[3]]}}`, Collation{}, "", true},
		{"$in ci", `{"name":{"$in":["HELLO WÖRLD"]}}`, Collation{Case: "ci"}, "", true},
		{"$in nested", `{"addr.city":{"$in":["Bergen","Oslo"]}}`, Collation{}, "", true},
		{"$exists true", `{"n":{"$exists":true}}`, Collation{}, "", true},
		{"$exists true missing", `{"n":{"$exists":true}}`, Collation{}, `{"id":1}`, false},
		{"$exists true null", `{"n":{"$exists":true}}`, Collation{}, `{"id":1,"n":null}`, false},
		{"$exists false missing", `{"n":{"$exists":false}}`, Collation{}, `{"id":1}`, true},
		{"$exists false null", `{"n":{"$exists":false}}`, Collation{}, `{"id":1,"n":null}`, true},
		{"$exists false present", `{"n":{"$exists":false}}`, Collation{}, "", false},
		{"$exists nested missing object", `{"addr.city":{"$exists":false}}`, Collation{}, `{"id":1}`, true},
		{"$exists array", `{"tags":{"$exists":true}}`, Collation{}, "", true},
		{"$contains", `{"name":{"$contains":"lo W"}}`, Collation{}, "", true},
		{"$contains escaped document", `{"name":{"$contains":"Wö"}}`, Collation{}, "", true},
		{"$contains case", `{"name":{"$contains":"hello"}}`, Collation{}, "", false},
		{"$contains ci", `{"name":{"$contains":"WÖR"}}`, Collation{Case: "ci"}, "", true},
		{"$contains ci field", `{"name":{"$contains":"hello","collation":{"case":"ci"}}}`, Collation{}, "", true},
		{"$contains missing", `{"name":{"$contains":""}}`, Collation{}, `{"id":1}`, false},
		{"$contains array", `{"tags":{"$contains":"lu"}}`, Collation{}, "", true},
		{"$contains array none", `{"tags":{"$contains":"x"}}`, Collation{}, "", false},
		{"$not", `{"name":{"$not":"xyz"}}`, Collation{}, "", true},
		{"$not holds it", `{"name":{"$not":"Hello"}}`, Collation{}, "", false},
		{"$not ci", `{"name":{"$not":"HELLO"}}`, Collation{Case: "ci"}, "", false},
		{"$not missing", `{"name":{"$not":"x"}}`, Collation{}, `{"id":1}`, false},
		{"$not null", `{"name":{"$not":"x"}}`, Collation{}, `{"id":1,"name":null}`, false},
		{"$not array none holds", `{"tags":{"$not":"gre"}}`, Collation{}, "", true},
		{"$not array one holds", `{"tags":{"$not":"re"}}`, Collation{}, "", false},
		{"$regex", `{"name":{"$regex":"^Hel+o\\s"}}`, Collation{}, "", true},
		{"$regex anywhere", `{"name":{"$regex":"ö"}}`, Collation{}, "", true},
		{"$regex miss", `{"name":{"$regex":"^hello"}}`, Collation{}, "", false},
		{"$regex ci", `{"name":{"$regex":"^hello"}}`, Collation{Case: "ci"}, "", true},
		{"$regex array", `{"tags":{"$regex":"^B"}}`, Collation{}, "", true},
		{"$regex missing", `{"name":{"$regex":""}}`, Collation{}, `{"id":1}`, false},
		{"in $or", `{"$or":[{"n":{"$ne":5}},{"name":{"$contains":"W"}}]}`, Collation{}, "", true},
		{"in $and", `{"$and":[{"n":{"$in":[5]}},{"name":{"$not":"W"}}]}`, Collation{}, "", false},
		{"beside a comparison", `{"id":1,"addr.city":{"$regex":"^O"}}`, Collation{}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.filter), s, c.collation)
			if err != nil {
				t.Fatalf("parse %s: %v", c.filter, err)
			}
			d := c.doc
			if d == "" {
				d = doc
			}
			got, err := f.Matches([]byte(d))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s on %s = %v, want %v (tree %s)", c.filter, d, got, c.want, show(f.Root))
			}
		})
	}
}

func TestOperatorsParseErrors(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	cases := []struct{ name, filter, want string }{
		{"$in not an array", `{"n":{"$in":5}}`, "$in on field 'n' takes an array of values"},
		{"$in empty", `{"n":{"$in":[]}}`, "$in on field 'n' needs at least one value"},
		{"$in wrong type", `{"n":{"$in":["x"]}}`, `unsupported value type: field 'n' takes an integer, not "x"`},
		{"$in twice", `{"n":{"$in":[1],"$in":[2]}}`, "duplicate filter '$in'"},
		{"$exists not bool", `{"n":{"$exists":1}}`, "$exists on field 'n' takes true or false"},
		{"$exists on object", `{"addr":{"$exists":true}}`, "unsupported value type: field 'addr' is "},
		{"$contains on integer", `{"n":{"$contains":"1"}}`, "$contains applies to string fields, and 'n' is not one"},
		{"$not on integer array", `{"nums":{"$not":"1"}}`, "$not applies to string fields, and 'nums' is not one"},
		{"$contains not a string", `{"name":{"$contains":1}}`, "$contains on field 'name' takes a string"},
		{"$regex invalid", `{"name":{"$regex":"a("}}`, "$regex is not a valid regular expression: error parsing regexp: missing closing ): `a(`"},
		{"$regex too long", `{"name":{"$regex":"` + strings.Repeat("a", MaxRegexBytes+1) + `"}}`, "$regex is longer than 1024 bytes"},
		{"$regex too costly", `{"name":{"$regex":"a{1000}b{1000}c{1000}d{1000}e{1000}"}}`, "$regex is too costly: it compiles to"},
		{"$regex just too costly", `{"name":{"$regex":"a{0,200}b"}}`, "$regex is too costly: it compiles to 403 instructions, more than 256"},
		{"$regex backreference", `{"name":{"$regex":"(a)\\1"}}`, "$regex is not a valid regular expression: error parsing regexp: invalid escape sequence: `\\1`"},
		{"$nin", `{"n":{"$nin":[1]}}`, "unsupported operator '$nin'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.filter), s, Collation{})
			if e, ok := err.(*Error); !ok || e.Code != CodeInvalidArgument || !strings.HasPrefix(e.Message, c.want) {
				t.Errorf("%s: %v, want INVALID_ARGUMENT %q", c.filter, err, c.want)
			}
		})
	}
}

// Each comparison inside $in and each of the other operators counts
// against MaxComparisons.
func TestOperatorsCountAsComparisons(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	values := strings.TrimSuffix(strings.Repeat("1,", MaxComparisons+1), ",")
	if _, err := Parse([]byte(`{"n":{"$in":[`+values+`]}}`), s, Collation{}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("$in of %d values: %v, want the comparisons' bound", MaxComparisons+1, err)
	}
}

func TestDocumentOnly(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	for filter, want := range map[string]string{
		`{"n":{"$in":[1,2]}}`:                        "",
		`{"n":1}`:                                    "",
		`{"$or":[{"n":1},{"n":{"$ne":2}}]}`:          "$ne",
		`{"n":{"$exists":true}}`:                     "$exists",
		`{"$and":[{"n":1},{"name":{"$regex":"x"}}]}`: "$regex",
		`{"name":{"$not":"x"}}`:                      "$not",
		`{"tags":{"$contains":"x"}}`:                 "$contains",
	} {
		f, err := Parse([]byte(filter), s, Collation{})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.DocumentOnly(); got != want {
			t.Errorf("DocumentOnly of %s = %q, want %q", filter, got, want)
		}
	}
}

// A $regex is not matched against a value that would take it past
// MaxRegexWork: the document fails with a 400 rather than hold a core.
func TestRegexCostPerValue(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	f, err := Parse([]byte(`{"name":{"$regex":"a{0,100}b"}}`), s, Collation{})
	if err != nil {
		t.Fatal(err)
	}
	insts := f.regexes[0].insts
	fits := MaxRegexWork/insts - 2 // the value's span counts its quotes
	for _, c := range []struct {
		n       int
		wantErr bool
	}{{fits, false}, {fits + 3, true}, {1 << 20, true}} {
		doc := `{"id":1,"name":"` + strings.Repeat("a", c.n) + `"}`
		_, err := f.Matches([]byte(doc))
		if c.wantErr {
			if e, ok := err.(*Error); !ok || e.Code != CodeInvalidArgument || !strings.Contains(e.Message, "$regex on 'name' is too costly for a value of") {
				t.Errorf("a value of %d bytes: %v, want the cost refused", c.n, err)
			}
		} else if err != nil {
			t.Errorf("a value of %d bytes: %v", c.n, err)
		}
	}
	// Other documents, and other operators, are not affected.
	if _, err := f.Matches([]byte(`{"id":1}`)); err != nil {
		t.Error(err)
	}
}

// The $regex bounds hold at their exact edges: a pattern of MaxRegexBytes,
// a program of MaxRegexInstructions, and a value whose bytes times the
// program are MaxRegexWork are taken; one more of any is refused.
func TestRegexBoundsAtTheEdge(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	parse := func(pattern string) (Filter, error) {
		return Parse([]byte(`{"name":{"$regex":"`+pattern+`"}}`), s, Collation{})
	}
	// One character class, however long its text: a long pattern that is
	// cheap.
	if _, err := parse("[" + strings.Repeat("a", MaxRegexBytes-2) + "]"); err != nil {
		t.Errorf("a pattern of %d bytes: %v", MaxRegexBytes, err)
	}
	if _, err := parse("[" + strings.Repeat("a", MaxRegexBytes-1) + "]"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a pattern of %d bytes: %v, want it refused as too long", MaxRegexBytes+1, err)
	}
	// a{n} for the n whose program has exactly MaxRegexInstructions.
	n := 1
	for ; n < MaxRegexInstructions; n++ {
		_, insts, err := compileRegex(fmt.Sprintf("a{%d}", n), false)
		if err == nil && insts == MaxRegexInstructions {
			break
		}
	}
	edge, err := parse(fmt.Sprintf("a{%d}", n))
	if err != nil || edge.regexes[0].insts != MaxRegexInstructions {
		t.Fatalf("a{%d}: %v, want a program of exactly %d instructions taken", n, err, MaxRegexInstructions)
	}
	if _, err := parse(fmt.Sprintf("a{%d}", n+1)); err == nil || !strings.Contains(err.Error(), "too costly") {
		t.Errorf("a{%d}: %v, want it refused as too costly", n+1, err)
	}
	// The value's span (its quotes included) times the program.
	fits := MaxRegexWork/MaxRegexInstructions - 2
	for _, c := range []struct {
		n  int
		ok bool
	}{{fits, true}, {fits + 1, false}} {
		_, err := edge.Matches([]byte(`{"id":1,"name":"` + strings.Repeat("a", c.n) + `"}`))
		if (err == nil) != c.ok {
			t.Errorf("a value of %d bytes: %v, want taken %v", c.n, err, c.ok)
		}
	}
}

// TestNullMatch: a comparison with null is a question of presence, null
// sorting first and a missing field counting as null (parser.null).
func TestNullMatch(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	docs := map[string]string{
		"value":   `{"id":1,"n":5,"name":"x","tags":["a",null],"addr":{"city":"Oslo"}}`,
		"null":    `{"id":1,"n":null,"name":null,"tags":null,"addr":{"city":null}}`,
		"missing": `{"id":1}`,
	}
	cases := []struct {
		filter string
		want   map[string]bool // by doc; absent: false
	}{
		{`{"n":null}`, map[string]bool{"null": true, "missing": true}},
		{`{"n":{"$eq":null}}`, map[string]bool{"null": true, "missing": true}},
		{`{"n":{"$lte":null}}`, map[string]bool{"null": true, "missing": true}},
		{`{"n":{"$gt":null}}`, map[string]bool{"value": true}},
		{`{"n":{"$ne":null}}`, map[string]bool{"value": true}},
		{`{"n":{"$gte":null}}`, map[string]bool{"value": true, "null": true, "missing": true}},
		{`{"n":{"$lt":null}}`, map[string]bool{}},
		{`{"n":{"$in":[5,null]}}`, map[string]bool{"value": true, "null": true, "missing": true}},
		{`{"n":{"$in":[4,null]}}`, map[string]bool{"null": true, "missing": true}},
		{`{"n":{"$gt":null,"$lt":6}}`, map[string]bool{"value": true}},
		{`{"name":null}`, map[string]bool{"null": true, "missing": true}},
		{`{"addr.city":null}`, map[string]bool{"null": true, "missing": true}},
		{`{"addr.city":{"$gt":null}}`, map[string]bool{"value": true}},
		// On an array the array itself is compared, not its elements.
		{`{"tags":null}`, map[string]bool{"null": true, "missing": true}},
		{`{"tags":{"$gt":null}}`, map[string]bool{"value": true}},
		{`{"$or":[{"n":null},{"n":5}]}`, map[string]bool{"value": true, "null": true, "missing": true}},
	}
	for _, c := range cases {
		f, err := Parse([]byte(c.filter), s, Collation{})
		if err != nil {
			t.Fatalf("parse %s: %v", c.filter, err)
		}
		for name, doc := range docs {
			got, err := f.Matches([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want[name] {
				t.Errorf("%s on %s (%s) = %v, want %v", c.filter, name, doc, got, c.want[name])
			}
		}
	}
}

// TestNullInSearchFilter: the search index, which holds no nulls, names a
// comparison with null as what it cannot answer.
func TestNullInSearchFilter(t *testing.T) {
	s := mustSchema(t, operatorsSchema)
	f, err := Parse([]byte(`{"n":null}`), s, Collation{})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.DocumentOnly(); got != "a comparison with null" {
		t.Fatalf("DocumentOnly = %q", got)
	}
}
