package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// groupedChunk is one line of a grouped search's stream.
type groupedChunk struct {
	Hits  []json.RawMessage `json:"hits"`
	Group []struct {
		GroupKeys []string `json:"group_keys"`
		Hits      []struct {
			Data     map[string]any `json:"data"`
			Metadata struct {
				CreatedAt string `json:"created_at"`
				UpdatedAt string `json:"updated_at"`
			} `json:"metadata"`
		} `json:"hits"`
	} `json:"group"`
	Facets map[string]struct {
		Counts []struct {
			Count int64  `json:"count"`
			Value string `json:"value"`
		} `json:"counts"`
		Stats json.RawMessage `json:"stats"`
	} `json:"facets"`
	Meta struct {
		Found      int64 `json:"found"`
		TotalPages int32 `json:"total_pages"`
		Page       struct {
			Current int32 `json:"current"`
			Size    int32 `json:"size"`
		} `json:"page"`
	} `json:"meta"`
}

// groupedSearch runs a search that must succeed and returns its lines,
// each {"result":{...}} with every member known.
func (c *client) groupedSearch(t testing.TB, path, body string) []groupedChunk {
	t.Helper()
	r := c.ok(t, "POST", path, body)
	var out []groupedChunk
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		var line struct {
			Result groupedChunk `json:"result"`
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("search line (%v): %s", err, sc.Bytes())
		}
		out = append(out, line.Result)
	}
	if len(out) == 0 {
		t.Fatalf("search %s answered nothing", body)
	}
	return out
}

// groups shows a chunk's groups as "keys:ids" strings.
func (ch groupedChunk) groups() []string {
	var out []string
	for _, g := range ch.Group {
		var ids []string
		for _, h := range g.Hits {
			ids = append(ids, fmt.Sprint(h.Data["id"]))
		}
		out = append(out, strings.Join(g.GroupKeys, "|")+":"+strings.Join(ids, ","))
	}
	return out
}

const placesSchema = `{"title":"places","properties":{"id":{"type":"integer"},"name":{"type":"string"},` +
	`"addr":{"type":"object","properties":{"city":{"type":"string"}}},"tags":{"type":"array","items":{"type":"string"}},` +
	`"stars":{"type":"integer"},"open":{"type":"boolean"},"at":{"type":"string","format":"date-time"}},"primary_key":["id"]}`

func setupPlaces(t *testing.T, c *client) {
	c.createDB(t, "shop")
	c.createColl(t, "shop", "places", placesSchema)
	c.insert(t, "shop", "places",
		`{"id":1,"name":"data platform","addr":{"city":"san francisco"},"tags":["abc","def"],"stars":3,"at":"2023-02-02T05:50:19Z"}`,
		`{"id":2,"name":"big data","addr":{"city":"san diego"},"tags":["foo","bar"],"stars":4,"at":"2023-02-01T05:50:19Z"}`,
		`{"id":3,"name":"basedata","addr":{"city":"san francisco"},"tags":["bar","foo"],"stars":3,"at":"2023-01-02T05:50:19Z"}`,
		`{"id":4,"name":"data data data","tags":["foo"],"stars":5,"at":"2023-03-01T00:00:00Z"}`,
		`{"id":5,"name":"no data here","addr":{"city":"san francisco"},"tags":[],"stars":4,"at":"2023-04-01T00:00:00Z"}`,
	)
}

