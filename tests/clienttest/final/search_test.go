package finalclient

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tigrisdata/tigris-client-go/code"
	"github.com/tigrisdata/tigris-client-go/config"
	"github.com/tigrisdata/tigris-client-go/driver"
	"github.com/tigrisdata/tigris-client-go/filter"
	"github.com/tigrisdata/tigris-client-go/search"
	"github.com/tigrisdata/tigris-client-go/sort"
)

// The search application's models: each is a search index of its own
// (tools, notes), its schema derived by the client from the struct.
//
// The client has no tag for a search index's id (the TypeScript client's
// `id: true`): the field named id is the id, as in the original. Its
// omitempty lets Create leave it out, so that the server generates one.
// The other fields are omitempty too, as an application that updates a
// document partially needs: Update sends what the struct marshals, and a
// zero value sent would replace the stored one. Price is sent always: 0 is
// a price.

// Tool is a document of the index "tools".
type Tool struct {
	ID    string   `json:"id,omitempty"`
	Name  string   `json:"name,omitempty" tigris:"searchIndex,sort"`
	Brand string   `json:"brand,omitempty" tigris:"searchIndex,facet"`
	Price float64  `json:"price" tigris:"searchIndex,sort,facet"`
	Tags  []string `json:"tags,omitempty" tigris:"searchIndex"`
}

// Note is a document of the index "notes", with an embedding: the client
// declares a vector field as a fixed-size array of float64 tagged vector,
// its length the dimensions.
type Note struct {
	ID        string     `json:"id,omitempty"`
	Content   string     `json:"content" tigris:"searchIndex"`
	Colour    string     `json:"colour" tigris:"searchIndex,facet"`
	N         int64      `json:"n" tigris:"sort"`
	Embedding [3]float64 `json:"embedding" tigris:"vector"`
}

var tools = []Tool{
	{ID: "anvil", Name: "Heavy anvil", Brand: "Acme", Price: 50, Tags: []string{"heavy", "iron"}},
	{ID: "skates", Name: "Rocket skates", Brand: "Acme", Price: 120, Tags: []string{"fast"}},
	{ID: "seed", Name: "Bird seed", Brand: "Birdco", Price: 5},
	{ID: "catapult", Name: "Heavy catapult", Brand: "Acme", Price: 300, Tags: []string{"heavy"}},
	{ID: "magnet", Name: "Giant magnet", Brand: "Magnaco", Price: 80, Tags: []string{"iron"}},
}

var notes = []Note{
	{ID: "r", Content: "red", Colour: "warm", N: 1, Embedding: [3]float64{1, 0, 0}},
	{ID: "o", Content: "orange", Colour: "warm", N: 2, Embedding: [3]float64{0.9, 0.3, 0}},
	{ID: "b", Content: "blue", Colour: "cold", N: 3, Embedding: [3]float64{0, 0, 1}},
	{ID: "g", Content: "green", Colour: "cold", N: 4, Embedding: [3]float64{0, 1, 0.2}},
}

// TestSearchFlow is an application of the final client's search package:
// indexes of their own created from models, every document call, search
// with words, a filter, facets with counts and stats, a sort, pages and
// fields, and vector queries with and without a filter. As
// TestApplicationFlow, each step is a subtest and the steps go on after a
// failure.
func TestSearchFlow(t *testing.T) {
	e := readEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Projects are made with the driver, as in TestApplicationFlow.
	drv, err := driver.NewDriver(ctx, &config.Driver{URL: e.url, Branch: "main"})
	if err != nil {
		t.Fatalf("driver.NewDriver(%s): %v", e.url, err)
	}
	defer drv.Close()

	// search.Open's driver has no Close in the search package: it lives
	// as long as the test's process.
	f := &searchFlow{e: e, drv: drv}
	steps := []struct {
		name string
		fn   func(context.Context, *testing.T)
	}{
		{"create project", f.createProject},
		{"create index", f.createIndex},
		{"create documents", f.createDocuments},
		{"get documents", f.getDocuments},
		{"search words", f.searchWords},
		{"search filter and sort", f.searchFilterSort},
		{"search facets", f.searchFacets},
		{"search pages", f.searchPages},
		{"search fields", f.searchFields},
		{"update documents", f.updateDocuments},
		{"replace documents", f.replaceDocuments},
		{"delete documents", f.deleteDocuments},
		{"vector search", f.vectorSearch},
		{"delete index", f.deleteIndex},
		{"delete project", f.deleteProject},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { s.fn(ctx, t) })
	}
}

