// Package catalog keeps Folio's databases and collections, with their
// schemas, in the kv space. Every function takes the transaction it runs in,
// so DDL is transactional like any other write: a collection created,
// changed or dropped in a transaction is seen by that transaction at once
// and by nobody else before it commits.
//
// DDL is in the change log too, appended in the same transaction: a
// collection created (revision 1, its schema as Data), a schema changed
// (the new revision and schema), a collection dropped, a database dropped.
// Dropping a database logs the drop of each of its collections first, then
// the database's: a reader that follows collections (the search indexer,
// a stream) learns of each drop from a record about that collection,
// without having to know which collections the database held. Creating a
// database logs nothing: until it has a collection it holds nothing a
// reader follows, and the collection's creation is logged.
package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Catalog reads and writes databases and collections. It caches parsed
// schemas by collection id and revision, each with the text it was parsed
// from: a committed revision's schema never changes, but a transaction
// that fails leaves its collection id (a create) or its revision (a
// change) to the next one, with another schema.
type Catalog struct {
	schemas sync.Map // schemaKey → parsedSchema
	records sync.Map // record bytes → dbRecord or collRecord
	dbs     sync.Map // dbName → *Database, for Lookup
	seen    sync.Map // collection record key → *seenRecord, for Lookup
	cached  atomic.Int64
}

type schemaKey struct{ collID, rev int64 }

type parsedSchema struct {
	text   []byte // the stored schema it was parsed from
	schema *schema.Schema
}

// dbName names a database: its namespace and its name there.
type dbName struct {
	ns   int64
	name string
}

// New returns a Catalog.
func New() *Catalog { return &Catalog{} }

// Database is a database as stored.
type Database struct {
	NS        int64 // the namespace it belongs to
	Name      string
	ID        int64
	CreatedAt time.Time
}

// Collection is a collection as stored, with its current schema.
type Collection struct {
	DB        *Database
	Name      string
	ID        int64
	Rev       int64 // schema revision, 1 at creation
	Schema    *schema.Schema
	CreatedAt time.Time
}

type dbRecord struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// The database's schema version (versions.go): 0 until a schema
	// asks for one.
	SchemaVersion    int64 `json:"schema_version,omitempty"`
	MinSchemaVersion int64 `json:"min_schema_version,omitempty"`
	// VersionedFrom is SchemaVersion before the transaction that last
	// wrote this record for a versioned schema change; only that
	// transaction reads it.
	VersionedFrom int64 `json:"versioned_from,omitempty"`
}

type collRecord struct {
	ID  int64 `json:"id"`
	Rev int64 `json:"rev"`
	// Version is the collection's schema version (versions.go); records
	// written before there were versions have none, and their Rev
	// stands for it.
	Version   int64           `json:"version,omitempty"`
	Schema    json.RawMessage `json:"schema"`
	CreatedAt time.Time       `json:"created_at"`
	// Source is a search index's schema as its client sent it (Schema is
	// the collection's it became: indexes.go); collections have none.
	Source json.RawMessage `json:"source,omitempty"`
}

// getJSON reads the record under key into into (a *dbRecord or a
// *collRecord). Every request reads its database's and collection's
// records, so decoded records are cached by their bytes: the read stays
// (it is what makes DDL and writes serialize), the decoding goes.
func (c *Catalog) getJSON(ctx context.Context, r kv.Reader, key []byte, into any) (bool, error) {
	v, err := r.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if cached, ok := c.records.Load(string(v)); ok {
		switch p := into.(type) {
		case *dbRecord:
			if rec, ok := cached.(dbRecord); ok {
				*p = rec
				return true, nil
			}
		case *collRecord:
			if rec, ok := cached.(collRecord); ok {
				*p = rec
				c.remember(r, key, v, rec)
				return true, nil
			}
		}
	}
	if err := json.Unmarshal(v, into); err != nil {
		return false, fmt.Errorf("catalog: corrupt record %x: %w", key, err)
	}
	if c.cached.Add(1) > maxCachedRecords {
		c.records.Clear()
		c.seen.Clear()
		c.cached.Store(0)
	}
	switch p := into.(type) {
	case *dbRecord:
		c.records.Store(string(v), *p)
	case *collRecord:
		c.records.Store(string(v), *p)
		c.remember(r, key, v, *p)
	}
	return true, nil
}

