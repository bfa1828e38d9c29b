package apitest

import (
	"testing"
)

// refusal is a request that must be answered with an error and change
// nothing.
type refusal struct {
	name, method, path, body string
	status                   int
	code, message            string
}

// wantRefused runs each request and checks its error and that the data
// did not change.
func wantRefused(t *testing.T, c *client, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := c.snapshot(t)
			wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
			if after := c.snapshot(t); after != before {
				t.Errorf("the request changed the data:\nbefore %.2000s\nafter  %.2000s", before, after)
			}
		})
	}
}

// Property names starting with '$' are the filter language's: a field
// named so could be stored but never queried, so the schema refuses it,
// at any depth.
func TestSchemaRefusesReservedFieldNames(t *testing.T) {
	create := collPath("db1", "things", "createOrUpdate")
	const why = ": a field name must not start with '$', which filters reserve for operators"
	cases := []refusal{
		{"top level", "POST", create, `{"schema":{"title":"things","properties":{"id":{"type":"integer"},"$and":{"type":"string"}}}}`,
			400, "INVALID_ARGUMENT", "invalid field name '$and'" + why},
		{"nested object", "POST", create, `{"schema":{"title":"things","properties":{"id":{"type":"integer"},"o":{"type":"object","properties":{"$gt":{"type":"integer"}}}}}}`,
			400, "INVALID_ARGUMENT", "invalid field name '$gt' in field 'o'" + why},
		{"array items", "POST", create, `{"schema":{"title":"things","properties":{"id":{"type":"integer"},"a":{"type":"array","items":{"type":"object","properties":{"$price":{"type":"number"}}}}}}}`,
			400, "INVALID_ARGUMENT", "invalid field name '$price' in field 'a[]'" + why},
		{"schema change of an existing collection", "POST", collPath("db1", "users", "createOrUpdate"),
			`{"schema":{"title":"users","properties":{"id":{"type":"integer"},"$x":{"type":"string"}},"primary_key":["id"]}}`,
			400, "INVALID_ARGUMENT", "invalid field name '$x'" + why},
	}
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		wantRefused(t, c, cases)
		// A '$' elsewhere in a name is an ordinary character.
		c.createColl(t, "db1", "prices", `{"title":"prices","properties":{"id":{"type":"integer"},"usd$":{"type":"number"}}}`)
		c.insert(t, "db1", "prices", `{"id":1,"usd$":2.5}`)
		equalStrings(t, "filter on 'usd$'", c.docs(t, "db1", "prices", `{"filter":{"usd$":2.5}}`), []string{`{"id":1,"usd$":2.5}`})
	})
}

// An update's $set values are validated against the schema before any
// document is read, as the original did: a bad value is refused with the
// message a document carrying it would get, whether the filter matches
// documents or none.
func TestUpdateValidatesSetBeforeReading(t *testing.T) {
	update := docPath("db1", "typed", "update")
	const prefix = "json schema validation failed for field "
	type row struct{ name, set, message string }
	rows := []row{
		{"string got number", `{"string_value":1}`, prefix + "'string_value' reason 'expected string, but got number'"},
		{"integer got fraction", `{"n":1.5}`, prefix + "'n' reason 'expected integer, but got number'"},
		{"int32 overflow", `{"small":2147483648}`, prefix + "'small' reason ''2147483648' is not valid 'int32''"},
		{"number beyond float64", `{"score":1e400}`, prefix + "'score' reason ''1e400' is out of the range of a 64-bit floating point number'"},
		{"maxLength", `{"code":"abcdef"}`, prefix + "'code' reason 'length must be <= 5, but got 6'"},
		{"uuid format", `{"ref":"not-a-uuid"}`, prefix + "'ref' reason ''not-a-uuid' is not valid 'uuid''"},
		{"date-time format", `{"at":"yesterday"}`, prefix + "'at' reason ''yesterday' is not valid 'date-time''"},
		{"base64", `{"blob":"!!"}`, prefix + "'blob' reason ''!!' is not valid 'byte''"},
		{"nested path", `{"address.zip":"x"}`, prefix + "'address/zip' reason 'expected integer, but got string'"},
		{"inside an object value", `{"address":{"city":5}}`, prefix + "'address/city' reason 'expected string, but got number'"},
		{"unknown member of an object value", `{"address":{"street":"x"}}`, prefix + "'address' reason 'additionalProperties 'street' not allowed'"},
		{"array element", `{"tags":["a",2]}`, prefix + "'tags/1' reason 'expected string, but got number'"},
		{"array got object", `{"tags":{"a":1}}`, prefix + "'tags' reason 'expected array, but got object'"},
		{"later field of several", `{"string_value":"ok","n":"x"}`, prefix + "'n' reason 'expected integer, but got string'"},
		{"field not in the schema", `{"nope":1}`, prefix + "'nope' reason 'field not in the schema'"},
	}
	var cases []refusal
	for _, r := range rows {
		for _, f := range []struct{ what, filter string }{{"matching nothing", `{"id":99}`}, {"matching a document", `{"id":1}`}} {
			cases = append(cases, refusal{r.name + ", " + f.what, "PUT", update, `{"filter":` + f.filter + `,"fields":{"$set":` + r.set + `}}`,
				400, "INVALID_ARGUMENT", r.message})
		}
	}
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "typed", `{"title":"typed","properties":{"id":{"type":"integer"},"string_value":{"type":"string"},
			"n":{"type":"integer"},"small":{"type":"integer","format":"int32"},"score":{"type":"number"},"code":{"type":"string","maxLength":5},
			"ref":{"type":"string","format":"uuid"},"at":{"type":"string","format":"date-time"},"blob":{"type":"string","format":"byte"},
			"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"integer"}}},
			"tags":{"type":"array","items":{"type":"string"}}},"primary_key":["id"]}`)
		c.insert(t, "db1", "typed", `{"id":1,"string_value":"a"}`)
		wantRefused(t, c, cases)
		// Valid values still update, nested ones included.
		c.ok(t, "PUT", update, `{"filter":{"id":1},"fields":{"$set":{"code":"abcde","address.zip":5,"tags":["x"],"score":null}}}`)
		equalStrings(t, "after a valid update", c.all(t, "db1", "typed"),
			[]string{`{"id":1,"string_value":"a","code":"abcde","address":{"zip":5},"tags":["x"],"score":null}`})
	})
}
