package ops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// The final API's search indexes (/v1/projects/{project}/search/indexes):
// a project's indexes of documents its application puts there, apart from
// its collections. An index is a catalog entity of its own (catalog's
// indexes.go) whose documents are a collection's: written by the documents
// layer, in the change log, indexed by the search indexer, searched as a
// collection is (searchIn). Indexes belong to a project, not to a branch.

// IndexRequest names a search index, and for CreateOrUpdateIndex gives its
// schema.
type IndexRequest struct {
	Malformed     error // see Malformed
	Project, Name string
	Schema        []byte // JSON
	OnlyCreate    bool
}

// IndexInfo is a search index: its name and its schema as it was given.
type IndexInfo struct {
	Name   string
	Schema []byte
}

// ListIndexesRequest lists a project's search indexes. The original's
// filter (an index's source: a collection it followed, or "user") selects
// either every index, when it asks for "user" indexes or none, or none:
// Folio's indexes are all filled by their applications.
type ListIndexesRequest struct {
	Malformed                error
	Project                  string
	SourceType, SourceOfColl string
}

// IndexDocumentsRequest carries a search index's documents (Create,
// CreateOrReplace, Update), its ids (Get, Delete), or a filter
// (DeleteByQuery).
type IndexDocumentsRequest struct {
	Malformed      error
	Project, Index string
	Documents      [][]byte // each a JSON object
	IDs            []string
	Filter         []byte
}

// DocStatus is one document's outcome in a write of a search index: its
// id, and its error if it was not written (nil: it was).
type DocStatus struct {
	ID  string
	Err *apierror.Error
}

// OriginalCode is the code the original's status entries held for a
// document's error: the HTTP status of its API code, on both transports
// ({"code": 409, ...}).
func (s DocStatus) OriginalCode() int32 {
	switch s.Err.Code {
	case apierror.InvalidArgument:
		return 400
	case apierror.NotFound:
		return 404
	case apierror.AlreadyExists, apierror.Conflict:
		return 409
	}
	return 500
}

// IndexDocument is a document of a search index as Get returns it; nil
// for an id the index does not hold.
type IndexDocument struct {
	Data                 []byte
	CreatedAt, UpdatedAt time.Time
}

// MaxIndexDocumentsPerRequest bounds the documents (or ids) of one request
// on a search index: all of them are written in one transaction, bounded
// by the store's 10 MiB; the final clients send a batch of what the
// application hands them in one call.
const MaxIndexDocumentsPerRequest = 1000

// CreateOrUpdateIndex creates a search index, or changes its schema.
func (o *Ops) CreateOrUpdateIndex(ctx context.Context, c Caller, req IndexRequest) (created bool, err error) {
	ctx, op, err := o.open(ctx, c, "CreateOrUpdateIndex")
	defer op.end(&err)
	if err != nil {
		return false, err
	}
	db, err := o.indexTarget(c, req.Project, req.Name, req.Malformed)
	if err != nil {
		return false, err
	}
	err = o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) (err error) {
		created, err = o.catalog.CreateOrUpdateIndex(ctx, tx, d, req.Name, req.Schema, req.OnlyCreate)
		return err
	})
	return created, err
}

// GetIndex describes a search index.
func (o *Ops) GetIndex(ctx context.Context, c Caller, req IndexRequest) (_ *IndexInfo, err error) {
	ctx, op, err := o.open(ctx, c, "GetIndex")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := o.indexTarget(c, req.Project, req.Name, req.Malformed)
	if err != nil {
		return nil, err
	}
	var info *IndexInfo
	err = o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) error {
		idx, err := o.catalog.Index(ctx, tx, d, req.Name)
		if err != nil {
			return err
		}
		info = &IndexInfo{Name: idx.Name, Schema: idx.Source}
		return nil
	})
	return info, err
}

// DeleteIndex removes a search index and its documents.
func (o *Ops) DeleteIndex(ctx context.Context, c Caller, req IndexRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteIndex")
	defer op.end(&err)
	if err != nil {
		return err
	}
	db, err := o.indexTarget(c, req.Project, req.Name, req.Malformed)
	if err != nil {
		return err
	}
	return o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) error {
		return o.catalog.DropIndex(ctx, tx, d, req.Name)
	})
}

