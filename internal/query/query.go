// Package query plans and runs the document lookups of reads, updates and
// deletes: it turns a filter into key ranges of the primary key or of the
// every-field indexes, picks the cheapest, and yields candidate documents in
// primary-key order, or in a sort's order. Callers still check every
// candidate against the filter, so a plan only has to return a superset of
// the matches.
//
// Plans, from best to worst:
//   - the whole primary key pinned by equality: one document;
//   - with a limit, a filter that is one equality: its index entries hold
//     one value, so they come in primary-key order; they are read as the
//     caller takes documents, and a lookup stops at its limit whatever
//     the number of matches;
//   - index ranges: the entries of one comparison (or of the tightest
//     range on one field), intersected as "the most selective child of an
//     $and", unioned across an $or. Their documents are collected, sorted
//     by primary key and fetched one by one;
//   - a primary-key range, from comparisons on the first key field;
//   - a scan of the whole collection.
//
// The planner estimates an index range's size by reading it, up to a cap:
// what it reads it keeps, so a selective range costs one pass. The cap
// comes from the collection's document count (kept with atomic adds) and
// the caller's limit: an index plan that would fetch more documents than a
// scan would read to find the limit loses to the scan. With a limit the
// two race, a step of each at a time: a range most documents match is
// answered by the scan's first documents without the index first reading
// its budget.
//
// A sorted lookup is served by the sort field's index when there is one sort
// field whose entries hold whole values and the filter is empty or compares
// only that field: the index yields the documents in the sort's order.
// Otherwise the lookup is planned as an unsorted one and the caller sorts
// the matches in memory, by Sort.Key and Sort.Compare (sort.go holds both
// ways and the rules they share).
package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Request is what a lookup needs to know.
type Request struct {
	Filter filter.Filter
	// After resumes after this document key (a read's resume token).
	After []byte
	// Limit, when positive, is how many matches the caller will take at
	// most: a hint for choosing the plan.
	Limit int64
	// Sort, if set, asks for the candidates in the order of these fields;
	// it cannot be combined with After.
	Sort Sort
	// Doc returns the JSON document held in a stored value (a candidate's
	// Value); nil means that the value is the document itself. A lookup
	// whose sort an index serves reads documents with it.
	Doc func(value []byte) ([]byte, error)
	// Times returns the document's times held in a stored value, which a
	// filter on _tigris_created_at or _tigris_updated_at compares; nil
	// means that the value holds none.
	Times func(value []byte) filter.Times
	// Counts, if set, supplies the collection's document count (which only
	// steers the plan) from a cache, sparing a read per lookup.
	Counts *Counts
	// Now is the lookup's time, at which documents past their ttl are
	// left out (expiry.go); zero: the clock's.
	Now time.Time
}

// Counts caches collections' document counts for a while: a count only
// steers plans, and reading it for every lookup was a fifth of the work of
// a selective read. The zero value is ready to use.
type Counts struct {
	m sync.Map // collection id → cachedCount
}

type cachedCount struct {
	n    int64
	read time.Time
}

// countTTL is how stale a cached count may be.
const countTTL = time.Second

// Iterator walks candidate documents: Key is the document key, Value its
// record.
type Iterator = kv.Iterator

// Plan describes the chosen plan, for explain output and debug logs.
type Plan struct {
	// Kind is "point", "index", "primary key range", "scan" or, for a sort
	// an index serves, "index order".
	Kind string
	// Detail names the ranges used.
	Detail string
	// Candidates is the number of documents an index plan will fetch.
	Candidates int
	// Order tells in which order the candidates come.
	Order Order
	// Sort is the sort the caller must do in memory (Order SortInMemory).
	Sort Sort
}

// Order is how a plan orders its candidates.
type Order int

const (
	// KeyOrder: primary-key order, as an unsorted lookup asks.
	KeyOrder Order = iota
	// IndexOrder: the sort's order, read from the sort field's index.
	IndexOrder
	// SortInMemory: primary-key order; the caller must sort the matches
	// by Plan.Sort's SortKey and Compare.
	SortInMemory
)

func (p Plan) String() string {
	s := p.Kind
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	if p.Order == SortInMemory {
		s += "; sort in memory by " + p.Sort.String()
	}
	return s
}

// minCap keeps small collections from being scanned for every equality:
// reading a few index keys is cheaper than a scan of a few documents.
const minCap = 16

