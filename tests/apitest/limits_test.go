package apitest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
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
		{"string got number", `{"string_value":1}`, prefix + "'string_value' reason 'expected string or null, but got number'"},
		{"integer got fraction", `{"n":1.5}`, prefix + "'n' reason 'expected integer or null, but got number'"},
		{"int32 overflow", `{"small":2147483648}`, prefix + "'small' reason ''2147483648' is not valid 'int32''"},
		{"number beyond float64", `{"score":1e400}`, prefix + "'score' reason ''1e400' is out of the range of a 64-bit floating point number'"},
		{"maxLength", `{"code":"abcdef"}`, prefix + "'code' reason 'length must be <= 5, but got 6'"},
		{"uuid format", `{"ref":"not-a-uuid"}`, prefix + "'ref' reason ''not-a-uuid' is not valid 'uuid''"},
		{"date-time format", `{"at":"yesterday"}`, prefix + "'at' reason ''yesterday' is not valid 'date-time''"},
		{"base64", `{"blob":"!!"}`, prefix + "'blob' reason ''!!' is not valid 'byte''"},
		{"nested path", `{"address.zip":"x"}`, prefix + "'address/zip' reason 'expected integer or null, but got string'"},
		{"inside an object value", `{"address":{"city":5}}`, prefix + "'address/city' reason 'expected string or null, but got number'"},
		{"unknown member of an object value", `{"address":{"street":"x"}}`, prefix + "'address' reason 'additionalProperties 'street' not allowed'"},
		{"array element", `{"tags":["a",2]}`, prefix + "'tags/1' reason 'expected string or null, but got number'"},
		{"array got object", `{"tags":{"a":1}}`, prefix + "'tags' reason 'expected array or null, but got object'"},
		{"later field of several", `{"string_value":"ok","n":"x"}`, prefix + "'n' reason 'expected integer or null, but got string'"},
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

// The limits on a request's size, each just under (accepted) and just over
// (refused with a 400 that names it, nothing changed): comparisons and
// nesting of a filter, fields and nesting of a schema, paths of an update.
// Numbers in the limits are those of docs/operations.md.
func TestRequestLimits(t *testing.T) {
	read, update, del := docPath("db1", "users", "read"), docPath("db1", "users", "update"), docPath("db1", "users", "delete")
	updateWide := docPath("db1", "wide", "update")
	create := collPath("db1", "other", "createOrUpdate")
	accepted := []struct{ name, method, path, body string }{
		{"filter of 1000 comparisons", "POST", read, `{"filter":` + andOf(1000) + `}`},
		{"filter of 1000 comparisons in an $or", "POST", read, `{"filter":` + orOf(1000) + `}`},
		{"filter nested 32 deep", "POST", read, `{"filter":` + nestedOr(32) + `}`},
		{"update of 256 paths", "PUT", updateWide, `{"filter":{"id":1},"fields":` + setOf(255, `"$unset":["f299"]`) + `}`},
		{"$set of 256 paths", "PUT", updateWide, `{"filter":{"id":1},"fields":` + setOf(256, "") + `}`},
		{"schema of 2000 fields", "POST", create, `{"schema":` + wideSchema("other", 2000) + `}`},
		{"schema nested 16 deep", "POST", collPath("db1", "deep", "createOrUpdate"), `{"schema":` + deepSchema("deep", 16) + `}`},
	}
	refused := []refusal{
		{"filter of 1001 comparisons", "POST", read, `{"filter":` + andOf(1001) + `}`, 400, "INVALID_ARGUMENT", "filter has more than 1000 comparisons"},
		{"filter of 1001 comparisons in an $or", "POST", read, `{"filter":` + orOf(1001) + `}`, 400, "INVALID_ARGUMENT", "filter has more than 1000 comparisons"},
		{"update's filter of 1001 comparisons", "PUT", update, `{"filter":` + orOf(1001) + `,"fields":{"$set":{"name":"x"}}}`, 400, "INVALID_ARGUMENT", "filter has more than 1000 comparisons"},
		{"delete's filter of 1001 comparisons", "DELETE", del, `{"filter":` + orOf(1001) + `}`, 400, "INVALID_ARGUMENT", "filter has more than 1000 comparisons"},
		{"filter nested 33 deep", "POST", read, `{"filter":` + nestedOr(33) + `}`, 400, "INVALID_ARGUMENT", "filter nests $and and $or more than 32 deep"},
		{"delete's filter nested 33 deep", "DELETE", del, `{"filter":` + nestedOr(33) + `}`, 400, "INVALID_ARGUMENT", "filter nests $and and $or more than 32 deep"},
		{"update of 257 paths", "PUT", updateWide, `{"filter":{"id":1},"fields":` + setOf(256, `"$unset":["f299"]`) + `}`, 400, "INVALID_ARGUMENT", "update changes more than 256 fields"},
		{"update of 257 paths, $unset first", "PUT", updateWide, `{"filter":{"id":1},"fields":` + setOf(256, `"$unset":["f299"]`, true) + `}`, 400, "INVALID_ARGUMENT", "update changes more than 256 fields"},
		{"$set of 257 paths", "PUT", updateWide, `{"filter":{"id":1},"fields":` + setOf(257, "") + `}`, 400, "INVALID_ARGUMENT", "update changes more than 256 fields"},
		{"$unset of 257 paths", "PUT", updateWide, `{"filter":{"id":1},"fields":{"$unset":[` + strings.Repeat(`"f1",`, 256) + `"f2"]}}`, 400, "INVALID_ARGUMENT", "update changes more than 256 fields"},
		{"schema of 2001 fields", "POST", create, `{"schema":` + wideSchema("other", 2001) + `}`, 400, "INVALID_ARGUMENT", "schema has more than 2000 fields"},
		{"schema nested 17 deep", "POST", create, `{"schema":` + deepSchema("other", 17) + `}`, 400, "INVALID_ARGUMENT", "schema nests fields more than 16 deep, at field '" + strings.Repeat("o.", 15) + "o[]'"},
	}
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.createColl(t, "db1", "wide", wideSchema("wide", 300))
		c.insert(t, "db1", "users", `{"id":1,"name":"n0","age":3}`, `{"id":2,"name":"n2"}`)
		c.insert(t, "db1", "wide", `{"id":1}`)
		wantRefused(t, c, refused)
		for _, tc := range accepted {
			t.Run(tc.name, func(t *testing.T) {
				if r := c.do(t, tc.method, tc.path, tc.body); r.status != 200 {
					t.Errorf("got %.300s, want 200", r)
				}
			})
		}
	})
}

