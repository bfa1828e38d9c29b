package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// GroupCounts counts the documents of each value of one scalar field from
// the field's index entries alone, reading no document, when that is
// exact (ok); else ok is false and the caller drops what was emitted
// and reads the documents. Entries sort by value, so each group's entries are
// one run: emit gets the groups in value order, each value typed as
// index.Value types it, then (without a filter) the documents that have
// no value, as the nil group, if there are any.
//
// It is exact when the field is a scalar (one entry per document that
// has a value: an array's elements would count a document in several
// groups and say nothing of its other elements) and the filter is empty
// or exact on the field itself (query.Count's rules: a range of the
// field's entries that holds its matches and only them, which never
// holds a document without the value). A string or bytes value an entry
// holds cut (MaxValueBytes) stands for every value that starts with it:
// the first one met gives the plan up, and the caller reads the
// documents instead.
//
// Reads are recorded in tx as a read's are, so that in a client's
// transaction it sees the transaction's writes and conflicts with the
// writes that would change it.
func GroupCounts(ctx context.Context, tx kv.Tx, coll *catalog.Collection, path string, f filter.Filter, emit func(value any, n int64) error) (plan Plan, ok bool, err error) {
	field, found := coll.Schema.Field(path)
	if !found || !field.Type.Scalar() {
		return Plan{}, false, nil
	}
	c := &counter{planner: planner{ctx: ctx, tx: tx, coll: coll, docPrefix: keyspace.Documents(coll.ID).Begin}}
	prefix := index.FieldPrefix(coll.ID, path, index.Exact)
	r, desc := kv.PrefixRange(prefix), "all entries of "+path
	if f.Root != nil {
		if !onlyOn(f.Root, path) {
			return Plan{}, false, nil
		}
		e, exact := c.exact(f.Root)
		if !exact || len(e.ranges) != 1 || e.dedup || e.ranges[0].prefixLen != len(prefix) {
			return Plan{}, false, nil
		}
		r, desc = e.ranges[0].r, e.desc
	}
	// A run of entries is one value's: compared by its encoded bytes, and
	// decoded once, when it ends.
	var runEnc []byte
	var runN, total int64
	flush := func() error {
		if runN == 0 {
			return nil
		}
		v, _, err := keyenc.DecodeOne(runEnc)
		if err != nil {
			return fmt.Errorf("query: index entry of %s: %w", path, err)
		}
		if mayBeCut(v) {
			return errCutValue
		}
		return emit(v, runN)
	}
	it := tx.Scan(ctx, r, kv.ScanOptions{})
	defer it.Close()
	for n := 1; it.Next(); n++ {
		if n%countCtxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return Plan{}, false, err
			}
		}
		v := it.Key()[len(prefix):]
		total++
		// An entry that begins with the run's value is the run's, and its
		// key need not be decoded: keyenc's elements delimit themselves,
		// but for a string's (or bytes') terminator, which a longer value
		// holding a zero byte continues with an escape byte (0xFF) where
		// the primary key's first tag (never 0xFF) follows the run's.
		if runN > 0 && bytes.HasPrefix(v, runEnc) && (len(v) == len(runEnc) || v[len(runEnc)] != keyenc.EscapeByte) {
			runN++
			continue
		}
		suffix, err := index.PKSuffix(it.Key(), len(prefix))
		if err != nil {
			return Plan{}, false, err
		}
		enc := v[:len(v)-len(suffix)]
		if err := flush(); err != nil {
			return gaveUp(err)
		}
		runEnc, runN = append(runEnc[:0], enc...), 1
	}
	if err := it.Err(); err != nil {
		return Plan{}, false, err
	}
	if err := flush(); err != nil {
		return gaveUp(err)
	}
	if f.Root == nil {
		all, err := c.total()
		if err != nil {
			return Plan{}, false, err
		}
		if all > total {
			if err := emit(nil, all-total); err != nil {
				return Plan{}, false, err
			}
		}
	}
	return Plan{Kind: "index group count", Detail: desc}, true, nil
}

// errCutValue gives GroupCounts up: an entry holds a value that may be cut.
var errCutValue = errors.New("query: a cut value in the group's entries")

// gaveUp ends GroupCounts after flush's err: not taken on a cut value,
// else failed.
func gaveUp(err error) (Plan, bool, error) {
	if errors.Is(err, errCutValue) {
		return Plan{}, false, nil
	}
	return Plan{}, false, err
}

// mayBeCut tells whether an entry's value may be a longer one cut.
func mayBeCut(v any) bool {
	switch v := v.(type) {
	case string:
		return len(v) >= index.MaxValueBytes
	case []byte:
		return len(v) >= index.MaxValueBytes
	}
	return false
}

// onlyOn tells whether a filter compares nothing but path: comparisons
// and $exists on it, alone or in an $and.
func onlyOn(node filter.Node, path string) bool {
	switch n := node.(type) {
	case *filter.Comparison:
		return n.Path == path && !n.CaseInsensitive
	case *filter.Exists:
		return n.Path == path
	case *filter.And:
		for _, child := range n.Nodes {
			if !onlyOn(child, path) {
				return false
			}
		}
		return true
	}
	return false
}
