package documents

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// Every change of a document is in the log with the schema revision it was
// validated against, so that a log reader (the search index) knows which
// schema a document follows.
func TestChangesCarryTheSchemaRevision(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	svc := New()
	cat := catalog.New()
	run := func(fn func(tx kv.Tx) error) kv.Position {
		t.Helper()
		pos, err := kv.Run(ctx, store, fn)
		if err != nil {
			t.Fatal(err)
		}
		return pos
	}
	start, err := store.LastPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run(func(tx kv.Tx) error { _, err := svc.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":1}`)}); return err })
	// A compatible change: the same schema again gives revision 2.
	run(func(tx kv.Tx) error {
		_, err := cat.CreateOrUpdateCollection(ctx, tx, coll.DB, coll.Name, coll.Schema.Raw(), false)
		if err == nil {
			coll, err = cat.Collection(ctx, tx, coll.DB, coll.Name)
		}
		return err
	})
	f, err := filter.Parse([]byte(`{"id":1}`), coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	run(func(tx kv.Tx) error {
		_, err := svc.Update(ctx, tx, coll, f, []byte(`{"$set":{"age":3}}`), 0)
		return err
	})
	run(func(tx kv.Tx) error { _, err := svc.Delete(ctx, tx, coll, f, 0); return err })

	entries, _, err := store.ReadLog(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		for _, raw := range e.Records {
			r, err := changelog.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s@%d", r.Op, r.Rev))
		}
	}
	want := "insert@1 schema_changed@2 update@2 delete@2"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("log records: %s, want %s", s, want)
	}
}
