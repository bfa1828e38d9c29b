package catalog_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

var ctx = context.Background()

const usersSchema = `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"primary_key":["id"]}`

// run commits fn in a transaction of its own, failing the test on an error.
func run(t *testing.T, s kv.Store, fn func(tx kv.Tx) error) kv.Position {
	t.Helper()
	pos, err := kv.Run(ctx, s, fn)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// wantStatus fails unless err has the code and its message contains msg.
func wantStatus(t *testing.T, err error, code apierror.Code, msg string) {
	t.Helper()
	e, ok := apierror.From(err)
	if !ok || e.Code != code || !strings.Contains(e.Message, msg) {
		t.Fatalf("error %v, want %s containing %q", err, code, msg)
	}
}

func createDB(t *testing.T, s kv.Store, cat *catalog.Catalog, name string) {
	t.Helper()
	run(t, s, func(tx kv.Tx) error { return cat.CreateDatabase(ctx, tx, ns, name) })
}

// createColl creates (or updates) the collection and returns it as stored.
func createColl(t *testing.T, s kv.Store, cat *catalog.Catalog, dbName, name, schema string) *catalog.Collection {
	t.Helper()
	var coll *catalog.Collection
	run(t, s, func(tx kv.Tx) error {
		db, err := cat.Database(ctx, tx, ns, dbName)
		if err != nil {
			return err
		}
		if _, err := cat.CreateOrUpdateCollection(ctx, tx, db, name, []byte(schema), false); err != nil {
			return err
		}
		coll, err = cat.Collection(ctx, tx, db, name)
		return err
	})
	return coll
}

func schemaOf(name string) string {
	return strings.Replace(usersSchema, `"title":"users"`, `"title":"`+name+`"`, 1)
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"shop", true},
		{"ab", true},
		{"Shop_2", true},
		{"a_", true},
		{strings.Repeat("a", catalog.MaxNameLength), true},
		{strings.Repeat("a", catalog.MaxNameLength+1), false},
		{"", false},
		{"a", false},
		{"2shop", false},
		{"_shop", false},
		{"shop-2", true}, // a dash after the first letter, as in the original's last /v1 release
		{"test-coll", true},
		{"a-", true},
		{"-shop", false},
		{"2-shop", false},
		{"shop.2", false},
		{"shöp", false},
		{"sh op", false},
		{"select", false}, // reserved: a word of the client languages
		{"func", false},
		{"Select", true}, // reserved words are matched exactly
	} {
		if err := catalog.CheckDatabaseName(tc.name); (err == nil) != tc.ok {
			t.Errorf("database name %q: %v, want ok %v", tc.name, err, tc.ok)
		} else if err != nil {
			wantStatus(t, err, apierror.InvalidArgument, "invalid database name")
		}
		if err := catalog.CheckCollectionName(tc.name); (err == nil) != tc.ok {
			t.Errorf("collection name %q: %v, want ok %v", tc.name, err, tc.ok)
		} else if err != nil {
			wantStatus(t, err, apierror.InvalidArgument, "invalid collection name")
		}
	}
}

