package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Search indexes (the final API's /search/indexes) are a catalog entity of
// their own kind in a project's database: their records are under their
// own keys (keyspace.SearchIndex), so their names are apart from the
// collections' and no collection call finds one. Everything below the
// record is a collection's: the index is a *Collection whose documents are
// stored, logged and indexed for search as any collection's are, keyed by
// their id field (a string). Its Name, which the change log's records
// carry, is IndexPrefix and the index's name: a name no collection can have,
// so that no stream of a collection selects an index's changes.

// IndexPrefix begins the Collection.Name of a search index.
const IndexPrefix = "$index."

// MaxVectorDimensions bounds a vector field's dimensions in an index's
// schema: 4,096 floats (about 50 KB of JSON) per vector.
const MaxVectorDimensions = schema.MaxVectorDimensions

// SearchIndex is a search index as stored: the collection that holds its
// documents, and its schema as the client gave it.
type SearchIndex struct {
	Name string
	Coll *Collection
	// Source is the schema as the client sent it; Coll.Schema is what it
	// was turned into (its id field made the primary key).
	Source []byte
	// IDField is the field whose value is a document's id.
	IDField string
}

// IndexName returns the index name of a collection that holds a search
// index's documents, and whether it is one.
func IndexName(coll *Collection) (string, bool) {
	return strings.CutPrefix(coll.Name, IndexPrefix)
}

// CheckIndexName checks a search index's name (the rule of collection
// names).
func CheckIndexName(name string) error {
	if name == "" {
		return apierror.Errorf(apierror.InvalidArgument, "empty search index name is not allowed")
	}
	return checkName("search index", name)
}

func noIndex(name string) error {
	return apierror.Errorf(apierror.NotFound, "search index not found '%s'", name)
}

// CreateOrUpdateIndex creates the search index with the given schema, or
// changes the schema of an existing one (unless onlyCreate, which makes an
// existing index an ALREADY_EXISTS error). An index's schema may change
// freely: documents stored before keep their fields, and are searched by
// the new schema. It reports whether the index was created.
func (c *Catalog) CreateOrUpdateIndex(ctx context.Context, tx kv.Tx, db *Database, name string, source []byte, onlyCreate bool) (created bool, err error) {
	if err := CheckIndexName(name); err != nil {
		return false, err
	}
	if len(bytes.TrimSpace(source)) == 0 || string(bytes.TrimSpace(source)) == "null" {
		return false, apierror.Errorf(apierror.InvalidArgument, "schema is a required during index creation")
	}
	raw, _, err := IndexSchema(name, source)
	if err != nil {
		return false, err
	}
	key := keyspace.SearchIndex(db.ID, name)
	var rec collRecord
	found, err := c.getJSON(ctx, tx, key, &rec)
	if err != nil {
		return false, err
	}
	collName := IndexPrefix + name
	if found {
		if onlyCreate {
			return false, apierror.Errorf(apierror.AlreadyExists, "search index already exists '%s'", name)
		}
		if bytes.Equal(rec.Source, source) {
			return false, nil
		}
		if err := checkSameID(name, rec.Schema, raw); err != nil {
			return false, err
		}
		rec.Rev++
		rec.Version++
		rec.Schema, rec.Source = raw, bytes.Clone(source)
		if err := setJSON(tx, key, rec); err != nil {
			return false, err
		}
		return false, logDDL(tx, changelog.Record{Op: changelog.SchemaChanged, NS: db.NS, DB: db.Name, DBID: db.ID,
			Collection: collName, CollID: rec.ID, Rev: rec.Rev, Data: rec.Schema})
	}
	id, err := c.nextID(ctx, tx)
	if err != nil {
		return false, err
	}
	rec = collRecord{ID: id, Rev: 1, Version: 1, Schema: raw, Source: bytes.Clone(source), CreatedAt: time.Now().UTC()}
	if err := setJSON(tx, key, rec); err != nil {
		return false, err
	}
	return true, logDDL(tx, changelog.Record{Op: changelog.CollectionCreated, NS: db.NS, DB: db.Name, DBID: db.ID,
		Collection: collName, CollID: id, Rev: rec.Rev, Data: rec.Schema})
}

// Index returns the named search index of db, or NOT_FOUND.
func (c *Catalog) Index(ctx context.Context, tx kv.Tx, db *Database, name string) (*SearchIndex, error) {
	if err := CheckIndexName(name); err != nil {
		return nil, err
	}
	var rec collRecord
	found, err := c.getJSON(ctx, tx, keyspace.SearchIndex(db.ID, name), &rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, noIndex(name)
	}
	return c.searchIndex(db, name, rec)
}

func (c *Catalog) searchIndex(db *Database, name string, rec collRecord) (*SearchIndex, error) {
	coll, err := c.collection(db, IndexPrefix+name, rec)
	if err != nil {
		return nil, err
	}
	idx := &SearchIndex{Name: name, Coll: coll, Source: rec.Source, IDField: "id"}
	if pk := coll.Schema.PrimaryKey(); len(pk) == 1 {
		idx.IDField = pk[0].Path
	}
	return idx, nil
}

// ListIndexes returns the search indexes of db in name order.
func (c *Catalog) ListIndexes(ctx context.Context, tx kv.Tx, db *Database) ([]*SearchIndex, error) {
	return listRecords(ctx, tx, keyspace.SearchIndexes(db.ID), "search index",
		func(name string, rec collRecord) (*SearchIndex, error) { return c.searchIndex(db, name, rec) },
		func(idx *SearchIndex) string { return idx.Name })
}

// IndexCollections returns the collections holding db's search indexes'
// documents: what the search indexer follows beside db's collections.
func (c *Catalog) IndexCollections(ctx context.Context, tx kv.Tx, db *Database) ([]*Collection, error) {
	idxs, err := c.ListIndexes(ctx, tx, db)
	out := make([]*Collection, len(idxs))
	for i, idx := range idxs {
		out[i] = idx.Coll
	}
	return out, err
}

// DropIndex removes a search index and its documents.
func (c *Catalog) DropIndex(ctx context.Context, tx kv.Tx, db *Database, name string) error {
	idx, err := c.Index(ctx, tx, db, name)
	if err != nil {
		return err
	}
	return c.dropIndex(tx, idx)
}

func (c *Catalog) dropIndex(tx kv.Tx, idx *SearchIndex) error {
	for _, r := range keyspace.CollectionData(idx.Coll.ID) {
		if err := tx.ClearRange(r); err != nil {
			return err
		}
	}
	db := idx.Coll.DB
	if err := tx.Clear(keyspace.SearchIndex(db.ID, idx.Name)); err != nil {
		return err
	}
	return logDDL(tx, changelog.Record{Op: changelog.CollectionDropped, NS: db.NS, DB: db.Name, DBID: db.ID,
		Collection: idx.Coll.Name, CollID: idx.Coll.ID})
}

// IndexSchema turns a search index's schema, as the final clients send it
// ({"title":..., "properties":{...}} with the annotations searchIndex,
// sort, facet and id), into the schema of the collection that holds its
// documents: the field annotated "id" (or the field "id", added as a
// string when the schema lacks it) is the primary key, and must be a
// string. Vector fields must give their dimensions, at most
// MaxVectorDimensions. It returns the collection's schema, parsed too.
func IndexSchema(name string, source []byte) ([]byte, *schema.Schema, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(source, &top); err != nil || top == nil {
		return nil, nil, apierror.Errorf(apierror.InvalidArgument, "schema must be a JSON object")
	}
	if t, ok := top["title"]; ok {
		var title string
		if json.Unmarshal(t, &title) != nil || title != name {
			return nil, nil, apierror.Errorf(apierror.InvalidArgument, "the schema's title must be the search index's name '%s'", name)
		}
	}
	// The collection's title is its name, which IndexPrefix keeps apart
	// from the collections' (and which the change log's records carry).
	top["title"], _ = json.Marshal(IndexPrefix + name)
	var props map[string]json.RawMessage
	if raw, ok := top["properties"]; ok {
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, nil, apierror.Errorf(apierror.InvalidArgument, "properties of the schema must be an object")
		}
	}
	idField := ""
	for field, def := range props {
		var f struct {
			ID bool `json:"id"`
		}
		if json.Unmarshal(def, &f) == nil && f.ID {
			if idField != "" {
				return nil, nil, apierror.Errorf(apierror.InvalidArgument, "only one field can be the id, and both '%s' and '%s' are", min(idField, field), max(idField, field))
			}
			idField = field
		}
	}
	if idField == "" {
		idField = "id"
	}
	if _, ok := props[idField]; !ok {
		if props == nil {
			props = map[string]json.RawMessage{}
		}
		props[idField] = json.RawMessage(`{"type":"string"}`)
	}
	var idDef struct {
		Type   any    `json:"type"`
		Format string `json:"format"`
	}
	if json.Unmarshal(props[idField], &idDef) != nil || idDef.Type != "string" || idDef.Format != "" {
		return nil, nil, apierror.Errorf(apierror.InvalidArgument, "the id field '%s' of a search index must be of type string", idField)
	}
	// Properties are written back in name order (encoding/json's for a
	// map): a schema's field order changes nothing an index answers.
	rawProps, err := json.Marshal(props)
	if err != nil {
		return nil, nil, err
	}
	top["properties"] = rawProps
	top["primary_key"] = json.RawMessage(fmt.Sprintf("[%q]", idField))
	delete(top, "source") // the original's "source" of an index: Folio's indexes hold their own documents
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, nil, err
	}
	s, err := schema.Parse(IndexPrefix+name, raw)
	if err != nil {
		return nil, nil, err
	}
	if err := checkVectorFields(s.Fields()); err != nil {
		return nil, nil, err
	}
	return raw, s, nil
}

