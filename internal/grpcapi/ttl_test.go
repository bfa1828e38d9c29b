package grpcapi_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// Expiring documents over gRPC: a ttl refused on a field that is not a
// date-time, reads and counts that stop returning a document at its time
// (on the node's clock, which the test moves), describe's pending count
// (field 1002), and the sweep's delete on the events stream marked
// expired (field 1003).
func TestExpiringDocuments(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		var mu sync.Mutex
		now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		var sweeping atomic.Bool
		cfg := node.DefaultConfig()
		cfg.Expiry.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		cfg.Expiry.Interval = 10 * time.Millisecond
		cfg.Expiry.Leader = func(context.Context) (bool, error) { return sweeping.Load(), nil }
		s := start(t, b.Open(t), cfg)
		if _, err := s.rpc.CreateDatabase(ctx(t), &api.CreateDatabaseRequest{Db: "db1"}); err != nil {
			t.Fatal(err)
		}
		schema := func(field string) []byte {
			return []byte(`{"title":"sessions","primary_key":["id"],"properties":{"id":{"type":"integer"},"n":{"type":"integer"},` +
				`"expires_at":{"type":"string","format":"date-time"}},"ttl":{"field":"` + field + `"}}`)
		}
		_, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "sessions", Schema: schema("n")})
		if st := grpcstatus.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "ttl field 'n' must be a date-time field") {
			t.Fatalf("a ttl on an integer: %v", err)
		}
		if _, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "sessions", Schema: schema("expires_at")}); err != nil {
			t.Fatal(err)
		}
		events, err := s.rpc.Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "sessions"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := events.Header(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "sessions", Documents: [][]byte{
			[]byte(`{"id":1,"expires_at":"2026-11-28T10:30:00Z"}`), []byte(`{"id":2}`)}}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if r, err := events.Recv(); err != nil || r.Event.Op != "insert" || r.Event.Expired {
				t.Fatalf("event %v (%v), want an insert", r, err)
			}
		}
		count := func() int64 {
			r, err := s.rpc.Count(ctx(t), &api.CountRequest{Project: "db1", Collection: "sessions", Filter: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			return r.Count
		}
		pending := func() *int64 {
			d, err := s.rpc.DescribeCollection(ctx(t), &api.DescribeCollectionRequest{Project: "db1", Collection: "sessions"})
			if err != nil {
				t.Fatal(err)
			}
			return d.ExpiredPending
		}
		if n, p := count(), pending(); n != 2 || p == nil || *p != 0 {
			t.Fatalf("before: count %d, pending %v", n, p)
		}
		mu.Lock()
		now = now.Add(30 * time.Minute)
		mu.Unlock()
		if got := readFrom(t, s, ctx(t), "sessions", `{}`); len(got) != 1 || !strings.Contains(got[0], `"id":2`) {
			t.Errorf("read at expiry: %q, want 2 alone", got)
		}
		if got := readFrom(t, s, ctx(t), "sessions", `{"id":1}`); len(got) != 0 {
			t.Errorf("read by key at expiry: %q", got)
		}
		if n, p := count(), pending(); n != 1 || p == nil || *p != 1 {
			t.Errorf("at expiry: count %d, pending %v; want 1 and 1", n, p)
		}
		sweeping.Store(true)
		r, err := events.Recv()
		if err != nil || r.Event.Op != "delete" || !r.Event.Expired {
			t.Fatalf("event %v (%v), want an expired delete", r, err)
		}
		if p := pending(); p == nil || *p != 0 {
			t.Errorf("after the sweep: pending %v", p)
		}
	})
}