// TestSearchGroupBy: a 2023 search with group_by answers the original's
// shape, hits empty and "group" holding each group's keys and hits: the
// groups in the order of their best hit under the sort (the original's
// own test: grouped by a nested city, sorted by date), or by relevance
// without one, each group's hits in that order and at most `limit` (3 by
// default); documents without the field group under ""; an array groups
// by its set of values; several fields; pages over groups, found and
// total_pages counting groups; facets over every match as without
// group_by; the same over gRPC (grpcapi's test).
func TestSearchGroupBy(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupPlaces(t, c)
		path := p23Coll("shop", "places", "documents/search")

		// The original's test: by city, sorted by date.
		chunks := c.groupedSearch(t, path, `{"q":"*","group_by":{"fields":["addr.city"]},"sort":[{"at":"$asc"}],"facet":{"stars":{}}}`)
		if len(chunks) != 1 {
			t.Fatalf("%d pages, want 1", len(chunks))
		}
		ch := chunks[0]
		equalStrings(t, "groups by city", ch.groups(), []string{"san francisco:3,1,5", "san diego:2", ":4"})
		if len(ch.Hits) != 0 || ch.Meta.Found != 3 || ch.Meta.TotalPages != 1 || ch.Meta.Page.Current != 1 || ch.Meta.Page.Size != 20 {
			t.Errorf("hits %d, meta %+v: want no hits, 3 groups found, 1 page", len(ch.Hits), ch.Meta)
		}
		if ch.Group[0].Hits[0].Metadata.CreatedAt == "" {
			t.Errorf("a group's hit has no created_at")
		}
		if got := fmt.Sprint(ch.Facets["stars"].Counts); got != "[{2 3} {2 4} {1 5}]" {
			t.Errorf("facets of a grouped search: %s, want every match counted", got)
		}

		// A limit, and pages of one group each, streamed and asked for.
		chunks = c.groupedSearch(t, path, `{"group_by":{"fields":["addr.city"],"limit":2},"sort":[{"at":"$desc"}],"page_size":1}`)
		var pages []string
		for _, ch := range chunks {
			if ch.Meta.Found != 3 || ch.Meta.TotalPages != 3 {
				t.Errorf("page %d: meta %+v, want 3 groups in 3 pages", ch.Meta.Page.Current, ch.Meta)
			}
			pages = append(pages, strings.Join(ch.groups(), " "))
		}
		equalStrings(t, "pages of groups", pages, []string{"san francisco:5,1", ":4", "san diego:2"})
		ch = c.groupedSearch(t, path, `{"group_by":{"fields":["addr.city"],"limit":"2"},"sort":[{"at":"$desc"}],"page_size":1,"page":3}`)[0]
		equalStrings(t, "page 3", ch.groups(), []string{"san diego:2"})
		ch = c.groupedSearch(t, path, `{"group_by":{"fields":["addr.city"]},"page_size":1,"page":4}`)[0]
		if ch.Group == nil || len(ch.Group) != 0 || ch.Meta.Found != 3 {
			t.Errorf("past the last group: %+v, want an empty group list", ch)
		}

		// By relevance: the groups in the order of their best hit in the
		// ungrouped ranking.
		stars := map[string]string{"1": "3", "2": "4", "3": "3", "4": "5", "5": "4"}
		var want []string
		seen := map[string]bool{}
		for _, id := range c.searchIDs(t, "shop", "places", `{"q":"data","search_fields":["name"]}`) {
			if !seen[stars[id]] {
				seen[stars[id]] = true
				want = append(want, stars[id]+":"+id)
			}
		}
		ch = c.groupedSearch(t, path, `{"q":"data","search_fields":["name"],"group_by":{"fields":["stars"],"limit":1}}`)[0]
		equalStrings(t, "groups by relevance", ch.groups(), want)
		if len(want) != 3 {
			t.Errorf("ranking %v: want 3 groups", want)
		}

		// An array groups by its set of values; an empty array as a
		// missing value.
		ch = c.groupedSearch(t, path, `{"group_by":{"fields":["tags"]},"sort":[{"stars":"$asc"},{"at":"$asc"}]}`)[0]
		equalStrings(t, "groups by tags", ch.groups(), []string{`["bar","foo"]:3,2`, `["abc","def"]:1`, ":5", "foo:4"})

		// Several fields, with a filter.
		ch = c.groupedSearch(t, path, `{"group_by":{"fields":["addr.city","stars"]},"filter":{"stars":{"$lte":4}},"sort":[{"id":"$asc"}]}`)[0]
		equalStrings(t, "groups by city and stars", ch.groups(), []string{"san francisco|3:1,3", "san diego|4:2", "san francisco|4:5"})
		if ch.Meta.Found != 3 {
			t.Errorf("found %d, want 3 groups", ch.Meta.Found)
		}

		// Nothing matched: one page, no group.
		ch = c.groupedSearch(t, path, `{"q":"nothingatall","group_by":{"fields":["addr.city"]}}`)[0]
		if ch.Group == nil || len(ch.Group) != 0 || ch.Meta.Found != 0 {
			t.Errorf("no match: %+v", ch)
		}

		// A deleted document leaves its group's hits; a group of only
		// deleted documents is gone.
		c.ok(t, "DELETE", docPath("shop", "places", "delete"), `{"filter":{"id":2}}`)
		ch = c.groupedSearch(t, path, `{"group_by":{"fields":["addr.city"]},"sort":[{"at":"$asc"}]}`)[0]
		equalStrings(t, "groups after a delete", ch.groups(), []string{"san francisco:3,1,5", ":4"})
	})
}

