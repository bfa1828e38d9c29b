package apitest

import (
	"encoding/json"
	"strings"
	"testing"
)

// The schema of the original's TestFilteringOnArrays, cut down.
const nestedArraysSchema = `{"title":"nested","primary_key":["pkey_int"],"properties":{
	"pkey_int":{"type":"integer"},
	"arr_obj":{"type":"array","items":{"type":"object","properties":{
		"name":{"type":"string"},"zipcodes":{"type":"array","items":{"type":"string"}}}}},
	"string_arr":{"type":"array","items":{"type":"string"}},
	"arr_of_arr":{"type":"array","items":{"type":"array","items":{"type":"string"}}},
	"obj":{"type":"object","properties":{
		"array_obj":{"type":"array","items":{"type":"object","properties":{"university":{"type":"string"}}}},
		"str_field":{"type":"string"}}}}}`

var nestedArraysDocs = []string{
	`{"pkey_int":1,"arr_of_arr":[["shopping","clothes ( > 😀"],["tennis"]],"obj":{"array_obj":[{"university":"abc@university"},{"university":"cal@university"}],"str_field":"masters"},"arr_obj":[{"name":"classic","zipcodes":["95008","94089"]}],"string_arr":["paris","italy"]}`,
	`{"pkey_int":2,"arr_of_arr":[["product","branding"],["marketing"]],"obj":{"array_obj":[{"university":"stan@university"}],"str_field":"bachelors"},"arr_obj":[{"name":"exemplary","zipcodes":["1234"]},{"name":"Classic"}],"string_arr":["london"]}`,
	`{"pkey_int":3,"arr_of_arr":[["books","product"]],"obj":{"array_obj":[]},"arr_obj":[{"name":"demo","zipcodes":["95123"]}],"string_arr":["rome","italy"]}`,
	`{"pkey_int":4}`,
}

