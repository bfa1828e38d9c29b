package catalog_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// versioned is a schema of collection coll: "base" has two fields, and
// "one", "two" and "three" one more each than the one before (those of
// the original's TestSchemaVersion, and a third); "retyped" changes a
// field's type, which no change may. version 0 leaves the member out.
func versioned(coll, variant string, version int) string {
	props := `"int_value":{"type":"integer"},"string_value":{"type":"string"}`
	switch variant {
	case "three":
		props += `,"string_value3":{"type":"string"}`
		fallthrough
	case "two":
		props += `,"string_value2":{"type":"string"}`
		fallthrough
	case "one":
		props += `,"string_value1":{"type":"string"}`
	case "retyped":
		props = `"int_value":{"type":"string"},"string_value":{"type":"string"}`
	}
	v := ""
	if version != 0 {
		v = fmt.Sprintf(`"version":%d,`, version)
	}
	return fmt.Sprintf(`{%s"title":"%s","properties":{%s}}`, v, coll, props)
}

// versionStep is one schema change of a versions test: alone in its
// transaction, or in transaction tx with the steps around it that share it.
type versionStep struct {
	db, coll, variant string
	version           int
	tx                int
	code              apierror.Code // of the refusal, with want its message
	want              string
	stored            int // if set: the version member of the schema stored after the step
}

func (st versionStep) String() string {
	return fmt.Sprintf("%s.%s %s v%d", st.db, st.coll, st.variant, st.version)
}

