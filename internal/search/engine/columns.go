package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/search/fields"
)

// Number ranges are answered from ordered columns of Folio's own, not
// from Bleve's numeric range. Bleve has no ordered structure for numbers:
// its range is the union of the prefix-coded terms that cover it, and
// building that (a dictionary lookup per candidate term in every segment,
// a term searcher for each that exists, the union of their postings) cost
// most of a filter's time whatever the range held. A column is one
// segment's values of one number field in order, each beside the number
// of the document that holds it: a range is two binary searches and the
// documents between them. Segments never change, so a column is built
// once, from the field's `$num.` dictionary (already in value order), and
// kept while searches use it.

// DefaultColumnBytes bounds the memory of an indexer's columns
// (number ranges at 12 bytes a value, so about five million values; key
// order and facets too). A search that would need more answers its
// ranges and facets with Bleve's own, slower.
const DefaultColumnBytes = 64 << 20

// columnIdle is how long a column nobody used is kept: a merged-away
// segment's or a dropped index's columns go after it.
const columnIdle = time.Minute

// Columns keeps the columns of an indexer's indexes within a byte
// budget, least recently used first out. A column is keyed by its index
// (a number given to each index opened, as a rebuilt index numbers its
// segments afresh) and its segment's id, not by the segment itself, which
// would keep a merged-away segment's memory alive until its column went.
type Columns struct {
	limit   int64
	indexes atomic.Uint64 // the last number given to an index

	mu        sync.Mutex
	cols      map[columnKey]*numberColumn
	bytes     int64 // of the built columns in cols
	lastPrune time.Time
}

type columnKey struct {
	index, seg uint64
	field      string
	kind       columnKind
}

// columnKind tells what a column holds.
type columnKind uint8

const (
	valueOrder columnKind = iota // a number field's values in order (numberColumn.keys, docs)
	idOrder                      // the documents in id order (numberColumn.docs, rank)
	docTerms                     // each document's terms of a field (numberColumn.terms; facets.go)
	docIDs                       // each document's id (numberColumn.ids; sorts.go)
)

// columnBusy is how recently a column must have been used to be kept
// when a new one needs its room: a search whose columns do not all fit
// answers its ranges from the terms rather than evicting the columns of
// its own segments in turn.
const columnBusy = 10 * time.Second

// NewIndex is the number of an index just opened (0 without columns).
func (nc *Columns) NewIndex() uint64 {
	if nc == nil {
		return 0
	}
	return nc.indexes.Add(1)
}

// numberColumn is one segment's values of one field, in order; for the
// documents' ids (idField), their order (keyorder.go); for facets, each
// document's terms (facets.go).
type numberColumn struct {
	once  sync.Once
	keys  []uint64 // sortable keys (numberKey), ascending; none for ids
	docs  []uint32 // docs[i] holds keys[i] (for ids: the i-th id); a document with several values is there for each
	rank  []uint32 // for ids: rank[doc] is the place of doc's id in docs
	terms *termColumn
	ids   *idColumn
	err   error
	// built is set, under Columns.mu, once keys and docs are.
	built bool
	used  atomic.Int64 // unix nanoseconds of the last search that used it
}

func (c *numberColumn) size() int64 {
	return int64(len(c.keys))*8 + int64(len(c.docs)+len(c.rank))*4 + c.terms.size() + c.ids.size()
}

func NewColumns(limit int64) *Columns {
	return &Columns{limit: limit, cols: map[columnKey]*numberColumn{}}
}

// errColumnBudget: a column would not fit within the budget.
var errColumnBudget = errors.New("search: number columns over their memory budget")

// column returns the column of field in the segment ss of index, building
// it on first use. A column that does not fit (errColumnBudget) is
// remembered as such until it is idle, so that searches do not build it
// again and again.
func (nc *Columns) column(index uint64, ss *segmentSnapshot, field string) (*numberColumn, error) {
	kind := valueOrder
	if field == idField {
		kind = idOrder
	}
	return nc.get(columnKey{index, ss.Id(), field, kind}, ss)
}

// termsColumn returns each document's terms of field in the segment ss of
// index, as column does.
func (nc *Columns) termsColumn(index uint64, ss *segmentSnapshot, field string) (*termColumn, error) {
	c, err := nc.get(columnKey{index, ss.Id(), field, docTerms}, ss)
	if err != nil {
		return nil, err
	}
	return c.terms, nil
}

// idsColumn returns each document's id in the segment ss of index, as
// column does.
func (nc *Columns) idsColumn(index uint64, ss *segmentSnapshot) (*idColumn, error) {
	c, err := nc.get(columnKey{index, ss.Id(), idField, docIDs}, ss)
	if err != nil {
		return nil, err
	}
	return c.ids, nil
}

