package query

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// SortField orders a lookup by one field.
type SortField struct {
	Path string
	Desc bool
}

// Sort orders documents by its fields in turn. Documents without a value
// for a sort field come after those with one, in either direction; ties
// are in primary-key order, descending if the first sort field is (as an
// index walked backwards gives them), except among documents that have no
// value for the first field, which come in ascending primary-key order (as
// the scan that finds them after an index walk gives them). A sort served
// by an index and one done in memory give the same order.
type Sort []SortField

func (s Sort) String() string {
	parts := make([]string, len(s))
	for i, f := range s {
		parts[i] = f.Path
		if f.Desc {
			parts[i] += " desc"
		}
	}
	return strings.Join(parts, ", ")
}

// SortKey is where a document goes in a sort done in memory.
type SortKey struct {
	// values holds the index encoding of each sort field's value (nil
	// where the document has none): byte order is value order.
	values [][]byte
	doc    []byte // the document key
}

// Key returns the sort key of the document doc stored under docKey, which
// the sort key keeps (and so must stay unchanged while it is used).
func (s Sort) Key(sc *schema.Schema, docKey, doc []byte) (SortKey, error) {
	entries, err := index.Entries(sc, doc)
	if err != nil {
		return SortKey{}, err
	}
	values := make([][]byte, len(s))
	for i, f := range s {
		for _, e := range entries {
			if e.Path == f.Path && e.Kind == index.Exact {
				values[i] = e.Value
				break
			}
		}
	}
	return SortKey{values: values, doc: docKey}, nil
}

