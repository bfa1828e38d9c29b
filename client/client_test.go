package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/client"
)

// User is a collection's model, with a key the server generates.
type User struct {
	ID      int64    `json:"id" tigris:"primaryKey:1,autoGenerate"`
	Name    string   `json:"name"`
	Age     int32    `json:"age"`
	Tags    []string `json:"tags,omitempty"`
	Address struct {
		City string `json:"city"`
	} `json:"address"`
}

func newUser(name string, age int32, city string, tags ...string) *User {
	u := &User{Name: name, Age: age, Tags: tags}
	u.Address.City = city
	return u
}

func TestDatabasesAndCollections(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		ctx := context.Background()
		db, err := c.CreateDatabase(ctx, "shop")
		must(t, err)
		_, err = c.CreateDatabase(ctx, "shop")
		wantCode(t, err, client.AlreadyExists)
		var apiErr *client.Error
		wantStatus := http.StatusConflict
		if !overHTTP(c) {
			wantStatus = 0 // gRPC has no HTTP status
		}
		if !errors.As(err, &apiErr) || apiErr.HTTPStatus != wantStatus || apiErr.Message != "database already exist" {
			t.Fatalf("the error of a second create: %#v", apiErr)
		}
		_, err = c.CreateDatabase(ctx, "1bad")
		wantCode(t, err, client.InvalidArgument)
		dbs, err := c.ListDatabases(ctx)
		must(t, err)
		if len(dbs) != 1 || dbs[0].Name != "shop" {
			t.Fatalf("ListDatabases: %+v", dbs)
		}

		schema, err := client.SchemaOf[User]("users")
		must(t, err)
		must(t, db.CreateCollection(ctx, "users", schema))
		// A raw schema without a title gets the collection's name.
		must(t, db.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"},"text":{"type":"string"}},"primary_key":["id"]}`)))
		wantCode(t, db.CreateCollection(ctx, "bad", []byte(`{"properties":{"x":{"type":"nonsense"}}}`)), client.InvalidArgument)
		if err := db.CreateCollection(ctx, "bad", []byte(`not json`)); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
			t.Fatalf("a schema that is not JSON: %v", err)
		}
		colls, err := db.ListCollections(ctx)
		must(t, err)
		names := []string{}
		for _, c := range colls {
			names = append(names, c.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"notes", "users"}) {
			t.Fatalf("ListCollections: %v", names)
		}
		d, err := db.DescribeCollection(ctx, "users")
		must(t, err)
		if d.Name != "users" || string(d.Schema) != string(schema) {
			t.Fatalf("DescribeCollection: %s %s, want the schema %s", d.Name, d.Schema, schema)
		}
		_, err = db.DescribeCollection(ctx, "nobody")
		wantCode(t, err, client.NotFound)
		dd, err := db.Describe(ctx)
		must(t, err)
		if dd.Name != "shop" || len(dd.Collections) != 2 {
			t.Fatalf("Describe: %+v", dd)
		}
		must(t, db.DropCollection(ctx, "notes"))
		wantCode(t, db.DropCollection(ctx, "notes"), client.NotFound)
		must(t, db.Drop(ctx))
		wantCode(t, db.Drop(ctx), client.NotFound)
		_, err = db.Describe(ctx)
		wantCode(t, err, client.NotFound)

		info, err := c.Info(ctx)
		must(t, err)
		if info.ServerVersion == "" || (info.Engine != "pebble" && info.Engine != "postgres") || info.Auth {
			t.Fatalf("Info: %+v, want a version, an engine, no auth", info)
		}
		must(t, c.Health(ctx))
	})
}

// newUsers makes the database shop with a users collection.
func newUsers(t *testing.T, c *client.Client) (*client.Database, *client.Collection[User]) {
	t.Helper()
	ctx := context.Background()
	db, err := c.CreateDatabase(ctx, "shop")
	must(t, err)
	schema, err := client.SchemaOf[User]("users")
	must(t, err)
	must(t, db.CreateCollection(ctx, "users", schema))
	return db, client.Coll[User](db, "users")
}

func names(t *testing.T, seq func(func(User, error) bool)) []string {
	t.Helper()
	var out []string
	for u, err := range seq {
		must(t, err)
		out = append(out, u.Name)
	}
	return out
}