// Run plans the lookup and returns its iterator: the candidates in
// primary-key order, or in req.Sort's order if the plan's Order is
// IndexOrder. It refuses (INVALID_ARGUMENT) a sort on what is not a scalar
// field of the schema, and a sort with After.
//
// It never yields a document that has expired at req.Now (Live).
func Run(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req Request) (Iterator, Plan, error) {
	var it Iterator
	var plan Plan
	var err error
	if len(req.Sort) > 0 {
		it, plan, err = runSorted(ctx, tx, coll, req)
	} else {
		it, plan, err = run(ctx, tx, coll, req)
	}
	if err != nil {
		return it, plan, err
	}
	return Live(it, coll, req.Doc, req.now()), plan, nil
}

// run plans an unsorted lookup.
func run(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req Request) (Iterator, Plan, error) {
	docs := keyspace.Documents(coll.ID)
	if pk := pinnedKey(coll.Schema, req.Filter); pk != nil {
		key, err := keyspace.Document(coll.ID, pk)
		if err == nil {
			// A Get, not a one-key scan: a scan steps past every older
			// version of a hot key still in the memtable, a Get does not.
			var keys [][]byte
			if req.After == nil || bytes.Compare(key, req.After) > 0 {
				keys = [][]byte{key}
			}
			return newFetchIterator(ctx, tx, keys, 1), Plan{Kind: "point"}, nil
		}
	}
	p := &planner{ctx: ctx, tx: tx, coll: coll, docPrefix: docs.Begin}
	if req.Limit > 0 {
		if it, plan, ok := p.streamEquality(req); ok {
			return it, plan, nil
		}
	}
	limit := req.Limit
	n, err := p.documentCount(req.Counts)
	if err != nil {
		return nil, Plan{}, err
	}
	budget := max(n/8, minCap)
	if limit > 0 {
		budget = min(budget, max(int64(math.Sqrt(float64(limit)*float64(n))), minCap))
	}
	if req.Filter.Root == nil {
		return tx.Scan(ctx, after(docs, req.After), kv.ScanOptions{}), Plan{Kind: "scan"}, nil
	}
	// The plan of last resort: the primary key's range if the filter
	// bounds its first field, or else the whole collection.
	scan, scanPlan := docs, Plan{Kind: "scan"}
	if r, desc, ok := p.keyRange(req.Filter.Root); ok {
		scan, scanPlan = r, Plan{Kind: "primary key range", Detail: desc}
		if p.onlyKey(req.Filter.Root) {
			return tx.Scan(ctx, after(scan, req.After), kv.ScanOptions{}), scanPlan, nil
		}
	}
	scan = after(scan, req.After)
	index := func(c candidates) (Iterator, Plan, error) {
		keys := sortedUnique(c.keys, req.After)
		return newFetchIterator(ctx, tx, keys, req.Limit), Plan{Kind: "index", Detail: c.desc, Candidates: len(keys)}, nil
	}
	if limit > 0 && budget >= 4*minCap {
		// Race the index against the scan, a step of each at a time, so
		// that a wide range whose matches a scan finds at once does not
		// first read its budget of entries: a selective index range in
		// an eighth of the budget, then the scan's first documents (a
		// quarter of the budget, about what the budget's entries cost),
		// then the index up to its budget, then the rest of the scan. In a
		// transaction the probe's documents stay among its reads even when
		// the index wins: more conflicts than needed, never fewer.
		if c, ok := p.plan(req.Filter.Root, int(budget/8)); ok {
			return index(c)
		}
		probe := p.probeScan(scan, req, int(budget/4))
		if probe.matched >= limit {
			held := fmt.Sprintf("its first %d documents held the limit", probe.scanned)
			if scanPlan.Detail != "" {
				held = scanPlan.Detail + "; " + held
			}
			scanPlan.Detail = held
			return probe, scanPlan, nil
		}
		if c, ok := p.plan(req.Filter.Root, int(budget)); ok {
			probe.Close()
			return index(c)
		}
		return probe, scanPlan, nil
	}
	if c, ok := p.plan(req.Filter.Root, int(budget)); ok {
		return index(c)
	}
	return tx.Scan(ctx, scan, kv.ScanOptions{}), scanPlan, nil
}

