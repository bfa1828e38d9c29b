package documents

import (
	"bytes"
	"context"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/query"
)

// A collection whose schema has a ttl hides each document from the
// instant it expires (query.Live, on every lookup's candidates, and
// FetchMany for search hits) and deletes it later: here, in small
// transactions of the sweeper's, or at once when a write lands on its
// key. Either way the delete is an ordinary one whose change log record
// says why (changelog.Record.Expired).

// expired reports whether the stored record rec has expired at now.
func expired(coll *catalog.Collection, rec []byte, now time.Time) bool {
	ttl := coll.Schema.TTL()
	return ttl != nil && rec != nil && len(rec) >= recordHeaderSize && ttl.Expired(rec[recordHeaderSize:], now)
}

// clearExpired deletes the document stored under key as old if it has
// expired at now, and returns what is left there: old, or nil. A write
// onto the key of an expired document finds it gone, as a read would.
func (s *Service) clearExpired(tx kv.Tx, coll *catalog.Collection, key, old []byte, now time.Time) ([]byte, error) {
	if !expired(coll, old, now) {
		return old, nil
	}
	return nil, s.removeFor(tx, coll, key, old, true)
}

// SweepResult is what one Sweep transaction did.
type SweepResult struct {
	// Deleted counts the expired documents it deleted.
	Deleted int
	// Next is where the next transaction resumes in the ttl field's
	// entries; nil once they are read to the end of the expired range.
	Next []byte
}

// Sweep deletes, in tx, up to limit documents of coll that have expired
// at now, found through the ttl field's index entries
// (query.ExpiredRanges: ranges up to now, never a scan), from the entry
// from on (nil: the first). It reads at most 4×limit entries, so that
// entries of documents not yet expired (a value with an offset sorts off
// its time) cannot make one transaction long. Each delete is an ordinary
// one, logged as expired.
func (s *Service) Sweep(ctx context.Context, tx kv.Tx, coll *catalog.Collection, now time.Time, from []byte, limit int) (SweepResult, error) {
	spans, ok := query.ExpiredRanges(coll, now)
	if !ok || limit <= 0 {
		return SweepResult{}, nil
	}
	prefixLen := len(index.FieldPrefix(coll.ID, coll.Schema.TTL().Field.Path, index.Exact))
	docPrefix := keyspace.Documents(coll.ID).Begin
	readMax := 4 * limit
	var entries, keys [][]byte
	for _, sp := range spans {
		rng := sp.Range
		if from != nil && bytes.Compare(from, rng.Begin) > 0 {
			rng.Begin = from
		}
		if bytes.Compare(rng.Begin, rng.End) >= 0 || len(entries) == readMax {
			continue
		}
		it := tx.Scan(ctx, rng, kv.ScanOptions{Limit: readMax - len(entries)})
		for it.Next() {
			suffix, err := index.PKSuffix(it.Key(), prefixLen)
			if err != nil {
				it.Close()
				return SweepResult{}, err
			}
			entries = append(entries, bytes.Clone(it.Key()))
			keys = append(keys, append(bytes.Clone(docPrefix), suffix...))
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return SweepResult{}, err
		}
	}
	recs, err := tx.GetMany(ctx, keys)
	if err != nil {
		return SweepResult{}, err
	}
	var res SweepResult
	for i, rec := range recs {
		if res.Deleted == limit {
			res.Next = entries[i] // the next transaction looks at it first
			return res, nil
		}
		if !expired(coll, rec, now) {
			continue
		}
		if err := s.removeFor(tx, coll, keys[i], rec, true); err != nil {
			return SweepResult{}, err
		}
		res.Deleted++
	}
	if len(entries) == readMax {
		res.Next = kv.PrefixEnd(entries[len(entries)-1]) // past the last entry read
	}
	return res, nil
}

// PendingExpired counts the documents of coll that have expired at now
// and wait for the sweeper: the entries of the ttl field's expired range
// before the cutoff's second, read without their documents, and the
// documents of the entries in that second, checked one by one (exact for
// values written in UTC, see query.ExpiredRanges). A collection without a
// ttl has none.
func (s *Service) PendingExpired(ctx context.Context, tx kv.Tx, coll *catalog.Collection, now time.Time) (int64, error) {
	spans, ok := query.ExpiredRanges(coll, now)
	if !ok {
		return 0, nil
	}
	prefixLen := len(index.FieldPrefix(coll.ID, coll.Schema.TTL().Field.Path, index.Exact))
	docPrefix := keyspace.Documents(coll.ID).Begin
	r := tx.Snapshot()
	var n int64
	var keys [][]byte
	for _, sp := range spans {
		it := r.Scan(ctx, kv.Range{Begin: sp.Begin, End: sp.Second}, kv.ScanOptions{})
		for it.Next() {
			n++
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return 0, err
		}
		it = r.Scan(ctx, kv.Range{Begin: sp.Second, End: sp.End}, kv.ScanOptions{})
		for it.Next() {
			suffix, err := index.PKSuffix(it.Key(), prefixLen)
			if err != nil {
				it.Close()
				return 0, err
			}
			keys = append(keys, append(bytes.Clone(docPrefix), suffix...))
		}
		err = it.Err()
		it.Close()
		if err != nil {
			return 0, err
		}
	}
	if len(keys) == 0 {
		return n, nil
	}
	recs, err := r.GetMany(ctx, keys)
	if err != nil {
		return 0, err
	}
	for _, rec := range recs {
		if expired(coll, rec, now) {
			n++
		}
	}
	return n, nil
}
