package query

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Counting from the indexes. A read's plan may return a superset of the
// matches, since every candidate is checked; a count made of index entries
// alone must be exact. A filter node is counted from entries when its
// entries and its matches are the same documents:
//
//   - a comparison on a scalar field, case-sensitive, whose value an
//     entry holds whole (a string or bytes shorter than
//     index.MaxValueBytes: a cut value would widen it); under "ci" only an
//     equality (the Exact entries of other strings do not order as their
//     folded text): each document has one entry of the field, so the
//     entries of the range are its matches;
//   - the elements of an array (Elements), likewise, with each document
//     counted once however many of its elements match;
//   - $exists on a scalar field: its Exact entries are the documents
//     where it is present and not null;
//   - $ne, $exists false, and any exact node under a $not-like
//     complement: the collection's document count (kept exact with every
//     write) less the node's;
//   - $and and $or of exact nodes: the intersection and union of their
//     documents' keys, collected up to MaxCountKeys.
//
// Anything else ($regex, $contains, $not on strings, whole-array equality,
// $exists on arrays and objects, a range on a long string) needs the
// documents: Count reports so and the caller reads and checks them.

// MaxCountKeys bounds the document keys a count holds in memory to combine
// the nodes of an $and or $or, or to count the documents of array
// elements once; past it the count falls back to reading the documents.
const MaxCountKeys = 1 << 20

// Count counts the documents f matches from index entries only, reading no
// document, when the filter allows (ok) and the collection has no ttl; else ok is false and the caller
// counts by reading the documents. Reads are recorded in tx as a read's
// would be, so a count in a client's transaction sees its writes and
// conflicts with the writes that would change it.
func Count(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter) (n int64, plan Plan, ok bool, err error) {
	if coll.Schema.TTL() != nil {
		// Entries and counters hold expired documents until the sweep
		// deletes them: only the documents tell (Live).
		return 0, Plan{}, false, nil
	}
	c := &counter{planner: planner{ctx: ctx, tx: tx, coll: coll, docPrefix: keyspace.Documents(coll.ID).Begin}}
	if f.Root == nil {
		n, err := c.total()
		return n, Plan{Kind: "document count"}, err == nil, err
	}
	e, ok := c.exact(f.Root)
	if !ok {
		return 0, Plan{}, false, nil
	}
	n, ok, err = c.count(e)
	if err != nil || !ok {
		return 0, Plan{}, false, err
	}
	return n, Plan{Kind: "index count", Detail: e.desc}, true, nil
}

// counter counts exact nodes.
type counter struct {
	planner
	totalRead bool
	totalN    int64
}

// exactNode is a filter node rewritten into what the counter can read:
// a leaf (ranges of entries), a complement, an intersection or a union.
type exactNode struct {
	ranges []fieldRange // leaf: the entries of its documents
	// dedup: a document may have several entries in ranges (elements of
	// an array, or an array's Exact and Folded entries of one element).
	dedup bool
	not   *exactNode   // the documents this one does not hold
	and   []*exactNode // all of them
	or    []*exactNode // any of them
	desc  string
}

// exact rewrites node into an exactNode, or reports that entries alone
// cannot count it.
func (c *counter) exact(node filter.Node) (*exactNode, bool) {
	switch n := node.(type) {
	case *filter.Comparison:
		return c.exactComparisons(n.Path, []*filter.Comparison{n}, false)
	case *filter.Elements:
		e, ok := c.exactComparisons(n.Path, n.Comparisons, true)
		if ok {
			e.desc = "some element of " + e.desc
		}
		return e, ok
	case *filter.Exists:
		f, ok := c.coll.Schema.Field(n.Path)
		if !ok || !f.Type.Scalar() {
			return nil, false
		}
		prefix := index.FieldPrefix(c.coll.ID, n.Path, index.Exact)
		present := &exactNode{ranges: []fieldRange{{kv.PrefixRange(prefix), len(prefix)}}, desc: n.Path + " exists"}
		if n.Want {
			return present, true
		}
		return &exactNode{not: present, desc: "not (" + present.desc + ")"}, true
	case *filter.Not:
		inner, ok := c.exact(n.Node)
		if !ok {
			return nil, false
		}
		return &exactNode{not: inner, desc: "not (" + inner.desc + ")"}, true
	case *filter.And:
		// Comparisons on one scalar field are one range, the tightest.
		groups, rest := groupByField(n.Nodes)
		var parts []*exactNode
		for _, g := range groups {
			e, ok := c.exactComparisons(g[0].Path, g, false)
			if !ok {
				return nil, false
			}
			parts = append(parts, e)
		}
		for _, child := range rest {
			e, ok := c.exact(child)
			if !ok {
				return nil, false
			}
			parts = append(parts, e)
		}
		if len(parts) == 1 {
			return parts[0], true
		}
		return &exactNode{and: parts, desc: joinDesc(parts, " ∩ ")}, true
	case *filter.Or:
		var parts []*exactNode
		for _, child := range n.Nodes {
			e, ok := c.exact(child)
			if !ok {
				return nil, false
			}
			parts = append(parts, e)
		}
		return &exactNode{or: parts, desc: joinDesc(parts, " ∪ ")}, true
	}
	return nil, false
}

func joinDesc(parts []*exactNode, sep string) string {
	descs := make([]string, len(parts))
	for i, p := range parts {
		descs[i] = p.desc
	}
	return "(" + strings.Join(descs, sep) + ")"
}