func TestDocuments(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		ctx := context.Background()
		_, users := newUsers(t, c)
		ann, bob, cy := newUser("Ann", 30, "Paris", "a", "b"), newUser("Bob", 20, "Oslo"), newUser("Cy", 40, "Rome", "b")
		keys, err := users.Insert(ctx, ann, bob, cy)
		must(t, err)
		// The generated keys come back, in the documents and as keys.
		if ann.ID == 0 || bob.ID == 0 || ann.ID == bob.ID || len(keys) != 3 || string(keys[0]) != fmt.Sprintf(`{"id":%d}`, ann.ID) {
			t.Fatalf("generated keys: %d %d, keys %s", ann.ID, bob.ID, keys)
		}
		again := *ann
		_, err = users.Insert(ctx, &again)
		wantCode(t, err, client.AlreadyExists)

		all := names(t, users.Read(ctx, client.All()))
		if !slices.Equal(all, []string{"Ann", "Bob", "Cy"}) {
			t.Fatalf("Read all: %v", all)
		}
		for _, tc := range []struct {
			filter client.Filter
			opts   []client.Option
			want   []string
		}{
			{client.Eq("name", "Bob"), nil, []string{"Bob"}},
			{client.Eq("name", "bob"), []client.Option{client.CaseInsensitive()}, []string{"Bob"}},
			{client.Gt("age", 25), nil, []string{"Ann", "Cy"}},
			{client.And(client.Gte("age", 20), client.Lt("age", 40)), nil, []string{"Ann", "Bob"}},
			{client.Or(client.Eq("address.city", "Oslo"), client.Lte("age", 20), client.Eq("name", "Cy")), nil, []string{"Bob", "Cy"}},
			{client.Eq("tags", "b"), nil, []string{"Ann", "Cy"}},
			{client.RawFilter([]byte(`{"age":{"$gt":35}}`)), nil, []string{"Cy"}},
			{client.All(), []client.Option{client.Sort(client.Desc("age"))}, []string{"Cy", "Ann", "Bob"}},
			{client.All(), []client.Option{client.Sort(client.Asc("age")), client.Limit(2)}, []string{"Bob", "Ann"}},
			{client.All(), []client.Option{client.Skip(1)}, []string{"Bob", "Cy"}},
		} {
			got := names(t, users.Read(ctx, tc.filter, tc.opts...))
			if !slices.Equal(got, tc.want) {
				f, _ := json.Marshal(tc.filter)
				t.Errorf("Read %s: %v, want %v", f, got, tc.want)
			}
		}
		// Fields, metadata and resuming after a document.
		var first client.Document[User]
		for d, err := range users.ReadDocuments(ctx, client.All(), client.Fields("name"), client.Limit(1)) {
			must(t, err)
			first = d
		}
		if first.Data.Name != "Ann" || first.Data.Age != 0 || first.CreatedAt.IsZero() || first.ResumeToken == "" {
			t.Fatalf("ReadDocuments with Fields: %+v", first)
		}
		if got := names(t, users.Read(ctx, client.All(), client.After(first.ResumeToken))); !slices.Equal(got, []string{"Bob", "Cy"}) {
			t.Fatalf("Read after Ann: %v", got)
		}
		// Breaking out of a read ends it.
		n := 0
		for range users.Read(ctx, client.All()) {
			n++
			break
		}
		if n != 1 {
			t.Fatal("break did not stop the read")
		}
		u, err := users.ReadOne(ctx, client.Eq("id", bob.ID))
		must(t, err)
		if u.Name != "Bob" || u.Address.City != "Oslo" {
			t.Fatalf("ReadOne: %+v", u)
		}
		_, err = users.ReadOne(ctx, client.Eq("name", "Zed"))
		if !errors.Is(err, client.ErrNoDocument) {
			t.Fatalf("ReadOne of nothing: %v", err)
		}
		for range users.Read(ctx, client.Eq("nosuchfield", 1)) {
		}
		_, err = users.ReadOne(ctx, client.Eq("nosuchfield", 1))
		wantCode(t, err, client.InvalidArgument)

		// Update and delete answer counts.
		n64, err := users.Update(ctx, client.Gte("age", 30), client.Set("address.city", "Lyon").Set("age", 50).Unset("tags"))
		must(t, err)
		if n64 != 2 {
			t.Fatalf("Update changed %d", n64)
		}
		u, err = users.ReadOne(ctx, client.Eq("name", "Ann"))
		must(t, err)
		if u.Age != 50 || u.Address.City != "Lyon" || u.Tags != nil {
			t.Fatalf("after the update: %+v", u)
		}
		n64, err = users.Update(ctx, client.Eq("age", 50), client.Set("age", 51), client.Limit(1))
		must(t, err)
		if n64 != 1 {
			t.Fatalf("Update with a limit changed %d", n64)
		}
		_, err = users.Update(ctx, client.All(), client.Set("age", "old"))
		wantCode(t, err, client.InvalidArgument)

		// Replace sets the whole document.
		bob.Name, bob.Age = "Robert", 21
		_, err = users.Replace(ctx, bob)
		must(t, err)
		u, err = users.ReadOne(ctx, client.Eq("id", bob.ID))
		must(t, err)
		if u.Name != "Robert" || u.Age != 21 {
			t.Fatalf("after replace: %+v", u)
		}
		n64, err = users.Delete(ctx, client.Eq("name", "Robert"))
		must(t, err)
		if n64 != 1 {
			t.Fatalf("Delete deleted %d", n64)
		}
		n64, err = users.Delete(ctx, client.All())
		must(t, err)
		if n64 != 2 {
			t.Fatalf("Delete all deleted %d", n64)
		}
		_, err = client.Coll[User](c.Database("shop"), "nobody").Insert(ctx, newUser("X", 1, "Y"))
		wantCode(t, err, client.NotFound)
	})
}

