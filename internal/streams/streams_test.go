package streams

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
)

var bg = context.Background()

func newStore(t *testing.T) kv.Store {
	t.Helper()
	s, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newHub(t *testing.T, s kv.Store, opts Options) *Hub {
	t.Helper()
	h := NewHub(changelog.NewLog(s, changelog.Options{}), opts)
	h.Start(context.Background())
	t.Cleanup(func() { h.Close() })
	return h
}

// rec is a record of the test's shorthand: collection and data; the key is
// the data too.
type rec struct{ coll, data string }

// commit writes one transaction with the records and returns its position.
func commit(t testing.TB, s kv.Store, recs ...rec) kv.Position {
	t.Helper()
	tx, err := s.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		op := changelog.Insert
		if r.coll == "msgs" {
			op = changelog.Publish
		}
		rc := changelog.Record{Op: op, NS: 1, DB: "db", DBID: 1, Collection: r.coll, CollID: 2, Key: []byte("k" + r.data), Data: []byte(r.data)}
		if err := tx.AppendLog(rc.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	pos, err := tx.Commit(bg)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// next takes one batch, failing after a deadline.
func next(t *testing.T, sub *Subscription) Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	b, err := sub.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return b
}

// render shows a batch as "data,data!" with "!" marking the last event.
func render(b Batch) string {
	s := ""
	for i, e := range b {
		if i > 0 {
			s += ","
		}
		s += string(e.Record.Data)
		if e.Last {
			s += "!"
		}
	}
	return s
}

func subscribe(t *testing.T, h *Hub, after Cursor, sel Selector) *Subscription {
	t.Helper()
	sub, err := h.Subscribe(bg, after, sel)
	if err != nil {
		t.Fatalf("Subscribe after %#v: %v", after, err)
	}
	t.Cleanup(sub.Close)
	return sub
}

func now(t *testing.T, s kv.Store) Cursor {
	t.Helper()
	last, err := s.LastPosition(bg)
	if err != nil {
		t.Fatal(err)
	}
	return After(last)
}

func TestCursorToken(t *testing.T) {
	for _, c := range []Cursor{{}, After(0), After(1 << 60), {Pos: 7, Index: 0}, {Pos: 7, Index: 3}} {
		got, err := ParseCursor("start_after", c.String())
		if err != nil || got != c {
			t.Errorf("ParseCursor(%q) = %#v, %v; want %#v", c.String(), got, err, c)
		}
	}
	for _, bad := range []string{"", "x", "AQ", "!!!!", After(3).String() + "A", "AgAAAAAAAAADAAAAAA"} {
		if _, err := ParseCursor("start_after", bad); apierror.CodeOf(err) != apierror.InvalidArgument {
			t.Errorf("ParseCursor(%q): %v, want INVALID_ARGUMENT", bad, err)
		}
	}
}

func TestCursorBefore(t *testing.T) {
	for _, tc := range []struct {
		c     Cursor
		pos   kv.Position
		index int
		want  bool
	}{
		{After(5), 5, 0, false},
		{After(5), 6, 0, true},
		{After(5), 4, 9, false},
		{Cursor{5, 1}, 5, 1, false},
		{Cursor{5, 1}, 5, 2, true},
		{Cursor{5, 1}, 6, 0, true},
		{Cursor{5, 1}, 4, 7, false},
	} {
		if got := tc.c.before(tc.pos, tc.index); got != tc.want {
			t.Errorf("%#v.before(%d, %d) = %v, want %v", tc.c, tc.pos, tc.index, got, tc.want)
		}
	}
}

func TestLiveInCommitOrder(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{})
	commit(t, s, rec{"c1", "before"})
	sub := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	p1 := commit(t, s, rec{"c1", "a"}, rec{"c2", "x"}, rec{"c1", "b"}, rec{"c2", "y"})
	commit(t, s, rec{"c2", "z"})
	p3 := commit(t, s, rec{"c1", "c"}, rec{"msgs", "m"})
	if got := render(next(t, sub)); got != "a,b!" {
		t.Errorf("first commit: %s, want a,b!", got)
	}
	b := next(t, sub)
	if got := render(b); got != "c!" {
		t.Errorf("third commit: %s, want c!", got)
	}
	if b[0].Cursor != After(p3) || p3 <= p1 {
		t.Errorf("cursor %#v, want After(%d): a transaction's last event stands for all of it", b[0].Cursor, p3)
	}
	if h.Len() != 1 {
		t.Errorf("hub feeds %d subscriptions, want 1", h.Len())
	}
}

func TestResumeFromCursor(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{})
	start := now(t, s)
	commit(t, s, rec{"c1", "a"})
	p := commit(t, s, rec{"c1", "b"}, rec{"c2", "x"}, rec{"c1", "c"}, rec{"c1", "d"})
	commit(t, s, rec{"c1", "e"})
	for _, tc := range []struct {
		name  string
		after Cursor
		want  []string
	}{
		{"from the start", start, []string{"a!", "b,c,d!", "e!"}},
		{"after a commit", After(p), []string{"e!"}},
		{"inside a commit", Cursor{Pos: p, Index: 0}, []string{"c,d!", "e!"}},
		{"after a record of another collection", Cursor{Pos: p, Index: 1}, []string{"c,d!", "e!"}},
		{"after the commit's last record", Cursor{Pos: p, Index: 3}, []string{"e!"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := subscribe(t, h, tc.after, Changes(1, "db", "c1"))
			var got []string
			for range tc.want {
				got = append(got, render(next(t, sub)))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A subscription far behind reads the log itself, in several reads, and
// joins the hub without losing or repeating anything while commits go on.
func TestCatchUpThenLive(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{ReadBatch: 4})
	// The hub is live for someone else all along.
	other := subscribe(t, h, now(t, s), Changes(1, "db", "c2"))
	start := now(t, s)
	const before, during = 30, 30
	for i := range before {
		commit(t, s, rec{"c1", fmt.Sprint(i)}, rec{"c2", "x"})
	}
	sub := subscribe(t, h, start, Changes(1, "db", "c1"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := before; i < before+during; i++ {
			commit(t, s, rec{"c1", fmt.Sprint(i)})
		}
	}()
	for i := range before + during {
		if got, want := render(next(t, sub)), fmt.Sprint(i)+"!"; got != want {
			t.Fatalf("event %d: %s, want %s", i, got, want)
		}
	}
	<-done
	if h.Len() != 2 {
		t.Errorf("hub feeds %d subscriptions, want 2 (the caught-up one joined)", h.Len())
	}
	other.Close()
}

func TestSubscribeOutOfRange(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{})
	p1 := commit(t, s, rec{"c1", "a"})
	p2 := commit(t, s, rec{"c1", "b"})
	commit(t, s, rec{"c1", "c"})
	if err := s.TrimLog(bg, p2); err != nil {
		t.Fatal(err)
	}
	last := now(t, s)
	for _, tc := range []struct {
		name  string
		after Cursor
		code  apierror.Code
	}{
		{"trimmed", Cursor{Pos: p1, Index: 0}, apierror.OutOfRange},
		{"before the trimmed", After(p1 - 1), apierror.OutOfRange},
		{"ahead of the log", After(last.Pos + 1), apierror.OutOfRange},
		{"just after the trimmed", After(p1), ""},
		{"inside the oldest kept", Cursor{Pos: p2, Index: 0}, ""},
	} {
		sub, err := h.Subscribe(bg, tc.after, Changes(1, "db", "c1"))
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			} else {
				sub.Close()
			}
			continue
		}
		if apierror.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
}

// A consumer that stops taking batches is ended once MaxPending bytes
// wait for it, after it gets everything queued before: nothing is skipped,
// and resuming from the last batch it got continues without a gap.
func TestSlowConsumer(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{MaxPending: 1000})
	sub := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	const n = 40
	for i := range n {
		commit(t, s, rec{"c1", fmt.Sprintf("%03d", i)})
	}
	// The hub ends the subscription on its own, while nobody takes from it.
	for deadline := time.Now().Add(10 * time.Second); h.Len() != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the subscription was not ended while its consumer took nothing")
		}
		runtime.Gosched()
	}
	var got []string
	var last Cursor
	for {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		b, err := sub.Next(ctx)
		cancel()
		if err != nil {
			if apierror.CodeOf(err) != apierror.ResourceExhausted {
				t.Fatalf("ended with %v, want RESOURCE_EXHAUSTED", err)
			}
			break
		}
		got = append(got, string(b[0].Record.Data))
		last = b[0].Cursor
	}
	if len(got) == 0 || len(got) >= n {
		t.Fatalf("got %d batches before the end, want some but not all %d", len(got), n)
	}
	if h.Len() != 0 {
		t.Errorf("the ended subscription is still fed")
	}
	resumed := subscribe(t, h, last, Changes(1, "db", "c1"))
	for len(got) < n {
		got = append(got, string(next(t, resumed)[0].Record.Data))
	}
	for i, d := range got {
		if d != fmt.Sprintf("%03d", i) {
			t.Fatalf("event %d is %s: a gap or a repeat in %q", i, d, got)
		}
	}
}

