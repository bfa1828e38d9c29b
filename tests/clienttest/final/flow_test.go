package finalclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tigrisdata/tigris-client-go/code"
	"github.com/tigrisdata/tigris-client-go/config"
	"github.com/tigrisdata/tigris-client-go/driver"
	"github.com/tigrisdata/tigris-client-go/fields"
	"github.com/tigrisdata/tigris-client-go/filter"
	"github.com/tigrisdata/tigris-client-go/search"
	"github.com/tigrisdata/tigris-client-go/sort"
	"github.com/tigrisdata/tigris-client-go/tigris"
)

// The application's models. The client derives each collection (products,
// orders, customers) and its schema from the struct and its tags.

// Product has a key the server generates, defaults for the fields an
// insert leaves out (omitempty: the client sends a zero value otherwise,
// and a value sent wins over the default), the timestamps the server sets,
// and the 2023 index and search annotations.
type Product struct {
	ID        uuid.UUID  `json:"id" tigris:"primaryKey,autoGenerate"`
	Name      string     `json:"name" tigris:"searchIndex,sort"`
	Brand     string     `json:"brand" tigris:"index,searchIndex,facet"`
	Price     float64    `json:"price" tigris:"index,searchIndex,sort,facet"`
	Stock     int64      `json:"stock,omitempty" tigris:"default:10"`
	Status    string     `json:"status,omitempty" tigris:"default:active"`
	Tags      []string   `json:"tags,omitempty"`
	CreatedAt *time.Time `json:"createdAt,omitempty" tigris:"createdAt"`
	UpdatedAt *time.Time `json:"updatedAt,omitempty" tigris:"updatedAt"`
}

// Order has an integer key the server generates, and values the server
// makes: a cuid() and the time of the insert (now()).
type Order struct {
	ID        int64      `json:"id" tigris:"primaryKey,autoGenerate"`
	Ref       string     `json:"ref,omitempty" tigris:"default:cuid()"`
	ProductID string     `json:"productId" tigris:"index"`
	Qty       int64      `json:"qty"`
	PlacedAt  *time.Time `json:"placedAt,omitempty" tigris:"default:now()"`
}

// Customer has a key of the application's.
type Customer struct {
	Email string `json:"email" tigris:"primaryKey"`
	Name  string `json:"name"`
	Tier  string `json:"tier,omitempty" tigris:"default:basic"`
}

// env is where the test reaches the server.
type env struct {
	url     string // as the application configures it: grpc://host:port or http://host:port
	project string
	http    bool
}

func readEnv(t *testing.T) env {
	t.Helper()
	raw := os.Getenv("FOLIO_URL")
	if raw == "" {
		t.Skip("FOLIO_URL is not set: no server to run the final Go client's flow against (tests/clienttest's TestFinalClients sets it)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "grpc" && u.Scheme != "http") || u.Host == "" {
		t.Fatalf("FOLIO_URL %q: want grpc://host:port or http://host:port", raw)
	}
	e := env{url: raw, project: os.Getenv("FOLIO_PROJECT"), http: u.Scheme == "http"}
	if e.project == "" {
		e.project = "finalshop"
	}
	// The client switches to TLS by itself when it finds credentials in
	// its environment, and reads its URL, project and branch from there
	// when the config leaves them out: none of that may leak in.
	for _, v := range []string{driver.EnvClientID, driver.EnvClientSecret, driver.EnvToken, driver.EnvProtocol,
		driver.EnvURL, driver.EnvProject, driver.EnvDBBranch} {
		os.Unsetenv(v)
	}
	return e
}

// projectFlow opens what the smaller flows share: the environment, a
// context bounded at two minutes, the driver on FOLIO_URL, and the flow's
// project, made here and deleted (its error reported) when the test ends.
func projectFlow(t *testing.T) (context.Context, env, driver.Driver) {
	t.Helper()
	e := readEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	drv, err := driver.NewDriver(ctx, &config.Driver{URL: e.url, Branch: "main"})
	if err != nil {
		t.Fatalf("driver.NewDriver(%s): %v", e.url, err)
	}
	t.Cleanup(func() { drv.Close() })
	if _, err := drv.CreateProject(ctx, e.project); err != nil {
		t.Fatalf("CreateProject(%q): %v", e.project, err)
	}
	t.Cleanup(func() {
		if _, err := drv.DeleteProject(context.Background(), e.project); err != nil {
			t.Errorf("DeleteProject(%q): %v", e.project, err)
		}
	})
	return ctx, e, drv
}

// The client over HTTP drops an insert's generated keys (its HTTP decoder
// reads only status and metadata) and the limit of update and delete (its
// options conversion keeps only the write options): bugs of the client,
// which the flow tests around, asserting what really happens.

// TestApplicationFlow is an application's life with the final client:
// a project, collections from models, every document call, count, the
// 2023 operators, a transaction, search with facets and a branch. Each
// step is a subtest that checks the answers, and the steps go on after a
// failure so that one run lists every call that fails.
func TestApplicationFlow(t *testing.T) {
	e := readEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The driver is the client's low-level API: applications create
	// projects with it (as the original's CLI did), and it carries the
	// update operators the fields package has no builder for.
	//
	// Its config names the branch, as tigris.NewClient does: without one
	// its DescribeDatabase request is byte for byte the 2022 one, whose
	// answer has another shape.
	drv, err := driver.NewDriver(ctx, &config.Driver{URL: e.url, Branch: "main"})
	if err != nil {
		t.Fatalf("driver.NewDriver(%s): %v", e.url, err)
	}
	defer drv.Close()

	f := &flow{e: e, drv: drv}
	defer func() {
		if f.c != nil {
			f.c.Close()
		}
	}()
	steps := []struct {
		name string
		fn   func(context.Context, *testing.T)
	}{
		{"create project", f.createProject},
		{"open database", f.openDatabase},
		{"describe collection", f.describeCollection},
		{"insert", f.insert},
		{"insert duplicate key", f.insertDuplicate},
		{"insert or replace", f.insertOrReplace},
		{"read", f.read},
		{"read with options", f.readWithOptions},
		{"update", f.update},
		{"update one", f.updateOne},
		{"count", f.count},
		{"2023 filter operators", f.filterOperators},
		{"2023 update operators", f.updateOperators},
		{"unset", f.unset},
		{"transaction", f.transaction},
		{"transaction rolled back", f.transactionRolledBack},
		{"explain", f.explain},
		{"search with facets", f.search},
		{"branch", f.branch},
		{"quota limits and usage", f.quotas},
		{"delete one", f.deleteOne},
		{"delete", f.delete},
		{"describe project", f.describeProject},
		{"drop collection", f.dropCollection},
		{"delete project", f.deleteProject},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { s.fn(ctx, t) })
	}
}