func (nc *Columns) get(k columnKey, ss *segmentSnapshot) (*numberColumn, error) {
	now := time.Now()
	nc.mu.Lock()
	c := nc.cols[k]
	if c == nil {
		c = &numberColumn{}
		nc.cols[k] = c
	}
	if c.err == nil { // a column that did not fit is tried again once idle
		c.used.Store(now.UnixNano())
	}
	if now.Sub(nc.lastPrune) > time.Second {
		nc.lastPrune = now
		nc.evict(now.Add(-columnIdle).UnixNano(), 0, 0)
	}
	nc.mu.Unlock()
	c.once.Do(func() {
		built := &numberColumn{}
		var err error
		switch k.kind {
		case idOrder:
			built.docs, built.rank, err = buildKeyOrder(ss.Segment())
		case docTerms:
			built.terms, err = buildTermColumn(ss.Segment(), k.field)
		case docIDs:
			built.ids, err = buildIDColumn(ss.Segment())
		default:
			built.keys, built.docs, err = buildColumn(ss.Segment(), k.field)
		}
		size := built.size()
		nc.mu.Lock()
		defer nc.mu.Unlock()
		if err == nil && nc.bytes+size > nc.limit {
			nc.evict(0, now.Add(-columnBusy).UnixNano(), size)
			if nc.bytes+size > nc.limit {
				err = errColumnBudget
			}
		}
		c.built = true // evict may now drop it
		if err != nil {
			c.err = err
			if err != errColumnBudget && nc.cols[k] == c { // later searches try again
				delete(nc.cols, k)
			}
			return
		}
		c.keys, c.docs, c.rank, c.terms, c.ids = built.keys, built.docs, built.rank, built.terms, built.ids
		if nc.cols[k] == c {
			nc.bytes += size
		}
	})
	return c, c.err
}

// evict removes the columns last used before the time idle, then, least
// recently used first, those last used before busy until room bytes more
// would fit; none of those if they would not make room enough (a column
// that cannot fit does not take others with it). Under nc.mu.
func (nc *Columns) evict(idle, busy, room int64) {
	type aged struct {
		k    columnKey
		used int64
	}
	var built []aged
	var evictable int64
	for k, c := range nc.cols {
		if !c.built {
			continue
		}
		if u := c.used.Load(); u < idle {
			nc.drop(k, c)
		} else if u < busy {
			built = append(built, aged{k, u})
			evictable += c.size()
		}
	}
	if room == 0 || nc.bytes+room <= nc.limit || nc.bytes-evictable+room > nc.limit {
		return
	}
	slices.SortFunc(built, func(a, b aged) int { return int(min(max(a.used-b.used, -1), 1)) })
	for _, a := range built {
		if nc.bytes+room <= nc.limit {
			return
		}
		nc.drop(a.k, nc.cols[a.k])
	}
}

// Prune drops the idle columns; the indexer's Stats calls it, so that an
// indexer nobody searches lets its columns go.
func (nc *Columns) Prune() {
	if nc == nil {
		return
	}
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.evict(time.Now().Add(-columnIdle).UnixNano(), 0, 0)
}

func (nc *Columns) drop(k columnKey, c *numberColumn) {
	delete(nc.cols, k)
	nc.bytes -= c.size()
}

// Bytes is the memory the columns hold.
func (nc *Columns) Bytes() int64 {
	if nc == nil {
		return 0
	}
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.bytes
}

// buildColumn reads field's terms in order, and each term's documents.
func buildColumn(seg segmentData, field string) ([]uint64, []uint32, error) {
	var keys []uint64
	var docs []uint32
	err := visitTerms(seg, field, func(term string) func(doc uint64) {
		key, ok := fields.KeyOfTerm(term)
		if !ok {
			return nil
		}
		return func(doc uint64) {
			keys = append(keys, key)
			docs = append(docs, uint32(doc))
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return slices.Clip(keys), slices.Clip(docs), nil
}

type columnsKey struct{}

// indexColumns are the columns of one index.
type indexColumns struct {
	nc    *Columns
	index uint64
}

// withColumns gives the searches under ctx the columns of their index to
// read ranges from.
func withColumns(ctx context.Context, cols indexColumns) context.Context {
	return context.WithValue(ctx, columnsKey{}, cols)
}

// columnsOf are the columns withColumns gave ctx, if any.
func columnsOf(ctx context.Context) (indexColumns, bool) {
	cols, ok := ctx.Value(columnsKey{}).(indexColumns)
	return cols, ok && cols.nc != nil
}

func (k columnKind) String() string {
	switch k {
	case valueOrder:
		return "values"
	case idOrder:
		return "key order"
	case docTerms:
		return "terms"
	case docIDs:
		return "ids"
	}
	return "unknown"
}

// BuiltColumn names a built column: its kind ("values", "key order",
// "terms" or "ids") and its field.
type BuiltColumn struct {
	Kind, Field string
}

// Built lists the columns built and kept, for tests and diagnostics.
func (nc *Columns) Built() []BuiltColumn {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	var out []BuiltColumn
	for k, c := range nc.cols {
		if c.built && c.err == nil {
			out = append(out, BuiltColumn{Kind: k.kind.String(), Field: k.field})
		}
	}
	return out
}