// runVersionSteps applies steps in order, each refusal checked to have
// changed nothing the transaction can see.
func runVersionSteps(t *testing.T, s kv.Store, cat *catalog.Catalog, steps []versionStep) {
	t.Helper()
	var open kv.Tx
	openTx := 0
	finish := func() {
		if open != nil {
			if _, err := open.Commit(ctx); err != nil {
				t.Fatalf("commit transaction %d: %v", openTx, err)
			}
			open, openTx = nil, 0
		}
	}
	for _, st := range steps {
		if st.tx != openTx {
			finish()
		}
		tx := open
		if tx == nil {
			var err error
			if tx, err = s.Begin(ctx); err != nil {
				t.Fatal(err)
			}
		}
		stored := catalog.BranchDatabase(st.db, "")
		if i := strings.Index(st.db, "@"); i > 0 {
			stored = catalog.BranchDatabase(st.db[:i], st.db[i+1:])
		}
		db, err := cat.Database(ctx, tx, ns, stored)
		if err != nil {
			t.Fatal(err)
		}
		before := catalogState(t, tx, db)
		_, err = cat.CreateOrUpdateCollection(ctx, tx, db, st.coll, []byte(versioned(st.coll, st.variant, st.version)), false)
		if st.want != "" {
			wantStatus(t, err, st.code, st.want)
			if e, _ := apierror.From(err); e.Message != st.want {
				t.Fatalf("%s: message %q, want %q", st, e.Message, st.want)
			}
			if after := catalogState(t, tx, db); !bytes.Equal(before, after) {
				t.Fatalf("%s was refused but changed the catalog:\n%s\nto\n%s", st, before, after)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if st.stored != 0 {
			coll, err := cat.Collection(ctx, tx, db, st.coll)
			if err != nil || coll.Schema.Version() != int64(st.stored) {
				t.Fatalf("%s: stored schema %s (%v), want version %d", st, coll.Schema.Raw(), err, st.stored)
			}
		}
		if st.tx == 0 {
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatalf("%s: commit: %v", st, err)
			}
		} else {
			open, openTx = tx, st.tx
		}
	}
	finish()
}

// catalogState is everything the catalog keeps of db: its record, its
// collections' records and their kept schemas.
func catalogState(t *testing.T, tx kv.Tx, db *catalog.Database) []byte {
	t.Helper()
	var out bytes.Buffer
	v, err := tx.Get(ctx, keyspace.Database(db.NS, db.Name))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "db %s\n", v)
	colls, err := cat0.ListCollections(ctx, tx, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range colls {
		rec, err := tx.Get(ctx, keyspace.Collection(db.ID, c.Name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s %s\n", c.Name, rec)
		it := tx.Scan(ctx, keyspace.SchemaVersions(c.ID), kv.ScanOptions{})
		for it.Next() {
			fmt.Fprintf(&out, "  kept %x %s\n", it.Key(), it.Value())
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		it.Close()
	}
	return out.Bytes()
}

// cat0 lists collections for catalogState, with a cache of its own.
var cat0 = catalog.New()

const inv, notFound = apierror.InvalidArgument, apierror.NotFound

// TestSchemaVersions runs the rules of schema versions (versions.go): the
// original's TestSchemaVersion, step for step, then what it left out.
func TestSchemaVersions(t *testing.T) {
	steps := []versionStep{
		// The original's TestSchemaVersion.
		{db: "app", coll: "aa", variant: "base"}, // a at 1
		{db: "app", coll: "bb", variant: "base"}, // b at 1
		{db: "app", coll: "bb", variant: "one"},  // b at 2
		{db: "app", coll: "aa", variant: "one", version: 1, code: inv, want: "next schema version should be 3"},
		// The first version must pass every collection's own, not equal it.
		{db: "app", coll: "aa", variant: "one", version: 2, code: inv, want: "next schema version should be 3"},
		{db: "app", coll: "aa", variant: "one", version: 5, stored: 5}, // the database starts at 5
		{db: "app", coll: "aa", variant: "two", version: 6, stored: 6},
		{db: "app", coll: "bb", variant: "two", version: 7, stored: 7},
		{db: "app", coll: "aa", variant: "one", version: 3, code: inv, want: "schema version cannot be less than 5"},
		{db: "app", coll: "aa", variant: "two", version: 5, code: inv, want: "historical schema mismatch. provided version 5. current version 7"},
		{db: "app", coll: "aa", variant: "one", version: 5, stored: 6}, // what a was at 5: nothing changes
		{db: "app", coll: "aa", variant: "two", version: 7, stored: 6}, // a's schema at 7 is its 6's
		{db: "app", coll: "aa", variant: "one", version: 7, code: inv, want: "historical schema mismatch. provided version 7. current version 7"},
		{db: "app", coll: "aa", variant: "two", version: 7, tx: 1},
		{db: "app", coll: "bb", variant: "one", version: 5, tx: 1, code: inv, want: "collection schema version should be the same in the transaction. got 5 expected 7"},
		{db: "app", coll: "bb", variant: "two", version: 7, tx: 1},

		// Further: a version skipped, a schema without one.
		{db: "app", coll: "aa", variant: "two", version: 9, code: inv, want: "next schema version should be 8"},
		{db: "app", coll: "aa", variant: "three", code: inv, want: "schema version cannot be less than 5"},
		// A new version in a transaction: the later changes in it are at
		// that version, not historical ones; a new collection too.
		{db: "app", coll: "aa", variant: "three", version: 8, tx: 2, stored: 8},
		{db: "app", coll: "bb", variant: "three", version: 8, tx: 2, stored: 8},
		{db: "app", coll: "cc", variant: "base", version: 8, tx: 2, stored: 8},
		{db: "app", coll: "bb", variant: "three", tx: 2, code: inv, want: "collection schema version should be the same in the transaction. got 0 expected 8"},
		// Old versions answer from the schemas kept when a moved on.
		{db: "app", coll: "aa", variant: "two", version: 6, stored: 8},
		{db: "app", coll: "aa", variant: "two", version: 7, stored: 8},
		{db: "app", coll: "aa", variant: "one", version: 5, stored: 8},
		{db: "app", coll: "aa", variant: "two", version: 5, code: inv, want: "historical schema mismatch. provided version 5. current version 8"},
		{db: "app", coll: "cc", variant: "base", version: 5, code: notFound, want: "schema version 5 not found"},
		// A new version that the schema change refuses leaves the
		// database's version where it was.
		{db: "app", coll: "aa", variant: "retyped", version: 9, code: inv, want: "data type mismatch for field 'int_value', 'int64' to 'string'"},
		{db: "app", coll: "bb", variant: "base", version: 10, code: inv, want: "next schema version should be 9"},
		// The same schema at a new version: the database moves on, the
		// collection stays.
		{db: "app", coll: "aa", variant: "three", version: 9, stored: 8},
		{db: "app", coll: "aa", variant: "three", version: 8, stored: 8},

		// A database that never saw a version: as before versions.
		{db: "plain", coll: "aa", variant: "base"},
		{db: "plain", coll: "aa", variant: "one"},
		{db: "plain", coll: "aa", variant: "one"},
		{db: "plain", coll: "aa", variant: "two", tx: 3},
		{db: "plain", coll: "bb", variant: "two", tx: 3},
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "app")
		createDB(t, s, cat, "plain")
		runVersionSteps(t, s, cat, steps)
	})
}

// A branch starts at main's schema version without a lowest version, and
// each of its collections at the version its schema names, as the
// original's did; from there it moves on by itself.
func TestSchemaVersionsOnBranches(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "app")
		runVersionSteps(t, s, cat, []versionStep{
			{db: "app", coll: "aa", variant: "one", version: 5},
			{db: "app", coll: "bb", variant: "one", version: 5},
		})
		run(t, s, func(tx kv.Tx) error { return cat.CreateBranch(ctx, tx, ns, "app", "feat") })
		runVersionSteps(t, s, cat, []versionStep{
			// No lowest version: a schema without one changes the
			// collection (aa to its own version 6), not the branch's.
			{db: "app@feat", coll: "aa", variant: "two", stored: 0},
			{db: "app@feat", coll: "aa", variant: "three", version: 6, code: inv, want: "provided collection schema version 6 is less then existing schema version 7"},
			// bb came with its schema only: no older one to compare with.
			{db: "app@feat", coll: "bb", variant: "one", version: 4, code: notFound, want: "schema version 4 not found"},
			{db: "app@feat", coll: "bb", variant: "one", version: 5, stored: 5},
			{db: "app@feat", coll: "bb", variant: "two", version: 6, stored: 6},
			{db: "app@feat", coll: "bb", variant: "two", version: 8, code: inv, want: "next schema version should be 7"},
			// Main is where it was.
			{db: "app", coll: "bb", variant: "two", version: 7, code: inv, want: "next schema version should be 6"},
			{db: "app", coll: "aa", variant: "one", version: 5, stored: 5},
			{db: "app", coll: "aa", variant: "base", code: inv, want: "schema version cannot be less than 5"},
		})
	})
}

// An import's schema change (EvolveCollection) is outside versions: it
// neither checks nor moves the database's version, as the original's
// import did not.
func TestEvolveOutsideVersions(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s, cat := b.Open(t), catalog.New()
		createDB(t, s, cat, "app")
		runVersionSteps(t, s, cat, []versionStep{{db: "app", coll: "aa", variant: "one", version: 5}})
		run(t, s, func(tx kv.Tx) error {
			db, err := cat.Database(ctx, tx, ns, "app")
			if err != nil {
				return err
			}
			if _, err := cat.EvolveCollection(ctx, tx, db, "aa", []byte(versioned("aa", "two", 5))); err != nil {
				return err
			}
			_, err = cat.EvolveCollection(ctx, tx, db, "imported", []byte(versioned("imported", "base", 0)))
			return err
		})
		runVersionSteps(t, s, cat, []versionStep{
			{db: "app", coll: "bb", variant: "base", version: 7, code: inv, want: "next schema version should be 6"},
			{db: "app", coll: "aa", variant: "three", version: 6, code: inv, want: "provided collection schema version 6 is less then existing schema version 7"},
			{db: "app", coll: "bb", variant: "base", version: 6},
		})
	})
}