type flow struct {
	e   env
	drv driver.Driver
	c   *tigris.Client
	db  *tigris.Database

	ids map[string]uuid.UUID // product name -> generated key
}

func (f *flow) products() *tigris.Collection[Product] { return tigris.GetCollection[Product](f.db) }

// need stops a step whose earlier step did not get as far.
func (f *flow) need(t *testing.T) {
	t.Helper()
	if f.db == nil {
		t.Fatal("no client: tigris.NewClient failed")
	}
}

func (f *flow) createProject(ctx context.Context, t *testing.T) {
	resp, err := f.drv.CreateProject(ctx, f.e.project)
	if err != nil {
		t.Fatalf("driver CreateProject(%q): %v", f.e.project, err)
	}
	if resp.Status != "created" {
		t.Errorf("CreateProject answered status %q, want created (message %q)", resp.Status, resp.Message)
	}
	// A second time: the project exists.
	_, err = f.drv.CreateProject(ctx, f.e.project)
	wantCode(t, "CreateProject of an existing project", err, code.AlreadyExists)

	projects, err := f.drv.ListProjects(ctx)
	if err != nil {
		t.Fatalf("ListProjects: %v", err)
	}
	if !slices.Contains(projects, f.e.project) {
		t.Errorf("ListProjects: %q, want it to hold %q", projects, f.e.project)
	}
}

func (f *flow) openDatabase(ctx context.Context, t *testing.T) {
	c, err := tigris.NewClient(ctx, &tigris.Config{URL: f.e.url, Project: f.e.project})
	if err != nil {
		t.Fatalf("tigris.NewClient: %v", err)
	}
	f.c = c
	// OpenDatabase sends the three schemas at once (CreateOrUpdateCollections).
	db, err := c.OpenDatabase(ctx, &Product{}, &Order{}, &Customer{})
	if err != nil {
		// The later steps still run on the project as it is, so that one
		// run names every call that fails.
		f.db = c.GetDatabase()
		t.Fatalf("OpenDatabase with Product, Order, Customer: %v", err)
	}
	f.db = db
	// Opening again with the same models changes nothing and succeeds.
	if _, err := c.OpenDatabase(ctx, &Product{}, &Order{}, &Customer{}); err != nil {
		t.Errorf("OpenDatabase a second time: %v", err)
	}
	names, err := f.drv.UseDatabase(f.e.project).ListCollections(ctx)
	if err != nil {
		t.Fatalf("ListCollections: %v", err)
	}
	slices.Sort(names)
	if want := []string{"customers", "orders", "products"}; !slices.Equal(names, want) {
		t.Errorf("collections %q, want %q", names, want)
	}
}

func (f *flow) describeCollection(ctx context.Context, t *testing.T) {
	f.need(t)
	d, err := f.products().Describe(ctx)
	if err != nil {
		t.Fatalf("Describe products: %v", err)
	}
	if d.Collection != "products" {
		t.Errorf("described collection %q, want products", d.Collection)
	}
	var s struct {
		Title      string                    `json:"title"`
		PrimaryKey []string                  `json:"primary_key"`
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(d.Schema, &s); err != nil {
		t.Fatalf("described schema %s: %v", d.Schema, err)
	}
	if s.Title != "products" || !slices.Equal(s.PrimaryKey, []string{"id"}) {
		t.Errorf("described schema's title %q and key %q, want products and [id]: %s", s.Title, s.PrimaryKey, d.Schema)
	}
	// The annotations the client sent come back as sent.
	for field, want := range map[string]map[string]any{
		"id":        {"format": "uuid", "autoGenerate": true},
		"brand":     {"index": true, "searchIndex": true, "facet": true},
		"price":     {"index": true, "sort": true, "facet": true},
		"stock":     {"default": 10.0},
		"status":    {"default": "active"},
		"createdAt": {"format": "date-time", "createdAt": true},
		"updatedAt": {"format": "date-time", "updatedAt": true},
	} {
		got := s.Properties[field]
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("described %s.%s = %v, want %v (schema %s)", field, k, got[k], v, d.Schema)
			}
		}
	}
}

// catalog is what the flow inserts, by name.
var catalog = []Product{
	{Name: "Anvil", Brand: "Acme", Price: 50, Tags: []string{"heavy", "iron"}},
	{Name: "Rocket skates", Brand: "Acme", Price: 120, Stock: 3},
	{Name: "Bird seed", Brand: "Birdco", Price: 5, Status: "seasonal"},
	{Name: "Catapult", Brand: "Acme", Price: 300, Tags: []string{"heavy"}},
}

