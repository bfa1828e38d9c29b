package apitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// usersSchema is the collection most document tests use.
const usersSchema = `{"title":"users","properties":{
	"id":{"type":"integer"},
	"name":{"type":"string"},
	"age":{"type":"integer","format":"int32"},
	"score":{"type":"number"},
	"active":{"type":"boolean"},
	"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"integer"}}},
	"tags":{"type":"array","items":{"type":"string"}}
},"primary_key":["id"]}`

// withUsers creates database db1 with the collection users.
func withUsers(t *testing.T, c *client) {
	t.Helper()
	c.createDB(t, "db1")
	c.createColl(t, "db1", "users", usersSchema)
}

func TestInsert(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		before := time.Now()
		r := c.ok(t, "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":10,"name":"a"},{"id":3}],"options":{}}`)
		after := time.Now()
		m := r.object(t)
		if str(t, m, "status") != "inserted" || len(m) != 3 {
			t.Errorf("insert response %v, want metadata, status and keys", m)
		}
		equalStrings(t, "keys", keysOf(t, r), []string{`{"id":10}`, `{"id":3}`})
		md := obj(t, m, "metadata")
		created := parseTime(t, str(t, md, "created_at"))
		if len(md) != 1 {
			t.Errorf("insert metadata %v, want created_at only", md)
		}
		if created.Before(before.Add(-time.Minute)) || created.After(after.Add(time.Minute)) {
			t.Errorf("created_at %v is not the time of the insert (%v)", created, before)
		}

		// Reads report the same created_at, and no updated_at yet.
		for _, it := range c.read(t, "db1", "users", `{"filter":{}}`) {
			if it.createdAt != str(t, md, "created_at") || it.updatedAt != "" {
				t.Errorf("read metadata of %s: created_at %q updated_at %q, want %q and none", it.data, it.createdAt, it.updatedAt, md["created_at"])
			}
		}

		// A key that exists, or the same key twice in one request: nothing
		// is written.
		wantError(t, c.do(t, "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":4},{"id":10}]}`),
			409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"id":10} exists already`)
		wantError(t, c.do(t, "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":5},{"id":5}]}`),
			409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"id":5} is given twice in the request`)
		equalStrings(t, "documents", c.all(t, "db1", "users"), []string{`{"id":3}`, `{"id":10,"name":"a"}`})

		// The path names the collection, whatever the body says.
		c.createDB(t, "other")
		c.ok(t, "POST", docPath("db1", "users", "insert"), `{"db":"other","collection":"nope","documents":[{"id":4}]}`)
		equalStrings(t, "documents", c.all(t, "db1", "users"), []string{`{"id":3}`, `{"id":4}`, `{"id":10,"name":"a"}`})
	})
}

func TestReplace(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"old"}`)
		r := c.ok(t, "PUT", docPath("db1", "users", "replace"), `{"documents":[{"id":1,"age":3},{"id":2,"name":"new"}]}`)
		m := r.object(t)
		if str(t, m, "status") != "replaced" {
			t.Errorf("status %v", m["status"])
		}
		equalStrings(t, "keys", keysOf(t, r), []string{`{"id":1}`, `{"id":2}`})
		parseTime(t, str(t, obj(t, m, "metadata"), "created_at"))
		// A replaced document is the new one whole, not a merge.
		equalStrings(t, "documents", c.all(t, "db1", "users"), []string{`{"id":1,"age":3}`, `{"id":2,"name":"new"}`})
		// The same key twice in one replace: the last one wins.
		c.ok(t, "PUT", docPath("db1", "users", "replace"), `{"documents":[{"id":3,"name":"x"},{"id":3,"name":"y"}]}`)
		equalStrings(t, "replaced twice", c.docs(t, "db1", "users", `{"filter":{"id":3}}`), []string{`{"id":3,"name":"y"}`})
	})
}

