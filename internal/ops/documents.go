package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/messages"
	"github.com/foliodb/folio/internal/schema"
)

// Collation selects how strings compare: Case "cs" (case-sensitive, the
// default, also when empty) or "ci" (case-insensitive).
type Collation struct {
	Case string
}

func (c Collation) filter() filter.Collation { return filter.Collation{Case: c.Case} }

// WriteDocumentsRequest inserts or replaces documents.
type WriteDocumentsRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	Documents      [][]byte // each a JSON object
	// SchemaSignedOff is the original's Tigris-Schema-Sign-Off header:
	// members the schema does not know are stored rather than refused
	// (schema.ConformOpen); what the schema declares is still checked.
	SchemaSignedOff bool
}

// WriteResult is what a write reports.
type WriteResult struct {
	// Time is the write's metadata time: created_at of an insert or
	// replace, updated_at of an update, deleted_at of a delete.
	Time time.Time
	// Keys holds, for insert and replace, each document's primary key as a
	// JSON object, generated values included.
	Keys []json.RawMessage
	// Modified counts the documents an update changed or a delete removed.
	Modified int
}

// Insert adds documents; if any of their keys exists, nothing is written.
func (o *Ops) Insert(ctx context.Context, c Caller, req WriteDocumentsRequest) (_ *WriteResult, err error) {
	ctx, op, err := o.open(ctx, c, "Insert")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	write := o.docs.Insert
	if req.SchemaSignedOff {
		write = o.docs.InsertSignedOff
	}
	return o.writeDocuments(ctx, c, req, write)
}

// Replace inserts documents, replacing those whose keys exist.
func (o *Ops) Replace(ctx context.Context, c Caller, req WriteDocumentsRequest) (_ *WriteResult, err error) {
	ctx, op, err := o.open(ctx, c, "Replace")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	write := o.docs.Replace
	if req.SchemaSignedOff {
		write = o.docs.ReplaceSignedOff
	}
	return o.writeDocuments(ctx, c, req, write)
}

// writeFunc is documents.Service.Insert or Replace.
type writeFunc func(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*documents.WriteResult, error)

func (o *Ops) writeDocuments(ctx context.Context, c Caller, req WriteDocumentsRequest, write writeFunc) (*WriteResult, error) {
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	if len(req.Documents) == 0 {
		return nil, apierror.Errorf(apierror.InvalidArgument, "empty documents received")
	}
	if len(req.Documents) > o.cfg.MaxDocumentsPerRequest {
		return nil, apierror.Errorf(apierror.InvalidArgument, "%d documents in one request, the limit is %d", len(req.Documents), o.cfg.MaxDocumentsPerRequest)
	}
	var res *documents.WriteResult
	err = o.inCollection(ctx, c, db, req.Collection, req.Tx, func(tx kv.Tx, coll *catalog.Collection) (err error) {
		if res, err = write(ctx, tx, coll, req.Documents); err != nil {
			return err
		}
		return o.checkStorage(ctx, tx, c)
	})
	if err != nil {
		return nil, err
	}
	return (*WriteResult)(res), nil
}

// UpdateRequest changes the documents a filter matches.
type UpdateRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	Filter         []byte // JSON, required
	Fields         []byte // JSON: {"$set": {...}, "$unset": [...]}, required
	Collation      Collation
	// Limit caps the documents changed, the first matches in primary-key
	// order (0: no cap).
	Limit int64
}

// Update applies req.Fields to the documents req.Filter matches.
func (o *Ops) Update(ctx context.Context, c Caller, req UpdateRequest) (_ *WriteResult, err error) {
	ctx, op, err := o.open(ctx, c, "Update")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	if isNull(req.Fields) {
		return nil, apierror.Errorf(apierror.InvalidArgument, "empty fields received")
	}
	if req.Limit < 0 {
		return nil, negativeLimit()
	}
	var res *documents.WriteResult
	err = o.filtered(ctx, c, db, req.Collection, req.Tx, req.Filter, req.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) (err error) {
		if res, err = o.docs.Update(ctx, tx, coll, f, req.Fields, req.Limit); err != nil {
			return err
		}
		return o.checkStorage(ctx, tx, c)
	})
	if err != nil {
		return nil, err
	}
	return (*WriteResult)(res), nil
}

// DeleteRequest removes the documents a filter matches.
type DeleteRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	Filter         []byte // JSON, required; {} matches every document
	Collation      Collation
	// Limit caps the documents removed, the first matches in primary-key
	// order (0: no cap).
	Limit int64
}

