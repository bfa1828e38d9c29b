package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Scope is where a collection's calls run: a *Database (each call in a
// transaction of its own) or a *Tx (in that transaction).
type Scope interface{ scope() scope }

type scope struct {
	db *Database
	tx *txHeaders
}

func (db *Database) scope() scope { return scope{db: db} }

// request is a call of the scope on the collection coll ("": none).
func (s scope) request(r *route, coll string, body any) *request {
	return &request{route: r, params: params{db: s.db.name, collection: coll}, tx: s.tx, body: body}
}

func (s scope) call(ctx context.Context, r *route, coll string, body, out any) error {
	return s.db.c.call(ctx, s.request(r, coll, body), out)
}

// stream runs a read or search of coll. An error before the first item
// (the server's refusal of the call) is as the server gave it; one after
// (a broken connection, an error line) says what it ended.
func (s scope) stream(ctx context.Context, what string, r *route, coll string, body any, each func(json.RawMessage) bool) error {
	answered := false
	err := s.db.c.stream(ctx, s.request(r, coll, body), func(item json.RawMessage) bool {
		answered = true
		return each(item)
	})
	if err != nil && answered {
		return fmt.Errorf("%s %s: %w", what, coll, err)
	}
	return err
}

// Collection is a collection whose documents (or messages) are values of
// T, encoded with encoding/json.
type Collection[T any] struct {
	s    scope
	name string
}

// Coll returns the collection name of a database, or of a transaction,
// holding values of T. It does not call the server.
func Coll[T any](in Scope, name string) *Collection[T] {
	return &Collection[T]{s: in.scope(), name: name}
}

// Name is the collection's name.
func (c *Collection[T]) Name() string { return c.name }

func (c *Collection[T]) call(ctx context.Context, r *route, body, out any) error {
	return c.s.call(ctx, r, c.name, body, out)
}

// Key is a document's primary key, as a JSON object of its key fields
// ({"id":1}).
type Key = json.RawMessage

// Insert inserts documents; a key that exists already is an
// ALREADY_EXISTS error and nothing is inserted. It returns their keys and
// sets each document's generated key fields (autoGenerate) to the values
// the server chose.
func (c *Collection[T]) Insert(ctx context.Context, docs ...*T) ([]Key, error) {
	return c.write(ctx, routeInsert, docs)
}

// Replace inserts documents, or replaces those with the same key. It
// returns their keys and fills in generated key fields, as Insert.
func (c *Collection[T]) Replace(ctx context.Context, docs ...*T) ([]Key, error) {
	return c.write(ctx, routeReplace, docs)
}

func (c *Collection[T]) write(ctx context.Context, r *route, docs []*T) ([]Key, error) {
	what := r.path[strings.LastIndex(r.path, "/")+1:]
	if len(docs) == 0 {
		return nil, nil
	}
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("%s into %s: document %d is nil", what, c.name, i)
		}
	}
	var res struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := c.call(ctx, r, map[string]any{"documents": docs}, &res); err != nil {
		return nil, err
	}
	if len(res.Keys) != len(docs) {
		return res.Keys, fmt.Errorf("%s into %s: the server answered %d keys for %d documents", what, c.name, len(res.Keys), len(docs))
	}
	// A key is a JSON object of the key fields: decoding it into the
	// document sets them and leaves the other fields as they are.
	for i, k := range res.Keys {
		if err := json.Unmarshal(k, docs[i]); err != nil {
			return res.Keys, fmt.Errorf("%s into %s: set the key %s in document %d: %w", what, c.name, k, i, err)
		}
	}
	return res.Keys, nil
}

// writeRequest is an update's or delete's body.
type writeRequest struct {
	Filter  Filter `json:"filter"`
	Fields  any    `json:"fields,omitempty"`
	Options struct {
		Collation *collation `json:"collation,omitempty"`
		Limit     int64      `json:"limit,omitempty"`
	} `json:"options"`
}

// Update changes the documents filter selects and returns how many it
// changed. Options: Limit, CaseInsensitive.
func (c *Collection[T]) Update(ctx context.Context, filter Filter, update Update, opts ...Option) (int64, error) {
	o := collect(opts)
	req := writeRequest{Filter: filter, Fields: update}
	req.Options.Collation, req.Options.Limit = o.collation(), o.limit
	var res struct {
		ModifiedCount int64 `json:"modified_count"`
	}
	err := c.call(ctx, routeUpdate, req, &res)
	return res.ModifiedCount, err
}

