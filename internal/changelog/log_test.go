package changelog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

var ctx = context.Background()

// commit writes one transaction whose log entry holds an insert per datum,
// and returns its position once a log reader can see it (on PostgreSQL a
// commit becomes readable when the transactions older than it have ended).
func commit(t *testing.T, s kv.Store, data ...string) kv.Position {
	t.Helper()
	pos, err := kv.Run(ctx, s, func(tx kv.Tx) error {
		for _, d := range data {
			r := changelog.Record{Op: changelog.Insert, DB: "db", DBID: 1, Collection: "c", CollID: 2, Key: []byte("k" + d), Data: []byte(d)}
			if err := tx.AppendLog(r.Encode()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	readable(t, s, pos)
	return pos
}

// readable waits until the log's last position is at least pos.
func readable(t *testing.T, s kv.Store, pos kv.Position) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.WaitLog(wctx, pos-1); err != nil {
		t.Fatalf("commit %d never became readable: %v", pos, err)
	}
}

func last(t *testing.T, s kv.Store) kv.Position {
	t.Helper()
	p, err := s.LastPosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func open(t *testing.T, l *changelog.Log, after kv.Position) *changelog.Reader {
	t.Helper()
	r, err := l.OpenReader(ctx, "test", after)
	if err != nil {
		t.Fatalf("OpenReader(%d): %v", after, err)
	}
	t.Cleanup(r.Close)
	return r
}

// readAll reads until the reader has read through pos.
func readAll(t *testing.T, r *changelog.Reader, through kv.Position) []changelog.Entry {
	t.Helper()
	var out []changelog.Entry
	for r.Position() < through {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		entries, err := r.Next(wctx, 0)
		cancel()
		if err != nil {
			t.Fatalf("read after %d: %v", r.Position(), err)
		}
		out = append(out, entries...)
	}
	return out
}

// render shows entries as "a,b|c": records' data, entries apart.
func render(entries []changelog.Entry) string {
	var parts []string
	for _, e := range entries {
		var data []string
		for _, r := range e.Records {
			data = append(data, string(r.Data))
		}
		parts = append(parts, strings.Join(data, ","))
	}
	return strings.Join(parts, "|")
}

func TestReaderInCommitOrder(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{ReadBatch: 2})
		commit(t, s, "before")
		r := open(t, l, last(t, s))
		if entries, err := r.Read(ctx, 0); err != nil || len(entries) != 0 {
			t.Fatalf("Read with nothing new: %v, %v; want nothing, at once", entries, err)
		}
		p1 := commit(t, s, "a", "b")
		commit(t, s, "c")
		p3 := commit(t, s, "d", "e", "f")
		entries, err := r.Read(ctx, 0)
		if err != nil || render(entries) != "a,b|c" {
			t.Fatalf("first Read: %q, %v; want a,b|c (ReadBatch 2)", render(entries), err)
		}
		if entries[0].Pos != p1 || entries[0].Records[1].Op != changelog.Insert || string(entries[0].Records[1].Key) != "kb" {
			t.Errorf("first entry %+v, want the commit at %d", entries[0], p1)
		}
		if r.Position() != entries[1].Pos {
			t.Errorf("position %d after reading through %d", r.Position(), entries[1].Pos)
		}
		if got := render(readAll(t, r, p3)); got != "d,e,f" {
			t.Errorf("then %q, want d,e,f", got)
		}
		// Next waits for the next commit.
		got := make(chan string, 1)
		go func() {
			entries, err := r.Next(ctx, 0)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- render(entries)
		}()
		time.Sleep(20 * time.Millisecond)
		commit(t, s, "g")
		select {
		case g := <-got:
			if g != "g" {
				t.Errorf("Next after waiting: %q, want g", g)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Next did not return after a commit")
		}
	})
}

func TestReaderOutOfRange(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{})
	p1 := commit(t, s, "a")
	p2 := commit(t, s, "b")
	if _, err := l.OpenReader(ctx, "test", p2+1); !errors.Is(err, changelog.ErrAhead) {
		t.Errorf("a reader ahead of the log: %v, want ErrAhead", err)
	}
	// Trimmed by someone else (an earlier run): the first read says so.
	if err := s.TrimLog(ctx, p2); err != nil {
		t.Fatal(err)
	}
	r := open(t, l, p1-1)
	if _, err := r.Read(ctx, 0); !errors.Is(err, changelog.ErrTrimmed) {
		t.Errorf("a reader behind the trimmed log: %v, want ErrTrimmed", err)
	}
	if got := render(readAll(t, open(t, l, p1), p2)); got != "b" {
		t.Errorf("a reader just after the trimmed: %q, want b", got)
	}
}

func TestReaderClose(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{})
	r1, r2 := open(t, l, 0), open(t, l, 0)
	if l.Readers() != 2 {
		t.Fatalf("%d readers, want 2", l.Readers())
	}
	r1.Close()
	r1.Close()
	if l.Readers() != 1 {
		t.Errorf("%d readers after a Close, want 1", l.Readers())
	}
	if _, err := r1.Read(ctx, 0); !errors.Is(err, changelog.ErrReaderClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if err := r1.Wait(ctx); !errors.Is(err, changelog.ErrReaderClosed) {
		t.Errorf("Wait after Close: %v", err)
	}
	r2.Close()
	if l.Readers() != 0 {
		t.Errorf("%d readers after closing all, want 0", l.Readers())
	}
}

func TestReaderCorruptRecord(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{})
	r := open(t, l, last(t, s))
	_, err := kv.Run(ctx, s, func(tx kv.Tx) error { return tx.AppendLog([]byte{9, 9, 9}) })
	if err != nil {
		t.Fatal(err)
	}
	before := r.Position()
	if _, err := r.Read(ctx, 0); err == nil || changelog.Behind(err) || errors.Is(err, changelog.ErrAhead) {
		t.Errorf("Read of a corrupt record: %v, want a plain error", err)
	}
	if r.Position() != before {
		t.Errorf("a failed read moved the reader from %d to %d", before, r.Position())
	}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func tick(t *testing.T, l *changelog.Log, at time.Duration) {
	t.Helper()
	if err := l.Tick(ctx, t0.Add(at)); err != nil {
		t.Fatal(err)
	}
}

// keeps reports whether the log still holds what follows after.
func keeps(t *testing.T, s kv.Store, after kv.Position) bool {
	t.Helper()
	_, _, err := s.ReadLog(ctx, after, 0)
	if err != nil && !errors.Is(err, kv.ErrLogTrimmed) {
		t.Fatal(err)
	}
	return err == nil
}

// With no reader open, the trimmer keeps the retention, and no more than
// a tick longer.
func TestTrimmerRetention(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{Retention: time.Hour})
	p1 := commit(t, s, "a")
	tick(t, l, 0)
	p2 := commit(t, s, "b")
	tick(t, l, 30*time.Minute)
	p3 := commit(t, s, "c")
	tick(t, l, 59*time.Minute)
	if !keeps(t, s, p1-1) {
		t.Fatal("trimmed before the retention passed")
	}
	// An hour after the first note, what it saw (p1) goes; b stays.
	tick(t, l, 60*time.Minute)
	if keeps(t, s, p1-1) || !keeps(t, s, p1) {
		t.Errorf("after an hour: want p1 trimmed, p2 kept")
	}
	if _, err := l.OpenReader(ctx, "test", p1-1); !errors.Is(err, changelog.ErrTrimmed) {
		t.Errorf("a reader opened at a trimmed position: %v, want ErrTrimmed", err)
	}
	tick(t, l, 90*time.Minute)
	if keeps(t, s, p2-1) || !keeps(t, s, p2) || !keeps(t, s, p3-1) {
		t.Errorf("after ninety minutes: want p2 trimmed, p3 kept")
	}
}

