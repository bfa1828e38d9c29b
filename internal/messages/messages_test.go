package messages

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/schema"
)

var bg = context.Background()

func fixture(t *testing.T, rawSchema string) (kv.Store, *catalog.Collection) {
	t.Helper()
	store, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s, err := schema.Parse("feed", []byte(rawSchema))
	if err != nil {
		t.Fatal(err)
	}
	return store, &catalog.Collection{DB: &catalog.Database{Name: "db", ID: 1}, Name: "feed", ID: 2, Rev: 1, Schema: s}
}

const feedSchema = `{"title":"feed","collection_type":"messages","properties":{"n":{"type":"integer"}}}`

func TestCheckPartition(t *testing.T) {
	for _, tc := range []struct {
		p   int64
		err string
	}{
		{0, ""},
		{1, "Invalid partition number `1`"},
		{-1, "Invalid partition number `-1`"},
		{1 << 40, "Invalid partition number `1099511627776`"},
	} {
		err := CheckPartition(tc.p)
		if tc.err == "" {
			if err != nil {
				t.Errorf("partition %d: %v", tc.p, err)
			}
			continue
		}
		if e, ok := apierror.From(err); !ok || e.Code != apierror.InvalidArgument || e.Message != tc.err {
			t.Errorf("partition %d: %v, want INVALID_ARGUMENT %q", tc.p, err, tc.err)
		}
	}
}

// Messages are stamped strictly after one another, even when the clock
// stands still or steps back, so their keys keep the publish order.
func TestStampsIncrease(t *testing.T) {
	s := New()
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return frozen }
	a, b := s.stamp(), s.stamp()
	frozen = frozen.Add(-time.Hour)
	c := s.stamp()
	if !(a < b && b < c) {
		t.Errorf("stamps %d %d %d do not increase", a, b, c)
	}
}

func publish(t *testing.T, store kv.Store, svc *Service, coll *catalog.Collection, msgs ...string) (*PublishResult, []changelog.Record, error) {
	t.Helper()
	tx, err := store.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	raw := make([][]byte, len(msgs))
	for i, m := range msgs {
		raw[i] = []byte(m)
	}
	res, err := svc.Publish(bg, tx, coll, 0, raw)
	if err != nil {
		return nil, nil, err
	}
	before, err := store.LastPosition(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	entries, _, err := store.ReadLog(bg, before, 0)
	if err != nil || len(entries) != 1 {
		t.Fatalf("log after publish: %v, %v", entries, err)
	}
	var recs []changelog.Record
	for _, b := range entries[0].Records {
		r, err := changelog.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return res, recs, nil
}

func TestPublish(t *testing.T) {
	store, coll := fixture(t, feedSchema)
	svc := New()
	res, recs, err := publish(t, store, svc, coll, `{"n":1}`, `{"n":2}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Keys) != 2 || len(recs) != 2 {
		t.Fatalf("keys %q, records %v", res.Keys, recs)
	}
	for i, r := range recs {
		if r.Op != changelog.Publish || r.Collection != "feed" || r.DB != "db" || string(r.Key) != string(res.Keys[i]) || string(r.Data) != fmt.Sprintf(`{"n":%d}`, i+1) {
			t.Errorf("record %d: %+v", i, r)
		}
		if part, nanos, err := keyspace.MessageKey(r.Key); err != nil || part != 0 || (i == 0 && nanos != res.Time.UnixNano()) {
			t.Errorf("key %d: partition %d, time %d, %v; want 0, %d", i, part, nanos, err, res.Time.UnixNano())
		}
	}
	// All or nothing: one invalid message fails the publish before it
	// writes anything.
	if _, _, err := publish(t, store, svc, coll, `{"n":3}`, `{"n":"four"}`); err == nil {
		t.Error("a publish with an invalid message succeeded")
	}
	docs, err := schema.Parse("feed", []byte(`{"title":"feed","properties":{"n":{"type":"integer"}},"primary_key":["n"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := publish(t, store, svc, &catalog.Collection{DB: coll.DB, Name: "feed", ID: 3, Schema: docs}, `{"n":1}`); apierror.CodeOf(err) != apierror.InvalidArgument {
		t.Errorf("publish to a documents collection: %v", err)
	}
}

func TestRead(t *testing.T) {
	store, coll := fixture(t, feedSchema)
	svc := New()
	for i := range 5 {
		if _, _, err := publish(t, store, svc, coll, fmt.Sprintf(`{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(req ReadRequest) (got []string, tokens [][]byte) {
		t.Helper()
		tx, err := store.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		err = svc.Read(bg, tx, coll, req, func(it Item) error {
			got = append(got, string(it.Data))
			tokens = append(tokens, slices.Clone(it.ResumeToken))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, tokens
	}
	all, tokens := read(ReadRequest{})
	if !slices.Equal(all, []string{`{"n":0}`, `{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`}) {
		t.Fatalf("all: %q", all)
	}
	f, err := filter.Parse([]byte(`{"n":{"$gte":2}}`), coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  ReadRequest
		want []string
	}{
		{"filter", ReadRequest{Filter: f}, []string{`{"n":2}`, `{"n":3}`, `{"n":4}`}},
		{"skip and limit", ReadRequest{Filter: f, Skip: 1, Limit: 1}, []string{`{"n":3}`}},
		{"after", ReadRequest{After: tokens[3]}, []string{`{"n":4}`}},
		{"after the last", ReadRequest{After: tokens[4]}, nil},
		{"projection", ReadRequest{Filter: f, Limit: 1, Exclude: map[string]bool{"n": true}}, []string{`{}`}},
	} {
		if got, _ := read(tc.req); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
