package apitest

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSortAndExplain(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", `{"title":"users","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"}}}`)
		c.insert(t, "shop", "users", `{"id":1,"name":"Ann","age":30}`, `{"id":2,"name":"bob","age":25}`, `{"id":3,"name":"Cy","age":41}`, `{"id":4,"name":"Dee"}`)

		for _, tc := range []struct{ body, want string }{
			{`{"filter":{},"sort":[{"age":"$desc"}],"fields":{"id":1}}`, `[{"id":3} {"id":1} {"id":2} {"id":4}]`},
			{`{"filter":{},"sort":[{"age":"$asc"}],"fields":{"id":1}}`, `[{"id":2} {"id":1} {"id":3} {"id":4}]`},
			{`{"filter":{"age":{"$gt":26}},"sort":[{"age":"$asc"}],"fields":{"id":1}}`, `[{"id":1} {"id":3}]`},
			{`{"filter":{"name":{"$lt":"Z"}},"sort":[{"name":"$desc"}],"fields":{"id":1},"options":{"limit":2}}`, `[{"id":4} {"id":3}]`},
			{`{"filter":{"age":{"$gt":1}},"sort":[{"name":"$asc"}],"fields":{"id":1},"options":{"skip":1}}`, `[{"id":3} {"id":2}]`},
		} {
			if got := c.docs(t, "shop", "users", tc.body); strings.Join(got, " ") != strings.Trim(tc.want, "[]") {
				t.Errorf("%s: got %v, want %s", tc.body, got, tc.want)
			}
		}
		wantError(t, c.do(t, "POST", docPath("shop", "users", "read"), `{"filter":{},"sort":[{"age":"up"}]}`), 400, "INVALID_ARGUMENT", "sort order of 'age' must be $asc or $desc, not 'up'")
		wantError(t, c.do(t, "POST", docPath("shop", "users", "read"), `{"filter":{},"sort":[{"nope":"$asc"}]}`), 400, "INVALID_ARGUMENT", "cannot sort on field 'nope': not a scalar field of the schema")
		wantError(t, c.do(t, "POST", docPath("shop", "users", "read"), `{"filter":{},"sort":{"age":"$asc"}}`), 400, "INVALID_ARGUMENT", `sort must be an array such as [{"field":"$asc"}]`)

		explain := func(body string) map[string]any {
			var m map[string]any
			if err := json.Unmarshal(c.ok(t, "POST", docPath("shop", "users", "explain"), body).body, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		if m := explain(`{"filter":{"name":"bob"}}`); !strings.HasPrefix(m["plan"].(string), "index") || m["matched"].(float64) != 1 {
			t.Fatalf("explain of a non-key equality: %v", m)
		}
		if m := explain(`{"filter":{"id":2}}`); m["plan"] != "point" {
			t.Fatalf("explain of a key equality: %v", m)
		}
		if m := explain(`{"filter":{}}`); m["plan"] != "scan" || m["matched"].(float64) != 4 {
			t.Fatalf("explain of the empty filter: %v", m)
		}
	})
}