func TestTrimmerWithoutRetention(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{})
	p := commit(t, s, "a")
	r := open(t, l, 0)
	for _, at := range []time.Duration{0, 24 * time.Hour, 1000 * time.Hour} {
		tick(t, l, at)
	}
	if !keeps(t, s, p-1) {
		t.Error("a log without retention was trimmed")
	}
	if _, err := r.Read(ctx, 0); err != nil {
		t.Errorf("a reader of a log without retention: %v", err)
	}
	done := make(chan struct{})
	go func() { l.RunTrimmer(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("RunTrimmer without a retention did not return")
	}
}

func TestTrimInterval(t *testing.T) {
	for _, tc := range []struct{ retention, want time.Duration }{
		{time.Second, time.Second},
		{time.Hour, 225 * time.Second},
		{24 * time.Hour, 10 * time.Minute},
	} {
		if got := changelog.NewLog(nil, changelog.Options{Retention: tc.retention}).TrimInterval(); got != tc.want {
			t.Errorf("interval for %v: %v, want %v", tc.retention, got, tc.want)
		}
	}
}

// RunTrimmer stops when its context ends.
func TestRunTrimmerStops(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{Retention: time.Hour})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.RunTrimmer(rctx); close(done) }()
	commit(t, s, fmt.Sprint("a"))
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("RunTrimmer did not stop")
	}
}