// Delete removes the documents req.Filter matches.
func (o *Ops) Delete(ctx context.Context, c Caller, req DeleteRequest) (_ *WriteResult, err error) {
	ctx, op, err := o.open(ctx, c, "Delete")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	if req.Limit < 0 {
		return nil, negativeLimit()
	}
	var res *documents.WriteResult
	err = o.filtered(ctx, c, db, req.Collection, req.Tx, req.Filter, req.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) (err error) {
		res, err = o.docs.Delete(ctx, tx, coll, f, req.Limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return (*WriteResult)(res), nil
}

func negativeLimit() error {
	return apierror.Errorf(apierror.InvalidArgument, "limit must not be negative")
}

// filtered runs fn in the request's transaction with the collection and
// its parsed filter: the shared part of update, delete, read and explain.
func (o *Ops) filtered(ctx context.Context, c Caller, db target, coll string, tx TxRef, rawFilter []byte, collation Collation, fn func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) error) error {
	if isNull(rawFilter) {
		return apierror.Errorf(apierror.InvalidArgument, "filter is a required field")
	}
	return o.inCollection(ctx, c, db, coll, tx, func(tx kv.Tx, coll *catalog.Collection) error {
		f, err := filter.Parse(rawFilter, coll.Schema, collation.filter())
		if err != nil {
			return err
		}
		return fn(tx, coll, f)
	})
}

// ReadRequest reads the documents (or stored messages) a filter matches.
type ReadRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	Filter         []byte // JSON, required; {} matches everything
	// Fields is the projection, {"a":1,"b":true} or {"a":0}; none returns
	// whole documents.
	Fields []byte
	// Sort is [{"field":"$asc"}, {"other":"$desc"}]; none reads in
	// primary-key order.
	Sort []byte
	// Limit caps the documents returned (0: no cap); Skip passes over the
	// first matches.
	Limit, Skip int64
	// Offset resumes a read after the document whose resume token it is.
	Offset    []byte
	Collation Collation
	// Count, for Explain only, explains a count of the filter's documents
	// (the count call) rather than a read.
	Count bool
}

// Item is one document (or message) of a read.
type Item struct {
	Data        []byte // valid only during the emit call
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ResumeToken []byte // a ReadRequest.Offset that continues after this item
}

// Read calls emit with each item req selects, in order. The read is one
// transaction that only reads: it never conflicts, so it is never retried
// and nothing is emitted twice. An error from emit ends the read with it.
func (o *Ops) Read(ctx context.Context, c Caller, req ReadRequest, emit func(Item) error) (err error) {
	ctx, op, err := o.open(ctx, c, "Read")
	defer op.end(&err)
	if err != nil {
		return err
	}
	db, rr, err := o.readRequest(c, req)
	if err != nil {
		return err
	}
	if !req.Tx.InTx() {
		release, err := o.reads.take(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return o.filtered(ctx, c, db, req.Collection, req.Tx, req.Filter, req.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) error {
		rr.Filter = f
		return o.readItems(ctx, tx, coll, rr, emit)
	})
}

// readRequest checks a read's request, all but the filter (which needs
// the collection's schema), and returns the database it is on.
func (o *Ops) readRequest(c Caller, req ReadRequest) (target, documents.ReadRequest, error) {
	db, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return target{}, documents.ReadRequest{}, err
	}
	if isNull(req.Filter) {
		return target{}, documents.ReadRequest{}, apierror.Errorf(apierror.InvalidArgument, "filter is a required field")
	}
	if req.Limit < 0 || req.Skip < 0 {
		return target{}, documents.ReadRequest{}, apierror.Errorf(apierror.InvalidArgument, "limit and skip must not be negative")
	}
	include, exclude, err := parseFields(req.Fields)
	if err != nil {
		return target{}, documents.ReadRequest{}, err
	}
	sort, err := parseSort(req.Sort)
	if err != nil {
		return target{}, documents.ReadRequest{}, err
	}
	return db, documents.ReadRequest{Include: include, Exclude: exclude, Limit: req.Limit, Skip: req.Skip, After: req.Offset, Sort: sort}, nil
}

// readItems reads what a collection holds: its documents, or the stored
// messages of a messages collection. The original served documents/read
// and messages/read with one operation, so both read either kind.
func (o *Ops) readItems(ctx context.Context, tx kv.Tx, coll *catalog.Collection, rr documents.ReadRequest, emit func(Item) error) error {
	if err := checkOffset(coll, rr.After); err != nil {
		return err
	}
	if coll.Schema.CollectionType() != schema.Messages {
		return o.docs.Read(ctx, tx, coll, rr, func(item documents.ReadItem) error { return emit(Item(item)) })
	}
	if len(rr.Sort) > 0 {
		return apierror.Errorf(apierror.InvalidArgument, "sort is not supported on messages collections: messages are read in publish order")
	}
	mr := messages.ReadRequest{Filter: rr.Filter, Include: rr.Include, Exclude: rr.Exclude, Limit: rr.Limit, Skip: rr.Skip, After: rr.After}
	return o.messages.Read(ctx, tx, coll, mr, func(m messages.Item) error {
		return emit(Item{Data: m.Data, CreatedAt: m.CreatedAt, ResumeToken: m.ResumeToken})
	})
}