func (f *flow) insert(ctx context.Context, t *testing.T) {
	f.need(t)
	docs := make([]*Product, len(catalog))
	for i := range catalog {
		p := catalog[i]
		docs[i] = &p
	}
	start := time.Now().Add(-time.Minute)
	resp, err := f.products().Insert(ctx, docs...)
	if err != nil {
		t.Fatalf("Insert of %d products: %v", len(docs), err)
	}
	if f.e.http {
		// The client's HTTP decoder drops the keys (see above).
		if len(resp.Keys) != 0 || docs[0].ID != uuid.Nil {
			t.Errorf("over HTTP the client now returns keys %q: the workaround below can go", resp.Keys)
		}
	} else if len(resp.Keys) != len(docs) {
		t.Errorf("Insert returned %d keys, want %d", len(resp.Keys), len(docs))
	}

	all := f.readAll(ctx, t)
	f.ids = map[string]uuid.UUID{}
	for _, p := range all {
		f.ids[p.Name] = p.ID
	}
	if len(all) != len(catalog) || len(f.ids) != len(catalog) {
		t.Fatalf("read back %d products (%v), want the %d inserted", len(all), all, len(catalog))
	}
	for _, d := range docs {
		if f.e.http {
			continue
		}
		if d.ID == uuid.Nil || d.ID != f.ids[d.Name] {
			t.Errorf("Insert set %s's key to %s, read back %s", d.Name, d.ID, f.ids[d.Name])
		}
	}
	for _, p := range all {
		if p.ID == uuid.Nil {
			t.Errorf("%s has no generated key", p.Name)
		}
		want := map[string]int64{"Rocket skates": 3}[p.Name]
		if want == 0 {
			want = 10 // the default
		}
		if p.Stock != want {
			t.Errorf("%s's stock %d, want %d", p.Name, p.Stock, want)
		}
		wantStatus := map[string]string{"Bird seed": "seasonal"}[p.Name]
		if wantStatus == "" {
			wantStatus = "active" // the default
		}
		if p.Status != wantStatus {
			t.Errorf("%s's status %q, want %q", p.Name, p.Status, wantStatus)
		}
		if p.CreatedAt == nil || p.CreatedAt.Before(start) || p.CreatedAt.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s's createdAt %v, want the time of the insert", p.Name, p.CreatedAt)
		}
	}
}

func (f *flow) readAll(ctx context.Context, t *testing.T) []Product {
	t.Helper()
	it, err := f.products().ReadAll(ctx)
	if err != nil {
		t.Fatalf("ReadAll products: %v", err)
	}
	all, err := it.Array()
	if err != nil {
		t.Fatalf("ReadAll products: %v", err)
	}
	return all
}

func (f *flow) insertDuplicate(ctx context.Context, t *testing.T) {
	f.need(t)
	customers := tigris.GetCollection[Customer](f.db)
	if _, err := customers.Insert(ctx, &Customer{Email: "wile@example.com", Name: "Wile"}); err != nil {
		t.Fatalf("Insert a customer: %v", err)
	}
	_, err := customers.Insert(ctx, &Customer{Email: "wile@example.com", Name: "Wile E."})
	wantCode(t, "Insert of an existing key", err, code.AlreadyExists)
	c, err := customers.ReadOne(ctx, filter.Eq("email", "wile@example.com"))
	if err != nil {
		t.Fatalf("ReadOne the customer: %v", err)
	}
	if *c != (Customer{Email: "wile@example.com", Name: "Wile", Tier: "basic"}) {
		t.Errorf("customer after a refused insert: %+v, want the first one with the default tier", *c)
	}
}

func (f *flow) insertOrReplace(ctx context.Context, t *testing.T) {
	f.need(t)
	customers := tigris.GetCollection[Customer](f.db)
	_, err := customers.InsertOrReplace(ctx,
		&Customer{Email: "wile@example.com", Name: "Wile E. Coyote", Tier: "gold"},
		&Customer{Email: "road@example.com", Name: "Road Runner"})
	if err != nil {
		t.Fatalf("InsertOrReplace: %v", err)
	}
	it, err := customers.ReadAll(ctx)
	if err != nil {
		t.Fatalf("ReadAll customers: %v", err)
	}
	all, err := it.Array()
	if err != nil {
		t.Fatalf("ReadAll customers: %v", err)
	}
	slices.SortFunc(all, func(a, b Customer) int { return strings.Compare(a.Email, b.Email) })
	want := []Customer{{"road@example.com", "Road Runner", "basic"}, {"wile@example.com", "Wile E. Coyote", "gold"}}
	if !slices.Equal(all, want) {
		t.Errorf("customers after InsertOrReplace: %+v, want %+v", all, want)
	}
}