// TestSearchGroupByErrors: a group_by the schema or the bounds refuse is
// a 400 INVALID_ARGUMENT naming what is wrong, checked before anything is
// searched; a 2022 path leaves group_by unread, as it does branch.
func TestSearchGroupByErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		setupPlaces(t, c)
		path := p23Coll("shop", "places", "documents/search")
		for _, tc := range []struct{ body, msg string }{
			{`{"group_by":{"fields":["nope"]}}`, "group_by field 'nope' is not in the collection's schema"},
			{`{"group_by":{"fields":["open"]}}`, "group_by field 'open' is of type bool: hits are grouped by string, integer and number fields, and arrays of them"},
			{`{"group_by":{"fields":["addr"]}}`, "group_by field 'addr' is of type object: hits are grouped by string, integer and number fields, and arrays of them"},
			{`{"group_by":{"fields":["at"]}}`, "group_by field 'at' is of type date-time: hits are grouped by string, integer and number fields, and arrays of them"},
			{`{"group_by":{"fields":[]}}`, "group_by needs at least one field in 'fields'"},
			{`{"group_by":{}}`, "group_by needs at least one field in 'fields'"},
			{`{"group_by":{"fields":["name","stars","tags","addr.city"]}}`, "group_by takes at most 3 fields, got 4"},
			{`{"group_by":{"fields":["name","name"]}}`, "group_by field 'name' is given twice"},
			{`{"group_by":{"fields":["name"],"limit":100}}`, "group_by limit 100 is out of range: a group shows 1 to 99 hits"},
			{`{"group_by":{"fields":["name"],"limit":-1}}`, "group_by limit -1 is out of range: a group shows 1 to 99 hits"},
			{`{"group_by":{"fields":["name"],"limit":1.5}}`, "group_by limit must be an integer, got 1.5"},
			{`{"group_by":{"fields":["name"],"limit":11},"page_size":1000}`, "page_size 1000 of groups of up to 11 hits is 11000 hits, above the 10000 a grouped page holds"},
			{`{"group_by":["name"]}`, `group_by must be an object such as {"fields":["city"],"limit":3}`},
			{`{"group_by":{"fields":"name"}}`, `group_by must be an object such as {"fields":["city"],"limit":3}`},
		} {
			wantError(t, c.do(t, "POST", path, tc.body), 400, "INVALID_ARGUMENT", tc.msg)
		}
		// The 2022 path: the same body searches ungrouped.
		chunks := c.search(t, "shop", "places", `{"group_by":{"fields":["nope"]},"sort":[{"id":"$asc"}]}`)
		equalStrings(t, "2022 hits", hitField(t, chunks, "id"), []string{"1", "2", "3", "4", "5"})
		r := c.ok(t, "POST", docPath("shop", "places", "search"), `{"group_by":{"fields":["addr.city"]}}`)
		var line struct{ Result map[string]json.RawMessage }
		if err := json.Unmarshal(bytes.SplitN(r.body, []byte("\n"), 2)[0], &line); err != nil {
			t.Fatal(err)
		}
		if _, ok := line.Result["group"]; ok {
			t.Errorf("a 2022 search answered a group: %s", r.body)
		}
		// An ungrouped 2023 search has no group member, as before.
		r = c.ok(t, "POST", path, `{}`)
		line.Result = nil
		if err := json.Unmarshal(bytes.SplitN(r.body, []byte("\n"), 2)[0], &line); err != nil {
			t.Fatal(err)
		}
		if _, ok := line.Result["group"]; ok || !reflect.DeepEqual(len(line.Result), 3) {
			t.Errorf("an ungrouped 2023 search: %s", r.body)
		}
	})
}
