package filter

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

const testSchema = `{"title":"c","properties":{
	"pkey_int":{"type":"integer"},
	"int_value":{"type":"integer"},
	"int32_value":{"type":"integer","format":"int32"},
	"string_value":{"type":"string"},
	"bool_value":{"type":"boolean"},
	"double_value":{"type":"number"},
	"bytes_value":{"type":"string","format":"byte"},
	"date_time_value":{"type":"string","format":"date-time"},
	"uuid_value":{"type":"string","format":"uuid"},
	"array_value":{"type":"array","items":{"type":"integer"}},
	"object_value":{"type":"object","properties":{"nested_str":{"type":"string"},"inner":{"type":"object","properties":{"x":{"type":"integer"}}}}},
	"free":{"type":"object"}
},"primary_key":["pkey_int"]}`

func testFields(t testing.TB) *schema.Schema {
	t.Helper()
	return mustSchema(t, testSchema)
}

func mustSchema(t testing.TB, raw string) *schema.Schema {
	t.Helper()
	s, err := schema.Parse("c", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantError(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want *Error %q", err, err, want)
	}
	if fe.Code != CodeInvalidArgument || fe.Message != want {
		t.Fatalf("error = %s %q\n        want %s %q", fe.Code, fe.Message, CodeInvalidArgument, want)
	}
}

func cmp(path string, typ schema.Type, op Op, v any) *Comparison {
	return &Comparison{Path: path, Type: typ, Op: op, Value: v}
}

func ci(c *Comparison) *Comparison { c.CaseInsensitive = true; return c }

// strip clears the unexported fields so trees compare with reflect.DeepEqual.
func strip(n Node) Node {
	switch n := n.(type) {
	case *And:
		out := &And{}
		for _, c := range n.Nodes {
			out.Nodes = append(out.Nodes, strip(c))
		}
		return out
	case *Or:
		out := &Or{}
		for _, c := range n.Nodes {
			out.Nodes = append(out.Nodes, strip(c))
		}
		return out
	case *Comparison:
		c := *n
		c.slot, c.raw, c.folded = 0, nil, ""
		return &c
	case *Elements:
		out := &Elements{Path: n.Path}
		for _, c := range n.Comparisons {
			out.Comparisons = append(out.Comparisons, strip(c).(*Comparison))
		}
		return out
	case *ArrayEquals:
		out := &ArrayEquals{Path: n.Path}
		for _, c := range n.Elements {
			out.Elements = append(out.Elements, strip(c).(*Comparison))
		}
		return out
	}
	return n
}

func elements(path string, cs ...*Comparison) *Elements {
	return &Elements{Path: path, Comparisons: cs}
}

func TestParseTree(t *testing.T) {
	s := testFields(t)
	cases := []struct {
		name, filter string
		collation    Collation
		want         Node
	}{
		{"empty", `{}`, Collation{}, nil},
		{"equality", `{"pkey_int":1}`, Collation{}, cmp("pkey_int", schema.Int64, Eq, int64(1))},
		{"operators", `{"int_value":{"$gt":1,"$lte":9}}`, Collation{},
			&And{Nodes: []Node{cmp("int_value", schema.Int64, Gt, int64(1)), cmp("int_value", schema.Int64, Lte, int64(9))}}},
		{"fields are ANDed", `{"int_value":{"$gte":1},"string_value":"a","bool_value":false}`, Collation{},
			&And{Nodes: []Node{cmp("int_value", schema.Int64, Gte, int64(1)), cmp("string_value", schema.String, Eq, "a"), cmp("bool_value", schema.Bool, Eq, false)}}},
		{"and", `{"$and":[{"int_value":{"$lt":1}},{"int32_value":{"$eq":2}}]}`, Collation{},
			&And{Nodes: []Node{cmp("int_value", schema.Int64, Lt, int64(1)), cmp("int32_value", schema.Int32, Eq, int64(2))}}},
		{"nested or", `{"$or":[{"pkey_int":1},{"$and":[{"double_value":1},{"double_value":{"$lt":2.5}}]}]}`, Collation{},
			&Or{Nodes: []Node{cmp("pkey_int", schema.Int64, Eq, int64(1)),
				&And{Nodes: []Node{cmp("double_value", schema.Number, Eq, 1.0), cmp("double_value", schema.Number, Lt, 2.5)}}}}},
		{"dot path", `{"object_value.nested_str":"bar","object_value.inner.x":{"$gt":-3}}`, Collation{},
			&And{Nodes: []Node{cmp("object_value.nested_str", schema.String, Eq, "bar"), cmp("object_value.inner.x", schema.Int64, Gt, int64(-3))}}},
		{"typed values", `{"bytes_value":"aGk=","date_time_value":"2022-01-01T00:00:00Z","uuid_value":"u"}`, Collation{},
			&And{Nodes: []Node{cmp("bytes_value", schema.Bytes, Eq, []byte("hi")), cmp("date_time_value", schema.DateTime, Eq, "2022-01-01T00:00:00Z"), cmp("uuid_value", schema.UUID, Eq, "u")}}},
		{"integer from string", `{"int_value":"5"}`, Collation{}, cmp("int_value", schema.Int64, Eq, int64(5))},
		{"string from number", `{"string_value":5}`, Collation{}, cmp("string_value", schema.String, Eq, "5")},
		{"integer into number", `{"double_value":{"$gt":3}}`, Collation{}, cmp("double_value", schema.Number, Gt, 3.0)},
		{"escapes", `{"string_value":"a\"\u00e9"}`, Collation{}, cmp("string_value", schema.String, Eq, "a\"é")},
		{"escaped field name", `{"string\u005fvalue":"x"}`, Collation{}, cmp("string_value", schema.String, Eq, "x")},
		{"request collation", `{"string_value":"Ab","uuid_value":"U"}`, Collation{Case: "ci"},
			&And{Nodes: []Node{ci(cmp("string_value", schema.String, Eq, "Ab")), cmp("uuid_value", schema.UUID, Eq, "U")}}},
		{"field collation", `{"string_value":{"$eq":"Ab","collation":{"case":"ci"}}}`, Collation{}, ci(cmp("string_value", schema.String, Eq, "Ab"))},
		{"collation before operator", `{"string_value":{"collation":{"case":"ci"},"$gt":"Ab"}}`, Collation{}, ci(cmp("string_value", schema.String, Gt, "Ab"))},
		{"field collation overrides", `{"string_value":{"$eq":"Ab","collation":{"case":"cs"}}}`, Collation{Case: "ci"}, cmp("string_value", schema.String, Eq, "Ab")},
		{"cs request collation", `{"string_value":"Ab"}`, Collation{Case: "cs"}, cmp("string_value", schema.String, Eq, "Ab")},
		{"bool from string", `{"bool_value":"true"}`, Collation{}, cmp("bool_value", schema.Bool, Eq, true)},

		// Arrays of scalars: a value is compared with the elements, an
		// array with the whole array.
		{"array contains", `{"array_value":3}`, Collation{}, elements("array_value", cmp("array_value", schema.Int64, Eq, int64(3)))},
		{"array element range", `{"array_value":{"$gt":1,"$lte":"5"}}`, Collation{},
			elements("array_value", cmp("array_value", schema.Int64, Gt, int64(1)), cmp("array_value", schema.Int64, Lte, int64(5)))},
		{"array equals", `{"array_value":[1,"2"]}`, Collation{}, &ArrayEquals{Path: "array_value",
			Elements: []*Comparison{cmp("array_value", schema.Int64, Eq, int64(1)), cmp("array_value", schema.Int64, Eq, int64(2))}}},
		{"array equals empty", `{"array_value":[]}`, Collation{}, &ArrayEquals{Path: "array_value"}},
		{"array $eq array", `{"array_value":{"$eq":[4]}}`, Collation{}, &ArrayEquals{Path: "array_value",
			Elements: []*Comparison{cmp("array_value", schema.Int64, Eq, int64(4))}}},
		{"array $eq array and a range", `{"array_value":{"$eq":[4],"$gt":3}}`, Collation{}, &And{Nodes: []Node{
			&ArrayEquals{Path: "array_value", Elements: []*Comparison{cmp("array_value", schema.Int64, Eq, int64(4))}},
			elements("array_value", cmp("array_value", schema.Int64, Gt, int64(3)))}}},
		{"array and scalar", `{"array_value":1,"int_value":2}`, Collation{}, &And{Nodes: []Node{
			elements("array_value", cmp("array_value", schema.Int64, Eq, int64(1))), cmp("int_value", schema.Int64, Eq, int64(2))}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.filter), s, c.collation)
			if err != nil {
				t.Fatal(err)
			}
			if got := strip(f.Root); !reflect.DeepEqual(got, c.want) {
				t.Errorf("tree = %s\nwant   %s", show(got), show(c.want))
			}
			if f.MatchesAll() != (c.want == nil) {
				t.Errorf("MatchesAll = %v", f.MatchesAll())
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	s := testFields(t)
	cases := []struct {
		name, filter string
		collation    Collation
		err          string
	}{
		{"empty input", ``, Collation{}, "filter is a required field"},
		{"null", ` null `, Collation{}, "filter is a required field"},
		{"not JSON", `{"a":`, Collation{}, "filter is not valid JSON: invalid JSON at offset 5: unexpected end of input"},
		{"not an object", `[{"pkey_int":1}]`, Collation{}, "filter must be a JSON object"},
		{"unknown field", `{"x":1}`, Collation{}, "querying on non schema field 'x'"},
		{"unknown nested field", `{"object_value.nope":1}`, Collation{}, "querying on non schema field 'object_value.nope'"},
		{"inside free-form object", `{"free.a":1}`, Collation{}, "querying on non schema field 'free.a'"},
		{"inside array", `{"array_value.0":1}`, Collation{}, "querying on non schema field 'array_value.0'"},
		{"unknown field in and", `{"$and":[{"pkey_int":1},{"x":1}]}`, Collation{}, "querying on non schema field 'x'"},
		{"fraction for integer", `{"int_value":1.5}`, Collation{}, "unsupported value type: field 'int_value' takes an integer, not 1.5"},
		{"exponent for integer", `{"int_value":{"$gt":1e3}}`, Collation{}, "unsupported value type: field 'int_value' takes an integer, not 1e3"},
		{"integer overflow", `{"int_value":9223372036854775808}`, Collation{}, "unsupported value type: field 'int_value' takes an integer, not 9223372036854775808"},
		{"string for integer", `{"int_value":"x"}`, Collation{}, `unsupported value type: field 'int_value' takes an integer, not "x"`},
		{"bool for integer", `{"int32_value":true}`, Collation{}, "unsupported value type: field 'int32_value' takes an integer, not true"},
		{"string for number", `{"double_value":"x"}`, Collation{}, `unsupported value type: field 'double_value' takes a number, not "x"`},
		{"infinity for number", `{"double_value":"Inf"}`, Collation{}, `unsupported value type: field 'double_value' takes a number, not "Inf"`},
		{"number for bool", `{"bool_value":2}`, Collation{}, "unsupported value type: field 'bool_value' takes true or false, not 2"},
		{"bad base64", `{"bytes_value":"not base64"}`, Collation{}, `unsupported value type: field 'bytes_value' takes a base64 string, not "not base64"`},
		{"array value", `{"string_value":["a"]}`, Collation{}, `unsupported value type: field 'string_value' takes a string, not ["a"]`},
		{"object operand", `{"string_value":{"$eq":{}}}`, Collation{}, "unsupported value type: field 'string_value' takes a string, not {}"},
		{"array field with a string", `{"array_value":"x"}`, Collation{}, `unsupported value type: field 'array_value' takes an integer or an array of integers, not "x"`},
		{"array field with an ordered array", `{"array_value":{"$gt":[1]}}`, Collation{}, "unsupported value type: array field 'array_value' compares with an array only by equality, not with [1]"},
		{"array field with null element", `{"array_value":[1,null]}`, Collation{}, "unsupported value type: field 'array_value' takes an integer or an array of integers, not null"},
		{"array field with nested array", `{"array_value":[[1]]}`, Collation{}, "unsupported value type: field 'array_value' takes an integer or an array of integers, not [1]"},
		{"array field with object", `{"array_value":{"x":1}}`, Collation{}, "unsupported operator 'x'"},
		{"object field", `{"object_value":{"nested_str":"a"}}`, Collation{}, "unsupported value type: field 'object_value' is an object, which a filter cannot compare; compare its fields, as 'object_value.nested_str'"},
		{"free-form field", `{"free":{}}`, Collation{}, "unsupported value type: field 'free' is a free-form object, which a filter cannot compare"},
		{"$nin", `{"int_value":{"$nin":[1]}}`, Collation{}, "unsupported operator '$nin'"},
		{"plain key among operators", `{"string_value":{"$eq":"a","x":1}}`, Collation{}, "unsupported operator 'x'"},
		{"top-level $not", `{"$not":{"int_value":1}}`, Collation{}, "unsupported operator '$not'"},
		{"top-level $ name", `{"$weird":1}`, Collation{}, "unsupported operator '$weird'"},
		{"no operator", `{"string_value":{}}`, Collation{}, "filter on field 'string_value' needs one of the operators $eq, $gt, $gte, $lt, $lte, $ne, $in, $exists, $not, $contains, $regex"},
		{"only collation", `{"string_value":{"collation":{"case":"ci"}}}`, Collation{}, "filter on field 'string_value' needs one of the operators $eq, $gt, $gte, $lt, $lte, $ne, $in, $exists, $not, $contains, $regex"},
		{"duplicate operator", `{"int_value":{"$gt":1,"$gt":2}}`, Collation{}, "duplicate filter '$gt'"},
		{"duplicate field", `{"int_value":1,"int_value":2}`, Collation{}, "duplicate filter 'int_value'"},
		{"duplicate and", `{"$and":[{"int_value":1},{"int_value":2}],"$and":[{"int_value":1},{"int_value":2}]}`, Collation{}, "duplicate filter '$and'"},
		{"and of one", `{"$and":[{"int_value":1}]}`, Collation{}, "and filter needs minimum 2 filters"},
		{"and of none", `{"$and":[]}`, Collation{}, "and filter needs minimum 2 filters"},
		{"or of one", `{"$or":[{"int_value":1}]}`, Collation{}, "or filter needs minimum 2 filters"},
		{"nested or of one", `{"$and":[{"int_value":1},{"$or":[{"int_value":1}]}]}`, Collation{}, "or filter needs minimum 2 filters"},
		{"and not array", `{"$and":{"int_value":1}}`, Collation{}, "and filter needs an array of filters"},
		{"or element not object", `{"$or":[1,2]}`, Collation{}, "or filter needs an array of filters"},
		{"empty filter in or", `{"$or":[{},{"int_value":1}]}`, Collation{}, "or filter does not accept an empty filter"},
		{"request collation", `{"string_value":"a"}`, Collation{Case: "xx"}, "collation 'xx' is not supported"},
		{"request collation on empty filter", `{}`, Collation{Case: "CI"}, "collation 'CI' is not supported"},
		{"field collation", `{"string_value":{"$eq":"a","collation":{"case":"xx"}}}`, Collation{}, "collation 'xx' is not supported"},
		{"field collation not object", `{"string_value":{"$eq":"a","collation":"ci"}}`, Collation{}, `collation '"ci"' is not supported`},
		{"field collation case not string", `{"string_value":{"$eq":"a","collation":{"case":1}}}`, Collation{}, "collation '1' is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.filter), s, c.collation)
			wantError(t, err, c.err)
		})
	}
}

func TestZeroFilter(t *testing.T) {
	var f Filter
	if ok, err := f.Matches([]byte(`{"a":1}`)); !ok || err != nil {
		t.Errorf("zero Filter: %v, %v", ok, err)
	}
	if !f.MatchesAll() || f.Comparisons() != nil {
		t.Errorf("zero Filter is not empty")
	}
}

func TestComparisons(t *testing.T) {
	f, err := Parse([]byte(`{"$or":[{"pkey_int":1},{"$and":[{"int_value":2},{"string_value":"x"}]}],"bool_value":true}`), testFields(t), Collation{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range f.Comparisons() {
		paths = append(paths, c.Path)
	}
	if !reflect.DeepEqual(paths, []string{"pkey_int", "int_value", "string_value", "bool_value"}) {
		t.Errorf("Comparisons = %v", paths)
	}
}

// nestedOr is a filter of $or nested depth deep.
func nestedOr(depth int) string {
	return strings.Repeat(`{"$or":[{"pkey_int":1},`, depth) + `{"pkey_int":2}` + strings.Repeat(`]}`, depth)
}

// andOf is an $and of n comparisons.
func andOf(n int) string {
	var b strings.Builder
	b.WriteString(`{"$and":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"int_value":%d}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestParseLimits(t *testing.T) {
	s := testFields(t)
	cases := []struct {
		name, filter, err string
	}{
		{"comparisons at the limit", andOf(MaxComparisons), ""},
		{"comparisons past the limit", andOf(MaxComparisons + 1), "filter has more than 1000 comparisons"},
		{"operators count", `{"$and":[` + strings.Repeat(`{"int_value":{"$gt":1,"$lt":5}},`, MaxComparisons/2) + `{"pkey_int":1}]}`, "filter has more than 1000 comparisons"},
		{"far past the limit", andOf(100_000), "filter has more than 1000 comparisons"},
		{"depth at the limit", nestedOr(MaxDepth), ""},
		{"depth past the limit", nestedOr(MaxDepth + 1), "filter nests $and and $or more than 32 deep"},
		{"far past the depth", nestedOr(4990), "filter nests $and and $or more than 32 deep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.filter), s, Collation{})
			wantError(t, err, c.err)
		})
	}
}

// A deep filter parses in time linear in its size: each level is read
// once, not once per level above it.
func BenchmarkParseDeep(b *testing.B) {
	s := testFields(b)
	raw := []byte(nestedOr(MaxDepth))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw, s, Collation{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLimit parses a filter of MaxComparisons comparisons.
func BenchmarkParseLimit(b *testing.B) {
	s := testFields(b)
	raw := []byte(andOf(MaxComparisons))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw, s, Collation{}); err != nil {
			b.Fatal(err)
		}
	}
}
