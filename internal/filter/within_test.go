package filter

import (
	"testing"
	"time"
)

// The schema and documents of the original's TestFilteringOnArrays, cut
// down: arrays of objects, arrays in them, arrays of arrays.
const withinSchema = `{"title":"c","properties":{"pkey_int":{"type":"integer"},
	"arr_obj":{"type":"array","items":{"type":"object","properties":{
		"name":{"type":"string"},"n":{"type":"integer"},
		"zipcodes":{"type":"array","items":{"type":"string"}}}}},
	"arr_of_arr":{"type":"array","items":{"type":"array","items":{"type":"string"}}},
	"obj":{"type":"object","properties":{
		"array_obj":{"type":"array","items":{"type":"object","properties":{"university":{"type":"string"}}}},
		"str_field":{"type":"string"}}}}}`

func TestMatchesWithinArrays(t *testing.T) {
	s := mustSchema(t, withinSchema)
	const doc = `{"pkey_int":1,
		"arr_obj":[{"name":"classic","n":1,"zipcodes":["95008","94089"]},{"name":"Demo","n":5},{"name":null}],
		"arr_of_arr":[["shopping","clothes ( > 😀"],["tennis"]],
		"obj":{"array_obj":[{"university":"abc@university"},{"university":"cal@university"}],"str_field":"m"}}`
	for _, c := range []struct {
		filter    string
		collation Collation
		doc       string
		want      bool
	}{
		{`{"arr_obj.name":"classic"}`, Collation{}, doc, true},
		{`{"arr_obj.name":"Demo"}`, Collation{}, doc, true},
		{`{"arr_obj.name":"demo"}`, Collation{}, doc, false},
		{`{"arr_obj.name":"demo"}`, Collation{Case: "ci"}, doc, true},
		{`{"arr_obj.name":"other"}`, Collation{}, doc, false},
		{`{"arr_obj.zipcodes":94089}`, Collation{}, doc, true}, // the value's text, read as a string
		{`{"arr_obj.zipcodes":"1234"}`, Collation{}, doc, false},
		{`{"arr_of_arr":"clothes ( > 😀"}`, Collation{}, doc, true},
		{`{"arr_of_arr":"tennis"}`, Collation{}, doc, true},
		{`{"arr_of_arr":"soccer"}`, Collation{}, doc, false},
		{`{"obj.array_obj.university":"cal@university"}`, Collation{}, doc, true},
		{`{"obj.array_obj.university":"stan@university"}`, Collation{}, doc, false},
		// The operators hold for one value together: 1 and 5 are not in (2, 4).
		{`{"arr_obj.n":{"$gt":2,"$lt":4}}`, Collation{}, doc, false},
		{`{"arr_obj.n":{"$gt":2,"$lt":6}}`, Collation{}, doc, true},
		{`{"arr_obj.n":{"$in":[3,5]}}`, Collation{}, doc, true},
		{`{"arr_obj.n":{"$in":[3]}}`, Collation{}, doc, false},
		{`{"arr_obj.name":{"$ne":"classic"}}`, Collation{}, doc, false},
		{`{"arr_obj.name":{"$ne":"x"}}`, Collation{}, doc, true},
		{`{"$or":[{"arr_obj.name":"x"},{"obj.str_field":"m"}]}`, Collation{}, doc, true},
		{`{"$and":[{"arr_obj.name":"classic"},{"pkey_int":2}]}`, Collation{}, doc, false},
		// Missing, null, empty, or of another shape: nothing is reached.
		{`{"arr_obj.name":"classic"}`, Collation{}, `{"pkey_int":1}`, false},
		{`{"arr_obj.name":"classic"}`, Collation{}, `{"arr_obj":null}`, false},
		{`{"arr_obj.name":"classic"}`, Collation{}, `{"arr_obj":[]}`, false},
		{`{"arr_obj.name":"classic"}`, Collation{}, `{"arr_obj":[null,{}]}`, false},
		{`{"arr_of_arr":"a"}`, Collation{}, `{"arr_of_arr":[[],["a"]]}`, true},
		{`{"arr_obj.name":{"$ne":"x"}}`, Collation{}, `{"pkey_int":1}`, true}, // as $ne elsewhere
		// Escaped member names in the document are read.
		{`{"arr_obj.name":"classic"}`, Collation{}, `{"arr_obj":[{"na\u006de":"classic"}]}`, true},
	} {
		f, err := Parse([]byte(c.filter), s, c.collation)
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got, err := f.Matches([]byte(c.doc)); err != nil || got != c.want {
			t.Errorf("%s (%v) on %s: Matches = %v, %v; want %v (tree %s)", c.filter, c.collation, c.doc, got, err, c.want, show(f.Root))
		}
	}
}

