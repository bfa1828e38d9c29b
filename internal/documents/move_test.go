package documents

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// An update that changes the primary key moves the document: it is found
// under its new key only, by its index entries too, keeps its creation
// time, and the log says delete then insert.
func TestUpdateMovesTheKey(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	svc := New()
	parse := func(s string) filter.Filter {
		t.Helper()
		f, err := filter.Parse([]byte(s), coll.Schema, filter.Collation{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	run := func(fn func(tx kv.Tx) error) error {
		_, err := kv.Run(ctx, store, fn)
		return err
	}
	read := func(f string) string {
		t.Helper()
		var out []string
		if err := run(func(tx kv.Tx) error {
			out = readAll(t, svc, tx, coll, ReadRequest{Filter: parse(f)})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, " ")
	}
	update := func(f, fields string) (int, error) {
		var res *WriteResult
		err := run(func(tx kv.Tx) error {
			var err error
			res, err = svc.Update(ctx, tx, coll, parse(f), []byte(fields), 0)
			return err
		})
		if err != nil {
			return 0, err
		}
		return res.Modified, nil
	}
	if err := run(func(tx kv.Tx) error {
		_, err := svc.Insert(ctx, tx, coll, [][]byte{
			[]byte(`{"id":1,"name":"a"}`), []byte(`{"id":2,"name":"b"}`), []byte(`{"id":3,"name":"c"}`)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	start, err := store.LastPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if n, err := update(`{"name":"a"}`, `{"$set":{"id":10}}`); err != nil || n != 1 {
		t.Fatalf("move 1 to 10: %d, %v", n, err)
	}
	if got := read(`{}`); got != `{"id":2,"name":"b"} {"id":3,"name":"c"} {"id":10,"name":"a"}` {
		t.Fatalf("after the move: %s", got)
	}
	// The name's index entry points at the new key, the old key is gone.
	if got := read(`{"name":"a"}`); got != `{"id":10,"name":"a"}` {
		t.Errorf("by the index after the move: %q", got)
	}
	if got := read(`{"id":1}`); got != "" {
		t.Errorf("the old key still holds %q", got)
	}

	// Every document of a key range moved up by one: each is moved once,
	// though each new key is ahead of the scan (ids 2, 3 → 3, 4).
	if n, err := update(`{"id":{"$lt":5}}`, `{"$increment":{"id":1}}`); err != nil || n != 2 {
		t.Fatalf("shift: %d, %v", n, err)
	}
	if got := read(`{}`); got != `{"id":3,"name":"b"} {"id":4,"name":"c"} {"id":10,"name":"a"}` {
		t.Fatalf("after the shift: %s", got)
	}

	// Onto a key another document keeps: ALREADY_EXISTS, nothing written.
	_, err = update(`{"id":3}`, `{"$set":{"id":10}}`)
	var se *apierror.Error
	if !errors.As(err, &se) || se.Code != apierror.AlreadyExists || !strings.Contains(se.Message, `key {"id":10} exists already`) {
		t.Fatalf("move onto a taken key: %v", err)
	}
	// Two documents onto one key: the second finds the first there.
	if _, err := update(`{"id":{"$lt":5}}`, `{"$set":{"id":7}}`); !errors.As(err, &se) || se.Code != apierror.AlreadyExists {
		t.Fatalf("two onto one key: %v", err)
	}
	if got := read(`{}`); got != `{"id":3,"name":"b"} {"id":4,"name":"c"} {"id":10,"name":"a"}` {
		t.Fatalf("after the refused moves: %s", got)
	}
	// An update that leaves the keys as they are writes in place.
	if n, err := update(`{"id":{"$lt":5}}`, `{"$multiply":{"id":1}}`); err != nil || n != 2 {
		t.Fatalf("unchanged keys: %d, %v", n, err)
	}

	entries, _, err := store.ReadLog(ctx, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		for _, raw := range e.Records {
			r, err := changelog.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %x", r.Op, r.Key[len(r.Key)-2:]))
		}
	}
	// The keys' last two bytes: the integer's last byte and the tuple's end.
	t.Logf("log: %s", strings.Join(got, ", "))
	var ops []string
	for _, g := range got {
		ops = append(ops, strings.Fields(g)[0])
	}
	want := "delete insert delete delete insert insert update update"
	if s := strings.Join(ops, " "); s != want {
		t.Errorf("log records: %s, want %s", s, want)
	}

	// Setting a key field to null or unsetting it is refused.
	if _, err := update(`{"id":3}`, `{"$set":{"id":null}}`); err == nil || !strings.Contains(err.Error(), "primary key field can't be set as null") {
		t.Errorf("set key to null: %v", err)
	}
	if _, err := update(`{"id":3}`, `{"$unset":["id"]}`); err == nil || !strings.Contains(err.Error(), "primary key field can't be unset") {
		t.Errorf("unset key: %v", err)
	}
}