// The requests of the hardening issue that took from 6 to 69 seconds are
// refused, naming the limit they break. How fast is for the benchmarks of
// filter and schema parsing (machines here are shared: no timed tests);
// the time is logged.
func TestHugeRequestsRefusedQuickly(t *testing.T) {
	cases := []refusal{
		{"$and of 100,000 members (3 MB)", "POST", docPath("db1", "users", "read"), `{"filter":` + andOf(100_000) + `}`,
			400, "INVALID_ARGUMENT", "filter has more than 1000 comparisons"},
		{"$or nested 4,990 deep", "POST", docPath("db1", "users", "read"), `{"filter":` + nestedOr(4990) + `}`,
			400, "INVALID_ARGUMENT", "filter nests $and and $or more than 32 deep"},
		{"schema of 2.5 MB", "POST", collPath("db1", "big", "createOrUpdate"), `{"schema":` + wideSchema("big", 93_000) + `}`,
			400, "INVALID_ARGUMENT", "schema has more than 2000 fields"},
		{"$set of 9,999 fields", "PUT", docPath("db1", "users", "update"), `{"filter":{"id":1},"fields":` + setOf(9999, "") + `}`,
			400, "INVALID_ARGUMENT", "update changes more than 256 fields"},
	}
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				start := time.Now()
				wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
				t.Logf("%d bytes answered in %v (each took 6 to 69 s before the limits)", len(tc.body), time.Since(start))
			})
		}
		if got := c.all(t, "db1", "users"); len(got) != 2 || got[0] != `{"id":1,"name":"a"}` {
			t.Errorf("documents changed: %q", got)
		}
	})
}

// andOf is an $and of n equalities on users' name.
func andOf(n int) string { return logicalOf("$and", n) }

// orOf is an $or of n equalities on users' name.
func orOf(n int) string { return logicalOf("$or", n) }

