// Package docs holds the document operations: insert, replace, update,
// delete, read and explain. Each takes the transaction it runs in, so a
// caller can run one alone (retried on conflict) or several in a client's
// transaction, and every one of them sees that transaction's own writes.
//
// Which documents an operation looks at, and in which order, is the
// business of the planner (package query); what it does with each is the
// business of this package.
package documents

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

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/jsondoc"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/query"
	"github.com/foliodb/folio/internal/reqinfo"
	"github.com/foliodb/folio/internal/schema"
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
	// Modified counts the documents an update changed or a delete removed.
	Modified int
}

func requireDocuments(coll *catalog.Collection, op string) error {
	if coll.Schema.CollectionType() != schema.Documents {
		return apierror.Errorf(apierror.InvalidArgument, "%s is only supported on collection type of 'documents'", op)
	}
	return nil
}

// Insert adds documents; if any of their keys exists (or two of them share
// one) nothing is written and it fails with ALREADY_EXISTS.
func (s *Service) Insert(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*WriteResult, error) {
	return s.write(ctx, tx, coll, docs, "insert", false, false)
}

// Replace inserts documents, replacing those whose keys exist.
func (s *Service) Replace(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*WriteResult, error) {
	return s.write(ctx, tx, coll, docs, "replace", true, false)
}

// InsertSignedOff and ReplaceSignedOff are Insert and Replace with the
// schema signed off: members the schema does not know are stored as they
// are (schema.ConformOpen).
func (s *Service) InsertSignedOff(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*WriteResult, error) {
	return s.write(ctx, tx, coll, docs, "insert", false, true)
}

func (s *Service) ReplaceSignedOff(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte) (*WriteResult, error) {
	return s.write(ctx, tx, coll, docs, "replace", true, true)
}

func (s *Service) write(ctx context.Context, tx kv.Tx, coll *catalog.Collection, docs [][]byte, op string, replace, signedOff bool) (*WriteResult, error) {
	if err := requireDocuments(coll, op); err != nil {
		return nil, err
	}
	res := &WriteResult{Time: s.Now(), Keys: make([]json.RawMessage, 0, len(docs))}
	gen := &sequences{ctx: ctx, tx: tx, coll: coll}
	// Validate every document first, then look up all their keys in one
	// read (one round trip on PostgreSQL), then write. Errors still come in
	// the order of the documents: a document's own before the existence of
	// any after it.
	type prepared struct {
		doc, key []byte
		pk       []any
	}
	batch := make([]prepared, 0, len(docs))
	var invalid error // the first document that is not valid; none after it is looked at
	for _, doc := range docs {
		doc, pk, err := s.prepare(coll, doc, gen, res.Time, signedOff)
		if err != nil {
			invalid = err
			break
		}
		key, err := keyspace.Document(coll.ID, pk)
		if err != nil {
			invalid = apierror.Errorf(apierror.InvalidArgument, "invalid primary key: %v", err)
			break
		}
		batch = append(batch, prepared{doc: doc, key: key, pk: pk})
	}
	keys := make([][]byte, len(batch))
	for i, p := range batch {
		keys[i] = p.key
	}
	olds, err := tx.GetMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	written := make(map[string][]byte, len(batch)) // records this call wrote, by key
	for i, p := range batch {
		old := olds[i]
		if rec, again := written[string(p.key)]; again {
			if !replace {
				return nil, duplicateKey(coll.Schema, p.pk, "is given twice in the request")
			}
			old = rec
		}
		if old, err = s.clearExpired(tx, coll, p.key, old, res.Time); err != nil {
			return nil, err
		}
		if old != nil && !replace {
			return nil, duplicateKey(coll.Schema, p.pk, "exists already")
		}
		op := changelog.Insert
		if replace {
			op = changelog.Replace
		}
		rec := encodeRecord(res.Time, time.Time{}, p.doc)
		if err := s.put(ctx, tx, coll, op, p.key, old, rec); err != nil {
			return nil, err
		}
		written[string(p.key)] = rec
		res.Keys = append(res.Keys, keyJSON(coll.Schema, p.pk))
	}
	if invalid != nil {
		return nil, invalid
	}
	return res, nil
}

