package apitest

import (
	"strings"
	"testing"
)

// Bad input is answered with a 4xx that names what is wrong, and changes
// nothing: never a 500, never a request half-applied or silently altered.
func TestBadInputAnsweredAndNothingChanged(t *testing.T) {
	users := func(op string) string { return docPath("db1", "users", op) }
	const prefix = "json schema validation failed for field "
	cases := []struct {
		name, method, path, body string
		status                   int
		code, message            string
	}{
		// Numbers beyond float64's range name their field.
		{"insert: number beyond float64", "POST", users("insert"), `{"documents":[{"id":10,"score":1e400}]}`,
			400, "INVALID_ARGUMENT", prefix + "'score' reason ''1e400' is out of the range of a 64-bit floating point number'"},
		{"replace: number beyond float64", "PUT", users("replace"), `{"documents":[{"id":1,"score":-2e308}]}`,
			400, "INVALID_ARGUMENT", prefix + "'score' reason ''-2e308' is out of the range of a 64-bit floating point number'"},
		{"update: $set of a number beyond float64", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":{"score":1e400}}}`,
			400, "INVALID_ARGUMENT", prefix + "'score' reason ''1e400' is out of the range of a 64-bit floating point number'"},

		// A member given twice in a request is refused, not resolved.
		{"insert: documents twice", "POST", users("insert"), `{"documents":[{"id":6}],"documents":[{"id":7}]}`,
			400, "INVALID_ARGUMENT", "member 'documents' is given twice in the request"},
		{"update: filter twice", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":{"name":"x"}},"filter":{"id":2}}`,
			400, "INVALID_ARGUMENT", "member 'filter' is given twice in the request"},
		{"delete: filter twice, escaped", "DELETE", users("delete"), `{"filter":{"id":1},"filt\u0065r":{"id":2}}`,
			400, "INVALID_ARGUMENT", "member 'filter' is given twice in the request"},
		{"create collection: schema twice", "POST", collPath("db1", "other", "createOrUpdate"),
			`{"schema":{"title":"other","properties":{"id":{"type":"integer"}}},"schema":{"title":"other","properties":{"id":{"type":"string"}}}}`,
			400, "INVALID_ARGUMENT", "member 'schema' is given twice in the request"},
		{"read: an option twice", "POST", users("read"), `{"filter":{},"options":{"limit":1,"limit":2}}`,
			400, "INVALID_ARGUMENT", "member 'options.limit' is given twice in the request"},
	}
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"a","score":1.5}`, `{"id":2,"name":"b"}`)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := c.snapshot(t)
				wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
				if after := c.snapshot(t); after != before {
					t.Errorf("the request changed the data:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	})
}

// 64-bit integer options may come as JSON strings, as proto3's JSON
// mapping writes them and as the original's gateway accepted them.
func TestInt64OptionsAsStrings(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1}`, `{"id":2}`, `{"id":3}`)
		for _, tc := range []struct{ options, want string }{
			{`{"limit":"1"}`, `{"id":1}`},
			{`{"limit":"2","skip":"1"}`, `{"id":2} {"id":3}`},
			{`{"skip":"2"}`, `{"id":3}`},
			{`{"limit":1,"skip":"1"}`, `{"id":2}`},
		} {
			got := strings.Join(c.docs(t, "db1", "users", `{"filter":{},"options":`+tc.options+`}`), " ")
			if got != tc.want {
				t.Errorf("read with options %s: %s, want %s", tc.options, got, tc.want)
			}
		}
		for _, bad := range []string{`{"limit":"one"}`, `{"limit":"1.5"}`, `{"skip":"-"}`, `{"limit":"9223372036854775808"}`} {
			wantError(t, c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{},"options":`+bad+`}`), 400, "INVALID_ARGUMENT", anyMessage)
		}

		c.createColl(t, "db1", "msgs", messagesSchema)
		c.ok(t, "POST", collPath("db1", "msgs", "messages/publish"), `{"messages":[{"n":1}],"options":{"partition":"0"}}`)
		wantError(t, c.do(t, "POST", collPath("db1", "msgs", "messages/publish"), `{"messages":[{"n":1}],"options":{"partition":"1"}}`),
			400, "INVALID_ARGUMENT", "Invalid partition number `1`")
		ls := c.openStream(t, collPath("db1", "msgs", "messages/subscribe"), `{"options":{"partitions":["0"]}}`)
		defer ls.close()
		c.ok(t, "POST", collPath("db1", "msgs", "messages/publish"), `{"messages":[{"n":2}]}`)
		if m := ls.message(t); !strings.Contains(string(m.Message), `"n":2`) {
			t.Errorf("subscribed with partitions [\"0\"]: got %s", m.Message)
		}
	})
}