func TestWithinErrors(t *testing.T) {
	s := mustSchema(t, withinSchema)
	const inside = ", a field inside an array of objects or of arrays: compare its values ($eq, $gt, $gte, $lt, $lte, $in, $ne)"
	for filter, want := range map[string]string{
		`{"arr_obj.nope":"x"}`:                    "querying on non schema field 'arr_obj.nope'",
		`{"arr_obj.name.x":"x"}`:                  "querying on non schema field 'arr_obj.name.x'",
		`{"arr_obj":"x"}`:                         "unsupported value type: field 'arr_obj' is an array of objects, which a filter cannot compare",
		`{"arr_obj.n":"x"}`:                       "unsupported value type: field 'arr_obj.n' takes an integer, not \"x\"",
		`{"arr_obj.name":["a"]}`:                  "unsupported value type: field 'arr_obj.name' lies inside an array, and a filter compares the values there one at a time, with a string, not with [\"a\"]",
		`{"arr_of_arr":["a","b"]}`:                "unsupported value type: field 'arr_of_arr' lies inside an array, and a filter compares the values there one at a time, with a string, not with [\"a\",\"b\"]",
		`{"arr_obj.name":{"$contains":"x"}}`:      "$contains does not apply to 'arr_obj.name'" + inside,
		`{"arr_obj.name":{"$exists":true}}`:       "$exists does not apply to 'arr_obj.name'" + inside,
		`{"arr_obj.name":{"$in":[]}}`:             "$in on field 'arr_obj.name' needs at least one value",
		`{"arr_obj.name":{"$in":"x"}}`:            "$in on field 'arr_obj.name' takes an array of values",
		`{"arr_obj.name":{"$nin":["x"]}}`:         "unsupported operator '$nin'",
		`{"obj.array_obj.university":{"$gt":{}}}`: "unsupported value type: field 'obj.array_obj.university' lies inside an array, and a filter compares the values there one at a time, with a string, not with {}",
	} {
		_, err := Parse([]byte(filter), s, Collation{})
		wantError(t, err, want)
	}
}

func TestMatchesTimes(t *testing.T) {
	s := mustSchema(t, withinSchema)
	created := time.Date(2023, 5, 1, 10, 0, 0, 500_000_000, time.UTC)
	ts := Times{Created: created, Updated: created.Add(time.Hour)}
	for _, c := range []struct {
		filter string
		ts     Times
		want   bool
	}{
		{`{"_tigris_created_at":{"$gt":"2023-05-01T10:00:00Z"}}`, ts, true},
		{`{"_tigris_created_at":{"$gt":"2023-05-01T10:00:00.6Z"}}`, ts, false},
		{`{"_tigris_created_at":"2023-05-01T12:00:00.5+02:00"}`, ts, true}, // the same instant
		{`{"_tigris_created_at":{"$gte":"2023-05-01T10:00:00.5Z","$lt":"2023-05-02T00:00:00Z"}}`, ts, true},
		{`{"_tigris_updated_at":{"$gt":"2023-05-01T10:30:00Z"}}`, ts, true},
		{`{"_tigris_updated_at":{"$gt":"2023-05-01T10:30:00Z"}}`, Times{Created: created}, false}, // never updated
		{`{"_tigris_updated_at":{"$ne":"2023-05-01T10:30:00Z"}}`, Times{Created: created}, true},
		{`{"_tigris_created_at":{"$in":["2020-01-01T00:00:00Z","2023-05-01T10:00:00.5Z"]}}`, ts, true},
		// Not a time: compared as text, as the original compared date-times.
		{`{"_tigris_created_at":{"$gt":"2022-12.22T17:42:34Z"}}`, ts, true},
		{`{"_tigris_created_at":{"$lt":"2022-12.22T17:42:34Z"}}`, ts, false},
		{`{"$and":[{"_tigris_created_at":{"$gt":"2023-01-01T00:00:00Z"}},{"pkey_int":1}]}`, ts, true},
		{`{"$and":[{"_tigris_created_at":{"$gt":"2023-01-01T00:00:00Z"}},{"pkey_int":2}]}`, ts, false},
		{`{"_tigris_created_at":{"$gt":"2023-01-01T00:00:00Z"}}`, Times{}, false}, // Matches without times
	} {
		f, err := Parse([]byte(c.filter), s, Collation{})
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got, err := f.MatchesAt([]byte(`{"pkey_int":1}`), c.ts); err != nil || got != c.want {
			t.Errorf("%s at %v: %v, %v; want %v", c.filter, c.ts, got, err, c.want)
		}
	}
	for filter, want := range map[string]string{
		`{"_tigris_created_at":1}`:                      "unsupported value type: field '_tigris_created_at' takes a date-time string, not 1",
		`{"_tigris_created_at":{"$exists":true}}`:       "$exists does not apply to '_tigris_created_at', the document's time: compare it ($eq, $gt, $gte, $lt, $lte, $in, $ne)",
		`{"_tigris_deleted_at":"2023-01-01T00:00:00Z"}`: "querying on non schema field '_tigris_deleted_at'",
	} {
		_, err := Parse([]byte(filter), s, Collation{})
		wantError(t, err, want)
	}
	f, _ := Parse([]byte(`{"_tigris_updated_at":{"$gt":"2023-01-01T00:00:00Z"}}`), s, Collation{})
	if op := f.DocumentOnly(); op != "_tigris_updated_at" {
		t.Errorf("DocumentOnly = %q", op)
	}
}
