package apitest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// _tigris_created_at and _tigris_updated_at are filters on the documents'
// times, as in the final Tigris server: read, count, update and delete
// agree, and explain shows the plan the other conditions chose.
func TestFiltersOnDocumentTimes(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "p1")
		c.createColl(t, "p1", "times", `{"title":"times","primary_key":["id"],"properties":{"id":{"type":"integer"},"ok":{"type":"boolean"}}}`)
		c.insert(t, "p1", "times", `{"id":1,"ok":true}`, `{"id":2,"ok":false}`)
		time.Sleep(5 * time.Millisecond)
		c.insert(t, "p1", "times", `{"id":3,"ok":true}`, `{"id":4,"ok":false}`)
		items := c.read(t, "p1", "times", `{"filter":{"id":2}}`)
		if len(items) != 1 {
			t.Fatalf("read id 2: %v", items)
		}
		first := items[0].createdAt
		ids := func(filter string) string {
			t.Helper()
			var out []string
			for _, it := range c.read(t, "p1", "times", `{"filter":`+filter+`}`) {
				var d struct{ ID json.Number }
				if err := json.Unmarshal(it.data, &d); err != nil {
					t.Fatal(err)
				}
				out = append(out, d.ID.String())
			}
			got := strings.Join(out, " ")
			if n := c.count(t, "p1", "times", filter, ""); n != int64(len(out)) {
				t.Errorf("count %s: %d, read %q", filter, n, got)
			}
			return got
		}
		for _, tc := range []struct{ filter, want, plan string }{
			{`{"_tigris_created_at":{"$gt":"` + first + `"}}`, "3 4", "scan"},
			{`{"_tigris_created_at":{"$lte":"` + first + `"}}`, "1 2", "scan"},
			{`{"_tigris_created_at":"` + first + `"}`, "1 2", "scan"},
			{`{"$and":[{"_tigris_created_at":{"$gt":"2022-12.22T17:42:34Z"}},{"ok":true}]}`, "1 3", "index: ok = true"},
			{`{"_tigris_updated_at":{"$gt":"2000-01-01T00:00:00Z"}}`, "", "scan"}, // none updated yet
		} {
			if got := ids(tc.filter); got != tc.want {
				t.Errorf("read %s: %q, want %q", tc.filter, got, tc.want)
			}
			ex := c.okObject(t, "POST", p23Doc("p1", "times", "explain"), `{"filter":`+tc.filter+`}`)
			if plan := str(t, ex, "plan"); !strings.HasPrefix(plan, tc.plan) {
				t.Errorf("explain %s: %q, want %q", tc.filter, plan, tc.plan)
			}
		}
		m := c.okObject(t, "PUT", p23Doc("p1", "times", "update"), `{"filter":{"_tigris_created_at":{"$gt":"`+first+`"}},"fields":{"$set":{"ok":true}}}`)
		if intOf(t, m["modified_count"]) != 2 {
			t.Errorf("update by creation time: %v", m)
		}
		if got := ids(`{"_tigris_updated_at":{"$gt":"2000-01-01T00:00:00Z"}}`); got != "3 4" {
			t.Errorf("updated since: %q", got)
		}
		m = c.okObject(t, "DELETE", p23Doc("p1", "times", "delete"), `{"filter":{"_tigris_updated_at":{"$gt":"2000-01-01T00:00:00Z"}}}`)
		if intOf(t, m["modified_count"]) != 2 {
			t.Errorf("delete by update time: %v", m)
		}
		if got := ids(`{}`); got != "1 2" {
			t.Errorf("after the delete: %q", got)
		}
		wantError(t, c.do(t, "POST", p23Doc("p1", "times", "read"), `{"filter":{"_tigris_created_at":5}}`),
			400, "INVALID_ARGUMENT", "unsupported value type: field '_tigris_created_at' takes a date-time string, not 5")
		wantError(t, c.do(t, "POST", p23Doc("p1", "times", "search"), `{"q":"","filter":{"_tigris_created_at":{"$gt":"`+first+`"}}}`),
			400, "INVALID_ARGUMENT", "search filters do not take _tigris_created_at: the search index counts and facets what a filter selects, and cannot answer it; use it in a read's filter")
	})
}

// An update that changes a key field moves the document (the original's
// TestUpdate_MutatePrimaryKey), and a new key that is taken is refused
// with nothing written.
func TestUpdateMovesKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "p1")
		c.createColl(t, "p1", "moved", `{"title":"moved","primary_key":["a","b"],"properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"integer"}}}`)
		c.insert(t, "p1", "moved", `{"a":1,"b":"1","c":1}`, `{"a":5,"b":"5","c":5}`)
		before := c.read(t, "p1", "moved", `{"filter":{"c":1}}`)[0]
		m := c.okObject(t, "PUT", p23Doc("p1", "moved", "update"), `{"filter":{"c":1},"fields":{"$set":{"b":"2"}}}`)
		if intOf(t, m["modified_count"]) != 1 {
			t.Fatalf("move: %v", m)
		}
		if got := c.all(t, "p1", "moved"); strings.Join(got, " ") != `{"a":1,"b":"2","c":1} {"a":5,"b":"5","c":5}` {
			t.Errorf("after the move: %v", got)
		}
		after := c.read(t, "p1", "moved", `{"filter":{"a":1,"b":"2"}}`)
		if len(after) != 1 || after[0].createdAt != before.createdAt || after[0].updatedAt == "" {
			t.Errorf("moved document's times: before %+v, after %+v", before, after)
		}
		if got := c.docs(t, "p1", "moved", `{"filter":{"c":1}}`); len(got) != 1 { // the index of c points at the new key
			t.Errorf("by c after the move: %v", got)
		}
		snap := c.snapshot(t)
		wantError(t, c.do(t, "PUT", p23Doc("p1", "moved", "update"), `{"filter":{"c":1},"fields":{"$set":{"a":5,"b":"5"}}}`),
			409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"a":5,"b":"5"} exists already: the update would move a document onto it`)
		wantError(t, c.do(t, "PUT", p23Doc("p1", "moved", "update"), `{"filter":{"c":1},"fields":{"$set":{"a":null}}}`),
			400, "INVALID_ARGUMENT", "primary key field can't be set as null")
		wantError(t, c.do(t, "PUT", p23Doc("p1", "moved", "update"), `{"filter":{"c":1},"fields":{"$unset":["b"]}}`),
			400, "INVALID_ARGUMENT", "primary key field can't be unset")
		if got := c.snapshot(t); got != snap {
			t.Errorf("a refused update changed the data:\n%s\n%s", snap, got)
		}
	})
}
