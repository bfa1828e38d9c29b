package changelog_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

const (
	usersV1 = `{"title":"users","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`
	usersV2 = `{"title":"users","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"primary_key":["id"]}`
	orders  = `{"title":"orders","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`
)

// The log reader test: DDL reaches a reader as records in commit order, the
// trimmer holds for a slow reader, and cuts off one past the bound.
func TestReaderSeesDDLAndHoldsTheTrimmer(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{Retention: time.Hour, MaxHold: 2 * time.Hour})
		cat := catalog.New()
		start := last(t, s)
		slow := open(t, l, start) // never reads until it is cut off
		reader := open(t, l, start)

		ddl := func(fn func(tx kv.Tx) error) kv.Position {
			t.Helper()
			pos, err := kv.Run(ctx, s, fn)
			if err != nil {
				t.Fatal(err)
			}
			return pos
		}
		inShop := func(fn func(tx kv.Tx, db *catalog.Database) error) func(tx kv.Tx) error {
			return func(tx kv.Tx) error {
				db, err := cat.Database(ctx, tx, ns, "shop")
				if err != nil {
					return err
				}
				return fn(tx, db)
			}
		}
		createColl := func(name, schema string) func(tx kv.Tx, db *catalog.Database) error {
			return func(tx kv.Tx, db *catalog.Database) error {
				_, err := cat.CreateOrUpdateCollection(ctx, tx, db, name, []byte(schema), false)
				return err
			}
		}
		ddl(func(tx kv.Tx) error { return cat.CreateDatabase(ctx, tx, ns, "shop") })
		ddl(inShop(createColl("users", usersV1)))
		ddl(inShop(createColl("orders", orders)))
		ddl(inShop(createColl("users", usersV2)))
		var db *catalog.Database
		var users, ord *catalog.Collection
		ddl(inShop(func(tx kv.Tx, d *catalog.Database) error {
			var err error
			db = d
			if users, err = cat.Collection(ctx, tx, d, "users"); err != nil {
				return err
			}
			ord, err = cat.Collection(ctx, tx, d, "orders")
			return err
		}))
		ddl(inShop(func(tx kv.Tx, db *catalog.Database) error { return cat.DropCollection(ctx, tx, db, "orders") }))
		end := ddl(func(tx kv.Tx) error { return cat.DropDatabase(ctx, tx, ns, "shop") })
		readable(t, s, end)

		type want struct {
			op     changelog.Op
			coll   string
			collID int64
			rev    int64
			data   string
		}
		wantEntries := [][]want{
			{{changelog.CollectionCreated, "users", users.ID, 1, `"title":"users"`}},
			{{changelog.CollectionCreated, "orders", ord.ID, 1, `"title":"orders"`}},
			{{changelog.SchemaChanged, "users", users.ID, 2, `"name":{"type":"string"}`}},
			{{changelog.CollectionDropped, "orders", ord.ID, 0, ""}},
			{
				{changelog.CollectionDropped, "users", users.ID, 0, ""},
				{changelog.DatabaseDropped, "", 0, 0, ""},
			},
		}
		check := func(who string, entries []changelog.Entry) {
			t.Helper()
			if len(entries) != len(wantEntries) {
				t.Fatalf("%s read %d entries, want %d", who, len(entries), len(wantEntries))
			}
			for i, e := range entries {
				if i > 0 && e.Pos <= entries[i-1].Pos {
					t.Errorf("%s: entry %d at %d after %d: not in commit order", who, i, e.Pos, entries[i-1].Pos)
				}
				if len(e.Records) != len(wantEntries[i]) {
					t.Fatalf("%s: entry %d has %d records, want %d", who, i, len(e.Records), len(wantEntries[i]))
				}
				for j, r := range e.Records {
					w := wantEntries[i][j]
					if r.Op != w.op || r.DB != "shop" || r.DBID != db.ID || r.Collection != w.coll || r.CollID != w.collID ||
						r.Rev != w.rev || !strings.Contains(string(r.Data), w.data) || (w.data == "") != (r.Data == nil) {
						t.Errorf("%s: entry %d record %d: %s %s(%d).%s(%d) rev %d %s; want %s %s(%d).%s(%d) rev %d %s", who, i, j,
							r.Op, r.DB, r.DBID, r.Collection, r.CollID, r.Rev, r.Data, w.op, "shop", db.ID, w.coll, w.collID, w.rev, w.data)
					}
				}
			}
			if entries[len(entries)-1].Pos != end {
				t.Errorf("%s: the database drop at %d, want %d", who, entries[len(entries)-1].Pos, end)
			}
		}
		check("the reader", readAll(t, reader, end))

		// The trimmer notes the end of the log; an hour later the retention
		// alone would trim through it, but the slow reader holds it.
		tick(t, l, 0)
		tick(t, l, time.Hour)
		if !keeps(t, s, start) {
			t.Fatal("the trimmer trimmed entries a reader has not read")
		}
		if l.Readers() != 2 {
			t.Fatalf("%d readers, want 2: nobody is past the bound yet", l.Readers())
		}
		late := open(t, l, start) // what the slow reader holds is all there
		check("a reader opened late", readAll(t, late, end))
		late.Close()

		// Held up to the retention plus the hold (three hours after the
		// note); past it the slow reader is cut off, and the trim proceeds
		// without it.
		tick(t, l, 2*time.Hour+59*time.Minute)
		if !keeps(t, s, start) || l.Readers() != 2 {
			t.Fatalf("cut off before the bound: the log keeps what the slow reader needs: %v; %d readers", keeps(t, s, start), l.Readers())
		}
		tick(t, l, 3*time.Hour)
		if l.Readers() != 1 {
			t.Errorf("%d readers hold the trimmer, want 1: the slow one was cut off", l.Readers())
		}
		_, err := slow.Read(ctx, 0)
		if !errors.Is(err, changelog.ErrCutOff) {
			t.Fatalf("the slow reader's next read: %v, want ErrCutOff", err)
		}
		if keeps(t, s, start) || !keeps(t, s, end) {
			t.Error("the trim did not proceed past the cut-off reader, or went past the reader that kept up")
		}
		if _, err := l.OpenReader(ctx, "test", start); !errors.Is(err, changelog.ErrTrimmed) {
			t.Errorf("a reader opened where the slow one was: %v, want ErrTrimmed", err)
		}
		if _, err := reader.Read(ctx, 0); err != nil {
			t.Errorf("the reader that kept up: %v", err)
		}
	})
}

// ns is the namespace the tests keep their databases in.
const ns = keyspace.DefaultNamespace