// Documents come back as the bytes sent; updates patch those bytes.
func TestDocumentsByteForByte(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		const doc = `{ "name" : "Zoë \u00e9\n",  "id":1,"address":{"zip":5,   "city":"X"},"score":1.50, "tags":[ "b","a" ] }`
		c.insert(t, "db1", "users", doc)
		c.insert(t, "db1", "users", `{"id":7}`)
		equalStrings(t, "stored", c.docs(t, "db1", "users", `{"filter":{"id":1}}`), []string{doc})

		update := func(filter, fields string) {
			t.Helper()
			m := c.okObject(t, "PUT", docPath("db1", "users", "update"), `{"filter":`+filter+`,"fields":`+fields+`}`)
			if intOf(t, m["modified_count"]) != 1 {
				t.Fatalf("update %s: %v", fields, m)
			}
		}
		// The original's own example: a new key goes at the end.
		update(`{"id":7}`, `{"$set":{"age":70}}`)
		equalStrings(t, "$set of a new key", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"age":70}`})
		// An existing key keeps its place; null is stored as null.
		update(`{"id":7}`, `{"$set":{"age":null,"name":"n"}}`)
		equalStrings(t, "$set null", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"age":null,"name":"n"}`})
		update(`{"id":7}`, `{"$set":{"age":71}}`)
		equalStrings(t, "$set over null", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"age":71,"name":"n"}`})

		// The rest of the bytes of a document are untouched by a $set.
		update(`{"id":1}`, `{"$set":{"score":2}}`)
		equalStrings(t, "$set keeps the layout", c.docs(t, "db1", "users", `{"filter":{"id":1}}`),
			[]string{`{ "name" : "Zoë \u00e9\n",  "id":1,"address":{"zip":5,   "city":"X"},"score":2, "tags":[ "b","a" ] }`})
		// Dot paths patch inside nested objects.
		update(`{"id":1}`, `{"$set":{"address.city":"Y"}}`)
		equalStrings(t, "$set of a nested field", c.docs(t, "db1", "users", `{"filter":{"id":1}}`),
			[]string{`{ "name" : "Zoë \u00e9\n",  "id":1,"address":{"zip":5,   "city":"Y"},"score":2, "tags":[ "b","a" ] }`})

		// A dot path under a missing object creates it, at the end.
		update(`{"id":7}`, `{"$set":{"address.zip":75}}`)
		equalStrings(t, "$set under a missing object", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"age":71,"name":"n","address":{"zip":75}}`})
		update(`{"id":7}`, `{"$unset":["address"]}`)

		// $unset removes members; unsetting a missing one changes nothing.
		update(`{"id":7}`, `{"$unset":["name"]}`)
		equalStrings(t, "$unset", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"age":71}`})
		update(`{"id":7}`, `{"$unset":{"age":""},"$set":{"active":true}}`)
		equalStrings(t, "$unset with $set", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"active":true}`})
		update(`{"id":7}`, `{"$unset":["score"]}`)
		equalStrings(t, "$unset of a missing field", c.docs(t, "db1", "users", `{"filter":{"id":7}}`), []string{`{"id":7,"active":true}`})
	})
}