func (f *flow) read(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	for _, c := range []struct {
		what   string
		filter filter.Filter
		want   []string
	}{
		{"price > 60", filter.Gt("price", 60), []string{"Catapult", "Rocket skates"}},
		{"price <= 50", filter.Lte("price", 50), []string{"Anvil", "Bird seed"}},
		{"brand = Acme and price < 200", filter.And(filter.Eq("brand", "Acme"), filter.Lt("price", 200)), []string{"Anvil", "Rocket skates"}},
		{"brand = Birdco or price >= 300", filter.Or(filter.Eq("brand", "Birdco"), filter.Gte("price", 300)), []string{"Bird seed", "Catapult"}},
		{"everything", filter.All, []string{"Anvil", "Bird seed", "Catapult", "Rocket skates"}},
	} {
		got, err := readArray(ctx, p, c.filter)
		if err != nil {
			t.Errorf("Read %s: %v", c.what, err)
			continue
		}
		if names := sortedNames(got); !slices.Equal(names, c.want) {
			t.Errorf("Read %s: %q, want %q", c.what, names, c.want)
		}
	}

	one, err := p.ReadOne(ctx, filter.Eq("name", "Anvil"))
	if err != nil {
		t.Fatalf("ReadOne Anvil: %v", err)
	}
	if one.ID != f.ids["Anvil"] || one.Price != 50 || !slices.Equal(one.Tags, []string{"heavy", "iron"}) {
		t.Errorf("ReadOne Anvil: %+v", one)
	}
	if _, err := p.ReadOne(ctx, filter.Eq("name", "Dynamite")); !errors.Is(err, tigris.ErrNotFound) {
		t.Errorf("ReadOne of no document: %v, want tigris.ErrNotFound", err)
	}
	// A projection: only the fields asked for come back.
	it, err := p.Read(ctx, filter.Eq("name", "Anvil"), fields.Include("name").Include("price"))
	if err != nil {
		t.Fatalf("Read with fields: %v", err)
	}
	got, err := it.Array()
	if err != nil {
		t.Fatalf("Read with fields: %v", err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], Product{Name: "Anvil", Price: 50}) {
		t.Errorf("Read of name and price: %+v, want only those fields of Anvil", got)
	}
}

func (f *flow) readWithOptions(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	for _, c := range []struct {
		what string
		opts *tigris.ReadOptions
		want []string
	}{
		{"sorted by price descending", &tigris.ReadOptions{Sort: sort.Descending("price")}, []string{"Catapult", "Rocket skates", "Anvil", "Bird seed"}},
		{"sorted by price, skip 1, limit 2", &tigris.ReadOptions{Sort: sort.Ascending("price"), Skip: 1, Limit: 2}, []string{"Anvil", "Rocket skates"}},
		{"sorted by brand then name descending", &tigris.ReadOptions{Sort: sort.Ascending("brand").Descending("name")}, []string{"Rocket skates", "Catapult", "Anvil", "Bird seed"}},
	} {
		it, err := p.ReadWithOptions(ctx, filter.All, nil, c.opts)
		if err != nil {
			t.Errorf("ReadWithOptions %s: %v", c.what, err)
			continue
		}
		got, err := it.Array()
		if err != nil {
			t.Errorf("ReadWithOptions %s: %v", c.what, err)
			continue
		}
		if names := namesOf(got); !slices.Equal(names, c.want) {
			t.Errorf("ReadWithOptions %s: %q, want %q", c.what, names, c.want)
		}
	}
	// Case-insensitive collation.
	it, err := p.ReadWithOptions(ctx, filter.Eq("brand", "ACME"), nil, &tigris.ReadOptions{Collation: &driver.Collation{Case: "ci"}})
	if err != nil {
		t.Fatalf("ReadWithOptions with the ci collation: %v", err)
	}
	got, err := it.Array()
	if err != nil {
		t.Fatalf("ReadWithOptions with the ci collation: %v", err)
	}
	if n := len(got); n != 3 {
		t.Errorf("brand = ACME under the ci collation: %d products, want the 3 of Acme", n)
	}
}

func (f *flow) update(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	before, err := p.ReadOne(ctx, filter.Eq("name", "Anvil"))
	if err != nil {
		t.Fatalf("ReadOne Anvil: %v", err)
	}
	if _, err := p.Update(ctx, filter.Eq("name", "Anvil"), fields.Set("price", 55.5).Set("status", "sale")); err != nil {
		t.Fatalf("Update Anvil: %v", err)
	}
	after, err := p.ReadOne(ctx, filter.Eq("name", "Anvil"))
	if err != nil {
		t.Fatalf("ReadOne Anvil: %v", err)
	}
	if after.Price != 55.5 || after.Status != "sale" || after.Stock != before.Stock || after.ID != before.ID {
		t.Errorf("Anvil after the update: %+v, want price 55.5 and status sale, the rest as before (%+v)", after, before)
	}
	if before.CreatedAt == nil || after.CreatedAt == nil || !after.CreatedAt.Equal(*before.CreatedAt) {
		t.Errorf("createdAt changed by an update: %v, then %v", before.CreatedAt, after.CreatedAt)
	}
	if after.UpdatedAt == nil || (after.CreatedAt != nil && after.UpdatedAt.Before(*after.CreatedAt)) {
		t.Errorf("updatedAt after an update: %v, want a time at or after createdAt %v", after.UpdatedAt, after.CreatedAt)
	}
	// The driver answers the count the application's Update drops.
	resp, err := f.drv.UseDatabase(f.e.project).Update(ctx, "products",
		driver.Filter(`{"brand":"Acme"}`), driver.Update(`{"$set":{"status":"clearance"}}`))
	if err != nil {
		t.Fatalf("driver Update of Acme's products: %v", err)
	}
	if resp.ModifiedCount != 3 {
		t.Errorf("driver Update of Acme's products: modified %d, want 3", resp.ModifiedCount)
	}
}

func (f *flow) updateOne(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	if _, err := p.UpdateOne(ctx, filter.Eq("brand", "Acme"), fields.Set("status", "featured")); err != nil {
		t.Fatalf("UpdateOne of Acme's products: %v", err)
	}
	n, err := p.Count(ctx, filter.Eq("status", "featured"))
	if err != nil {
		t.Fatalf("Count featured: %v", err)
	}
	want := int64(1)
	if f.e.http {
		want = 3 // the client's HTTP driver drops the limit (see above)
	}
	if n != want {
		t.Errorf("UpdateOne changed %d of Acme's 3 products, want %d", n, want)
	}
	if _, err := p.Update(ctx, filter.Eq("status", "featured"), fields.Set("status", "clearance")); err != nil {
		t.Fatalf("Update featured back to clearance: %v", err)
	}
}