func TestSearch(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		ctx := context.Background()
		_, users := newUsers(t, c)
		_, err := users.Insert(ctx, newUser("Ann Lee", 30, "Paris"), newUser("Bob Lee", 20, "Paris"), newUser("Cy Rho", 40, "Rome"))
		must(t, err)
		var pages []*client.SearchPage[User]
		for p, err := range users.Search(ctx, client.SearchRequest{Q: "lee", Facets: map[string]int{"address.city": 5}, Sort: []client.SortField{client.Desc("age")}}) {
			must(t, err)
			pages = append(pages, p)
		}
		if len(pages) != 1 || len(pages[0].Hits) != 2 || pages[0].Hits[0].Data.Name != "Ann Lee" || pages[0].Meta.Found != 2 {
			t.Fatalf("search: %+v", pages)
		}
		f := pages[0].Facets["address.city"]
		if len(f.Counts) != 1 || f.Counts[0] != (client.FacetCount{Value: "Paris", Count: 2}) {
			t.Fatalf("facets: %+v", pages[0].Facets)
		}
		// A filter, numeric stats, and one page of one hit at a time.
		pages = nil
		for p, err := range users.Search(ctx, client.SearchRequest{Filter: client.Gte("age", 30), Facets: map[string]int{"age": 0}, PageSize: 1}) {
			must(t, err)
			pages = append(pages, p)
		}
		if len(pages) != 2 || pages[1].Meta.Page.Current != 2 || pages[0].Meta.TotalPages != 2 {
			t.Fatalf("paged search: %+v", pages)
		}
		if st := pages[0].Facets["age"].Stats; st.Count != 2 || st.Sum == nil || *st.Sum != 70 {
			t.Fatalf("numeric stats: %+v", st)
		}
		for _, err := range users.Search(ctx, client.SearchRequest{SearchFields: []string{"age"}, Q: "x"}) {
			wantCode(t, err, client.InvalidArgument)
		}
	})
}

