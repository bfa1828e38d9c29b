package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
	"github.com/foliodb/folio/internal/vector"
)

// A schema stored before vector dimensions were required and bounded may
// hold a vector field without usable ones: it gets no graph (making one
// panicked the rebuild under the indexer's lock), and a search on it is
// refused, while the schema's other vector fields work.
func TestStoredVectorFieldWithoutDimensions(t *testing.T) {
	s, err := schema.ParseStored("c", []byte(`{"title":"c","properties":{"id":{"type":"integer"},
		"none":{"type":"array","format":"vector"},
		"huge":{"type":"array","format":"vector","dimensions":5000},
		"ok":{"type":"array","format":"vector","dimensions":2}},"primary_key":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	vs := newVectorSet(s)
	if vs == nil || len(vs.fields) != 1 || vs.fields[0].path != "ok" {
		t.Fatalf("vector set %+v, want the one usable field", vs)
	}
	if err := vs.put("k", []byte(`{"id":1,"none":[1,2,3],"huge":[1],"ok":[1,0]}`)); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"none", "huge"} {
		_, err := PrepareVector(s, []byte(`{"`+field+`":[1,2]}`))
		if err == nil || !strings.Contains(err.Error(), "none a search can use") {
			t.Errorf("%s: %v, want a refusal", field, err)
		}
	}
	if _, err := PrepareVector(s, []byte(`{"ok":[1,2]}`)); err != nil {
		t.Error(err)
	}
}

// A filter's matches past matchKeysKept are kept as fingerprints: the same
// members, and a search through the graph that returns allowed keys only,
// the nearest of them.
func TestMatchSetFingerprints(t *testing.T) {
	defer func(n int) { matchKeysKept = n }(matchKeysKept)
	matchKeysKept = 10
	x := vector.New(2, vector.Euclidean, vector.Options{Seed: 3})
	set := newMatchSet()
	for i := range 400 {
		key := fmt.Sprintf("k%03d", i)
		if err := x.Put(key, []float32{float32(i % 20), float32(i / 20)}); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			set.add(key)
		}
	}
	if set.prints == nil || set.keys != nil || set.Len() != math.MaxInt {
		t.Fatalf("a set of 100 matches past a bound of 10: keys %d, prints %d, len %d", len(set.keys), len(set.prints), set.Len())
	}
	for i := range 400 {
		if got := set.Allows(fmt.Sprintf("k%03d", i)); got != (i%4 == 0) {
			t.Fatalf("Allows(k%03d) = %v", i, got)
		}
	}
	hits, err := x.Search([]float32{0.1, 0.2}, 5, set)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := x.SearchExact([]float32{0.1, 0.2}, 5, vector.Set(func() map[string]struct{} {
		m := map[string]struct{}{}
		for i := 0; i < 400; i += 4 {
			m[fmt.Sprintf("k%03d", i)] = struct{}{}
		}
		return m
	}()))
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 || !slices.Equal(hits, exact) {
		t.Fatalf("hits %v, want %v", hits, exact)
	}
}

func TestSearchBreadth(t *testing.T) {
	for _, c := range []struct{ n, ef int }{
		{0, 80}, {1_000, 80}, {100_000, 80}, {400_000, 160}, {1_000_000, 252}, {4_000_000, 505}, {10_000_000, 512},
	} {
		if got := searchBreadth(c.n); got != c.ef {
			t.Errorf("searchBreadth(%d) = %d, want %d", c.n, got, c.ef)
		}
	}
}