// Without a MaxHold an open reader holds the log for as long again as
// the retention before it is cut off.
func TestMaxHoldDefaultsToRetention(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{Retention: time.Hour})
	r := open(t, l, 0)
	commit(t, s, "a")
	tick(t, l, 0)
	commit(t, s, "b")
	tick(t, l, 30*time.Minute)
	tick(t, l, 90*time.Minute)
	if _, err := r.Read(ctx, 0); err != nil {
		t.Fatalf("a reader ninety minutes behind, with a retention of an hour and no MaxHold: %v", err)
	}
}

// Read without a limit reads at most DefaultReadBatch entries.
func TestReadBatchDefault(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{})
	r := open(t, l, 0)
	for i := range changelog.DefaultReadBatch + 3 {
		commit(t, s, fmt.Sprint(i))
	}
	entries, err := r.Read(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != changelog.DefaultReadBatch {
		t.Fatalf("Read(0) returns %d entries, want %d", len(entries), changelog.DefaultReadBatch)
	}
}

// RunTrimmer stops when the store closes.
func TestRunTrimmerStopsOnClose(t *testing.T) {
	s := backendtest.OpenPebble(t)
	l := changelog.NewLog(s, changelog.Options{Retention: time.Second})
	commit(t, s, "a")
	done := make(chan struct{})
	go func() { l.RunTrimmer(ctx); close(done) }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("RunTrimmer did not stop when the store closed")
	}
}

// With a byte bound the trimmer keeps the newest entries that fit in it,
// whatever the retention, and cuts off the readers behind them.
func TestTrimmerMaxBytes(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{Retention: time.Hour, MaxBytes: 20_000})
		big := func(c string) string { return strings.Repeat(c, 4000) }
		start := last(t, s)
		behind := open(t, l, start)   // reads nothing
		follower := open(t, l, start) // keeps up
		pa := commit(t, s, big("a"))
		tick(t, l, 0)
		pb := commit(t, s, big("b"))
		tick(t, l, time.Second)
		readAll(t, follower, pb)
		if !keeps(t, s, start) {
			t.Fatal("trimmed within the byte bound")
		}
		// c takes the log past 20,000 bytes (a record holds its data twice,
		// as key and document): a goes, though the retention
		// and a reader would keep it.
		pc := commit(t, s, big("c"))
		tick(t, l, 2*time.Second)
		if keeps(t, s, pa-1) || !keeps(t, s, pa) {
			t.Errorf("past the byte bound: want a trimmed, b and c kept")
		}
		if got := render(readAll(t, follower, pc)); got != big("c") {
			t.Errorf("the reader that kept up read %.20q…, want c", got)
		}
		if _, err := behind.Read(ctx, 0); !errors.Is(err, changelog.ErrCutOffBySize) {
			t.Errorf("the reader behind the trim: %v, want ErrCutOffBySize", err)
		}
		// Small entries beside big ones: the bound counts bytes, not entries.
		for i := 0; i < 20; i++ {
			commit(t, s, "x")
		}
		tick(t, l, 3*time.Second)
		if !keeps(t, s, pb) {
			t.Errorf("small entries pushed out c, though it and they fit")
		}
	})
}

func TestTrimIntervalWithMaxBytes(t *testing.T) {
	for _, o := range []changelog.Options{{MaxBytes: 1}, {Retention: 24 * time.Hour, MaxBytes: 1}} {
		if got := changelog.NewLog(nil, o).TrimInterval(); got != 10*time.Second {
			t.Errorf("interval for %+v: %v, want 10s", o, got)
		}
	}
}

