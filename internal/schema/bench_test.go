package schema

import (
	"strings"
	"testing"
)

// benchDoc is a document of about 1 KB for testSchema.
var benchDoc = []byte(`{"pkey_int":1234567,"int_value":-42,"int32_value":77,"string_value":"héllo","bool_value":true,` +
	`"double_value":3.14159,"bytes_value":"aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=","b64_value":"AAEC",` +
	`"date_time_value":"2022-09-16T17:42:34.123456789Z","uuid_value":"1b4e28ba-2fa1-11d2-883f-0016d3cca427",` +
	`"array_value":[` + strings.Repeat(`{"id":1,"product":"a product with a fairly long name"},`, 8) + `{"id":2,"product":"last"}],` +
	`"int_array":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"matrix":[[1.5,2.5],[3.5]],` +
	`"object_value":{"name":"nested name","inner":{"x":12}},"free_value":{"anything":["goes",1,true,null,{"deep":"x"}]}}`)

func BenchmarkValidate(b *testing.B) {
	s := mustParse(b, "test_collection", testSchema)
	if err := s.Validate(benchDoc); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtractKey(b *testing.B) {
	s := mustParse(b, "test_collection", testSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ExtractKey(benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	raw := []byte(testSchema)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("test_collection", raw); err != nil {
			b.Fatal(err)
		}
	}
}