func TestDatabases(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "shop")
		createDB(t, s, cat, "arts")
		list := func() []string {
			var names []string
			run(t, s, func(tx kv.Tx) error {
				dbs, err := cat.ListDatabases(ctx, tx, ns)
				names = names[:0]
				for _, db := range dbs {
					names = append(names, db.Name)
				}
				return err
			})
			return names
		}
		if got := list(); !slices.Equal(got, []string{"arts", "shop"}) {
			t.Errorf("databases %q, want arts, shop in name order", got)
		}
		for _, tc := range []struct {
			name string
			fn   func(tx kv.Tx) error
			code apierror.Code
			msg  string
		}{
			{"create a taken name", func(tx kv.Tx) error { return cat.CreateDatabase(ctx, tx, ns, "shop") }, apierror.AlreadyExists, "database already exist"},
			{"create a bad name", func(tx kv.Tx) error { return cat.CreateDatabase(ctx, tx, ns, "x") }, apierror.InvalidArgument, "invalid database name"},
			{"get a missing one", func(tx kv.Tx) error { _, err := cat.Database(ctx, tx, ns, "nope"); return err }, apierror.NotFound, "database doesn't exist 'nope'"},
			{"drop a missing one", func(tx kv.Tx) error { return cat.DropDatabase(ctx, tx, ns, "nope") }, apierror.NotFound, "database doesn't exist 'nope'"},
			{"look up in a missing one", func(tx kv.Tx) error { _, err := cat.Lookup(ctx, tx, ns, "nope", "users"); return err }, apierror.NotFound, "database doesn't exist 'nope'"},
		} {
			_, err := kv.Run(ctx, s, tc.fn)
			t.Run(tc.name, func(t *testing.T) { wantStatus(t, err, tc.code, tc.msg) })
		}
		var ids []int64
		run(t, s, func(tx kv.Tx) error {
			ids = ids[:0]
			for _, name := range []string{"arts", "shop"} {
				db, err := cat.Database(ctx, tx, ns, name)
				if err != nil {
					return err
				}
				ids = append(ids, db.ID)
			}
			return nil
		})
		if ids[0] == ids[1] || ids[0] == 0 {
			t.Errorf("database ids %v, want two distinct ids", ids)
		}
		run(t, s, func(tx kv.Tx) error { return cat.DropDatabase(ctx, tx, ns, "arts") })
		if got := list(); !slices.Equal(got, []string{"shop"}) {
			t.Errorf("databases after the drop %q, want shop", got)
		}
		createDB(t, s, cat, "arts")
		run(t, s, func(tx kv.Tx) error {
			db, err := cat.Database(ctx, tx, ns, "arts")
			if err == nil && slices.Contains(ids, db.ID) {
				t.Errorf("a re-created database got an old id %d", db.ID)
			}
			return err
		})
	})
}

func TestCollections(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "shop")
		users := createColl(t, s, cat, "shop", "users", usersSchema)
		orders := createColl(t, s, cat, "shop", "orders", schemaOf("orders"))
		if users.Rev != 1 || users.DB.Name != "shop" || users.Schema == nil || users.ID == orders.ID {
			t.Fatalf("created %+v and %+v", users, orders)
		}
		// Data of the collection, to see that a drop removes it.
		doc, err := keyspace.Document(users.ID, []any{int64(1)})
		if err != nil {
			t.Fatal(err)
		}
		run(t, s, func(tx kv.Tx) error { return tx.Set(doc, []byte("{}")) })

		inShop := func(fn func(tx kv.Tx, db *catalog.Database) error) func(tx kv.Tx) error {
			return func(tx kv.Tx) error {
				db, err := cat.Database(ctx, tx, ns, "shop")
				if err != nil {
					return err
				}
				return fn(tx, db)
			}
		}
		for _, tc := range []struct {
			name string
			fn   func(tx kv.Tx, db *catalog.Database) error
			code apierror.Code
			msg  string
		}{
			{"create only, taken", func(tx kv.Tx, db *catalog.Database) error {
				_, err := cat.CreateOrUpdateCollection(ctx, tx, db, "users", []byte(usersSchema), true)
				return err
			}, apierror.AlreadyExists, "collection already exist"},
			{"bad name", func(tx kv.Tx, db *catalog.Database) error {
				_, err := cat.CreateOrUpdateCollection(ctx, tx, db, "u.s", []byte(usersSchema), false)
				return err
			}, apierror.InvalidArgument, "invalid collection name"},
			{"bad schema", func(tx kv.Tx, db *catalog.Database) error {
				_, err := cat.CreateOrUpdateCollection(ctx, tx, db, "things", []byte(`{"title":`), false)
				return err
			}, apierror.InvalidArgument, ""},
			{"get a missing one", func(tx kv.Tx, db *catalog.Database) error {
				_, err := cat.Collection(ctx, tx, db, "things")
				return err
			}, apierror.NotFound, "collection doesn't exist 'things'"},
			{"look up a missing one", func(tx kv.Tx, db *catalog.Database) error {
				_, err := cat.Lookup(ctx, tx, ns, "shop", "things")
				return err
			}, apierror.NotFound, "collection doesn't exist 'things'"},
			// "exists": the original server's wording, which clients match.
			{"drop a missing one", func(tx kv.Tx, db *catalog.Database) error {
				return cat.DropCollection(ctx, tx, db, "things")
			}, apierror.NotFound, "collection doesn't exists 'things'"},
		} {
			_, err := kv.Run(ctx, s, inShop(tc.fn))
			t.Run(tc.name, func(t *testing.T) { wantStatus(t, err, tc.code, tc.msg) })
		}
		// ops tells a drop's missing collection apart (to reword it for
		// the 2023 API) by IsNoCollectionToDrop: that error, of that name.
		_, dropErr := kv.Run(ctx, s, inShop(func(tx kv.Tx, db *catalog.Database) error { return cat.DropCollection(ctx, tx, db, "things") }))
		_, getErr := kv.Run(ctx, s, inShop(func(tx kv.Tx, db *catalog.Database) error {
			_, err := cat.Collection(ctx, tx, db, "things")
			return err
		}))
		if !catalog.IsNoCollectionToDrop(dropErr, "things") || catalog.IsNoCollectionToDrop(dropErr, "thing") ||
			catalog.IsNoCollectionToDrop(getErr, "things") || catalog.IsNoCollectionToDrop(nil, "things") {
			t.Errorf("IsNoCollectionToDrop: the drop's %v and the read's %v told apart wrongly", dropErr, getErr)
		}

		run(t, s, inShop(func(tx kv.Tx, db *catalog.Database) error {
			colls, err := cat.ListCollections(ctx, tx, db)
			var names []string
			for _, c := range colls {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, []string{"orders", "users"}) {
				t.Errorf("collections %q, want orders, users in name order", names)
			}
			return err
		}))
		run(t, s, inShop(func(tx kv.Tx, db *catalog.Database) error { return cat.DropCollection(ctx, tx, db, "users") }))
		run(t, s, func(tx kv.Tx) error {
			if _, err := tx.Get(ctx, doc); !errors.Is(err, kv.ErrNotFound) {
				t.Errorf("a document of the dropped collection: %v, want it gone", err)
			}
			_, err := cat.Lookup(ctx, tx, ns, "shop", "users")
			wantStatus(t, err, apierror.NotFound, "collection doesn't exist 'users'")
			return nil
		})
		again := createColl(t, s, cat, "shop", "users", usersSchema)
		if again.ID == users.ID || again.Rev != 1 {
			t.Errorf("re-created collection: id %d (was %d), revision %d; want a new id at revision 1", again.ID, users.ID, again.Rev)
		}
	})
}

