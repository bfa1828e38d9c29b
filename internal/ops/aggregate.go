package ops

import (
	"context"

	"github.com/foliodb/folio/internal/aggregate"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// AggregateRequest groups the documents a filter matches and answers an
// accumulator's result per group (Folio's own call, docs/api.md).
type AggregateRequest struct {
	Malformed      error // see Malformed
	DB, Collection string
	Branch         string // see DatabaseRequest.Branch
	Tx             TxRef
	// Filter selects the documents; none (or null) selects every one.
	Filter    []byte
	Collation Collation
	// GroupBy, Fields, Sort and Limit: see aggregate.Request.
	GroupBy []string
	Fields  []byte
	Sort    []byte
	Limit   int64
	// Explain answers how the aggregation ran instead of its results.
	Explain bool
}

// AggregateExplanation tells how an aggregation ran.
type AggregateExplanation struct {
	Plan     string
	Groups   int   // groups folded, before the limit
	Matched  int64 // documents folded or counted
	KeysRead int64 // index entries and documents read
}

// Aggregate folds the documents req.Filter matches into groups and calls
// emit with each group's result (a JSON object), in order; with
// req.Explain it returns how it ran instead and emits nothing. In a
// client's transaction it sees the transaction's writes, as a read does.
// The whole aggregation is done before the first result is emitted, so a
// result is never emitted twice, whatever the transaction's retries.
func (o *Ops) Aggregate(ctx context.Context, c Caller, req AggregateRequest, emit func(result []byte) error) (_ *AggregateExplanation, err error) {
	ctx, op, err := o.open(ctx, c, "Aggregate")
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
	if !req.Tx.InTx() {
		release, err := o.reads.take(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	rawFilter := req.Filter
	if isNull(rawFilter) {
		rawFilter = []byte("{}")
	}
	var res *documents.AggregateResult
	var count kv.ReadCount
	err = o.filtered(ctx, c, db, req.Collection, req.Tx, rawFilter, req.Collation, func(tx kv.Tx, coll *catalog.Collection, f filter.Filter) error {
		spec, err := aggregate.Parse(aggregate.Request{GroupBy: req.GroupBy, Fields: req.Fields, Sort: req.Sort, Limit: req.Limit}, coll.Schema)
		if err != nil {
			return err
		}
		if req.Explain { // counted only then: an atomic add per key read
			count.Keys.Store(0) // a retry counts afresh
			tx = kv.CountReads(tx, &count)
		}
		res, err = o.docs.Aggregate(ctx, tx, coll, documents.AggregateRequest{Filter: f, Spec: spec, MaxGroups: o.cfg.MaxAggregateGroups})
		return err
	})
	if err != nil {
		return nil, err
	}
	if req.Explain {
		return &AggregateExplanation{Plan: res.Plan.String(), Groups: res.Groups, Matched: res.Folded, KeysRead: count.Keys.Load()}, nil
	}
	for _, r := range res.Results {
		if err := emit(r); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
