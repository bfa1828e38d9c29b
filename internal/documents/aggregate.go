package documents

import (
	"context"

	"github.com/foliodb/folio/internal/aggregate"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/query"
)

// AggregateRequest is an aggregation of the documents a filter matches.
type AggregateRequest struct {
	Filter filter.Filter
	Spec   *aggregate.Spec
	// MaxGroups bounds the groups held (aggregate.DefaultMaxGroups if 0).
	MaxGroups int
	// documentsOnly makes the aggregation read the documents whatever
	// the index could answer: the model test's other plan.
	documentsOnly bool
}

// AggregateResult is an aggregation's answer and how it ran.
type AggregateResult struct {
	// Results are the groups' results in order, each a JSON object.
	Results [][]byte
	Plan    query.Plan
	Groups  int   // groups folded, before the limit
	Folded  int64 // documents folded (or counted)
}

// Aggregate folds the documents req.Filter matches into req.Spec's
// groups. Its plan, from best to worst:
//
//   - no group_by and only $count: the count call's (query.Count: index
//     entries or the document count where the filter allows);
//   - one scalar group_by field and only $count, with no filter or one
//     exact on that field: the field's index entries, counted by value
//     (query.GroupCounts), no document read;
//   - otherwise the documents of the filter's read plan, read once and
//     folded beside the read (foldDocuments), matched as reads match.
func (s *Service) Aggregate(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req AggregateRequest) (*AggregateResult, error) {
	if err := requireDocuments(coll, "aggregate"); err != nil {
		return nil, err
	}
	spec := req.Spec
	res := &AggregateResult{}
	// A collection with a ttl takes the documents' plan: counts made from
	// index entries or counters cannot tell an expired document (query.Count
	// declines such a collection itself; GroupCounts does not look).
	if spec.CountOnly() && !req.documentsOnly && coll.Schema.TTL() == nil {
		switch len(spec.GroupBy) {
		case 0:
			n, plan, err := s.Count(ctx, tx, coll, req.Filter)
			if err != nil {
				return nil, err
			}
			f := aggregate.NewFolder(spec, req.MaxGroups)
			if err := f.AddCount(nil, n); err != nil {
				return nil, err
			}
			return finish(f, plan, res)
		case 1:
			f := aggregate.NewFolder(spec, req.MaxGroups)
			plan, ok, err := query.GroupCounts(ctx, tx, coll, spec.GroupBy[0].Path, req.Filter, func(v any, n int64) error {
				return f.AddCount([]any{v}, n)
			})
			if err != nil {
				return nil, err
			}
			if ok {
				s.logPlan(ctx, coll, plan)
				return finish(f, plan, res)
			}
		}
	}
	f := aggregate.NewFolder(spec, req.MaxGroups)
	it, plan, err := query.Run(ctx, tx, coll, query.Request{Filter: req.Filter, Doc: recordData, Times: recordTimes, Counts: &s.counts, Now: s.Now()})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	s.logPlan(ctx, coll, plan)
	if err := foldDocuments(ctx, it, req.Filter, f); err != nil {
		return nil, err
	}
	plan.Kind = "fold documents of " + plan.Kind
	return finish(f, plan, res)
}

func finish(f *aggregate.Folder, plan query.Plan, res *AggregateResult) (*AggregateResult, error) {
	out, err := f.Results()
	if err != nil {
		return nil, err
	}
	res.Results, res.Plan, res.Groups, res.Folded = out, plan, f.Groups(), f.Folded
	return res, nil
}