func logicalOf(op string, n int) string {
	var b strings.Builder
	b.WriteString(`{"` + op + `":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"value %07d"}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// nestedOr is an $or nested depth deep.
func nestedOr(depth int) string {
	return strings.Repeat(`{"$or":[{"id":1},`, depth) + `{"id":2}` + strings.Repeat(`]}`, depth)
}

// wideSchema is a schema of n fields: an integer id and strings f1...
func wideSchema(title string, n int) string {
	var b strings.Builder
	b.WriteString(`{"title":"` + title + `","properties":{"id":{"type":"integer"}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `,"f%d":{"type":"string"}`, i)
	}
	b.WriteString(`},"primary_key":["id"]}`)
	return b.String()
}

// deepSchema is a schema whose field o nests depth deep: objects, with an
// array's items as the last level.
func deepSchema(title string, depth int) string {
	inner := `{"type":"array","items":{"type":"string"}}`
	for range depth - 2 {
		inner = `{"type":"object","properties":{"o":` + inner + `}}`
	}
	return `{"title":"` + title + `","properties":{"id":{"type":"integer"},"o":` + inner + `}}`
}

// setOf is update fields setting f1...fn (of wideSchema) to strings, with
// other, if given, as a member after $set (before it if first is set).
func setOf(n int, other string, first ...bool) string {
	var b strings.Builder
	b.WriteString(`{"$set":{`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":"v%d"`, i, i)
	}
	b.WriteString(`}`)
	set := b.String()
	switch {
	case other == "":
		return set + `}`
	case len(first) > 0 && first[0]:
		return `{` + other + `,` + set[1:] + `}`
	}
	return set + `,` + other + `}`
}

// keepOpen is a store that a node does not close, so that nodes of
// different settings can run over it one after the other.
type keepOpen struct{ kv.Store }

func (keepOpen) Close() error { return nil }

// A request that runs past the request timeout stops, answers 504
// DEADLINE_EXCEEDED and writes nothing. The data is loaded through a node
// with the default timeout; the slow requests go to a node over the same
// store whose timeout is 50ms; a third node checks that nothing changed.
func TestRequestTimeout(t *testing.T) {
	// Every document is a candidate (no index can serve the filter: the
	// $or's last member matches all of them) and is checked against all
	// 1000 comparisons, and none matches (age and score are equal in each), so
	// a request reads the whole collection and returns nothing.
	var or strings.Builder
	for i := range 997 {
		fmt.Fprintf(&or, `{"name":"nope %d"},`, i)
	}
	or.WriteString(`{"age":{"$gte":0}}`)
	slow := `{"$and":[{"$or":[` + or.String() + `]},{"age":0},{"score":1}]}`
	// The same cost per document, but every one matches: a read of it has
	// streamed documents when its deadline comes.
	slowAll := `{"$or":[` + or.String() + `]}`
	users := func(op string) string { return docPath("db1", "users", op) }
	cases := []refusal{
		{"read", "POST", users("read"), `{"filter":` + slow + `}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
		{"read sorted in memory", "POST", users("read"), `{"filter":` + slow + `,"sort":[{"name":"$desc"}]}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
		{"explain", "POST", users("explain"), `{"filter":` + slow + `}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
		{"update", "PUT", users("update"), `{"filter":` + slow + `,"fields":{"$set":{"name":"changed"}}}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
		{"delete", "DELETE", users("delete"), `{"filter":` + slow + `}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
	}
	// Writes of every document take no slow filter: a quick machine
	// rewrites ten thousand documents within 50 ms, so these run under a
	// deadline far below any such work.
	everyDocument := []refusal{
		{"update of every document", "PUT", users("update"), `{"filter":{"age":{"$gte":0}},"fields":{"$set":{"name":"changed"}}}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
		{"delete of every document", "DELETE", users("delete"), `{"filter":{}}`, 504, "DEADLINE_EXCEEDED", "context deadline exceeded"},
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := keepOpen{b.Open(t)}
		run := func(cfg node.Config, fn func(c *client)) {
			n := startNode(t, store, cfg)
			defer func() {
				if err := n.Close(); err != nil {
					t.Errorf("shut the node down: %v", err)
				}
			}()
			fn(newClient("http://" + n.Addr().String()))
		}
		var before string
		run(node.DefaultConfig(), func(c *client) {
			withUsers(t, c)
			// Ten requests of a thousand: one of five thousand took over
			// the client's 30 s on a loaded machine, under the race
			// detector, on PostgreSQL.
			for batch := range 10 {
				var docs []string
				for i := batch * 1000; i < (batch+1)*1000; i++ {
					docs = append(docs, fmt.Sprintf(`{"id":%d,"name":"n%d","age":%d,"score":%d}`, i, i, i%2, i%2))
				}
				c.insert(t, "db1", "users", docs...)
			}
			before = c.snapshot(t)
			// Under the default timeout the same requests succeed.
			if got := c.docs(t, "db1", "users", `{"filter":`+slow+`}`); len(got) != 0 {
				t.Errorf("the slow filter matched %d documents", len(got))
			}
		})
		run(node.DefaultConfigWith(func(nc *node.Config) {
			nc.Ops.RequestTimeout = 50 * time.Millisecond
		}), func(c *client) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					start := time.Now()
					wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
					t.Logf("answered in %v", time.Since(start))
				})
			}
			t.Run("read that has started streaming", func(t *testing.T) {
				r := c.do(t, "POST", users("read"), `{"filter":`+slowAll+`}`)
				if r.status == 504 {
					// The deadline came before the first document (a backend
					// slow to connect): an ordinary error response.
					wantError(t, r, 504, "DEADLINE_EXCEEDED", "context deadline exceeded")
					return
				}
				lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
				last := lines[len(lines)-1]
				if r.status != 200 || len(lines) < 2 || !strings.HasPrefix(lines[0], `{"result":`) ||
					last != `{"error":{"code":"DEADLINE_EXCEEDED","message":"context deadline exceeded"}}` {
					t.Errorf("got %d with %d lines, the last %.200s; want 200, documents, then the deadline's error line", r.status, len(lines), last)
				}
			})
		})
		run(node.DefaultConfigWith(func(nc *node.Config) {
			nc.Ops.RequestTimeout = 5 * time.Millisecond
		}), func(c *client) {
			for _, tc := range everyDocument {
				t.Run(tc.name, func(t *testing.T) {
					wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
				})
			}
		})
		run(node.DefaultConfig(), func(c *client) {
			if after := c.snapshot(t); after != before {
				t.Errorf("requests past their deadline changed the data (%d bytes before, %d after)", len(before), len(after))
			}
		})
	})
}