// Delete deletes the documents filter selects (All: every one) and
// returns how many it deleted. Options: Limit, CaseInsensitive.
func (c *Collection[T]) Delete(ctx context.Context, filter Filter, opts ...Option) (int64, error) {
	o := collect(opts)
	req := writeRequest{Filter: filter}
	req.Options.Collation, req.Options.Limit = o.collation(), o.limit
	var res struct {
		ModifiedCount int64 `json:"modified_count"`
	}
	err := c.call(ctx, routeDelete, req, &res)
	return res.ModifiedCount, err
}

// Document is a document read, with what the server keeps beside it.
type Document[T any] struct {
	Data      T
	CreatedAt time.Time
	UpdatedAt time.Time // zero if never updated
	// ResumeToken, given to After, continues a read after this document.
	ResumeToken string
}

// readRequest is a read's body.
type readRequest struct {
	Filter  Filter          `json:"filter"`
	Fields  map[string]int  `json:"fields,omitempty"`
	Sort    []SortField     `json:"sort,omitempty"`
	Options readRequestOpts `json:"options"`
}

type readRequestOpts struct {
	Limit     int64      `json:"limit,omitempty"`
	Skip      int64      `json:"skip,omitempty"`
	Offset    string     `json:"offset,omitempty"`
	Collation *collation `json:"collation,omitempty"`
}

// Metadata is what the server keeps beside a document: when it was
// created and last updated (zero if never).
type Metadata struct {
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// ReadDocuments streams the documents filter selects, in primary-key
// order (or Sort's), with their times and resume tokens. Options: Limit,
// Skip, Fields, Sort, After, CaseInsensitive. Stop ranging to end the
// stream early.
func (c *Collection[T]) ReadDocuments(ctx context.Context, filter Filter, opts ...Option) iter.Seq2[Document[T], error] {
	return func(yield func(Document[T], error) bool) {
		o := collect(opts)
		req := readRequest{Filter: filter, Sort: o.sort, Options: readRequestOpts{Limit: o.limit, Skip: o.skip, Offset: o.offset, Collation: o.collation()}}
		if len(o.fields) > 0 {
			req.Fields = map[string]int{}
			for _, f := range o.fields {
				req.Fields[f] = 1
			}
		}
		stopped := false
		err := c.s.stream(ctx, "read", routeRead, c.name, req, func(raw json.RawMessage) bool {
			var item struct {
				Data        json.RawMessage `json:"data"`
				Metadata    Metadata        `json:"metadata"`
				ResumeToken string          `json:"resume_token"`
			}
			var d Document[T]
			err := json.Unmarshal(raw, &item)
			if err == nil {
				err = json.Unmarshal(item.Data, &d.Data)
			}
			if err != nil {
				stopped = !yield(d, fmt.Errorf("read %s: decode a document: %w", c.name, err))
				return !stopped
			}
			d.CreatedAt, d.UpdatedAt, d.ResumeToken = item.Metadata.CreatedAt, item.Metadata.UpdatedAt, item.ResumeToken
			stopped = !yield(d, nil)
			return !stopped
		})
		if err != nil && !stopped {
			yield(Document[T]{}, err)
		}
	}
}

// Read streams the documents filter selects, as ReadDocuments without
// what the server keeps beside them.
func (c *Collection[T]) Read(ctx context.Context, filter Filter, opts ...Option) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for d, err := range c.ReadDocuments(ctx, filter, opts...) {
			if !yield(d.Data, err) {
				return
			}
		}
	}
}

// ErrNoDocument is ReadOne's error when nothing matches.
var ErrNoDocument = errors.New("no document matches the filter")

// ReadOne returns the first document filter selects, or ErrNoDocument.
// Options as Read's.
func (c *Collection[T]) ReadOne(ctx context.Context, filter Filter, opts ...Option) (*T, error) {
	for d, err := range c.Read(ctx, filter, append(opts, Limit(1))...) {
		if err != nil {
			return nil, err
		}
		return &d, nil
	}
	return nil, ErrNoDocument
}