// ListIndexes lists a project's search indexes in name order.
func (o *Ops) ListIndexes(ctx context.Context, c Caller, req ListIndexesRequest) (_ []IndexInfo, err error) {
	ctx, op, err := o.open(ctx, c, "ListIndexes")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := c.resolve(req.Project, "", "", false, req.Malformed)
	if err != nil {
		return nil, err
	}
	out := []IndexInfo{}
	if (req.SourceType != "" && req.SourceType != "user") || req.SourceOfColl != "" {
		// Only an index that follows a collection has another source:
		// Folio has none, but the project must still be there.
		return out, o.inProject(ctx, c, db, func(kv.Tx, *catalog.Database) error { return nil })
	}
	err = o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) error {
		idxs, err := o.catalog.ListIndexes(ctx, tx, d)
		for _, idx := range idxs {
			out = append(out, IndexInfo{Name: idx.Name, Schema: idx.Source})
		}
		return err
	})
	return out, err
}

// indexTarget checks a request's project and index names (then reports
// its Malformed).
func (o *Ops) indexTarget(c Caller, project, index string, malformed error) (target, error) {
	if err := catalog.CheckDatabaseName(project); err != nil {
		return target{}, err
	}
	if err := catalog.CheckIndexName(index); err != nil {
		return target{}, err
	}
	return c.resolve(project, "", "", false, malformed)
}

// inProject runs fn in a transaction of its own with the project's
// database looked up (a project that is not there answered in the API's
// words).
func (o *Ops) inProject(ctx context.Context, c Caller, db target, fn func(tx kv.Tx, d *catalog.Database) error) error {
	return o.inTx(ctx, c, db, TxRef{}, func(tx kv.Tx) error {
		d, err := o.catalog.Database(ctx, tx, c.ns(), db.stored)
		if err != nil {
			return err
		}
		return fn(tx, d)
	})
}

// inIndex runs fn in a transaction of its own with the search index looked
// up.
func (o *Ops) inIndex(ctx context.Context, c Caller, db target, index string, fn func(tx kv.Tx, idx *catalog.SearchIndex) error) error {
	return o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) error {
		idx, err := o.catalog.Index(ctx, tx, d, index)
		if err != nil {
			return err
		}
		return fn(tx, idx)
	})
}

// indexWrite is how a document is written into an index.
type indexWrite int

const (
	indexCreate  indexWrite = iota // new ids only; an id absent is generated
	indexReplace                   // a document of the same id is replaced
	indexUpdate                    // the given fields replace the stored document's
)

// IndexCreate adds documents to a search index: each gets a new id if it
// has none, and one whose id the index holds is refused (its status).
func (o *Ops) IndexCreate(ctx context.Context, c Caller, req IndexDocumentsRequest) (_ []DocStatus, err error) {
	ctx, op, err := o.open(ctx, c, "IndexCreate")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeIndexDocuments(ctx, c, req, indexCreate, "")
}

// IndexCreateByID adds one document under the id the request's path gives.
func (o *Ops) IndexCreateByID(ctx context.Context, c Caller, req IndexDocumentsRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "IndexCreateByID")
	defer op.end(&err)
	if err != nil {
		return err
	}
	if len(req.Documents) != 1 || len(req.IDs) != 1 {
		return apierror.Errorf(apierror.InvalidArgument, "a document and its id are required")
	}
	statuses, err := o.writeIndexDocuments(ctx, c, req, indexCreate, req.IDs[0])
	if err != nil {
		return err
	}
	if e := statuses[0].Err; e != nil {
		return e
	}
	return nil
}

// IndexCreateOrReplace writes documents, replacing those of the same ids.
func (o *Ops) IndexCreateOrReplace(ctx context.Context, c Caller, req IndexDocumentsRequest) (_ []DocStatus, err error) {
	ctx, op, err := o.open(ctx, c, "IndexCreateOrReplace")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeIndexDocuments(ctx, c, req, indexReplace, "")
}

// IndexUpdate changes stored documents: each document's fields replace
// those of the stored document of its id, whose other fields stay.
func (o *Ops) IndexUpdate(ctx context.Context, c Caller, req IndexDocumentsRequest) (_ []DocStatus, err error) {
	ctx, op, err := o.open(ctx, c, "IndexUpdate")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeIndexDocuments(ctx, c, req, indexUpdate, "")
}