func (f *flow) count(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	for _, c := range []struct {
		what   string
		filter filter.Filter
		want   int64
	}{
		{"all", filter.All, 4},
		{"brand = Acme", filter.Eq("brand", "Acme"), 3},
		{"price >= 100", filter.Gte("price", 100), 2},
		{"brand = Nobody", filter.Eq("brand", "Nobody"), 0},
	} {
		n, err := p.Count(ctx, c.filter)
		if err != nil {
			t.Errorf("Count %s: %v", c.what, err)
		} else if n != c.want {
			t.Errorf("Count %s: %d, want %d", c.what, n, c.want)
		}
	}
	// In a transaction, count sees the transaction's own writes.
	err := f.db.Tx(ctx, func(ctx context.Context) error {
		if _, err := p.Insert(ctx, &Product{Name: "Tornado kit", Brand: "Acme", Price: 80}); err != nil {
			return err
		}
		n, err := p.Count(ctx, filter.Eq("brand", "Acme"))
		if err != nil {
			return err
		}
		if n != 4 {
			t.Errorf("Count in a transaction after its insert: %d, want 4", n)
		}
		return errors.New("roll back")
	})
	if err == nil || err.Error() != "roll back" {
		t.Errorf("the transaction counting its own insert: %v", err)
	}
}

func (f *flow) filterOperators(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	// The client's filter package has no builders for these (its $not is
	// commented out); an application writes them as filter.Expr, the map
	// the builders make.
	for _, c := range []struct {
		what   string
		filter filter.Filter
		want   []string
	}{
		{"name $regex ^[AB]", filter.Expr{"name": map[string]any{"$regex": "^[AB]"}}, []string{"Anvil", "Bird seed"}},
		{"name $contains ket", filter.Expr{"name": map[string]any{"$contains": "ket"}}, []string{"Rocket skates"}},
		{"tags $contains iron", filter.Expr{"tags": map[string]any{"$contains": "iron"}}, []string{"Anvil"}},
		{"brand $not Acme", filter.Expr{"brand": map[string]any{"$not": "Acme"}}, []string{"Bird seed"}},
		{"$regex and an indexed condition", filter.And(filter.Eq("brand", "Acme"), filter.Expr{"name": map[string]any{"$regex": "t$"}}), []string{"Catapult"}},
	} {
		got, err := readArray(ctx, p, c.filter)
		if err != nil {
			t.Errorf("Read %s: %v", c.what, err)
			continue
		}
		if names := sortedNames(got); !slices.Equal(names, c.want) {
			t.Errorf("Read %s: %q, want %q", c.what, names, c.want)
		}
		n, err := p.Count(ctx, c.filter)
		if err != nil {
			t.Errorf("Count %s: %v", c.what, err)
		} else if n != int64(len(c.want)) {
			t.Errorf("Count %s: %d, want %d", c.what, n, len(c.want))
		}
	}
	_, err := readArray(ctx, p, filter.Expr{"name": map[string]any{"$regex": "("}})
	wantCode(t, "Read with an invalid $regex", err, code.InvalidArgument)
	_, err = p.Count(ctx, filter.Expr{"price": map[string]any{"$regex": "^1"}})
	wantCode(t, "Count with $regex on a number field", err, code.InvalidArgument)
}

func (f *flow) updateOperators(ctx context.Context, t *testing.T) {
	f.need(t)
	// The fields package builds only $set and $unset: the 2023 operators
	// go through the driver, as raw JSON.
	db := f.drv.UseDatabase(f.e.project)
	anvil := driver.Filter(`{"name":"Anvil"}`)
	for _, c := range []struct {
		update string
		stock  int64
		price  float64
		tags   []string
	}{
		{`{"$increment":{"stock":5}}`, 15, 55.5, []string{"heavy", "iron"}},
		{`{"$decrement":{"stock":3}}`, 12, 55.5, []string{"heavy", "iron"}},
		{`{"$multiply":{"stock":2,"price":2}}`, 24, 111, []string{"heavy", "iron"}},
		{`{"$divide":{"stock":5,"price":4}}`, 4, 27.75, []string{"heavy", "iron"}}, // an integer field's quotient is truncated
		{`{"$push":{"tags":"sale"}}`, 4, 27.75, []string{"heavy", "iron", "sale"}},
		{`{"$set":{"status":"active"},"$increment":{"stock":1}}`, 5, 27.75, []string{"heavy", "iron", "sale"}},
	} {
		resp, err := db.Update(ctx, "products", anvil, driver.Update(c.update))
		if err != nil {
			t.Errorf("driver Update %s: %v", c.update, err)
			continue
		}
		if resp.ModifiedCount != 1 {
			t.Errorf("driver Update %s: modified %d, want 1", c.update, resp.ModifiedCount)
		}
		got, err := f.products().ReadOne(ctx, filter.Eq("name", "Anvil"))
		if err != nil {
			t.Fatalf("ReadOne Anvil: %v", err)
		}
		if got.Stock != c.stock || got.Price != c.price || !slices.Equal(got.Tags, c.tags) {
			t.Errorf("Anvil after %s: stock %d, price %v, tags %q; want %d, %v, %q", c.update, got.Stock, got.Price, got.Tags, c.stock, c.price, c.tags)
		}
	}
	// Division by zero is refused and nothing is written.
	_, err := db.Update(ctx, "products", driver.Filter(`{"brand":"Acme"}`), driver.Update(`{"$divide":{"stock":0}}`))
	wantCode(t, "$divide by 0", err, code.InvalidArgument)
	got, err := f.products().ReadOne(ctx, filter.Eq("name", "Anvil"))
	if err == nil && got.Stock != 5 {
		t.Errorf("Anvil's stock after a refused $divide: %d, want 5", got.Stock)
	}
}

