package documents

import (
	"bytes"
	"context"
	"fmt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

// Unique keys (schema.UniqueKey) are enforced with the index entries every
// field already has: no second copy of the values. A write of a document
// whose key values changed reads the Exact entries of those values; the
// read joins the transaction's read ranges, so two transactions writing
// the same value conflict and one of them runs again, and then sees the
// other's document. That holds on every engine and across nodes, as any
// read does.

// uniqueValue is a document's value of one field of a unique key.
type uniqueValue struct {
	tok    []byte // as the document has it, for messages
	whole  []byte // the value's encoding, uncut
	prefix []byte // the key prefix of the value's Exact entries
	cut    bool   // the entries hold a cut value: a match must be checked on the document
}

// keyValues returns doc's values of key's fields, or nil if one of them
// is absent or null: such a document is not checked for the key.
func keyValues(coll *catalog.Collection, key schema.UniqueKey, doc []byte) ([]uniqueValue, error) {
	vals := make([]uniqueValue, len(key.Fields))
	for i, f := range key.Fields {
		tok, v, err := index.Value(doc, f)
		if err != nil || tok == nil {
			return nil, err
		}
		whole, err := index.EncodeValue(v)
		if err != nil {
			return nil, err
		}
		short, cut := index.Truncate(v)
		enc := whole
		if cut {
			if enc, err = index.EncodeValue(short); err != nil {
				return nil, err
			}
		}
		vals[i] = uniqueValue{tok: tok, whole: whole, cut: cut,
			prefix: append(index.FieldPrefix(coll.ID, f.Path, index.Exact), enc...)}
	}
	return vals, nil
}

// checkUnique refuses, with ALREADY_EXISTS, the record rec about to be
// stored under key (in place of old, nil if none) if another document
// holds the values of one of the collection's unique keys. A key whose
// values the write does not change is not looked up again.
func (s *Service) checkUnique(ctx context.Context, tx kv.Tx, coll *catalog.Collection, key, old, rec []byte) error {
	keys := coll.Schema.Unique()
	if len(keys) == 0 || s.noIndexes {
		return nil
	}
	suffix := key[len(keyspace.Documents(coll.ID).Begin):]
	for _, k := range keys {
		vals, err := keyValues(coll, k, rec[recordHeaderSize:])
		if err != nil {
			return fmt.Errorf("docs: unique key [%s] of %x: %w", k.Names(), key, err)
		}
		if vals == nil {
			continue
		}
		if old != nil {
			was, err := keyValues(coll, k, old[recordHeaderSize:])
			if err != nil {
				return fmt.Errorf("docs: unique key [%s] of the stored %x: %w", k.Names(), key, err)
			}
			if sameValues(was, vals) {
				continue
			}
		}
		holder, err := s.holder(ctx, tx, coll, k, vals, suffix)
		if err != nil {
			return err
		}
		if holder != nil {
			return duplicateUnique(k, vals, "exists already")
		}
	}
	return nil
}

func sameValues(a, b []uniqueValue) bool {
	if a == nil {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].whole, b[i].whole) {
			return false
		}
	}
	return true
}

// holder returns the key suffix of a document other than the one of
// suffix own that holds vals, the values of unique key k, or nil.
//
// The Exact entries of one value sort by primary key, so the documents
// holding every value are the intersection of one range of entries per
// field, which it walks as a leapfrog join: each field in turn seeks the
// first entry at or after the latest candidate's primary key, and a
// candidate every field agrees on holds the values (once its document's
// whole values are compared where an entry holds a cut one). Each seek is
// a scan of one key (a round trip on PostgreSQL). For a key of one field
// that is one scan, or two when the document itself holds the value; for
// several fields the seeks are at most about the fields times the number
// of documents holding the rarest of the values, however common the
// others are. The scans' read ranges join up to cover every primary key
// from the first to the last, in one field's range or another's, so a
// concurrent write of a document holding all the values conflicts with
// this one.
func (s *Service) holder(ctx context.Context, tx kv.Tx, coll *catalog.Collection, k schema.UniqueKey, vals []uniqueValue, own []byte) ([]byte, error) {
	var from []byte // the lowest primary key suffix still to look at
	seeks := 0
	for {
		target, agree := from, 0
		for i := 0; agree < len(vals); i = (i + 1) % len(vals) {
			if seeks++; seeks%ctxCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			found, err := seek(ctx, tx, vals[i].prefix, target)
			if err != nil || found == nil {
				return nil, err
			}
			if target != nil && bytes.Equal(found, target) {
				agree++
			} else {
				target, agree = found, 1
			}
		}
		if !bytes.Equal(target, own) {
			same, err := s.holds(ctx, tx, coll, k, vals, target)
			if err != nil || same {
				return target, err
			}
		}
		from = kv.KeyAfter(target)
	}
}

// seek returns the primary key suffix of the first entry under prefix at
// or after the suffix from (from the first if nil), or nil if none.
func seek(ctx context.Context, tx kv.Tx, prefix, from []byte) ([]byte, error) {
	r := kv.PrefixRange(prefix)
	if from != nil {
		r.Begin = append(bytes.Clone(prefix), from...)
	}
	it := tx.Scan(ctx, r, kv.ScanOptions{Limit: 1})
	defer it.Close()
	if it.Next() {
		return bytes.Clone(it.Key()[len(prefix):]), nil
	}
	return nil, it.Err()
}

