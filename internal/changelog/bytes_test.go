package changelog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

// logBytes is what Bytes reports, checked against the store's own count
// of every entry it still holds.
func logBytes(t *testing.T, s kv.Store, l *changelog.Log) (got, want int64) {
	t.Helper()
	got, err := l.Bytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want, err = s.LogBytes(ctx, 0, last(t, s)); err != nil {
		t.Fatal(err)
	}
	return got, want
}

func wantExact(t *testing.T, what string, s kv.Store, l *changelog.Log) int64 {
	t.Helper()
	got, want := logBytes(t, s, l)
	if got != want {
		t.Errorf("%s: Bytes %d, the store holds %d", what, got, want)
	}
	return got
}

// Without a trimmer, Bytes counts each entry once as it comes, and is
// exact after every commit.
func TestBytesWithoutTrimmer(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{})
		before := wantExact(t, "an empty log", s, l)
		commit(t, s, strings.Repeat("a", 1000))
		one := wantExact(t, "after an entry of 1,000 bytes", s, l)
		// A record holds the key and the document: at least the 1,000 bytes.
		if one-before < 1000 {
			t.Errorf("an entry of 1,000 bytes added %d bytes", one-before)
		}
		commit(t, s, "b", "c")
		commit(t, s, strings.Repeat("d", 5000))
		if n := wantExact(t, "after three entries", s, l); n-one < 5000 {
			t.Errorf("two more entries, one of 5,000 bytes, added %d bytes", n-one)
		}
		// Nothing new: the same count, nothing counted twice.
		wantExact(t, "asked again", s, l)
	})
}

// With a trimmer, the notes' counts and the entries since the last tick
// add up to what the store holds, before and after trims by the byte bound
// and by the retention.
func TestBytesWithTrimmer(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{Retention: time.Hour, MaxBytes: 20_000})
		big := func(c string) string { return strings.Repeat(c, 4000) }
		start := last(t, s)
		commit(t, s, big("a"))
		tick(t, l, 0)
		wantExact(t, "after the first tick", s, l)
		commit(t, s, big("b"))
		wantExact(t, "an entry after the tick", s, l)
		tick(t, l, time.Second)
		commit(t, s, big("c"))
		tick(t, l, 2*time.Second)
		// Past the byte bound: a is trimmed, and no longer counted.
		if keeps(t, s, start) {
			t.Fatal("nothing trimmed past the byte bound")
		}
		n := wantExact(t, "after the byte bound's trim", s, l)
		if n > 20_000 {
			t.Errorf("Bytes %d past the bound of 20,000 after the trim", n)
		}
		commit(t, s, "x")
		commit(t, s, "y")
		wantExact(t, "entries after the trim", s, l)
		tick(t, l, 3*time.Second)
		// The retention takes everything noted an hour before.
		commit(t, s, "z")
		tick(t, l, 2*time.Hour)
		tick(t, l, 2*time.Hour+time.Second)
		wantExact(t, "after the retention's trim", s, l)
	})
}

// A reader holding the trim in the middle of a note's entries: what the
// trim removed of that note still counts, never more than the note.
func TestBytesAfterATrimHeldMidway(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{Retention: time.Hour})
		start := last(t, s)
		tick(t, l, 0)
		commit(t, s, strings.Repeat("a", 3000))
		pb := commit(t, s, strings.Repeat("b", 3000))
		commit(t, s, strings.Repeat("c", 3000))
		tick(t, l, time.Minute) // one note for a, b and c
		r := open(t, l, start)
		// The reader holds the trim after b.
		if entries, err := r.Read(ctx, 2); err != nil || len(entries) != 2 || r.Position() != pb {
			t.Fatalf("read a and b: %d entries, at %d, %v", len(entries), r.Position(), err)
		}
		tick(t, l, 2*time.Hour)
		if keeps(t, s, start) || !keeps(t, s, pb) {
			t.Fatal("want a and b trimmed, c kept")
		}
		got, want := logBytes(t, s, l)
		// Each record holds its datum twice, as key and document.
		if got < want || got > want+2*6200 {
			t.Errorf("Bytes %d; the store holds %d, and a and b took about 12,000", got, want)
		}
		r.Close()
		commit(t, s, "d")
		tick(t, l, 2*time.Hour+time.Minute)
		tick(t, l, 4*time.Hour)
		wantExact(t, "once the trim passed the note", s, l)
	})
}