func checkVectorFields(fields []*schema.Field) error {
	for _, f := range fields {
		if f.Vector {
			if f.Dimensions == 0 {
				return apierror.Errorf(apierror.InvalidArgument, "Field '%s' type 'vector' is missing dimensions", f.Path)
			}
			if f.Dimensions > MaxVectorDimensions {
				return apierror.Errorf(apierror.InvalidArgument, "field '%s' has %d dimensions, above the limit of %d", f.Path, f.Dimensions, MaxVectorDimensions)
			}
		}
		if err := checkVectorFields(f.Properties); err != nil {
			return err
		}
	}
	return nil
}

// LookupSearchable is Lookup for a reader that follows collections and
// search indexes alike by their Collection.Name (the search indexer): a
// name that begins with IndexPrefix finds the index's collection.
func (c *Catalog) LookupSearchable(ctx context.Context, tx kv.Tx, ns int64, db, name string) (*Collection, error) {
	index, isIndex := strings.CutPrefix(name, IndexPrefix)
	if !isIndex {
		return c.Lookup(ctx, tx, ns, db, name)
	}
	d, err := c.Database(ctx, tx, ns, db)
	if err != nil {
		return nil, err
	}
	idx, err := c.Index(ctx, tx, d, index)
	if err != nil {
		return nil, err
	}
	return idx.Coll, nil
}

// checkSameID refuses a schema change that moves an index's id field to
// another field or type: the stored documents are keyed by the old one,
// and would no longer be found, replaced or deleted by their ids.
func checkSameID(name string, old, next []byte) error {
	before, err := schema.ParseStored(IndexPrefix+name, old)
	if err != nil {
		return nil // an unreadable stored schema: nothing to keep
	}
	after, err := schema.ParseStored(IndexPrefix+name, next)
	if err != nil {
		return err
	}
	a, b := before.PrimaryKey(), after.PrimaryKey()
	if len(a) == 1 && len(b) == 1 && (a[0].Path != b[0].Path || a[0].Type != b[0].Type) {
		return apierror.Errorf(apierror.InvalidArgument, "the id field of search index '%s' cannot change ('%s' to '%s'): its documents are stored by it; create a new index", name, a[0].Path, b[0].Path)
	}
	return nil
}
