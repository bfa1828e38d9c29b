package query

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/index"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

var ctx = context.Background()

// TestPlans runs the planner cases of testdata/*, in the format of
// github.com/cockroachdb/datadriven (go test -rewrite rewrites the expected
// outputs). Each file builds a collection and asks for plans:
//
//	schema
//	{"title":"t","primary_key":["id"],"properties":{...}}
//	----
//
//	insert
//	{"id":1,"a":3}
//	----
//	1 documents
//
//	generate n=1000
//	{"id":{i},"a":{i%10},"s":"{x*200}"}
//	----
//	1001 documents
//
//	plan filter={"a":{"$gt":3}} limit=10 sort=(-a,id) after=5 ci take=3
//	----
//	index: a > 3
//	candidates: 4 5 6
//	keys read: 7
//
// insert writes documents (one a line) with their index entries, as the
// document operations do; generate writes n documents from one template, in
// which {i} is the document's number (from 0), {i+k} that plus k, {i%k} its
// remainder by k and {c*k} the character c k times (also in insert's
// documents and plan's filter). plan prints the plan,
// the primary keys of the candidates in the order they come, and the keys
// the lookup read (the document count included) when every candidate is
// read, as a read without a limit would, or the first take of them; for a plan that leaves the sort to
// the caller, also the candidates in the order Sort.Key and Sort.Compare
// give them ("sorted:").
func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

