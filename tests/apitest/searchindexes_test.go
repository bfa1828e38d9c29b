package apitest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The final API's search indexes (/v1/projects/{project}/search/indexes):
// every route, on every backend, with the original's shapes.

func indexPath(project, index string) string {
	return "/v1/projects/" + project + "/search/indexes/" + index
}

func indexDocs(project, index string) string { return indexPath(project, index) + "/documents" }

const productsIndex = `{"schema":{"title":"products","properties":{
	"name":{"type":"string","searchIndex":true},
	"brand":{"type":"string","facet":true},
	"price":{"type":"number","sort":true,"facet":true},
	"tags":{"type":"array","items":{"type":"string"}},
	"vec":{"type":"array","format":"vector","dimensions":3}}}}`

// docStatus is one entry of a write's status list.
type docStatus struct {
	ID    string `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func statuses(t testing.TB, r *response) []docStatus {
	t.Helper()
	var body struct {
		Status []docStatus `json:"status"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("status body (%v): %s", err, r.body)
	}
	return body.Status
}

// wantStatuses checks each entry: "" for a document written, else the
// code and the start of its message.
func wantStatuses(t testing.TB, got []docStatus, want ...[3]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d statuses, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if w[0] != "*" && g.ID != w[0] {
			t.Errorf("status %d: id %q, want %q", i, g.ID, w[0])
		}
		switch {
		case w[1] == "" && g.Error != nil:
			t.Errorf("status %d (%s): error %+v, want none", i, g.ID, *g.Error)
		case w[1] != "" && g.Error == nil:
			t.Errorf("status %d (%s): no error, want %s %q", i, g.ID, w[1], w[2])
		case w[1] != "" && (json.Number(w[1]).String() != itoa(g.Error.Code) || !strings.HasPrefix(g.Error.Message, w[2])):
			t.Errorf("status %d (%s): error %d %q, want %s %q", i, g.ID, g.Error.Code, g.Error.Message, w[1], w[2])
		}
	}
}

