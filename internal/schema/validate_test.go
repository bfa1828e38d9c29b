package schema

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	s := mustParse(t, "test_collection", testSchema)
	const prefix = "json schema validation failed for field "
	cases := []struct {
		name, doc, err string
	}{
		// Accepted.
		{"empty object", `{}`, ""},
		{"every type", `{"pkey_int":1,"int_value":-9223372036854775808,"int32_value":2147483647,"string_value":"héllo",
			"bool_value":true,"double_value":-1.5e10,"bytes_value":"aGVsbG8=","b64_value":"","date_time_value":"2006-01-02T15:04:05.999999999+07:00",
			"uuid_value":"1B4E28BA-2FA1-11D2-883F-0016D3CCA427","array_value":[{"id":1,"product":"p"},{}],"int_array":[1,2,3],
			"matrix":[[1,2.5],[],[-0]],"object_value":{"name":"n","inner":{"x":-2147483648}},"free_value":{"anything":[1,{"x":null}]}}`, ""},
		{"whitespace", " \n{ \"pkey_int\" : 1 } \t\n", ""},
		{"integer into number", `{"double_value":10}`, ""},
		{"nulls pass", `{"pkey_int":null,"string_value":null,"array_value":null,"object_value":{"inner":null},"int_array":[1,null]}`, ""},
		{"unknown null member passes", `{"pkey_int":1,"extra_key":null}`, ""},
		{"maxLength counts runes", `{"string_value":"ééééé"}`, ""},
		{"bytes past the stack buffer", `{"bytes_value":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSor"}`, ""},
		{"maxLength after unescaping", `{"string_value":"\u00e9\u00e9\u00e9\u00e9\u00e9"}`, ""},
		{"escaped key", `{"pkey\u005fint":1}`, ""},
		{"lower-case date-time", `{"date_time_value":"2006-01-02t15:04:05z"}`, ""},
		{"leap second", `{"date_time_value":"1990-12-31T23:59:60Z"}`, ""},
		{"leap second with offset", `{"date_time_value":"1990-12-31T15:59:60-08:00"}`, ""},
		{"leap day", `{"date_time_value":"2000-02-29T00:00:00Z"}`, ""},
		{"escaped uuid", `{"uuid_value":"1b4e28ba\u002d2fa1-11d2-883f-0016d3cca427"}`, ""},

		// The reference's messages.
		{"integer got number", `{"pkey_int":1,"int_value":10.20}`, prefix + "'int_value' reason 'expected integer or null, but got number'"},
		{"string got number", `{"pkey_int":1,"string_value":12}`, prefix + "'string_value' reason 'expected string or null, but got number'"},
		{"bytes got number", `{"bytes_value":12.30}`, prefix + "'bytes_value' reason 'expected string or null, but got number'"},
		{"bytes not base64", `{"bytes_value":"not enough"}`, prefix + "'bytes_value' reason ''not enough' is not valid 'byte''"},
		{"date-time", `{"date_time_value":"Mon, 02 Jan 2006"}`, prefix + "'date_time_value' reason ''Mon, 02 Jan 2006' is not valid 'date-time''"},
		{"uuid", `{"uuid_value":"abc-bcd"}`, prefix + "'uuid_value' reason ''abc-bcd' is not valid 'uuid''"},
		{"extra key", `{"pkey_int":1,"extra_key":"x"}`, prefix + "'' reason 'additionalProperties 'extra_key' not allowed'"},

		// Types.
		{"integer with exponent", `{"int_value":1e3}`, prefix + "'int_value' reason 'expected integer or null, but got number'"},
		{"integer 1.0", `{"int_value":1.0}`, prefix + "'int_value' reason 'expected integer or null, but got number'"},
		{"integer got string", `{"int_value":"1"}`, prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"integer got bool", `{"int_value":true}`, prefix + "'int_value' reason 'expected integer or null, but got boolean'"},
		{"integer got array", `{"int_value":[1]}`, prefix + "'int_value' reason 'expected integer or null, but got array'"},
		{"integer got object", `{"int_value":{}}`, prefix + "'int_value' reason 'expected integer or null, but got object'"},
		{"int64 overflow", `{"int_value":9223372036854775808}`, prefix + "'int_value' reason ''9223372036854775808' is not valid 'int64''"},
		{"int32 overflow", `{"int32_value":2147483648}`, prefix + "'int32_value' reason ''2147483648' is not valid 'int32''"},
		{"int32 underflow", `{"int32_value":-2147483649}`, prefix + "'int32_value' reason ''-2147483649' is not valid 'int32''"},
		{"number got string", `{"double_value":"1.5"}`, prefix + "'double_value' reason 'expected number or null, but got string'"},
		{"number beyond float64", `{"double_value":1e400}`, prefix + "'double_value' reason ''1e400' is out of the range of a 64-bit floating point number'"},
		{"negative number beyond float64", `{"double_value":-1.5e309}`, prefix + "'double_value' reason ''-1.5e309' is out of the range of a 64-bit floating point number'"},
		{"number beyond float64 in an array", `{"matrix":[[1,2e999]]}`, prefix + "'matrix/0/1' reason ''2e999' is out of the range of a 64-bit floating point number'"},
		{"tiny number rounds to zero", `{"double_value":1e-400}`, ""},
		{"bool got number", `{"bool_value":1}`, prefix + "'bool_value' reason 'expected boolean or null, but got number'"},
		{"array got object", `{"int_array":{}}`, prefix + "'int_array' reason 'expected array or null, but got object'"},
		{"object got array", `{"object_value":[]}`, prefix + "'object_value' reason 'expected object or null, but got array'"},
		{"free object got string", `{"free_value":"x"}`, prefix + "'free_value' reason 'expected object or null, but got string'"},
		{"uuid got number", `{"uuid_value":1}`, prefix + "'uuid_value' reason 'expected string or null, but got number'"},

		// maxLength and formats.
		{"maxLength", `{"string_value":"abcdef"}`, prefix + "'string_value' reason 'length must be <= 5, but got 6'"},
		{"maxLength with escapes", `{"string_value":"\u00e9\u00e9\u00e9\n\u00e9\u00e9"}`, prefix + "'string_value' reason 'length must be <= 5, but got 6'"},
		{"maxLength runes", `{"string_value":"éééééé"}`, prefix + "'string_value' reason 'length must be <= 5, but got 6'"},
		{"base64 without padding", `{"b64_value":"aGVsbG8"}`, prefix + "'b64_value' reason ''aGVsbG8' is not valid 'byte''"},
		{"uuid too long", `{"uuid_value":"1b4e28ba-2fa1-11d2-883f-0016d3cca4270"}`, prefix + "'uuid_value' reason ''1b4e28ba-2fa1-11d2-883f-0016d3cca4270' is not valid 'uuid''"},
		{"uuid bad hex", `{"uuid_value":"1b4e28ba-2fa1-11d2-883f-0016d3cca42g"}`, prefix + "'uuid_value' reason ''1b4e28ba-2fa1-11d2-883f-0016d3cca42g' is not valid 'uuid''"},
		{"date only", `{"date_time_value":"2006-01-02"}`, prefix + "'date_time_value' reason ''2006-01-02' is not valid 'date-time''"},
		{"no offset", `{"date_time_value":"2006-01-02T15:04:05"}`, prefix + "'date_time_value' reason ''2006-01-02T15:04:05' is not valid 'date-time''"},
		{"no leap day", `{"date_time_value":"2001-02-29T00:00:00Z"}`, prefix + "'date_time_value' reason ''2001-02-29T00:00:00Z' is not valid 'date-time''"},
		{"hour 24", `{"date_time_value":"2006-01-02T24:00:00Z"}`, prefix + "'date_time_value' reason ''2006-01-02T24:00:00Z' is not valid 'date-time''"},
		{"bad leap second", `{"date_time_value":"2006-01-02T12:00:60Z"}`, prefix + "'date_time_value' reason ''2006-01-02T12:00:60Z' is not valid 'date-time''"},
		{"empty fraction", `{"date_time_value":"2006-01-02T15:04:05.Z"}`, prefix + "'date_time_value' reason ''2006-01-02T15:04:05.Z' is not valid 'date-time''"},
		{"quote in value", `{"uuid_value":"it's"}`, prefix + `'uuid_value' reason ''it\'s' is not valid 'uuid''`},

		// Nesting.
		{"nested type", `{"object_value":{"name":1}}`, prefix + "'object_value/name' reason 'expected string or null, but got number'"},
		{"deeply nested", `{"object_value":{"inner":{"x":"1"}}}`, prefix + "'object_value/inner/x' reason 'expected integer or null, but got string'"},
		{"nested int32", `{"object_value":{"inner":{"x":2147483648}}}`, prefix + "'object_value/inner/x' reason ''2147483648' is not valid 'int32''"},
		{"nested extra key", `{"object_value":{"name":"a","price":1.01}}`, prefix + "'object_value' reason 'additionalProperties 'price' not allowed'"},
		{"deep extra key", `{"object_value":{"inner":{"price":1.01}}}`, prefix + "'object_value/inner' reason 'additionalProperties 'price' not allowed'"},
		{"several extra keys", `{"a":1,"pkey_int":1,"b":null,"c":[2]}`, prefix + "'' reason 'additionalProperties 'a', 'c' not allowed'"},
		{"array item", `{"int_array":[1,2,"x"]}`, prefix + "'int_array/2' reason 'expected integer or null, but got string'"},
		{"array of objects", `{"array_value":[{"id":1},{"id":1.5}]}`, prefix + "'array_value/1/id' reason 'expected integer or null, but got number'"},
		{"array of objects extra", `{"array_value":[{"x":1}]}`, prefix + "'array_value/0' reason 'additionalProperties 'x' not allowed'"},
		{"matrix", `{"matrix":[[1],[2,"x"]]}`, prefix + "'matrix/1/1' reason 'expected number or null, but got string'"},

		// Misspelled fields: the close one after the original's message.
		{"misspelled field", `{"pkey_int":1,"strng_value":"x"}`, prefix + "'' reason 'additionalProperties 'strng_value' not allowed' (did you mean 'string_value'?)"},
		{"misspelled nested field", `{"object_value":{"nmae":"a"}}`, prefix + "'object_value' reason 'additionalProperties 'nmae' not allowed' (did you mean 'name'?)"},
		{"several misspelled", `{"int_vale":1,"x":2,"bool_valeu":true}`, prefix + "'' reason 'additionalProperties 'int_vale', 'x', 'bool_valeu' not allowed' (did you mean 'int_value' for 'int_vale', 'bool_value' for 'bool_valeu'?)"},
		{"hints for the first three only", `{"a":1,"b":2,"c":3,"int_vale":1}`, prefix + "'' reason 'additionalProperties 'a', 'b', 'c', 'int_vale' not allowed'"},

		// The document itself.
		{"duplicate key", `{"pkey_int":1,"pkey_int":2}`, prefix + "'' reason 'duplicate key 'pkey_int''"},
		{"duplicate null key", `{"pkey_int":null,"pkey_int":2}`, prefix + "'' reason 'duplicate key 'pkey_int''"},
		{"nested duplicate key", `{"object_value":{"name":"a","name":"b"}}`, prefix + "'object_value' reason 'duplicate key 'name''"},
		{"array document", `[]`, prefix + "'' reason 'expected object, but got array'"},
		{"null document", `null`, prefix + "'' reason 'expected object, but got null'"},
		{"not JSON", `{"pkey_int":1,}`, "document is not valid JSON: invalid JSON at offset 14: expected a member name in object"},
		{"trailing data", `{} x`, "document is not valid JSON: invalid JSON at offset 3: unexpected 'x' after the document"},
		{"bad value in free object", `{"free_value":{"a":tru}}`, "document is not valid JSON: invalid JSON at offset 19: invalid literal, expected true"},
		{"invalid UTF-8", "{\"string_value\":\"a\xffb\"}", "document is not valid JSON: invalid JSON at offset 18: invalid UTF-8 in string"},
		{"invalid UTF-8 in free-form object", "{\"free_value\":{\"\xc3\":1}}", "document is not valid JSON: invalid JSON at offset 16: invalid UTF-8 in string"},
		{"empty input", ``, "document is not valid JSON: invalid JSON at offset 0: unexpected end of input"},
		{"bad token for a typed field", `{"int_value":x}`, "document is not valid JSON: invalid JSON at offset 13: unexpected 'x' where a value was expected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, s.Validate([]byte(c.doc)), c.err)
		})
	}
}

