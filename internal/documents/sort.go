package documents

import (
	"bytes"
	"context"
	"slices"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/query"
)

// SortField orders a read by one field.
type SortField = query.SortField

// MaxSortedDocuments bounds the matches a sort that no index serves holds
// in memory.
const MaxSortedDocuments = 10_000

// pager applies skip and limit to a stream of matches.
type pager struct {
	skip, limit, sent int64
	emit              func(ReadItem) error
}

// take emits one match (unless skipped) and reports whether more are wanted.
func (p *pager) take(item ReadItem) (bool, error) {
	if p.skip > 0 {
		p.skip--
		return true, nil
	}
	if err := p.emit(item); err != nil {
		return false, err
	}
	p.sent++
	return p.limit == 0 || p.sent < p.limit, nil
}

// sortInMemory holds the matches among the candidates of it (at most
// MaxSortedDocuments), sorts them by the rules of query.Sort and passes them
// to pg; it returns how many matched.
func sortInMemory(ctx context.Context, it query.Iterator, coll *catalog.Collection, req ReadRequest, pg *pager) (int, error) {
	type match struct {
		item ReadItem
		key  query.SortKey
	}
	sort := query.Sort(req.Sort)
	var held []match
	err := matches(ctx, it, req.Filter, func(key, _ []byte, r Record) (bool, error) {
		if len(held) == MaxSortedDocuments {
			return false, apierror.Errorf(apierror.InvalidArgument, "sort of more than %d matching documents: narrow the filter, or sort on one field filtered only by that field so that its index serves the sort", MaxSortedDocuments)
		}
		key = bytes.Clone(key)
		sk, err := sort.Key(coll.Schema, key, r.Data)
		if err != nil {
			return false, err
		}
		item, err := readItem(key, r, req)
		if err != nil {
			return false, err
		}
		item.Data = bytes.Clone(item.Data)
		held = append(held, match{item: item, key: sk})
		return true, nil
	})
	if err != nil {
		return len(held), err
	}
	if err := ctx.Err(); err != nil {
		return len(held), err
	}
	slices.SortStableFunc(held, func(a, b match) int { return sort.Compare(a.key, b.key) })
	for _, m := range held {
		more, err := pg.take(m.item)
		if err != nil || !more {
			return len(held), err
		}
	}
	return len(held), nil
}
