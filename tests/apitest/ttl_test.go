package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// Expiring documents (issue 40, part 4): a collection whose schema names a
// date-time field as its ttl. The node runs on a clock the test moves
// (node.Config.Expiry.Now, which the documents' reads and stamps share),
// and its sweeper sweeps only when the test lets it (Expiry.Leader), so
// that what is pending can be seen before it goes.

const ttlSessions = `{"title":"sessions","properties":{"id":{"type":"string"},"user":{"type":"string"},` +
	`"expires_at":{"type":"string","format":"date-time"}},"primary_key":["id"],"ttl":{"field":"expires_at"}}`

// testClock is a node's clock, moved by the test.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time   { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Set(at time.Time) { c.mu.Lock(); c.now = at; c.mu.Unlock() }

// ttlServer is a node on the test's clock whose sweeper runs every 10 ms
// while sweeping is set.
type ttlServer struct {
	*streamServer
	clock    *testClock
	sweeping *atomic.Bool
}

func eachTTLBackend(t *testing.T, fn func(t *testing.T, s ttlServer)) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		clock := &testClock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
		var sweeping atomic.Bool
		cfg := node.DefaultConfig()
		cfg.Expiry.Now = clock.Now
		cfg.Expiry.Interval = 10 * time.Millisecond
		cfg.Expiry.Leader = func(context.Context) (bool, error) { return sweeping.Load(), nil }
		data := b.Durable(t)
		ss := &streamServer{cfg: cfg, open: func(testing.TB) kv.Store { return data.Open() }}
		ss.start(t)
		fn(t, ttlServer{streamServer: ss, clock: clock, sweeping: &sweeping})
	})
}

// describeTTL returns a collection's schema's ttl member and its pending
// count, on the 2022 or the 2023 route.
func describeTTL(t *testing.T, c *client, path string) (ttl string, pending *int64) {
	t.Helper()
	var d struct {
		Schema         map[string]json.RawMessage `json:"schema"`
		ExpiredPending *int64                     `json:"expired_pending"`
	}
	if err := json.Unmarshal(c.ok(t, "POST", path, `{}`).body, &d); err != nil {
		t.Fatal(err)
	}
	return string(d.Schema["ttl"]), d.ExpiredPending
}

func sessionIDs(t *testing.T, c *client, filter string) string {
	t.Helper()
	var out []string
	for _, d := range c.docs(t, "db1", "sessions", `{"filter":`+filter+`}`) {
		var doc struct{ ID string }
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatal(err)
		}
		out = append(out, doc.ID)
	}
	return strings.Join(out, ",")
}

func searchedSessions(t *testing.T, c *client) string {
	t.Helper()
	var out []string
	for _, h := range c.searchIDs(t, "db1", "sessions", `{"q":""}`) {
		out = append(out, strings.Trim(h, `"`))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// A document is returned by every read, count and search until its time
// and by none from it; describe shows the ttl and the document pending;
// the sweeper then deletes it, and the events stream gets a delete marked
// expired. A write onto an expired document's key finds it gone, and the
// sweep goes on across a restart.
func TestExpiringDocuments(t *testing.T) {
	eachTTLBackend(t, func(t *testing.T, s ttlServer) {
		c := s.client
		c.createDB(t, "db1")
		c.createColl(t, "db1", "sessions", ttlSessions)
		events := c.openStream(t, eventsPath("db1", "sessions"), `{}`)
		c.insert(t, "db1", "sessions",
			`{"id":"s1","user":"ann","expires_at":"2026-11-28T10:30:00Z"}`,
			`{"id":"s2","user":"bob","expires_at":"2026-11-28T11:00:00Z"}`,
			`{"id":"s3","user":"cid"}`)
		for range 3 {
			if ev := events.next(t); ev.Op != "insert" || ev.Expired {
				t.Fatalf("event %+v, want an insert", ev)
			}
		}
		ttl, pending := describeTTL(t, c, collPath("db1", "sessions", "describe"))
		if ttl != `{"field":"expires_at"}` || pending == nil || *pending != 0 {
			t.Fatalf("describe: ttl %s, pending %v", ttl, pending)
		}

		type view struct{ all, byKey, byIndex, count, search string }
		look := func() view {
			return view{
				all:     sessionIDs(t, c, `{}`),
				byKey:   sessionIDs(t, c, `{"id":"s1"}`),
				byIndex: sessionIDs(t, c, `{"expires_at":{"$lte":"2026-11-28T10:30:00Z"}}`),
				count:   fmt.Sprint(c.count(t, "db1", "sessions", `{}`, "")),
				search:  searchedSessions(t, c),
			}
		}
		s.clock.Set(time.Date(2026, 11, 28, 10, 29, 59, 999999999, time.UTC))
		if got, want := look(), (view{"s1,s2,s3", "s1", "s1", "3", "s1,s2,s3"}); got != want {
			t.Errorf("a nanosecond before s1 expires: %+v, want %+v", got, want)
		}
		s.clock.Set(time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC))
		if got, want := look(), (view{"s2,s3", "", "", "2", "s2,s3"}); got != want {
			t.Errorf("when s1 expires: %+v, want %+v", got, want)
		}
		for _, path := range []string{collPath("db1", "sessions", "describe"), p23Coll("db1", "sessions", "describe")} {
			if _, pending := describeTTL(t, c, path); pending == nil || *pending != 1 {
				t.Errorf("%s: pending %v, want 1", path, pending)
			}
		}

		s.sweeping.Store(true)
		ev := events.next(t)
		if ev.Op != "delete" || !ev.Expired || !strings.Contains(string(ev.Key), "s1") {
			t.Fatalf("event %+v, want the expired delete of s1", ev)
		}
		eventually(t, "pending back to 0", func() bool {
			_, pending := describeTTL(t, c, collPath("db1", "sessions", "describe"))
			return pending != nil && *pending == 0
		})
		if m := string(c.do(t, "GET", "/metrics", "").body); !strings.Contains(m, "\nfolio_documents_expired_total 1\n") {
			t.Errorf("metrics: no folio_documents_expired_total 1")
		}

		// s2 expires with the sweeper held: an insert of its key finds it
		// gone (its expired delete first), an update by filter misses it.
		s.sweeping.Store(false)
		s.clock.Set(time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC))
		m := c.okObject(t, "PUT", docPath("db1", "sessions", "update"), `{"filter":{"user":{"$gte":"a"}},"fields":{"$set":{"user":"x"}}}`)
		if intOf(t, m["modified_count"]) != 1 {
			t.Errorf("update at 11:00: %v, want s3 alone modified", m)
		}
		events.next(t) // s3's update
		c.insert(t, "db1", "sessions", `{"id":"s2","user":"new"}`)
		if ev := events.next(t); ev.Op != "delete" || !ev.Expired {
			t.Errorf("event %+v, want s2's expired delete", ev)
		}
		if ev := events.next(t); ev.Op != "insert" || ev.Expired {
			t.Errorf("event %+v, want s2's insert", ev)
		}
		events.close()

		// Stopped with s4 expired and not swept; swept after the restart.
		c.insert(t, "db1", "sessions", `{"id":"s4","expires_at":"2026-11-28T10:00:00Z"}`)
		if _, pending := describeTTL(t, c, collPath("db1", "sessions", "describe")); pending == nil || *pending != 1 {
			t.Fatalf("s4 inserted expired: pending %v, want 1", pending)
		}
		s.restart(t)
		c = s.client
		s.sweeping.Store(true)
		eventually(t, "s4 swept after the restart", func() bool {
			_, pending := describeTTL(t, c, collPath("db1", "sessions", "describe"))
			return pending != nil && *pending == 0
		})
		if got := sessionIDs(t, c, `{}`); got != "s2,s3" {
			t.Errorf("at the end: %s, want s2,s3", got)
		}
	})
}