func TestValidatePointerEscaping(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","properties":{"a/b":{"type":"object","properties":{"c~d":{"type":"integer"}}}}}`)
	err := s.Validate([]byte(`{"a/b":{"c~d":"x"}}`))
	wantError(t, err, "json schema validation failed for field 'a~1b/c~0d' reason 'expected integer or null, but got string'")
}

func TestValidateManyFields(t *testing.T) {
	// More fields than the duplicate check's inline bitmap holds.
	var props, doc []string
	for i := 0; i < 200; i++ {
		name := "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		props = append(props, `"`+name+`":{"type":"integer"}`)
		doc = append(doc, `"`+name+`":1`)
	}
	s := mustParse(t, "c", `{"title":"c","properties":{`+strings.Join(props, ",")+`}}`)
	wantError(t, s.Validate([]byte("{"+strings.Join(doc, ",")+"}")), "")
	last := doc[len(doc)-1]
	wantError(t, s.Validate([]byte("{"+strings.Join(doc, ",")+","+last+"}")),
		"json schema validation failed for field '' reason 'duplicate key '"+strings.Split(last, `"`)[1]+"''")
}

// ValidateValue checks what an update sets at a path with the rules and
// messages of Validate, naming the field by its pointer in the document.
func TestValidateValue(t *testing.T) {
	s := mustParse(t, "test_collection", testSchema)
	const prefix = "json schema validation failed for field "
	cases := []struct {
		name, path, value, err string
	}{
		{"string", "string_value", `"abc"`, ""},
		{"null", "string_value", `null`, ""},
		{"nested object", "object_value", `{"name":"n","inner":{"x":1}}`, ""},
		{"nested path", "object_value.inner.x", `7`, ""},
		{"array of objects", "array_value", `[{"id":1},{"product":"p"}]`, ""},
		{"free form", "free_value", `{"any":[1,"x"]}`, ""},
		{"whitespace", "int_value", " 5 ", ""},

		{"string got number", "string_value", `12`, prefix + "'string_value' reason 'expected string or null, but got number'"},
		{"maxLength", "string_value", `"toolong"`, prefix + "'string_value' reason 'length must be <= 5, but got 7'"},
		{"format", "uuid_value", `"abc"`, prefix + "'uuid_value' reason ''abc' is not valid 'uuid''"},
		{"int32", "int32_value", `2147483648`, prefix + "'int32_value' reason ''2147483648' is not valid 'int32''"},
		{"beyond float64", "double_value", `1e400`, prefix + "'double_value' reason ''1e400' is out of the range of a 64-bit floating point number'"},
		{"nested path", "object_value.inner.x", `"x"`, prefix + "'object_value/inner/x' reason 'expected integer or null, but got string'"},
		{"inside an object", "object_value", `{"inner":{"x":1.5}}`, prefix + "'object_value/inner/x' reason 'expected integer or null, but got number'"},
		{"unknown member of an object", "object_value", `{"nope":1}`, prefix + "'object_value' reason 'additionalProperties 'nope' not allowed'"},
		{"array element", "int_array", `[1,"2"]`, prefix + "'int_array/1' reason 'expected integer or null, but got string'"},
		{"object in array", "array_value", `[{"id":"x"}]`, prefix + "'array_value/0/id' reason 'expected integer or null, but got string'"},
		{"not in the schema", "nope", `1`, prefix + "'nope' reason 'field not in the schema'"},
		{"inside an array is not a path", "array_value.id", `1`, prefix + "'array_value.id' reason 'field not in the schema'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, s.ValidateValue(tc.path, []byte(tc.value)), tc.err)
		})
	}
}

