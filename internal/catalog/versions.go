package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Schema versions, as the original server (its final releases) kept them.
// A client that versions its schemas (the final Go client's
// tigris.SchemaVersion) puts "version": N in each schema it sends; the
// catalog then keeps one schema version per database (a branch is a
// database of its own), so that an application's schemas move on together
// and an older instance of the application, still sending the schemas of
// its version, is told whether they are what that version was:
//
//   - The first versioned schema starts the database's version: N must be
//     above every collection's own version (1 at creation, one more for
//     each change), "next schema version should be M" otherwise; N is
//     then also the lowest version the database takes.
//   - Afterwards N is the database's version plus one (a new version), or
//     at most the database's version and at least its first ("schema
//     version cannot be less than F"): a version the database had, whose
//     schema the request must repeat ("historical schema mismatch"),
//     changing nothing. Anything higher is "next schema version should
//     be V+1". A schema without a version is then refused as below the
//     first, as in the original.
//   - Within one transaction (and one CreateOrUpdateCollections call)
//     every schema carries the same version: the first one's.
//
// A database that never saw a versioned schema behaves as before. A
// branch starts at main's version, with no lowest version, as the
// original's did. Each collection keeps the schema it had at every version
// it left behind (keyspace.SchemaVersion), to answer for old versions.

// versionStep is what a schema change does to its database's schema
// version: nothing (the zero value), or a record to write.
type versionStep struct {
	checked bool // false outside versions (EvolveCollection)
	key     []byte
	rec     dbRecord
	changed bool // rec must be written
	// asked is the schema's version; current is the database's version
	// before the transaction: an asked version up to it is one the
	// database had.
	asked, current int64
}

// write writes the database's record if the step changed it.
func (st versionStep) write(tx kv.Tx) error {
	if !st.changed {
		return nil
	}
	return setJSON(tx, st.key, st.rec)
}

// historical reports whether the step asks for a version the database had.
func (st versionStep) historical() bool {
	return st.asked != 0 && st.asked <= st.current
}

// stepSchemaVersion checks a schema's version (asked, 0 for none) against
// its database's, and returns the step that moves the database on. It
// reads the database's record in the transaction, so that two changes of
// the version conflict.
func (c *Catalog) stepSchemaVersion(ctx context.Context, tx kv.Tx, db *Database, asked int64) (versionStep, error) {
	key := keyspace.Database(db.NS, db.Name)
	var rec dbRecord
	found, err := c.getJSON(ctx, tx, key, &rec)
	if err != nil {
		return versionStep{}, err
	}
	if !found {
		return versionStep{}, noDatabase(db.Name)
	}
	st := versionStep{checked: true, key: key, asked: asked}
	if tx.Wrote(key) && rec.SchemaVersion != 0 {
		// An earlier versioned change in this transaction set it.
		if asked != rec.SchemaVersion {
			return versionStep{}, apierror.Errorf(apierror.InvalidArgument,
				"collection schema version should be the same in the transaction. got %d expected %d", asked, rec.SchemaVersion)
		}
		st.current = rec.VersionedFrom
		return st, nil
	}
	if rec.SchemaVersion == 0 && asked == 0 {
		return st, nil // not versioned
	}
	st.current = rec.SchemaVersion
	switch {
	case rec.SchemaVersion == 0:
		highest, err := c.highestCollectionVersion(ctx, tx, db)
		if err != nil {
			return versionStep{}, err
		}
		if asked <= highest {
			return versionStep{}, apierror.Errorf(apierror.InvalidArgument, "next schema version should be %d", highest+1)
		}
		rec.SchemaVersion, rec.MinSchemaVersion = asked, asked
	case asked < rec.MinSchemaVersion:
		return versionStep{}, apierror.Errorf(apierror.InvalidArgument, "schema version cannot be less than %d", rec.MinSchemaVersion)
	case asked > rec.SchemaVersion+1:
		return versionStep{}, apierror.Errorf(apierror.InvalidArgument, "next schema version should be %d", rec.SchemaVersion+1)
	case asked == rec.SchemaVersion+1:
		rec.SchemaVersion++
	}
	// Written even when the version stays: it marks the transaction's
	// version for the changes after this one in it.
	rec.VersionedFrom = st.current
	st.rec, st.changed = rec, true
	return st, nil
}