func TestUpdate(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"age":10}`, `{"id":2,"age":20}`, `{"id":3,"age":30}`)
		createdAt := c.read(t, "db1", "users", `{"filter":{"id":1}}`)[0].createdAt

		m := c.okObject(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"age":{"$gte":20}},"fields":{"$set":{"name":"old"}}}`)
		if str(t, m, "status") != "updated" || intOf(t, m["modified_count"]) != 2 || len(m) != 3 {
			t.Errorf("update response %v", m)
		}
		md := obj(t, m, "metadata")
		updatedAt := str(t, md, "updated_at")
		parseTime(t, updatedAt)
		if len(md) != 1 {
			t.Errorf("update metadata %v, want updated_at only", md)
		}
		equalStrings(t, "documents", c.all(t, "db1", "users"), []string{`{"id":1,"age":10}`, `{"id":2,"age":20,"name":"old"}`, `{"id":3,"age":30,"name":"old"}`})

		// Updated documents carry updated_at, and keep created_at.
		for _, it := range c.read(t, "db1", "users", `{"filter":{}}`) {
			wantUpdated := ""
			if !strings.HasPrefix(string(it.data), `{"id":1,`) {
				wantUpdated = updatedAt
			}
			if it.updatedAt != wantUpdated || it.createdAt != createdAt {
				t.Errorf("metadata of %s: created %q updated %q, want %q and %q", it.data, it.createdAt, it.updatedAt, createdAt, wantUpdated)
			}
		}

		// No match: no error, and modified_count left out.
		r := c.ok(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"id":99},"fields":{"$set":{"name":"x"}}}`)
		if strings.Contains(string(r.body), "modified_count") || !strings.Contains(string(r.body), `"status":"updated"`) {
			t.Errorf("update of nothing: %s, want status updated without modified_count", r.body)
		}
		wantError(t, c.do(t, "PUT", docPath("db1", "users", "update"), `{"filter":{},"fields":{"$set":{"name":"x"}}}`),
			400, "INVALID_ARGUMENT", "updating all documents is not allowed")
		// A key that another document holds cannot be taken (a key that is
		// free moves the document: TestUpdateMovesKey).
		wantError(t, c.do(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"id":1},"fields":{"$set":{"id":2}}}`),
			409, "ALREADY_EXISTS", anyMessage)
		equalStrings(t, "documents", c.all(t, "db1", "users"), []string{`{"id":1,"age":10}`, `{"id":2,"age":20,"name":"old"}`, `{"id":3,"age":30,"name":"old"}`})
	})
}

