package documents

import (
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
)

const uniqueSchema = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},
	"email":{"type":"string","unique":true},
	"n":{"type":"number","unique":true},
	"first":{"type":"string"},
	"last":{"type":"string"},
	"o":{"type":"object","properties":{"k":{"type":"string","unique":true}}},
	"b":{"type":"string","format":"byte","unique":true}},
	"unique":[["first","last"]]}`

// uniqueStep is one write of a script: op is insert, replace, or update
// or delete with a filter; fields is an update's. err is the start of the
// ALREADY_EXISTS message it must fail with, "" if it must succeed.
type uniqueStep struct {
	op, filter, fields string
	docs               []string
	err                string
}

// Writes on a collection with unique keys, one after another: each
// duplicate refused with ALREADY_EXISTS (nothing of its call written),
// each document re-written with its own values taken, null and absent
// values never checked, long strings compared whole.
func TestUniqueWrites(t *testing.T) {
	long := strings.Repeat("x", 200)
	clipped := `"` + strings.Repeat("x", 199) + "…"
	steps := []uniqueStep{
		{op: "insert", docs: []string{`{"id":1,"email":"a@x"}`}},
		{op: "insert", docs: []string{`{"id":2,"email":"a@x"}`}, err: `duplicate value for unique field 'email': "a@x" exists already`},
		{op: "insert", docs: []string{`{"id":2,"email":"b@x"}`}},
		{op: "replace", docs: []string{`{"id":2,"email":"a@x"}`}, err: `duplicate value for unique field 'email': "a@x"`},
		{op: "replace", docs: []string{`{"id":2,"email":"b@x","n":1}`}},                                                         // its own value
		{op: "update", filter: `{"id":2}`, fields: `{"$set":{"email":"a@x"}}`, err: `duplicate value for unique field 'email'`}, // an update that changes the field
		{op: "update", filter: `{"id":2}`, fields: `{"$set":{"email":"b@x","first":"z"}}`},                                      // its own value again
		{op: "update", filter: `{"id":{"$in":[1,2]}}`, fields: `{"$set":{"email":"both@x"}}`, err: `duplicate value for unique field 'email': "both@x"`},
		// Numbers are one domain: 1 and 1.0 are the same value.
		{op: "insert", docs: []string{`{"id":3,"n":1.0}`}, err: `duplicate value for unique field 'n': 1.0 exists already`},
		{op: "insert", docs: []string{`{"id":3,"n":1.5}`}},
		// Null and absent values are not checked.
		{op: "insert", docs: []string{`{"id":4,"email":null}`, `{"id":5}`, `{"id":6,"email":null,"o":{}}`}},
		// Entries keep 128 bytes of a string: values differing after them
		// are different, equal ones are refused.
		{op: "insert", docs: []string{`{"id":7,"email":"` + long + `a"}`, `{"id":8,"email":"` + long + `b"}`}},
		{op: "insert", docs: []string{`{"id":9,"email":"` + long + `a"}`}, err: `duplicate value for unique field 'email': ` + clipped + ` exists already`},
		{op: "replace", docs: []string{`{"id":8,"email":"` + long + `b"}`}},
		{op: "update", filter: `{"id":8}`, fields: `{"$set":{"email":"` + long + `c"}}`},
		{op: "update", filter: `{"id":8}`, fields: `{"$set":{"email":"` + long + `a"}}`, err: `duplicate value for unique field 'email'`},
		// A composite key: both values together; an absent one is not checked.
		{op: "insert", docs: []string{`{"id":10,"first":"Ada","last":"L"}`, `{"id":11,"first":"Ada","last":"M"}`, `{"id":12,"first":"Bob","last":"L"}`}},
		{op: "insert", docs: []string{`{"id":13,"first":"Ada","last":"L"}`}, err: `duplicate value for unique fields 'first', 'last': ["Ada", "L"] exists already`},
		{op: "insert", docs: []string{`{"id":13,"first":"Ada"}`, `{"id":14,"last":"L"}`}},
		{op: "update", filter: `{"id":11}`, fields: `{"$set":{"last":"L"}}`, err: `duplicate value for unique fields 'first', 'last'`},
		{op: "update", filter: `{"id":12}`, fields: `{"$set":{"first":"Cy"}}`},
		{op: "insert", docs: []string{`{"id":15,"first":"` + long + `a","last":"L"}`, `{"id":16,"first":"` + long + `b","last":"L"}`}},
		{op: "insert", docs: []string{`{"id":17,"first":"` + long + `b","last":"L"}`}, err: `duplicate value for unique fields 'first', 'last'`},
		// A nested field and a bytes field.
		{op: "insert", docs: []string{`{"id":18,"o":{"k":"z"},"b":"AAEC"}`}},
		{op: "insert", docs: []string{`{"id":19,"o":{"k":"z"}}`}, err: `duplicate value for unique field 'o.k': "z"`},
		{op: "insert", docs: []string{`{"id":19,"b":"AAEC"}`}, err: `duplicate value for unique field 'b': "AAEC"`},
		// A batch holding a value twice is refused whole.
		{op: "insert", docs: []string{`{"id":20,"email":"new@x"}`, `{"id":21,"email":"new@x"}`}, err: `duplicate value for unique field 'email': "new@x"`},
		{op: "replace", docs: []string{`{"id":20,"email":"new@x"}`, `{"id":21,"email":"new@x"}`}, err: `duplicate value for unique field 'email': "new@x"`},
		// A value freed by a delete is free; an update that moves a
		// document to another key keeps its value.
		{op: "delete", filter: `{"id":1}`},
		{op: "insert", docs: []string{`{"id":22,"email":"a@x"}`}},
		{op: "update", filter: `{"id":22}`, fields: `{"$set":{"id":23}}`},
		{op: "insert", docs: []string{`{"id":24,"email":"a@x"}`}, err: `duplicate value for unique field 'email'`},
	}
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, uniqueSchema)
		s := New()
		for i, st := range steps {
			before := snapshotAll(t, s, store, coll)
			err := runUniqueStep(s, store, coll, st)
			if st.err == "" {
				if err != nil {
					t.Fatalf("step %d (%s %.80v %s): %v", i, st.op, st.docs, st.fields, err)
				}
				continue
			}
			se, ok := apierror.From(err)
			if !ok || se.Code != apierror.AlreadyExists || !strings.HasPrefix(se.Message, st.err) {
				t.Fatalf("step %d (%s %.80v %s): %v, want ALREADY_EXISTS %q", i, st.op, st.docs, st.fields, err, st.err)
			}
			if after := snapshotAll(t, s, store, coll); after != before {
				t.Fatalf("step %d was refused but changed the collection:\n%s\nto\n%s", i, before, after)
			}
		}
		// In one transaction: a value freed earlier in it is free.
		if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
			f, _ := filter.Parse([]byte(`{"id":23}`), coll.Schema, filter.Collation{})
			if _, err := s.Delete(ctx, tx, coll, f, 0); err != nil {
				return err
			}
			_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":24,"email":"a@x"}`)})
			return err
		}); err != nil {
			t.Fatalf("a delete and an insert of its value in one transaction: %v", err)
		}
	})
}

