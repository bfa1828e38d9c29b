package documents

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// TestExplainShowsReadPlan: explain reports the plan that the read it
// explains runs (as the read logs it), sorted or not, and as many matches
// as the read finds.
func TestExplainShowsReadPlan(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, propSchema)
		var logged bytes.Buffer
		s := New()
		s.Log = slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
		insertRandom(t, store, s, coll, rand.New(rand.NewPCG(1, 2)), 60)
		tx, err := store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		for _, tc := range []struct {
			filter string
			sort   []SortField
			limit  int64
			skip   int64
			plan   string // how the plan starts
		}{
			{`{}`, nil, 0, 0, "scan"},
			{`{"id":3}`, nil, 0, 0, "point"},
			{`{"age":{"$gt":8}}`, nil, 0, 0, "index: age > 8"},
			{`{}`, []SortField{{Path: "age"}}, 0, 0, "index order: age, then documents without age by scan"},
			{`{}`, []SortField{{Path: "score", Desc: true}}, 5, 0, "index order: score desc, then"},
			{`{"age":{"$gte":2,"$lt":6}}`, []SortField{{Path: "age", Desc: true}}, 0, 0, "index order: age desc where age >= 2, age < 6"},
			{`{}`, []SortField{{Path: "name"}}, 0, 0, "scan; sort in memory by name"},
			{`{"name":"bob"}`, []SortField{{Path: "age"}, {Path: "id", Desc: true}}, 0, 0, "index: name = bob; sort in memory by age, id desc"},
			{`{"age":{"$lt":-1}}`, []SortField{{Path: "name"}}, 3, 0, "index: age < -1; sort in memory by name"},
			// An equality read with a limit streams its index entries; the
			// matches it will pass over count towards that limit, and a read
			// without a limit does not stream, whatever it skips.
			{`{"name":"bob"}`, nil, 2, 0, "index in key order: name = bob"},
			{`{"name":"bob"}`, nil, 2, 5, "index in key order: name = bob"},
			{`{"name":"bob"}`, nil, 0, 3, "index: name = bob"},
		} {
			f, err := filter.Parse([]byte(tc.filter), coll.Schema, filter.Collation{})
			if err != nil {
				t.Fatal(err)
			}
			req := ReadRequest{Filter: f, Sort: tc.sort, Limit: tc.limit, Skip: tc.skip}
			logged.Reset()
			got := readAll(t, s, tx, coll, req)
			var entry struct{ Plan string }
			if err := json.Unmarshal(logged.Bytes(), &entry); err != nil {
				t.Fatalf("%s sort %v: the read logged %q: %v", tc.filter, tc.sort, logged.String(), err)
			}
			ex, err := s.Explain(ctx, tx, coll, req)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Plan != entry.Plan {
				t.Errorf("%s sort %v: explain's plan %q, the read's %q", tc.filter, tc.sort, ex.Plan, entry.Plan)
			}
			if !strings.HasPrefix(ex.Plan, tc.plan) {
				t.Errorf("%s sort %v: plan %q, want %q…", tc.filter, tc.sort, ex.Plan, tc.plan)
			}
			if tc.limit == 0 && tc.skip == 0 && ex.Matched != len(got) {
				t.Errorf("%s sort %v: explain matched %d, the read returned %d", tc.filter, tc.sort, ex.Matched, len(got))
			}
		}
	})
}