func (f *flow) unset(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	// The client sends $unset as an object ({"tags": null}); the final
	// server took a list of names, which the TypeScript client sends.
	if _, err := p.Update(ctx, filter.Eq("name", "Catapult"), fields.Unset("tags")); err != nil {
		t.Fatalf("Update with Unset: %v", err)
	}
	got, err := p.ReadOne(ctx, filter.Eq("name", "Catapult"))
	if err != nil {
		t.Fatalf("ReadOne Catapult: %v", err)
	}
	if got.Tags != nil {
		t.Errorf("Catapult's tags after Unset: %q, want none", got.Tags)
	}
}

func (f *flow) transaction(ctx context.Context, t *testing.T) {
	f.need(t)
	anvil, ok := f.ids["Anvil"]
	if !ok {
		t.Fatal("no key for Anvil: insert failed")
	}
	var order Order
	start := time.Now().Add(-time.Minute)
	err := f.db.Tx(ctx, func(ctx context.Context) error {
		orders := tigris.GetCollection[Order](f.db)
		products := f.products()
		p, err := products.ReadOne(ctx, filter.Eq("id", anvil))
		if err != nil {
			return err
		}
		if p.Stock < 2 {
			return errors.New("out of stock")
		}
		order = Order{ProductID: anvil.String(), Qty: 2}
		if _, err := orders.Insert(ctx, &order); err != nil {
			return err
		}
		_, err = products.Update(ctx, filter.Eq("id", anvil), fields.Set("stock", p.Stock-2))
		return err
	})
	if err != nil {
		t.Fatalf("a transaction placing an order: %v", err)
	}
	orders := tigris.GetCollection[Order](f.db)
	placed, err := orders.ReadOne(ctx, filter.Eq("productId", anvil.String()))
	if err != nil {
		t.Fatalf("ReadOne the order: %v", err)
	}
	if !f.e.http && placed.ID != order.ID {
		t.Errorf("the transaction's insert set the key %d, read back %d", order.ID, placed.ID)
	}
	if placed.ID == 0 || placed.Qty != 2 {
		t.Errorf("order read back: %+v, want a generated key and qty 2", placed)
	}
	if !strings.HasPrefix(placed.Ref, "c") || len(placed.Ref) < 20 {
		t.Errorf("order's ref %q, want a cuid() (c followed by at least 19 characters)", placed.Ref)
	}
	if placed.PlacedAt == nil || placed.PlacedAt.Before(start) || placed.PlacedAt.After(time.Now().Add(time.Minute)) {
		t.Errorf("order's placedAt %v, want now() at the insert", placed.PlacedAt)
	}
	p, err := f.products().ReadOne(ctx, filter.Eq("id", anvil))
	if err != nil {
		t.Fatalf("ReadOne Anvil: %v", err)
	}
	if p.Stock != 3 {
		t.Errorf("Anvil's stock after the order: %d, want 5-2", p.Stock)
	}
}

func (f *flow) transactionRolledBack(ctx context.Context, t *testing.T) {
	f.need(t)
	oops := errors.New("payment declined")
	err := f.db.Tx(ctx, func(ctx context.Context) error {
		if _, err := tigris.GetCollection[Order](f.db).Insert(ctx, &Order{ProductID: "none", Qty: 1}); err != nil {
			return err
		}
		if _, err := f.products().Update(ctx, filter.Eq("brand", "Acme"), fields.Set("stock", 0)); err != nil {
			return err
		}
		return oops
	})
	if !errors.Is(err, oops) {
		t.Fatalf("a transaction that fails: %v, want its function's error", err)
	}
	n, err := tigris.GetCollection[Order](f.db).Count(ctx, filter.All)
	if err != nil {
		t.Fatalf("Count orders: %v", err)
	}
	if n != 1 {
		t.Errorf("orders after a rolled-back transaction: %d, want the 1 committed", n)
	}
	n, err = f.products().Count(ctx, filter.Eq("stock", 0))
	if err != nil {
		t.Fatalf("Count products out of stock: %v", err)
	}
	if n != 0 {
		t.Errorf("products with stock 0 after a rolled-back transaction: %d, want 0", n)
	}
}

func (f *flow) explain(ctx context.Context, t *testing.T) {
	f.need(t)
	e, err := f.products().Explain(ctx, filter.Eq("brand", "Acme"), nil, &tigris.ReadOptions{})
	if err != nil {
		t.Fatalf("Explain brand = Acme: %v", err)
	}
	if e.Collection != "products" || e.Filter == "" || e.ReadType == "" {
		t.Errorf("Explain brand = Acme: %+v, want the collection, the filter and a read type", e)
	}
}

