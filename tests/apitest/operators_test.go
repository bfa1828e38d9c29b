package apitest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The filter operators beyond the comparisons ($ne, $in, $exists, and the
// final API's $contains, $not, $regex), in reads, updates, deletes and
// explain, on both backends; searches refuse those the search index cannot
// answer.
func TestFilterOperators(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", `{"title":"users","primary_key":["id"],"properties":{
			"id":{"type":"integer"},"n":{"type":"integer"},"name":{"type":"string"},
			"tags":{"type":"array","items":{"type":"string"}},"addr":{"type":"object","properties":{"city":{"type":"string"}}}}}`)
		c.insert(t, "shop", "users",
			`{"id":1,"n":1,"name":"Alice Smith","tags":["admin","ops"],"addr":{"city":"Oslo"}}`,
			`{"id":2,"n":2,"name":"bob jones","tags":["dev"],"addr":{"city":"Bergen"}}`,
			`{"id":3,"n":3,"name":"Carol Smith","tags":[],"addr":{"city":"Oslo"}}`,
			`{"id":4,"name":"dave"}`,
			`{"id":5,"n":5,"name":"Eve","tags":["ops","dev"]}`)
		ids := func(filter string) []int {
			t.Helper()
			var out []int
			for _, it := range c.read(t, "shop", "users", `{"filter":`+filter+`}`) {
				var d struct{ ID int }
				if err := json.Unmarshal(it.data, &d); err != nil {
					t.Fatal(err)
				}
				out = append(out, d.ID)
			}
			return out
		}
		for _, tc := range []struct {
			filter string
			want   []int
		}{
			{`{"n":{"$ne":2}}`, []int{1, 3, 4, 5}},
			{`{"n":{"$in":[2,5,9]}}`, []int{2, 5}},
			{`{"id":{"$in":[4,1]}}`, []int{1, 4}},
			{`{"tags":{"$in":["dev","admin"]}}`, []int{1, 2, 5}},
			{`{"n":{"$exists":false}}`, []int{4}},
			{`{"addr.city":{"$exists":true}}`, []int{1, 2, 3}},
			{`{"name":{"$contains":"Smith"}}`, []int{1, 3}},
			{`{"name":{"$contains":"SMITH","collation":{"case":"ci"}}}`, []int{1, 3}},
			{`{"name":{"$not":"Smith"}}`, []int{2, 4, 5}},
			{`{"name":{"$regex":"^[A-Z][a-z]+ Smith$"}}`, []int{1, 3}},
			{`{"tags":{"$regex":"^o"}}`, []int{1, 5}},
			{`{"$or":[{"n":{"$in":[1]}},{"name":{"$regex":"^d"}}]}`, []int{1, 4}},
			{`{"addr.city":"Oslo","name":{"$ne":"Alice Smith"}}`, []int{3}},
		} {
			if got := ids(tc.filter); !slices.Equal(got, tc.want) {
				t.Errorf("read %s: ids %v, want %v", tc.filter, got, tc.want)
			}
		}

		// $in on an indexed field is answered from the index.
		var plan map[string]any
		if err := json.Unmarshal(c.ok(t, "POST", docPath("shop", "users", "explain"), `{"filter":{"n":{"$in":[2,5]}}}`).body, &plan); err != nil {
			t.Fatal(err)
		}
		if p, _ := plan["plan"].(string); !strings.HasPrefix(p, "index") || plan["matched"].(float64) != 2 {
			t.Errorf("explain of $in: %v, want an index plan matching 2", plan)
		}

		// Updates and deletes take them too.
		r := c.okObject(t, "PUT", docPath("shop", "users", "update"), `{"filter":{"name":{"$regex":"Smith$"}},"fields":{"$set":{"n":10}}}`)
		if fmt.Sprint(r["modified_count"]) != "2" {
			t.Errorf("update by $regex: %v, want 2 modified", r)
		}
		r = c.okObject(t, "DELETE", docPath("shop", "users", "delete"), `{"filter":{"id":{"$in":[4,5]}}}`)
		if fmt.Sprint(r["modified_count"]) != "2" {
			t.Errorf("delete by $in: %v, want 2 deleted", r)
		}
		if got := ids(`{"n":{"$ne":10}}`); !slices.Equal(got, []int{2}) {
			t.Errorf("after the update and delete: %v, want [2]", got)
		}

		// Bad input.
		read := func(filter string) *response {
			return c.do(t, "POST", docPath("shop", "users", "read"), `{"filter":`+filter+`}`)
		}
		wantError(t, read(`{"name":{"$regex":"a("}}`), 400, "INVALID_ARGUMENT", "$regex is not a valid regular expression: error parsing regexp: missing closing ): `a(`")
		msg := wantError(t, read(`{"name":{"$regex":"a{1000}b{1000}c{1000}d{1000}e{1000}"}}`), 400, "INVALID_ARGUMENT", anyMessage)
		if !strings.HasPrefix(msg, "$regex is too costly") {
			t.Errorf("a costly $regex: %q", msg)
		}
		wantError(t, read(`{"n":{"$in":[]}}`), 400, "INVALID_ARGUMENT", "$in on field 'n' needs at least one value")
		wantError(t, read(`{"n":{"$contains":"1"}}`), 400, "INVALID_ARGUMENT", "$contains applies to string fields, and 'n' is not one")
		wantError(t, read(`{"n":{"$exists":"yes"}}`), 400, "INVALID_ARGUMENT", "$exists on field 'n' takes true or false")
		for _, op := range []string{`{"n":{"$ne":1}}`, `{"name":{"$regex":"a"}}`, `{"n":{"$exists":true}}`} {
			wantError(t, c.do(t, "POST", docPath("shop", "users", "search"), fmt.Sprintf(`{"q":"","filter":%s}`, op)), 400, "INVALID_ARGUMENT", anyMessage)
		}
		if got := c.do(t, "POST", docPath("shop", "users", "search"), `{"q":"","filter":{"n":{"$in":[2]}}}`); got.status != 200 || !strings.Contains(string(got.body), `"id":2`) {
			t.Errorf("search with $in: %s", got)
		}
	})
}

// The final API's update operators on both backends; an update that fails
// on any document changes none.
func TestUpdateOperators(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "items", `{"title":"items","primary_key":["id"],"properties":{
			"id":{"type":"integer"},"stock":{"type":"integer"},"price":{"type":"number"},
			"tags":{"type":"array","items":{"type":"string"}},"note":{"type":"string"}}}`)
		c.insert(t, "shop", "items",
			`{"id":1,"stock":10,"price":2.5,"tags":["a"],"note":"x"}`,
			`{"id":2,"stock":9223372036854775806,"price":1}`)
		update := func(filter, fields string) *response {
			return c.do(t, "PUT", docPath("shop", "items", "update"), `{"filter":`+filter+`,"fields":`+fields+`}`)
		}
		doc := func(id int) string {
			t.Helper()
			items := c.read(t, "shop", "items", fmt.Sprintf(`{"filter":{"id":%d}}`, id))
			if len(items) != 1 {
				t.Fatalf("document %d: %d found", id, len(items))
			}
			return string(items[0].data)
		}
		if r := update(`{"id":1}`, `{"$increment":{"stock":5},"$multiply":{"price":2},"$push":{"tags":"b"},"$unset":["note"]}`); r.status != 200 {
			t.Fatalf("update: %s", r)
		}
		if got, want := doc(1), `{"id":1,"stock":15,"price":5,"tags":["a","b"]}`; got != want {
			t.Errorf("after the update: %s, want %s", got, want)
		}
		if r := update(`{"id":1}`, `{"$decrement":{"stock":20},"$divide":{"price":4}}`); r.status != 200 {
			t.Fatalf("update: %s", r)
		}
		if got, want := doc(1), `{"id":1,"stock":-5,"price":1.25,"tags":["a","b"]}`; got != want {
			t.Errorf("after the second update: %s, want %s", got, want)
		}

		before1, before2 := doc(1), doc(2)
		wantError(t, update(`{"id":{"$gt":0}}`, `{"$divide":{"stock":0}}`), 400, "INVALID_ARGUMENT", "division by 0 is not allowed")
		// Document 1 can take +1, document 2 overflows: neither changes.
		wantError(t, update(`{"id":{"$gt":0}}`, `{"$increment":{"stock":2}}`), 400, "INVALID_ARGUMENT",
			"$increment of 'stock' overflows the field: 9223372036854775806 + 2")
		wantError(t, update(`{"id":1}`, `{"$increment":{"stock":0.5}}`), 400, "INVALID_ARGUMENT", "floating operations are not allowed on integer field 'stock'")
		wantError(t, update(`{"id":1}`, `{"$push":{"tags":5}}`), 400, "INVALID_ARGUMENT", anyMessage)
		if doc(1) != before1 || doc(2) != before2 {
			t.Errorf("a refused update changed documents: %s %s, were %s %s", doc(1), doc(2), before1, before2)
		}
	})
}