type searchFlow struct {
	e   env
	drv driver.Driver
	s   *search.Search
}

func (f *searchFlow) tools() *search.Index[Tool] { return search.GetIndex[Tool](f.s) }

// need stops a step whose earlier step did not get as far.
func (f *searchFlow) need(t *testing.T) {
	t.Helper()
	if f.s == nil {
		t.Fatal("no search: search.Open failed")
	}
}

func (f *searchFlow) createProject(ctx context.Context, t *testing.T) {
	resp, err := f.drv.CreateProject(ctx, f.e.project)
	if err != nil {
		t.Fatalf("driver CreateProject(%q): %v", f.e.project, err)
	}
	if resp.Status != "created" {
		t.Errorf("CreateProject answered status %q, want created (message %q)", resp.Status, resp.Message)
	}
}

func (f *searchFlow) createIndex(ctx context.Context, t *testing.T) {
	// Open creates the models' indexes (CreateOrUpdateIndex of each).
	s, err := search.Open(ctx, &search.Config{URL: f.e.url, Project: f.e.project}, &Tool{})
	if err != nil {
		t.Fatalf("search.Open with Tool: %v", err)
	}
	f.s = s
	// Again: the same schema changes nothing.
	if err := s.CreateIndexes(ctx, &Tool{}); err != nil {
		t.Errorf("CreateIndexes with Tool a second time: %v", err)
	}
	sc := f.drv.UseSearch(f.e.project)
	list, err := sc.ListIndexes(ctx, nil)
	if err != nil {
		t.Fatalf("ListIndexes: %v", err)
	}
	if names := indexNames(list); !slices.Equal(names, []string{"tools"}) {
		t.Errorf("ListIndexes: %q, want tools", names)
	}
	info, err := sc.GetIndex(ctx, "tools")
	if err != nil {
		t.Fatalf("GetIndex tools: %v", err)
	}
	var sch struct {
		Title      string                    `json:"title"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(info.Schema, &sch); err != nil {
		t.Fatalf("GetIndex tools' schema %s: %v", info.Schema, err)
	}
	if info.Name != "tools" || sch.Title != "tools" {
		t.Errorf("GetIndex tools: name %q, title %q", info.Name, sch.Title)
	}
	// The annotations the client sent come back as sent.
	for field, want := range map[string]map[string]any{
		"brand": {"type": "string", "searchIndex": true, "facet": true},
		"price": {"type": "number", "searchIndex": true, "sort": true, "facet": true},
	} {
		for k, v := range want {
			if got := sch.Properties[field][k]; got != v {
				t.Errorf("GetIndex tools: %s.%s = %v, want %v (schema %s)", field, k, got, v, info.Schema)
			}
		}
	}
	// GetIndex of the search package asks the server nothing; a call on
	// the index does.
	unknown := search.Index[Tool]{Name: "no_such_index", SearchClient: sc}
	_, err = unknown.Get(ctx, []string{"x"})
	wantCode(t, "Get of a document of an unknown index", err, code.NotFound)
	_, err = sc.GetIndex(ctx, "no_such_index")
	wantCode(t, "GetIndex of an unknown index", err, code.NotFound)
}

func indexNames(list []*driver.IndexInfo) []string {
	var names []string
	for _, i := range list {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	return names
}

// noErrors checks a write's statuses and gives their ids.
func noErrors(t *testing.T, what string, resp *search.Response, err error, n int) []string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(resp.Statuses) != n {
		t.Fatalf("%s: %d statuses, want %d: %+v", what, len(resp.Statuses), n, resp.Statuses)
	}
	ids := make([]string, n)
	for i, s := range resp.Statuses {
		if s.Error != nil {
			t.Errorf("%s: document %q: %v", what, s.ID, s.Error)
		}
		ids[i] = s.ID
	}
	return ids
}

// statusCode is the code of a document's error in a write's status.
func statusCode(err error) code.Code {
	var se *search.Error
	if errors.As(err, &se) && se.TigrisError != nil {
		return se.Code
	}
	return code.OK
}

func (f *searchFlow) createDocuments(ctx context.Context, t *testing.T) {
	f.need(t)
	idx := f.tools()
	docs := make([]*Tool, len(tools))
	for i := range tools {
		d := tools[i]
		docs[i] = &d
	}
	resp, err := idx.Create(ctx, docs...)
	if ids := noErrors(t, "Create of the tools", resp, err, len(tools)); !slices.Equal(ids, toolIDs(tools)) {
		t.Errorf("Create's statuses name %q, want %q", ids, toolIDs(tools))
	}

	// An id the index holds already: that document's error (409, the
	// original's number, in the status), the other written; a document
	// without an id gets one from the server.
	resp, err = idx.Create(ctx, &Tool{ID: "anvil", Name: "Another anvil", Brand: "Acme", Price: 1},
		&Tool{Name: "Spring", Brand: "Boing", Price: 7})
	if err != nil {
		t.Fatalf("Create of a taken id and a new document: %v", err)
	}
	if len(resp.Statuses) != 2 {
		t.Fatalf("Create of two documents: %d statuses: %+v", len(resp.Statuses), resp.Statuses)
	}
	if taken := resp.Statuses[0]; taken.ID != "anvil" || taken.Error == nil || statusCode(taken.Error) != code.Code(409) {
		t.Errorf("Create of a taken id: status %+v, want anvil with error 409", taken)
	}
	spring := resp.Statuses[1]
	if spring.Error != nil || spring.ID == "" {
		t.Fatalf("Create without an id: status %+v, want a generated id and no error", spring)
	}
	got, err := idx.Get(ctx, []string{spring.ID, "anvil"})
	if err != nil {
		t.Fatalf("Get the generated id: %v", err)
	}
	if len(got) != 2 || got[0].Name != "Spring" || got[0].ID != spring.ID || got[1].Name != "Heavy anvil" {
		t.Errorf("Get %s and anvil: %+v, want Spring with its id and the first anvil, unchanged", spring.ID, got)
	}
	if err := idx.DeleteOne(ctx, spring.ID); err != nil {
		t.Errorf("DeleteOne %s: %v", spring.ID, err)
	}

	// CreateByID has no method in the search package; the driver has it.
	// A document whose id is taken is the call's error.
	sc := f.drv.UseSearch(f.e.project)
	if err := sc.CreateByID(ctx, "tools", "rope", driver.Document(`{"name":"Rope","brand":"Acme","price":2}`)); err != nil {
		t.Errorf("CreateByID rope: %v", err)
	}
	err = sc.CreateByID(ctx, "tools", "rope", driver.Document(`{"name":"Rope","brand":"Acme","price":2}`))
	wantCode(t, "CreateByID of a taken id", err, code.AlreadyExists)
	if err := idx.DeleteOne(ctx, "rope"); err != nil {
		t.Errorf("DeleteOne rope: %v", err)
	}
}

func toolIDs(ts []Tool) []string {
	ids := make([]string, len(ts))
	for i, d := range ts {
		ids[i] = d.ID
	}
	return ids
}

func (f *searchFlow) getDocuments(ctx context.Context, t *testing.T) {
	f.need(t)
	// In the ids' order; the client leaves out an id the index lacks (the
	// server answers it as an empty document; see Get below).
	got, err := f.tools().Get(ctx, []string{"skates", "nothing", "anvil"})
	if err != nil {
		t.Fatalf("Get skates, nothing, anvil: %v", err)
	}
	if !equalTools(got, []Tool{tools[1], tools[0]}) {
		t.Errorf("Get skates, nothing, anvil: %+v, want skates and anvil", got)
	}
	one, err := f.tools().GetOne(ctx, "magnet")
	if err != nil {
		t.Fatalf("GetOne magnet: %v", err)
	}
	if !equalTools([]Tool{*one}, []Tool{tools[4]}) {
		t.Errorf("GetOne magnet: %+v", *one)
	}
	// The client's GetOne of an id the index lacks indexes an empty list
	// (a panic in the client): an application asks Get, as above.
}

func equalTools(a, b []Tool) bool {
	return slices.EqualFunc(a, b, func(x, y Tool) bool {
		return x.ID == y.ID && x.Name == y.Name && x.Brand == y.Brand && x.Price == y.Price && slices.Equal(x.Tags, y.Tags)
	})
}

// searchAll runs a search and gives every page the iterator yields.
func searchAll[T any](ctx context.Context, t *testing.T, idx *search.Index[T], what string, req *search.Request) []search.Result[T] {
	t.Helper()
	it, err := idx.Search(ctx, req)
	if err != nil {
		t.Fatalf("Search %s: %v", what, err)
	}
	defer it.Close()
	var pages []search.Result[T]
	var res search.Result[T]
	for it.Next(&res) {
		pages = append(pages, res)
	}
	if err := it.Err(); err != nil {
		t.Fatalf("Search %s: %v", what, err)
	}
	if len(pages) == 0 {
		t.Fatalf("Search %s: no page", what)
	}
	return pages
}

func hitIDs(pages []search.Result[Tool]) []string {
	var ids []string
	for _, p := range pages {
		for _, h := range p.Hits {
			ids = append(ids, h.Document.ID)
		}
	}
	return ids
}

func sortedIDs(pages []search.Result[Tool]) []string {
	ids := hitIDs(pages)
	slices.Sort(ids)
	return ids
}

func (f *searchFlow) searchWords(ctx context.Context, t *testing.T) {
	f.need(t)
	pages := searchAll(ctx, t, f.tools(), "heavy in name", search.NewRequestBuilder().WithQuery("heavy").WithSearchFields("name").Build())
	if ids := sortedIDs(pages); !slices.Equal(ids, []string{"anvil", "catapult"}) {
		t.Errorf("search heavy in name: %q, want anvil and catapult", ids)
	}
	if pages[0].Meta.Found != 2 {
		t.Errorf("search heavy in name found %d, want 2", pages[0].Meta.Found)
	}
	// The hits' times are the server's.
	for _, h := range pages[0].Hits {
		if h.Meta == nil || h.Meta.CreatedAt == nil || time.Since(*h.Meta.CreatedAt) > time.Hour {
			t.Errorf("hit %s's metadata %+v, want its created_at", h.Document.ID, h.Meta)
		}
	}
}

func (f *searchFlow) searchFilterSort(ctx context.Context, t *testing.T) {
	f.need(t)
	pages := searchAll(ctx, t, f.tools(), "brand Acme by price descending", search.MatchAll().
		WithFilter(filter.Eq("brand", "Acme")).WithSorting(sort.Descending("price")).Build())
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"catapult", "skates", "anvil"}) {
		t.Errorf("search brand Acme by price descending: %q", ids)
	}
	pages = searchAll(ctx, t, f.tools(), "price < 60 by price", search.MatchAll().
		WithFilter(filter.Lt("price", 60)).WithSorting(sort.Ascending("price")).Build())
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"seed", "anvil"}) {
		t.Errorf("search price < 60 by price: %q", ids)
	}
	// Words and a filter together.
	pages = searchAll(ctx, t, f.tools(), "iron of Acme", search.NewRequestBuilder().WithQuery("iron").
		WithFilter(filter.Eq("brand", "Acme")).Build())
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"anvil"}) {
		t.Errorf("search iron of Acme: %q", ids)
	}
}

func (f *searchFlow) searchFacets(ctx context.Context, t *testing.T) {
	f.need(t)
	pages := searchAll(ctx, t, f.tools(), "facets brand and price", search.MatchAll().
		WithFacet(search.NewFacetQueryBuilder().WithFields("brand").
			WithFieldAndOption("price", search.FacetQueryOptions{Size: 10}).Build()).Build())
	facets := pages[0].Facets
	counts := map[string]int64{}
	for _, c := range facets["brand"].Counts {
		counts[c.Value] = c.Count
	}
	if want := map[string]int64{"Acme": 3, "Birdco": 1, "Magnaco": 1}; !mapsEqual(counts, want) {
		t.Errorf("brand facet: %v, want %v", counts, want)
	}
	st := facets["price"].Stats
	if st.Count != 5 || !is(st.Min, 5) || !is(st.Max, 300) || !is(st.Sum, 555) || !is(st.Avg, 111) {
		t.Errorf("price facet's stats: count %d, min %v, max %v, sum %v, avg %v; want 5, 5, 300, 555, 111",
			st.Count, deref(st.Min), deref(st.Max), deref(st.Sum), deref(st.Avg))
	}
	// Facets count the matches of the filter.
	pages = searchAll(ctx, t, f.tools(), "facet brand of price > 60", search.MatchAll().
		WithFilter(filter.Gt("price", 60)).WithFacetFields("brand").Build())
	counts = map[string]int64{}
	for _, c := range pages[0].Facets["brand"].Counts {
		counts[c.Value] = c.Count
	}
	if want := map[string]int64{"Acme": 2, "Magnaco": 1}; !mapsEqual(counts, want) {
		t.Errorf("brand facet of price > 60: %v, want %v", counts, want)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func is(p *float64, v float64) bool { return p != nil && math.Abs(*p-v) < 1e-9 }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (f *searchFlow) searchPages(ctx context.Context, t *testing.T) {
	f.need(t)
	byPrice := sort.Ascending("price")
	page := func(n int32) search.Result[Tool] {
		pages := searchAll(ctx, t, f.tools(), "a page", search.MatchAll().WithSorting(byPrice).
			WithOptions(&search.Options{Page: n, PageSize: 2}).Build())
		if len(pages) != 1 {
			t.Fatalf("search page %d gave %d pages, want 1", n, len(pages))
		}
		return pages[0]
	}
	first, second := page(1), page(2)
	if ids := hitIDs([]search.Result[Tool]{first}); !slices.Equal(ids, []string{"seed", "anvil"}) {
		t.Errorf("page 1 by price: %q", ids)
	}
	if ids := hitIDs([]search.Result[Tool]{second}); !slices.Equal(ids, []string{"magnet", "skates"}) {
		t.Errorf("page 2 by price: %q", ids)
	}
	if m := first.Meta; m.Found != 5 || m.TotalPages != 3 || m.Page.Current != 1 || m.Page.Size != 2 {
		t.Errorf("page 1's meta %+v, want found 5, 3 pages, page 1 of size 2", m)
	}
	// Without a page, the server streams every page and the iterator
	// walks them.
	pages := searchAll(ctx, t, f.tools(), "every page", search.MatchAll().WithSorting(byPrice).
		WithOptions(&search.Options{PageSize: 2}).Build())
	if len(pages) != 3 {
		t.Errorf("every page of 2: %d pages, want 3", len(pages))
	}
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"seed", "anvil", "magnet", "skates", "catapult"}) {
		t.Errorf("every page by price: %q", ids)
	}
}

func (f *searchFlow) searchFields(ctx context.Context, t *testing.T) {
	f.need(t)
	pages := searchAll(ctx, t, f.tools(), "skates with name and price", search.NewRequestBuilder().WithQuery("skates").
		WithIncludeFields("name", "price").Build())
	if len(pages[0].Hits) != 1 {
		t.Fatalf("search skates: %d hits, want 1", len(pages[0].Hits))
	}
	if got := *pages[0].Hits[0].Document; !equalTools([]Tool{got}, []Tool{{Name: "Rocket skates", Price: 120}}) {
		t.Errorf("search skates with name and price: %+v, want those fields only", got)
	}
	pages = searchAll(ctx, t, f.tools(), "skates without tags", search.NewRequestBuilder().WithQuery("skates").
		WithExcludeFields("tags").Build())
	if got := *pages[0].Hits[0].Document; !equalTools([]Tool{got}, []Tool{{ID: "skates", Name: "Rocket skates", Brand: "Acme", Price: 120}}) {
		t.Errorf("search skates without tags: %+v", got)
	}
}

func (f *searchFlow) updateDocuments(ctx context.Context, t *testing.T) {
	f.need(t)
	idx := f.tools()
	// An update replaces the fields it sends and keeps the others.
	resp, err := idx.Update(ctx, &Tool{ID: "anvil", Price: 55})
	noErrors(t, "Update anvil's price", resp, err, 1)
	got, err := idx.GetOne(ctx, "anvil")
	if err != nil {
		t.Fatalf("GetOne anvil: %v", err)
	}
	want := tools[0]
	want.Price = 55
	if !equalTools([]Tool{*got}, []Tool{want}) {
		t.Errorf("anvil after Update: %+v, want %+v", *got, want)
	}
	// An id the index lacks is that document's error (404); the other is
	// written.
	resp, err = idx.Update(ctx, &Tool{ID: "nothing", Price: 1}, &Tool{ID: "seed", Price: 6})
	if err != nil {
		t.Fatalf("Update of an unknown id and seed: %v", err)
	}
	if len(resp.Statuses) != 2 || resp.Statuses[0].Error == nil || statusCode(resp.Statuses[0].Error) != code.Code(404) || resp.Statuses[1].Error != nil {
		t.Errorf("Update of an unknown id and seed: %+v, want the first's error 404 and the second written", resp.Statuses)
	}
	pages := searchAll(ctx, t, idx, "price 55", search.MatchAll().WithFilter(filter.Eq("price", 55)).Build())
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"anvil"}) {
		t.Errorf("search price 55 after the update: %q", ids)
	}
	pages = searchAll(ctx, t, idx, "price 6", search.MatchAll().WithFilter(filter.Eq("price", 6)).Build())
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"seed"}) {
		t.Errorf("search price 6 after the update: %q", ids)
	}
}

func (f *searchFlow) replaceDocuments(ctx context.Context, t *testing.T) {
	f.need(t)
	idx := f.tools()
	replaced := Tool{ID: "skates", Name: "Rocket roller skates", Brand: "Acme", Price: 150}
	glue := Tool{ID: "glue", Name: "Glue", Brand: "Stickco", Price: 3}
	resp, err := idx.CreateOrReplace(ctx, &replaced, &glue)
	noErrors(t, "CreateOrReplace skates and glue", resp, err, 2)
	got, err := idx.Get(ctx, []string{"skates", "glue"})
	if err != nil {
		t.Fatalf("Get skates and glue: %v", err)
	}
	// Replaced whole: the old tags are gone.
	if !equalTools(got, []Tool{replaced, glue}) {
		t.Errorf("after CreateOrReplace: %+v, want %+v", got, []Tool{replaced, glue})
	}
	pages := searchAll(ctx, t, idx, "roller", search.NewRequestBuilder().WithQuery("roller").Build())
	if ids := hitIDs(pages); !slices.Equal(ids, []string{"skates"}) {
		t.Errorf("search roller: %q", ids)
	}
	pages = searchAll(ctx, t, idx, "fast", search.NewRequestBuilder().WithQuery("fast").Build())
	if ids := hitIDs(pages); len(ids) != 0 {
		t.Errorf("search fast, a tag replaced away: %q", ids)
	}
}

func (f *searchFlow) deleteDocuments(ctx context.Context, t *testing.T) {
	f.need(t)
	idx := f.tools()
	resp, err := idx.Delete(ctx, []string{"glue", "magnet"})
	noErrors(t, "Delete glue and magnet", resp, err, 2)
	// An id the index lacks is that document's error (404).
	resp, err = idx.Delete(ctx, []string{"glue"})
	if err != nil {
		t.Fatalf("Delete glue again: %v", err)
	}
	if len(resp.Statuses) != 1 || statusCode(resp.Statuses[0].Error) != code.Code(404) {
		t.Errorf("Delete of a deleted id: %+v, want its error 404", resp.Statuses)
	}
	n, err := idx.DeleteByQuery(ctx, filter.Eq("brand", "Birdco"))
	if err != nil {
		t.Fatalf("DeleteByQuery brand Birdco: %v", err)
	}
	if n != 1 {
		t.Errorf("DeleteByQuery brand Birdco deleted %d, want 1", n)
	}
	pages := searchAll(ctx, t, idx, "everything", search.MatchAll().Build())
	if ids := sortedIDs(pages); !slices.Equal(ids, []string{"anvil", "catapult", "skates"}) {
		t.Errorf("search after the deletes: %q, want anvil, catapult, skates", ids)
	}
}

func noteContents(pages []search.Result[Note]) []string {
	var cs []string
	for _, p := range pages {
		for _, h := range p.Hits {
			cs = append(cs, h.Document.Content)
		}
	}
	return cs
}

func (f *searchFlow) vectorSearch(ctx context.Context, t *testing.T) {
	f.need(t)
	if err := f.s.CreateIndexes(ctx, &Note{}); err != nil {
		t.Fatalf("CreateIndexes with Note: %v", err)
	}
	sc := f.drv.UseSearch(f.e.project)
	info, err := sc.GetIndex(ctx, "notes")
	if err != nil {
		t.Fatalf("GetIndex notes: %v", err)
	}
	var sch struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(info.Schema, &sch); err != nil {
		t.Fatalf("notes' schema %s: %v", info.Schema, err)
	}
	if e := sch.Properties["embedding"]; e["type"] != "array" || e["format"] != "vector" || e["dimensions"] != 3.0 {
		t.Errorf("notes' embedding field %v, want an array of format vector with 3 dimensions", e)
	}

	idx := search.GetIndex[Note](f.s)
	docs := make([]*Note, len(notes))
	for i := range notes {
		n := notes[i]
		docs[i] = &n
	}
	resp, err := idx.Create(ctx, docs...)
	noErrors(t, "Create of the notes", resp, err, len(notes))

	// The query vector's k nearest: the client has no top_k, so k is the
	// page size, as the original's search engine took it.
	query := []float64{1, 0.1, 0}
	near := search.NewRequestBuilder().WithVectorSearch("embedding", query).
		WithOptions(&search.Options{Page: 1, PageSize: 2}).Build()
	pages := searchAll(ctx, t, idx, "the 2 nearest", near)
	if cs := noteContents(pages); !slices.Equal(cs, []string{"red", "orange"}) {
		t.Errorf("the 2 nearest to %v: %q, want red, orange", query, cs)
	}
	// The filter applies before the nearest are chosen: two cold ones come
	// back, however far they are.
	cold := search.NewRequestBuilder().WithVectorSearch("embedding", query).WithFilter(filter.Eq("colour", "cold")).
		WithOptions(&search.Options{Page: 1, PageSize: 2}).Build()
	pages = searchAll(ctx, t, idx, "the 2 nearest cold ones", cold)
	if cs := noteContents(pages); !slices.Equal(cs, []string{"green", "blue"}) {
		t.Errorf("the 2 nearest cold ones to %v: %q, want green then blue", query, cs)
	}
	// As the client's own example asks: a Request with the vector alone,
	// no page. k is then the default page, 20: every note, nearest first,
	// streamed as one page.
	pages = searchAll(ctx, t, idx, "the example's request", &search.Request{Vector: search.VectorType{"embedding": query}})
	if cs := noteContents(pages); len(pages) != 1 || !slices.Equal(cs, []string{"red", "orange", "green", "blue"}) {
		t.Errorf("a vector search without a page: %d pages, %q; want one page of red, orange, green, blue", len(pages), cs)
	}
	// A vector search with a facet counts the filter's matches.
	pages = searchAll(ctx, t, idx, "the nearest with a facet", search.NewRequestBuilder().WithVectorSearch("embedding", query).
		WithFacetFields("colour").WithOptions(&search.Options{Page: 1, PageSize: 3}).Build())
	if cs := noteContents(pages); !slices.Equal(cs, []string{"red", "orange", "green"}) {
		t.Errorf("the 3 nearest to %v: %q, want red, orange, green", query, cs)
	}
	counts := map[string]int64{}
	for _, c := range pages[0].Facets["colour"].Counts {
		counts[c.Value] = c.Count
	}
	if want := map[string]int64{"warm": 2, "cold": 2}; !mapsEqual(counts, want) {
		t.Errorf("colour facet of a vector search: %v, want %v", counts, want)
	}

	// The search package's hits carry no distance; the driver's do, over
	// gRPC (its HTTP decoder keeps only a hit's times).
	if !f.e.http {
		it, err := sc.Search(ctx, "notes", &driver.SearchRequest{Vector: driver.Vector(`{"embedding":[1,0.1,0]}`), Page: 1, PageSize: 2})
		if err != nil {
			t.Fatalf("driver Search by vector: %v", err)
		}
		var r driver.SearchIndexResponse
		var dists []float64
		for it.Next(&r) {
			for _, h := range r.Hits {
				if h.Metadata == nil || h.Metadata.Match == nil || h.Metadata.Match.VectorDistance == nil {
					t.Fatalf("a vector search's hit without its vector_distance: %v", h)
				}
				dists = append(dists, *h.Metadata.Match.VectorDistance)
			}
		}
		if err := it.Err(); err != nil {
			t.Fatalf("driver Search by vector: %v", err)
		}
		// Cosine distance: red is 1 - 1/sqrt(1.01) from the query.
		if len(dists) != 2 || math.Abs(dists[0]-(1-1/math.Sqrt(1.01))) > 1e-4 || dists[1] < dists[0] {
			t.Errorf("the 2 nearest's distances %v, want %v then more", dists, 1-1/math.Sqrt(1.01))
		}
	}

	// A query vector of the wrong dimensions is refused.
	bad := search.NewRequestBuilder().WithVectorSearch("embedding", []float64{1, 0}).Build()
	it, err := idx.Search(ctx, bad)
	if err == nil {
		var r search.Result[Note]
		for it.Next(&r) {
		}
		err = it.Err()
	}
	wantCode(t, "a query vector of 2 dimensions on 3", err, code.InvalidArgument)
	// A document whose vector has the wrong dimensions is its own error,
	// the other written.
	// (A model of the application's with a slice, which the client
	// sends at any length.)
	type looseNote struct {
		ID        string    `json:"id"`
		Content   string    `json:"content"`
		Embedding []float64 `json:"embedding"`
	}
	loose := search.Index[looseNote]{Name: "notes", SearchClient: sc}
	sresp, err := loose.Create(ctx, &looseNote{"w", "white", []float64{1, 1}}, &looseNote{"k", "black", []float64{0, 1, 1}})
	if err != nil {
		t.Fatalf("Create of a short vector: %v", err)
	}
	if len(sresp.Statuses) != 2 || statusCode(sresp.Statuses[0].Error) != code.Code(400) || sresp.Statuses[1].Error != nil {
		t.Errorf("Create of a short vector and a good one: %+v, want the first's error 400, the second written", sresp.Statuses)
	}

	// Deleted documents are no one's neighbours.
	resp, err = idx.Delete(ctx, []string{"r", "k"})
	noErrors(t, "Delete r and k", resp, err, 2)
	pages = searchAll(ctx, t, idx, "the nearest after a delete", search.NewRequestBuilder().WithVectorSearch("embedding", query).
		WithOptions(&search.Options{Page: 1, PageSize: 1}).Build())
	if cs := noteContents(pages); !slices.Equal(cs, []string{"orange"}) {
		t.Errorf("the nearest after red's delete: %q, want orange", cs)
	}
	if err := f.s.DeleteIndex(ctx, &Note{}); err != nil {
		t.Errorf("DeleteIndex notes: %v", err)
	}
}

func (f *searchFlow) deleteIndex(ctx context.Context, t *testing.T) {
	f.need(t)
	if err := f.s.DeleteIndex(ctx, &Tool{}); err != nil {
		t.Fatalf("DeleteIndex tools: %v", err)
	}
	// The error comes with the call or with the first page.
	it, err := f.tools().Search(ctx, search.MatchAll().Build())
	if err == nil {
		var r search.Result[Tool]
		for it.Next(&r) {
		}
		err = it.Err()
	}
	wantCode(t, "a search of a deleted index", err, code.NotFound)
	list, err := f.drv.UseSearch(f.e.project).ListIndexes(ctx, nil)
	if err != nil {
		t.Fatalf("ListIndexes: %v", err)
	}
	if names := indexNames(list); len(names) != 0 {
		t.Errorf("ListIndexes after the deletes: %q, want none", names)
	}
	err = f.s.DeleteIndex(ctx, &Tool{})
	wantCode(t, "DeleteIndex of a deleted index", err, code.NotFound)
}

func (f *searchFlow) deleteProject(ctx context.Context, t *testing.T) {
	if _, err := f.drv.DeleteProject(ctx, f.e.project); err != nil {
		t.Fatalf("DeleteProject: %v", err)
	}
}