// Compare orders two sort keys by the sort's rules.
func (s Sort) Compare(a, b SortKey) int {
	if a.values[0] == nil && b.values[0] == nil {
		return bytes.Compare(a.doc, b.doc)
	}
	for i, f := range s {
		va, vb := a.values[i], b.values[i]
		switch {
		case va == nil && vb == nil:
			continue
		case va == nil:
			return 1
		case vb == nil:
			return -1
		}
		c := bytes.Compare(va, vb)
		if f.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c := bytes.Compare(a.doc, b.doc)
	if s[0].Desc {
		c = -c
	}
	return c
}

// runSorted plans a sorted lookup: from the sort field's index if it can
// serve the sort, else as an unsorted lookup of every match, which the
// caller sorts in memory.
func runSorted(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req Request) (Iterator, Plan, error) {
	if req.After != nil {
		return nil, Plan{}, apierror.Errorf(apierror.InvalidArgument, "offset cannot be combined with sort")
	}
	for _, f := range req.Sort {
		if field, ok := coll.Schema.Field(f.Path); !ok || !field.Type.Scalar() {
			return nil, Plan{}, apierror.Errorf(apierror.InvalidArgument, "cannot sort on field '%s': not a scalar field of the schema", f.Path)
		}
	}
	if it, plan, ok := indexOrder(ctx, tx, coll, req); ok {
		return it, plan, nil
	}
	req.Limit = 0 // the sort needs every match
	it, plan, err := run(ctx, tx, coll, req)
	plan.Order, plan.Sort = SortInMemory, req.Sort
	return it, plan, err
}

// indexOrder serves a sort on one field by walking the field's index
// (backwards if descending). It serves only filters that are empty or
// compare nothing but that field (case-sensitively), and fields whose
// entries hold whole values (not strings or bytes, which entries may cut
// short); it reports false for the others.
func indexOrder(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req Request) (Iterator, Plan, bool) {
	if len(req.Sort) != 1 {
		return nil, Plan{}, false
	}
	sf := req.Sort[0]
	field, ok := coll.Schema.Field(sf.Path)
	if !ok || !field.Type.Scalar() || field.Type == schema.String || field.Type == schema.Bytes {
		return nil, Plan{}, false
	}
	comps, ok := comparisonsOn(req.Filter, sf.Path)
	if !ok {
		return nil, Plan{}, false
	}
	p := &planner{ctx: ctx, tx: tx, coll: coll, docPrefix: keyspace.Documents(coll.ID).Begin}
	prefix := index.FieldPrefix(coll.ID, sf.Path, index.Exact)
	r, detail := kv.PrefixRange(prefix), req.Sort.String()
	if len(comps) > 0 {
		var desc string
		if r, _, desc, ok = p.indexRange(comps, index.Exact); !ok { // case-sensitive: see comparisonsOn
			return nil, Plan{}, false
		}
		detail += " where " + desc
	}
	var it Iterator = &indexOrderIterator{p: p, entries: tx.Scan(ctx, r, kv.ScanOptions{Reverse: sf.Desc}), prefixLen: len(prefix)}
	if req.Filter.Root == nil {
		// The index holds no entry for a document without a value at the
		// path. No comparison matches such a document, so only the empty
		// filter needs them: after the others, as a scan finds them.
		it = &thenIterator{cur: it, then: func() Iterator {
			scan := tx.Scan(ctx, keyspace.Documents(coll.ID), kv.ScanOptions{})
			return &withoutValue{it: scan, schema: coll.Schema, sort: Sort{{Path: sf.Path}}, doc: req.Doc}
		}}
		detail += ", then documents without " + sf.Path + " by scan"
	}
	return it, Plan{Kind: "index order", Detail: detail, Order: IndexOrder}, true
}

// comparisonsOn returns the comparisons of f if it is empty or compares
// nothing but path, case-sensitively (alone or in a top-level $and).
func comparisonsOn(f filter.Filter, path string) ([]*filter.Comparison, bool) {
	var comps []*filter.Comparison
	switch n := f.Root.(type) {
	case nil:
		return nil, true
	case *filter.Comparison:
		comps = []*filter.Comparison{n}
	case *filter.And:
		for _, c := range n.Nodes {
			c, ok := c.(*filter.Comparison)
			if !ok {
				return nil, false
			}
			comps = append(comps, c)
		}
	default:
		return nil, false
	}
	for _, c := range comps {
		if c.Path != path || c.CaseInsensitive {
			return nil, false
		}
	}
	return comps, true
}

// indexOrderIterator fetches the document of each index entry in turn.
type indexOrderIterator struct {
	p          *planner
	entries    kv.Iterator
	prefixLen  int
	key, value []byte
	err        error
}

func (o *indexOrderIterator) Next() bool {
	for o.err == nil && o.entries.Next() {
		suffix, err := index.PKSuffix(o.entries.Key(), o.prefixLen)
		if err != nil {
			o.err = err
			return false
		}
		key := append(append(make([]byte, 0, len(o.p.docPrefix)+len(suffix)), o.p.docPrefix...), suffix...)
		if v, ok := fetch(o.p.ctx, o.p.tx, key, &o.err); ok {
			o.key, o.value = key, v
			return true
		}
	}
	if o.err == nil {
		o.err = o.entries.Err()
	}
	return false
}

func (o *indexOrderIterator) Key() []byte   { return o.key }
func (o *indexOrderIterator) Value() []byte { return o.value }
func (o *indexOrderIterator) Err() error    { return o.err }
func (o *indexOrderIterator) Close() error  { return o.entries.Close() }

// thenIterator yields the candidates of cur and, once cur is done without
// error, those of the iterator then opens.
type thenIterator struct {
	cur  Iterator
	then func() Iterator
	err  error
}

func (t *thenIterator) Next() bool {
	for t.err == nil {
		if t.cur.Next() {
			return true
		}
		if t.then == nil || t.cur.Err() != nil {
			return false
		}
		if t.err = t.cur.Close(); t.err != nil {
			t.cur = emptyIterator{}
			return false
		}
		t.cur, t.then = t.then(), nil
	}
	return false
}

func (t *thenIterator) Key() []byte   { return t.cur.Key() }
func (t *thenIterator) Value() []byte { return t.cur.Value() }
func (t *thenIterator) Close() error  { return t.cur.Close() }

func (t *thenIterator) Err() error {
	if t.err != nil {
		return t.err
	}
	return t.cur.Err()
}

type emptyIterator struct{}

func (emptyIterator) Next() bool    { return false }
func (emptyIterator) Key() []byte   { return nil }
func (emptyIterator) Value() []byte { return nil }
func (emptyIterator) Err() error    { return nil }
func (emptyIterator) Close() error  { return nil }

// withoutValue yields the documents of it that have no value for the
// (one) field of sort.
type withoutValue struct {
	it     Iterator
	schema *schema.Schema
	sort   Sort
	doc    func([]byte) ([]byte, error)
	err    error
}

func (w *withoutValue) Next() bool {
	for w.err == nil && w.it.Next() {
		doc := w.it.Value()
		if w.doc != nil {
			if doc, w.err = w.doc(doc); w.err != nil {
				w.err = fmt.Errorf("%w at %x", w.err, w.it.Key())
				return false
			}
		}
		k, err := w.sort.Key(w.schema, nil, doc)
		if err != nil {
			w.err = fmt.Errorf("query: stored document at %x: %w", w.it.Key(), err)
			return false
		}
		if k.values[0] == nil {
			return true
		}
	}
	return false
}

func (w *withoutValue) Key() []byte   { return w.it.Key() }
func (w *withoutValue) Value() []byte { return w.it.Value() }
func (w *withoutValue) Close() error  { return w.it.Close() }

func (w *withoutValue) Err() error {
	if w.err != nil {
		return w.err
	}
	return w.it.Err()
}