func TestDelete(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"age":10}`, `{"id":2,"age":20}`, `{"id":3,"age":30}`, `{"id":4,"age":40}`)
		// The count of deleted documents is in modified_count, left out
		// when 0 as for update (the original reported no count).
		del := func(body string, deleted int64) {
			t.Helper()
			m := c.okObject(t, "DELETE", docPath("db1", "users", "delete"), body)
			wantLen := 3
			if deleted == 0 {
				wantLen = 2
			}
			if str(t, m, "status") != "deleted" || len(m) != wantLen || (deleted > 0 && intOf(t, m["modified_count"]) != deleted) {
				t.Errorf("delete response %v, want %d deleted", m, deleted)
			}
			parseTime(t, str(t, obj(t, m, "metadata"), "deleted_at"))
		}
		del(`{"filter":{"$or":[{"id":1},{"age":{"$gte":40}}]}}`, 2)
		equalStrings(t, "after delete", c.all(t, "db1", "users"), []string{`{"id":2,"age":20}`, `{"id":3,"age":30}`})
		del(`{"filter":{"id":99}}`, 0) // nothing matches: still "deleted"
		del(`{"filter":{}}`, 2)        // {} deletes everything
		if got := c.all(t, "db1", "users"); len(got) != 0 {
			t.Errorf("after deleting all: %q", got)
		}
	})
}

func TestReadStreamFraming(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		// Zero results: 200 with an empty body.
		r := c.ok(t, "POST", docPath("db1", "users", "read"), `{"filter":{}}`)
		if len(r.body) != 0 {
			t.Errorf("read of nothing: %q, want an empty body", r.body)
		}

		c.insert(t, "db1", "users", `{"id":2,"name":"b"}`, `{"id":1, "name":"a"}`)
		r = c.ok(t, "POST", docPath("db1", "users", "read"), `{"filter":{}}`)
		if !r.chunked {
			t.Errorf("read is not sent chunked")
		}
		items := parseStream(t, r)
		if len(items) != 2 {
			t.Fatalf("got %d items: %s", len(items), r.body)
		}
		// Each line is {"result":{"data":<doc>,"metadata":{...},"resume_token":"..."}}.
		for i, want := range []string{`{"id":1, "name":"a"}`, `{"id":2,"name":"b"}`} {
			wantLine := fmt.Sprintf(`{"result":{"data":%s,"metadata":{"created_at":"%s"},"resume_token":"%s"}}`, want, items[i].createdAt, items[i].resumeToken)
			if items[i].line != wantLine {
				t.Errorf("line %d:\n got %s\nwant %s", i, items[i].line, wantLine)
			}
			parseTime(t, items[i].createdAt)
		}
		// A stream that fails before its first item is an ordinary error.
		wantError(t, c.do(t, "POST", docPath("db1", "nothere", "read"), `{"filter":{}}`), 404, "NOT_FOUND", "collection doesn't exist 'nothere'")
	})
}

func TestReadPaging(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		var want []string
		for i := 1; i <= 10; i++ {
			d := fmt.Sprintf(`{"id":%d,"age":%d}`, i, i%3)
			c.insert(t, "db1", "users", d)
			want = append(want, d)
		}
		equalStrings(t, "limit", c.docs(t, "db1", "users", `{"filter":{},"options":{"limit":3}}`), want[:3])
		equalStrings(t, "skip", c.docs(t, "db1", "users", `{"filter":{},"options":{"skip":8}}`), want[8:])
		equalStrings(t, "skip and limit", c.docs(t, "db1", "users", `{"filter":{},"options":{"skip":2,"limit":3}}`), want[2:5])
		equalStrings(t, "limit past the end", c.docs(t, "db1", "users", `{"filter":{},"options":{"limit":50}}`), want)

		// Page through with the resume_token of the last item as offset.
		var got []string
		offset := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("paging does not end: %q", got)
			}
			opts := `{"limit":4}`
			if offset != "" {
				opts = `{"limit":4,"offset":"` + offset + `"}`
			}
			items := c.read(t, "db1", "users", `{"filter":{},"options":`+opts+`}`)
			if len(items) == 0 {
				break
			}
			for _, it := range items {
				got = append(got, string(it.data))
			}
			offset = items[len(items)-1].resumeToken
		}
		equalStrings(t, "pages", got, want)

		// Offset with a filter continues among the matches.
		first := c.read(t, "db1", "users", `{"filter":{"age":1},"options":{"limit":2}}`)
		equalStrings(t, "first page of a filter", []string{string(first[0].data), string(first[1].data)}, []string{want[0], want[3]})
		rest := c.docs(t, "db1", "users", `{"filter":{"age":1},"options":{"offset":"`+first[1].resumeToken+`"}}`)
		equalStrings(t, "rest of a filter", rest, []string{want[6], want[9]})
	})
}

func TestReadProjection(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"a","age":5,"tags":["x"]}`)
		for _, tc := range []struct{ fields, want string }{
			{`{"name":1,"id":true}`, `{"id":1,"name":"a"}`}, // document order, not the order asked
			{`{"age":1}`, `{"age":5}`},
			{`{"age":0,"tags":false}`, `{"id":1,"name":"a"}`},
			{`{"missing_in_doc":1}`, `{}`},
			{`{}`, `{"id":1,"name":"a","age":5,"tags":["x"]}`},
		} {
			equalStrings(t, "fields "+tc.fields, c.docs(t, "db1", "users", `{"filter":{},"fields":`+tc.fields+`}`), []string{tc.want})
		}
		wantError(t, c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{},"fields":{"name":1,"age":0}}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", docPath("db1", "users", "read"), `{"filter":{},"fields":{"name":2}}`), 400, "INVALID_ARGUMENT", anyMessage)
	})
}