func TestSchemaEvolution(t *testing.T) {
	const base = `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":10}},"primary_key":["id"]}`
	for _, tc := range []struct {
		name   string
		schema string
		ok     bool
	}{
		{"the same schema", base, true},
		{"a field added", `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":10},"age":{"type":"integer"}},"primary_key":["id"]}`, true},
		{"a length raised", `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":20}},"primary_key":["id"]}`, true},
		{"a field removed", `{"title":"users","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`, false},
		{"a type changed", `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"integer"}},"primary_key":["id"]}`, false},
		{"a length reduced", `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":5}},"primary_key":["id"]}`, false},
		{"the primary key changed", `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":10}},"primary_key":["name"]}`, false},
		{"the collection type changed", `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":10}},"collection_type":"messages"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cat := backendtest.OpenPebble(t), catalog.New()
			createDB(t, s, cat, "shop")
			before := createColl(t, s, cat, "shop", "users", base)
			var created bool
			_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
				db, err := cat.Database(ctx, tx, ns, "shop")
				if err != nil {
					return err
				}
				created, err = cat.CreateOrUpdateCollection(ctx, tx, db, "users", []byte(tc.schema), false)
				return err
			})
			var after *catalog.Collection
			run(t, s, func(tx kv.Tx) error {
				var err error
				after, err = cat.Lookup(ctx, tx, ns, "shop", "users")
				return err
			})
			if !tc.ok {
				if apierror.CodeOf(err) != apierror.InvalidArgument {
					t.Fatalf("refused change: %v, want INVALID_ARGUMENT", err)
				}
				if after.Rev != before.Rev || string(after.Schema.Raw()) != string(before.Schema.Raw()) {
					t.Errorf("a refused change still changed the collection: revision %d, schema %s", after.Rev, after.Schema.Raw())
				}
				return
			}
			if err != nil || created {
				t.Fatalf("compatible change: created %v, %v", created, err)
			}
			if after.Rev != before.Rev+1 || after.ID != before.ID {
				t.Errorf("after the change: id %d revision %d, want id %d revision %d", after.ID, after.Rev, before.ID, before.Rev+1)
			}
		})
	}
}

// Lookup remembers database ids. One that went stale, because the database
// was dropped and created again through another Catalog (another node),
// must lead to the new incarnation, never to the old.
func TestLookupAfterRecreate(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		node1, node2 := catalog.New(), catalog.New()
		createDB(t, s, node2, "shop")
		old := createColl(t, s, node2, "shop", "users", usersSchema)
		lookup := func() (*catalog.Collection, error) {
			var coll *catalog.Collection
			_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
				var err error
				coll, err = node1.Lookup(ctx, tx, ns, "shop", "users")
				return err
			})
			return coll, err
		}
		if coll, err := lookup(); err != nil || coll.ID != old.ID {
			t.Fatalf("first lookup: %+v, %v", coll, err)
		}

		// Dropped and created again without the collection.
		run(t, s, func(tx kv.Tx) error { return node2.DropDatabase(ctx, tx, ns, "shop") })
		createDB(t, s, node2, "shop")
		if coll, err := lookup(); apierror.CodeOf(err) != apierror.NotFound {
			t.Fatalf("lookup after the database was re-created empty: %+v, %v; want NOT_FOUND", coll, err)
		}

		// Dropped and created again with a collection of the same name.
		run(t, s, func(tx kv.Tx) error { return node2.DropDatabase(ctx, tx, ns, "shop") })
		createDB(t, s, node2, "shop")
		recreated := createColl(t, s, node2, "shop", "users", usersSchema)
		coll, err := lookup()
		if err != nil {
			t.Fatal(err)
		}
		if coll.ID != recreated.ID || coll.DB.ID != recreated.DB.ID || coll.DB.ID == old.DB.ID {
			t.Errorf("lookup found collection %d of database %d, want the new incarnation %d of %d (the old was %d of %d)",
				coll.ID, coll.DB.ID, recreated.ID, recreated.DB.ID, old.ID, old.DB.ID)
		}
	})
}

// A schema written by a transaction that then failed is never what a later
// one reads: a rolled-back create leaves its collection id free for the
// next create, and a rolled-back change its revision for the next change,
// each with another schema.
func TestSchemaOfARolledBackChange(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		cat := catalog.New()
		createDB(t, s, cat, "shop")
		failed := errors.New("the transaction fails")
		attempt := func(name, schema string) {
			t.Helper()
			_, err := kv.Run(ctx, s, func(tx kv.Tx) error {
				db, err := cat.Database(ctx, tx, ns, "shop")
				if err != nil {
					return err
				}
				if _, err := cat.CreateOrUpdateCollection(ctx, tx, db, name, []byte(schema), false); err != nil {
					return err
				}
				if _, err := cat.Collection(ctx, tx, db, name); err != nil {
					return err
				}
				return failed
			})
			if !errors.Is(err, failed) {
				t.Fatalf("the failing transaction: %v", err)
			}
		}
		attempt("users", `{"title":"users","properties":{"id":{"type":"integer"},"gone":{"type":"string"}},"primary_key":["id"]}`)
		coll := createColl(t, s, cat, "shop", "users", usersSchema)
		if got := string(coll.Schema.Raw()); got != usersSchema {
			t.Errorf("after a rolled-back create: schema %s, want %s", got, usersSchema)
		}
		attempt("users", strings.Replace(usersSchema, `"name":{"type":"string"}`, `"name":{"type":"string"},"gone":{"type":"string"}`, 1))
		next := strings.Replace(usersSchema, `"name":{"type":"string"}`, `"name":{"type":"string"},"kept":{"type":"string"}`, 1)
		if got := string(createColl(t, s, cat, "shop", "users", next).Schema.Raw()); got != next {
			t.Errorf("after a rolled-back change: schema %s, want %s", got, next)
		}
	})
}

// DDL is transactional: until its transaction commits, nobody else sees it.
func TestDDLInvisibleBeforeCommit(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "shop")
		createColl(t, s, cat, "shop", "users", usersSchema)

		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := cat.CreateDatabase(ctx, tx, ns, "arts"); err != nil {
			t.Fatal(err)
		}
		arts, err := cat.Database(ctx, tx, ns, "arts")
		if err != nil {
			t.Fatalf("the creating transaction does not see its database: %v", err)
		}
		if _, err := cat.CreateOrUpdateCollection(ctx, tx, arts, "paintings", []byte(schemaOf("paintings")), false); err != nil {
			t.Fatal(err)
		}
		if err := cat.DropDatabase(ctx, tx, ns, "shop"); err != nil {
			t.Fatal(err)
		}
		if _, err := cat.Lookup(ctx, tx, ns, "arts", "paintings"); err != nil {
			t.Fatalf("the creating transaction does not see its collection: %v", err)
		}

		// Another transaction, meanwhile, sees none of it: no arts, and shop
		// with its collection still there.
		other := func(t *testing.T, wantNew bool) {
			t.Helper()
			run(t, s, func(tx kv.Tx) error {
				dbs, err := cat.ListDatabases(ctx, tx, ns)
				if err != nil {
					return err
				}
				var names []string
				for _, db := range dbs {
					names = append(names, db.Name)
				}
				want := []string{"shop"}
				if wantNew {
					want = []string{"arts"}
				}
				if !slices.Equal(names, want) {
					t.Errorf("another transaction lists %q, want %q", names, want)
				}
				_, err = cat.Lookup(ctx, tx, ns, "arts", "paintings")
				_, err2 := cat.Lookup(ctx, tx, ns, "shop", "users")
				// A record Lookup reused is checked before the answer
				// counts (the retry reads it).
				if cerr := tx.CheckExpected(ctx); cerr != nil {
					return cerr
				}
				if wantNew != (err == nil) || wantNew == (err2 == nil) {
					t.Errorf("another transaction: arts.paintings %v, shop.users %v", err, err2)
				}
				return nil
			})
		}
		other(t, false)
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		other(t, true)
	})
}

// logged is a log entry's records, shown compactly.
type logged struct {
	pos     kv.Position
	records []changelog.Record
}

// readLog returns the log entries after after, through the commit at
// through, waiting for that commit to be readable (on PostgreSQL a commit
// becomes readable once older transactions have ended).
func readLog(t *testing.T, s kv.Store, after, through kv.Position) []logged {
	t.Helper()
	var out []logged
	for after < through {
		if err := s.WaitLog(ctx, after); err != nil {
			t.Fatal(err)
		}
		entries, upTo, err := s.ReadLog(ctx, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			l := logged{pos: e.Pos}
			for _, b := range e.Records {
				r, err := changelog.Decode(b)
				if err != nil {
					t.Fatalf("entry %d: %v", e.Pos, err)
				}
				l.records = append(l.records, r)
			}
			out = append(out, l)
		}
		after = upTo
	}
	return out
}

// DDL goes into the change log in the transaction that does it.
func TestDDLRecords(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		start, err := s.LastPosition(ctx)
		if err != nil {
			t.Fatal(err)
		}
		createDB(t, s, cat, "shop")
		users := createColl(t, s, cat, "shop", "users", usersSchema)
		changed := `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"}},"primary_key":["id"]}`
		createColl(t, s, cat, "shop", "users", changed)
		// A refused change logs nothing: its transaction does not commit.
		_, err = kv.Run(ctx, s, func(tx kv.Tx) error {
			db, err := cat.Database(ctx, tx, ns, "shop")
			if err != nil {
				return err
			}
			fieldRemoved := `{"title":"users","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`
			_, err = cat.CreateOrUpdateCollection(ctx, tx, db, "users", []byte(fieldRemoved), false)
			return err
		})
		if apierror.CodeOf(err) != apierror.InvalidArgument {
			t.Fatalf("refused change: %v", err)
		}
		orders := createColl(t, s, cat, "shop", "orders", schemaOf("orders"))
		run(t, s, func(tx kv.Tx) error {
			db, err := cat.Database(ctx, tx, ns, "shop")
			if err != nil {
				return err
			}
			return cat.DropCollection(ctx, tx, db, "orders")
		})
		createColl(t, s, cat, "shop", "carts", schemaOf("carts"))
		var carts *catalog.Collection
		run(t, s, func(tx kv.Tx) error {
			var err error
			carts, err = cat.Lookup(ctx, tx, ns, "shop", "carts")
			return err
		})
		last := run(t, s, func(tx kv.Tx) error { return cat.DropDatabase(ctx, tx, ns, "shop") })

		type want struct {
			op         changelog.Op
			coll       string
			collID     int64
			rev        int64
			schemaHint string // in Data
		}
		dbID := users.DB.ID
		wantEntries := [][]want{
			// Creating a database logs nothing: nothing reads a database
			// before it has a collection.
			{{changelog.CollectionCreated, "users", users.ID, 1, `"name":{"type":"string"}}`}},
			{{changelog.SchemaChanged, "users", users.ID, 2, `"age"`}},
			{{changelog.CollectionCreated, "orders", orders.ID, 1, `"title":"orders"`}},
			{{changelog.CollectionDropped, "orders", orders.ID, 0, ""}},
			{{changelog.CollectionCreated, "carts", carts.ID, 1, `"title":"carts"`}},
			{
				{changelog.CollectionDropped, "carts", carts.ID, 0, ""},
				{changelog.CollectionDropped, "users", users.ID, 0, ""},
				{changelog.DatabaseDropped, "", 0, 0, ""},
			},
		}
		got := readLog(t, s, start, last)
		if len(got) != len(wantEntries) {
			t.Fatalf("%d log entries, want %d: %+v", len(got), len(wantEntries), got)
		}
		for i, e := range got {
			if len(e.records) != len(wantEntries[i]) {
				t.Fatalf("entry %d: %d records, want %d: %+v", i, len(e.records), len(wantEntries[i]), e.records)
			}
			for j, r := range e.records {
				w := wantEntries[i][j]
				if r.Op != w.op || r.DB != "shop" || r.DBID != dbID || r.Collection != w.coll || r.CollID != w.collID ||
					r.Rev != w.rev || len(r.Key) != 0 || !strings.Contains(string(r.Data), w.schemaHint) || (w.schemaHint == "") != (r.Data == nil) {
					t.Errorf("entry %d record %d: %s %s(%d).%s(%d) rev %d key %q data %s; want %s of %s(%d) rev %d with %s",
						i, j, r.Op, r.DB, r.DBID, r.Collection, r.CollID, r.Rev, r.Key, r.Data, w.op, w.coll, w.collID, w.rev, w.schemaHint)
				}
			}
		}
		if got[len(got)-1].pos != last {
			t.Errorf("the database drop is at %d, want its commit's position %d", got[len(got)-1].pos, last)
		}
	})
}