// writeIndexDocuments writes each document of req in one transaction: a
// document that is refused (its schema, its id) gets its error in its
// status and nothing of it is written, the others are. An error of the
// store fails the whole request, with nothing written. A byID (create by
// id: one document) is set as the document's id, in the index's id field.
func (o *Ops) writeIndexDocuments(ctx context.Context, c Caller, req IndexDocumentsRequest, how indexWrite, byID string) ([]DocStatus, error) {
	db, err := o.indexTarget(c, req.Project, req.Index, req.Malformed)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(len(req.Documents), "documents"); err != nil {
		return nil, err
	}
	var out []DocStatus
	err = o.inIndex(ctx, c, db, req.Index, func(tx kv.Tx, idx *catalog.SearchIndex) error {
		out = make([]DocStatus, len(req.Documents))
		for i, doc := range req.Documents {
			if byID != "" {
				var err error
				if doc, err = withID(doc, idx.IDField, byID); err != nil {
					return err
				}
			}
			id, err := o.writeIndexDocument(ctx, tx, idx, doc, how)
			out[i].ID = id
			if err == nil {
				continue
			}
			e, coded := apierror.From(err)
			if !coded || e.Cause != nil || e.Code == apierror.Internal || e.Code == apierror.Unavailable {
				return err // the store's: nothing of the request is written
			}
			out[i].Err = e
		}
		return o.checkStorage(ctx, tx, c)
	})
	return out, err
}

func checkBatch(n int, what string) error {
	if n == 0 {
		return apierror.Errorf(apierror.InvalidArgument, "empty %s received", what)
	}
	if n > MaxIndexDocumentsPerRequest {
		return apierror.Errorf(apierror.InvalidArgument, "%d %s in one request, the limit is %d", n, what, MaxIndexDocumentsPerRequest)
	}
	return nil
}

// writeIndexDocument writes one document and returns its id. A document
// refused writes nothing: the documents layer checks it, then its key,
// before its one write.
func (o *Ops) writeIndexDocument(ctx context.Context, tx kv.Tx, idx *catalog.SearchIndex, doc []byte, how indexWrite) (string, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil || members == nil {
		return "", apierror.Errorf(apierror.InvalidArgument, "a document must be a JSON object")
	}
	id := ""
	if raw, ok := members[idx.IDField]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &id); err != nil || id == "" {
			return "", apierror.Errorf(apierror.InvalidArgument, "wrong type of '%s' field", idx.IDField)
		}
	}
	if id == "" && idx.IDField != "id" {
		// An id field the schema names (not the default "id") is the
		// application's to give, as the original required.
		return "", apierror.Errorf(apierror.InvalidArgument, "index has explicitly marked '%s' field as 'id' but document is missing that field", idx.IDField)
	}
	if id == "" {
		if how == indexUpdate {
			return "", apierror.Errorf(apierror.InvalidArgument, "the '%s' field is required to update a document", idx.IDField)
		}
		id = newDocumentID()
		var err error
		if doc, err = withID(doc, idx.IDField, id); err != nil {
			return "", err
		}
	}
	if how == indexUpdate {
		stored, err := o.indexDocuments(ctx, tx, idx, []string{id})
		if err != nil {
			return id, err
		}
		if stored[0] == nil {
			return id, apierror.Errorf(apierror.NotFound, "Could not find a document with id: %s", id)
		}
		var merged map[string]json.RawMessage
		if err := json.Unmarshal(stored[0].Data, &merged); err != nil {
			return id, fmt.Errorf("ops: a stored document of index %s does not decode: %w", idx.Name, err)
		}
		for k, v := range members {
			merged[k] = v
		}
		if doc, err = json.Marshal(merged); err != nil {
			return id, err
		}
	}
	write := o.docs.Insert
	if how != indexCreate {
		write = o.docs.Replace
	}
	if _, err := write(ctx, tx, idx.Coll, [][]byte{doc}); err != nil {
		if apierror.CodeOf(err) == apierror.AlreadyExists {
			return id, apierror.Errorf(apierror.AlreadyExists, "A document with id '%s' already exists.", id)
		}
		return id, err
	}
	return id, nil
}

// withID returns doc with its member field set to id.
func withID(doc []byte, field, id string) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil || members == nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "a document must be a JSON object")
	}
	members[field], _ = json.Marshal(id)
	return json.Marshal(members)
}

// newDocumentID is the id of a document created without one: a random
// (version 4) UUID, as the original made.
func newDocumentID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// indexDocuments reads the documents of ids (nil for one not there).
func (o *Ops) indexDocuments(ctx context.Context, tx kv.Tx, idx *catalog.SearchIndex, ids []string) ([]*IndexDocument, error) {
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		key, err := keyspace.Document(idx.Coll.ID, []any{id})
		if err != nil {
			return nil, err
		}
		keys[i] = key
	}
	var buf []byte
	recs, found, err := o.docs.FetchMany(ctx, tx, idx.Coll, keys, &buf)
	if err != nil {
		return nil, err
	}
	out := make([]*IndexDocument, len(ids))
	for i, r := range recs {
		if found[i] {
			out[i] = &IndexDocument{Data: bytes.Clone(r.Data), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		}
	}
	return out, nil
}