func (f *flow) search(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	req := search.NewRequestBuilder().
		WithQuery("").
		WithFilter(filter.Gt("price", 10)).
		WithFacet(search.NewFacetQueryBuilder().WithFields("brand").Build()).
		WithSorting(sort.Ascending("price")).
		Build()
	it, err := p.Search(ctx, req)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	defer it.Close()
	var names []string
	var facets map[string]search.Facet
	var found int64
	var res search.Result[Product]
	for it.Next(&res) {
		for _, h := range res.Hits {
			names = append(names, h.Document.Name)
		}
		if facets == nil {
			facets, found = res.Facets, res.Meta.Found
		}
	}
	if err := it.Err(); err != nil {
		t.Fatalf("Search: %v", err)
	}
	if want := []string{"Anvil", "Rocket skates", "Catapult"}; !slices.Equal(names, want) {
		t.Errorf("search price > 10 sorted by price: %q, want %q", names, want)
	}
	if found != 3 {
		t.Errorf("search found %d, want 3", found)
	}
	counts := map[string]int64{}
	for _, c := range facets["brand"].Counts {
		counts[c.Value] = c.Count
	}
	if !reflect.DeepEqual(counts, map[string]int64{"Acme": 3}) {
		t.Errorf("brand facet of price > 10: %v, want Acme 3", counts)
	}

	// A text query on the search-indexed name.
	it2, err := p.Search(ctx, search.NewRequestBuilder().WithQuery("skates").WithSearchFields("name").Build())
	if err != nil {
		t.Fatalf("Search for skates: %v", err)
	}
	defer it2.Close()
	names = nil
	for it2.Next(&res) {
		for _, h := range res.Hits {
			names = append(names, h.Document.Name)
		}
	}
	if err := it2.Err(); err != nil {
		t.Fatalf("Search for skates: %v", err)
	}
	if !slices.Equal(names, []string{"Rocket skates"}) {
		t.Errorf("search for skates: %q, want Rocket skates", names)
	}
}

func (f *flow) branch(ctx context.Context, t *testing.T) {
	f.need(t)
	const name = "feature_x"
	resp, err := f.db.CreateBranch(ctx, name)
	if err != nil {
		t.Fatalf("CreateBranch %s: %v", name, err)
	}
	if resp.Status != "created" {
		t.Errorf("CreateBranch answered status %q, want created (message %q)", resp.Status, resp.Message)
	}
	_, err = f.db.CreateBranch(ctx, name)
	wantCode(t, "CreateBranch of an existing branch", err, code.AlreadyExists)

	// An application on the branch: its config names it.
	bc, err := tigris.NewClient(ctx, &tigris.Config{URL: f.e.url, Project: f.e.project, Branch: name})
	if err != nil {
		t.Fatalf("NewClient on branch %s: %v", name, err)
	}
	defer bc.Close()
	bdb := bc.GetDatabase()
	onBranch := tigris.GetCollection[Product](bdb)
	// A new branch has main's collections and schemas, and no documents.
	if n, err := onBranch.Count(ctx, filter.All); err != nil || n != 0 {
		t.Errorf("Count products on the new branch: %d, %v; want 0", n, err)
	}
	if _, err := onBranch.Insert(ctx, &Product{Name: "Jet pack", Brand: "Acme", Price: 900}); err != nil {
		t.Fatalf("Insert on branch %s: %v", name, err)
	}
	got, err := onBranch.ReadOne(ctx, filter.Eq("name", "Jet pack"))
	if err != nil {
		t.Fatalf("ReadOne on branch %s: %v", name, err)
	}
	if got.Stock != 10 || got.Status != "active" || got.CreatedAt == nil {
		t.Errorf("a product inserted on the branch: %+v, want the schema's defaults and createdAt", got)
	}
	if n, err := f.products().Count(ctx, filter.Eq("name", "Jet pack")); err != nil || n != 0 {
		t.Errorf("Count of the branch's product on main: %d, %v; want 0", n, err)
	}
	// The branch has its own transactions.
	err = bdb.Tx(ctx, func(ctx context.Context) error {
		_, err := onBranch.Update(ctx, filter.Eq("name", "Jet pack"), fields.Set("price", 950))
		return err
	})
	if err != nil {
		t.Errorf("a transaction on the branch: %v", err)
	} else if got, err := onBranch.ReadOne(ctx, filter.Eq("name", "Jet pack")); err != nil || got.Price != 950 {
		t.Errorf("the branch's product after its transaction: %+v, %v; want price 950", got, err)
	}

	d, err := f.drv.DescribeDatabase(ctx, f.e.project)
	if err != nil {
		t.Fatalf("DescribeDatabase: %v", err)
	}
	branches := slices.Clone(d.Branches)
	slices.Sort(branches)
	if !slices.Equal(branches, []string{name, "main"}) {
		t.Errorf("DescribeDatabase's branches %q, want %s and main", d.Branches, name)
	}

	if _, err := f.db.DeleteBranch(ctx, "main"); err == nil {
		t.Error("DeleteBranch main succeeded, want it refused")
	}
	del, err := f.db.DeleteBranch(ctx, name)
	if err != nil {
		t.Fatalf("DeleteBranch %s: %v", name, err)
	}
	if del.Status != "deleted" {
		t.Errorf("DeleteBranch answered status %q, want deleted (message %q)", del.Status, del.Message)
	}
	_, err = onBranch.Count(ctx, filter.All)
	wantCode(t, "Count on a deleted branch", err, code.NotFound)
	_, err = f.db.DeleteBranch(ctx, name)
	wantCode(t, "DeleteBranch of a deleted branch", err, code.NotFound)
	if n, err := f.products().Count(ctx, filter.All); err != nil || n != 4 {
		t.Errorf("Count products on main after the branch went: %d, %v; want 4", n, err)
	}
}

func (f *flow) deleteOne(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	if _, err := p.DeleteOne(ctx, filter.Eq("brand", "Acme")); err != nil {
		t.Fatalf("DeleteOne of Acme's products: %v", err)
	}
	n, err := p.Count(ctx, filter.Eq("brand", "Acme"))
	if err != nil {
		t.Fatalf("Count Acme: %v", err)
	}
	want := int64(2)
	if f.e.http {
		want = 0 // the client's HTTP driver drops the limit (see above)
	}
	if n != want {
		t.Errorf("Acme's products after DeleteOne: %d, want %d", n, want)
	}
}