// seenRecord is a collection record as last read, decoded, with what
// forgets it once found stale: Lookup reuses it with nothing to allocate.
type seenRecord struct {
	bytes  []byte
	rec    collRecord
	forget func()
}

// remember keeps a collection record as read, for Lookup to reuse; not one
// the transaction wrote itself, which may never commit.
func (c *Catalog) remember(r kv.Reader, key, v []byte, rec collRecord) {
	tx, ok := r.(kv.Tx)
	if !ok || tx.Wrote(key) {
		return
	}
	k := string(key)
	e := &seenRecord{bytes: bytes.Clone(v), rec: rec}
	e.forget = func() { c.seen.CompareAndDelete(k, e) }
	c.seen.Store(k, e)
}

// maxCachedRecords bounds the record cache; past it the cache starts over.
const maxCachedRecords = 4096

func setJSON(tx kv.Tx, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Set(key, b)
}

func (c *Catalog) nextID(ctx context.Context, tx kv.Tx) (int64, error) {
	v, err := tx.Get(ctx, keyspace.LastID())
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return 0, err
	}
	id := kv.DecodeCounter(v) + 1
	return id, tx.Set(keyspace.LastID(), kv.EncodeCounter(id))
}

// CreateDatabase creates a database in namespace ns; it fails with
// ALREADY_EXISTS if the name is taken there.
func (c *Catalog) CreateDatabase(ctx context.Context, tx kv.Tx, ns int64, name string) error {
	if err := checkStoredName(name); err != nil {
		return err
	}
	var rec dbRecord
	found, err := c.getJSON(ctx, tx, keyspace.Database(ns, name), &rec)
	if err != nil {
		return err
	}
	if found {
		return apierror.Errorf(apierror.AlreadyExists, "database already exist")
	}
	id, err := c.nextID(ctx, tx)
	if err != nil {
		return err
	}
	return setJSON(tx, keyspace.Database(ns, name), dbRecord{ID: id, CreatedAt: time.Now().UTC()})
}

// Database returns the named database of namespace ns, or NOT_FOUND.
func (c *Catalog) Database(ctx context.Context, tx kv.Tx, ns int64, name string) (*Database, error) {
	if err := checkStoredName(name); err != nil {
		return nil, err
	}
	var rec dbRecord
	found, err := c.getJSON(ctx, tx, keyspace.Database(ns, name), &rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, noDatabase(name)
	}
	db := &Database{NS: ns, Name: name, ID: rec.ID, CreatedAt: rec.CreatedAt}
	c.dbs.Store(dbName{ns, name}, db)
	return db, nil
}

// Lookup returns a database's collection, as Database then Collection would,
// but without reading anything when it knows the database's id and read the
// collection's record lately: the transaction then checks that record with
// its next read, or its commit (kv.Tx.Expect), and a caller that answers
// without either calls tx.CheckExpected first. Otherwise it reads only the
// collection's record when it knows the database's id:
// that record is what serializes a request with DDL (dropping the database
// clears it), and a request needs it anyway. An id that went stale (the
// database dropped, or dropped and created again) finds no record, and the
// lookup starts again from the database's record.
func (c *Catalog) Lookup(ctx context.Context, tx kv.Tx, ns int64, db, collName string) (*Collection, error) {
	if err := CheckCollectionName(collName); err != nil {
		return nil, err
	}
	if d, ok := c.dbs.Load(dbName{ns, db}); ok {
		if coll, ok, err := c.expectCollection(tx, d.(*Database), collName); ok || err != nil {
			return coll, err
		}
		coll, err := c.Collection(ctx, tx, d.(*Database), collName)
		if apierror.CodeOf(err) != apierror.NotFound {
			return coll, err
		}
	}
	d, err := c.Database(ctx, tx, ns, db)
	if err != nil {
		return nil, err
	}
	return c.Collection(ctx, tx, d, collName)
}