// probedScan is a scan whose first documents the planner has read and
// checked: it yields the matches among them (copies), then the rest of
// the scan.
type probedScan struct {
	Iterator         // the scan, past the documents probed
	scanned, matched int64
	keys, values     [][]byte
	pos              int  // of keys, while it is less than len(keys)
	exhausted        bool // the probe read the scan to its end (or its error)
}

// probeScan reads up to n documents of the scan range r and keeps those
// that match req's filter. A document it cannot decode or check is kept
// as well, and ends the probe: the caller's own check reports it.
func (p *planner) probeScan(r kv.Range, req Request, n int) *probedScan {
	ps := &probedScan{Iterator: p.tx.Scan(p.ctx, r, kv.ScanOptions{}), pos: -1}
	var slab keySlab // the kept keys and values, copied into a few allocations
	for ps.scanned < int64(n) {
		if !ps.Iterator.Next() {
			ps.exhausted = true
			break
		}
		ps.scanned++
		doc := ps.Iterator.Value()
		var err error
		if req.Doc != nil {
			doc, err = req.Doc(doc)
		}
		ok := true
		if err == nil {
			var ts filter.Times
			if req.Times != nil {
				ts = req.Times(ps.Iterator.Value())
			}
			ok, err = req.Filter.MatchesAt(doc, ts)
		}
		if ok || err != nil {
			ps.keys = append(ps.keys, slab.key(nil, ps.Iterator.Key()))
			ps.values = append(ps.values, slab.key(nil, ps.Iterator.Value()))
		}
		if err != nil {
			break
		}
		if ok {
			ps.matched++
		}
	}
	return ps
}

func (ps *probedScan) Next() bool {
	if ps.pos < len(ps.keys) {
		ps.pos++
		if ps.pos < len(ps.keys) {
			return true
		}
	}
	return !ps.exhausted && ps.Iterator.Next()
}

func (ps *probedScan) Key() []byte {
	if ps.pos < len(ps.keys) {
		return ps.keys[ps.pos]
	}
	return ps.Iterator.Key()
}

func (ps *probedScan) Value() []byte {
	if ps.pos < len(ps.keys) {
		return ps.values[ps.pos]
	}
	return ps.Iterator.Value()
}

// after narrows r to the keys after the document key a (if any).
func after(r kv.Range, a []byte) kv.Range {
	if a == nil || kv.CompareKeys(a, r.Begin) < 0 {
		return r
	}
	r.Begin = kv.KeyAfter(a)
	if kv.CompareKeys(r.Begin, r.End) > 0 {
		r.End = r.Begin
	}
	return r
}

type planner struct {
	ctx       context.Context
	tx        kv.Tx
	coll      *catalog.Collection
	docPrefix []byte
}

// documentCount reads the collection's document count without a conflict:
// it only steers the plan.
func (p *planner) documentCount(cache *Counts) (int64, error) {
	if cache != nil {
		if c, ok := cache.m.Load(p.coll.ID); ok && time.Since(c.(cachedCount).read) < countTTL {
			return c.(cachedCount).n, nil
		}
	}
	v, err := p.tx.Snapshot().Get(p.ctx, keyspace.Count(p.coll.ID))
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return 0, err
	}
	n := kv.DecodeCounter(v)
	if cache != nil {
		cache.m.Store(p.coll.ID, cachedCount{n: n, read: time.Now()})
	}
	return n, nil
}

// streamEquality plans a filter that is one case-sensitive equality on an
// indexed field other than the key's first (alone, or as the one condition
// on an array's elements): its entries all hold the same value (a cut one
// for a long string, whose entries the filter check then tells apart) and
// come in primary-key order, so the documents can be fetched as the entries
// are read. Without a limit the collected plans stay: they weigh a scan
// against the index, which matters when most documents match.
func (p *planner) streamEquality(req Request) (Iterator, Plan, bool) {
	var c *filter.Comparison
	desc := ""
	switch n := req.Filter.Root.(type) {
	case *filter.Comparison:
		c = n
	case *filter.Elements:
		if len(n.Comparisons) == 1 {
			c, desc = n.Comparisons[0], "some element of "
		}
	}
	if c == nil || c.Op != filter.Eq || c.CaseInsensitive || p.onKey(c) {
		return nil, Plan{}, false
	}
	r, _, d, ok := p.indexRange([]*filter.Comparison{c}, index.Exact)
	if !ok {
		return nil, Plan{}, false
	}
	prefixLen := len(r.Begin) // the entries' common prefix: field prefix and value
	if req.After != nil && bytes.HasPrefix(req.After, p.docPrefix) {
		from := kv.KeyAfter(append(bytes.Clone(r.Begin), req.After[len(p.docPrefix):]...))
		r = intersect(r, kv.Range{Begin: from, End: r.End})
	}
	it := &entryFetchIterator{ctx: p.ctx, tx: p.tx, docPrefix: p.docPrefix, skip: prefixLen,
		entries: p.tx.Scan(p.ctx, r, kv.ScanOptions{}), batch: int(min(req.Limit, maxFetchBatch))}
	return it, Plan{Kind: "index in key order", Detail: desc + d}, true
}