// Conform takes integers given as JSON strings, as proto3's JSON mapping
// writes 64-bit integers, and stores them as the numbers they hold.
func TestConform(t *testing.T) {
	s := mustParse(t, "test_collection", testSchema)
	const prefix = "json schema validation failed for field "
	cases := []struct {
		name, doc, want, err string
	}{
		{"no strings: the same bytes", `{"pkey_int":1, "int_value":2}`, `{"pkey_int":1, "int_value":2}`, ""},
		{"key and int64 beyond float64's precision", `{"pkey_int":"9223372036854775799","int_value":"9223372036854775800"}`,
			`{"pkey_int":9223372036854775799,"int_value":9223372036854775800}`, ""},
		{"extremes", `{"int_value":"-9223372036854775808","pkey_int":"9223372036854775807"}`,
			`{"int_value":-9223372036854775808,"pkey_int":9223372036854775807}`, ""},
		{"int32", `{"int32_value":"-2147483648"}`, `{"int32_value":-2147483648}`, ""},
		{"nested", `{"object_value":{"inner":{"x":"7"}}}`, `{"object_value":{"inner":{"x":7}}}`, ""},
		{"in arrays", `{"int_array":["1",2,"-3"],"array_value":[{"id":"10","product":"12"}]}`,
			`{"int_array":[1,2,-3],"array_value":[{"id":10,"product":"12"}]}`, ""},
		{"strings of other fields stay", `{"string_value":"12","free_value":{"n":"5"},"pkey_int":"0"}`,
			`{"string_value":"12","free_value":{"n":"5"},"pkey_int":0}`, ""},

		{"not a number", `{"int_value":"x"}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"empty", `{"int_value":""}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"fraction", `{"int_value":"1.5"}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"space", `{"int_value":" 1"}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"plus sign", `{"int_value":"+1"}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"leading zero", `{"int_value":"01"}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"escaped", `{"int_value":"\u0031"}`, "", prefix + "'int_value' reason 'expected integer or null, but got string'"},
		{"beyond int64", `{"int_value":"9223372036854775808"}`, "", prefix + "'int_value' reason ''9223372036854775808' is not valid 'int64''"},
		{"beyond int32", `{"int32_value":"2147483648"}`, "", prefix + "'int32_value' reason ''2147483648' is not valid 'int32''"},
		{"in an array", `{"int_array":["1","x"]}`, "", prefix + "'int_array/1' reason 'expected integer or null, but got string'"},
		{"string for a number field", `{"double_value":"1"}`, "", prefix + "'double_value' reason 'expected number or null, but got string'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.Conform([]byte(c.doc))
			wantError(t, err, c.err)
			if err == nil {
				if string(got) != c.want {
					t.Errorf("Conform(%s) = %s, want %s", c.doc, got, c.want)
				}
				if err := s.Validate(got); err != nil {
					t.Errorf("the conformed document %s does not validate: %v", got, err)
				}
			}
		})
	}
	// Validate, which checks what is stored, still refuses the strings.
	wantError(t, s.Validate([]byte(`{"int_value":"1"}`)), prefix+"'int_value' reason 'expected integer or null, but got string'")
}

