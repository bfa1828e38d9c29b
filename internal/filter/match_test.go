package filter

import (
	"fmt"
	"strings"
	"testing"
)

// show renders a tree for failure messages.
func show(n Node) string {
	switch n := n.(type) {
	case nil:
		return "{}"
	case *And:
		return "and(" + showAll(n.Nodes) + ")"
	case *Or:
		return "or(" + showAll(n.Nodes) + ")"
	case *Comparison:
		s := fmt.Sprintf("%s %s %#v (%s)", n.Path, n.Op, n.Value, n.Type)
		if n.CaseInsensitive {
			s += " ci"
		}
		return s
	case *Elements:
		var parts []string
		for _, c := range n.Comparisons {
			parts = append(parts, show(c))
		}
		return "some element of " + n.Path + "(" + strings.Join(parts, ", ") + ")"
	case *ArrayEquals:
		var parts []string
		for _, c := range n.Elements {
			parts = append(parts, show(c))
		}
		return n.Path + " = [" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%T", n)
}

func showAll(ns []Node) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, show(n))
	}
	return strings.Join(parts, ", ")
}

func TestMatches(t *testing.T) {
	s := testFields(t)
	const doc = `{"pkey_int":10,"int_value":-9223372036854775808,"int32_value":7,"string_value":"Hello wörld",
		"bool_value":false,"double_value":2.5,"bytes_value":"aGk=","date_time_value":"2022-09-16T17:42:34Z",
		"uuid_value":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","array_value":[1,2],
		"object_value":{"nested_str":"bar","inner":{"x":9007199254740993}},"free":{"a":1},"$weird":3}`
	cases := []struct {
		name, filter string
		collation    Collation
		doc          string // doc when empty
		want         bool
	}{
		{"empty filter", `{}`, Collation{}, "", true},
		{"eq", `{"pkey_int":10}`, Collation{}, "", true},
		{"eq miss", `{"pkey_int":11}`, Collation{}, "", false},
		{"gt", `{"pkey_int":{"$gt":9}}`, Collation{}, "", true},
		{"gt equal", `{"pkey_int":{"$gt":10}}`, Collation{}, "", false},
		{"gte", `{"pkey_int":{"$gte":10}}`, Collation{}, "", true},
		{"lt", `{"pkey_int":{"$lt":10}}`, Collation{}, "", false},
		{"lt more", `{"pkey_int":{"$lt":11}}`, Collation{}, "", true},
		{"lte", `{"pkey_int":{"$lte":10}}`, Collation{}, "", true},
		{"lte less", `{"pkey_int":{"$lte":9}}`, Collation{}, "", false},
		{"range", `{"pkey_int":{"$gt":5,"$lt":20}}`, Collation{}, "", true},
		{"range miss", `{"pkey_int":{"$gt":5,"$lt":10}}`, Collation{}, "", false},
		{"min int64", `{"int_value":-9223372036854775808}`, Collation{}, "", true},
		{"int32", `{"int32_value":{"$gte":7}}`, Collation{}, "", true},
		// 2^53+1 is not a float64: an exact comparison tells it from 2^53.
		{"exact integer", `{"object_value.inner.x":9007199254740993}`, Collation{}, "", true},
		{"exact integer miss", `{"object_value.inner.x":9007199254740992}`, Collation{}, "", false},
		{"exact integer gt", `{"object_value.inner.x":{"$gt":9007199254740992}}`, Collation{}, "", true},
		{"number", `{"double_value":2.5}`, Collation{}, "", true},
		{"number lt", `{"double_value":{"$lt":3}}`, Collation{}, "", true},
		{"integer literal in number field", `{"double_value":{"$gt":2}}`, Collation{}, "", true},
		{"number written as integer in document", `{"double_value":3}`, Collation{}, `{"double_value":3}`, true},
		{"number exponent in document", `{"double_value":{"$gte":300}}`, Collation{}, `{"double_value":3e2}`, true},
		{"bool", `{"bool_value":false}`, Collation{}, "", true},
		{"bool miss", `{"bool_value":true}`, Collation{}, "", false},
		{"bool order", `{"bool_value":{"$lt":true}}`, Collation{}, "", true},
		{"string", `{"string_value":"Hello wörld"}`, Collation{}, "", true},
		{"string case", `{"string_value":"hello wörld"}`, Collation{}, "", false},
		{"string bytewise", `{"string_value":{"$lt":"a"}}`, Collation{}, "", true},
		{"string prefix is less", `{"string_value":{"$gt":"Hello"}}`, Collation{}, "", true},
		{"string ci", `{"string_value":"hELLO WÖRLD"}`, Collation{Case: "ci"}, "", true},
		{"string ci field", `{"string_value":{"$eq":"HELLO WÖRLD","collation":{"case":"ci"}}}`, Collation{}, "", true},
		{"string ci order", `{"string_value":{"$gt":"HELLO","collation":{"case":"ci"}}}`, Collation{}, "", true},
		{"string ci lt", `{"string_value":{"$lt":"a","collation":{"case":"ci"}}}`, Collation{}, "", false},
		{"string ci longer", `{"string_value":{"$lt":"hello wörld!","collation":{"case":"ci"}}}`, Collation{}, "", true},
		{"string ci escaped document", `{"string_value":"É"}`, Collation{Case: "ci"}, `{"string_value":"\u00e9"}`, true},
		{"string escaped document", `{"string_value":"a\"b"}`, Collation{}, `{"string_value":"a\u0022b"}`, true},
		{"uuid", `{"uuid_value":"1b4e28ba-2fa1-11d2-883f-0016d3cca427"}`, Collation{}, "", true},
		{"uuid ignores ci", `{"uuid_value":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427"}`, Collation{Case: "ci"}, "", false},
		{"date-time as string", `{"date_time_value":{"$gt":"2022-09-16T17:42:33Z"}}`, Collation{}, "", true},
		{"bytes", `{"bytes_value":"aGk="}`, Collation{}, "", true},
		{"bytes decoded order", `{"bytes_value":{"$gt":"aGg="}}`, Collation{}, "", true},
		{"bytes miss", `{"bytes_value":"aGo="}`, Collation{}, "", false},
		{"bytes escaped document", `{"bytes_value":"/w=="}`, Collation{}, `{"bytes_value":"\/w=="}`, true},
		{"bytes past the stack buffer", `{"bytes_value":{"$gt":"AA=="}}`, Collation{}, `{"bytes_value":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsc="}`, true},
		{"string ci A and Z", `{"string_value":"azaz"}`, Collation{Case: "ci"}, `{"string_value":"AZaz"}`, true},
		{"string ci outside A to Z", `{"string_value":"@["}`, Collation{Case: "ci"}, `{"string_value":"@["}`, true},
		{"string ci not shifted", `{"string_value":{"$lt":"a"}}`, Collation{Case: "ci"}, `{"string_value":"@"}`, true},
		{"dot path", `{"object_value.nested_str":"bar"}`, Collation{}, "", true},
		{"dot path miss", `{"object_value.nested_str":"baz"}`, Collation{}, "", false},
		{"and", `{"$and":[{"pkey_int":10},{"string_value":{"$gte":"H"}}]}`, Collation{}, "", true},
		{"and miss", `{"$and":[{"pkey_int":10},{"string_value":{"$lt":"H"}}]}`, Collation{}, "", false},
		{"or", `{"$or":[{"pkey_int":11},{"bool_value":false}]}`, Collation{}, "", true},
		{"or miss", `{"$or":[{"pkey_int":11},{"bool_value":true}]}`, Collation{}, "", false},
		{"nested", `{"$or":[{"pkey_int":1},{"$and":[{"double_value":{"$gt":2}},{"$or":[{"uuid_value":"x"},{"object_value.inner.x":{"$gt":0}}]}]}]}`, Collation{}, "", true},
		{"top-level and", `{"pkey_int":10,"bool_value":true}`, Collation{}, "", false},

		{"missing field", `{"int_value":1}`, Collation{}, `{"pkey_int":1}`, false},
		{"missing field lt", `{"int_value":{"$lt":1}}`, Collation{}, `{"pkey_int":1}`, false},
		{"missing nested", `{"object_value.nested_str":{"$gte":""}}`, Collation{}, `{"object_value":{}}`, false},
		{"missing object", `{"object_value.nested_str":{"$gte":""}}`, Collation{}, `{}`, false},
		{"null field", `{"int_value":{"$lt":1}}`, Collation{}, `{"int_value":null}`, false},
		{"null object", `{"object_value.nested_str":{"$gte":""}}`, Collation{}, `{"object_value":null}`, false},
		{"null string", `{"string_value":{"$gte":""}}`, Collation{}, `{"string_value":null}`, false},
		{"wrong type in document", `{"int_value":{"$gte":0}}`, Collation{}, `{"int_value":"5"}`, false},
		{"fraction in integer field", `{"int_value":{"$gte":0}}`, Collation{}, `{"int_value":5.5}`, false},
		{"escaped member name", `{"string_value":"x"}`, Collation{}, `{"string\u005fvalue":"x"}`, true},
		{"first occurrence", `{"pkey_int":1}`, Collation{}, `{"pkey_int":1,"pkey_int":2}`, true},
		{"not an object", `{"pkey_int":1}`, Collation{}, `[1]`, false},
		{"or over missing", `{"$or":[{"int_value":1},{"pkey_int":1}]}`, Collation{}, `{"pkey_int":1}`, true},
		{"whitespace", `{"object_value.inner.x":1}`, Collation{}, " { \"object_value\" : { \"inner\" : { \"x\" : 1 } } } ", true},

		// Arrays of scalars (array_value is [1,2]).
		{"array contains", `{"array_value":2}`, Collation{}, "", true},
		{"array contains not", `{"array_value":3}`, Collation{}, "", false},
		{"array contains as string", `{"array_value":"1"}`, Collation{}, "", true},
		{"array element gt", `{"array_value":{"$gt":1}}`, Collation{}, "", true},
		{"array element gt none", `{"array_value":{"$gt":2}}`, Collation{}, "", false},
		// One element must be in the range: 1 is > 0 and 2 is < 3, but
		// none is in (1, 2).
		{"array element in range", `{"array_value":{"$gt":0,"$lt":2}}`, Collation{}, "", true},
		{"array no element in range", `{"array_value":{"$gt":1,"$lt":2}}`, Collation{}, "", false},
		{"array equals", `{"array_value":[1,2]}`, Collation{}, "", true},
		{"array equals in order only", `{"array_value":[2,1]}`, Collation{}, "", false},
		{"array equals prefix", `{"array_value":[1]}`, Collation{}, "", false},
		{"array equals longer", `{"array_value":[1,2,3]}`, Collation{}, "", false},
		{"array equals empty", `{"array_value":[]}`, Collation{}, "", false},
		{"empty array equals empty", `{"array_value":[]}`, Collation{}, `{"array_value":[]}`, true},
		{"empty array contains", `{"array_value":1}`, Collation{}, `{"array_value":[]}`, false},
		{"array with nulls contains", `{"array_value":2}`, Collation{}, `{"array_value":[null,2]}`, true},
		{"array with nulls equals", `{"array_value":[2]}`, Collation{}, `{"array_value":[null,2]}`, false},
		{"null array", `{"array_value":{"$gte":0}}`, Collation{}, `{"array_value":null}`, false},
		{"null array equals empty", `{"array_value":[]}`, Collation{}, `{"array_value":null}`, false},
		{"missing array equals empty", `{"array_value":[]}`, Collation{}, `{}`, false},
		{"array contains in or", `{"$or":[{"array_value":9},{"array_value":[1,2]}]}`, Collation{}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.filter), s, c.collation)
			if err != nil {
				t.Fatal(err)
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
				t.Errorf("Matches(%s) = %v, want %v (tree %s)", d, got, c.want, show(f.Root))
			}
		})
	}
}