// entryFetchIterator reads index entries of one value, which come in
// primary-key order, a batch at a time (first as many as the caller will
// take, then twice as many each time), and the documents of each batch.
type entryFetchIterator struct {
	ctx       context.Context
	tx        kv.Tx
	entries   Iterator
	docPrefix []byte
	skip      int // bytes of an entry's key before its primary key suffix
	batch     int
	fetch     *fetchIterator
	done      bool
	err       error
}

func (e *entryFetchIterator) Next() bool {
	for e.err == nil {
		if e.fetch != nil {
			if e.fetch.Next() {
				return true
			}
			if e.err = e.fetch.Err(); e.err != nil {
				return false
			}
		}
		if e.done {
			return false
		}
		keys := make([][]byte, 0, e.batch)
		var slab keySlab
		for len(keys) < e.batch && e.entries.Next() {
			keys = append(keys, slab.key(e.docPrefix, e.entries.Key()[e.skip:]))
		}
		if e.err = e.entries.Err(); e.err != nil {
			return false
		}
		e.done = len(keys) < e.batch
		e.fetch = newFetchIterator(e.ctx, e.tx, keys, int64(len(keys)))
		e.batch = min(2*e.batch, maxFetchBatch)
	}
	return false
}

func (e *entryFetchIterator) Key() []byte   { return e.fetch.Key() }
func (e *entryFetchIterator) Value() []byte { return e.fetch.Value() }
func (e *entryFetchIterator) Err() error    { return e.err }
func (e *entryFetchIterator) Close() error  { return e.entries.Close() }

// candidates are the document keys an index plan collected.
type candidates struct {
	keys [][]byte
	desc string
}

// plan tries to answer node from indexes reading at most budget entries.
func (p *planner) plan(node filter.Node, budget int) (candidates, bool) {
	switch n := node.(type) {
	case *filter.Comparison:
		if p.onKey(n) {
			// Inside an $or: the document keys of the key range.
			r, desc, _ := p.keyRange(n)
			return p.collect(r, -1, "key "+desc, budget)
		}
		rs, desc, ok := p.indexRanges([]*filter.Comparison{n})
		if !ok {
			return candidates{}, false
		}
		return p.collectAll(rs, desc, budget)
	case *filter.Elements:
		// Each element has its entry under the array's path, so the
		// comparisons one element must satisfy are one range; a document
		// with several elements in it comes more than once, and the
		// candidates are deduplicated before they are read.
		rs, desc, ok := p.indexRanges(n.Comparisons)
		if !ok {
			return candidates{}, false
		}
		return p.collectAll(rs, "some element of "+desc, budget)
	case *filter.ArrayEquals:
		// An array equal to [x, y] contains x and contains y: its
		// documents are among those of either's entries, the fewer the
		// better. [] has no entry to look up.
		if len(n.Elements) == 0 {
			return candidates{}, false
		}
		contains := &filter.And{}
		for _, c := range n.Elements {
			contains.Nodes = append(contains.Nodes, &filter.Elements{Path: n.Path, Comparisons: []*filter.Comparison{c}})
		}
		c, ok := p.planAnd(contains, budget)
		c.desc += " (for the whole array)"
		return c, ok
	case *filter.And:
		return p.planAnd(n, budget)
	case *filter.Or:
		var all candidates
		var descs []string
		for _, child := range n.Nodes {
			c, ok := p.plan(child, budget-len(all.keys))
			if !ok {
				return candidates{}, false
			}
			all.keys = append(all.keys, c.keys...)
			descs = append(descs, c.desc)
		}
		all.desc = "(" + strings.Join(descs, " ∪ ") + ")"
		return all, true
	}
	return candidates{}, false
}

