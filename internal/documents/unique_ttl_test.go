package documents

import (
	"errors"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/query"
	"github.com/foliodb/folio/internal/schema"
)

const ttlUniqueSchema = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},
	"email":{"type":"string","unique":true},
	"expires_at":{"type":"string","format":"date-time"}},
	"ttl":{"field":"expires_at"}}`

// An expired document, which no read returns, holds no unique value
// although the sweeper has not deleted it yet: a new document may take
// its value, and the expired one is deleted in that write (logged as
// expired).
func TestExpiredDocumentHoldsNoUniqueValue(t *testing.T) {
	store, coll := newCollection(t, ttlUniqueSchema)
	now := expiry.Add(-time.Hour)
	s := clockedService(&now)
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":1,"email":"a@x","expires_at":"2026-11-28T10:00:00Z"}`)})
		return err
	})
	now = expiry.Add(time.Minute) // id 1 has expired, not swept
	if got := ids(t, s, store, coll, `{"email":"a@x"}`); got != "" {
		t.Fatalf("expired document read: %s", got)
	}
	_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":2,"email":"a@x"}`)})
		return err
	})
	if err != nil {
		t.Fatalf("insert of a value only an expired (invisible) document holds: %v", err)
	}
	run(t, store, func(tx kv.Tx) error {
		k, err := keyspace.Document(coll.ID, []any{int64(1)})
		if err != nil {
			return err
		}
		if _, err := tx.Get(ctx, k); !errors.Is(err, kv.ErrNotFound) {
			t.Errorf("the expired holder is still stored after the write that took its value (%v)", err)
		}
		return nil
	})
	// An update that sets the value of another expired holder takes it too.
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{
			[]byte(`{"id":3,"email":"b@x","expires_at":"2026-11-28T10:30:00Z"}`),
			[]byte(`{"id":4,"email":"c@x"}`),
		})
		return err
	})
	now = expiry.Add(time.Hour)
	_, err = kv.Run(ctx, store, func(tx kv.Tx) error {
		_, err := s.Update(ctx, tx, coll, parseFilter(t, coll, `{"id":4}`), []byte(`{"$set":{"email":"b@x"}}`), 0)
		return err
	})
	if err != nil {
		t.Fatalf("update to a value only an expired document holds: %v", err)
	}
	if got := ids(t, s, store, coll, `{"email":"b@x"}`); got != "4" {
		t.Errorf("documents holding b@x: %q, want 4", got)
	}
}

// A UTC time written with a lower-case t and z (RFC 3339 allows them, and
// TTL.Expired parses them) sorts after every upper-case time of its day:
// the sweeper and expired_pending find it all the same, that day.
func TestLowerCaseUTCSwept(t *testing.T) {
	store, coll := newCollection(t, ttlSchema)
	now := expiry.Add(-time.Hour)
	s := clockedService(&now)
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{
			[]byte(`{"id":1,"expires_at":"2026-11-28t10:00:00z"}`),
			[]byte(`{"id":2,"expires_at":"2026-11-28T10:00:00Z"}`),
		})
		return err
	})
	now = expiry.Add(time.Hour)
	if got := ids(t, s, store, coll, `{}`); got != "" {
		t.Fatalf("expired documents read: %s", got)
	}
	var pending int64
	var res SweepResult
	run(t, store, func(tx kv.Tx) (err error) {
		pending, err = s.PendingExpired(ctx, tx, coll, now)
		return err
	})
	run(t, store, func(tx kv.Tx) (err error) {
		res, err = s.Sweep(ctx, tx, coll, now, nil, 100)
		return err
	})
	if pending != 2 || res.Deleted != 2 {
		t.Fatalf("an hour after both expired: expired_pending %d, swept %d; want 2 and 2", pending, res.Deleted)
	}
}

// At a day's last second the lower-case range of that day ends after all
// of its times and before the next day: the next day's upper-case
// entries, not expired, are not in it.
func TestExpiredRangesAtMidnight(t *testing.T) {
	store, coll := newCollection(t, ttlSchema)
	last := time.Date(2026, 11, 28, 23, 59, 59, 0, time.UTC)
	now := last.Add(-time.Hour)
	s := clockedService(&now)
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{
			[]byte(`{"id":1,"expires_at":"2026-11-28t23:59:58z"}`),
			[]byte(`{"id":2,"expires_at":"2026-11-28T23:59:58Z"}`),
			[]byte(`{"id":3,"expires_at":"2026-11-29T00:00:00Z"}`),
			[]byte(`{"id":4,"expires_at":"2026-11-29t00:00:00z"}`),
		})
		return err
	})
	now = last.Add(500 * time.Millisecond)
	var pending int64
	var res SweepResult
	run(t, store, func(tx kv.Tx) (err error) {
		pending, err = s.PendingExpired(ctx, tx, coll, now)
		return err
	})
	run(t, store, func(tx kv.Tx) (err error) {
		res, err = s.Sweep(ctx, tx, coll, now, nil, 100)
		return err
	})
	if pending != 2 || res.Deleted != 2 {
		t.Errorf("left: %q", ids(t, s, store, coll, `{}`))
		t.Fatalf("at 23:59:59.5: expired_pending %d, swept %d; want 2 and 2", pending, res.Deleted)
	}
	spans, _ := query.ExpiredRanges(coll, now)
	for _, sp := range spans {
		var n int
		run(t, store, func(tx kv.Tx) error {
			n = 0
			it := tx.Scan(ctx, sp.Range, kv.ScanOptions{})
			defer it.Close()
			for it.Next() {
				n++
			}
			return it.Err()
		})
		if n != 0 {
			t.Errorf("range %x–%x holds %d entries after the sweep: the next day's are not in it", sp.Begin, sp.End, n)
		}
	}
	if got := ids(t, s, store, coll, `{}`); got != "3,4" {
		t.Errorf("left: %q, want 3,4", got)
	}
}

// Adding a unique key is not refused over a duplicate that only an
// expired (invisible) document makes.
func TestAddUniqueOverExpiredDuplicate(t *testing.T) {
	const plain = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},
	"email":{"type":"string"},
	"expires_at":{"type":"string","format":"date-time"}},
	"ttl":{"field":"expires_at"}}`
	store, coll := newCollection(t, plain)
	now := expiry.Add(-time.Hour)
	s := clockedService(&now)
	run(t, store, func(tx kv.Tx) error {
		_, err := s.Insert(ctx, tx, coll, [][]byte{
			[]byte(`{"id":1,"email":"a@x","expires_at":"2026-11-28T10:00:00Z"}`),
			[]byte(`{"id":2,"email":"a@x"}`),
		})
		return err
	})
	now = expiry.Add(time.Hour)
	next, err := schema.Parse("things", []byte(ttlUniqueSchema))
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.Run(ctx, store, func(tx kv.Tx) error {
		return s.CheckUniqueHeld(ctx, tx, coll, schema.AddedUnique(coll.Schema, next))
	})
	if err != nil {
		t.Fatalf("adding unique where only an expired document duplicates: %v", err)
	}
}