// expectCollection returns the collection as this node last read its
// record, without reading it now: the transaction checks the record with
// its next read (kv.Tx.Expect), in the same round trip on PostgreSQL, and
// fails with a retryable conflict if it changed, forgetting it. False if
// the record was not read lately.
func (c *Catalog) expectCollection(tx kv.Tx, db *Database, name string) (*Collection, bool, error) {
	key := keyspace.Collection(db.ID, name)
	v, ok := c.seen.Load(string(key))
	if !ok {
		return nil, false, nil
	}
	e := v.(*seenRecord)
	if err := tx.Expect(key, e.bytes, e.forget); err != nil {
		return nil, false, err
	}
	coll, err := c.collection(db, name, e.rec)
	return coll, err == nil, err
}

// ListDatabases returns the databases of namespace ns in name order: those
// users created, not their branches (see Branches).
func (c *Catalog) ListDatabases(ctx context.Context, tx kv.Tx, ns int64) ([]*Database, error) {
	all, err := c.scanDatabases(ctx, tx, keyspace.Databases(ns))
	out := all[:0]
	for _, d := range all {
		if !IsBranch(d.Name) {
			out = append(out, d)
		}
	}
	return out, err
}

// AllDatabasesOf returns the databases of namespace ns with their
// branches, in name order.
func (c *Catalog) AllDatabasesOf(ctx context.Context, tx kv.Tx, ns int64) ([]*Database, error) {
	return c.scanDatabases(ctx, tx, keyspace.Databases(ns))
}

// AllDatabases returns every database of every namespace, branches
// included, in namespace then name order.
func (c *Catalog) AllDatabases(ctx context.Context, tx kv.Tx) ([]*Database, error) {
	return c.scanDatabases(ctx, tx, keyspace.AllDatabases())
}

func (c *Catalog) scanDatabases(ctx context.Context, tx kv.Reader, r kv.Range) ([]*Database, error) {
	it := tx.Scan(ctx, r, kv.ScanOptions{})
	defer it.Close()
	var out []*Database
	for it.Next() {
		var rec dbRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("catalog: corrupt database record: %w", err)
		}
		ns, name, legacy, err := keyspace.DatabaseKey(it.Key())
		if err != nil {
			return nil, fmt.Errorf("catalog: corrupt key %x: %w", it.Key(), err)
		}
		if legacy {
			continue // not moved yet: MoveLegacyDatabases
		}
		out = append(out, &Database{NS: ns, Name: name, ID: rec.ID, CreatedAt: rec.CreatedAt})
	}
	return out, it.Err()
}

