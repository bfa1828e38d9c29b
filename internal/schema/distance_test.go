package schema

import (
	"strings"
	"testing"
)

// A vector field's distance: cosine unless it says euclidean or dot, and
// only on vector fields.
func TestVectorDistance(t *testing.T) {
	schemaWith := func(field string) string {
		return `{"title":"v","properties":{"id":{"type":"integer"},"v":` + field + `},"primary_key":["id"]}`
	}
	cases := []struct{ name, field, want, err string }{
		{"default", `{"type":"array","format":"vector","dimensions":3}`, DistanceCosine, ""},
		{"cosine", `{"type":"array","format":"vector","dimensions":3,"distance":"cosine"}`, DistanceCosine, ""},
		{"euclidean", `{"type":"array","format":"vector","dimensions":3,"distance":"euclidean"}`, DistanceEuclidean, ""},
		{"dot", `{"type":"array","format":"vector","dimensions":3,"distance":"dot"}`, DistanceDot, ""},
		{"items given", `{"type":"array","items":{"type":"number"},"format":"vector","dimensions":3,"distance":"dot"}`, DistanceDot, ""},
		{"unknown", `{"type":"array","format":"vector","dimensions":3,"distance":"manhattan"}`, "", `distance of field 'v' must be "cosine", "euclidean" or "dot", not 'manhattan'`},
		{"not a string", `{"type":"array","format":"vector","dimensions":3,"distance":1}`, "", "distance of field 'v' must be a string"},
		{"not a vector", `{"type":"array","items":{"type":"number"},"distance":"dot"}`, "", "distance is only supported on vector fields"},
		{"on a number", `{"type":"number","distance":"dot"}`, "", "distance is only supported on vector fields"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("v", []byte(schemaWith(c.field)))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f, _ := s.Field("v"); f == nil || f.Distance != c.want {
				t.Fatalf("distance %+v, want %q", f, c.want)
			}
		})
	}
}

// A cosine vector of zeros has no direction: refused on write; the other
// distances take it.
func TestZeroVectors(t *testing.T) {
	for _, c := range []struct {
		distance, doc string
		refused       bool
	}{
		{"cosine", `{"id":1,"v":[0,0,0]}`, true},
		{"cosine", `{"id":1,"v":[0,-0.0,0e5]}`, true},
		{"cosine", `{"id":1,"v":[0,0,1e-30]}`, false},
		{"cosine", `{"id":1,"v":[0,0,1e-50]}`, true}, // zero as a float32
		{"dot", `{"id":1,"v":[0,0,1e39]}`, true},     // past float32's range
		{"euclidean", `{"id":1,"v":[0,0,0]}`, false},
		{"dot", `{"id":1,"v":[0,0,0]}`, false},
	} {
		s := mustParse(t, "v", `{"title":"v","properties":{"id":{"type":"integer"},"v":{"type":"array","format":"vector","dimensions":3,"distance":"`+c.distance+`"}},"primary_key":["id"]}`)
		err := s.Validate([]byte(c.doc))
		if c.refused != (err != nil) {
			t.Errorf("%s %s: error %v, refused want %v", c.distance, c.doc, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "no direction") && !strings.Contains(err.Error(), "out of the range of a vector's components") {
			t.Errorf("%s %s: error %v", c.distance, c.doc, err)
		}
	}
}