// checkOffset refuses a read's offset that is not the resume token of an
// item of coll: the token is the item's key, and any other bytes would be
// read as a position before or after the whole collection (reading all of
// it, or nothing) instead of being refused. A token does not tell the
// filter it was read with: one of another read of the collection resumes
// after its item.
func checkOffset(coll *catalog.Collection, offset []byte) error {
	if offset == nil {
		return nil
	}
	ok := false
	if coll.Schema.CollectionType() == schema.Messages {
		ok = keyspace.IsMessageKey(coll.ID, offset)
	} else if pk, err := keyspace.DocumentKey(coll.ID, offset); err == nil {
		ok = coll.Schema.IsKey(pk)
	}
	if !ok {
		return apierror.Errorf(apierror.InvalidArgument, "options.offset is not a resume token of this collection: pass the resume_token of an item that a read of it returned")
	}
	return nil
}

// Explanation tells how a read's lookup runs: Folio's own call, for
// developers and operators checking that a filter is served by an index.
type Explanation struct {
	Plan       string
	Candidates int   // documents an index plan fetched
	Matched    int   // documents that matched the filter
	KeysRead   int64 // index entries and documents read
}

// Explain runs a read's lookup, counting what it reads, and tells which
// plan it took.
func (o *Ops) Explain(ctx context.Context, c Caller, req ReadRequest) (_ *Explanation, err error) {
	ctx, op, err := o.open(ctx, c, "Explain")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	db, rr, err := o.readRequest(c, req)
	if err != nil {
		return nil, err
	}
	var ex *documents.Explanation
	err = o.filtered(ctx, c, db, req.Collection, req.Tx, req.Filter, req.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) (err error) {
		rr.Filter = f
		if req.Count {
			ex, err = o.docs.ExplainCount(ctx, tx, coll, f)
			return err
		}
		if err := checkOffset(coll, rr.After); err != nil {
			return err
		}
		ex, err = o.docs.Explain(ctx, tx, coll, rr)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Explanation{Plan: ex.Plan, Candidates: ex.Candidates, Matched: ex.Matched, KeysRead: ex.KeysRead}, nil
}

// parseFields reads a read's projection: {"a":1,"b":true} returns only those
// fields, {"a":0} or {"a":false} everything but them.
func parseFields(raw []byte) (include, exclude map[string]bool, err error) {
	if isNull(raw) {
		return nil, nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, apierror.Errorf(apierror.InvalidArgument, "fields must be an object of field names to 1/true or 0/false")
	}
	include, exclude = map[string]bool{}, map[string]bool{}
	for name, v := range fields {
		switch string(bytes.TrimSpace(v)) {
		case "1", "true":
			include[name] = true
		case "0", "false":
			exclude[name] = true
		default:
			return nil, nil, apierror.Errorf(apierror.InvalidArgument, "field '%s' in fields must be 1, 0, true or false", name)
		}
	}
	if len(include) > 0 && len(exclude) > 0 {
		return nil, nil, apierror.Errorf(apierror.InvalidArgument, "fields cannot both include and exclude fields")
	}
	return include, exclude, nil
}

// parseSort reads [{"field":"$asc"}, {"other":"$desc"}].
func parseSort(raw []byte) ([]documents.SortField, error) {
	if isNull(raw) {
		return nil, nil
	}
	var items []map[string]string
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, `sort must be an array such as [{"field":"$asc"}]`)
	}
	var out []documents.SortField
	for _, item := range items {
		if len(item) != 1 {
			return nil, apierror.Errorf(apierror.InvalidArgument, "each sort item names one field")
		}
		for path, order := range item {
			switch order {
			case "$asc":
				out = append(out, documents.SortField{Path: path})
			case "$desc":
				out = append(out, documents.SortField{Path: path, Desc: true})
			default:
				return nil, apierror.Errorf(apierror.InvalidArgument, "sort order of '%s' must be $asc or $desc, not '%s'", path, order)
			}
		}
	}
	return out, nil
}

// isNull reports whether a JSON member is absent or null.
func isNull(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}