func runUniqueStep(s *Service, store kv.Store, coll *catalog.Collection, st uniqueStep) error {
	docs := make([][]byte, len(st.docs))
	for i, d := range st.docs {
		docs[i] = []byte(d)
	}
	_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		var err error
		switch st.op {
		case "insert":
			_, err = s.Insert(ctx, tx, coll, docs)
		case "replace":
			_, err = s.Replace(ctx, tx, coll, docs)
		case "update", "delete":
			f, perr := filter.Parse([]byte(st.filter), coll.Schema, filter.Collation{})
			if perr != nil {
				return perr
			}
			if st.op == "update" {
				_, err = s.Update(ctx, tx, coll, f, []byte(st.fields), 0)
			} else {
				_, err = s.Delete(ctx, tx, coll, f, 0)
			}
		}
		return err
	})
	return err
}

// snapshotAll is every document of the collection, for comparing.
func snapshotAll(t *testing.T, s *Service, store kv.Store, coll *catalog.Collection) string {
	t.Helper()
	tx, err := store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	return strings.Join(readAll(t, s, tx, coll, ReadRequest{}), "\n")
}

// Adding a unique key over stored documents: refused naming a value two
// of them hold (whole values, past what entries keep; composite keys as
// a whole), taken when none is held twice.
func TestCheckUniqueHeld(t *testing.T) {
	long := strings.Repeat("y", 300)
	const plain = `{"title":"things","primary_key":["id"],"properties":{"id":{"type":"integer"},"email":{"type":"string"},"first":{"type":"string"},"last":{"type":"string"}}}`
	withKeys := func(top string) []byte {
		return []byte(strings.TrimSuffix(plain, "}") + `,"unique":` + top + `}`)
	}
	for _, tc := range []struct {
		name string
		docs []string
		top  string
		err  string
	}{
		{name: "no duplicate", docs: []string{`{"id":1,"email":"a"}`, `{"id":2,"email":"b"}`, `{"id":3}`, `{"id":4,"email":null}`}, top: `[["email"]]`},
		{name: "duplicate", docs: []string{`{"id":1,"email":"a"}`, `{"id":2,"email":"b"}`, `{"id":3,"email":"b"}`}, top: `[["email"]]`, err: `cannot make field 'email' unique: more than one document holds "b"`},
		{name: "long values differing late", docs: []string{`{"id":1,"email":"` + long + `1"}`, `{"id":2,"email":"` + long + `2"}`}, top: `[["email"]]`},
		{name: "long values equal", docs: []string{`{"id":1,"email":"` + long + `1"}`, `{"id":2,"email":"` + long + `2"}`, `{"id":3,"email":"` + long + `1"}`}, top: `[["email"]]`, err: `cannot make field 'email' unique: more than one document holds "yyy`},
		{name: "composite without duplicate", docs: []string{`{"id":1,"first":"a","last":"x"}`, `{"id":2,"first":"a","last":"y"}`, `{"id":3,"first":"b","last":"x"}`, `{"id":4,"first":"a"}`, `{"id":5,"first":"a"}`}, top: `[["first","last"]]`},
		{name: "composite duplicate", docs: []string{`{"id":1,"first":"a","last":"x"}`, `{"id":2,"first":"a","last":"y"}`, `{"id":3,"first":"a","last":"x"}`}, top: `[["first","last"]]`, err: `cannot make fields 'first', 'last' unique: more than one document holds ["a", "x"]`},
		{name: "second key", docs: []string{`{"id":1,"email":"a","first":"f"}`, `{"id":2,"email":"b","first":"f"}`}, top: `[["email"],["first"]]`, err: `cannot make field 'first' unique: more than one document holds "f"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, coll := newCollection(t, plain)
			s := New()
			docs := make([][]byte, len(tc.docs))
			for i, d := range tc.docs {
				docs[i] = []byte(d)
			}
			if _, err := kv.Run(ctx, store, func(tx kv.Tx) error { _, err := s.Insert(ctx, tx, coll, docs); return err }); err != nil {
				t.Fatal(err)
			}
			next, err := schema.Parse("things", withKeys(tc.top))
			if err != nil {
				t.Fatal(err)
			}
			_, err = kv.Run(ctx, store, func(tx kv.Tx) error {
				return s.CheckUniqueHeld(ctx, tx, coll, schema.AddedUnique(coll.Schema, next))
			})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if se, ok := apierror.From(err); !ok || se.Code != apierror.InvalidArgument || !strings.HasPrefix(se.Message, tc.err) {
				t.Fatalf("%v, want INVALID_ARGUMENT %q", err, tc.err)
			}
		})
	}
}
