package streams

import (
	"bytes"
	"errors"
	"testing"

	"github.com/foliodb/folio/internal/changelog"
)

// TestMatching is the rule a filtered events stream follows, for every
// kind of change against a filter on documents' "in": what it takes, and
// whether as the document leaving the filter.
func TestMatching(t *testing.T) {
	in := func(doc []byte) (bool, error) { return bytes.Contains(doc, []byte(`"in":true`)), nil }
	const yes, no = `{"id":1,"in":true}`, `{"id":1,"in":false}`
	rec := func(op changelog.Op, after, before string) *changelog.Record {
		r := &changelog.Record{Op: op, NS: 1, DB: "d", Collection: "c", Key: []byte("k")}
		if after != "" {
			r.Data = []byte(after)
		}
		if before != "" {
			r.Before = []byte(before)
		}
		return r
	}
	old := func(r *changelog.Record) *changelog.Record { r.NoBefore = true; return r }
	for _, tc := range []struct {
		name string
		r    *changelog.Record
		want Verdict
	}{
		{"insert in", rec(changelog.Insert, yes, ""), Take},
		{"insert out", rec(changelog.Insert, no, ""), Skip},
		{"update staying in", rec(changelog.Update, yes, yes), Take},
		{"update moving in", rec(changelog.Update, yes, no), Take},
		{"update moving out", rec(changelog.Update, no, yes), TakeLeaving},
		{"update staying out", rec(changelog.Update, no, no), Skip},
		{"replace staying in", rec(changelog.Replace, yes, yes), Take},
		{"replace moving in", rec(changelog.Replace, yes, no), Take},
		{"replace moving out", rec(changelog.Replace, no, yes), TakeLeaving},
		{"replace staying out", rec(changelog.Replace, no, no), Skip},
		{"replace creating in", rec(changelog.Replace, yes, ""), Take},
		{"replace creating out", rec(changelog.Replace, no, ""), Skip},
		{"delete of a match", rec(changelog.Delete, "", yes), Take},
		{"delete of another", rec(changelog.Delete, "", no), Skip},
		// Records from before the log kept the document before a change.
		{"old update in", old(rec(changelog.Update, yes, "")), Take},
		{"old update out", old(rec(changelog.Update, no, "")), TakeLeaving},
		{"old replace out", old(rec(changelog.Replace, no, "")), TakeLeaving},
		{"old insert out", old(rec(changelog.Insert, no, "")), Skip},
		{"old delete", old(rec(changelog.Delete, "", "")), Take},
	} {
		got, err := ChangesMatching(1, "d", "c", in)(tc.r)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
		if all, _ := Changes(1, "d", "c")(tc.r); all != Take {
			t.Errorf("%s unfiltered: %v, want Take", tc.name, all)
		}
	}
	// Another collection's change is skipped before the filter runs, and
	// the filter's error ends the stream.
	broken := func([]byte) (bool, error) { return false, errors.New("bad") }
	if v, err := ChangesMatching(1, "d", "c", broken)(&changelog.Record{Op: changelog.Insert, NS: 1, DB: "d", Collection: "x", Data: []byte(yes)}); v != Skip || err != nil {
		t.Errorf("other collection: %v, %v", v, err)
	}
	for _, op := range []changelog.Op{changelog.Insert, changelog.Update, changelog.Delete} {
		if _, err := ChangesMatching(1, "d", "c", broken)(rec(op, yes, yes)); err == nil {
			t.Errorf("%v: the filter's error was lost", op)
		}
	}
}

// A stream is handed no change's document before it (Before), and a change
// taken as leaving the filter says so; a partial pick holds and accounts
// only what it keeps.
func TestPickMarksLeaving(t *testing.T) {
	in := func(doc []byte) (bool, error) { return bytes.Contains(doc, []byte(`"in":true`)), nil }
	e := entry{pos: 5, records: []changelog.Record{
		{Op: changelog.Update, NS: 1, DB: "d", Collection: "c", Key: []byte("a"), Data: []byte(`{"in":false}`), Before: []byte(`{"in":true}`)},
		{Op: changelog.Update, NS: 1, DB: "d", Collection: "c", Key: []byte("b"), Data: []byte(`{"in":false}`), Before: []byte(`{"in":false}`)},
		{Op: changelog.Update, NS: 1, DB: "d", Collection: "c", Key: []byte("c"), Data: []byte(`{"in":true}`), Before: []byte(`{"in":false}`)},
	}}
	for _, r := range e.records {
		e.size += recordSize(&r)
	}
	b, size, err := pick(&e, Cursor{}, ChangesMatching(1, "d", "c", in))
	if err != nil || len(b) != 2 {
		t.Fatalf("picked %+v, %v; want two events", b, err)
	}
	if !b[0].Left || b[1].Left || string(b[0].Record.Key) != "a" || string(b[1].Record.Key) != "c" {
		t.Errorf("picked %+v", b)
	}
	want := 0
	for _, ev := range b {
		if ev.Record.Before != nil {
			t.Errorf("event %s holds the document before the change", ev.Record.Key)
		}
		want += len(ev.Record.Key) + len(ev.Record.Data) + eventOverhead
	}
	if size != want {
		t.Errorf("accounted %d bytes, want %d", size, want)
	}
}
