package documents

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/aggregate"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
)

// aggFields are the fields of propSchema an aggregation may group on or
// accumulate, by what they can be.
var (
	aggGroupFields = []string{"name", "age", "score", "ok", "when", "tags", "addr.city", "addr.zip", "id"}
	aggNumbers     = []string{"age", "score", "addr.zip"}
	aggOrdered     = []string{"name", "age", "score", "when", "addr.city"}
)

// randomAggregate is a random request: its group_by, fields, sort, limit
// and filter. A third are count-only on one scalar field, with no filter
// or one on that field, which the index entries answer alone.
func randomAggregate(rng *rand.Rand) (aggregate.Request, string) {
	pick := func(from []string) string { return from[rng.IntN(len(from))] }
	var req aggregate.Request
	filter := "{}"
	if rng.IntN(3) == 0 {
		field := pick([]string{"name", "age", "score", "ok", "when", "addr.city", "addr.zip"})
		req.GroupBy = []string{field}
		fields := `{"n":{"$count":{}}}`
		if rng.IntN(2) == 0 {
			fields = `{"n":{"$count":{}},"m":{"$count":{}}}`
		}
		req.Fields = []byte(fields)
		switch rng.IntN(3) {
		case 1:
			ops := []string{"$gt", "$gte", "$lt", "$lte", "$eq"}
			var v string
			switch field {
			case "name":
				v = fmt.Sprintf("%q", names[rng.IntN(len(names))])
			case "addr.city":
				v = fmt.Sprintf("%q", cities[rng.IntN(len(cities))])
			case "when":
				v = fmt.Sprintf("%q", times[rng.IntN(len(times))])
			case "ok":
				v = fmt.Sprint(rng.IntN(2) == 0)
			default:
				v = fmt.Sprint(rng.IntN(8) - 1)
			}
			filter = fmt.Sprintf(`{%q:{%q:%s}}`, field, pick(ops), v)
		case 2:
			filter = fmt.Sprintf(`{%q:{"$exists":true}}`, field)
		}
	} else {
		for i := rng.IntN(3); i > 0; i-- {
			f := pick(aggGroupFields)
			if !slices.Contains(req.GroupBy, f) {
				req.GroupBy = append(req.GroupBy, f)
			}
		}
		var accs []string
		for i := 1 + rng.IntN(4); i > 0; i-- {
			name := fmt.Sprintf("a%d", i)
			switch rng.IntN(6) {
			case 0:
				accs = append(accs, fmt.Sprintf(`%q:{"$count":{}}`, name))
			case 1:
				accs = append(accs, fmt.Sprintf(`%q:{"$sum":%q}`, name, pick(aggNumbers)))
			case 2:
				accs = append(accs, fmt.Sprintf(`%q:{"$avg":%q}`, name, pick(aggNumbers)))
			case 3:
				accs = append(accs, fmt.Sprintf(`%q:{"$min":%q}`, name, pick(aggOrdered)))
			case 4:
				accs = append(accs, fmt.Sprintf(`%q:{"$max":%q}`, name, pick(aggOrdered)))
			default:
				accs = append(accs, fmt.Sprintf(`%q:{"$count_distinct":%q}`, name, pick(aggGroupFields[:5])))
			}
		}
		req.Fields = []byte("{" + strings.Join(accs, ",") + "}")
		if rng.IntN(2) == 0 {
			filter = randomFilter(rng, 1)
		}
	}
	// Sort on what the request has, then perhaps a limit.
	var sortable []string
	sortable = append(sortable, req.GroupBy...)
	var accs map[string]json.RawMessage
	json.Unmarshal(req.Fields, &accs)
	for n := range accs {
		sortable = append(sortable, n)
	}
	slices.Sort(sortable)
	var sort []string
	for i := rng.IntN(3); i > 0 && len(sortable) > 0; i-- {
		order := "$asc"
		if rng.IntN(2) == 0 {
			order = "$desc"
		}
		sort = append(sort, fmt.Sprintf(`{%q:%q}`, pick(sortable), order))
	}
	if len(sort) > 0 {
		req.Sort = []byte("[" + strings.Join(sort, ",") + "]")
	}
	if rng.IntN(3) == 0 {
		req.Limit = int64(1 + rng.IntN(5))
	}
	return req, filter
}