func TestConformValue(t *testing.T) {
	s := mustParse(t, "test_collection", testSchema)
	for _, c := range []struct{ path, value, want, err string }{
		{"int_value", `"9223372036854775800"`, `9223372036854775800`, ""},
		{"int_value", `5`, `5`, ""},
		{"object_value", `{"name":"n","inner":{"x":"-1"}}`, `{"name":"n","inner":{"x":-1}}`, ""},
		{"object_value.inner.x", `"3"`, `3`, ""},
		{"int_array", `["1","2"]`, `[1,2]`, ""},
		{"int_value", `"1e3"`, "", "json schema validation failed for field 'int_value' reason 'expected integer or null, but got string'"},
	} {
		got, err := s.ConformValue(c.path, []byte(c.value))
		wantError(t, err, c.err)
		if err == nil && string(got) != c.want {
			t.Errorf("ConformValue(%s, %s) = %s, want %s", c.path, c.value, got, c.want)
		}
	}
}

// The original's rules for required, nullable types and maxItems.
func TestValidateRequired(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","properties":{
		"pkey_int":{"type":"integer"},
		"string_value":{"type":"string"},
		"nullable":{"type":["null","string"]},
		"with_default":{"type":"string","default":"x"},
		"object_value":{"type":"object","properties":{"name":{"type":"string"},"other":{"type":"integer"}},"required":["name"]},
		"array_value":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"product":{"type":"string"}},"required":["id"]}},
		"empty_array":{"type":"array","maxItems":0},
		"two":{"type":"array","items":{"type":"integer"},"maxItems":2}
	},"primary_key":["pkey_int"],"required":["string_value","nullable","with_default"]}`)
	const prefix = "json schema validation failed for field "
	cases := []struct {
		name, doc, err string
	}{
		{"all there", `{"pkey_int":1,"string_value":"a","nullable":null,"object_value":{"name":"n"},"array_value":[{"id":1}],"empty_array":[],"two":[1,2]}`, ""},
		{"missing at the top", `{"pkey_int":1,"object_value":{"name":"bbb"}}`, prefix + "'' reason 'missing properties: 'string_value', 'nullable''"},
		{"required null", `{"pkey_int":1,"string_value":null,"nullable":"x"}`, prefix + "'string_value' reason 'expected string, but got null'"},
		{"required wrong type", `{"pkey_int":1,"string_value":1,"nullable":"x"}`, prefix + "'string_value' reason 'expected string, but got number'"},
		{"nullable required wrong type", `{"pkey_int":1,"string_value":"a","nullable":1}`, prefix + "'nullable' reason 'expected string or null, but got number'"},
		{"missing in an object", `{"string_value":"a","nullable":null,"object_value":{"other":1}}`, prefix + "'object_value' reason 'missing properties: 'name''"},
		{"missing in an array's object", `{"string_value":"a","nullable":null,"array_value":[{"id":1},{"product":"foo"}]}`, prefix + "'array_value/1' reason 'missing properties: 'id''"},
		{"element not null-able", `{"string_value":"a","nullable":null,"two":["x"]}`, prefix + "'two/0' reason 'expected integer or null, but got string'"},
		{"empty array holds something", `{"string_value":"a","nullable":null,"empty_array":[1,1]}`, prefix + "'empty_array' reason 'maximum 0 items required, but found 2 items'"},
		{"past maxItems", `{"string_value":"a","nullable":null,"two":[1,2,3]}`, prefix + "'two' reason 'maximum 2 items required, but found 3 items'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, s.Validate([]byte(c.doc)), c.err)
		})
	}
	wantError(t, s.ValidateValue("string_value", []byte("null")), prefix+"'string_value' reason 'expected string, but got null'")
	wantError(t, s.ValidateValue("object_value.other", []byte("null")), "")
}

// ConformOpen and ValidateOpen take members the schema does not know, at
// any depth, and check the rest as Conform and Validate do.
func TestValidateOpen(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","properties":{"id":{"type":"integer"},"o":{"type":"object","properties":{"a":{"type":"integer"}}}},"primary_key":["id"]}`)
	doc := []byte(`{"id":"1","x":{"y":[1]},"o":{"a":2,"b":"c"}}`)
	if _, err := s.Conform(doc); err == nil {
		t.Fatal("Conform took unknown members")
	}
	got, err := s.ConformOpen(doc)
	if err != nil || string(got) != `{"id":1,"x":{"y":[1]},"o":{"a":2,"b":"c"}}` {
		t.Fatalf("ConformOpen = %s, %v", got, err)
	}
	if err := s.ValidateOpen(got); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.ValidateOpen([]byte(`{"id":1,"x":1,"o":{"a":"2"}}`)), "json schema validation failed for field 'o/a' reason 'expected integer or null, but got string'")
	wantError(t, s.ValidateOpen([]byte(`{"id":1,"x":[}`)), "document is not valid JSON: invalid JSON at offset 13: unexpected '}' where a value was expected")
}

// An update may set a path inside a free-form object to any value.
func TestValidateValueInFreeForm(t *testing.T) {
	s := mustParse(t, "c", `{"title":"c","properties":{"id":{"type":"integer"},"d":{"type":"object","properties":{}},"o":{"type":"object","properties":{"a":{"type":"integer"}}}},"primary_key":["id"]}`)
	for _, v := range []string{`"x"`, `1`, `{"y":[null]}`} {
		if err := s.ValidateValue("d.f1", []byte(v)); err != nil {
			t.Errorf("d.f1 = %s: %v", v, err)
		}
	}
	wantError(t, s.ValidateValue("d.f1", []byte(`{`)), "value of 'd.f1' is not valid JSON: invalid JSON at offset 1: expected a member name in object")
	wantError(t, s.ValidateValue("o.b", []byte(`1`)), "json schema validation failed for field 'o.b' reason 'field not in the schema'")
}
