package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// NamespaceSize is the bytes namespace ns stores: the documents, messages
// and index entries of every collection and search index of its databases
// and branches, as their size counters have them. It reads without
// conflict ranges, as Sizes does: a write that checks a storage quota
// with it does not conflict with every other write of the namespace (see
// docs/operations.md for what that leaves of the bound). In a
// transaction that wrote, it counts the transaction's own writes.
func (c *Catalog) NamespaceSize(ctx context.Context, tx kv.Tx, ns int64) (int64, error) {
	r := tx.Snapshot()
	dbs, err := c.scanDatabases(ctx, r, keyspace.Databases(ns))
	if err != nil {
		return 0, err
	}
	var counters [][]byte
	for _, d := range dbs {
		for _, rng := range []kv.Range{keyspace.Collections(d.ID), keyspace.SearchIndexes(d.ID)} {
			ids, err := recordIDs(ctx, r, rng)
			if err != nil {
				return 0, err
			}
			for _, id := range ids {
				counters = append(counters, keyspace.Size(id), keyspace.IndexSize(id))
			}
		}
	}
	if len(counters) == 0 {
		return 0, nil
	}
	values, err := r.GetMany(ctx, counters)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, v := range values {
		// As in Sizes: a counter below zero counts nothing.
		total += max(kv.DecodeCounter(v), 0)
	}
	return total, nil
}

// recordIDs reads the ids of the collection records of a range.
func recordIDs(ctx context.Context, r kv.Reader, rng kv.Range) ([]int64, error) {
	it := r.Scan(ctx, rng, kv.ScanOptions{})
	defer it.Close()
	var out []int64
	for it.Next() {
		var rec struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, fmt.Errorf("catalog: corrupt collection record: %w", err)
		}
		out = append(out, rec.ID)
	}
	return out, it.Err()
}