// Filters reach into arrays of objects and arrays of arrays, as in the
// final Tigris server: read, count, explain, search, update and delete
// agree, on the 2022 and the 2023 routes.
func TestFiltersWithinArrays(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "p1")
		c.createColl(t, "p1", "nested", nestedArraysSchema)
		c.insert(t, "p1", "nested", nestedArraysDocs...)
		ids := func(path, body string) string {
			t.Helper()
			var out []string
			for _, it := range parseStream(t, c.ok(t, "POST", path, body)) {
				var d struct{ Pkey_int json.Number }
				if err := json.Unmarshal(it.data, &d); err != nil {
					t.Fatal(err)
				}
				out = append(out, d.Pkey_int.String())
			}
			return strings.Join(out, " ")
		}
		for _, tc := range []struct {
			filter, options, want string
			plan                  string // the start of explain's plan
		}{
			{`{"arr_obj.name":"classic"}`, "", "1", "scan"},
			{`{"arr_obj.name":"classic"}`, `{"collation":{"case":"ci"}}`, "1 2", "scan"},
			{`{"arr_obj.zipcodes":94089}`, "", "1", "scan"},
			{`{"arr_of_arr":"clothes ( > 😀"}`, "", "1", "scan"},
			{`{"arr_of_arr":"product"}`, "", "2 3", "scan"},
			{`{"obj.array_obj.university":"cal@university"}`, "", "1", "scan"},
			{`{"arr_obj.name":{"$gte":"d","$lt":"f"}}`, "", "2 3", "scan"},
			{`{"arr_obj.name":{"$in":["demo","exemplary"]}}`, "", "2 3", "scan"},
			{`{"arr_obj.name":{"$ne":"classic"}}`, "", "2 3 4", "scan"},
			// The other conditions choose the plan: the index of
			// string_arr, the key's range.
			{`{"$and":[{"arr_of_arr":"product"},{"string_arr":"italy"}]}`, "", "3", "index: some element of string_arr = italy"},
			{`{"arr_of_arr":"product","pkey_int":{"$gte":3}}`, "", "3", "primary key range"},
			{`{"$or":[{"arr_obj.name":"demo"},{"string_arr":"london"}]}`, "", "2 3", "scan"},
		} {
			body := `{"filter":` + tc.filter
			if tc.options != "" {
				body += `,"options":` + tc.options
			}
			body += "}"
			if got := ids(docPath("p1", "nested", "read"), body); got != tc.want {
				t.Errorf("read %s: %q, want %q", body, got, tc.want)
			}
			if got := ids(p23Doc("p1", "nested", "read"), body); got != tc.want {
				t.Errorf("2023 read %s: %q, want %q", body, got, tc.want)
			}
			more := ""
			if tc.options != "" {
				more = `,"collation":{"case":"ci"}`
			}
			if got, want := c.count(t, "p1", "nested", tc.filter, more), len(strings.Fields(tc.want)); got != int64(want) {
				t.Errorf("count %s: %d, want %d", body, got, want)
			}
			ex := c.okObject(t, "POST", docPath("p1", "nested", "explain"), body)
			if plan := str(t, ex, "plan"); !strings.HasPrefix(plan, tc.plan) {
				t.Errorf("explain %s: plan %q, want %q", body, plan, tc.plan)
			}
		}
		// Search takes them too (the search index holds the values inside
		// arrays under the field's path).
		for filter, want := range map[string]string{
			`{"arr_obj.name":"classic"}`:                     "1",
			`{"obj.array_obj.university":"stan@university"}`: "2",
			`{"arr_of_arr":"product"}`:                       "2 3",
		} {
			got := strings.Join(hitField(t, c.search(t, "p1", "nested", `{"q":"","filter":`+filter+`,"sort":[{"pkey_int":"$asc"}]}`), "pkey_int"), " ")
			if got != want {
				t.Errorf("search %s: %q, want %q", filter, got, want)
			}
		}
		// Refused with a reason: an array value, and operators that do not
		// apply inside arrays of objects.
		wantError(t, c.do(t, "POST", docPath("p1", "nested", "read"), `{"filter":{"arr_of_arr":["product","branding"]}}`),
			400, "INVALID_ARGUMENT", `unsupported value type: field 'arr_of_arr' lies inside an array, and a filter compares the values there one at a time, with a string, not with ["product","branding"]`)
		wantError(t, c.do(t, "POST", docPath("p1", "nested", "read"), `{"filter":{"arr_obj.name":{"$regex":"^c"}}}`),
			400, "INVALID_ARGUMENT", "$regex does not apply to 'arr_obj.name', a field inside an array of objects or of arrays: compare its values ($eq, $gt, $gte, $lt, $lte, $in, $ne)")
		wantError(t, c.do(t, "POST", docPath("p1", "nested", "read"), `{"filter":{"arr_obj.nope":"x"}}`),
			400, "INVALID_ARGUMENT", "querying on non schema field 'arr_obj.nope'")

		// Update and delete take the same filters.
		m := c.okObject(t, "PUT", p23Doc("p1", "nested", "update"), `{"filter":{"arr_of_arr":"product"},"fields":{"$set":{"obj.str_field":"x"}}}`)
		if intOf(t, m["modified_count"]) != 2 {
			t.Errorf("update by an inner array's element: %v", m)
		}
		if got := ids(docPath("p1", "nested", "read"), `{"filter":{"obj.str_field":"x"}}`); got != "2 3" {
			t.Errorf("after the update: %q", got)
		}
		m = c.okObject(t, "DELETE", p23Doc("p1", "nested", "delete"), `{"filter":{"obj.array_obj.university":"cal@university"}}`)
		if intOf(t, m["modified_count"]) != 1 {
			t.Errorf("delete by a field of an array's objects: %v", m)
		}
		if got := ids(docPath("p1", "nested", "read"), `{"filter":{}}`); got != "2 3 4" {
			t.Errorf("after the delete: %q", got)
		}
	})
}