// MoveLegacyDatabases moves the database records written before there
// were namespaces into keyspace.DefaultNamespace, in one transaction. A
// node runs it at start; it finds nothing to do after the first time.
func MoveLegacyDatabases(ctx context.Context, store kv.Store) (moved int, err error) {
	_, err = kv.Run(ctx, store, func(tx kv.Tx) error {
		moved = 0
		it := tx.Scan(ctx, keyspace.AllDatabases(), kv.ScanOptions{})
		defer it.Close()
		type record struct{ key, value []byte }
		var legacy []record
		for it.Next() {
			if _, _, old, err := keyspace.DatabaseKey(it.Key()); err == nil && old {
				legacy = append(legacy, record{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		for _, r := range legacy {
			_, name, _, _ := keyspace.DatabaseKey(r.key)
			if err := tx.Clear(r.key); err != nil {
				return err
			}
			if err := tx.Set(keyspace.Database(keyspace.DefaultNamespace, name), r.value); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	return moved, err
}

// DropDatabase removes a database of namespace ns with all its collections
// and their data, and its branches with theirs.
func (c *Catalog) DropDatabase(ctx context.Context, tx kv.Tx, ns int64, name string) error {
	defer c.seen.Clear() // what Lookup would expect is about to change
	db, err := c.Database(ctx, tx, ns, name)
	if err != nil {
		return err
	}
	if !IsBranch(name) {
		branches, err := c.branchDatabases(ctx, tx, ns, name)
		if err != nil {
			return err
		}
		for _, b := range branches {
			if err := c.DropDatabase(ctx, tx, ns, b); err != nil {
				return err
			}
		}
	}
	colls, err := c.ListCollections(ctx, tx, db)
	if err != nil {
		return err
	}
	for _, coll := range colls {
		if err := c.dropCollection(tx, coll); err != nil {
			return err
		}
	}
	idxs, err := c.ListIndexes(ctx, tx, db)
	if err != nil {
		return err
	}
	for _, idx := range idxs {
		if err := c.dropIndex(tx, idx); err != nil {
			return err
		}
	}
	// Its caches (internal/cache) go with it.
	for _, r := range keyspace.DatabaseCaches(db.ID) {
		if err := tx.ClearRange(r); err != nil {
			return err
		}
	}
	c.dbs.Delete(dbName{ns, name})
	if err := tx.Clear(keyspace.Database(ns, name)); err != nil {
		return err
	}
	return logDDL(tx, changelog.Record{Op: changelog.DatabaseDropped, NS: ns, DB: db.Name, DBID: db.ID})
}

// logDDL appends a DDL record to the transaction's change-log entry.
func logDDL(tx kv.Tx, r changelog.Record) error {
	if err := tx.AppendLog(r.Encode()); err != nil {
		return fmt.Errorf("catalog: log %s of %s.%s: %w", r.Op, r.DB, r.Collection, err)
	}
	return nil
}

// CreateOrUpdateCollection creates the collection with the given schema, or
// changes the schema of an existing one if the change is compatible
// (unless onlyCreate, which makes an existing collection an ALREADY_EXISTS
// error). It reports whether the collection was created. A schema with a
// "version" is checked against the database's schema version first, and
// moves it on (versions.go).
func (c *Catalog) CreateOrUpdateCollection(ctx context.Context, tx kv.Tx, db *Database, name string, rawSchema []byte, onlyCreate bool) (created bool, err error) {
	return c.createOrUpdate(ctx, tx, db, name, rawSchema, onlyCreate, true)
}

// EvolveCollection is CreateOrUpdateCollection for a schema the server
// wrote (an import's inferred one): outside the database's schema
// versions, as the original's import was. A change moves the
// collection's own version on by one, as a change without a version does.
func (c *Catalog) EvolveCollection(ctx context.Context, tx kv.Tx, db *Database, name string, rawSchema []byte) (created bool, err error) {
	return c.createOrUpdate(ctx, tx, db, name, rawSchema, false, false)
}

// createOrUpdate is CreateOrUpdateCollection, with the schema's version
// checked against the database's if versioned. Every check comes before
// the first write, so that a refused change leaves a client's transaction
// as it was.
func (c *Catalog) createOrUpdate(ctx context.Context, tx kv.Tx, db *Database, name string, rawSchema []byte, onlyCreate, versioned bool) (created bool, err error) {
	defer c.seen.Clear() // what Lookup would expect is about to change
	if err := CheckCollectionName(name); err != nil {
		return false, err
	}
	next, err := schema.Parse(name, rawSchema)
	if err != nil {
		return false, err
	}
	key := keyspace.Collection(db.ID, name)
	var rec collRecord
	found, err := c.getJSON(ctx, tx, key, &rec)
	if err != nil {
		return false, err
	}
	if found && onlyCreate {
		return false, apierror.Errorf(apierror.AlreadyExists, "collection already exist")
	}
	var step versionStep
	if versioned {
		if step, err = c.stepSchemaVersion(ctx, tx, db, next.Version()); err != nil {
			return false, err
		}
	}
	if found {
		old, err := c.parsed(rec, name)
		if err != nil {
			return false, err
		}
		change, version, err := c.versionChange(ctx, tx, rec, old, next, step)
		if err != nil {
			return false, err
		}
		if err := step.write(tx); err != nil || change == unchanged {
			return false, err
		}
		if change == newVersion {
			// Kept for a client that sends this version again later.
			if err := tx.Set(keyspace.SchemaVersion(rec.ID, rec.version()), rec.Schema); err != nil {
				return false, err
			}
		}
		rec.Rev++
		rec.Version = version
		rec.Schema = next.Raw()
		if err := setJSON(tx, key, rec); err != nil {
			return false, err
		}
		return false, logDDL(tx, changelog.Record{Op: changelog.SchemaChanged, NS: db.NS, DB: db.Name, DBID: db.ID,
			Collection: name, CollID: rec.ID, Rev: rec.Rev, Data: rec.Schema})
	}
	if err := step.write(tx); err != nil {
		return false, err
	}
	id, err := c.nextID(ctx, tx)
	if err != nil {
		return false, err
	}
	rec = collRecord{ID: id, Rev: 1, Version: max(next.Version(), 1), Schema: next.Raw(), CreatedAt: time.Now().UTC()}
	if err := setJSON(tx, key, rec); err != nil {
		return false, err
	}
	return true, logDDL(tx, changelog.Record{Op: changelog.CollectionCreated, NS: db.NS, DB: db.Name, DBID: db.ID,
		Collection: name, CollID: id, Rev: rec.Rev, Data: rec.Schema})
}

// Collection returns the named collection, or NOT_FOUND.
func (c *Catalog) Collection(ctx context.Context, tx kv.Tx, db *Database, name string) (*Collection, error) {
	if err := CheckCollectionName(name); err != nil {
		return nil, err
	}
	var rec collRecord
	found, err := c.getJSON(ctx, tx, keyspace.Collection(db.ID, name), &rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierror.Errorf(apierror.NotFound, "collection doesn't exist '%s'", name)
	}
	return c.collection(db, name, rec)
}

func (c *Catalog) collection(db *Database, name string, rec collRecord) (*Collection, error) {
	s, err := c.parsed(rec, name)
	if err != nil {
		return nil, err
	}
	return &Collection{DB: db, Name: name, ID: rec.ID, Rev: rec.Rev, Schema: s, CreatedAt: rec.CreatedAt}, nil
}

func (c *Catalog) parsed(rec collRecord, name string) (*schema.Schema, error) {
	k := schemaKey{rec.ID, rec.Rev}
	if p, ok := c.schemas.Load(k); ok && bytes.Equal(p.(parsedSchema).text, rec.Schema) {
		return p.(parsedSchema).schema, nil
	}
	s, err := schema.ParseStored(name, rec.Schema)
	if err != nil {
		return nil, fmt.Errorf("catalog: stored schema of %s no longer parses: %w", name, err)
	}
	c.schemas.Store(k, parsedSchema{text: bytes.Clone(rec.Schema), schema: s})
	return s, nil
}

// ListCollections returns the collections of db in name order.
func (c *Catalog) ListCollections(ctx context.Context, tx kv.Tx, db *Database) ([]*Collection, error) {
	return listRecords(ctx, tx, keyspace.Collections(db.ID), "collection",
		func(name string, rec collRecord) (*Collection, error) { return c.collection(db, name, rec) },
		func(coll *Collection) string { return coll.Name })
}

// listRecords reads the collection records of a range (a database's
// collections, or its search indexes), each made into a T by build, in
// the order of their names.
func listRecords[T any](ctx context.Context, tx kv.Tx, rng kv.Range, what string, build func(string, collRecord) (T, error), nameOf func(T) string) ([]T, error) {
	it := tx.Scan(ctx, rng, kv.ScanOptions{})
	defer it.Close()
	var out []T
	for it.Next() {
		var rec collRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("catalog: corrupt %s record: %w", what, err)
		}
		name, err := keyspaceName(it.Key())
		if err != nil {
			return nil, err
		}
		v, err := build(name, rec)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return nameOf(out[i]) < nameOf(out[j]) })
	return out, nil
}

// noCollectionToDrop is a drop's error for a collection that is not there:
// "exists", the 2022 server's wording, which its clients match; ops
// rewords it for the 2023 API (IsNoCollectionToDrop).
func noCollectionToDrop(name string) error {
	return apierror.Errorf(apierror.NotFound, noCollectionToDropText, name)
}

const noCollectionToDropText = "collection doesn't exists '%s'"

// IsNoCollectionToDrop reports whether err is DropCollection's answer for
// the collection name not being there.
func IsNoCollectionToDrop(err error, name string) bool {
	e, ok := apierror.From(err)
	return ok && e.Code == apierror.NotFound && e.Message == fmt.Sprintf(noCollectionToDropText, name)
}

// DropCollection removes a collection and all its data.
func (c *Catalog) DropCollection(ctx context.Context, tx kv.Tx, db *Database, name string) error {
	defer c.seen.Clear() // what Lookup would expect is about to change
	if err := CheckCollectionName(name); err != nil {
		return err
	}
	var rec collRecord
	found, err := c.getJSON(ctx, tx, keyspace.Collection(db.ID, name), &rec)
	if err != nil {
		return err
	}
	if !found {
		return noCollectionToDrop(name)
	}
	coll, err := c.collection(db, name, rec)
	if err != nil {
		return err
	}
	return c.dropCollection(tx, coll)
}

func (c *Catalog) dropCollection(tx kv.Tx, coll *Collection) error {
	for _, r := range keyspace.CollectionData(coll.ID) {
		if err := tx.ClearRange(r); err != nil {
			return err
		}
	}
	if err := tx.Clear(keyspace.Collection(coll.DB.ID, coll.Name)); err != nil {
		return err
	}
	return logDDL(tx, changelog.Record{Op: changelog.CollectionDropped, NS: coll.DB.NS, DB: coll.DB.Name, DBID: coll.DB.ID,
		Collection: coll.Name, CollID: coll.ID})
}

// Sizes are what a collection takes: the bytes of its documents (or
// messages) and of its index entries, as stored, before the storage's own
// compression and overhead.
type Sizes struct {
	Documents, Indexes int64
}

// Sizes reads a collection's sizes. It reads without a conflict range: a
// size is a statistic, not something to serialize on.
func (c *Catalog) Sizes(ctx context.Context, tx kv.Tx, coll *Collection) (Sizes, error) {
	var out Sizes
	for _, f := range []struct {
		key []byte
		n   *int64
	}{{keyspace.Size(coll.ID), &out.Documents}, {keyspace.IndexSize(coll.ID), &out.Indexes}} {
		v, err := tx.Snapshot().Get(ctx, f.key)
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return Sizes{}, err
		}
		// A collection written before index bytes were counted has
		// entries the counter never saw: removing them takes it below
		// zero. It counts what was written since, at least nothing.
		*f.n = max(kv.DecodeCounter(v), 0)
	}
	return out, nil
}

// keyspaceName returns the last element of a catalog key: the name.
func keyspaceName(key []byte) (string, error) {
	name, err := keyspace.LastString(key)
	if err != nil {
		return "", fmt.Errorf("catalog: corrupt key %x: %w", key, err)
	}
	return name, nil
}