// ns is the namespace the tests keep their databases in.
const ns = keyspace.DefaultNamespace

// A data directory written before namespaces holds database records
// without one: moving them into the default namespace keeps each database
// with its collections and documents, finds nothing more to move the second
// time, and leaves other namespaces empty.
func TestMoveLegacyDatabases(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		cat := catalog.New()
		createDB(t, s, cat, "shop")
		coll := createColl(t, s, cat, "shop", "users", schemaOf("users"))
		// Put the record back where the old layout kept it.
		run(t, s, func(tx kv.Tx) error {
			rec, err := tx.Get(ctx, keyspace.Database(ns, "shop"))
			if err != nil {
				return err
			}
			legacy, err := keyenc.Pack(keyenc.Tuple{"c", "d", "shop"})
			if err != nil {
				return err
			}
			if err := tx.Clear(keyspace.Database(ns, "shop")); err != nil {
				return err
			}
			return tx.Set(legacy, rec)
		})
		fresh := catalog.New() // no cached ids
		run(t, s, func(tx kv.Tx) error {
			_, err := fresh.Database(ctx, tx, ns, "shop")
			wantStatus(t, err, apierror.NotFound, "database doesn't exist 'shop'")
			return nil
		})
		for i, want := range []int{1, 0} {
			moved, err := catalog.MoveLegacyDatabases(ctx, s)
			if err != nil || moved != want {
				t.Fatalf("move %d: %d moved (%v), want %d", i, moved, err, want)
			}
		}
		run(t, s, func(tx kv.Tx) error {
			got, err := fresh.Lookup(ctx, tx, ns, "shop", "users")
			if err != nil {
				return err
			}
			if got.ID != coll.ID {
				t.Errorf("the moved database's collection has id %d, was %d", got.ID, coll.ID)
			}
			other, err := fresh.ListDatabases(ctx, tx, ns+1)
			if err != nil || len(other) != 0 {
				t.Errorf("another namespace lists %v (%v)", other, err)
			}
			return nil
		})
	})
}