// highestCollectionVersion is the highest of db's collections' own
// versions, 0 without collections.
func (c *Catalog) highestCollectionVersion(ctx context.Context, tx kv.Tx, db *Database) (int64, error) {
	it := tx.Scan(ctx, keyspace.Collections(db.ID), kv.ScanOptions{})
	defer it.Close()
	var highest int64
	for it.Next() {
		var rec collRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return 0, fmt.Errorf("catalog: corrupt collection record: %w", err)
		}
		highest = max(highest, rec.version())
	}
	return highest, it.Err()
}

// version is the collection's schema version.
func (r collRecord) version() int64 {
	if r.Version == 0 {
		return r.Rev
	}
	return r.Version
}

// What a schema change does to an existing collection.
type collChange int

const (
	unchanged   collChange = iota // nothing to write
	sameVersion                   // a new revision of the same schema, at the same version
	newVersion                    // a new schema, at a new version
)

// versionChange decides what a schema change (next, under step) does to
// the collection stored as rec (whose schema is old), and at which
// version the collection then is. It checks that a change is compatible.
func (c *Catalog) versionChange(ctx context.Context, tx kv.Tx, rec collRecord, old, next *schema.Schema, step versionStep) (collChange, int64, error) {
	have := rec.version()
	if step.historical() {
		then, err := c.schemaAt(ctx, tx, rec, step.asked)
		if err != nil {
			return 0, 0, err
		}
		if !sameSchema(then, next.Raw()) {
			return 0, 0, apierror.Errorf(apierror.InvalidArgument, "historical schema mismatch. provided version %d. current version %d",
				step.asked, step.current)
		}
		return unchanged, have, nil
	}
	asked := next.Version()
	if !step.checked {
		asked = 0 // outside versions: the schema's member does not count
	}
	same := sameSchema(rec.Schema, next.Raw())
	if same && asked != 0 {
		return unchanged, have, nil
	}
	if err := schema.Compatible(old, next); err != nil {
		return 0, 0, err
	}
	switch {
	case asked != 0 && asked < have+1:
		return 0, 0, apierror.Errorf(apierror.InvalidArgument,
			"provided collection schema version %d is less then existing schema version %d", asked, have+1)
	case asked != 0:
		return newVersion, asked, nil
	case same:
		// Today's answer to a schema sent again: a new revision, as
		// before there were versions, but no new version.
		return sameVersion, have, nil
	}
	return newVersion, have + 1, nil
}

// schemaAt is the schema the collection had at version v: the latest of
// its versions up to v. NOT_FOUND if it has none that old (a collection
// created later, or a branch's, which starts with main's schemas only).
func (c *Catalog) schemaAt(ctx context.Context, tx kv.Tx, rec collRecord, v int64) ([]byte, error) {
	if rec.version() <= v {
		return rec.Schema, nil
	}
	it := tx.Scan(ctx, kv.Range{Begin: keyspace.SchemaVersion(rec.ID, 0), End: keyspace.SchemaVersion(rec.ID, v+1)},
		kv.ScanOptions{Reverse: true, Limit: 1})
	defer it.Close()
	if it.Next() {
		return append([]byte(nil), it.Value()...), nil
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return nil, apierror.Errorf(apierror.NotFound, "schema version %d not found", v)
}

// sameSchema reports whether two schemas say the same, apart from their
// versions: as JSON values, whatever their members' order and spacing.
func sameSchema(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	delete(x, "version")
	delete(y, "version")
	return reflect.DeepEqual(x, y)
}