// exactComparisons is the leaf of comparisons on one field, all holding
// at once (on one element, for an array's elements).
func (c *counter) exactComparisons(path string, cs []*filter.Comparison, elements bool) (*exactNode, bool) {
	f, ok := c.coll.Schema.Field(path)
	if !ok || (f.Type == schema.Array) != elements {
		return nil, false
	}
	for _, cmp := range cs {
		if !wholeInEntry(cmp) || (cmp.CaseInsensitive && cmp.Op != filter.Eq) || cmp.CaseInsensitive != cs[0].CaseInsensitive {
			return nil, false
		}
	}
	rs, desc, ok := c.indexRanges(cs)
	if !ok {
		return nil, false
	}
	// One equality, case-sensitive: one entry per document that has the
	// value (Entries drops an array's repeated values).
	single := len(cs) == 1 && cs[0].Op == filter.Eq && !cs[0].CaseInsensitive
	return &exactNode{ranges: rs, dedup: elements && !single, desc: desc}, true
}

// wholeInEntry tells whether an entry holds c's value whole, so that the
// entries of c's range are exactly its matches: a cut value (strings and
// bytes of MaxValueBytes or more, folded or not) would let through longer
// values that share its first bytes.
func wholeInEntry(c *filter.Comparison) bool {
	switch v := c.Value.(type) {
	case string:
		return len(v) < index.MaxValueBytes && len(index.Fold(v)) < index.MaxValueBytes
	case []byte:
		return len(v) < index.MaxValueBytes
	}
	return true
}

// count counts the documents of e; ok is false when a set it must build
// grows past MaxCountKeys.
func (c *counter) count(e *exactNode) (int64, bool, error) {
	switch {
	case e.ranges != nil && !e.dedup:
		var n int64
		for _, fr := range e.ranges {
			m, err := c.countEntries(fr.r)
			if err != nil {
				return 0, false, err
			}
			n += m
		}
		return n, true, nil
	case e.not != nil:
		in, ok, err := c.count(e.not)
		if err != nil || !ok {
			return 0, ok, err
		}
		total, err := c.total()
		return total - in, err == nil, err
	}
	set, ok, err := c.keys(e)
	return int64(len(set)), ok, err
}

// keySet is a set of documents, by their primary key suffix.
type keySet map[string]struct{}

// keys collects the documents of e (which is not a complement at the top:
// the complements of an $and are subtracted, and one under an $or is not
// counted from entries); ok is false past MaxCountKeys.
func (c *counter) keys(e *exactNode) (keySet, bool, error) {
	switch {
	case e.ranges != nil:
		set := keySet{}
		for _, fr := range e.ranges {
			if ok, err := c.collectKeys(fr, set); err != nil || !ok {
				return nil, ok, err
			}
		}
		return set, true, nil
	case e.or != nil:
		set := keySet{}
		for _, p := range e.or {
			if p.not != nil {
				return nil, false, nil
			}
			s, ok, err := c.keys(p)
			if err != nil || !ok {
				return nil, ok, err
			}
			for k := range s {
				set[k] = struct{}{}
			}
			if len(set) > MaxCountKeys {
				return nil, false, nil
			}
		}
		return set, true, nil
	case e.and != nil:
		var set keySet
		var minus []*exactNode
		for _, p := range e.and {
			if p.not != nil {
				minus = append(minus, p.not)
				continue
			}
			s, ok, err := c.keys(p)
			if err != nil || !ok {
				return nil, ok, err
			}
			if set == nil {
				set = s
				continue
			}
			for k := range set {
				if _, in := s[k]; !in {
					delete(set, k)
				}
			}
		}
		if set == nil { // only complements: not worth a set of everything
			return nil, false, nil
		}
		for _, m := range minus {
			s, ok, err := c.keys(m)
			if err != nil || !ok {
				return nil, ok, err
			}
			for k := range s {
				delete(set, k)
			}
		}
		return set, true, nil
	}
	return nil, false, nil
}

// countEntries counts the keys of r, reading no values: index entries
// have none.
func (c *counter) countEntries(r kv.Range) (int64, error) {
	it := c.tx.Scan(c.ctx, r, kv.ScanOptions{})
	defer it.Close()
	var n int64
	for it.Next() {
		n++
		if n%countCtxCheckEvery == 0 {
			if err := c.ctx.Err(); err != nil {
				return 0, err
			}
		}
	}
	return n, it.Err()
}

// countCtxCheckEvery is how many entries a count reads between looks at
// its context.
const countCtxCheckEvery = 1024

// collectKeys adds the documents of fr's entries to set; false past
// MaxCountKeys.
func (c *counter) collectKeys(fr fieldRange, set keySet) (bool, error) {
	it := c.tx.Scan(c.ctx, fr.r, kv.ScanOptions{})
	defer it.Close()
	for n := 1; it.Next(); n++ {
		if n%countCtxCheckEvery == 0 {
			if err := c.ctx.Err(); err != nil {
				return false, err
			}
		}
		suffix, err := index.PKSuffix(it.Key(), fr.prefixLen)
		if err != nil {
			return false, err
		}
		set[string(suffix)] = struct{}{}
		if len(set) > MaxCountKeys {
			return false, nil
		}
	}
	return true, it.Err()
}

// total reads the collection's document count, which every write keeps
// exact in its own transaction. It is read as a recorded read: a count in a
// client's transaction conflicts with a write that changes it, as a scan
// of the documents would.
func (c *counter) total() (int64, error) {
	if c.totalRead {
		return c.totalN, nil
	}
	v, err := c.tx.Get(c.ctx, keyspace.Count(c.coll.ID))
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return 0, fmt.Errorf("query: document count: %w", err)
	}
	c.totalRead, c.totalN = true, kv.DecodeCounter(v)
	return c.totalN, nil
}
