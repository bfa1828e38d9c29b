package query

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// count runs Count for the test file's "count filter=... [ci]" command and
// prints which way it went: "index count: <ranges>" and the count and the
// keys read, or "needs documents". Whichever way, the count must equal
// the number of documents that the filter matches when each is checked,
// or the command fails.
func (c *planCase) count(t *testing.T, d *datadriven.TestData) (string, error) {
	var collation filter.Collation
	if d.HasArg("ci") {
		collation.Case = "ci"
	}
	var raw string
	d.ScanArgs(t, "filter", &raw)
	f, err := filter.Parse([]byte(expand(raw, 0)), c.coll.Schema, collation)
	if err != nil {
		return "", err
	}
	tx, err := c.store.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var reads kv.ReadCount
	n, plan, ok, err := Count(ctx, kv.CountReads(tx, &reads), c.coll, f)
	if err != nil {
		return "", err
	}
	want, err := c.matching(tx, f)
	if err != nil {
		return "", err
	}
	if !ok {
		return "needs documents\n", nil
	}
	if n != want {
		d.Fatalf(t, "%s counted %d, but %d documents match", plan, n, want)
	}
	return fmt.Sprintf("%s\ncount: %d\nkeys read: %d\n", plan, n, reads.Keys.Load()), nil
}

// matching counts the documents that match f, checking every one.
func (c *planCase) matching(tx kv.Tx, f filter.Filter) (int64, error) {
	it := tx.Scan(ctx, keyspace.Documents(c.coll.ID), kv.ScanOptions{})
	defer it.Close()
	var n int64
	for it.Next() {
		ok, err := f.Matches(it.Value())
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, it.Err()
}
