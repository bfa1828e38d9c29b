// Package docs holds the document operations: insert, replace, update,
// delete and read. Each takes the transaction it runs in, so a caller can run
// one alone (retried on conflict) or several in a client's transaction, and
// every one of them sees that transaction's own writes.
//
// Which documents an operation looks at is the business of candidates
// (plan.go); what it does with each is the business of this file. The
// planner of indexed reads replaces the former without touching the latter.
package docs

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/query"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/status"
)

// DefaultMaxDocumentSize bounds a document's JSON: it and its record
// header must fit in one kv value.
const DefaultMaxDocumentSize = kv.DefaultMaxValueSize - 1024

// Service runs document operations.
type Service struct {
	// MaxDocumentSize bounds a document's JSON in bytes.
	MaxDocumentSize int
	// Now tells the time for documents' metadata; tests may set it.
	Now func() time.Time
	// Log, if set, gets each lookup's plan at debug level.
	Log *slog.Logger

	counts query.Counts // document counts for the planner

	// noIndexes turns index maintenance off, for the benchmark that
	// measures what it costs. Nothing else may set it: reads would miss.
	noIndexes bool
}

// New returns a Service with the default limits.
func New() *Service {
	return &Service{MaxDocumentSize: DefaultMaxDocumentSize, Now: func() time.Time { return time.Now().UTC() }}
}

// WriteResult is what a write operation reports.
type WriteResult struct {
	// Time is the operation's metadata time: created_at for insert and
	// replace, updated_at for update, deleted_at for delete.
	Time time.Time
	// Keys holds, for insert and replace, each document's primary key as a
	// JSON object, generated values included.
	Keys []json.RawMessage
	// Modified counts the documents an update changed.
	Modified int
}

func requireDocuments(coll *catalog.Collection, op string) error {
	if coll.Schema.CollectionType() != schema.Documents {
		return status.Errorf(status.InvalidArgument, "%s is only supported on collection type of 'documents'", op)
	}
	return nil
}

// Insert adds documents; if any of their keys exists (or two of them share
// one) nothing is written and it fails with ALREADY_EXISTS.
func (s *Service) Insert(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*WriteResult, error) {
	return s.write(ctx, tx, coll, docs, "insert", false)
}

// Replace inserts documents, replacing those whose keys exist.
func (s *Service) Replace(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*WriteResult, error) {
	return s.write(ctx, tx, coll, docs, "replace", true)
}

func (s *Service) write(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte, op string, replace bool) (*WriteResult, error) {
	if err := requireDocuments(coll, op); err != nil {
		return nil, err
	}
	res := &WriteResult{Time: s.Now(), Keys: make([]json.RawMessage, 0, len(docs))}
	gen := &sequences{ctx: ctx, tx: tx, coll: coll}
	seen := make(map[string]bool, len(docs))
	for _, doc := range docs {
		doc, pk, err := s.prepare(coll, doc, gen)
		if err != nil {
			return nil, err
		}
		key, err := keyspace.Document(coll.ID, pk)
		if err != nil {
			return nil, status.Errorf(status.InvalidArgument, "invalid primary key: %v", err)
		}
		if seen[string(key)] && !replace {
			return nil, status.Errorf(status.AlreadyExists, "duplicate key value, violates key constraint")
		}
		seen[string(key)] = true
		old, err := s.get(ctx, tx, key)
		if err != nil {
			return nil, err
		}
		if old != nil && !replace {
			return nil, status.Errorf(status.AlreadyExists, "duplicate key value, violates key constraint")
		}
		op := changelog.Insert
		if replace {
			op = changelog.Replace
		}
		if err := s.put(tx, coll, op, key, old, encodeRecord(res.Time, time.Time{}, doc)); err != nil {
			return nil, err
		}
		res.Keys = append(res.Keys, keyJSON(coll.Schema, pk))
	}
	return res, nil
}