// getIndexDocs reads ids, returning each document's data (nil if absent).
func (c *client) getIndexDocs(t testing.TB, project, index string, ids ...string) []map[string]any {
	t.Helper()
	q := ""
	for i, id := range ids {
		if i > 0 {
			q += "&"
		}
		q += "ids=" + id
	}
	r := c.ok(t, "GET", indexDocs(project, index)+"?"+q, "")
	var body struct {
		Documents []*struct {
			Data     map[string]any `json:"data"`
			Metadata struct {
				CreatedAt string `json:"created_at"`
				UpdatedAt string `json:"updated_at"`
			} `json:"metadata"`
		} `json:"documents"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("get body (%v): %s", err, r.body)
	}
	out := make([]map[string]any, len(body.Documents))
	for i, d := range body.Documents {
		if d != nil {
			out[i] = d.Data
			if d.Metadata.CreatedAt == "" {
				t.Errorf("document %s without created_at: %s", ids[i], r.body)
			}
		}
	}
	return out
}

func (c *client) searchIndex(t testing.TB, project, index, body string) []searchChunk {
	t.Helper()
	return c.searchAt(t, indexDocs(project, index)+"/search", body)
}

func sortedIDs(t testing.TB, chunks []searchChunk) []string {
	ids := hitField(t, chunks, "id")
	sort.Strings(ids)
	return ids
}

func TestSearchIndexes(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		const p = "shop"
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")

		// Management.
		if got := c.okObject(t, "PUT", indexPath(p, "products"), productsIndex); got["status"] != "created" {
			t.Errorf("create: %v", got)
		}
		wantError(t, c.do(t, "PUT", indexPath(p, "products"), `{"only_create":true,`+productsIndex[1:]), http.StatusConflict, "ALREADY_EXISTS", "search index already exists 'products'")
		c.ok(t, "PUT", indexPath(p, "products"), productsIndex) // the same again: no change
		got := c.okObject(t, "GET", indexPath(p, "products"), "")
		idx := obj(t, got, "index")
		if idx["name"] != "products" || obj(t, idx, "schema")["title"] != "products" {
			t.Errorf("get index: %v", got)
		}
		c.ok(t, "PUT", indexPath(p, "other"), `{"schema":{"title":"other","properties":{"a":{"type":"string"}}}}`)
		list := c.okObject(t, "GET", "/v1/projects/"+p+"/search/indexes", "")
		var names []string
		for _, i := range list["indexes"].([]any) {
			names = append(names, i.(map[string]any)["name"].(string))
		}
		equalStrings(t, "indexes", names, []string{"other", "products"})
		// Not a collection: no collection call sees an index.
		colls := c.okObject(t, "GET", p23Path(p, "collections"), "")
		if cs, _ := colls["collections"].([]any); len(cs) != 0 {
			t.Errorf("an index listed as a collection: %v", colls)
		}
		wantError(t, c.do(t, "POST", p23Coll(p, "products", "documents/read"), `{"filter":{}}`), http.StatusNotFound, "NOT_FOUND", "collection doesn't exist 'products'")
		if got := c.okObject(t, "DELETE", indexPath(p, "other"), ""); got["status"] != "deleted" {
			t.Errorf("delete: %v", got)
		}
		wantError(t, c.do(t, "GET", indexPath(p, "other"), ""), http.StatusNotFound, "NOT_FOUND", "search index not found 'other'")
		wantError(t, c.do(t, "DELETE", indexPath(p, "other"), ""), http.StatusNotFound, "NOT_FOUND", "search index not found 'other'")

		// Create: statuses per document, an id generated where absent,
		// a bad document refused alone.
		r := c.ok(t, "POST", indexDocs(p, "products"), `{"documents":[
			{"id":"1","name":"red running shoe","brand":"acme","price":10,"tags":["run"],"vec":[1,0,0]},
			{"id":"2","name":"blue running shoe","brand":"acme","price":30,"vec":[0,1,0]},
			{"id":"3","name":"green hat","brand":"hatco","price":20,"vec":[1,2]},
			{"id":"4","name":"black hat","brand":"hatco","price":"cheap"},
			{"name":"yellow sock","brand":"sockco","price":5,"vec":[0,0,1]}]}`)
		st := statuses(t, r)
		wantStatuses(t, st, [3]string{"1", "", ""}, [3]string{"2", "", ""},
			[3]string{"3", "400", "json schema validation failed for field 'vec' reason 'a vector of 3 dimensions is required, but found 2'"},
			[3]string{"4", "400", "json schema validation failed for field 'price'"},
			[3]string{"*", "", ""})
		sock := st[4].ID
		if len(sock) != 36 {
			t.Errorf("generated id %q, want a UUID", sock)
		}
		docs := c.getIndexDocs(t, p, "products", "1", "3", sock, "4")
		if docs[0]["name"] != "red running shoe" || docs[1] != nil || docs[2]["name"] != "yellow sock" || docs[3] != nil {
			t.Errorf("get after create: %v", docs)
		}
		// An id taken, a vector past float64's range: refused alone.
		r = c.ok(t, "POST", indexDocs(p, "products"), `{"documents":[{"id":"1","name":"x"},{"id":"5","name":"grey hat","brand":"hatco","price":1e999},{"id":"6","name":"white hat","brand":"hatco","price":15,"vec":[0,1e400,0]},{"id":7}]}`)
		wantStatuses(t, statuses(t, r), [3]string{"1", "409", "A document with id '1' already exists."},
			[3]string{"5", "400", "json schema validation failed for field 'price'"},
			[3]string{"6", "400", "json schema validation failed for field 'vec/1'"},
			[3]string{"", "400", "wrong type of 'id' field"})
		if d := c.getIndexDocs(t, p, "products", "5", "6"); d[0] != nil || d[1] != nil {
			t.Errorf("refused documents written: %v", d)
		}

		// Create by id.
		got = c.okObject(t, "POST", indexDocs(p, "products")+"/8", `{"document":{"name":"purple hat","brand":"hatco","price":25}}`)
		if got["id"] != "8" {
			t.Errorf("create by id: %v", got)
		}
		wantError(t, c.do(t, "POST", indexDocs(p, "products")+"/8", `{"document":{"name":"again"}}`), http.StatusConflict, "ALREADY_EXISTS", "A document with id '8' already exists.")

		// Create or replace.
		r = c.ok(t, "PUT", indexDocs(p, "products"), `{"documents":[{"id":"8","name":"violet hat","brand":"hatco","price":26},{"id":"9","name":"orange scarf","brand":"scarfco","price":12}]}`)
		wantStatuses(t, statuses(t, r), [3]string{"8", "", ""}, [3]string{"9", "", ""})
		if d := c.getIndexDocs(t, p, "products", "8"); d[0]["name"] != "violet hat" {
			t.Errorf("replaced: %v", d)
		}

		// Update: the given fields replace the stored ones; the others stay.
		r = c.ok(t, "PATCH", indexDocs(p, "products"), `{"documents":[{"id":"2","price":35},{"id":"77","price":1},{"id":"1","vec":[1]}]}`)
		wantStatuses(t, statuses(t, r), [3]string{"2", "", ""}, [3]string{"77", "404", "Could not find a document with id: 77"},
			[3]string{"1", "400", "json schema validation failed for field 'vec'"})
		d := c.getIndexDocs(t, p, "products", "2", "1")
		if d[0]["price"] != 35.0 || d[0]["name"] != "blue running shoe" || !reflect.DeepEqual(d[1]["vec"], []any{1.0, 0.0, 0.0}) {
			t.Errorf("after update: %v", d)
		}

		// Search: words, fields, filter, facets with stats, sort, pages,
		// projections; every write before it is found.
		ch := c.searchIndex(t, p, "products", `{"q":"hat"}`)
		equalStrings(t, "q hat", sortedIDs(t, ch), []string{`"8"`})
		ch = c.searchIndex(t, p, "products", `{"q":"running","search_fields":["name"],"filter":{"price":{"$gt":20}}}`)
		equalStrings(t, "q with filter", sortedIDs(t, ch), []string{`"2"`})
		ch = c.searchIndex(t, p, "products", `{"q":"","facet":{"brand":{"size":10},"price":{"size":10}},"sort":[{"price":"$desc"}],"page":1,"page_size":2}`)
		if len(ch) != 1 || ch[0].Meta.Found != 5 || ch[0].Meta.TotalPages != 3 || ch[0].Meta.Page.Current != 1 || ch[0].Meta.Page.Size != 2 {
			t.Fatalf("page meta: %+v", ch[0].Meta)
		}
		equalStrings(t, "sorted page", hitField(t, ch, "id"), []string{`"2"`, `"8"`})
		brand := ch[0].Facets["brand"]
		if len(brand.Counts) != 4 || brand.Counts[0].Value != "acme" || brand.Counts[0].Count != 2 {
			t.Errorf("brand facet: %+v", brand)
		}
		price := ch[0].Facets["price"].Stats
		if price.Count != 5 || price.Min == nil || *price.Min != 5 || *price.Max != 35 || *price.Sum != 88 {
			t.Errorf("price stats: %+v", price)
		}
		ch = c.searchIndex(t, p, "products", `{"q":"","page":3,"page_size":2,"sort":[{"price":"$desc"}]}`)
		equalStrings(t, "last page", hitField(t, ch, "id"), []string{`"` + sock + `"`})
		ch = c.searchIndex(t, p, "products", `{"filter":{"id":"1"},"include_fields":["name"]}`)
		if len(ch[0].Hits) != 1 || string(ch[0].Hits[0].Data) != `{"name":"red running shoe"}` {
			t.Errorf("include_fields: %+v", ch[0].Hits)
		}
		ch = c.searchIndex(t, p, "products", `{"filter":{"id":"1"},"exclude_fields":["vec","tags","brand","price"]}`)
		if len(ch[0].Hits) != 1 || string(ch[0].Hits[0].Data) != `{"id":"1","name":"red running shoe"}` {
			t.Errorf("exclude_fields: %+v", ch[0].Hits)
		}
		ch = c.searchIndex(t, p, "products", `{"filter":{"brand":"ACME"},"collation":{"case":"ci"}}`)
		equalStrings(t, "collation", sortedIDs(t, ch), []string{`"1"`, `"2"`})
		// A vector's numbers are not text: searching one finds nothing.
		ch = c.searchIndex(t, p, "products", `{"filter":{"vec":1}}`)
		if ch[0].Meta.Found != 0 {
			t.Errorf("a vector indexed as values: %+v", ch[0].Meta)
		}

		// Delete by ids: a missing one has its status.
		r = c.ok(t, "DELETE", indexDocs(p, "products"), `{"ids":["9","nine"]}`)
		wantStatuses(t, statuses(t, r), [3]string{"9", "", ""}, [3]string{"nine", "404", "Could not find a document with id: nine"})
		// Delete by query.
		got = c.okObject(t, "DELETE", indexDocs(p, "products")+"/deleteByQuery", `{"filter":{"brand":"acme"}}`)
		if n, _ := got["count"].(json.Number).Int64(); n != 2 {
			t.Errorf("delete by query: %v", got)
		}
		wantError(t, c.do(t, "DELETE", indexDocs(p, "products")+"/deleteByQuery", `{}`), http.StatusBadRequest, "INVALID_ARGUMENT", "filter is a required field")
		ch = c.searchIndex(t, p, "products", `{"q":""}`)
		want := []string{`"8"`, `"` + sock + `"`}
		sort.Strings(want)
		equalStrings(t, "after deletes", sortedIDs(t, ch), want)

		// Dropping the index drops its documents: made again, it is empty.
		c.ok(t, "DELETE", indexPath(p, "products"), "")
		c.ok(t, "PUT", indexPath(p, "products"), productsIndex)
		if d := c.getIndexDocs(t, p, "products", "8"); d[0] != nil {
			t.Errorf("a document outlived its index: %v", d)
		}
		if ch := c.searchIndex(t, p, "products", `{"q":""}`); ch[0].Meta.Found != 0 {
			t.Errorf("a new index found old documents: %+v", ch[0].Meta)
		}
	})
}

func TestSearchIndexMistakes(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		const p = "shop"
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		// Unknown project, unknown index.
		wantError(t, c.do(t, "PUT", indexPath("nowhere", "idx"), productsIndex), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'nowhere'")
		wantError(t, c.do(t, "GET", "/v1/projects/nowhere/search/indexes", ""), http.StatusNotFound, "NOT_FOUND", "project doesn't exist 'nowhere'")
		for _, call := range []struct{ method, path, body string }{
			{"GET", indexDocs(p, "missing") + "?ids=1", ""},
			{"POST", indexDocs(p, "missing"), `{"documents":[{"id":"1"}]}`},
			{"PUT", indexDocs(p, "missing"), `{"documents":[{"id":"1"}]}`},
			{"PATCH", indexDocs(p, "missing"), `{"documents":[{"id":"1"}]}`},
			{"DELETE", indexDocs(p, "missing"), `{"ids":["1"]}`},
			{"DELETE", indexDocs(p, "missing") + "/deleteByQuery", `{"filter":{"id":"1"}}`},
			{"POST", indexDocs(p, "missing") + "/search", `{"q":"x"}`},
			{"POST", indexDocs(p, "missing") + "/1", `{"document":{}}`},
		} {
			wantError(t, c.do(t, call.method, call.path, call.body), http.StatusNotFound, "NOT_FOUND", "search index not found 'missing'")
		}
		// Schemas.
		for _, bad := range []struct{ body, msg string }{
			{`{}`, "schema is a required during index creation"},
			{`{"schema":{"title":"idx","properties":{"v":{"type":"array","format":"vector"}}}}`, "Field 'v' type 'vector' is missing dimensions"},
			{`{"schema":{"title":"idx","properties":{"v":{"type":"array","format":"vector","dimensions":0}}}}`, "dimensions of field 'v' must be a positive integer"},
			{`{"schema":{"title":"idx","properties":{"v":{"type":"array","format":"vector","dimensions":4097}}}}`, "field 'v' has 4097 dimensions, above the limit of 4096"},
			{`{"schema":{"title":"idx","properties":{"a":{"type":"strange"}}}}`, anyMessage},
			{`{"schema":{"title":"idx","properties":{"id":{"type":"integer"}}}}`, "the id field 'id' of a search index must be of type string"},
			{`{"schema":{"title":"other","properties":{}}}`, "the schema's title must be the search index's name 'idx'"},
			{`{"schema":`, anyMessage},
		} {
			wantError(t, c.do(t, "PUT", indexPath(p, "idx"), bad.body), http.StatusBadRequest, "INVALID_ARGUMENT", bad.msg)
		}
		wantError(t, c.do(t, "PUT", indexPath(p, "1bad"), productsIndex), http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		// An index and a collection may share a name: their names are apart.
		c.ok(t, "PUT", indexPath(p, "products"), productsIndex)
		c.ok(t, "POST", p23Coll(p, "products", "createOrUpdate"), `{"schema":{"title":"products","properties":{"id":{"type":"string"}},"primary_key":["id"]}}`)
		c.ok(t, "GET", indexPath(p, "products"), "")
		// Batches: none, and past the limit.
		wantError(t, c.do(t, "POST", indexDocs(p, "products"), `{"documents":[]}`), http.StatusBadRequest, "INVALID_ARGUMENT", "empty documents received")
		many := strings.Repeat(`{"name":"n"},`, 1001)
		wantError(t, c.do(t, "POST", indexDocs(p, "products"), `{"documents":[`+many[:len(many)-1]+`]}`), http.StatusBadRequest, "INVALID_ARGUMENT", "1001 documents in one request, the limit is 1000")
		wantError(t, c.do(t, "POST", indexDocs(p, "products"), `{"documents":[{"id":"1"}`), http.StatusBadRequest, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "GET", indexDocs(p, "products"), ""), http.StatusBadRequest, "INVALID_ARGUMENT", "empty ids received")
		// Dropping the project drops its indexes.
		c.ok(t, "DELETE", "/v1/projects/"+p+"/delete", "")
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		wantError(t, c.do(t, "GET", indexPath(p, "products"), ""), http.StatusNotFound, "NOT_FOUND", "search index not found 'products'")
	})
}

// A reader reads and searches an index, and may not change one.
func TestSearchIndexRoles(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		const p = "shop"
		s.owner.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		s.owner.ok(t, "PUT", indexPath(p, "products"), productsIndex)
		s.owner.ok(t, "POST", indexDocs(p, "products"), `{"documents":[{"id":"1","name":"hat"}]}`)
		reader := s.appClient(t, s.owner, `{"name":"r","role":"reader"}`)
		reader.ok(t, "GET", indexDocs(p, "products")+"?ids=1", "")
		reader.ok(t, "GET", indexPath(p, "products"), "")
		reader.searchIndex(t, p, "products", `{"q":"hat"}`)
		for _, call := range []struct{ method, path, body string }{
			{"PUT", indexPath(p, "products"), productsIndex},
			{"DELETE", indexPath(p, "products"), ""},
			{"POST", indexDocs(p, "products"), `{"documents":[{"id":"2"}]}`},
			{"PUT", indexDocs(p, "products"), `{"documents":[{"id":"2"}]}`},
			{"PATCH", indexDocs(p, "products"), `{"documents":[{"id":"1"}]}`},
			{"DELETE", indexDocs(p, "products"), `{"ids":["1"]}`},
			{"DELETE", indexDocs(p, "products") + "/deleteByQuery", `{"filter":{"id":"1"}}`},
			{"POST", indexDocs(p, "products") + "/3", `{"document":{}}`},
		} {
			wantError(t, reader.do(t, call.method, call.path, call.body), http.StatusForbidden, "PERMISSION_DENIED", anyMessage)
		}
		if d := s.owner.getIndexDocs(t, p, "products", "1", "2"); d[0] == nil || d[1] != nil {
			t.Errorf("a reader's writes changed the index: %v", d)
		}
	})
}

// TestSearchIndexIDField: an index whose id field is not "id" takes a
// document created by id in that field, and its id field cannot move to
// another field by a schema change (its documents are stored by it).
func TestSearchIndexIDField(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		const p = "idfield"
		c.ok(t, "POST", "/v1/projects/"+p+"/create", "")
		c.ok(t, "PUT", indexPath(p, "skus"), `{"schema":{"title":"skus","properties":{"sku":{"type":"string","id":true},"name":{"type":"string"}}}}`)
		// A document without the id field the schema marks is refused
		// (no id is made for it), as the original refused it.
		for _, m := range []string{"POST", "PUT", "PATCH"} {
			r := c.ok(t, m, indexDocs(p, "skus"), `{"documents":[{"sku":"s1","name":"cap"},{"name":"no sku"}]}`)
			wantStatuses(t, statuses(t, r), [3]string{"s1", "", ""}, [3]string{"", "400", "index has explicitly marked 'sku' field as 'id' but document is missing that field"})
		}
		got := c.okObject(t, "POST", indexDocs(p, "skus")+"/abc", `{"document":{"name":"hat"}}`)
		if got["id"] != "abc" {
			t.Errorf("create by id: %v", got)
		}
		if docs := c.getIndexDocs(t, p, "skus", "abc"); docs[0] == nil || docs[0]["sku"] != "abc" || docs[0]["name"] != "hat" {
			t.Errorf("the document created by id: %v", docs)
		}

		c.ok(t, "PUT", indexPath(p, "items"), `{"schema":{"title":"items","properties":{"id":{"type":"string"},"sku":{"type":"string"}}}}`)
		c.ok(t, "POST", indexDocs(p, "items"), `{"documents":[{"id":"a","sku":"x"}]}`)
		wantError(t, c.do(t, "PUT", indexPath(p, "items"), `{"schema":{"title":"items","properties":{"id":{"type":"string"},"sku":{"type":"string","id":true}}}}`),
			http.StatusBadRequest, "INVALID_ARGUMENT", "the id field of search index 'items' cannot change ('id' to 'sku'): its documents are stored by it; create a new index")
		// Other changes are taken.
		c.ok(t, "PUT", indexPath(p, "items"), `{"schema":{"title":"items","properties":{"id":{"type":"string"},"sku":{"type":"string"},"n":{"type":"integer"}}}}`)
		if docs := c.getIndexDocs(t, p, "items", "a"); docs[0] == nil {
			t.Errorf("the document is gone after a schema change")
		}
	})
}