func TestPlans(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		c := &planCase{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := c.run(t, d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// planCase is the collection of one test file.
type planCase struct {
	store kv.Store
	coll  *catalog.Collection
	n     int // documents written
}

func (c *planCase) run(t *testing.T, d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "schema":
		return "", c.create(t, d.Input)
	case "insert":
		return c.insert(strings.Split(expand(d.Input, 0), "\n"))
	case "generate":
		var n int
		d.ScanArgs(t, "n", &n)
		docs := make([]string, n)
		for i := range docs {
			docs[i] = expand(d.Input, i)
		}
		return c.insert(docs)
	case "plan":
		return c.plan(t, d)
	case "count":
		return c.count(t, d)
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return "", nil
}

func (c *planCase) create(t *testing.T, schema string) error {
	return c.createOn(t, backendtest.OpenPebble, schema)
}

// createOn is create on the store open returns.
func (c *planCase) createOn(t *testing.T, open func(testing.TB) kv.Store, schema string) error {
	var s struct{ Title string }
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		return err
	}
	c.store, c.n = open(t), 0
	cat := catalog.New()
	_, err := kv.Run(ctx, c.store, func(tx kv.Tx) error {
		if err := cat.CreateDatabase(ctx, tx, ns, "db"); err != nil {
			return err
		}
		db, err := cat.Database(ctx, tx, ns, "db")
		if err != nil {
			return err
		}
		if _, err := cat.CreateOrUpdateCollection(ctx, tx, db, s.Title, []byte(schema), true); err != nil {
			return err
		}
		c.coll, err = cat.Collection(ctx, tx, db, s.Title)
		return err
	})
	return err
}

// insert writes documents as the document operations do, but with the
// JSON itself as the stored value.
func (c *planCase) insert(docs []string) (string, error) {
	_, err := kv.Run(ctx, c.store, func(tx kv.Tx) error { return c.put(tx, docs) })
	if err != nil {
		return "", err
	}
	c.n += len(docs)
	return fmt.Sprintf("%d documents\n", c.n), nil
}

// put writes new documents and their index entries in tx.
func (c *planCase) put(tx kv.Tx, docs []string) error {
	sc, id := c.coll.Schema, c.coll.ID
	for _, doc := range docs {
		if err := sc.Validate([]byte(doc)); err != nil {
			return fmt.Errorf("%s: %w", doc, err)
		}
		pk, err := sc.ExtractKey([]byte(doc))
		if err != nil {
			return err
		}
		key, err := keyspace.Document(id, pk)
		if err != nil {
			return err
		}
		if err := tx.Set(key, []byte(doc)); err != nil {
			return err
		}
		entries, err := index.Entries(sc, []byte(doc))
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := tx.Set(index.Key(id, e, key[len(keyspace.Documents(id).Begin):]), nil); err != nil {
				return err
			}
		}
		if err := tx.Add(keyspace.Count(id), 1); err != nil {
			return err
		}
	}
	return nil
}

func (c *planCase) plan(t *testing.T, d *datadriven.TestData) (string, error) {
	req := Request{}
	var collation filter.Collation
	if d.HasArg("ci") {
		collation.Case = "ci"
	}
	if d.HasArg("filter") {
		var raw string
		d.ScanArgs(t, "filter", &raw)
		f, err := filter.Parse([]byte(expand(raw, 0)), c.coll.Schema, collation)
		if err != nil {
			return "", err
		}
		req.Filter = f
	}
	if d.HasArg("limit") {
		d.ScanArgs(t, "limit", &req.Limit)
	}
	if d.HasArg("after") {
		var after int64
		d.ScanArgs(t, "after", &after)
		req.After, _ = keyspace.Document(c.coll.ID, []any{after})
	}
	if arg, ok := d.Arg("sort"); ok {
		for _, v := range arg.Vals {
			req.Sort = append(req.Sort, SortField{Path: strings.TrimPrefix(v, "-"), Desc: strings.HasPrefix(v, "-")})
		}
	}
	tx, err := c.store.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var count kv.ReadCount
	it, plan, err := Run(ctx, kv.CountReads(tx, &count), c.coll, req)
	if err != nil {
		return "", err
	}
	defer it.Close()
	take := -1
	if d.HasArg("take") {
		d.ScanArgs(t, "take", &take)
	}
	var keys []string
	var sortKeys []SortKey
	for len(keys) != take && it.Next() {
		pk, err := c.coll.Schema.ExtractKey(it.Value())
		if err != nil {
			return "", err
		}
		vals := make([]string, len(pk))
		for i, v := range pk {
			vals[i] = fmt.Sprint(v)
		}
		keys = append(keys, strings.Join(vals, ","))
		if plan.Order == SortInMemory {
			k, err := plan.Sort.Key(c.coll.Schema, slices.Clone(it.Key()), slices.Clone(it.Value()))
			if err != nil {
				return "", err
			}
			sortKeys = append(sortKeys, k)
		}
	}
	if err := it.Err(); err != nil {
		return "", err
	}
	out := fmt.Sprintf("%s\ncandidates: %s\nkeys read: %d\n", plan, list(keys), count.Keys.Load())
	if plan.Order == SortInMemory {
		// The order the caller's sort gives them, by the plan's rules.
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(i, j int) int { return plan.Sort.Compare(sortKeys[i], sortKeys[j]) })
		sorted := make([]string, len(keys))
		for i, o := range order {
			sorted[i] = keys[o]
		}
		out += "sorted: " + list(sorted) + "\n"
	}
	return out, nil
}

// list shows document keys, the first 30 of them.
func list(keys []string) string {
	const shown = 30
	s := strings.Join(keys[:min(len(keys), shown)], " ")
	if len(keys) == 0 {
		s = "none"
	}
	if len(keys) > shown {
		s += fmt.Sprintf(" … (%d)", len(keys))
	}
	return s
}

var placeholder = regexp.MustCompile(`\{i\}|\{i%(\d+)\}|\{(.)\*(\d+)\}|\{i\+(\d+)\}`)

// expand fills a template's placeholders for document number i.
func expand(tmpl string, i int) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			k, _ := strconv.Atoi(sub[1])
			return strconv.Itoa(i % k)
		case sub[2] != "":
			k, _ := strconv.Atoi(sub[3])
			return strings.Repeat(sub[2], k)
		case sub[4] != "":
			k, _ := strconv.Atoi(sub[4])
			return strconv.Itoa(i + k)
		}
		return strconv.Itoa(i)
	})
}

// ns is the namespace the tests keep their databases in.
const ns = keyspace.DefaultNamespace