// prepare validates a new document and fills its generated key values.
func (s *Service) prepare(coll *catalog.Collection, doc []byte, gen schema.Generator) ([]byte, []any, error) {
	if len(doc) > s.MaxDocumentSize {
		return nil, nil, status.Errorf(status.InvalidArgument, "document of %d bytes exceeds the maximum of %d bytes", len(doc), s.MaxDocumentSize)
	}
	if err := coll.Schema.Validate(doc); err != nil {
		return nil, nil, err
	}
	doc, err := coll.Schema.FillAutoGenerated(doc, gen)
	if err != nil {
		return nil, nil, err
	}
	pk, err := coll.Schema.ExtractKey(doc)
	if err != nil {
		return nil, nil, err
	}
	return doc, pk, nil
}

// get returns the stored record under key, or nil.
func (s *Service) get(ctx context.Context, tx kv.Tx, key []byte) ([]byte, error) {
	v, err := tx.Get(ctx, key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// put writes a document record in place of old (nil if there was none).
// Every write of a document goes through here or remove, so that what must
// change with a document changes in one place: its index entries (only
// those whose values changed), the collection's statistics and the change
// log entry.
func (s *Service) put(tx kv.Tx, coll *catalog.Collection, op changelog.Op, key, old, rec []byte) error {
	if err := s.putIndexes(tx, coll, key, old, rec); err != nil {
		return err
	}
	if err := tx.Set(key, rec); err != nil {
		return err
	}
	if err := s.count(tx, coll, old == nil, int64(len(rec)-len(old))); err != nil {
		return err
	}
	return logChange(tx, coll, op, key, rec[recordHeaderSize:])
}

// putIndexes changes the index entries whose values differ between the
// stored record old (nil if none) and rec.
func (s *Service) putIndexes(tx kv.Tx, coll *catalog.Collection, key, old, rec []byte) error {
	if s.noIndexes {
		return nil
	}
	next, err := index.Entries(coll.Schema, rec[recordHeaderSize:])
	if err != nil {
		return fmt.Errorf("docs: index entries of %x: %w", key, err)
	}
	var prev []index.Entry
	if old != nil {
		if prev, err = index.Entries(coll.Schema, old[recordHeaderSize:]); err != nil {
			return fmt.Errorf("docs: index entries of the stored %x: %w", key, err)
		}
	}
	removed, added := index.Diff(prev, next)
	suffix := key[len(keyspace.Documents(coll.ID).Begin):]
	for _, e := range removed {
		if err := tx.Clear(index.Key(coll.ID, e, suffix)); err != nil {
			return err
		}
	}
	for _, e := range added {
		if err := tx.Set(index.Key(coll.ID, e, suffix), nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) remove(tx kv.Tx, coll *catalog.Collection, key, old []byte) error {
	prev, err := index.Entries(coll.Schema, old[recordHeaderSize:])
	if err != nil {
		return fmt.Errorf("docs: index entries of the stored %x: %w", key, err)
	}
	suffix := key[len(keyspace.Documents(coll.ID).Begin):]
	for _, e := range prev {
		if err := tx.Clear(index.Key(coll.ID, e, suffix)); err != nil {
			return err
		}
	}
	if err := tx.Clear(key); err != nil {
		return err
	}
	if err := s.count(tx, coll, false, -int64(len(old))); err != nil {
		return err
	}
	if err := tx.Add(keyspace.Count(coll.ID), -1); err != nil {
		return err
	}
	return logChange(tx, coll, changelog.Delete, key, nil)
}

// count keeps a collection's statistics with atomic adds, which never make
// concurrent writers conflict.
func (s *Service) count(tx kv.Tx, coll *catalog.Collection, added bool, bytes int64) error {
	if added {
		if err := tx.Add(keyspace.Count(coll.ID), 1); err != nil {
			return err
		}
	}
	return tx.Add(keyspace.Size(coll.ID), bytes)
}

func logChange(tx kv.Tx, coll *catalog.Collection, op changelog.Op, key, data []byte) error {
	r := changelog.Record{Op: op, DB: coll.DB.Name, DBID: coll.DB.ID, Collection: coll.Name, CollID: coll.ID, Key: key, Data: data}
	return tx.AppendLog(r.Encode())
}

// keyJSON renders a primary key as the JSON object the API returns in keys.
func keyJSON(s *schema.Schema, pk []any) json.RawMessage {
	b := []byte{'{'}
	for i, f := range s.PrimaryKey() {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonscan.AppendQuote(b, f.Name)
		b = append(b, ':')
		switch v := pk[i].(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case string:
			b = jsonscan.AppendQuote(b, v)
		case []byte:
			b = jsonscan.AppendQuote(b, base64.StdEncoding.EncodeToString(v))
		default:
			b = jsonscan.AppendQuote(b, fmt.Sprint(v))
		}
	}
	return append(b, '}')
}

// sequences hands out int32 key values from a per-field counter kept in the
// collection's own key space, inside the writing transaction.
type sequences struct {
	ctx  context.Context
	tx   kv.Tx
	coll *catalog.Collection
}

func (g *sequences) NextInt32(field string) (int32, error) {
	key := keyspace.Sequence(g.coll.ID, field)
	v, err := g.tx.Get(g.ctx, key)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return 0, err
	}
	next := kv.DecodeCounter(v) + 1
	if next > 1<<31-1 {
		return 0, status.Errorf(status.ResourceExhausted, "int32 key '%s' has run out of values", field)
	}
	return int32(next), g.tx.Set(key, kv.EncodeCounter(next))
}

// Update applies fields ({"$set": {...}, "$unset": [...]}) to every document
// matching f, which must not be empty.
func (s *Service) Update(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter, fields []byte) (*WriteResult, error) {
	if err := requireDocuments(coll, "update"); err != nil {
		return nil, err
	}
	if f.Root == nil {
		return nil, status.Errorf(status.InvalidArgument, "updating all documents is not allowed")
	}
	u, err := parseUpdate(coll.Schema, fields)
	if err != nil {
		return nil, err
	}
	res := &WriteResult{Time: s.Now()}
	err = s.eachMatch(ctx, tx, coll, f, nil, 0, func(key, rec []byte, r Record) (bool, error) {
		doc, err := u.apply(r.Data)
		if err != nil {
			return false, err
		}
		if len(doc) > s.MaxDocumentSize {
			return false, status.Errorf(status.InvalidArgument, "updated document of %d bytes exceeds the maximum of %d bytes", len(doc), s.MaxDocumentSize)
		}
		if err := coll.Schema.Validate(doc); err != nil {
			return false, err
		}
		pk, err := coll.Schema.ExtractKey(doc)
		if err != nil {
			return false, err
		}
		if newKey, err := keyspace.Document(coll.ID, pk); err != nil || !bytes.Equal(newKey, key) {
			return false, status.Errorf(status.InvalidArgument, "primary key field can't be updated")
		}
		res.Modified++
		return true, s.put(tx, coll, changelog.Update, key, rec, encodeRecord(r.CreatedAt, res.Time, doc))
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Delete removes every document matching f; the empty filter matches all.
func (s *Service) Delete(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter) (*WriteResult, error) {
	if err := requireDocuments(coll, "delete"); err != nil {
		return nil, err
	}
	res := &WriteResult{Time: s.Now()}
	err := s.eachMatch(ctx, tx, coll, f, nil, 0, func(key, rec []byte, _ Record) (bool, error) {
		return true, s.remove(tx, coll, key, rec)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ReadRequest describes a read.
type ReadRequest struct {
	Filter filter.Filter
	// Include or Exclude name the top-level fields to return or leave out;
	// both empty returns whole documents.
	Include, Exclude map[string]bool
	// Limit caps the documents returned (0: no cap); Skip passes over the
	// first matches.
	Limit, Skip int64
	// After resumes a read after the document whose resume token it is.
	After []byte
	// Sort orders the documents by these fields; without it they come in
	// primary-key order.
	Sort []SortField
}

// ReadItem is one document of a read.
type ReadItem struct {
	Data        []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ResumeToken []byte // pass as ReadRequest.After to continue after this document
}

// Read calls emit for each matching document, in primary-key order. Data in
// an item is valid only during the call.
func (s *Service) Read(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest, emit func(ReadItem) error) error {
	if len(req.Sort) > 0 {
		return s.readSorted(ctx, tx, coll, req, emit)
	}
	skipped, sent := int64(0), int64(0)
	hint := int64(0)
	if req.Limit > 0 {
		hint = req.Limit + req.Skip
	}
	return s.eachMatch(ctx, tx, coll, req.Filter, req.After, hint, func(key, _ []byte, r Record) (bool, error) {
		if skipped < req.Skip {
			skipped++
			return true, nil
		}
		data, err := jsondoc.Project(r.Data, req.Include, req.Exclude)
		if err != nil {
			return false, fmt.Errorf("docs: stored document at %x: %w", key, err)
		}
		if err := emit(ReadItem{Data: data, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ResumeToken: key}); err != nil {
			return false, err
		}
		sent++
		return req.Limit == 0 || sent < req.Limit, nil
	})
}

func (s *Service) logPlan(coll *catalog.Collection, plan query.Plan) {
	if s.Log != nil {
		s.Log.Debug("query plan", "collection", coll.Name, "plan", plan.String(), "candidates", plan.Candidates)
	}
}

// eachMatch calls fn for every document matching f, in primary-key order,
// after the document key after (if any), until fn returns false. limit is
// how many matches the caller will take at most (0: all), a hint for the
// planner.
func (s *Service) eachMatch(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter, after []byte, limit int64, fn func(key, rec []byte, r Record) (bool, error)) error {
	it, plan, err := query.Run(ctx, tx, coll, query.Request{Filter: f, After: after, Limit: limit, Counts: &s.counts})
	if err != nil {
		return err
	}
	defer it.Close()
	s.logPlan(coll, plan)
	for it.Next() {
		rec := it.Value()
		r, err := decodeRecord(rec)
		if err != nil {
			return fmt.Errorf("%w at %x", err, it.Key())
		}
		ok, err := f.Matches(r.Data)
		if err != nil {
			return fmt.Errorf("docs: stored document at %x: %w", it.Key(), err)
		}
		if !ok {
			continue
		}
		more, err := fn(it.Key(), rec, r)
		if err != nil || !more {
			return err
		}
	}
	return it.Err()
}

// Explanation tells how a filter's lookup ran.
type Explanation struct {
	Plan       string `json:"plan"`
	Candidates int    `json:"candidates"` // documents an index plan fetched
	Matched    int    `json:"matched"`
	KeysRead   int64  `json:"keys_read"` // index entries and documents read
}

// Explain runs the lookup of a read's filter, counting the keys it reads,
// and tells which plan it took: for developers and operators checking that
// a filter is served by an index.
func (s *Service) Explain(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest) (*Explanation, error) {
	var count kv.ReadCount
	it, plan, err := query.Run(ctx, kv.CountReads(tx, &count), coll, query.Request{Filter: req.Filter, After: req.After, Limit: req.Limit})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	ex := &Explanation{Plan: plan.String(), Candidates: plan.Candidates}
	for it.Next() {
		r, err := decodeRecord(it.Value())
		if err != nil {
			return nil, err
		}
		ok, err := req.Filter.Matches(r.Data)
		if err != nil {
			return nil, err
		}
		if ok {
			ex.Matched++
			if req.Limit > 0 && int64(ex.Matched) == req.Limit {
				break
			}
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	ex.KeysRead = count.Keys.Load()
	return ex, nil
}
