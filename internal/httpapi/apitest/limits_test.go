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
