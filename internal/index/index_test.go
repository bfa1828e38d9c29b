package index

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/schema"
)

const testSchema = `{"title":"things","primary_key":["id"],"properties":{
	"id":{"type":"integer"},"name":{"type":"string"},"score":{"type":"number"},"ok":{"type":"boolean"},
	"raw":{"type":"string","format":"byte"},"when":{"type":"string","format":"date-time"},
	"tags":{"type":"array","items":{"type":"string"}},
	"pts":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}}}},
	"meta":{"type":"object"},
	"addr":{"type":"object","properties":{"city":{"type":"string"},"geo":{"type":"object","properties":{"lat":{"type":"number"}}}}}}}`

func describe(es []Entry) string {
	var out []string
	for _, e := range es {
		v, _, err := keyenc.DecodeOne(e.Value)
		if err != nil {
			panic(err)
		}
		out = append(out, fmt.Sprintf("%s/%d=%v", e.Path, e.Kind, v))
	}
	return strings.Join(out, " ")
}

func TestEntries(t *testing.T) {
	s, err := schema.Parse("things", []byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"id":1}`, `id/0=1`},
		{`{"id":2,"name":"Ann"}`, `id/0=2 name/0=Ann name/1=ann`},
		{`{"id":3,"name":null,"score":1,"ok":false}`, `id/0=3 ok/0=false score/0=1`},
		{`{"id":4,"raw":"aGk=","when":"2022-01-01T00:00:00Z"}`, `id/0=4 raw/0=[104 105] when/0=2022-01-01T00:00:00Z`},
		// arrays of scalars: each distinct element once; arrays of objects
		// and free-form objects: nothing.
		{`{"id":5,"tags":["b","a","b",null],"pts":[{"x":1}],"meta":{"k":1}}`, `id/0=5 tags/0=a tags/0=b`},
		{`{"id":6,"addr":{"city":"Oslo","geo":{"lat":59.9}}}`, `addr.city/0=Oslo addr.city/1=oslo addr.geo.lat/0=59.9 id/0=6`},
		{`{"name":"\u00c9t\u00e9","id":7}`, `id/0=7 name/0=Été name/1=été`},
		// fields after an object or an array are still indexed
		{`{"id":8,"addr":{"city":"Oslo"},"tags":["x"],"ok":true}`, `addr.city/0=Oslo addr.city/1=oslo id/0=8 ok/0=true tags/0=x`},
		// A string that folds to itself has no Folded entry: its Exact one
		// serves case-insensitive lookups too. One that folds to itself only
		// as far as entries keep of it neither.
		{`{"id":9,"name":"ann","tags":["A","a"]}`, `id/0=9 name/0=ann tags/0=A tags/0=a tags/1=a`},
	} {
		es, err := Entries(s, []byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if got := describe(es); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.doc, got, tc.want)
		}
	}
}

func TestEntriesFoldedBeyondTheCut(t *testing.T) {
	s, _ := schema.Parse("things", []byte(testSchema))
	long := strings.Repeat("z", MaxValueBytes) + "Z" // differs from its fold past the cut
	es, err := Entries(s, []byte(`{"id":1,"name":"`+long+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Kind == Folded {
			t.Errorf("a Folded entry for a string that folds to itself as far as entries keep: %s", describe([]Entry{e}))
		}
	}
}

func TestEntriesCutLongValues(t *testing.T) {
	s, _ := schema.Parse("things", []byte(testSchema))
	es, err := Entries(s, []byte(`{"id":1,"name":"`+strings.Repeat("Z", 3*MaxValueBytes)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if len(e.Value) > MaxValueBytes+2 {
			t.Fatalf("entry %s/%d holds %d bytes", e.Path, e.Kind, len(e.Value))
		}
	}
}

func TestDiff(t *testing.T) {
	s, _ := schema.Parse("things", []byte(testSchema))
	old, _ := Entries(s, []byte(`{"id":1,"name":"Ann","score":2,"tags":["a","b"]}`))
	next, _ := Entries(s, []byte(`{"id":1,"name":"ann","score":2,"tags":["b","c"]}`))
	removed, added := Diff(old, next)
	// The folded name and the score do not change, so they are not touched:
	// "ann" has only its Exact entry, which holds what the Folded one held.
	if got := describe(removed); got != "name/0=Ann name/1=ann tags/0=a" {
		t.Errorf("removed: %s", got)
	}
	if got := describe(added); got != "name/0=ann tags/0=c" {
		t.Errorf("added: %s", got)
	}
}

// A value of exactly MaxValueBytes is held whole, and not reported cut
// (a cut value makes comparisons widen).
func TestTruncateAtTheLimit(t *testing.T) {
	for _, n := range []int{MaxValueBytes - 1, MaxValueBytes, MaxValueBytes + 1} {
		long := strings.Repeat("z", n)
		for _, v := range []any{long, []byte(long)} {
			got, cut := Truncate(v)
			if want := n > MaxValueBytes; cut != want {
				t.Errorf("%T of %d bytes: cut %v, want %v", v, n, cut, want)
			}
			if s, ok := got.(string); ok && len(s) != min(n, MaxValueBytes) {
				t.Errorf("string of %d bytes cut to %d", n, len(s))
			}
			if b, ok := got.([]byte); ok && len(b) != min(n, MaxValueBytes) {
				t.Errorf("bytes of %d cut to %d", n, len(b))
			}
		}
	}
}

// Diff of a document with no entries before or none after.
func TestDiffEmpty(t *testing.T) {
	s, _ := schema.Parse("things", []byte(testSchema))
	es, _ := Entries(s, []byte(`{"id":1,"name":"A"}`))
	if removed, added := Diff(nil, es); len(removed) != 0 || describe(added) != describe(es) {
		t.Errorf("from nothing: removed %s, added %s", describe(removed), describe(added))
	}
	if removed, added := Diff(es, nil); len(added) != 0 || describe(removed) != describe(es) {
		t.Errorf("to nothing: removed %s, added %s", describe(removed), describe(added))
	}
	if removed, added := Diff(es, es); len(removed)+len(added) != 0 {
		t.Errorf("unchanged: removed %s, added %s", describe(removed), describe(added))
	}
}

func TestKeyRoundTrip(t *testing.T) {
	e := Entry{Path: "a.b", Kind: Folded, Value: keyenc.AppendString(nil, "x\x00y")}
	suffix := keyenc.AppendInt(keyenc.AppendString(nil, "pk"), 7)
	key := Key(9, e, suffix)
	prefix := FieldPrefix(9, "a.b", Folded)
	if !bytes.HasPrefix(key, prefix) {
		t.Fatal("key does not start with its field prefix")
	}
	got, err := PKSuffix(key, len(prefix))
	if err != nil || !bytes.Equal(got, suffix) {
		t.Fatalf("suffix %x, %v; want %x", got, err, suffix)
	}
}

func FuzzEntries(f *testing.F) {
	s, _ := schema.Parse("things", []byte(testSchema))
	f.Add([]byte(`{"id":1,"name":"Ann","tags":["x"],"addr":{"city":"c"}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if s.Validate(doc) != nil {
			return
		}
		es, err := Entries(s, doc)
		if err != nil {
			t.Fatalf("a valid document has no entries: %v", err)
		}
		for i := 1; i < len(es); i++ {
			if !less(es[i-1], es[i]) {
				t.Fatal("entries not sorted and unique")
			}
		}
	})
}