// failingBegin is a store whose transactions cannot begin while failing
// is set, as a store out of reach.
type failingBegin struct {
	kv.Store
	failing atomic.Bool
}

func (s *failingBegin) Begin(ctx context.Context) (kv.Tx, error) {
	if s.failing.Load() {
		return nil, kv.ErrUnavailable
	}
	return s.Store.Begin(ctx)
}

// An upgrade that cannot reach the store fails, and succeeds on a later
// try; once done it does not read the store again.
func TestUpgradeRetries(t *testing.T) {
	s := &failingBegin{Store: backendtest.OpenPebble(t)}
	cat := catalog.New()
	createDB(t, s, cat, "shop")
	legacy, _ := keyenc.Pack(keyenc.Tuple{"c", "d", "old"})
	run(t, s, func(tx kv.Tx) error { return tx.Set(legacy, []byte(`{"id":99}`)) })
	u := catalog.NewUpgrade(s, nil)
	s.failing.Store(true)
	if err := u.Ensure(ctx); !errors.Is(err, kv.ErrUnavailable) {
		t.Fatalf("an upgrade without its store: %v", err)
	}
	s.failing.Store(false)
	if err := u.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	s.failing.Store(true)
	if err := u.Ensure(ctx); err != nil {
		t.Fatalf("a done upgrade read the store again: %v", err)
	}
	s.failing.Store(false)
	run(t, s, func(tx kv.Tx) error {
		if _, err := cat.Database(ctx, tx, ns, "old"); err != nil {
			t.Errorf("the old database after the upgrade: %v", err)
		}
		return nil
	})
}

