package search

import (
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
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