// planAnd answers an $and from its most selective child: the comparisons
// on one field become one range, the tightest; each later child is read
// only up to the size of the best so far.
func (p *planner) planAnd(n *filter.And, budget int) (candidates, bool) {
	var best candidates
	found := false
	try := func(c candidates, ok bool) {
		if ok && (!found || len(c.keys) < len(best.keys)) {
			best, found = c, true
			budget = len(c.keys)
		}
	}
	groups, rest := groupByField(n.Nodes)
	// Equalities first: they are the likeliest to be selective, and a
	// small first answer keeps the later reads short.
	slices.SortStableFunc(groups, func(a, b []*filter.Comparison) int {
		return boolRank(!hasEq(a)) - boolRank(!hasEq(b))
	})
	for _, g := range groups {
		if p.onKey(g[0]) {
			continue
		}
		if rs, desc, ok := p.indexRanges(g); ok {
			try(p.collectAll(rs, desc, budget))
		}
	}
	for _, child := range rest {
		try(p.plan(child, budget))
	}
	return best, found
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasEq(g []*filter.Comparison) bool {
	for _, c := range g {
		if c.Op == filter.Eq {
			return true
		}
	}
	return false
}

// onKey tells whether c compares the first primary key field, which the
// documents themselves are ordered by: a range of document keys serves it
// better than the field's index entries (no second read per document).
func (p *planner) onKey(c *filter.Comparison) bool {
	pk := p.coll.Schema.PrimaryKey()
	return len(pk) > 0 && c.Path == pk[0].Name && !c.CaseInsensitive
}

// onlyKey tells whether the filter compares nothing but the first primary
// key field: then the key range is the whole plan.
func (p *planner) onlyKey(root filter.Node) bool {
	switch n := root.(type) {
	case *filter.Comparison:
		return p.onKey(n)
	case *filter.And:
		for _, c := range n.Nodes {
			if c, ok := c.(*filter.Comparison); !ok || !p.onKey(c) {
				return false
			}
		}
		return true
	}
	return false
}

// groupByField gathers the comparisons of an $and by field and collation;
// other children (nested $and/$or) come back apart.
func groupByField(nodes []filter.Node) (groups [][]*filter.Comparison, rest []filter.Node) {
	at := map[string]int{}
	for _, node := range nodes {
		c, ok := node.(*filter.Comparison)
		if !ok {
			rest = append(rest, node)
			continue
		}
		k := fmt.Sprint(c.Path, c.CaseInsensitive)
		if i, ok := at[k]; ok {
			groups[i] = append(groups[i], c)
			continue
		}
		at[k] = len(groups)
		groups = append(groups, []*filter.Comparison{c})
	}
	return groups, rest
}

// fieldRange is a range of one field's index entries, whose keys start
// with prefixLen bytes of field prefix.
type fieldRange struct {
	r         kv.Range
	prefixLen int
}

// indexRanges turns comparisons on one field (all holding at once) into
// the ranges of index entries that can match them: one range of Exact
// entries, or for a case-insensitive comparison the same range of Folded
// entries and of Exact ones, since a string that folds to itself has only
// its Exact entry.
func (p *planner) indexRanges(cs []*filter.Comparison) ([]fieldRange, string, bool) {
	if !cs[0].CaseInsensitive {
		r, prefixLen, desc, ok := p.indexRange(cs, index.Exact)
		return []fieldRange{{r, prefixLen}}, desc, ok
	}
	folded, prefixLen, desc, ok := p.indexRange(cs, index.Folded)
	if !ok {
		return nil, "", false
	}
	exact, exactLen, _, ok := p.indexRange(cs, index.Exact)
	return []fieldRange{{folded, prefixLen}, {exact, exactLen}}, desc + ", (ci)", ok
}

// indexRange is the range of entries of one kind that can match
// comparisons on one field; for the Folded kind, and a case-insensitive
// lookup of Exact entries, the values are folded.
func (p *planner) indexRange(cs []*filter.Comparison, kind index.Kind) (kv.Range, int, string, bool) {
	prefix := index.FieldPrefix(p.coll.ID, cs[0].Path, kind)
	r := kv.PrefixRange(prefix)
	var desc []string
	for _, c := range cs {
		v := c.Value
		if c.CaseInsensitive {
			s, ok := v.(string)
			if !ok {
				return kv.Range{}, 0, "", false
			}
			v = index.Fold(s)
		}
		op := c.Op
		v, cut := index.Truncate(v)
		if cut { // entries hold cut values: widen the strict comparisons
			switch op {
			case filter.Gt:
				op = filter.Gte
			case filter.Lt:
				op = filter.Lte
			}
		}
		enc, err := index.EncodeValue(v)
		if err != nil {
			return kv.Range{}, 0, "", false
		}
		r = intersect(r, opRange(prefix, enc, op))
		desc = append(desc, fmt.Sprintf("%s %s %v", c.Path, opName(c.Op), c.Value))
	}
	return r, len(prefix), strings.Join(desc, ", "), true
}

// opRange is the range of entries under prefix whose value compares to
// enc by op.
func opRange(prefix, enc []byte, op filter.Op) kv.Range {
	at := append(append([]byte(nil), prefix...), enc...)
	end := kv.PrefixEnd(prefix)
	switch op {
	case filter.Eq:
		return kv.PrefixRange(at)
	case filter.Gt:
		return kv.Range{Begin: kv.PrefixEnd(at), End: end}
	case filter.Gte:
		return kv.Range{Begin: at, End: end}
	case filter.Lt:
		return kv.Range{Begin: prefix, End: at}
	case filter.Lte:
		return kv.Range{Begin: prefix, End: kv.PrefixEnd(at)}
	}
	return kv.PrefixRange(prefix)
}

func intersect(a, b kv.Range) kv.Range {
	if bytes.Compare(b.Begin, a.Begin) > 0 {
		a.Begin = b.Begin
	}
	if bytes.Compare(b.End, a.End) < 0 {
		a.End = b.End
	}
	if bytes.Compare(a.Begin, a.End) > 0 {
		a.End = a.Begin
	}
	return a
}

func opName(op filter.Op) string {
	return [...]string{filter.Eq: "=", filter.Gt: ">", filter.Gte: ">=", filter.Lt: "<", filter.Lte: "<="}[op]
}

// collectAll collects the document keys of every range, giving up past
// budget entries in all.
func (p *planner) collectAll(rs []fieldRange, desc string, budget int) (candidates, bool) {
	var all candidates
	for _, fr := range rs {
		c, ok := p.collect(fr.r, fr.prefixLen, desc, budget-len(all.keys))
		if !ok {
			return candidates{}, false
		}
		all.keys = append(all.keys, c.keys...)
	}
	all.desc = desc
	return all, true
}

// collect reads the document keys of the index range r (whose entries
// start with prefixLen bytes of field prefix; -1 for a range of documents),
// giving up (false) past budget entries.
func (p *planner) collect(r kv.Range, prefixLen int, desc string, budget int) (candidates, bool) {
	if budget < 0 {
		return candidates{}, false
	}
	it := p.tx.Scan(p.ctx, r, kv.ScanOptions{Limit: budget + 1})
	defer it.Close()
	var keys [][]byte
	var slab keySlab
	for it.Next() {
		if len(keys) == budget {
			return candidates{}, false
		}
		if prefixLen < 0 { // a range of document keys
			keys = append(keys, slab.key(nil, it.Key()))
			continue
		}
		suffix, err := index.PKSuffix(it.Key(), prefixLen)
		if err != nil {
			return candidates{}, false
		}
		keys = append(keys, slab.key(p.docPrefix, suffix))
	}
	if it.Err() != nil {
		// The iterator's error comes back when the caller runs the plan
		// it falls back to; planning does not fail the request.
		return candidates{}, false
	}
	return candidates{keys: keys, desc: desc}, true
}

// keySlab hands out document keys (a prefix and a suffix, copied) cut from
// a few large allocations rather than one each: a range read up to its
// budget and then given up was mostly malloc.
type keySlab []byte

func (s *keySlab) key(prefix, suffix []byte) []byte {
	n := len(prefix) + len(suffix)
	if cap(*s)-len(*s) < n {
		*s = make([]byte, 0, max(4096, n))
	}
	start := len(*s)
	*s = append(append(*s, prefix...), suffix...)
	return (*s)[start:len(*s):len(*s)]
}

// keyRange turns comparisons on the first primary key field (alone or in a
// top-level $and) into a range of document keys.
func (p *planner) keyRange(root filter.Node) (kv.Range, string, bool) {
	pk := p.coll.Schema.PrimaryKey()
	if len(pk) == 0 {
		return kv.Range{}, "", false
	}
	var comps []*filter.Comparison
	switch n := root.(type) {
	case *filter.Comparison:
		comps = append(comps, n)
	case *filter.And:
		for _, c := range n.Nodes {
			if c, ok := c.(*filter.Comparison); ok {
				comps = append(comps, c)
			}
		}
	}
	r := keyspace.Documents(p.coll.ID)
	prefix := r.Begin
	var desc []string
	for _, c := range comps {
		if c.Path != pk[0].Name || c.CaseInsensitive {
			continue
		}
		enc, err := index.EncodeValue(c.Value)
		if err != nil {
			continue
		}
		r = intersect(r, opRange(prefix, enc, c.Op))
		desc = append(desc, fmt.Sprintf("%s %s %v", c.Path, opName(c.Op), c.Value))
	}
	return r, strings.Join(desc, ", "), len(desc) > 0
}

// pinnedKey returns the primary key values that f requires by case-sensitive
// equality on every key field (alone or in a top-level $and), or nil.
func pinnedKey(s *schema.Schema, f filter.Filter) []any {
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
	fields := s.PrimaryKey()
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

// sortedUnique sorts document keys and drops duplicates and those not after
// the resume key.
func sortedUnique(keys [][]byte, resume []byte) [][]byte {
	slices.SortFunc(keys, bytes.Compare)
	out := keys[:0]
	for _, k := range keys {
		if resume != nil && bytes.Compare(k, resume) <= 0 {
			continue
		}
		if len(out) > 0 && bytes.Equal(out[len(out)-1], k) {
			continue
		}
		out = append(out, k)
	}
	return out
}

// fetchIterator reads documents by key, in the order given; keys whose
// document is gone (the index is always in step, so only in a race the
// transaction will lose at commit) are skipped. It reads a batch of keys at
// a time, one round trip each on a backend with a server: the first batch
// as many as the caller will take, the next ones twice as many, up to
// maxFetchBatch.
type fetchIterator struct {
	ctx   context.Context
	tx    kv.Tx
	keys  [][]byte
	i     int
	batch int      // keys in the next read
	ahead [][]byte // values read for keys[i:], nil where there is none
	key   []byte
	value []byte
	err   error
}

// maxFetchBatch bounds a batch of document reads.
const maxFetchBatch = 256

// newFetchIterator reads the documents under keys, of which the caller
// will take about limit (0: all).
func newFetchIterator(ctx context.Context, tx kv.Tx, keys [][]byte, limit int64) *fetchIterator {
	batch := maxFetchBatch
	if limit > 0 {
		batch = int(min(limit, maxFetchBatch))
	}
	return &fetchIterator{ctx: ctx, tx: tx, keys: keys, batch: batch}
}

func (f *fetchIterator) Next() bool {
	for f.err == nil && f.i < len(f.keys) {
		if len(f.ahead) == 0 {
			n := min(f.batch, len(f.keys)-f.i)
			// Snapshot reads: the read is recorded below, for the keys
			// looked at only, so reading ahead conflicts with nothing more
			// than reading one at a time would.
			if f.ahead, f.err = f.tx.Snapshot().GetMany(f.ctx, f.keys[f.i:f.i+n]); f.err != nil {
				return false
			}
			f.batch = min(2*f.batch, maxFetchBatch)
		}
		k, v := f.keys[f.i], f.ahead[0]
		f.i, f.ahead = f.i+1, f.ahead[1:]
		if f.err = f.tx.AddReadConflictRange(kv.KeyRange(k)); f.err != nil {
			return false
		}
		if v != nil {
			f.key, f.value = k, v
			return true
		}
	}
	return false
}

// fetch reads the document under key for an index entry; false if there
// is none (or on error, which it stores in *errp).
func fetch(ctx context.Context, tx kv.Tx, key []byte, errp *error) ([]byte, bool) {
	v, err := tx.Get(ctx, key)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		*errp = err
	}
	return v, err == nil
}

func (f *fetchIterator) Key() []byte   { return f.key }
func (f *fetchIterator) Value() []byte { return f.value }
func (f *fetchIterator) Err() error    { return f.err }
func (f *fetchIterator) Close() error  { return nil }
