package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// errRead is what a failingTx's reads return once its budget is spent.
var errRead = errors.New("injected read failure")

// readBudget is how many more keys a failingTx may read (counted as
// kv.CountReads counts them: one per Get, one per key a scan returns)
// before every read fails with errRead. A negative budget never runs out.
type readBudget struct {
	left   int
	failed bool // a read was refused
}

func (b *readBudget) take() bool {
	if b.left == 0 {
		b.failed = true
		return false
	}
	if b.left > 0 {
		b.left--
	}
	return true
}

// failReads returns tx with its reads failing once b runs out: a storage
// error in the middle of a lookup, at any read.
func failReads(tx kv.Tx, b *readBudget) kv.Tx { return &failingTx{Tx: tx, b: b} }

type failingTx struct {
	kv.Tx
	b *readBudget
}

func (t *failingTx) Get(ctx context.Context, key []byte) ([]byte, error) {
	if !t.b.take() {
		return nil, errRead
	}
	return t.Tx.Get(ctx, key)
}

func (t *failingTx) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	for range keys {
		if !t.b.take() {
			return nil, errRead
		}
	}
	return t.Tx.GetMany(ctx, keys)
}

func (t *failingTx) Scan(ctx context.Context, r kv.Range, opts kv.ScanOptions) kv.Iterator {
	return &failingIterator{Iterator: t.Tx.Scan(ctx, r, opts), b: t.b}
}

func (t *failingTx) Snapshot() kv.Reader { return &failingReader{Reader: t.Tx.Snapshot(), b: t.b} }

type failingReader struct {
	kv.Reader
	b *readBudget
}

func (r *failingReader) Get(ctx context.Context, key []byte) ([]byte, error) {
	if !r.b.take() {
		return nil, errRead
	}
	return r.Reader.Get(ctx, key)
}

func (r *failingReader) GetMany(ctx context.Context, keys [][]byte) ([][]byte, error) {
	for range keys {
		if !r.b.take() {
			return nil, errRead
		}
	}
	return r.Reader.GetMany(ctx, keys)
}

func (r *failingReader) Scan(ctx context.Context, rng kv.Range, opts kv.ScanOptions) kv.Iterator {
	return &failingIterator{Iterator: r.Reader.Scan(ctx, rng, opts), b: r.b}
}

type failingIterator struct {
	kv.Iterator
	b   *readBudget
	err error
}

func (i *failingIterator) Next() bool {
	if i.err != nil || !i.Iterator.Next() {
		return false
	}
	if !i.b.take() {
		i.err = errRead
		return false
	}
	return true
}

func (i *failingIterator) Err() error {
	if i.err != nil {
		return i.err
	}
	return i.Iterator.Err()
}

// TestReadErrorsReported fails the reads of every kind of lookup from each
// read on, in turn: the lookup must end with the error (from Run or from
// the iterator's Err), never as if the candidates had run out, and what it
// yielded before must be the start of what it yields without the failure.
// An index-served read that dropped the error of a document fetch, or of
// the index scan it walks, would return a silently short answer.
func TestReadErrorsReported(t *testing.T) {
	c := &planCase{}
	if err := c.create(t, `{"title":"things","primary_key":["id"],"properties":{"id":{"type":"integer"},"a":{"type":"integer"},"s":{"type":"string"}}}`); err != nil {
		t.Fatal(err)
	}
	var docs []string
	for i := range 40 {
		if i%6 == 5 { // some documents without a, which only a scan finds
			docs = append(docs, fmt.Sprintf(`{"id":%d,"s":"v%d"}`, i, i%3))
			continue
		}
		docs = append(docs, fmt.Sprintf(`{"id":%d,"a":%d,"s":"v%d"}`, i, i%5, i%3))
	}
	if _, err := c.insert(docs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filter string
		sort   Sort
		after  int64
		kind   string // the plan's kind, to be sure each way is covered
	}{
		{filter: `{"a":3}`, kind: "index"},
		{filter: `{"a":3}`, after: 13, kind: "index"},
		{filter: `{"$or":[{"a":1},{"id":{"$lt":3}}]}`, kind: "index"},
		{filter: `{"id":7}`, kind: "point"},
		{filter: `{"id":{"$gte":30}}`, kind: "primary key range"},
		{filter: `{"s":{"$gte":"v1"}}`, kind: "scan"},
		{kind: "scan"},
		{filter: `{"a":{"$gte":3}}`, sort: Sort{{Path: "a"}}, kind: "index order"},
		{filter: `{"a":{"$lt":2}}`, sort: Sort{{Path: "a", Desc: true}}, kind: "index order"},
		{sort: Sort{{Path: "a"}}, kind: "index order"},
		{sort: Sort{{Path: "a", Desc: true}}, kind: "index order"},
		{filter: `{"a":2}`, sort: Sort{{Path: "s"}}, kind: "index"},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("filter=%s sort=%s after=%d", tc.filter, tc.sort, tc.after)
		t.Run(name, func(t *testing.T) {
			req := Request{Sort: tc.sort}
			if tc.filter != "" {
				f, err := filter.Parse([]byte(tc.filter), c.coll.Schema, filter.Collation{})
				if err != nil {
					t.Fatal(err)
				}
				req.Filter = f
			}
			if tc.after > 0 {
				req.After, _ = keyspace.Document(c.coll.ID, []any{tc.after})
			}
			all := &readBudget{left: -1}
			want, plan, err := c.lookup(req, all)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Kind != tc.kind {
				t.Fatalf("plan %q, want a plan of kind %q", plan, tc.kind)
			}
			if len(want) == 0 {
				t.Fatal("no candidates: nothing to fail in the middle of")
			}
			for n := 0; ; n++ {
				b := &readBudget{left: n}
				got, _, err := c.lookup(req, b)
				if !b.failed {
					if err != nil || !slices.Equal(got, want) {
						t.Fatalf("%d reads allowed, none refused: got %v, %v; want %v", n, got, err, want)
					}
					break
				}
				if !errors.Is(err, errRead) {
					t.Fatalf("the read after %d keys failed, but the lookup ended with %v after %v (of %v)", n, err, got, want)
				}
				if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
					t.Fatalf("the read after %d keys failed: yielded %v before the error, not the start of %v", n, got, want)
				}
			}
		})
	}
}

// lookup runs req on c's collection with reads limited by b and returns
// the primary keys of the candidates, in order, and the error that ended
// the lookup, from Run or from the iterator.
func (c *planCase) lookup(req Request, b *readBudget) ([]string, Plan, error) {
	tx, err := c.store.Begin(ctx)
	if err != nil {
		return nil, Plan{}, err
	}
	defer tx.Rollback()
	it, plan, err := Run(ctx, failReads(tx, b), c.coll, req)
	if err != nil {
		return nil, plan, err
	}
	defer it.Close()
	var keys []string
	for it.Next() {
		pk, err := c.coll.Schema.ExtractKey(it.Value())
		if err != nil {
			return keys, plan, err
		}
		keys = append(keys, fmt.Sprint(pk...))
	}
	return keys, plan, it.Err()
}
