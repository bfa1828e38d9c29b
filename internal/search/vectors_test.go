package search_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/tests/backendtest"
)

// A collection with two vector fields: v (4 dimensions, cosine, at the
// top) and o.w (3 dimensions, euclidean, nested), and a tag to filter on.
const vectorSchema = `{"title":"coll","properties":{"id":{"type":"integer"},"t":{"type":"string"},"tag":{"type":"string"},
	"v":{"type":"array","format":"vector","dimensions":4},
	"o":{"type":"object","properties":{"w":{"type":"array","format":"vector","dimensions":3,"distance":"euclidean"}}}},"primary_key":["id"]}`

// newVectorEnv is newEnv with vectorSchema.
func newVectorEnv(t *testing.T, b backendtest.Backend) *env {
	e := newEnv(t, b)
	e.setSchema(t, vectorSchema)
	return e
}

func (e *env) setSchema(t *testing.T, raw string) {
	t.Helper()
	e.tx(t, func(tx kv.Tx) error {
		db, err := e.cat.Database(context.Background(), tx, ns, "db")
		if err != nil {
			return err
		}
		_, err = e.cat.CreateOrUpdateCollection(context.Background(), tx, db, "coll", []byte(raw), false)
		return err
	})
	e.tx(t, func(tx kv.Tx) (err error) {
		e.coll, err = e.cat.Lookup(context.Background(), tx, ns, "db", "coll")
		return err
	})
}

// putDoc writes a document as it is.
func (e *env) putDoc(t *testing.T, doc string) {
	t.Helper()
	e.tx(t, func(tx kv.Tx) error {
		_, err := e.docs.Replace(context.Background(), tx, e.coll, [][]byte{[]byte(doc)})
		return err
	})
}

// vecDoc is a document of vectorSchema; a nil v or w is left out.
func vecDoc(id int, tag string, v, w []float32) string {
	d := map[string]any{"id": id, "t": "doc " + strconv.Itoa(id), "tag": tag}
	if v != nil {
		d["v"] = v
	}
	if w != nil {
		d["o"] = map[string]any{"w": w}
	}
	b, _ := json.Marshal(d)
	return string(b)
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// exactNearest is the k nearest stored documents to q on a field, by the
// field's distance, computed from the documents themselves, among those
// keep accepts: their keys (hex) and distances.
func (e *env) exactNearest(t *testing.T, field string, q []float32, k int, keep func(doc map[string]any) bool) ([]string, []float64) {
	t.Helper()
	type hit struct {
		key string
		d   float64
	}
	var hits []hit
	for key, data := range e.stored(t) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(data), &doc); err != nil {
			t.Fatal(err)
		}
		if keep != nil && !keep(doc) {
			continue
		}
		var raw any = doc
		for _, part := range strings.Split(field, ".") {
			m, _ := raw.(map[string]any)
			raw = m[part]
		}
		arr, _ := raw.([]any)
		if arr == nil {
			continue
		}
		var dot, na, nb, l2 float64
		for i, x := range arr {
			a, b := float64(float32(x.(float64))), float64(q[i])
			dot += a * b
			na += a * a
			nb += b * b
			l2 += (a - b) * (a - b)
		}
		d := 1 - dot/math.Sqrt(na*nb)
		if field == "o.w" {
			d = math.Sqrt(l2)
		}
		hits = append(hits, hit{key, d})
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].d < hits[j].d })
	var keys []string
	var ds []float64
	for _, h := range hits[:min(k, len(hits))] {
		keys = append(keys, h.key)
		ds = append(ds, h.d)
	}
	return keys, ds
}