// holds tells whether the document of key suffix holds vals: always when
// no entry cut them and the collection has no ttl, else as its stored
// record says. An expired document holds nothing: no read returns it, so
// it is deleted here (logged as expired), as a write onto its own key
// deletes it (clearExpired), and the value is free.
func (s *Service) holds(ctx context.Context, tx kv.Tx, coll *catalog.Collection, k schema.UniqueKey, vals []uniqueValue, suffix []byte) (bool, error) {
	cut := false
	for _, v := range vals {
		cut = cut || v.cut
	}
	ttl := coll.Schema.TTL() != nil
	if !cut && !ttl {
		return true, nil
	}
	key := append(bytes.Clone(keyspace.Documents(coll.ID).Begin), suffix...)
	rec, err := s.get(ctx, tx, key)
	if err != nil || rec == nil {
		return false, err
	}
	if expired(coll, rec, s.Now()) {
		return false, s.removeFor(tx, coll, key, rec, true)
	}
	if !cut {
		return true, nil
	}
	theirs, err := keyValues(coll, k, rec[recordHeaderSize:])
	if err != nil {
		return false, fmt.Errorf("docs: unique key [%s] of the stored document %x: %w", k.Names(), suffix, err)
	}
	return sameValues(theirs, vals), nil
}

// duplicateUnique is the error of a write whose document holds the values
// of unique key k that another holds, worded as duplicateKey is.
func duplicateUnique(k schema.UniqueKey, vals []uniqueValue, why string) error {
	what := "field"
	if len(k.Fields) > 1 {
		what = "fields"
	}
	return apierror.Errorf(apierror.AlreadyExists, "duplicate value for unique %s %s: %s %s", what, k.Names(), shownValues(vals), why)
}

// shownValues renders a key's values for a message, cut as error bodies
// cut echoed input: the value as the document has it, or a list of them.
func shownValues(vals []uniqueValue) string {
	if len(vals) == 1 {
		return apierror.Clip(string(vals[0].tok), 200)
	}
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, apierror.Clip(string(v.tok), 200/len(vals))...)
	}
	return string(append(b, ']'))
}

// CheckUniqueHeld refuses, with INVALID_ARGUMENT, unique keys (which a
// schema change adds to the collection) that two of its stored documents
// hold the same values of, naming one such value. It reads the Exact
// entries of each key's first field, in which the documents holding one
// value are adjacent, and, for each value more than one document holds
// (or whose entries are cut), those documents, whose whole values of
// every field of the key it compares. Run in the transaction that changes
// the schema, its reads make a concurrent write of the field conflict
// with the change. It reads every entry of the field: a change that adds
// a unique key costs a scan of the field's index.
func (s *Service) CheckUniqueHeld(ctx context.Context, tx kv.Tx, coll *catalog.Collection, keys []schema.UniqueKey) error {
	for _, k := range keys {
		if err := s.checkHeld(ctx, tx, coll, k); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) checkHeld(ctx context.Context, tx kv.Tx, coll *catalog.Collection, k schema.UniqueKey) error {
	prefix := index.FieldPrefix(coll.ID, k.Fields[0].Path, index.Exact)
	it := tx.Scan(ctx, kv.PrefixRange(prefix), kv.ScanOptions{})
	defer it.Close()
	docs := keyspace.Documents(coll.ID).Begin
	var g heldGroup
	for it.Next() {
		suffix, err := index.PKSuffix(it.Key(), len(prefix))
		if err != nil {
			return err
		}
		if v := it.Key()[len(prefix) : len(it.Key())-len(suffix)]; !bytes.Equal(v, g.value) {
			if err := s.flushHeld(ctx, tx, coll, k, &g); err != nil {
				return err
			}
			g = heldGroup{value: bytes.Clone(v)}
		}
		g.keys = append(g.keys, append(bytes.Clone(docs), suffix...))
		g.n++
		// The second document of a value is read at once: with a key of one
		// field whose value no entry cut, it is the duplicate.
		if g.n == 2 || len(g.keys) == heldBatch {
			if err := s.flushHeld(ctx, tx, coll, k, &g); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	return s.flushHeld(ctx, tx, coll, k, &g)
}

// heldBatch is how many documents of one group checkHeld reads at once.
const heldBatch = 256

// heldGroup is the documents sharing one entry of a unique key's first
// field, as checkHeld reads them: those not read yet, and the key's
// values of those read (a group of one document is never read).
type heldGroup struct {
	value []byte
	keys  [][]byte
	n     int
	seen  map[string]bool
}

// flushHeld reads the group's pending documents and refuses k if one
// holds the same values of it as another of the group.
func (s *Service) flushHeld(ctx context.Context, tx kv.Tx, coll *catalog.Collection, k schema.UniqueKey, g *heldGroup) error {
	if g.n < 2 || len(g.keys) == 0 {
		return nil
	}
	recs, err := tx.GetMany(ctx, g.keys)
	if err != nil {
		return err
	}
	if g.seen == nil {
		g.seen = make(map[string]bool)
	}
	for i, rec := range recs {
		if rec == nil || expired(coll, rec, s.Now()) {
			continue // an expired document holds nothing (holds)
		}
		vals, err := keyValues(coll, k, rec[recordHeaderSize:])
		if err != nil {
			return fmt.Errorf("docs: unique key [%s] of the stored %x: %w", k.Names(), g.keys[i], err)
		}
		if vals == nil {
			continue // a field of the key is absent or null
		}
		var whole []byte
		for _, v := range vals {
			whole = append(whole, v.whole...) // each encoding ends itself
		}
		if g.seen[string(whole)] {
			what := "field"
			if len(k.Fields) > 1 {
				what = "fields"
			}
			return apierror.Errorf(apierror.InvalidArgument, "cannot make %s %s unique: more than one document holds %s", what, k.Names(), shownValues(vals))
		}
		g.seen[string(whole)] = true
	}
	g.keys = g.keys[:0]
	return nil
}