// prepare validates a new document written at (keeping members the
// schema does not know when signedOff), and fills its defaults and its
// generated key values.
func (s *Service) prepare(coll *catalog.Collection, doc []byte, gen schema.Generator, at time.Time, signedOff bool) ([]byte, []any, error) {
	if len(doc) > s.MaxDocumentSize {
		return nil, nil, apierror.Errorf(apierror.InvalidArgument, "document of %d bytes exceeds the maximum of %d bytes", len(doc), s.MaxDocumentSize)
	}
	conform := coll.Schema.Conform
	if signedOff {
		conform = coll.Schema.ConformOpen
	}
	doc, err := conform(doc)
	if err != nil {
		return nil, nil, err
	}
	if doc, err = coll.Schema.FillDefaults(doc, at); err != nil {
		return nil, nil, err
	}
	doc, err = coll.Schema.FillAutoGenerated(doc, gen)
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
// change with a document changes in one place: its unique keys' check,
// its index entries (only those whose values changed), the collection's
// statistics and the change log entry.
func (s *Service) put(ctx context.Context, tx kv.Tx, coll *catalog.Collection, op changelog.Op, key, old, rec []byte) error {
	if err := s.checkUnique(ctx, tx, coll, key, old, rec); err != nil {
		return err
	}
	if err := s.putIndexes(tx, coll, key, old, rec); err != nil {
		return err
	}
	if err := tx.Set(key, rec); err != nil {
		return err
	}
	if err := s.count(tx, coll, old == nil, int64(len(rec)-len(old))); err != nil {
		return err
	}
	return logChange(tx, coll, op, key, rec[recordHeaderSize:], before(old))
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
	var bytes int64
	for _, e := range removed {
		k := index.Key(coll.ID, e, suffix)
		if err := tx.Clear(k); err != nil {
			return err
		}
		bytes -= int64(len(k))
	}
	for _, e := range added {
		k := index.Key(coll.ID, e, suffix)
		if err := tx.Set(k, nil); err != nil {
			return err
		}
		bytes += int64(len(k))
	}
	return addIndexBytes(tx, coll, bytes)
}

// addIndexBytes keeps the collection's count of index bytes, by an atomic
// add that never makes concurrent writers conflict.
func addIndexBytes(tx kv.Tx, coll *catalog.Collection, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	return tx.Add(keyspace.IndexSize(coll.ID), bytes)
}

func (s *Service) remove(tx kv.Tx, coll *catalog.Collection, key, old []byte) error {
	return s.removeFor(tx, coll, key, old, false)
}

// removeFor deletes the document stored under key as old; expired says
// that it is deleted for its ttl, which its change log record tells.
func (s *Service) removeFor(tx kv.Tx, coll *catalog.Collection, key, old []byte, expired bool) error {
	prev, err := index.Entries(coll.Schema, old[recordHeaderSize:])
	if err != nil {
		return fmt.Errorf("docs: index entries of the stored %x: %w", key, err)
	}
	suffix := key[len(keyspace.Documents(coll.ID).Begin):]
	var bytes int64
	for _, e := range prev {
		k := index.Key(coll.ID, e, suffix)
		if err := tx.Clear(k); err != nil {
			return err
		}
		bytes -= int64(len(k))
	}
	if !s.noIndexes {
		if err := addIndexBytes(tx, coll, bytes); err != nil {
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
	r := changeRecord(coll, changelog.Delete, key, nil, old[recordHeaderSize:])
	r.Expired = expired
	return tx.AppendLog(r.Encode())
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

// logChange appends a document's change to the log, with the document
// before it (nil if there was none), which filtered streams match against.
func logChange(tx kv.Tx, coll *catalog.Collection, op changelog.Op, key, data, prev []byte) error {
	r := changeRecord(coll, op, key, data, prev)
	return tx.AppendLog(r.Encode())
}

// changeRecord is the change log record of a write of a document of coll.
func changeRecord(coll *catalog.Collection, op changelog.Op, key, data, prev []byte) changelog.Record {
	return changelog.Record{Op: op, NS: coll.DB.NS, DB: coll.DB.Name, DBID: coll.DB.ID, Collection: coll.Name, CollID: coll.ID, Rev: coll.Rev, Key: key, Data: data, Before: prev}
}

// before is the document of a stored record old, or nil if there was none.
func before(old []byte) []byte {
	if old == nil {
		return nil
	}
	return old[recordHeaderSize:]
}

// duplicateKey is the error of an insert whose document's key pk is
// taken: the original's message, then the key and why.
func duplicateKey(s *schema.Schema, pk []any, why string) error {
	key := apierror.Clip(string(keyJSON(s, pk)), 200)
	return apierror.Errorf(apierror.AlreadyExists, "duplicate key value, violates key constraint: key %s %s", key, why)
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
		return 0, apierror.Errorf(apierror.ResourceExhausted, "int32 key '%s' has run out of values", field)
	}
	return int32(next), g.tx.Set(key, kv.EncodeCounter(next))
}

// Update applies fields ({"$set": {...}, "$unset": [...]}) to the documents
// matching f, which must not be empty: to at most limit of them, the first
// in primary-key order, if limit is above 0. An update that changes a
// primary key field moves the document to its new key (a delete and an
// insert in the change log), as the final Tigris server did.
func (s *Service) Update(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter, fields []byte, limit int64) (*WriteResult, error) {
	if err := requireDocuments(coll, "update"); err != nil {
		return nil, err
	}
	if f.Root == nil {
		return nil, apierror.Errorf(apierror.InvalidArgument, "updating all documents is not allowed")
	}
	u, err := parseUpdate(coll.Schema, fields)
	if err != nil {
		return nil, err
	}
	res := &WriteResult{Time: s.Now()}
	var moves []move
	err = s.eachMatch(ctx, tx, coll, f, func(key, rec []byte, r Record) (bool, error) {
		doc, err := u.apply(r.Data)
		if err != nil {
			return false, err
		}
		if doc, err = coll.Schema.StampUpdate(doc, res.Time); err != nil {
			return false, err
		}
		if len(doc) > s.MaxDocumentSize {
			return false, apierror.Errorf(apierror.InvalidArgument, "updated document of %d bytes exceeds the maximum of %d bytes", len(doc), s.MaxDocumentSize)
		}
		// Open: members the schema does not know can only come from the
		// stored document (a signed-off write); what the update set was
		// checked against the schema when it was parsed.
		if err := coll.Schema.ValidateOpen(doc); err != nil {
			return false, err
		}
		pk, err := coll.Schema.ExtractKey(doc)
		if err != nil {
			return false, err
		}
		newKey, err := keyspace.Document(coll.ID, pk)
		if err != nil {
			return false, apierror.Errorf(apierror.InvalidArgument, "invalid primary key: %v", err)
		}
		res.Modified++
		updated := encodeRecord(r.CreatedAt, res.Time, doc)
		if !bytes.Equal(newKey, key) {
			// The update changed a key field: the document moves. It leaves
			// its old key now and takes the new one after the scan, which
			// could otherwise meet it again there and update it twice.
			moves = append(moves, move{key: newKey, pk: pk, rec: updated})
			return !reached(res.Modified, limit), s.remove(tx, coll, key, rec)
		}
		return !reached(res.Modified, limit), s.put(ctx, tx, coll, changelog.Update, key, rec, updated)
	})
	if err != nil {
		return nil, err
	}
	if err := s.settle(ctx, tx, coll, moves); err != nil {
		return nil, err
	}
	return res, nil
}

// move is a document an update moved to a new primary key: its record
// (with its creation time and the update's time), to be written there.
type move struct {
	key []byte
	pk  []any
	rec []byte
}

// settle writes the moved documents at their new keys, each an insert: a
// key that another document holds (one the update left in place, or moved
// there first) fails the update with ALREADY_EXISTS, and the caller's
// transaction then writes nothing.
func (s *Service) settle(ctx context.Context, tx kv.Tx, coll *catalog.Collection, moves []move) error {
	for _, m := range moves {
		old, err := s.get(ctx, tx, m.key)
		if err != nil {
			return err
		}
		if old, err = s.clearExpired(tx, coll, m.key, old, s.Now()); err != nil {
			return err
		}
		if old != nil {
			return duplicateKey(coll.Schema, m.pk, "exists already: the update would move a document onto it")
		}
		if err := s.put(ctx, tx, coll, changelog.Insert, m.key, nil, m.rec); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes the documents matching f (the empty filter matches all):
// at most limit of them, the first in primary-key order, if limit is above
// 0. Modified counts them.
func (s *Service) Delete(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter, limit int64) (*WriteResult, error) {
	if err := requireDocuments(coll, "delete"); err != nil {
		return nil, err
	}
	res := &WriteResult{Time: s.Now()}
	err := s.eachMatch(ctx, tx, coll, f, func(key, rec []byte, _ Record) (bool, error) {
		res.Modified++
		return !reached(res.Modified, limit), s.remove(tx, coll, key, rec)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// reached reports whether a write limited to limit documents (none if limit
// is 0 or less) has written its last one with the n-th.
func reached(n int, limit int64) bool { return limit > 0 && int64(n) >= limit }

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

// Read calls emit for each matching document, in primary-key order or in
// the order of req.Sort. Data in an item is valid only during the call.
func (s *Service) Read(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest, emit func(ReadItem) error) error {
	_, _, err := s.read(ctx, tx, coll, req, emit)
	return err
}

// read runs a read, and reports the plan it ran and how many documents it
// found matching the filter (those skipped included).
func (s *Service) read(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest, emit func(ReadItem) error) (query.Plan, int, error) {
	hint := int64(0)
	if req.Limit > 0 {
		hint = req.Limit + req.Skip
	}
	it, plan, err := query.Run(ctx, tx, coll, query.Request{Filter: req.Filter, After: req.After, Limit: hint, Sort: req.Sort, Doc: recordData, Times: recordTimes, Counts: &s.counts, Now: s.Now()})
	if err != nil {
		return plan, 0, err
	}
	defer it.Close()
	s.logPlan(ctx, coll, plan)
	pg := &pager{skip: req.Skip, limit: req.Limit, emit: emit}
	if plan.Order == query.SortInMemory {
		matched, err := sortInMemory(ctx, it, coll, req, pg)
		return plan, matched, err
	}
	matched := 0
	err = matches(ctx, it, req.Filter, func(key, _ []byte, r Record) (bool, error) {
		matched++
		item, err := readItem(key, r, req)
		if err != nil {
			return false, err
		}
		return pg.take(item)
	})
	return plan, matched, err
}

// readItem renders the document stored under key as a read returns it.
func readItem(key []byte, r Record, req ReadRequest) (ReadItem, error) {
	data, err := jsondoc.Project(r.Data, req.Include, req.Exclude)
	if err != nil {
		return ReadItem{}, fmt.Errorf("docs: stored document at %x: %w", key, err)
	}
	return ReadItem{Data: data, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ResumeToken: key}, nil
}

// logPlan notes a plan for the request's log line (which shows it when the
// request is slow), and logs it at debug level.
func (s *Service) logPlan(ctx context.Context, coll *catalog.Collection, plan query.Plan) {
	reqinfo.From(ctx).NotePlan(coll.Name, plan)
	// Enabled first: the arguments (the plan's text) cost even when the
	// line is dropped, on every read.
	if s.Log != nil && s.Log.Enabled(ctx, slog.LevelDebug) {
		s.Log.Debug("query plan", "collection", coll.Name, "plan", plan.String(), "candidates", plan.Candidates)
	}
}

// eachMatch calls fn for every document matching f, in primary-key order,
// until fn returns false.
func (s *Service) eachMatch(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter, fn func(key, rec []byte, r Record) (bool, error)) error {
	it, plan, err := query.Run(ctx, tx, coll, query.Request{Filter: f, Doc: recordData, Counts: &s.counts, Now: s.Now()})
	if err != nil {
		return err
	}
	defer it.Close()
	s.logPlan(ctx, coll, plan)
	return matches(ctx, it, f, fn)
}

// ctxCheckEvery is how many candidates matches reads between looks at its
// context: often enough to stop within a millisecond or so of a deadline,
// seldom enough to cost nothing.
const ctxCheckEvery = 64

// matches calls fn for each candidate of it that matches f, in the
// iterator's order, until fn returns false or ctx is done.
func matches(ctx context.Context, it query.Iterator, f filter.Filter, fn func(key, rec []byte, r Record) (bool, error)) error {
	for n := 1; it.Next(); n++ {
		if n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec := it.Value()
		r, err := decodeRecord(rec)
		if err != nil {
			return fmt.Errorf("%w at %x", err, it.Key())
		}
		ok, err := f.MatchesAt(r.Data, filter.Times{Created: r.CreatedAt, Updated: r.UpdatedAt})
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

// Explanation tells how a read ran.
type Explanation struct {
	Plan       string `json:"plan"`
	Candidates int    `json:"candidates"` // documents an index plan fetched
	Matched    int    `json:"matched"`    // matches the read found, skipped ones included
	KeysRead   int64  `json:"keys_read"`  // index entries and documents read
}

// Explain runs a read without returning its documents, counting the keys
// it reads, and tells which plan it took: for developers and operators
// checking that a filter or a sort is served by an index. It takes the
// same path as Read, so the plan is the one the read would use.
func (s *Service) Explain(ctx context.Context, tx kv.Tx, coll *catalog.Collection, req ReadRequest) (*Explanation, error) {
	var count kv.ReadCount
	plan, matched, err := s.read(ctx, kv.CountReads(tx, &count), coll, req, func(ReadItem) error { return nil })
	if err != nil {
		return nil, err
	}
	return &Explanation{Plan: plan.String(), Candidates: plan.Candidates, Matched: matched, KeysRead: count.Keys.Load()}, nil
}

// FetchMany returns the documents of coll stored under storage keys
// (search hits), in one read (one round trip on PostgreSQL): found[i]
// tells whether keys[i] holds a document, records[i]; a document past its
// ttl is not found, as no read finds it. Search reads each hit's current
// document by its key. The documents are read into *buf where the store
// can (kv.GetManyInto): Data is valid until the caller reuses *buf, and is
// not to be modified.
func (s *Service) FetchMany(ctx context.Context, tx kv.Tx, coll *catalog.Collection, keys [][]byte, buf *[]byte) (records []Record, found []bool, err error) {
	vs, err := kv.GetManyInto(ctx, tx, keys, buf)
	if err != nil {
		return nil, nil, err
	}
	records, found = make([]Record, len(keys)), make([]bool, len(keys))
	now := s.Now()
	for i, v := range vs {
		if v == nil || expired(coll, v, now) {
			continue
		}
		r, err := decodeRecord(v)
		if err != nil {
			return nil, nil, fmt.Errorf("%w at %x", err, keys[i])
		}
		records[i], found[i] = r, true
	}
	return records, found, nil
}

// Count counts the documents f matches. Where the filter allows it counts
// index entries and reads no document (query.Count); otherwise it reads
// the candidates of the filter's read plan and checks each. plan tells
// which way it went.
func (s *Service) Count(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter) (n int64, plan query.Plan, err error) {
	if err := requireDocuments(coll, "count"); err != nil {
		return 0, query.Plan{}, err
	}
	n, plan, ok, err := query.Count(ctx, tx, coll, f)
	if err != nil {
		return 0, plan, err
	}
	if ok {
		s.logPlan(ctx, coll, plan)
		return n, plan, nil
	}
	it, plan, err := query.Run(ctx, tx, coll, query.Request{Filter: f, Doc: recordData, Counts: &s.counts, Now: s.Now()})
	if err != nil {
		return 0, plan, err
	}
	defer it.Close()
	s.logPlan(ctx, coll, plan)
	err = matches(ctx, it, f, func([]byte, []byte, Record) (bool, error) {
		n++
		return true, nil
	})
	return n, plan, err
}

// ExplainCount counts as Count does, counting the keys it reads, and tells
// which plan it took.
func (s *Service) ExplainCount(ctx context.Context, tx kv.Tx, coll *catalog.Collection, f filter.Filter) (*Explanation, error) {
	var count kv.ReadCount
	n, plan, err := s.Count(ctx, kv.CountReads(tx, &count), coll, f)
	if err != nil {
		return nil, err
	}
	return &Explanation{Plan: plan.String(), Candidates: plan.Candidates, Matched: int(n), KeysRead: count.Keys.Load()}, nil
}