func TestCloseReleases(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{})
	sub := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	ctx, cancel := context.WithCancel(bg)
	waiting := make(chan error, 1)
	go func() {
		_, err := sub.Next(ctx)
		waiting <- err
	}()
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("Next after cancel: %v", err)
	}
	sub.Close()
	if h.Len() != 0 {
		t.Errorf("hub still feeds %d subscriptions after Close", h.Len())
	}
	commit(t, s, rec{"c1", "a"})
	if _, err := sub.Next(bg); apierror.CodeOf(err) != apierror.Cancelled {
		t.Errorf("Next after Close: %v", err)
	}
}

func TestHubClose(t *testing.T) {
	s := newStore(t)
	h := NewHub(changelog.NewLog(s, changelog.Options{}), Options{})
	h.Start(context.Background())
	sub, err := h.Subscribe(bg, now(t, s), Changes(1, "db", "c1"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := sub.Next(bg); apierror.CodeOf(err) != apierror.Unavailable {
			t.Errorf("Next on a closed hub: %v", err)
		}
	}()
	h.Close()
	wg.Wait()
	if _, err := h.Subscribe(bg, now(t, s), Changes(1, "db", "c1")); apierror.CodeOf(err) != apierror.Unavailable {
		t.Errorf("Subscribe on a closed hub: %v", err)
	}
}

func TestStoreClosedEndsStreams(t *testing.T) {
	st, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHub(changelog.NewLog(st, changelog.Options{}), Options{})
	h.Start(context.Background())
	sub, err := h.Subscribe(bg, now(t, st), Changes(1, "db", "c1"))
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	st.Close()
	<-h.done // the hub stops by itself
}

func TestSelectors(t *testing.T) {
	even := func(data []byte) (bool, error) { return (data[len(data)-1]-'0')%2 == 0, nil }
	broken := func([]byte) (bool, error) { return false, errors.New("bad document") }
	r := func(op changelog.Op, db, coll, data string) *changelog.Record {
		return &changelog.Record{Op: op, NS: 1, DB: db, Collection: coll, Data: []byte(data)}
	}
	for _, tc := range []struct {
		name string
		sel  Selector
		r    *changelog.Record
		want bool
		err  bool
	}{
		{"change", Changes(1, "d", "c"), r(changelog.Update, "d", "c", "1"), true, false},
		{"delete", Changes(1, "d", "c"), r(changelog.Delete, "d", "c", ""), true, false},
		{"other collection", Changes(1, "d", "c"), r(changelog.Insert, "d", "x", "1"), false, false},
		{"other database", Changes(1, "d", "c"), r(changelog.Insert, "x", "c", "1"), false, false},
		{"other namespace", Changes(2, "d", "c"), r(changelog.Insert, "d", "c", "1"), false, false},
		{"message of another namespace", Messages(2, "d", "c", nil), r(changelog.Publish, "d", "c", "1"), false, false},
		{"publish is no change", Changes(1, "d", "c"), r(changelog.Publish, "d", "c", "1"), false, false},
		{"collection created is no change", Changes(1, "d", "c"), r(changelog.CollectionCreated, "d", "c", "{}"), false, false},
		{"schema change is no change", Changes(1, "d", "c"), r(changelog.SchemaChanged, "d", "c", "{}"), false, false},
		{"collection drop is no change", Changes(1, "d", "c"), r(changelog.CollectionDropped, "d", "c", ""), false, false},
		{"database drop is no change", Changes(1, "d", ""), r(changelog.DatabaseDropped, "d", "", ""), false, false},
		{"unknown op is no change", Changes(1, "d", "c"), r(changelog.Op(99), "d", "c", "1"), false, false},
		{"DDL is no message", Messages(1, "d", "c", nil), r(changelog.SchemaChanged, "d", "c", "{}"), false, false},
		{"message", Messages(1, "d", "c", nil), r(changelog.Publish, "d", "c", "1"), true, false},
		{"change is no message", Messages(1, "d", "c", nil), r(changelog.Insert, "d", "c", "1"), false, false},
		{"message matching", Messages(1, "d", "c", even), r(changelog.Publish, "d", "c", "2"), true, false},
		{"message not matching", Messages(1, "d", "c", even), r(changelog.Publish, "d", "c", "3"), false, false},
		{"message of another collection", Messages(1, "d", "c", broken), r(changelog.Publish, "d", "x", "3"), false, false},
		{"match fails", Messages(1, "d", "c", broken), r(changelog.Publish, "d", "c", "3"), false, true},
	} {
		got, err := tc.sel(tc.r)
		if got == TakeLeaving || (got == Take) != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// A partial pick copies what it keeps, and accounts what it copied.
func TestPickCopiesParts(t *testing.T) {
	e := entry{pos: 9, records: []changelog.Record{
		{Op: changelog.Insert, NS: 1, DB: "d", Collection: "a", Key: []byte("k1"), Data: []byte("one")},
		{Op: changelog.Insert, NS: 1, DB: "d", Collection: "b", Key: []byte("k2"), Data: []byte("two")},
	}}
	for _, r := range e.records {
		e.size += recordSize(&r)
	}
	b, size, err := pick(&e, After(8), Changes(1, "d", "a"))
	if err != nil || len(b) != 1 || size != 5+eventOverhead || !b[0].Last {
		t.Fatalf("pick = %v, %d, %v", b, size, err)
	}
	e.records[0].Data[0] = 'X'
	if string(b[0].Record.Data) != "one" || string(b[0].Record.Key) != "k1" {
		t.Errorf("the picked record aliases the entry: %q %q", b[0].Record.Key, b[0].Record.Data)
	}
	all, size, _ := pick(&e, After(8), func(*changelog.Record) (Verdict, error) { return Take, nil })
	if len(all) != 2 || size != e.size || all[0].Last || !all[1].Last {
		t.Errorf("whole pick = %v, %d", all, size)
	}
	// A transaction's last event stands for the whole entry; the others
	// name their record.
	if all[0].Cursor != (Cursor{Pos: 9, Index: 0}) || all[1].Cursor != After(9) {
		t.Errorf("cursors %#v %#v", all[0].Cursor, all[1].Cursor)
	}
}

func TestReady(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{})
	sub := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	if sub.Ready() {
		t.Fatal("ready before any commit")
	}
	commit(t, s, rec{"c1", "a"})
	for deadline := time.Now().Add(10 * time.Second); !sub.Ready(); {
		if time.Now().After(deadline) {
			t.Fatal("not ready after a commit")
		}
		runtime.Gosched()
	}
	next(t, sub)
	if sub.Ready() {
		t.Error("ready after the only batch was taken")
	}
}

// waitFor polls cond, failing after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Every stream is a reader of the log: the hub is one reader for all the
// live subscriptions, a subscription catching up has its own, and a hub
// with no subscription holds none.
func TestStreamsAreLogReaders(t *testing.T) {
	s := newStore(t)
	log := changelog.NewLog(s, changelog.Options{})
	h := NewHub(log, Options{ReadBatch: 2})
	h.Start(context.Background())
	t.Cleanup(func() { h.Close() })
	if log.Readers() != 0 {
		t.Fatalf("an idle hub holds %d readers", log.Readers())
	}
	start := now(t, s)
	for i := range 6 {
		commit(t, s, rec{"c1", fmt.Sprint(i)})
	}
	live1 := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	live2 := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	if h.Len() != 2 || log.Readers() != 1 {
		t.Fatalf("two live subscriptions: the hub feeds %d, the log has %d readers; want 2 and 1", h.Len(), log.Readers())
	}
	behind := subscribe(t, h, start, Changes(1, "db", "c1"))
	if log.Readers() != 2 {
		t.Errorf("a subscription catching up: %d readers, want its own and the hub's", log.Readers())
	}
	for i := range 6 {
		if got := render(next(t, behind)); got != fmt.Sprint(i)+"!" {
			t.Fatalf("catching up, event %d: %s", i, got)
		}
	}
	commit(t, s, rec{"c1", "live"})
	for _, sub := range []*Subscription{live1, live2, behind} {
		if got := render(next(t, sub)); got != "live!" {
			t.Errorf("live: %s", got)
		}
	}
	if h.Len() != 3 || log.Readers() != 1 {
		t.Errorf("caught up: the hub feeds %d, the log has %d readers; want 3 and 1", h.Len(), log.Readers())
	}
	live1.Close()
	live2.Close()
	behind.Close()
	commit(t, s, rec{"c1", "nobody"}) // wakes the hub, which lets its reader go
	waitFor(t, "the idle hub to let its reader go", func() bool { return log.Readers() == 0 })
	// And it takes one back from the next subscription.
	sub := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	commit(t, s, rec{"c1", "again"})
	if got := render(next(t, sub)); got != "again!" || log.Readers() != 1 {
		t.Errorf("after idling: %s with %d readers", got, log.Readers())
	}
}

// A subscription that catches up too slowly holds the trimmer back until
// the log's bound, and is then ended with OUT_OF_RANGE.
func TestCatchUpCutOff(t *testing.T) {
	s := newStore(t)
	log := changelog.NewLog(s, changelog.Options{Retention: time.Hour})
	h := NewHub(log, Options{ReadBatch: 1})
	h.Start(context.Background())
	t.Cleanup(func() { h.Close() })
	start := now(t, s)
	for i := range 4 {
		commit(t, s, rec{"c1", fmt.Sprint(i)})
	}
	sub := subscribe(t, h, start, Changes(1, "db", "c1")) // read one entry
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, at := range []time.Duration{0, time.Hour} {
		if err := log.Tick(bg, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	if got := render(next(t, sub)); got != "0!" {
		t.Fatalf("first event %s", got)
	}
	if got := render(next(t, sub)); got != "1!" {
		t.Fatalf("held by the subscription, second event %s", got)
	}
	if err := log.Tick(bg, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var err error
	for err == nil {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		_, err = sub.Next(ctx)
		cancel()
	}
	if e, ok := apierror.From(err); !ok || e.Code != apierror.OutOfRange || !strings.Contains(e.Message, "fell too far behind") {
		t.Errorf("a subscription cut off: %v, want OUT_OF_RANGE saying it fell too far behind", err)
	}
	if log.Readers() != 0 {
		t.Errorf("%d readers after the cut-off, want none", log.Readers())
	}
}
