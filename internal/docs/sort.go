package docs

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/query"
	"github.com/foliodb/folio/internal/status"
)

// SortField orders a read by one field.
type SortField struct {
	Path string
	Desc bool
}

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

// readSorted serves a read with a sort: from the sort field's index when
// there is one sort field and the filter is empty or compares only that
// field, and by sorting the matches in memory otherwise. Documents without
// a value for a sort field come after those with one, in either direction;
// ties are in primary-key order, descending if the first sort field is (as
// an index walked backwards gives them), except among documents that have
// no value for the first field, which come in ascending primary-key order.
func (s *Service) readSorted(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest, emit func(ReadItem) error) error {
	if req.After != nil {
		return status.Errorf(status.InvalidArgument, "offset cannot be combined with sort")
	}
	for _, f := range req.Sort {
		if field, ok := coll.Schema.Field(f.Path); !ok || !field.Type.Scalar() {
			return status.Errorf(status.InvalidArgument, "cannot sort on field '%s': not a scalar field of the schema", f.Path)
		}
	}
	pg := &pager{skip: req.Skip, limit: req.Limit, emit: emit}
	item := func(key []byte, r Record) (ReadItem, error) {
		data, err := jsondoc.Project(r.Data, req.Include, req.Exclude)
		return ReadItem{Data: data, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ResumeToken: key}, err
	}
	if len(req.Sort) == 1 {
		if it, plan, ok := query.Ordered(ctx, tx, coll, req.Filter, req.Sort[0].Path, req.Sort[0].Desc); ok {
			s.logPlan(coll, plan)
			more, err := s.emitOrdered(it, req, pg, item)
			if err != nil || !more {
				return err
			}
			// Then the documents the index does not hold.
			return s.eachMatch(ctx, tx, coll, req.Filter, nil, 0, func(key, _ []byte, r Record) (bool, error) {
				keys, err := sortKeys(coll, r.Data, req.Sort)
				if err != nil || keys[0] != nil {
					return err == nil, err
				}
				it, err := item(key, r)
				if err != nil {
					return false, err
				}
				return pg.take(it)
			})
		}
	}
	type match struct {
		item ReadItem
		keys [][]byte
	}
	var matches []match
	err := s.eachMatch(ctx, tx, coll, req.Filter, nil, 0, func(key, _ []byte, r Record) (bool, error) {
		if len(matches) == MaxSortedDocuments {
			return false, status.Errorf(status.InvalidArgument, "sort of more than %d matching documents: narrow the filter, or sort on one field filtered only by that field so that its index serves the sort", MaxSortedDocuments)
		}
		keys, err := sortKeys(coll, r.Data, req.Sort)
		if err != nil {
			return false, err
		}
		it, err := item(bytes.Clone(key), r)
		if err != nil {
			return false, err
		}
		it.Data = bytes.Clone(it.Data)
		matches = append(matches, match{item: it, keys: keys})
		return true, nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(matches, func(a, b match) int {
		if a.keys[0] == nil && b.keys[0] == nil {
			return bytes.Compare(a.item.ResumeToken, b.item.ResumeToken)
		}
		for i, f := range req.Sort {
			ka, kb := a.keys[i], b.keys[i]
			switch {
			case ka == nil && kb == nil:
				continue
			case ka == nil:
				return 1
			case kb == nil:
				return -1
			}
			c := bytes.Compare(ka, kb)
			if f.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		c := bytes.Compare(a.item.ResumeToken, b.item.ResumeToken)
		if req.Sort[0].Desc {
			c = -c
		}
		return c
	})
	for _, m := range matches {
		more, err := pg.take(m.item)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

func (s *Service) emitOrdered(it query.Iterator, req ReadRequest, pg *pager, item func([]byte, Record) (ReadItem, error)) (bool, error) {
	defer it.Close()
	for it.Next() {
		r, err := decodeRecord(it.Value())
		if err != nil {
			return false, fmt.Errorf("%w at %x", err, it.Key())
		}
		ok, err := req.Filter.Matches(r.Data)
		if err != nil || !ok {
			if err != nil {
				return false, err
			}
			continue
		}
		i, err := item(it.Key(), r)
		if err != nil {
			return false, err
		}
		more, err := pg.take(i)
		if err != nil || !more {
			return false, err
		}
	}
	return true, it.Err()
}

// sortKeys returns the index encoding of each sort field's value in doc
// (nil where it has none): byte order is value order.
func sortKeys(coll *catalog.Collection, doc []byte, sort []SortField) ([][]byte, error) {
	entries, err := index.Entries(coll.Schema, doc)
	if err != nil {
		return nil, err
	}
	keys := make([][]byte, len(sort))
	for i, f := range sort {
		for _, e := range entries {
			if e.Path == f.Path && e.Kind == index.Exact {
				keys[i] = e.Value
				break
			}
		}
	}
	return keys, nil
}