func TestBehind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("read: %w", changelog.ErrTrimmed), true},
		{fmt.Errorf("read: %w", changelog.ErrCutOff), true},
		{fmt.Errorf("read: %w", changelog.ErrCutOffBySize), true},
		{changelog.ErrAhead, false},
		{changelog.ErrReaderClosed, false},
		{kv.ErrClosed, false},
		{nil, false},
	} {
		if got := changelog.Behind(tc.err); got != tc.want {
			t.Errorf("Behind(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestStats: the log's end, and each open reader's name and position.
func TestStats(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		l := changelog.NewLog(s, changelog.Options{})
		p0 := commit(t, s, "a")
		behind, err := l.OpenReader(ctx, "behind", p0-1)
		if err != nil {
			t.Fatal(err)
		}
		defer behind.Close()
		closed, err := l.OpenReader(ctx, "closed", p0)
		if err != nil {
			t.Fatal(err)
		}
		closed.Close()
		p1 := commit(t, s, "b")
		st, err := l.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.LastPosition < p1 || len(st.Readers) != 1 || st.Readers[0] != (changelog.ReaderStats{Name: "behind", Position: p0 - 1}) {
			t.Fatalf("%+v, want the log ending at %d or later and one reader, behind at %d", st, p1, p0-1)
		}
	})
}

// A burst of writes between two ticks that goes past the byte bound is
// trimmed down to the bound, its newest entries kept: the bound caps the
// log, it does not empty it.
func TestTrimmerMaxBytesAfterABurst(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		const maxBytes = 20_000
		l := changelog.NewLog(s, changelog.Options{MaxBytes: maxBytes})
		tick(t, l, 0)
		var pos []kv.Position
		for i := 0; i < 30; i++ {
			pos = append(pos, commit(t, s, strings.Repeat(string(rune('a'+i%26)), 1000)))
		}
		tick(t, l, time.Second)
		held, err := s.LogBytes(ctx, 0, last(t, s))
		if err != nil {
			t.Fatal(err)
		}
		// An entry takes a little over 2,000 bytes (its datum twice, as key
		// and document): the log keeps what fits, so it is within one
		// entry of the bound.
		if held > maxBytes || held < maxBytes-2500 {
			t.Errorf("after the burst the log holds %d bytes, want at most %d and within one entry of it", held, maxBytes)
		}
		newest := pos[len(pos)-1]
		if !keeps(t, s, newest-1) {
			t.Errorf("the newest entry was trimmed")
		}
		if keeps(t, s, pos[0]-1) {
			t.Errorf("the oldest entry was kept past the bound")
		}
		if got := wantExact(t, "after the burst's trim", s, l); got != held {
			t.Errorf("Bytes %d, the log holds %d", got, held)
		}
		// The next tick, with nothing new, keeps what fits.
		tick(t, l, 2*time.Second)
		if again, _ := s.LogBytes(ctx, 0, last(t, s)); again != held {
			t.Errorf("a quiet tick changed the log from %d to %d bytes", held, again)
		}
	})
}

// The byte bound one entry at a time, with entries of one size and a bound
// of two: each tick keeps the two newest, and a quiet tick keeps them too.
// On the way the oldest note ends exactly at the floor (its last entry is
// all that is left of it, and it still counts) and then just below it (all
// of it trimmed, and it counts nothing).
func TestTrimmerMaxBytesEntryByEntry(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := b.Open(t)
		e := []kv.Position{commit(t, s, "a")}
		size, err := s.LogBytes(ctx, e[0]-1, e[0])
		if err != nil {
			t.Fatal(err)
		}
		l := changelog.NewLog(s, changelog.Options{MaxBytes: 2 * size})
		// first is the oldest entry the log must hold after each tick.
		step := func(at time.Duration, first int) {
			t.Helper()
			tick(t, l, at)
			if !keeps(t, s, e[first]-1) || first > 0 && keeps(t, s, e[first-1]-1) {
				t.Fatalf("after the tick at %v the log does not begin at entry %d of %d", at, first, len(e))
			}
		}
		e = append(e, commit(t, s, "b"), commit(t, s, "c"))
		step(0, 1) // one note of three entries, cut after its first
		e = append(e, commit(t, s, "d"))
		step(time.Second, 2) // that note keeps its last entry: it ends at the floor
		e = append(e, commit(t, s, "e"))
		step(2*time.Second, 3) // and now none: it ends just below the floor
		step(3*time.Second, 3) // nothing new: nothing trimmed
		wantExact(t, "after the quiet tick", s, l)
	})
}

// trimsRefused is a store whose TrimLog fails while refuse is set, as the
// embedded store's does on a full disk.
type trimsRefused struct {
	kv.Store
	refuse bool
}

func (s *trimsRefused) TrimLog(ctx context.Context, below kv.Position) error {
	if s.refuse {
		return errors.New("trim refused")
	}
	return s.Store.TrimLog(ctx, below)
}

// A trim that failed is done at the next tick, though nothing new came:
// the trimmer does not take the log for trimmed.
func TestTrimmerRetriesAFailedTrim(t *testing.T) {
	s := &trimsRefused{Store: backendtest.OpenPebble(t)}
	l := changelog.NewLog(s, changelog.Options{Retention: time.Hour})
	p1 := commit(t, s, "a")
	tick(t, l, 0)
	commit(t, s, "b")
	s.refuse = true
	if err := l.Tick(ctx, t0.Add(61*time.Minute)); err == nil {
		t.Fatal("a tick whose trim failed returned no error")
	}
	if !keeps(t, s, p1-1) {
		t.Fatal("the refused trim trimmed")
	}
	if r, err := l.OpenReader(ctx, "test", p1-1); err != nil {
		t.Errorf("a reader of what the failed trim left: %v", err)
	} else {
		r.Close()
	}
	s.refuse = false
	tick(t, l, 62*time.Minute)
	if keeps(t, s, p1-1) {
		t.Error("the next tick did not do the trim that failed")
	}
}