// An offset that is not the resume token of a document of this
// collection is refused: it used to be taken as a raw key, so "AAAA"
// (before every key) read the whole collection and random bytes (past
// them) read nothing, both answered as if they were positions.
func TestReadOffsetMustBeAResumeToken(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1}`, `{"id":2}`)
		c.createColl(t, "db1", "named", `{"title":"named","properties":{"k":{"type":"string"}},"primary_key":["k"]}`)
		c.insert(t, "db1", "named", `{"k":"x"}`)
		c.createColl(t, "db1", "msgs", `{"title":"msgs","collection_type":"messages","properties":{"text":{"type":"string"}}}`)
		c.ok(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"text":"a"},{"text":"b"}]}`)
		users := c.read(t, "db1", "users", `{"filter":{}}`)
		named := c.read(t, "db1", "named", `{"filter":{}}`)
		msgs := c.read(t, "db1", "msgs", `{"filter":{}}`)
		b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
		userToken, _ := base64.StdEncoding.DecodeString(users[0].resumeToken)
		const msg = "options.offset is not a resume token of this collection: pass the resume_token of an item that a read of it returned"
		for _, tc := range []struct{ name, path, offset string }{
			{"AAAA", docPath("db1", "users", "read"), "AAAA"},
			{"random bytes", docPath("db1", "users", "read"), b64([]byte{0xd3, 0x17, 0x9a, 0x42, 0xfe, 0x01, 0x88})},
			{"another collection's token", docPath("db1", "named", "read"), users[0].resumeToken},
			{"a key of another type", docPath("db1", "users", "read"), named[0].resumeToken},
			{"a token cut short", docPath("db1", "users", "read"), b64(userToken[:len(userToken)-1])},
			{"a token with more", docPath("db1", "users", "read"), b64(append(bytes.Clone(userToken), userToken[len(userToken)-3:]...))},
			{"a document's token for messages", msgPath("db1", "msgs", "read"), users[0].resumeToken},
			{"a message's token for documents", docPath("db1", "users", "read"), msgs[0].resumeToken},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, c.do(t, "POST", tc.path, `{"filter":{},"options":{"offset":"`+tc.offset+`"}}`), 400, "INVALID_ARGUMENT", msg)
			})
		}
		// The tokens a read returned still resume it.
		equalStrings(t, "documents after the first", c.docs(t, "db1", "users", `{"filter":{},"options":{"offset":"`+users[0].resumeToken+`"}}`), []string{`{"id":2}`})
		if got := c.read(t, "db1", "msgs", `{"filter":{},"options":{"offset":"`+msgs[0].resumeToken+`"}}`); len(got) != 1 || string(got[0].data) != `{"text":"b"}` {
			t.Errorf("messages after the first: %v", got)
		}
	})
}

