package ops

import (
	"context"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/schemagen"
)

// DatabaseRequest names a database: the request of create, drop, describe
// and list collections.
type DatabaseRequest struct {
	Malformed error // see Malformed
	DB        string
	// Branch is the database's branch the request is on (the 2023 API's);
	// "" is main, the database itself. Create and drop (of a database or
	// project) take none: they are on the database with all its branches.
	Branch string
	Tx     TxRef // list collections only: the others run alone, as in the original
	// SchemaFormat, describe only, is the request's schema_format as the
	// wire has it: see CollectionRequest.
	SchemaFormat string
}

// CollectionRequest names a collection: the request of drop and describe.
type CollectionRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	// SchemaFormat, describe only, is the request's schema_format as the
	// wire has it: a comma-separated list of languages ("go,ts") to
	// generate the collection's model types in; empty for none. It is
	// parsed here, not by the transports, so that each answers an unknown
	// format alike.
	SchemaFormat string
}

// DatabaseInfo is one database of a list.
type DatabaseInfo struct {
	Name string
}

// CollectionInfo is one collection of a list.
type CollectionInfo struct {
	Name string
}

// CollectionDescription is what describe tells of a collection.
type CollectionDescription struct {
	Name   string
	Schema []byte // as the client gave it
	Size   int64  // bytes of its documents
	// IndexSize is the bytes of its index entries' keys.
	IndexSize int64
	// ExpiredPending, for a collection with a ttl, counts its documents
	// past their time that the sweeper has not deleted yet (no read
	// returns them); nil without a ttl.
	ExpiredPending *int64
	// Indexes are its indexes, as the 2023 API describes them (Indexes).
	Indexes []CollectionIndex
	// SearchStatus says whether it can be searched, in the 2023 API's
	// words (SearchActive, NoSearchIndex).
	SearchStatus string
	// Generated holds, when the request had a SchemaFormat, the source
	// text of the collection's model types in each format asked for, keyed
	// by the format's name as the request spelled it; the transports then
	// send it in place of Schema (reference §10b). Nil otherwise.
	Generated map[string]string

	parsed *schema.Schema // what Generated is made from, after the transaction
}

// DatabaseDescription is what describe tells of a database.
type DatabaseDescription struct {
	Name string
	// Branches names every branch of the database, main first.
	Branches    []string
	Collections []CollectionDescription
	Size        int64 // bytes of its collections' documents
	IndexSize   int64 // bytes of their index entries
	// LogSize is the bytes of the change log, the server's whole log
	// (one for every database), -1 without one.
	LogSize int64
}

// CreateDatabase creates a database.
func (o *Ops) CreateDatabase(ctx context.Context, c Caller, req DatabaseRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "CreateDatabase")
	defer op.end(&err)
	if err != nil {
		return err
	}
	return o.createDatabase(ctx, c, req)
}

// createDatabase is the work of CreateDatabase and CreateProject.
func (o *Ops) createDatabase(ctx context.Context, c Caller, req DatabaseRequest) error {
	if err := c.checkNames(req.DB, "", false, req.Malformed); err != nil {
		return err
	}
	err := o.run(ctx, func(tx kv.Tx) error { return o.catalog.CreateDatabase(ctx, tx, c.ns(), req.DB) })
	if c.Projects && apierror.CodeOf(err) == apierror.AlreadyExists {
		return apierror.Errorf(apierror.AlreadyExists, "project already exist")
	}
	return err
}

// DropDatabase drops a database with everything in it, its branches
// included.
func (o *Ops) DropDatabase(ctx context.Context, c Caller, req DatabaseRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DropDatabase")
	defer op.end(&err)
	if err != nil {
		return err
	}
	return o.dropDatabase(ctx, c, req)
}

// dropDatabase is the work of DropDatabase and DeleteProject.
func (o *Ops) dropDatabase(ctx context.Context, c Caller, req DatabaseRequest) error {
	if err := c.checkNames(req.DB, "", false, req.Malformed); err != nil {
		return err
	}
	var keys []string
	err := o.inTx(ctx, c, mainOf(req.DB), TxRef{}, func(tx kv.Tx) (err error) {
		if err := o.catalog.DropDatabase(ctx, tx, c.ns(), req.DB); err != nil {
			return err
		}
		// Its app keys go with it, as the original's did: a project made
		// later under its name must not be reached by them.
		keys, err = o.auth.DeleteProjectKeys(ctx, tx, o.principal(c).Namespace, req.DB)
		return err
	})
	if err == nil {
		// Its caches went with it: this node's remembered records of them
		// too (cache/records.go).
		o.caches.ForgetAll()
		o.auth.Forget(keys)
	}
	return err
}