// IndexGet reads documents of a search index by their ids, in the order
// of the ids: nil for one the index does not hold.
func (o *Ops) IndexGet(ctx context.Context, c Caller, req IndexDocumentsRequest) (_ []*IndexDocument, err error) {
	ctx, op, err := o.open(ctx, c, "IndexGet")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := o.indexTarget(c, req.Project, req.Index, req.Malformed)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(len(req.IDs), "ids"); err != nil {
		return nil, err
	}
	var out []*IndexDocument
	err = o.inIndex(ctx, c, db, req.Index, func(tx kv.Tx, idx *catalog.SearchIndex) (err error) {
		out, err = o.indexDocuments(ctx, tx, idx, req.IDs)
		return err
	})
	return out, err
}

// IndexDelete removes documents of a search index by their ids; an id the
// index does not hold gets a NOT_FOUND status.
func (o *Ops) IndexDelete(ctx context.Context, c Caller, req IndexDocumentsRequest) (_ []DocStatus, err error) {
	ctx, op, err := o.open(ctx, c, "IndexDelete")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := o.indexTarget(c, req.Project, req.Index, req.Malformed)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(len(req.IDs), "ids"); err != nil {
		return nil, err
	}
	var out []DocStatus
	err = o.inIndex(ctx, c, db, req.Index, func(tx kv.Tx, idx *catalog.SearchIndex) error {
		out = make([]DocStatus, len(req.IDs))
		for i, id := range req.IDs {
			out[i].ID = id
			f, err := idFilter(idx, id)
			if err != nil {
				return err
			}
			res, err := o.docs.Delete(ctx, tx, idx.Coll, f, 1)
			if err != nil {
				return err
			}
			if res.Modified == 0 {
				out[i].Err = &apierror.Error{Code: apierror.NotFound, Message: "Could not find a document with id: " + id}
			}
		}
		return nil
	})
	return out, err
}

func idFilter(idx *catalog.SearchIndex, id string) (filter.Filter, error) {
	raw, err := json.Marshal(map[string]string{idx.IDField: id})
	if err != nil {
		return filter.Filter{}, err
	}
	return filter.Parse(raw, idx.Coll.Schema, filter.Collation{})
}

// IndexDeleteByQuery removes the documents of a search index a filter
// matches (required: an index is emptied by deleting it), and returns
// how many.
func (o *Ops) IndexDeleteByQuery(ctx context.Context, c Caller, req IndexDocumentsRequest) (_ int, err error) {
	ctx, op, err := o.open(ctx, c, "IndexDeleteByQuery")
	defer op.end(&err)
	if err != nil {
		return 0, err
	}
	db, err := o.indexTarget(c, req.Project, req.Index, req.Malformed)
	if err != nil {
		return 0, err
	}
	if isNull(req.Filter) || string(bytes.TrimSpace(req.Filter)) == "{}" {
		return 0, apierror.Errorf(apierror.InvalidArgument, "filter is a required field")
	}
	n := 0
	err = o.inIndex(ctx, c, db, req.Index, func(tx kv.Tx, idx *catalog.SearchIndex) error {
		f, err := filter.Parse(req.Filter, idx.Coll.Schema, filter.Collation{})
		if err != nil {
			return err
		}
		res, err := o.docs.Delete(ctx, tx, idx.Coll, f, 0)
		if err != nil {
			return err
		}
		n = res.Modified
		return nil
	})
	return n, err
}

// IndexSearchRequest is a search of a search index: a collection's search
// (with the final API's group_by and vector as a collection's has them).
type IndexSearchRequest struct {
	SearchRequest // DB is the project; Collection and Branch unused
	Index         string
}

// IndexSearch searches a search index, as Search does a collection: every
// document written before the search arrived is found.
func (o *Ops) IndexSearch(ctx context.Context, c Caller, req IndexSearchRequest, emit func(SearchPage) error) (err error) {
	ctx, op, err := o.open(ctx, c, "IndexSearch")
	defer op.end(&err)
	if err != nil {
		return err
	}
	db, err := o.indexTarget(c, req.DB, req.Index, req.Malformed)
	if err != nil {
		return err
	}
	return o.searchIn(ctx, c, db, req.SearchRequest, func(tx kv.Tx) (*catalog.Collection, error) {
		d, err := o.catalog.Database(ctx, tx, c.ns(), db.stored)
		if err != nil {
			return nil, err
		}
		idx, err := o.catalog.Index(ctx, tx, d, req.Index)
		if err != nil {
			return nil, err
		}
		return idx.Coll, nil
	}, emit)
}
