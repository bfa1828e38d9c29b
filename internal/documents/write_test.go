package documents

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// An insert answers each document's key in order; a batch with an
// invalid document fails whole, whatever came before it.
func TestInsertResult(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	s := New()
	var res *WriteResult
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) (err error) {
		res, err = s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":2}`), []byte(`{"id":1,"name":"a"}`)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if res == nil || len(res.Keys) != 2 || string(res.Keys[0]) != `{"id":2}` || string(res.Keys[1]) != `{"id":1}` {
		t.Fatalf("insert of ids 2 and 1 answered %+v, want their keys in order", res)
	}
	_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":3}`), []byte(`{"id":4,"age":"old"}`)})
		return err
	})
	if se, ok := apierror.From(err); !ok || se.Code != apierror.InvalidArgument {
		t.Fatalf("a batch with an invalid second document: %v, want INVALID_ARGUMENT", err)
	}
	tx, err := store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if got := readAll(t, s, tx, coll, ReadRequest{}); len(got) != 2 {
		t.Errorf("after the refused batch the collection holds %v, want ids 1 and 2 only", got)
	}
}

// A document of exactly MaxDocumentSize bytes is taken, inserted or made
// by an update; one byte more is not.
func TestDocumentSizeAtTheBound(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	s := New()
	// {"id":N,"name":"xxx…"}: the name pads the document to size bytes.
	doc := func(id, size int) []byte {
		head := fmt.Sprintf(`{"id":%d,"name":"`, id)
		return []byte(head + strings.Repeat("x", size-len(head)-2) + `"}`)
	}
	s.MaxDocumentSize = 200
	insert := func(b []byte) error {
		_, err := kv.Run(ctx, store, func(tx kv.Tx) error { _, err := s.Insert(ctx, tx, coll, [][]byte{b}); return err })
		return err
	}
	if err := insert(doc(1, 200)); err != nil {
		t.Errorf("a document of exactly the bound: %v", err)
	}
	if err := insert(doc(2, 201)); !strings.Contains(fmt.Sprint(err), "document of 201 bytes exceeds the maximum of 200 bytes") {
		t.Errorf("a document one byte past the bound: %v", err)
	}
	// An update to exactly the bound, then one byte past it. Stamping adds
	// nothing: the schema has no updatedAt field.
	if err := insert(doc(3, 100)); err != nil {
		t.Fatal(err)
	}
	update := func(size int) error {
		f, err := filter.Parse([]byte(`{"id":3}`), coll.Schema, filter.Collation{})
		if err != nil {
			return err
		}
		name := strings.Repeat("y", size-len(`{"id":3,"name":""}`))
		_, err = kv.Run(ctx, store, func(tx kv.Tx) error {
			_, err := s.Update(ctx, tx, coll, f, []byte(`{"$set":{"name":"`+name+`"}}`), 0)
			return err
		})
		return err
	}
	if err := update(200); err != nil {
		t.Errorf("an update to exactly the bound: %v", err)
	}
	err := update(201)
	if se, ok := apierror.From(err); !ok || se.Code != apierror.InvalidArgument || !strings.Contains(se.Message, "updated document of 201 bytes") {
		t.Errorf("an update one byte past the bound: %v", err)
	}
}

// A delete answers how many documents it removed, at most its limit.
func TestDeleteResult(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	s := New()
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":1}`), []byte(`{"id":2}`), []byte(`{"id":3}`)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	all, err := filter.Parse([]byte(`{}`), coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ limit, want int64 }{{2, 2}, {0, 1}, {0, 0}} {
		var res *WriteResult
		if _, err := kv.Run(ctx, store, func(tx kv.Tx) (err error) {
			res, err = s.Delete(ctx, tx, coll, all, tc.limit)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if res == nil || res.Modified != int(tc.want) {
			t.Errorf("delete with limit %d: %+v, want %d removed", tc.limit, res, tc.want)
		}
	}
}

// A write over many matches stops once its context is done, within
// ctxCheckEvery candidates, though the store's scan goes on (the embedded
// store looks at the context once in 256 keys).
func TestWriteStopsAtContextEnd(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	s := New()
	docs := make([][]byte, 2*ctxCheckEvery)
	for i := range docs {
		docs[i] = fmt.Appendf(nil, `{"id":%d}`, i)
	}
	if _, err := kv.Run(ctx, store, func(tx kv.Tx) error { _, err := s.Insert(ctx, tx, coll, docs); return err }); err != nil {
		t.Fatal(err)
	}
	all, err := filter.Parse([]byte(`{}`), coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The context ends once the delete's scan has begun.
	done, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := s.Delete(done, cancellingTx{Tx: tx, cancel: cancel}, coll, all, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a delete of %d documents whose context ends as it begins: %+v, %v; want context.Canceled", len(docs), res, err)
	}
}

// cancellingTx calls cancel at the first step of any scan.
type cancellingTx struct {
	kv.Tx
	cancel func()
}

func (c cancellingTx) Scan(ctx context.Context, r kv.Range, opts kv.ScanOptions) kv.Iterator {
	return cancellingIterator{Iterator: c.Tx.Scan(ctx, r, opts), cancel: c.cancel}
}

type cancellingIterator struct {
	kv.Iterator
	cancel func()
}

func (c cancellingIterator) Next() bool {
	c.cancel()
	return c.Iterator.Next()
}
