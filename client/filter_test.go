package client_test

import (
	"encoding/json"
	"testing"

	"github.com/foliodb/folio/client"
)

// Filters, updates and sorts are written as the API reads them.
func TestWireForms(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{client.All(), `{}`},
		{client.Filter{}, `{}`},
		{client.Eq("a.b", "x"), `{"a.b":"x"}`},
		{client.Gt("n", 1), `{"n":{"$gt":1}}`},
		{client.Gte("n", 1.5), `{"n":{"$gte":1.5}}`},
		{client.Lt("n", -1), `{"n":{"$lt":-1}}`},
		{client.Lte("t", "z"), `{"t":{"$lte":"z"}}`},
		{client.And(), `{}`},
		{client.And(client.Eq("a", 1)), `{"a":1}`},
		{client.And(client.Eq("a", 1), client.Eq("b", 2)), `{"$and":[{"a":1},{"b":2}]}`},
		{client.Or(client.Eq("a", 1), client.And(client.Eq("b", 2), client.Lt("c", 3))), `{"$or":[{"a":1},{"$and":[{"b":2},{"c":{"$lt":3}}]}]}`},
		{client.RawFilter([]byte(`{"x":{"$eq":[1,2]}}`)), `{"x":{"$eq":[1,2]}}`},
		{client.Set("b", 2).Set("a", 1), `{"$set":{"b":2,"a":1}}`},
		{client.Unset("x", "y"), `{"$unset":["x","y"]}`},
		{client.Set("a", nil).Unset("b"), `{"$set":{"a":null},"$unset":["b"]}`},
		{client.RawUpdate([]byte(`{"$set":{"z":0}}`)), `{"$set":{"z":0}}`},
		{[]client.SortField{client.Asc("a"), client.Desc("b")}, `[{"a":"$asc"},{"b":"$desc"}]`},
		{client.SearchRequest{}, `{}`},
		{client.SearchRequest{Q: "x", Filter: client.Eq("a", 1), Facets: map[string]int{"f": 0}, Page: 2, PageSize: 5, CaseInsensitive: true},
			`{"q":"x","filter":{"a":1},"facet":{"f":{}},"page":2,"page_size":5,"collation":{"case":"ci"}}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("%#v: got %s (%v), want %s", tc.v, got, err, tc.want)
		}
	}
	// Setting on a shared update does not change it.
	base := client.Set("a", 1)
	_ = base.Set("b", 2)
	if got, _ := json.Marshal(base); string(got) != `{"$set":{"a":1}}` {
		t.Errorf("Set changed the update it was called on: %s", got)
	}
	if _, err := json.Marshal(client.Set("a", make(chan int))); err == nil {
		t.Error("an update with a value JSON cannot hold did not fail")
	}
}
