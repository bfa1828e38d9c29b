package filter

import (
	"strings"
	"testing"
)

// benchDoc is a document of about 1 KB for testSchema, with the compared
// fields spread through it.
var benchDoc = []byte(`{"pkey_int":1234567,"int_value":-42,"int32_value":77,"string_value":"Hello World, this is a string",` +
	`"bytes_value":"aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=","date_time_value":"2022-09-16T17:42:34.123456789Z",` +
	`"uuid_value":"1b4e28ba-2fa1-11d2-883f-0016d3cca427","array_value":[` + strings.Repeat(`1234567,`, 60) + `1],` +
	`"free":{"notes":["` + strings.Repeat("x", 300) + `",{"deep":[1,2,3]}]},` +
	`"object_value":{"nested_str":"bar","inner":{"x":12}},"bool_value":true,"double_value":3.14159}`)

const benchFilter = `{"$or":[{"pkey_int":{"$gte":1000,"$lt":2000}},{"$and":[{"string_value":{"$eq":"hello world, this is a string","collation":{"case":"ci"}}},{"object_value.inner.x":{"$gt":10}}]}],"double_value":{"$lt":4}}`

func BenchmarkParse(b *testing.B) {
	s := testFields(b)
	raw := []byte(benchFilter)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw, s, Collation{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchMatches(b *testing.B, filter string, want bool) {
	f, err := Parse([]byte(filter), testFields(b), Collation{})
	if err != nil {
		b.Fatal(err)
	}
	if ok, err := f.Matches(benchDoc); ok != want || err != nil {
		b.Fatalf("Matches = %v, %v", ok, err)
	}
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		f.Matches(benchDoc)
	}
}

// BenchmarkMatches evaluates a filter of four comparisons, case-insensitive
// and nested ones included, whose last field is at the end of the document.
func BenchmarkMatches(b *testing.B) { benchMatches(b, benchFilter, true) }

// BenchmarkMatchesFirstField stops reading after the first member.
func BenchmarkMatchesFirstField(b *testing.B) { benchMatches(b, `{"pkey_int":1234567}`, true) }

// BenchmarkMatchesMissingField reads the whole document and finds nothing.
func BenchmarkMatchesMissingField(b *testing.B) {
	benchMatches(b, `{"object_value.nested_str":"x","uuid_value":{"$gt":"z"}}`, false)
}
