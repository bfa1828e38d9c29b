package apitest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/node"
)

// Limits of the server in TestMalformedRequestsChangeNothing.
const (
	testMaxBody = 2 << 20
	testMaxDocs = 50
)

// Every kind of malformed request gets a 4xx JSON error and changes
// nothing: requests are all-or-nothing.
func TestMalformedRequestsChangeNothing(t *testing.T) {
	users := func(op string) string { return docPath("db1", "users", op) }
	docs := func(n int, format string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, format, 100+i)
		}
		return `{"documents":[` + b.String() + `]}`
	}
	cases := []struct{ name, method, path, body string }{
		// Bodies that are not the JSON of the request.
		{"insert: bad JSON", "POST", users("insert"), `{"documents":[{"id":9}`},
		{"insert: trailing garbage", "POST", users("insert"), `{"documents":[{"id":9}]} {}`},
		{"insert: body is an array", "POST", users("insert"), `[{"id":9}]`},
		{"insert: documents is an object", "POST", users("insert"), `{"documents":{"id":9}}`},
		{"insert: documents is a string", "POST", users("insert"), `{"documents":"[{\"id\":9}]"}`},
		{"insert: options is a number", "POST", users("insert"), `{"documents":[{"id":9}],"options":5}`},
		{"replace: options is a string", "PUT", users("replace"), `{"documents":[{"id":1,"name":"new"}],"options":"x"}`},
		{"update: body is a string", "PUT", users("update"), `"update"`},
		{"create db: options is a number", "POST", dbPath("db2", "create"), `{"options":5}`},
		{"create collection: only_create is a string", "POST", collPath("db1", "other", "createOrUpdate"), `{"schema":{"title":"other","properties":{"id":{"type":"integer"}}},"only_create":"yes"}`},
		{"create collection: schema is a string", "POST", collPath("db1", "other", "createOrUpdate"), `{"schema":"{\"title\":\"other\"}"}`},
		{"create collection: schema is a number", "POST", collPath("db1", "other", "createOrUpdate"), `{"schema":5}`},
		{"create collection: bad schema", "POST", collPath("db1", "other", "createOrUpdate"), `{"schema":{"title":"other","properties":{"id":{"type":"whatever"}}}}`},
		{"update collection: type change", "POST", collPath("db1", "users", "createOrUpdate"), `{"schema":` + strings.Replace(usersSchema, `"name":{"type":"string"}`, `"name":{"type":"integer"}`, 1) + `}`},
		{"update collection: title differs", "POST", collPath("db1", "users", "createOrUpdate"), `{"schema":` + strings.Replace(usersSchema, `"title":"users"`, `"title":"people"`, 1) + `}`},

		// Documents, one bad among good ones.
		{"insert: a number among documents", "POST", users("insert"), `{"documents":[{"id":9},1]}`},
		{"insert: null among documents", "POST", users("insert"), `{"documents":[{"id":9},null]}`},
		{"insert: an array among documents", "POST", users("insert"), `{"documents":[{"id":9},[]]}`},
		{"insert: invalid document among valid", "POST", users("insert"), `{"documents":[{"id":9},{"id":10,"age":"x"},{"id":11}]}`},
		{"insert: unknown field", "POST", users("insert"), `{"documents":[{"id":9},{"id":10,"nope":1}]}`},
		{"insert: missing key", "POST", users("insert"), `{"documents":[{"id":9},{"name":"no key"}]}`},
		{"insert: existing key among new", "POST", users("insert"), `{"documents":[{"id":9},{"id":1}]}`},
		{"insert: same key twice", "POST", users("insert"), `{"documents":[{"id":9},{"id":10},{"id":9}]}`},
		{"insert: member twice", "POST", users("insert"), `{"documents":[{"id":9,"name":"a","name":"b"}]}`},
		{"insert: invalid UTF-8", "POST", users("insert"), "{\"documents\":[{\"id\":9,\"name\":\"\xff\"}]}"},
		// A lone surrogate escape decodes to no character: as invalid as \xff.
		{"insert: lone surrogate escape", "POST", users("insert"), `{"documents":[{"id":9,"name":"\ud800"}]}`},
		{"insert: low surrogate first", "POST", users("insert"), `{"documents":[{"id":10,"name":"\udc00\ud800"}]}`},
		{"replace: invalid document among valid", "PUT", users("replace"), `{"documents":[{"id":1,"name":"changed"},{"id":9,"score":"high"}]}`},

		// Limits.
		{"insert: too many documents", "POST", users("insert"), docs(testMaxDocs+1, `{"id":%d}`)},
		{"publish: too many messages", "POST", collPath("db1", "msgs", "messages/publish"), strings.Replace(docs(testMaxDocs+1, `{"n":%d}`), "documents", "messages", 1)},
		{"insert: body too large", "POST", users("insert"), docs(1, `{"id":%d,"name":"`+strings.Repeat("x", testMaxBody)+`"}`)},
		{"insert: document too large", "POST", users("insert"), docs(1, `{"id":%d,"name":"`+strings.Repeat("x", 3*testMaxBody/4)+`"}`)},

		// Filters.
		{"update: filter is a number", "PUT", users("update"), `{"filter":5,"fields":{"$set":{"name":"x"}}}`},
		{"update: filter is an array", "PUT", users("update"), `{"filter":[{"id":1}],"fields":{"$set":{"name":"x"}}}`},
		{"update: unknown operator", "PUT", users("update"), `{"filter":{"id":{"$nin":[1]}},"fields":{"$set":{"name":"x"}}}`},
		{"update: unknown logical operator", "PUT", users("update"), `{"filter":{"$nor":[{"id":1},{"id":2}]},"fields":{"$set":{"name":"x"}}}`},
		{"update: text for an integer", "PUT", users("update"), `{"filter":{"id":"one"},"fields":{"$set":{"name":"x"}}}`},
		{"update: unknown field", "PUT", users("update"), `{"filter":{"nope":1},"fields":{"$set":{"name":"x"}}}`},
		{"delete: $and of one", "DELETE", users("delete"), `{"filter":{"$and":[{"id":1}]}}`},
		{"delete: $or not an array", "DELETE", users("delete"), `{"filter":{"$or":{"id":1}}}`},
		{"delete: empty filter in $or", "DELETE", users("delete"), `{"filter":{"$or":[{},{"id":1}]}}`},
		{"delete: operator value is an object", "DELETE", users("delete"), `{"filter":{"id":{"$gt":{"a":1}}}}`},
		{"delete: fractional integer", "DELETE", users("delete"), `{"filter":{"age":{"$lt":1.5}}}`},
		{"delete: null in an array value", "DELETE", users("delete"), `{"filter":{"tags":["a",null]}}`},
		{"delete: bad collation", "DELETE", users("delete"), `{"filter":{"id":1},"options":{"collation":{"case":"xx"}}}`},
		{"delete: collation is a string", "DELETE", users("delete"), `{"filter":{"id":1},"options":{"collation":"ci"}}`},
		{"delete: field collation is a number", "DELETE", users("delete"), `{"filter":{"name":{"$eq":"a","collation":5}}}`},
		{"delete: options is an array", "DELETE", users("delete"), `{"filter":{"id":1},"options":[]}`},

		// Update fields.
		{"update: fields is an array", "PUT", users("update"), `{"filter":{"id":1},"fields":[{"$set":{"name":"x"}}]}`},
		{"update: $set is an array", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":["name"]}}`},
		{"update: unknown update operator", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$inc":{"age":1}}}`},
		{"update: $set of an unknown field", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":{"nope":1}}}`},
		{"update: $set of a wrong type", "PUT", users("update"), `{"filter":{"id":{"$gte":1}},"fields":{"$set":{"age":"old"}}}`},
		{"update: $set of the key to a taken one", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$set":{"id":2}}}`},
		{"update: $unset of the key", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$unset":["id"]}}`},
		{"update: $unset is a number", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$unset":5}}`},
		{"update: $unset of numbers", "PUT", users("update"), `{"filter":{"id":1},"fields":{"$unset":[1]}}`},
		// The first matching document takes the change, the second cannot:
		// neither changes.
		{"update: fails on the second match", "PUT", users("update"), `{"filter":{"id":{"$gte":1}},"fields":{"$set":{"address.city":"Rome"}}}`},

		// Reads change nothing anyway, but must still refuse.
		{"read: fields is an array", "POST", users("read"), `{"filter":{},"fields":["name"]}`},
		{"read: fields value is a string", "POST", users("read"), `{"filter":{},"fields":{"name":"yes"}}`},
		{"read: limit is a word", "POST", users("read"), `{"filter":{},"options":{"limit":"three"}}`},
		{"read: limit is negative", "POST", users("read"), `{"filter":{},"options":{"limit":-1}}`},
		{"read: skip is negative", "POST", users("read"), `{"filter":{},"options":{"skip":-1}}`},
		{"read: skip is fractional", "POST", users("read"), `{"filter":{},"options":{"skip":1.5}}`},
		{"read: offset is not base64", "POST", users("read"), `{"filter":{},"options":{"offset":"!!not base64"}}`},
		{"read: offset is a number", "POST", users("read"), `{"filter":{},"options":{"offset":12}}`},
		{"read: lone surrogate in a filter", "POST", users("read"), `{"filter":{"name":"\udbff"}}`},
	}
	cfg := node.DefaultConfigWith(func(nc *node.Config) {
		nc.MaxBodyBytes = testMaxBody
		nc.Ops.MaxDocumentsPerRequest = testMaxDocs
	})
	eachBackendWith(t, cfg, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.createColl(t, "db1", "msgs", messagesSchema)
		// Document 2 has an address that is not an object, so that a $set
		// of address.city fails on it after succeeding on document 1.
		c.insert(t, "db1", "users", `{"id":1,"name":"a","address":{"city":"Paris"}}`, `{"id":2,"name":"b","address":null}`, `{"id":3,"name":"c","tags":["x"]}`)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := c.snapshot(t)
				wantClientError(t, c.do(t, tc.method, tc.path, tc.body))
				if after := c.snapshot(t); after != before {
					t.Errorf("the request changed the data:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	})
}
