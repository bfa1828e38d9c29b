package apitest

import (
	"strings"
	"testing"
)

// The additions of the original's releases up to its last /v1/databases
// one (beta.19, November 2022), with the requests clients of that time send.

func TestNamesWithDash(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.ok(t, "POST", dbPath("test-coll", "create"), "")
		c.ok(t, "POST", collPath("test-coll", "test-coll", "createOrUpdate"),
			`{"schema":{"title":"test-coll","properties":{"id":{"type":"integer"}},"primary_key":["id"]}}`)
		c.insert(t, "test-coll", "test-coll", `{"id":1}`)
		equalStrings(t, "documents", c.all(t, "test-coll", "test-coll"), []string{`{"id":1}`})
		list := string(c.ok(t, "POST", dbPath("test-coll", "collections/list"), "").body)
		if !strings.Contains(list, `"test-coll"`) {
			t.Errorf("list collections %s does not name test-coll", list)
		}
		// A dash is not allowed first.
		wantError(t, c.do(t, "POST", dbPath("-coll", "create"), ""), 400, "INVALID_ARGUMENT", "invalid database name")
		c.ok(t, "DELETE", collPath("test-coll", "test-coll", "drop"), "")
		c.ok(t, "DELETE", dbPath("test-coll", "drop"), "")
	})
}

func TestWriteLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withUsers(t, c)
		c.insert(t, "db1", "users", `{"id":5,"name":"a"}`, `{"id":2,"name":"a"}`, `{"id":9,"name":"a"}`, `{"id":7,"name":"b"}`)

		// Update: at most limit documents, the first in key order.
		m := c.okObject(t, "PUT", docPath("db1", "users", "update"),
			`{"filter":{"name":"a"},"fields":{"$set":{"age":1}},"options":{"limit":1}}`)
		if intOf(t, m["modified_count"]) != 1 {
			t.Errorf("update with limit 1: %v, want modified_count 1", m)
		}
		equalStrings(t, "after update limit 1", c.all(t, "db1", "users"), []string{
			`{"id":2,"name":"a","age":1}`, `{"id":5,"name":"a"}`, `{"id":7,"name":"b"}`, `{"id":9,"name":"a"}`})
		// A limit as a string (proto3 JSON writes 64-bit integers so).
		m = c.okObject(t, "PUT", docPath("db1", "users", "update"),
			`{"filter":{"name":"a"},"fields":{"$set":{"age":2}},"options":{"limit":"2"}}`)
		if intOf(t, m["modified_count"]) != 2 {
			t.Errorf("update with limit \"2\": %v, want modified_count 2", m)
		}
		equalStrings(t, "after update limit 2", c.all(t, "db1", "users"), []string{
			`{"id":2,"name":"a","age":2}`, `{"id":5,"name":"a","age":2}`, `{"id":7,"name":"b"}`, `{"id":9,"name":"a"}`})
		// A limit above the matches, and 0, change them all.
		for _, limit := range []string{"10", "0"} {
			m = c.okObject(t, "PUT", docPath("db1", "users", "update"),
				`{"filter":{"name":"a"},"fields":{"$set":{"age":3}},"options":{"limit":`+limit+`}}`)
			if intOf(t, m["modified_count"]) != 3 {
				t.Errorf("update with limit %s: %v, want modified_count 3", limit, m)
			}
		}

		// Delete: the same rule, and the count reported.
		m = c.okObject(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"name":"a"},"options":{"limit":2}}`)
		if intOf(t, m["modified_count"]) != 2 || m["status"] != "deleted" {
			t.Errorf("delete with limit 2: %v, want modified_count 2", m)
		}
		equalStrings(t, "after delete limit 2", c.all(t, "db1", "users"), []string{
			`{"id":7,"name":"b"}`, `{"id":9,"name":"a","age":3}`})
		m = c.okObject(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{},"options":{"limit":"1"}}`)
		if intOf(t, m["modified_count"]) != 1 {
			t.Errorf("delete with limit \"1\": %v, want modified_count 1", m)
		}
		equalStrings(t, "after delete limit 1", c.all(t, "db1", "users"), []string{`{"id":9,"name":"a","age":3}`})

		// In a transaction, the limit counts the transaction's own writes.
		tx := c.begin(t, "db1")
		tx.ok(t, "POST", docPath("db1", "users", "insert"), `{"documents":[{"id":1,"name":"a"},{"id":3,"name":"a"}]}`)
		tx.ok(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"name":"a"},"options":{"limit":2}}`)
		tx.ok(t, "POST", dbPath("db1", "transactions/commit"), "")
		equalStrings(t, "after delete limit 2 in a transaction", c.all(t, "db1", "users"), []string{`{"id":9,"name":"a","age":3}`})

		// Nothing is written on a bad limit.
		before := c.snapshot(t)
		wantError(t, c.do(t, "PUT", docPath("db1", "users", "update"), `{"filter":{"id":9},"fields":{"$set":{"age":4}},"options":{"limit":-1}}`),
			400, "INVALID_ARGUMENT", "limit must not be negative")
		wantError(t, c.do(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"id":9},"options":{"limit":-1}}`),
			400, "INVALID_ARGUMENT", "limit must not be negative")
		wantClientError(t, c.do(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"id":9},"options":{"limit":"x"}}`))
		wantClientError(t, c.do(t, "DELETE", docPath("db1", "users", "delete"), `{"filter":{"id":9},"options":{"limit":1.5}}`))
		if after := c.snapshot(t); after != before {
			t.Errorf("a refused write changed the data:\n%s\n%s", before, after)
		}
	})
}

func TestSortedHint(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		schema := `{"title":"items","properties":{"id":{"type":"integer"},"price":{"type":"number","sorted":true},"name":{"type":"string","sorted":false}},"primary_key":["id"]}`
		c.createColl(t, "db1", "items", schema)
		desc := string(c.ok(t, "POST", collPath("db1", "items", "describe"), "").body)
		if !strings.Contains(desc, `"price":{"type":"number","sorted":true}`) {
			t.Errorf("describe %s does not keep the sorted hint", desc)
		}
		c.insert(t, "db1", "items", `{"id":1,"price":3.5}`, `{"id":2,"price":1}`)
		equalStrings(t, "sorted by price", c.docs(t, "db1", "items", `{"filter":{},"sort":[{"price":"$asc"}]}`),
			[]string{`{"id":2,"price":1}`, `{"id":1,"price":3.5}`})
		wantError(t, c.do(t, "POST", collPath("db1", "bad", "createOrUpdate"),
			`{"schema":{"title":"bad","properties":{"id":{"type":"integer","sorted":1}}}}`),
			400, "INVALID_ARGUMENT", "sorted of field 'id' must be a boolean")
	})
}