// A projection names nested fields by dot path: the nested value comes
// back inside its enclosing objects, as the original returned it.
func TestReadProjectionNested(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"a","address":{"city":"Paris","zip":75}}`, `{"id":2,"name":"b"}`)
		for _, tc := range []struct {
			fields string
			want   []string
		}{
			{`{"address.city":1}`, []string{`{"address":{"city":"Paris"}}`, `{}`}},
			{`{"id":1,"address.zip":true}`, []string{`{"id":1,"address":{"zip":75}}`, `{"id":2}`}},
			{`{"address":1,"address.city":1}`, []string{`{"address":{"city":"Paris","zip":75}}`, `{}`}},
			{`{"address.nope":1}`, []string{`{}`, `{}`}},
			{`{"name.first":1}`, []string{`{}`, `{}`}}, // name is not an object
			{`{"address.city":0}`, []string{`{"id":1,"name":"a","address":{"zip":75}}`, `{"id":2,"name":"b"}`}},
			{`{"address.city":0,"name":0}`, []string{`{"id":1,"address":{"zip":75}}`, `{"id":2}`}},
		} {
			equalStrings(t, "fields "+tc.fields, c.docs(t, "db1", "users", `{"filter":{},"fields":`+tc.fields+`}`), tc.want)
		}
	})
}

// Filters of reference §9, the same for read, update and delete.
func TestFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users",
			`{"id":1,"name":"Alice","age":30,"score":1.5,"active":true,"address":{"city":"Paris","zip":75}}`,
			`{"id":2,"name":"bob","age":20,"score":2.5,"active":false,"address":{"city":"Lyon","zip":69}}`,
			`{"id":3,"name":"ALICE","age":40,"active":true}`,
			`{"id":4}`,
		)
		for _, tc := range []struct {
			name, filter, options string
			want                  []int // ids, in primary-key order
		}{
			{"empty", `{}`, ``, []int{1, 2, 3, 4}},
			{"equality", `{"name":"bob"}`, ``, []int{2}},
			{"$eq", `{"age":{"$eq":30}}`, ``, []int{1}},
			{"$gt", `{"age":{"$gt":20}}`, ``, []int{1, 3}},
			{"$gte", `{"age":{"$gte":20}}`, ``, []int{1, 2, 3}},
			{"$lt", `{"age":{"$lt":30}}`, ``, []int{2}},
			{"$lte", `{"age":{"$lte":30}}`, ``, []int{1, 2}},
			{"two operators", `{"age":{"$gt":20,"$lt":40}}`, ``, []int{1}},
			{"number", `{"score":{"$gt":2}}`, ``, []int{2}},
			{"boolean", `{"active":true}`, ``, []int{1, 3}},
			{"several fields", `{"active":true,"age":40}`, ``, []int{3}},
			{"$and", `{"$and":[{"age":{"$gte":20}},{"age":{"$lte":30}}]}`, ``, []int{1, 2}},
			{"$or", `{"$or":[{"id":4},{"name":"bob"}]}`, ``, []int{2, 4}},
			{"nested", `{"$or":[{"$and":[{"active":true},{"age":{"$gt":35}}]},{"id":2}]}`, ``, []int{2, 3}},
			{"dot path", `{"address.city":"Lyon"}`, ``, []int{2}},
			{"dot path range", `{"address.zip":{"$gt":70}}`, ``, []int{1}},
			{"case-sensitive by default", `{"name":"alice"}`, ``, nil},
			{"request collation ci", `{"name":"alice"}`, `{"collation":{"case":"ci"}}`, []int{1, 3}},
			{"request collation cs", `{"name":"Alice"}`, `{"collation":{"case":"cs"}}`, []int{1}},
			{"field collation ci", `{"name":{"$eq":"alice","collation":{"case":"ci"}}}`, ``, []int{1, 3}},
			{"key range", `{"id":{"$gt":1,"$lte":3}}`, ``, []int{2, 3}},
			// Folio answers in key order, not in the order of the filter (§11).
			{"$or of keys", `{"$or":[{"id":3},{"id":1}]}`, ``, []int{1, 3}},
			{"missing field never matches", `{"age":{"$lt":100}}`, ``, []int{1, 2, 3}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := `{"filter":` + tc.filter + `}`
				if tc.options != "" {
					body = `{"filter":` + tc.filter + `,"options":` + tc.options + `}`
				}
				var got []int
				for _, it := range c.read(t, "db1", "users", body) {
					got = append(got, idOf(t, it.data))
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("read %s: ids %v, want %v", body, got, tc.want)
				}
			})
		}
	})
}

// Collation applies to update and delete as to read.
func TestWriteCollation(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":1,"name":"Alice"}`, `{"id":2,"name":"ALICE"}`, `{"id":3,"name":"bob"}`)
		m := c.okObject(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"name":"alice"},"fields":{"$set":{"age":1}},"options":{"collation":{"case":"ci"}}}`)
		if intOf(t, m["modified_count"]) != 2 {
			t.Errorf("ci update modified %v", m["modified_count"])
		}
		c.ok(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"name":{"$eq":"BOB","collation":{"case":"ci"}}}}`)
		equalStrings(t, "after", c.all(t, "db1", "users"), []string{`{"id":1,"name":"Alice","age":1}`, `{"id":2,"name":"ALICE","age":1}`})
	})
}

// idOf returns the integer id of a document.
func idOf(t testing.TB, doc []byte) int {
	t.Helper()
	var d struct{ ID *int }
	if err := json.Unmarshal(doc, &d); err != nil || d.ID == nil {
		t.Fatalf("document without an integer id: %s", doc)
	}
	return *d.ID
}

// A client that stops reading a stream midway leaves the server well: the
// read ends, later requests are answered, and the store closes cleanly at
// the end of the test (no iterator left open).
func TestReadClientGoesAway(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		pad := strings.Repeat("x", 1000)
		for batch := range 20 {
			var docs []string
			for i := range 100 {
				docs = append(docs, fmt.Sprintf(`{"id":%d,"name":"%s"}`, batch*100+i, pad))
			}
			c.insert(t, "db1", "users", docs...)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, "POST", c.base+docPath("db1", "users", "read"), strings.NewReader(`{"filter":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(res.Body).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, `{"result":{"data":{"id":0,`) {
			t.Fatalf("first line %q (%v)", line, err)
		}
		cancel()
		res.Body.Close()

		if got := c.docs(t, "db1", "users", `{"filter":{"id":1999}}`); len(got) != 1 {
			t.Errorf("read after a client went away: %q", got)
		}
	})
}