// Arrays of strings take the collation, elements of other kinds; arrays of
// objects or of arrays compare only through their fields or elements
// (within_test.go).
func TestMatchesStringArrays(t *testing.T) {
	s := mustSchema(t, `{"title":"c","properties":{"id":{"type":"integer"},
		"tags":{"type":"array","items":{"type":"string"}},
		"obj":{"type":"object","properties":{"arr":{"type":"array","items":{"type":"string","format":"date-time"}}}},
		"objs":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},
		"matrix":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}}`)
	const doc = `{"id":1,"tags":["Paris","lyon"],"obj":{"arr":["2022-01-01T00:00:00Z"]},"objs":[{"name":"x"}],"matrix":[[1]]}`
	for _, c := range []struct {
		filter    string
		collation Collation
		want      bool
	}{
		{`{"tags":"Paris"}`, Collation{}, true},
		{`{"tags":"paris"}`, Collation{}, false},
		{`{"tags":"paris"}`, Collation{Case: "ci"}, true},
		{`{"tags":{"$eq":"LYON","collation":{"case":"ci"}}}`, Collation{}, true},
		{`{"tags":["paris","LYON"]}`, Collation{Case: "ci"}, true},
		{`{"tags":["Paris","lyon"]}`, Collation{}, true},
		{`{"tags":{"$gt":"m"}}`, Collation{}, false}, // "Paris" < "lyon" < "m" bytewise
		{`{"tags":{"$lt":"Q"}}`, Collation{}, true},
		{`{"obj.arr":"2022-01-01T00:00:00Z"}`, Collation{}, true},
		{`{"obj.arr":{"$gt":"2022"}}`, Collation{}, true},
	} {
		f, err := Parse([]byte(c.filter), s, c.collation)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got, err := f.Matches([]byte(doc)); err != nil || got != c.want {
			t.Errorf("%s (%v): Matches = %v, %v; want %v", c.filter, c.collation, got, err, c.want)
		}
	}
	for filter, want := range map[string]string{
		`{"objs.nope":"x"}`: "querying on non schema field 'objs.nope'",
		`{"objs":"x"}`:      "unsupported value type: field 'objs' is an array of objects, which a filter cannot compare",
		`{"matrix":[[1]]}`:  "unsupported value type: field 'matrix' lies inside an array, and a filter compares the values there one at a time, with an integer, not with [[1]]",
	} {
		_, err := Parse([]byte(filter), s, Collation{})
		wantError(t, err, want)
	}
}