// The ttl is refused where it cannot work (400), and can be added,
// changed and removed by createOrUpdate; describe of a collection without
// one has no pending count.
func TestTTLSchemaChanges(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		base := `{"title":"sessions","properties":{"id":{"type":"string"},"n":{"type":"integer"},` +
			`"at":{"type":"string","format":"date-time"},"tags":{"type":"array","items":{"type":"string","format":"date-time"}}},"primary_key":["id"]`
		for _, tc := range []struct{ ttl, msg string }{
			{`{"field":"nope"}`, "ttl field 'nope' is not a field of the schema (a nested field is named by its dot path, such as 'a.b'; fields inside arrays cannot expire documents)"},
			{`{"field":"n"}`, "ttl field 'n' must be a date-time field (type string, format date-time), not int64"},
			{`{"field":"tags"}`, "ttl field 'tags' must be a date-time field (type string, format date-time), not array"},
			{`{"field":"at","after":"0s"}`, "ttl after '0s' is out of range: from 1s to 876000h (a century); leave after out to expire documents at the field's time"},
			{`{"field":"at","after":"1 day"}`, `ttl after '1 day' is not a duration: write it as "24h", "90m" or "30s"`},
		} {
			r := c.do(t, "POST", collPath("db1", "sessions", "createOrUpdate"), `{"schema":`+base+`,"ttl":`+tc.ttl+`}}`)
			wantError(t, r, 400, "INVALID_ARGUMENT", tc.msg)
			r = c.do(t, "POST", p23Coll("db1", "sessions", "createOrUpdate"), `{"schema":`+base+`,"ttl":`+tc.ttl+`}}`)
			wantError(t, r, 400, "INVALID_ARGUMENT", tc.msg)
		}
		c.createColl(t, "db1", "sessions", base+`}`)
		if ttl, pending := describeTTL(t, c, collPath("db1", "sessions", "describe")); ttl != "" || pending != nil {
			t.Errorf("without a ttl: ttl %s, pending %v", ttl, pending)
		}
		c.ok(t, "POST", p23Coll("db1", "sessions", "createOrUpdate"), `{"schema":`+base+`,"ttl":{"field":"at","after":"24h"}}}`)
		if ttl, pending := describeTTL(t, c, p23Coll("db1", "sessions", "describe")); ttl != `{"field":"at","after":"24h"}` || pending == nil {
			t.Errorf("ttl added: ttl %s, pending %v", ttl, pending)
		}
		c.createColl(t, "db1", "sessions", base+`}`)
		if ttl, pending := describeTTL(t, c, collPath("db1", "sessions", "describe")); ttl != "" || pending != nil {
			t.Errorf("ttl removed: ttl %s, pending %v", ttl, pending)
		}
	})
}
