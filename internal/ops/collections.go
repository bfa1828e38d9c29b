package ops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
)

// CreateCollectionsRequest creates or updates several collections at once
// (the 2023 API's CreateOrUpdateCollections, which the final clients send
// when they open a database): each schema names its collection by its
// title.
type CreateCollectionsRequest struct {
	Malformed  error // see Malformed
	DB, Branch string
	Tx         TxRef
	Schemas    [][]byte // JSON, each with a title
	OnlyCreate bool
}

// CreateCollectionsResult tells, for each schema in the request's order,
// what became of its collection.
type CreateCollectionsResult struct {
	Collections []CreateCollectionResult
}

// SchemaError is CreateOrUpdateCollections's error: the schema at Index
// (in the request's order) failed, and nothing was applied. Err, which it
// unwraps to, says why, naming the schema's place.
type SchemaError struct {
	Index int
	Err   *apierror.Error
}

func (e *SchemaError) Error() string { return e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }

// CreateOrUpdateCollections creates or updates every collection the
// request's schemas describe, all or none, in one transaction (the
// caller's, if the request is in one). The original applied them one by
// one and stopped at the first that failed, keeping those before it.
func (o *Ops) CreateOrUpdateCollections(ctx context.Context, c Caller, req CreateCollectionsRequest) (_ *CreateCollectionsResult, err error) {
	ctx, op, err := o.open(ctx, c, "CreateOrUpdateCollections")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(req.Schemas))
	for i, s := range req.Schemas {
		if names[i], err = schemaTitle(i, s); err != nil {
			return nil, err
		}
	}
	res := &CreateCollectionsResult{}
	failed := -1 // the schema being applied when the transaction failed
	err = o.inTx(ctx, c, t, req.Tx, func(tx kv.Tx) error {
		res.Collections = res.Collections[:0]
		db, err := o.catalog.Database(ctx, tx, c.ns(), t.stored)
		if err != nil {
			return err
		}
		for i, s := range req.Schemas {
			failed = i
			one, err := o.createCollection(ctx, tx, db, names[i], s, req.OnlyCreate)
			if err != nil {
				return err
			}
			res.Collections = append(res.Collections, *one)
		}
		failed = -1
		return nil
	})
	if err != nil {
		err = apiError(ctx, err)
		if se, ok := apierror.From(err); ok && failed >= 0 && se.Cause == nil {
			return nil, &SchemaError{Index: failed, Err: &apierror.Error{Code: se.Code, RetryDelay: se.RetryDelay,
				Message: fmt.Sprintf("schemas[%d] (collection '%s'): %s; no collection was created or changed", failed, names[failed], se.Message)}}
		}
		return nil, err
	}
	return res, nil
}

// schemaTitle is the title of the schema at index i, which names its
// collection.
func schemaTitle(i int, schema []byte) (string, error) {
	var s struct {
		Title string `json:"title"`
	}
	refuse := func(format string) error {
		return &SchemaError{Index: i, Err: &apierror.Error{Code: apierror.InvalidArgument, Message: fmt.Sprintf(format, i)}}
	}
	if json.Unmarshal(schema, &s) != nil {
		return "", refuse("schemas[%d] is not a JSON object with a string title")
	}
	if s.Title == "" {
		return "", refuse("Collection name is empty at index %d: a schema's title names its collection")
	}
	return s.Title, nil
}