func TestMatchesBadDocument(t *testing.T) {
	s := testFields(t)
	f, err := Parse([]byte(`{"int_value":1}`), s, Collation{})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{`{"a":}`, `{"int_value"`, ``, `x`, `{"a":[1,}`} {
		if _, err := f.Matches([]byte(doc)); err == nil {
			t.Errorf("Matches(%q): no error", doc)
		}
	}
	// Matches stops reading once it has every value: what follows is not read.
	if ok, err := f.Matches([]byte(`{"int_value":1,"x":!!!`)); !ok || err != nil {
		t.Errorf("early stop: %v, %v", ok, err)
	}
}

func TestManyPaths(t *testing.T) {
	// More distinct paths than Matches keeps on its stack.
	var props, conds, members []string
	for i := 0; i < 20; i++ {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"integer"}`, i))
		conds = append(conds, fmt.Sprintf(`"f%d":%d`, i, i))
		members = append(members, fmt.Sprintf(`"f%d":%d`, i, i))
	}
	s := mustSchema(t, `{"title":"c","properties":{`+strings.Join(props, ",")+`}}`)
	f, err := Parse([]byte("{"+strings.Join(conds, ",")+"}"), s, Collation{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Matches([]byte("{" + strings.Join(members, ",") + "}")); !ok || err != nil {
		t.Errorf("Matches = %v, %v", ok, err)
	}
	if ok, _ := f.Matches([]byte("{" + strings.Join(members[1:], ",") + "}")); ok {
		t.Errorf("Matches without f0 = true")
	}
}

func TestCompareFolded(t *testing.T) {
	words := []string{"", "a", "A", "ab", "AB", "b", "é", "É", "ß", "SS", "İ", "i", "ǅ", "Σ", "σ", "ς", "\xff", "a\xffb", "ÀÉ", "zz"}
	for _, a := range words {
		for _, b := range words {
			want := strings.Compare(strings.ToLower(a), strings.ToLower(b))
			if got := compareFolded([]byte(a), strings.ToLower(b)); got != want {
				t.Errorf("compareFolded(%q, fold(%q)) = %d, want %d", a, b, got, want)
			}
		}
	}
}