// Lookup reuses the collection record it read last without reading it
// again; the transaction checks it with its next read, so a schema changed
// by another node fails that read with a retryable conflict once, and the
// retry sees the new schema.
func TestLookupChecksWhatItReuses(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		node1, node2 := catalog.New(), catalog.New()
		createDB(t, s, node2, "shop")
		createColl(t, s, node2, "shop", "users", usersSchema)
		lookup := func(tx kv.Tx) (*catalog.Collection, error) {
			coll, err := node1.Lookup(ctx, tx, ns, "shop", "users")
			if err != nil {
				return nil, err
			}
			// The request's first read, which carries the check.
			_, err = tx.Get(ctx, []byte("some document"))
			if errors.Is(err, kv.ErrNotFound) {
				err = nil
			}
			return coll, err
		}
		for range 2 { // the first reads the record, the second reuses it
			run(t, s, func(tx kv.Tx) error { _, err := lookup(tx); return err })
		}

		wider := strings.Replace(usersSchema, `"name":{"type":"string"}`, `"name":{"type":"string"},"age":{"type":"integer"}`, 1)
		run(t, s, func(tx kv.Tx) error {
			db, err := node2.Database(ctx, tx, ns, "shop")
			if err != nil {
				return err
			}
			_, err = node2.CreateOrUpdateCollection(ctx, tx, db, "users", []byte(wider), false)
			return err
		})
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lookup(tx); !errors.Is(err, kv.ErrConflict) || !kv.IsRetryable(err) {
			t.Fatalf("a stale record: %v, want a retryable conflict", err)
		}
		tx.Rollback()
		var coll *catalog.Collection
		run(t, s, func(tx kv.Tx) error { coll, err = lookup(tx); return err })
		if coll.Rev != 2 {
			t.Errorf("after the retry: revision %d, want 2", coll.Rev)
		}
		// A DDL on this node forgets what Lookup would reuse; the record read
		// again (found among the decoded records this time) is reused from
		// then on: no read of it.
		createColl(t, s, node1, "shop", "other", schemaOf("other"))
		run(t, s, func(tx kv.Tx) error { _, err := lookup(tx); return err })
		var reads kv.ReadCount
		run(t, s, func(tx kv.Tx) error {
			_, err := node1.Lookup(ctx, kv.CountReads(tx, &reads), ns, "shop", "users")
			return err
		})
		if n := reads.Keys.Load(); n != 0 {
			t.Errorf("a lookup after the record was read again read %d keys, want none", n)
		}
	})
}