func (f *flow) delete(ctx context.Context, t *testing.T) {
	f.need(t)
	p := f.products()
	if _, err := p.Delete(ctx, filter.Eq("brand", "Birdco")); err != nil {
		t.Fatalf("Delete Birdco's products: %v", err)
	}
	resp, err := f.drv.UseDatabase(f.e.project).Delete(ctx, "customers", driver.Filter(`{"email":"road@example.com"}`))
	if err != nil {
		t.Fatalf("driver Delete a customer: %v", err)
	}
	if resp.Status != "deleted" {
		t.Errorf("driver Delete answered status %q, want deleted", resp.Status)
	}
	if n, err := p.Count(ctx, filter.Eq("brand", "Birdco")); err != nil || n != 0 {
		t.Errorf("Count Birdco after Delete: %d, %v; want 0", n, err)
	}
	if _, err := p.DeleteAll(ctx); err != nil {
		t.Fatalf("DeleteAll products: %v", err)
	}
	if n, err := p.Count(ctx, filter.All); err != nil || n != 0 {
		t.Errorf("Count after DeleteAll: %d, %v; want 0", n, err)
	}
}

func (f *flow) describeProject(ctx context.Context, t *testing.T) {
	d, err := f.drv.DescribeDatabase(ctx, f.e.project)
	if err != nil {
		t.Fatalf("DescribeDatabase: %v", err)
	}
	var names []string
	for _, c := range d.Collections {
		names = append(names, c.Collection)
		if len(c.Schema) == 0 {
			t.Errorf("DescribeDatabase: collection %s without its schema", c.Collection)
		}
	}
	slices.Sort(names)
	if want := []string{"customers", "orders", "products"}; !slices.Equal(names, want) {
		t.Errorf("DescribeDatabase's collections %q, want %q", names, want)
	}
	if !slices.Equal(d.Branches, []string{"main"}) {
		t.Errorf("DescribeDatabase's branches %q, want main alone", d.Branches)
	}
}

func (f *flow) dropCollection(ctx context.Context, t *testing.T) {
	f.need(t)
	if err := tigris.GetCollection[Customer](f.db).Drop(ctx); err != nil {
		t.Fatalf("Drop customers: %v", err)
	}
	names, err := f.drv.UseDatabase(f.e.project).ListCollections(ctx)
	if err != nil {
		t.Fatalf("ListCollections: %v", err)
	}
	slices.Sort(names)
	if want := []string{"orders", "products"}; !slices.Equal(names, want) {
		t.Errorf("collections after the drop %q, want %q", names, want)
	}
}

func (f *flow) deleteProject(ctx context.Context, t *testing.T) {
	resp, err := f.drv.DeleteProject(ctx, f.e.project)
	if err != nil {
		t.Fatalf("DeleteProject: %v", err)
	}
	// The original answered a project's deletion as a database's drop:
	// status "dropped" (beta.122, ProjectQueryRunner.delete).
	if resp.Status != "dropped" {
		t.Errorf("DeleteProject answered status %q, want dropped (message %q)", resp.Status, resp.Message)
	}
	projects, err := f.drv.ListProjects(ctx)
	if err != nil {
		t.Fatalf("ListProjects: %v", err)
	}
	if slices.Contains(projects, f.e.project) {
		t.Errorf("ListProjects after DeleteProject: %q still holds %q", projects, f.e.project)
	}
	_, err = f.drv.UseDatabase(f.e.project).ListCollections(ctx)
	wantCode(t, "ListCollections of a deleted project", err, code.NotFound)
}

// wantCode checks that err is the client's error with code c.
func wantCode(t *testing.T, what string, err error, c code.Code) {
	t.Helper()
	var de *driver.Error
	switch {
	case err == nil:
		t.Errorf("%s succeeded, want %s", what, c)
	case !errors.As(err, &de) || de.TigrisError == nil:
		t.Errorf("%s: %v (%T), want the client's error with code %s", what, err, err, c)
	case de.Code != c:
		t.Errorf("%s: code %s (%v), want %s", what, de.Code, err, c)
	}
}

// readArray reads the documents that match flt; a read's error may come
// from the call or, once the stream has started, from the iterator.
func readArray[T any](ctx context.Context, c *tigris.Collection[T], flt filter.Filter) ([]T, error) {
	it, err := c.Read(ctx, flt)
	if err != nil {
		return nil, err
	}
	return it.Array()
}

func namesOf(ps []Product) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

func sortedNames(ps []Product) []string {
	names := namesOf(ps)
	slices.Sort(names)
	return names
}

// quotas asks the client's Observability for the namespace's limits and
// usage: a server without quotas bounds nothing (0), and the namespace
// stores the flow's documents.
func (f *flow) quotas(ctx context.Context, t *testing.T) {
	o, err := driver.NewObservability(ctx, &config.Driver{URL: f.e.url})
	if err != nil {
		t.Fatalf("driver.NewObservability: %v", err)
	}
	defer o.Close()
	limits, err := o.QuotaLimits(ctx)
	if err != nil || limits.ReadUnits != 0 || limits.WriteUnits != 0 || limits.StorageSize != 0 {
		t.Errorf("QuotaLimits: %+v, %v; want no bounds", limits, err)
	}
	usage, err := o.QuotaUsage(ctx)
	if err != nil || usage.StorageSize <= 0 {
		t.Errorf("QuotaUsage: %+v, %v; want the bytes of the flow's documents", usage, err)
	}
}