func TestTransactions(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		ctx := context.Background()
		db, users := newUsers(t, c)
		ann := newUser("Ann", 30, "Paris")
		_, err := users.Insert(ctx, ann)
		must(t, err)

		// Committed: both writes; the transaction sees its own.
		must(t, db.Tx(ctx, func(tx *client.Tx) error {
			in := client.Coll[User](tx, "users")
			if _, err := in.Insert(ctx, newUser("Bob", 20, "Oslo")); err != nil {
				return err
			}
			_, err := in.Update(ctx, client.Eq("name", "Ann"), client.Set("age", 31))
			if err != nil {
				return err
			}
			if got := names(t, in.Read(ctx, client.All())); len(got) != 2 {
				return fmt.Errorf("the transaction sees %v", got)
			}
			return nil
		}))
		if got := names(t, users.Read(ctx, client.Gt("age", 30))); !slices.Equal(got, []string{"Ann"}) {
			t.Fatalf("after commit: %v", got)
		}

		// An error of fn rolls back and comes back as it is.
		boom := errors.New("boom")
		err = db.Tx(ctx, func(tx *client.Tx) error {
			if _, err := client.Coll[User](tx, "users").Insert(ctx, newUser("Cy", 40, "Rome")); err != nil {
				return err
			}
			return boom
		})
		if err != boom {
			t.Fatalf("Tx returned %v, want fn's error", err)
		}
		if got := names(t, users.Read(ctx, client.All())); len(got) != 2 {
			t.Fatalf("after rollback: %v", got)
		}

		// A conflict: the first attempt reads Ann's age, then a write
		// outside the transaction changes it, so the commit is ABORTED;
		// the second attempt runs alone and commits.
		attempts := 0
		must(t, db.Tx(ctx, func(tx *client.Tx) error {
			attempts++
			in := client.Coll[User](tx, "users")
			u, err := in.ReadOne(ctx, client.Eq("id", ann.ID))
			if err != nil {
				return err
			}
			if attempts == 1 {
				if _, err := users.Update(ctx, client.Eq("id", ann.ID), client.Set("age", 100)); err != nil {
					return err
				}
			}
			_, err = in.Update(ctx, client.Eq("id", ann.ID), client.Set("age", u.Age+1))
			return err
		}))
		if attempts != 2 {
			t.Fatalf("the conflicting transaction ran %d times, want 2", attempts)
		}
		u, err := users.ReadOne(ctx, client.Eq("id", ann.ID))
		must(t, err)
		if u.Age != 101 {
			t.Fatalf("age after the retried transaction: %d, want 101", u.Age)
		}

		// A transaction that conflicts every time gives up after
		// TxAttempts with the ABORTED error.
		c3 := open(t, c.URL(), client.Options{TxAttempts: 3})
		db3, users3 := c3.Database("shop"), client.Coll[User](c3.Database("shop"), "users")
		attempts = 0
		err = db3.Tx(ctx, func(tx *client.Tx) error {
			attempts++
			if _, err := client.Coll[User](tx, "users").ReadOne(ctx, client.Eq("id", ann.ID)); err != nil {
				return err
			}
			if _, err := users3.Update(ctx, client.Eq("id", ann.ID), client.Set("age", attempts)); err != nil {
				return err
			}
			_, err := client.Coll[User](tx, "users").Update(ctx, client.Eq("id", ann.ID), client.Set("name", "Anna"))
			return err
		})
		wantCode(t, err, client.Aborted)
		if attempts != 3 || !strings.Contains(err.Error(), "aborted 3 times") {
			t.Fatalf("attempts %d, error %v", attempts, err)
		}

		// A snapshot reads one state, keeps nothing it writes, and returns
		// fn's error.
		err = db.Snapshot(ctx, func(tx *client.Tx) error {
			in := client.Coll[User](tx, "users")
			if _, err := in.Insert(ctx, newUser("Dee", 50, "Lyon")); err != nil {
				return err
			}
			if got := names(t, in.Read(ctx, client.All())); len(got) != 3 {
				return fmt.Errorf("the snapshot sees %v", got)
			}
			return boom
		})
		if err != boom {
			t.Fatalf("Snapshot returned %v, want fn's error", err)
		}
		must(t, db.Snapshot(ctx, func(tx *client.Tx) error { return nil }))
		if got := names(t, users.Read(ctx, client.All())); len(got) != 2 {
			t.Fatalf("after a snapshot: %v", got)
		}

		// Collections calls in a transaction.
		must(t, db.Tx(ctx, func(tx *client.Tx) error {
			if err := tx.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"}}}`)); err != nil {
				return err
			}
			colls, err := tx.ListCollections(ctx)
			if err != nil || len(colls) != 2 {
				return fmt.Errorf("collections in the transaction: %v %v", colls, err)
			}
			_, err = tx.DescribeCollection(ctx, "notes")
			return err
		}))
		_, err = db.DescribeCollection(ctx, "notes")
		must(t, err)
	})
}
