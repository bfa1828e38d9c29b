package apitest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The final clients' schema annotations: defaults filled at insert and
// replace, createdAt and updatedAt set by the server, the index flags and
// vectors accepted; a default of the wrong type refused.
func TestSchemaAnnotations(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "orders", `{"title":"orders","primary_key":["id"],"properties":{
			"id":{"type":"integer","index":true,"sort":true},
			"status":{"type":"string","default":"new","searchIndex":true,"facet":true},
			"qty":{"type":"integer","default":1},
			"ref":{"type":"string","default":"cuid()"},
			"token":{"type":"string","format":"uuid","default":"uuid()"},
			"created":{"type":"string","format":"date-time","createdAt":true},
			"updated":{"type":"string","format":"date-time","updatedAt":true},
			"meta":{"type":"object","properties":{"at":{"type":"string","format":"date-time","default":"now()"}}},
			"embedding":{"type":"array","format":"vector","dimensions":3}}}`)
		start := time.Now().UTC().Add(-time.Second)
		c.insert(t, "shop", "orders", `{"id":1,"embedding":[0.1,0.2,0.3]}`, `{"id":2,"status":"paid","qty":5,"created":"2020-01-01T00:00:00Z"}`)
		doc := func(id string) map[string]any {
			t.Helper()
			items := c.read(t, "shop", "orders", `{"filter":{"id":`+id+`}}`)
			if len(items) != 1 {
				t.Fatalf("read id %s: %d documents", id, len(items))
			}
			var d map[string]any
			if err := json.Unmarshal(items[0].data, &d); err != nil {
				t.Fatal(err)
			}
			return d
		}
		inRange := func(what string, v any) time.Time {
			t.Helper()
			s, _ := v.(string)
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil || at.Before(start) || at.After(time.Now().Add(time.Second)) {
				t.Errorf("%s = %v, want the time of the write", what, v)
			}
			return at
		}
		d1 := doc("1")
		if d1["status"] != "new" || d1["qty"] != float64(1) {
			t.Errorf("defaults: %v", d1)
		}
		if ref, _ := d1["ref"].(string); len(ref) != 25 || !strings.HasPrefix(ref, "c") {
			t.Errorf("cuid() default: %v", d1["ref"])
		}
		if tok, _ := d1["token"].(string); len(tok) != 36 {
			t.Errorf("uuid() default: %v", d1["token"])
		}
		created := inRange("createdAt", d1["created"])
		inRange("now() in an object", d1["meta"].(map[string]any)["at"])
		if _, ok := d1["updated"]; ok {
			t.Errorf("updatedAt set at insert: %v", d1["updated"])
		}
		if e, _ := d1["embedding"].([]any); len(e) != 3 {
			t.Errorf("vector not stored: %v", d1["embedding"])
		}
		d2 := doc("2")
		if d2["status"] != "paid" || d2["qty"] != float64(5) || d2["created"] != "2020-01-01T00:00:00Z" {
			t.Errorf("given values replaced by defaults: %v", d2)
		}
		if got := c.count(t, "shop", "orders", `{"status":"new"}`, ""); got != 1 {
			t.Errorf("count by a defaulted field: %d, want 1 (defaults are indexed)", got)
		}

		// An update stamps updatedAt and leaves createdAt.
		time.Sleep(10 * time.Millisecond)
		c.ok(t, "PUT", docPath("shop", "orders", "update"), `{"filter":{"id":1},"fields":{"$set":{"qty":2}}}`)
		d1 = doc("1")
		updated := inRange("updatedAt", d1["updated"])
		if !updated.After(created) || d1["created"] != doc("1")["created"] {
			t.Errorf("after update: created %v, updated %v", d1["created"], d1["updated"])
		}
		c.ok(t, "PUT", docPath("shop", "orders", "update"), `{"filter":{"id":1},"fields":{"$unset":["status"]}}`)
		if again := inRange("updatedAt", doc("1")["updated"]); !again.After(updated) {
			t.Errorf("a second update left updatedAt at %v", again)
		}
		// A replace is a new document: its defaults again.
		c.ok(t, "PUT", docPath("shop", "orders", "replace"), `{"documents":[{"id":1}]}`)
		if d := doc("1"); d["status"] != "new" || d["updated"] != nil {
			t.Errorf("after replace: %v", d)
		}

		// A default of the wrong type is refused.
		for _, bad := range []string{`{"type":"integer","default":"x"}`, `{"type":"string","default":"now()"}`, `{"type":"integer","createdAt":true}`} {
			r := c.do(t, "POST", collPath("shop", "bad", "createOrUpdate"), `{"schema":{"title":"bad","properties":{"id":{"type":"integer"},"f":`+bad+`},"primary_key":["id"]}}`)
			wantError(t, r, 400, "INVALID_ARGUMENT", anyMessage)
		}
	})
}
