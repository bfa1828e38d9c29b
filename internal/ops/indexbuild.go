package ops

import (
	"context"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// The index-build calls of the final API (BuildCollectionIndex,
// BuildSearchIndex). The original built a collection's secondary indexes,
// or its search index, in the background after a schema asked for them;
// Folio writes every field's entries, and the search indexer reads every
// write from the change log, so there is never anything to build: both
// calls check the collection and answer at once with what the original
// answered once its build had finished.

// IndexBuildRequest names the collection whose indexes a client asks to
// build.
type IndexBuildRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	// Branch is the request's branch ("" is main), to be resolved with DB
	// into the stored database's name (not yet: see CountRequest.Branch).
	Branch string
}

// CollectionIndex is one index of a collection as the final API lists it:
// a name, its state, and its fields.
type CollectionIndex struct {
	Name   string
	State  string
	Fields []string
}

// IndexActive is the state of an index that serves queries, as the
// original named it.
const IndexActive = "INDEX ACTIVE"

// SearchIndexBuilt is the status of a finished search index build, as the
// original answered it.
const SearchIndexBuilt = "success"

// A collection's search status as the final API's describe words it. The
// original's was "Search Active" once a field was marked searchIndex, and
// "No Search Index" while none was; Folio's search covers every string
// field of every collection whether marked or not (its index is built at
// the first search, which waits for it), so a collection is searchable
// whenever the server runs its search indexer.
const (
	SearchActive  = "Search Active"
	NoSearchIndex = "No Search Index"
)

// BuildCollectionIndex answers that every indexed field's index is active:
// one index per field a filter can compare (scalars, and arrays of
// scalars), named by its path.
func (o *Ops) BuildCollectionIndex(ctx context.Context, c Caller, req IndexBuildRequest) (_ []CollectionIndex, err error) {
	ctx, op, err := o.open(ctx, c, "BuildCollectionIndex")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	coll, err := o.indexBuildCollection(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return Indexes(coll.Schema), nil
}

// BuildSearchIndex answers that the collection's search index is built.
func (o *Ops) BuildSearchIndex(ctx context.Context, c Caller, req IndexBuildRequest) (_ string, err error) {
	ctx, op, err := o.open(ctx, c, "BuildSearchIndex")
	defer op.end(&err)
	if err != nil {
		return "", err
	}
	if _, err := o.indexBuildCollection(ctx, c, req); err != nil {
		return "", err
	}
	return SearchIndexBuilt, nil
}

// indexBuildCollection checks an index-build request and looks its
// collection up (NOT_FOUND if there is none).
func (o *Ops) indexBuildCollection(ctx context.Context, c Caller, req IndexBuildRequest) (*catalog.Collection, error) {
	t, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return nil, err
	}
	var found *catalog.Collection
	err = o.inCollection(ctx, c, t, req.Collection, TxRef{}, func(_ kv.Tx, coll *catalog.Collection) error {
		found = coll
		return nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// SystemIndexes are the indexes of every collection on its documents'
// times, which the final API lists first, without fields: the original's
// names (its _tigris_created_at and _tigris_updated_at metadata fields).
var SystemIndexes = []string{"_tigris_created_at", "_tigris_updated_at"}

// Indexes lists the indexes Folio keeps for a schema's collection, as the
// final API describes them: the system indexes, then every field with
// index entries (scalars and arrays of scalars, outside arrays of
// objects), active from its first write. The original listed only the
// fields marked "index": true; Folio indexes them all, so it lists them
// all.
func Indexes(s *schema.Schema) []CollectionIndex {
	out := make([]CollectionIndex, 0, len(SystemIndexes)+len(s.Fields()))
	for _, name := range SystemIndexes {
		out = append(out, CollectionIndex{Name: name, State: IndexActive})
	}
	var walk func(fields []*schema.Field)
	walk = func(fields []*schema.Field) {
		for _, f := range fields {
			switch {
			case f.Type.Scalar(), f.Type == schema.Array && f.Items != nil && f.Items.Type.Scalar():
				out = append(out, CollectionIndex{Name: f.Path, State: IndexActive, Fields: []string{f.Path}})
			case f.Type == schema.Object && !f.FreeForm:
				walk(f.Properties)
			}
		}
	}
	walk(s.Fields())
	return out
}