// nearest asks ix for the k nearest on a field, with a filter ("" for
// none).
func (e *env) nearest(t *testing.T, ix *search.Indexer, field string, q []float32, k int, rawFilter string) ([]string, []float32) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{field: q})
	vq, err := search.PrepareVector(e.coll.Schema, raw)
	if err != nil {
		t.Fatal(err)
	}
	var p *search.Prepared
	if rawFilter != "" {
		f, err := filter.Parse([]byte(rawFilter), e.coll.Schema, filter.Collation{})
		if err != nil {
			t.Fatal(err)
		}
		if p, err = search.Prepare(e.coll.Schema, search.Request{Filter: f}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ix.Searcher(e.coll.ID)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.Nearest(context.Background(), vq, k, p)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var ds []float32
	for _, h := range hits {
		keys = append(keys, hex.EncodeToString(h.Key))
		ds = append(ds, h.Distance)
	}
	return keys, ds
}

// checkNearest compares ix's neighbours with the exact ones for a few
// queries on both fields, unfiltered and filtered by tag: the same keys
// (the graph of a few hundred vectors is searched exactly at its
// default breadth) at the same distances.
func (e *env) checkNearest(t *testing.T, ix *search.Indexer, rng *rand.Rand) {
	t.Helper()
	for range 5 {
		for _, c := range []struct {
			field string
			dims  int
		}{{"v", 4}, {"o.w", 3}} {
			q := randVec(rng, c.dims)
			for _, tag := range []string{"", "a"} {
				var keep func(map[string]any) bool
				rawFilter := ""
				if tag != "" {
					keep = func(d map[string]any) bool { return d["tag"] == tag }
					rawFilter = fmt.Sprintf(`{"tag":%q}`, tag)
				}
				want, wantD := e.exactNearest(t, c.field, q, 10, keep)
				got, gotD := e.nearest(t, ix, c.field, q, 10, rawFilter)
				if !slices.Equal(got, want) {
					t.Fatalf("%s nearest %v (filter %q): got %v, want %v", c.field, q, rawFilter, got, want)
				}
				for i := range gotD {
					if math.Abs(float64(gotD[i])-wantD[i]) > 1e-4 {
						t.Fatalf("%s: distance %d is %v, want %v", c.field, i, gotD[i], wantD[i])
					}
				}
			}
		}
	}
}

// TestVectorsFollowTheLog: a collection's vector fields are indexed from
// the log as its documents change (inserts, replacements that move or
// remove a vector, deletes), built with the index at its first search,
// saved when the indexer closes and taken up again at the next start
// without a rebuild, and searched with and without a filter.
func TestVectorsFollowTheLog(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newVectorEnv(t, b)
		rng := rand.New(rand.NewPCG(7, 8))
		tags := []string{"a", "b", "c"}
		write := func(from, to int) {
			for i := from; i < to; i++ {
				var v, w []float32
				if i%7 != 0 {
					v = randVec(rng, 4)
				}
				if i%5 != 0 {
					w = randVec(rng, 3)
				}
				e.putDoc(t, vecDoc(i, tags[rng.IntN(3)], v, w))
			}
		}
		write(0, 150)
		ix := e.start(t)
		e.caughtUp(t, ix) // the first search builds the index and its vectors
		e.checkNearest(t, ix, rng)

		write(100, 250) // replacements, some of which drop a vector
		for i := 0; i < 40; i += 3 {
			e.del(t, i)
		}
		e.caughtUp(t, ix)
		e.checkNearest(t, ix, rng)
		st := ix.Stats(context.Background()).Indexes[0]
		if st.Vectors == 0 || st.VectorBytes == 0 {
			t.Fatalf("stats: %+v, want the vectors counted", st)
		}

		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(e.dir, strconv.FormatInt(e.coll.ID, 10), "folio-vectors")); err != nil {
			t.Fatalf("no vectors' snapshot after a close: %v", err)
		}
		write(200, 260) // while stopped: replayed at the start
		ix = e.start(t)
		e.caughtUp(t, ix)
		e.checkNearest(t, ix, rng)
		if st := ix.Stats(context.Background()); st.Indexes[0].Rebuilds != 0 {
			t.Fatalf("the index was rebuilt at the start: %+v", st.Indexes)
		}
	})
}