// naiveAggregate folds docs (JSON, in key order) as the API documents it,
// with encoding/json's values and none of the package's code: a group per
// combination of the distinct values of the group fields (an array's
// non-null elements; null for none), null sorting first, then false,
// true, numbers, strings.
func naiveAggregate(t *testing.T, req aggregate.Request, docs []string) []any {
	t.Helper()
	type acc struct{ name, op, field string }
	var accs []acc
	dec := json.NewDecoder(strings.NewReader(string(req.Fields)))
	dec.Token()
	for dec.More() {
		name, _ := dec.Token()
		var spec map[string]any
		dec.Decode(&spec)
		for op, arg := range spec {
			field, _ := arg.(string)
			accs = append(accs, acc{name.(string), op, field})
		}
	}
	get := func(doc map[string]any, path string) any {
		var v any = doc
		for _, p := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		}
		return v
	}
	type group struct {
		values []any
		docs   []map[string]any
	}
	groups := map[string]*group{}
	for _, d := range docs {
		var doc map[string]any
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatal(err)
		}
		combos := [][]any{{}}
		for _, gf := range req.GroupBy {
			v := get(doc, gf)
			var vals []any
			if arr, ok := v.([]any); ok {
				for _, e := range arr {
					if e != nil && !slices.ContainsFunc(vals, func(x any) bool { return x == e }) {
						vals = append(vals, e)
					}
				}
			} else if v != nil {
				vals = []any{v}
			}
			if len(vals) == 0 {
				vals = []any{nil}
			}
			var next [][]any
			for _, c := range combos {
				for _, v := range vals {
					next = append(next, append(slices.Clone(c), v))
				}
			}
			combos = next
		}
		for _, c := range combos {
			k := fmt.Sprintf("%#v", c)
			if groups[k] == nil {
				groups[k] = &group{values: c}
			}
			groups[k].docs = append(groups[k].docs, doc)
		}
	}
	if len(req.GroupBy) == 0 && len(groups) == 0 {
		groups[""] = &group{values: []any{}}
	}
	type row struct {
		values []any
		result map[string]any
	}
	var rows []row
	for _, g := range groups {
		res := map[string]any{}
		for _, a := range accs {
			var vals []any
			for _, d := range g.docs {
				if v := get(d, a.field); v != nil {
					vals = append(vals, v)
				}
			}
			switch a.op {
			case "$count":
				res[a.name] = float64(len(g.docs))
			case "$sum", "$avg":
				sum := 0.0
				for _, v := range vals {
					sum += v.(float64)
				}
				res[a.name] = sum
				if a.op == "$avg" {
					res[a.name] = nil
					if len(vals) > 0 {
						res[a.name] = sum / float64(len(vals))
					}
				}
			case "$min", "$max":
				var best any
				for i, v := range vals {
					if c := naiveCompare(v, best); i == 0 || (a.op == "$min" && c < 0) || (a.op == "$max" && c > 0) {
						best = v
					}
				}
				res[a.name] = best
			case "$count_distinct":
				var seen []any
				for _, v := range vals {
					if !slices.Contains(seen, v) {
						seen = append(seen, v)
					}
				}
				res[a.name] = float64(len(seen))
			}
		}
		rows = append(rows, row{g.values, res})
	}
	var sort []map[string]string
	json.Unmarshal(req.Sort, &sort)
	slices.SortFunc(rows, func(a, b row) int {
		for _, item := range sort {
			for name, order := range item {
				var x, y any
				if i := slices.Index(req.GroupBy, name); i >= 0 {
					x, y = a.values[i], b.values[i]
				} else {
					x, y = a.result[name], b.result[name]
				}
				if c := naiveCompare(x, y); c != 0 {
					if order == "$desc" {
						return -c
					}
					return c
				}
			}
		}
		for i := range a.values {
			if c := naiveCompare(a.values[i], b.values[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	if req.Limit > 0 && int64(len(rows)) > req.Limit {
		rows = rows[:req.Limit]
	}
	out := []any{}
	for _, r := range rows {
		g := map[string]any{}
		for i, f := range req.GroupBy {
			g[f] = r.values[i]
		}
		r.result["group"] = g
		out = append(out, r.result)
	}
	return out
}

// naiveCompare orders JSON values as the entries do: null, false, true,
// numbers, strings.
func naiveCompare(a, b any) int {
	rank := func(v any) int {
		switch v := v.(type) {
		case nil:
			return 0
		case bool:
			if v {
				return 2
			}
			return 1
		case float64:
			return 3
		}
		return 4
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	switch a := a.(type) {
	case float64:
		return cmp.Compare(a, b.(float64))
	case string:
		return strings.Compare(a, b.(string))
	}
	return 0
}

// errRollBack ends a test's transaction without committing it.
var errRollBack = errors.New("roll back")

// TestAggregateMatchesNaiveFold: for random documents and random
// aggregations, the plan the service picks (index entries where it can),
// the documents plan, and a naive fold of the documents a brute-force
// filter selects agree exactly; inside a transaction holding uncommitted
// inserts and deletes too. Long strings, whose entries hold them cut,
// make the index plan give way to the documents.
func TestAggregateMatchesNaiveFold(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(testing.TB) kv.Store) {
		store, coll := newCollectionOn(t, open, propSchema)
		s := New()
		rng := rand.New(rand.NewPCG(modelSeed(t), 40))
		insertRandom(t, store, s, coll, rng, 80)
		plans := map[string]int{}
		check := func(t *testing.T, tx kv.Tx, req aggregate.Request, rawFilter string) {
			t.Helper()
			spec, err := aggregate.Parse(req, coll.Schema)
			if err != nil {
				t.Fatalf("%s: %v", req.Fields, err)
			}
			f, err := filter.Parse([]byte(rawFilter), coll.Schema, filter.Collation{})
			if err != nil {
				t.Fatalf("filter %s: %v", rawFilter, err)
			}
			desc := fmt.Sprintf("group_by %v fields %s sort %s limit %d filter %s", req.GroupBy, req.Fields, req.Sort, req.Limit, rawFilter)
			want := naiveAggregate(t, req, bruteForce(t, s, tx, coll, f))
			picked, err := s.Aggregate(ctx, tx, coll, AggregateRequest{Filter: f, Spec: spec})
			if err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
			plans[strings.SplitN(picked.Plan.Kind, " of ", 2)[0]]++
			docsOnly, err := s.Aggregate(ctx, tx, coll, AggregateRequest{Filter: f, Spec: spec, documentsOnly: true})
			if err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
			for _, got := range []*AggregateResult{picked, docsOnly} {
				var results []any
				for _, r := range got.Results {
					var v any
					if err := json.Unmarshal(r, &v); err != nil {
						t.Fatalf("%s: result %s: %v", desc, r, err)
					}
					results = append(results, v)
				}
				if results == nil {
					results = []any{}
				}
				if !reflect.DeepEqual(results, want) {
					g, _ := json.Marshal(results)
					w, _ := json.Marshal(want)
					t.Fatalf("%s, plan %s:\ngot  %s\nwant %s", desc, got.Plan, g, w)
				}
			}
		}
		for i := 0; i < 150; i++ {
			req, f := randomAggregate(rng)
			if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
				check(t, tx, req, f)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		// In a transaction that has inserted and deleted documents, not
		// committed: both plans see its writes.
		for i := 0; i < 20; i++ {
			req, f := randomAggregate(rng)
			_, err := kv.Run(ctx, store, func(tx kv.Tx) error {
				if _, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(randomDoc(rng, 100+i)), []byte(randomDoc(rng, 200+i))}); err != nil {
					return err
				}
				del, _ := filter.Parse([]byte(fmt.Sprintf(`{"id":%d}`, rng.IntN(80))), coll.Schema, filter.Collation{})
				if _, err := s.Delete(ctx, tx, coll, del, 0); err != nil {
					return err
				}
				check(t, tx, req, f)
				return errRollBack
			})
			if !errors.Is(err, errRollBack) {
				t.Fatal(err)
			}
		}
		if plans["index group count"] == 0 || plans["fold documents"] == 0 {
			t.Errorf("plans taken: %v; want both the index's and the documents'", plans)
		}
		// Strings the entries hold cut: two names that share their first
		// 128 bytes are two groups, which only the documents tell apart.
		long := strings.Repeat("n", 130)
		if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
			_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":300,"name":"` + long + `a"}`), []byte(`{"id":301,"name":"` + long + `b"}`)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// Strings holding a zero byte: the encoding of "z" is a prefix of
		// that of "z\u0000b", whose entries follow "z"'s in the index
		// (addr.city: name's entries hold the long names cut, and its
		// counts come from the documents).
		if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
			_, err := s.Insert(ctx, tx, coll, [][]byte{[]byte(`{"id":310,"addr":{"city":"z"}}`), []byte(`{"id":311,"addr":{"city":"z\u0000"}}`),
				[]byte(`{"id":312,"addr":{"city":"z\u0000b"}}`), []byte(`{"id":313,"addr":{"city":"z"}}`), []byte(`{"id":314,"addr":{"city":"z\u0000b"}}`)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		before := plans["index group count"]
		kv.Run(ctx, store, func(tx kv.Tx) error {
			check(t, tx, aggregate.Request{GroupBy: []string{"addr.city"}, Fields: []byte(`{"n":{"$count":{}}}`)}, `{}`)
			return nil
		})
		if plans["index group count"] != before+1 {
			t.Errorf("the count by addr.city did not take the index's plan")
		}
		req := aggregate.Request{GroupBy: []string{"name"}, Fields: []byte(`{"n":{"$count":{}}}`)}
		kv.Run(ctx, store, func(tx kv.Tx) error {
			check(t, tx, req, `{}`)
			check(t, tx, req, `{"name":{"$gt":"m"}}`)
			return nil
		})
	})
}

// TestAggregatePlans: which plan an aggregation takes, as explain shows it.
func TestAggregatePlans(t *testing.T) {
	store, coll := newCollection(t, propSchema)
	s := New()
	insertRandom(t, store, s, coll, rand.New(rand.NewPCG(1, 2)), 40)
	for _, tc := range []struct {
		groupBy []string
		fields  string
		filter  string
		plan    string
	}{
		{nil, `{"n":{"$count":{}}}`, `{}`, "document count"},
		{nil, `{"n":{"$count":{}}}`, `{"age":{"$gt":3}}`, "index count: age > 3"},
		{[]string{"age"}, `{"n":{"$count":{}}}`, `{}`, "index group count: all entries of age"},
		{[]string{"age"}, `{"n":{"$count":{}}}`, `{"age":{"$gte":2,"$lt":6}}`, "index group count: age >= 2, age < 6"},
		{[]string{"addr.city"}, `{"n":{"$count":{}}}`, `{"addr.city":{"$exists":true}}`, "index group count: addr.city exists"},
		// Not from entries: a filter on another field, another
		// accumulator, an array, a case-insensitive filter.
		{[]string{"age"}, `{"n":{"$count":{}}}`, `{"name":"ann"}`, "fold documents of index: name = ann"},
		{[]string{"age"}, `{"s":{"$sum":"score"}}`, `{}`, "fold documents of scan"},
		{[]string{"tags"}, `{"n":{"$count":{}}}`, `{}`, "fold documents of scan"},
		{[]string{"age", "name"}, `{"n":{"$count":{}}}`, `{}`, "fold documents of scan"},
	} {
		spec, err := aggregate.Parse(aggregate.Request{GroupBy: tc.groupBy, Fields: []byte(tc.fields)}, coll.Schema)
		if err != nil {
			t.Fatal(err)
		}
		f, err := filter.Parse([]byte(tc.filter), coll.Schema, filter.Collation{})
		if err != nil {
			t.Fatal(err)
		}
		var res *AggregateResult
		var count kv.ReadCount
		kv.Run(ctx, store, func(tx kv.Tx) error {
			res, err = s.Aggregate(ctx, kv.CountReads(tx, &count), coll, AggregateRequest{Filter: f, Spec: spec})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Plan.String(); got != tc.plan {
			t.Errorf("%v %s %s: plan %q, want %q", tc.groupBy, tc.fields, tc.filter, got, tc.plan)
		}
		if strings.HasPrefix(tc.plan, "index group count") {
			// Entries only: no document read, so fewer keys than documents
			// plus entries.
			if n := count.Keys.Load(); n > 41 {
				t.Errorf("%v %s: %d keys read; the entries are at most 40 and the count one", tc.groupBy, tc.filter, n)
			}
		}
	}
}
