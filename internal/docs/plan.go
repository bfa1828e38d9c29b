package docs

import (
	"context"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// candidates returns an iterator over the document records that may match f,
// in primary-key order, after the document key after (if any). Callers still
// check every candidate against f. Today it narrows the scan to one key when
// f pins the whole primary key by equality, and scans the collection
// otherwise; index plans (issue 5) take its place.
func candidates(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter, after []byte) kv.Iterator {
	r := keyspace.Documents(coll.ID)
	if pk := pinnedKey(coll, f); pk != nil {
		if key, err := keyspace.Document(coll.ID, pk); err == nil {
			r = kv.KeyRange(key)
		}
	}
	if after != nil && kv.CompareKeys(after, r.Begin) >= 0 {
		r.Begin = kv.KeyAfter(after)
		if r.Empty() {
			r.End = r.Begin
		}
	}
	return tx.Scan(ctx, r, kv.ScanOptions{})
}

// pinnedKey returns the primary key values that f requires by case-sensitive
// equality on every key field (alone or in a top-level $and), or nil.
func pinnedKey(coll *catalog.Collection, f filter.Filter) []any {
	var comps []*filter.Comparison
	switch n := f.Root.(type) {
	case *filter.Comparison:
		comps = []*filter.Comparison{n}
	case *filter.And:
		for _, c := range n.Nodes {
			if c, ok := c.(*filter.Comparison); ok {
				comps = append(comps, c)
			}
		}
	default:
		return nil
	}
	fields := coll.Schema.PrimaryKey()
	if len(fields) == 0 {
		return nil
	}
	pk := make([]any, len(fields))
	for i, field := range fields {
		for _, c := range comps {
			if c.Path == field.Name && c.Op == filter.Eq && !c.CaseInsensitive {
				pk[i] = c.Value
			}
		}
		if pk[i] == nil {
			return nil
		}
	}
	return pk
}