// ListDatabases lists the databases in name order; not their branches.
func (o *Ops) ListDatabases(ctx context.Context, c Caller) (_ []DatabaseInfo, err error) {
	ctx, op, err := o.open(ctx, c, "ListDatabases")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.listDatabases(ctx, c)
}

// listDatabases is the work of ListDatabases and ListProjects.
func (o *Ops) listDatabases(ctx context.Context, c Caller) ([]DatabaseInfo, error) {
	out := []DatabaseInfo{}
	err := o.run(ctx, func(tx kv.Tx) error {
		dbs, err := o.catalog.ListDatabases(ctx, tx, c.ns())
		out = out[:0]
		for _, d := range dbs {
			if c.reach(d.Name) == nil {
				out = append(out, DatabaseInfo{Name: d.Name})
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DescribeDatabase describes a database's branch (main unless the request
// names another) and each of its collections, and names the database's
// branches.
func (o *Ops) DescribeDatabase(ctx context.Context, c Caller, req DatabaseRequest) (_ *DatabaseDescription, err error) {
	ctx, op, err := o.open(ctx, c, "DescribeDatabase")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed)
	if err != nil {
		return nil, err
	}
	formats, err := schemaFormats(req.SchemaFormat)
	if err != nil {
		return nil, err
	}
	var d *DatabaseDescription
	err = o.inTx(ctx, c, t, TxRef{}, func(tx kv.Tx) error {
		d = &DatabaseDescription{Name: req.DB, Collections: []CollectionDescription{}}
		db, err := o.catalog.Database(ctx, tx, c.ns(), t.stored)
		if err != nil {
			return err
		}
		if d.Branches, err = o.catalog.Branches(ctx, tx, c.ns(), t.db); err != nil {
			return err
		}
		list, err := o.catalog.ListCollections(ctx, tx, db)
		if err != nil {
			return err
		}
		for _, coll := range list {
			cd, err := o.describe(ctx, tx, coll)
			if err != nil {
				return err
			}
			d.Size += cd.Size
			d.IndexSize += cd.IndexSize
			d.Collections = append(d.Collections, cd)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.LogSize = -1
	if o.cfg.ChangeLog != nil {
		if d.LogSize, err = o.cfg.ChangeLog.Bytes(ctx); err != nil {
			return nil, err
		}
	}
	for i := range d.Collections {
		generate(&d.Collections[i], formats, c)
	}
	return d, nil
}

func (o *Ops) describe(ctx context.Context, tx kv.Tx, coll *catalog.Collection) (CollectionDescription, error) {
	sizes, err := o.catalog.Sizes(ctx, tx, coll)
	if err != nil {
		return CollectionDescription{}, err
	}
	d := CollectionDescription{Name: coll.Name, Schema: coll.Schema.Raw(), Size: sizes.Documents, IndexSize: sizes.Indexes,
		Indexes: Indexes(coll.Schema), SearchStatus: o.searchStatus(), parsed: coll.Schema}
	if coll.Schema.TTL() != nil {
		n, err := o.docs.PendingExpired(ctx, tx, coll, o.docs.Now())
		if err != nil {
			return CollectionDescription{}, err
		}
		d.ExpiredPending = &n
	}
	return d, nil
}

// searchStatus is every collection's search status (see SearchActive).
func (o *Ops) searchStatus() string {
	if o.search == nil {
		return NoSearchIndex
	}
	return SearchActive
}

// generate fills in d.Generated: in the final server's text for a 2023
// request (c.Projects), in the 2022 original's for a 2022 one, as each
// generation's clients and suites read it. It runs once the transaction
// is over: it reads nothing, so it need not hold the transaction open,
// nor be redone when a conflict makes the transaction run again.
func generate(d *CollectionDescription, formats []schemagen.Request, c Caller) {
	if len(formats) == 0 {
		return
	}
	style := schemagen.Style2022
	if c.Projects {
		style = schemagen.Final
	}
	d.Generated = make(map[string]string, len(formats))
	for _, f := range formats {
		d.Generated[f.Key] = schemagen.Generate(d.parsed, f.Format, style)
	}
}

// schemaFormats parses a describe request's SchemaFormat: an unknown
// format is the client's error, checked before anything is read.
func schemaFormats(list string) ([]schemagen.Request, error) {
	formats, err := schemagen.ParseFormats(list)
	if err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "%s", err.Error())
	}
	return formats, nil
}

// ListCollections lists a database's collections in name order.
func (o *Ops) ListCollections(ctx context.Context, c Caller, req DatabaseRequest) (_ []CollectionInfo, err error) {
	ctx, op, err := o.open(ctx, c, "ListCollections")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed)
	if err != nil {
		return nil, err
	}
	out := []CollectionInfo{}
	err = o.inTx(ctx, c, t, req.Tx, func(tx kv.Tx) error {
		out = out[:0]
		db, err := o.catalog.Database(ctx, tx, c.ns(), t.stored)
		if err != nil {
			return err
		}
		list, err := o.catalog.ListCollections(ctx, tx, db)
		for _, coll := range list {
			out = append(out, CollectionInfo{Name: coll.Name})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateCollectionRequest creates a collection or changes its schema.
type CreateCollectionRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	Schema         []byte // JSON
	// OnlyCreate makes an existing collection an ALREADY_EXISTS error
	// instead of a schema change.
	OnlyCreate bool
}

// CreateCollectionResult tells what was created or changed.
type CreateCollectionResult struct {
	Type string // the collection's type: "documents" or "messages"
}

// CreateOrUpdateCollection creates a collection, or changes the schema of
// an existing one if the change is compatible.
func (o *Ops) CreateOrUpdateCollection(ctx context.Context, c Caller, req CreateCollectionRequest) (_ *CreateCollectionResult, err error) {
	ctx, op, err := o.open(ctx, c, "CreateOrUpdateCollection")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	if isNull(req.Schema) {
		return nil, apierror.Errorf(apierror.InvalidArgument, "schema is a required during collection creation")
	}
	var res *CreateCollectionResult
	err = o.inTx(ctx, c, t, req.Tx, func(tx kv.Tx) error {
		db, err := o.catalog.Database(ctx, tx, c.ns(), t.stored)
		if err != nil {
			return err
		}
		res, err = o.createCollection(ctx, tx, db, req.Collection, req.Schema, req.OnlyCreate)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// createCollection creates or updates one collection of db: the shared
// step of CreateOrUpdateCollection and CreateOrUpdateCollections.
func (o *Ops) createCollection(ctx context.Context, tx kv.Tx, db *catalog.Database, name string, schema []byte, onlyCreate bool) (*CreateCollectionResult, error) {
	if !onlyCreate {
		if err := o.checkAddedUnique(ctx, tx, db, name, schema); err != nil {
			return nil, err
		}
	}
	if _, err := o.catalog.CreateOrUpdateCollection(ctx, tx, db, name, schema, onlyCreate); err != nil {
		return nil, err
	}
	coll, err := o.catalog.Collection(ctx, tx, db, name)
	if err != nil {
		return nil, err
	}
	return &CreateCollectionResult{Type: string(coll.Schema.CollectionType())}, nil
}

// checkAddedUnique refuses a schema change that adds a unique key to a
// collection whose documents hold duplicate values of it, before the
// change writes anything (as the catalog's own checks are), in the same
// transaction. A schema the catalog will refuse is left to it, so that
// the refusal is its.
func (o *Ops) checkAddedUnique(ctx context.Context, tx kv.Tx, db *catalog.Database, name string, raw []byte) error {
	next, err := schema.Parse(name, raw)
	if err != nil || len(next.Unique()) == 0 {
		return nil
	}
	coll, err := o.catalog.Collection(ctx, tx, db, name)
	if se, ok := apierror.From(err); ok && se.Code == apierror.NotFound {
		return nil // a new collection holds nothing
	}
	if err != nil {
		return err
	}
	if schema.Compatible(coll.Schema, next) != nil {
		return nil
	}
	return o.docs.CheckUniqueHeld(ctx, tx, coll, schema.AddedUnique(coll.Schema, next))
}

// DropCollection drops a collection with its data.
func (o *Ops) DropCollection(ctx context.Context, c Caller, req CollectionRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DropCollection")
	defer op.end(&err)
	if err != nil {
		return err
	}
	t, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return err
	}
	return o.inTx(ctx, c, t, req.Tx, func(tx kv.Tx) error {
		db, err := o.catalog.Database(ctx, tx, c.ns(), t.stored)
		if err != nil {
			return err
		}
		err = o.catalog.DropCollection(ctx, tx, db, req.Collection)
		if c.Projects && catalog.IsNoCollectionToDrop(err, req.Collection) {
			// The final server's wording (its 2022 one had "exists").
			return apierror.Errorf(apierror.NotFound, "collection doesn't exist '%s'", req.Collection)
		}
		return err
	})
}

// DescribeCollection describes a collection: its schema and size.
func (o *Ops) DescribeCollection(ctx context.Context, c Caller, req CollectionRequest) (_ *CollectionDescription, err error) {
	ctx, op, err := o.open(ctx, c, "DescribeCollection")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	formats, err := schemaFormats(req.SchemaFormat)
	if err != nil {
		return nil, err
	}
	var d CollectionDescription
	err = o.inCollection(ctx, c, t, req.Collection, req.Tx, func(tx kv.Tx, coll *catalog.Collection) (err error) {
		d, err = o.describe(ctx, tx, coll)
		return err
	})
	if err != nil {
		return nil, err
	}
	generate(&d, formats, c)
	return &d, nil
}
