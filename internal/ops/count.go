package ops

import (
	"context"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// CountRequest counts the documents a filter matches (2023's count call).
type CountRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	// Branch is the request's branch ("" is main). Not resolved yet: the
	// call that turns (DB, Branch) into the stored database's name must
	// be applied where DB is used (inCollection's db argument).
	Branch    string
	Tx        TxRef
	Filter    []byte // JSON, required; {} counts every document
	Collation Collation
}

// Count counts the documents req.Filter matches, from the index entries
// where the filter allows (no document read), else by reading and checking
// the documents. In a client's transaction it sees the transaction's own
// writes, as a read does.
func (o *Ops) Count(ctx context.Context, c Caller, req CountRequest) (_ int64, err error) {
	ctx, op, err := o.open(ctx, c, "Count")
	defer op.end(&err)
	if err != nil {
		return 0, err
	}
	t, err := c.resolve(req.DB, req.Branch, req.Collection, true, req.Malformed)
	if err != nil {
		return 0, err
	}
	var n int64
	err = o.filtered(ctx, c, t, req.Collection, req.Tx, req.Filter, req.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) (err error) {
		n, _, err = o.docs.Count(ctx, tx, coll, f)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
