package schema

import (
	"strings"
	"testing"
)

// A vector field takes exactly its dimensions of finite numbers (a
// number past float64's range is refused as any number field's is); anything
// else is the document's error, on collections and search indexes alike.
func TestValidateVectors(t *testing.T) {
	s := mustParse(t, "vecs", `{"title":"vecs","properties":{"id":{"type":"integer"},
		"v":{"type":"array","format":"vector","dimensions":3},
		"o":{"type":"object","properties":{"w":{"type":"array","format":"vector","dimensions":2}}}},"primary_key":["id"]}`)
	cases := []struct{ name, doc, err string }{
		{"exact", `{"id":1,"v":[1,2.5,-3e2]}`, ""},
		{"absent", `{"id":1}`, ""},
		{"null", `{"id":1,"v":null}`, ""},
		{"nested exact", `{"id":1,"o":{"w":[0,1]}}`, ""},
		{"nested zero", `{"id":1,"o":{"w":[0,0]}}`, "a vector of length zero has no direction"},
		{"short", `{"id":1,"v":[1,2]}`, "a vector of 3 dimensions is required, but found 2"},
		{"long", `{"id":1,"v":[1,2,3,4]}`, "a vector of 3 dimensions is required, but found 4"},
		{"empty", `{"id":1,"v":[]}`, "a vector of 3 dimensions is required, but found 0"},
		{"infinite", `{"id":1,"v":[1,1e999,3]}`, "'1e999' is out of the range of a 64-bit floating point number"},
		{"negative infinite", `{"id":1,"v":[1,2,-1e400]}`, "'-1e400' is out of the range of a 64-bit floating point number"},
		{"a string", `{"id":1,"v":[1,"NaN",3]}`, "expected number"},
		{"nested short", `{"id":1,"o":{"w":[1]}}`, "a vector of 2 dimensions is required, but found 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Validate([]byte(c.doc))
			if c.err == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one saying %q", err, c.err)
			}
		})
	}
}