// TestVectorsSnapshotFallbacks: an index whose vectors' snapshot is older
// than its Bleve index replays the log from the older of the two; one
// whose snapshot is missing or damaged is rebuilt. Either way its
// neighbours are the documents'.
func TestVectorsSnapshotFallbacks(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newVectorEnv(t, b)
		rng := rand.New(rand.NewPCG(9, 10))
		write := func(from, to int) {
			for i := from; i < to; i++ {
				e.putDoc(t, vecDoc(i, []string{"a", "b"}[i%2], randVec(rng, 4), randVec(rng, 3)))
			}
		}
		snapshot := filepath.Join(e.dir, strconv.FormatInt(e.coll.ID, 10), "folio-vectors")
		write(0, 100)
		ix := e.start(t)
		e.caughtUp(t, ix)
		ix.Close()
		old, err := os.ReadFile(snapshot)
		if err != nil {
			t.Fatal(err)
		}

		ix = e.start(t)
		write(50, 150)
		e.caughtUp(t, ix)
		ix.Close()
		// The older snapshot, as a crash before the next save leaves it.
		if err := os.WriteFile(snapshot, old, 0o644); err != nil {
			t.Fatal(err)
		}
		ix = e.start(t)
		e.caughtUp(t, ix)
		e.checkNearest(t, ix, rng)
		if st := ix.Stats(context.Background()); st.Indexes[0].Rebuilds != 0 {
			t.Fatalf("an older snapshot rebuilt the index: %+v", st.Indexes)
		}
		ix.Close()

		for name, damage := range map[string]func() error{
			"missing":   func() error { return os.Remove(snapshot) },
			"truncated": func() error { return os.Truncate(snapshot, int64(len(old)/2)) },
			"flipped": func() error {
				data, err := os.ReadFile(snapshot)
				if err != nil {
					return err
				}
				data[len(data)/2] ^= 0x40
				return os.WriteFile(snapshot, data, 0o644)
			},
		} {
			t.Run(name, func(t *testing.T) {
				if err := damage(); err != nil {
					t.Fatal(err)
				}
				ix := e.start(t)
				e.caughtUp(t, ix)
				e.checkNearest(t, ix, rng)
				if st := ix.Stats(context.Background()); st.Indexes[0].Rebuilds != 1 {
					t.Fatalf("a %s snapshot: %+v, want the index rebuilt", name, st.Indexes)
				}
				ix.Close()
			})
		}
	})
}

// TestVectorFieldAddedBySchemaChange: a vector field that a schema change
// adds to a searched collection is searchable over the documents written
// before the change too (the index is rebuilt for it).
func TestVectorFieldAddedBySchemaChange(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		e.setSchema(t, `{"title":"coll","properties":{"id":{"type":"integer"},"t":{"type":"string"},"tag":{"type":"string"}},"primary_key":["id"]}`)
		for i := range 20 {
			e.putDoc(t, fmt.Sprintf(`{"id":%d,"t":"x","tag":"a"}`, i))
		}
		ix := e.start(t)
		e.caughtUp(t, ix)
		e.setSchema(t, vectorSchema)
		rng := rand.New(rand.NewPCG(11, 12))
		for i := 20; i < 60; i++ {
			e.putDoc(t, vecDoc(i, "a", randVec(rng, 4), randVec(rng, 3)))
		}
		e.caughtUp(t, ix)
		e.checkNearest(t, ix, rng)
	})
}

// TestVectorQueryChecks: a vector query is checked against the schema.
func TestVectorQueryChecks(t *testing.T) {
	e := &env{}
	var err error
	e.coll = &catalog.Collection{}
	if e.coll.Schema, err = parseSchema(vectorSchema); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ raw, err string }{
		{`{"v":[1,2,3,4]}`, ""},
		{`{"o.w":[1,2,3],"top_k":5}`, ""},
		{`{"v":[1,2,3]}`, "the query vector has 3 dimensions, field 'v' has 4"},
		{`{"v":[0,0,0,0]}`, "length zero"},
		{`{"o.w":[0,0,0]}`, ""}, // euclidean: any point
		{`{"t":[1,2,3,4]}`, "'t' is not a vector field"},
		{`{"nope":[1]}`, "'nope' is not a vector field"},
		{`{"v":[1,2,3,"x"]}`, "must be an array of numbers"},
		{`{"v":[1,2,3,1e39]}`, "must be an array of numbers"},
		{`{"v":[1,2,3,4],"o.w":[1,2,3]}`, "a search has one query vector"},
		{`{"top_k":3}`, "names no vector field"},
		{`{"v":[1,2,3,4],"top_k":0}`, "top_k must be an integer from 1 to 10000"},
		{`{"v":[1,2,3,4],"top_k":10001}`, "top_k must be an integer from 1 to 10000"},
		{`[1,2]`, "vector must be an object"},
	} {
		q, err := search.PrepareVector(e.coll.Schema, []byte(c.raw))
		if c.err == "" {
			if err != nil || q == nil {
				t.Errorf("%s: %v", c.raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one saying %q", c.raw, err, c.err)
		}
	}
}

func parseSchema(raw string) (*schema.Schema, error) { return schema.Parse("coll", []byte(raw)) }
