package filter

import (
	"errors"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

var fuzzFilters = []string{
	`{}`, `{"pkey_int":1}`, `{"int_value":{"$gt":1,"$lte":"9"}}`, `{"$and":[{"int_value":1},{"string_value":"a"}]}`,
	`{"$or":[{"pkey_int":1},{"$and":[{"double_value":1.5},{"bool_value":true}]}]}`,
	`{"string_value":{"$eq":"Ab","collation":{"case":"ci"}}}`, `{"object_value.inner.x":{"$gte":-3}}`,
	`{"bytes_value":"aGk=","uuid_value":"x","date_time_value":{"$lt":"2023"}}`, `{"$and":[{"x":1}]}`, `{"int_value":1.5}`,
	`{"int_value":{"$ne":1}}`, `{"pkey_int":{"$in":[1,2]}}`, `{"int_value":{"$exists":false}}`,
	`{"string_value":{"$contains":"a","collation":{"case":"ci"}}}`, `{"string_value":{"$not":"b"}}`, `{"object_value.nested_str":{"$regex":"^\\w+$"}}`,
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzFilters {
		f.Add(s, "")
		f.Add(s, "ci")
	}
	fields := testFields(f)
	f.Fuzz(func(t *testing.T, raw, collation string) {
		flt, err := Parse([]byte(raw), fields, Collation{Case: collation})
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Code != CodeInvalidArgument || fe.Message == "" {
				t.Fatalf("error %v is not an INVALID_ARGUMENT *Error", err)
			}
			return
		}
		checkTree(t, flt.Root, fields)
		if _, err := flt.Matches([]byte(`{}`)); err != nil {
			t.Fatalf("Matches({}): %v", err)
		}
	})
}

// checkTree checks the invariants of a parsed tree.
func checkTree(t *testing.T, n Node, fields FieldTypes) {
	switch n := n.(type) {
	case nil:
	case *And:
		if len(n.Nodes) < 2 {
			t.Fatalf("And with %d nodes", len(n.Nodes))
		}
		for _, c := range n.Nodes {
			checkTree(t, c, fields)
		}
	case *Or:
		if len(n.Nodes) < 2 {
			t.Fatalf("Or with %d nodes", len(n.Nodes))
		}
		for _, c := range n.Nodes {
			checkTree(t, c, fields)
		}
	case *Comparison:
		f, ok := fields.Field(n.Path)
		if !ok || f.Type != n.Type || !n.Type.Scalar() || n.Op < Eq || n.Op > Lte {
			t.Fatalf("bad comparison %s", show(n))
		}
		var ok2 bool
		switch n.Type {
		case schema.Int32, schema.Int64:
			_, ok2 = n.Value.(int64)
		case schema.Number:
			_, ok2 = n.Value.(float64)
		case schema.String, schema.UUID, schema.DateTime:
			_, ok2 = n.Value.(string)
		case schema.Bytes:
			_, ok2 = n.Value.([]byte)
		case schema.Bool:
			_, ok2 = n.Value.(bool)
		}
		if !ok2 || n.CaseInsensitive && n.Type != schema.String {
			t.Fatalf("bad value in %s", show(n))
		}
	case *Not:
		checkTree(t, n.Node, fields)
	case *Exists:
		if _, ok := fields.Field(n.Path); !ok {
			t.Fatalf("$exists on unknown path %s", n.Path)
		}
	case *Like:
		f, ok := fields.Field(n.Path)
		if !ok || f.Type != schema.String || (n.Op == Regex) != (n.re != nil) {
			t.Fatalf("bad %s on %s", n.Op, n.Path)
		}
	default:
		t.Fatalf("unknown node %T", n)
	}
}

func FuzzMatches(f *testing.F) {
	docs := []string{
		`{}`, `{"pkey_int":1,"int_value":1,"string_value":"a"}`, `{"double_value":1.5,"bool_value":true,"object_value":{"inner":{"x":-3}}}`,
		`{"string_value":"AB","bytes_value":"aGk=","uuid_value":"x","date_time_value":"2022-01-01T00:00:00Z"}`,
		`{"object_value":{"nested_str":"\u00e9"},"free":{"x":[1,{"y":null}]},"array_value":[1,2]}`, `{"int_value":null}`,
	}
	for i, s := range fuzzFilters {
		f.Add(s, []byte(docs[i%len(docs)]), i%2 == 0)
	}
	s := testFields(f)
	f.Fuzz(func(t *testing.T, raw string, doc []byte, ci bool) {
		c := Collation{}
		if ci {
			c.Case = "ci"
		}
		flt, err := Parse([]byte(raw), s, c)
		if err != nil {
			return
		}
		got, err := flt.Matches(doc)
		if s.Validate(doc) != nil {
			return // any answer will do, as long as there is no panic
		}
		if err != nil {
			t.Fatalf("Matches(%q) on a valid document: %v", doc, err)
		}
		if want := bruteTree(flt.Root, decodeDoc(t, doc)); got != want {
			t.Fatalf("filter %s, document %s: Matches = %v, brute force = %v (tree %s)", raw, doc, got, want, show(flt.Root))
		}
	})
}
