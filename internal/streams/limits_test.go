package streams

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/changelog"
)

// At most MaxStreams subscriptions are open at once, those catching up
// included; one more is refused with RESOURCE_EXHAUSTED naming the limit,
// and closing one makes room.
func TestMaxStreams(t *testing.T) {
	s := newStore(t)
	h := newHub(t, s, Options{MaxStreams: 2, ReadBatch: 1})
	start := now(t, s)
	commit(t, s, rec{"c1", "a"})
	commit(t, s, rec{"c1", "b"})
	behind := subscribe(t, h, start, Changes(1, "db", "c1")) // catching up
	live := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	_, err := h.Subscribe(bg, now(t, s), Changes(1, "db", "c1"))
	if e, ok := apierror.From(err); !ok || e.Code != apierror.ResourceExhausted || !strings.Contains(e.Message, "at most 2 ") || !strings.Contains(e.Message, "--max-streams") {
		t.Fatalf("a third subscription: %v, want RESOURCE_EXHAUSTED naming the limit and its setting", err)
	}
	if st := h.Stats(); st.Open != 2 {
		t.Errorf("Stats %+v after a refusal, want 2 open", st)
	}
	behind.Close()
	behind.Close() // twice frees one place only
	again := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
	if _, err := h.Subscribe(bg, now(t, s), Changes(1, "db", "c1")); apierror.CodeOf(err) != apierror.ResourceExhausted {
		t.Errorf("a third subscription after a close and an open: %v", err)
	}
	commit(t, s, rec{"c1", "c"})
	for _, sub := range []*Subscription{live, again} {
		if got := render(next(t, sub)); got != "c!" {
			t.Errorf("an open subscription got %s", got)
		}
	}
	// A subscription refused for its position leaves no place taken.
	live.Close()
	if _, err := h.Subscribe(bg, After(1<<40), Changes(1, "db", "c1")); apierror.CodeOf(err) != apierror.OutOfRange {
		t.Fatalf("a subscription ahead of the log: %v", err)
	}
	if st := h.Stats(); st.Open != 1 {
		t.Errorf("Stats %+v, want the one left open", st)
	}
}

// The queues of all subscriptions together stay within MaxPendingTotal:
// a batch that would take the total past it ends the subscriptions holding
// the most, and their queues go at once; the one that keeps up is never
// ended, and the ended ones resume without a gap.
func TestMaxPendingTotal(t *testing.T) {
	s := newStore(t)
	const size = 1000 // of each record's data
	per := recordSize(&changelog.Record{Key: make([]byte, size+1), Data: make([]byte, size)})
	budget := int64(10 * per)
	h := newHub(t, s, Options{MaxPending: 100 * per, MaxPendingTotal: budget})
	start := now(t, s)
	var stalled []*Subscription
	for range 3 {
		stalled = append(stalled, subscribe(t, h, start, Changes(1, "db", "c1")))
	}
	reader := subscribe(t, h, start, Changes(1, "db", "c1"))

	var over atomic.Int64
	ctx, stop := context.WithCancel(bg)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ctx.Err() == nil {
			if p := h.Stats().PendingBytes; p > budget {
				over.Store(p)
			}
			time.Sleep(10 * time.Microsecond)
		}
	}()
	const n = 30
	data := func(i int) string { return fmt.Sprintf("%0*d", size, i) }
	for i := range n {
		commit(t, s, rec{"c1", data(i)})
		if got := string(next(t, reader)[0].Record.Data); got != data(i) {
			t.Fatalf("the reader's event %d: %.10s…", i, got)
		}
	}
	stop()
	<-watched
	if p := over.Load(); p > 0 {
		t.Errorf("%d bytes queued, over the budget of %d", p, budget)
	}
	if st := h.Stats(); st.Live != 1 || st.PendingBytes > budget {
		t.Errorf("Stats %+v, want the reader alone live, within %d bytes", st, budget)
	}
	for i, sub := range stalled {
		var got []string
		var last Cursor = start
		for {
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			b, err := sub.Next(ctx)
			cancel()
			if err != nil {
				if e, ok := apierror.From(err); !ok || e.Code != apierror.ResourceExhausted || !strings.Contains(e.Message, "--stream-buffer-total-bytes") ||
					!strings.Contains(e.Message, "resume from the position of the last item received") {
					t.Fatalf("stalled subscription %d ended with %v", i, err)
				}
				break
			}
			got = append(got, string(b[0].Record.Data))
			last = b[0].Cursor
		}
		sub.Close()
		resumed := subscribe(t, h, last, Changes(1, "db", "c1"))
		for len(got) < n {
			got = append(got, string(next(t, resumed)[0].Record.Data))
		}
		resumed.Close()
		for j, d := range got {
			if d != data(j) {
				t.Fatalf("stalled subscription %d, event %d: a gap or a repeat", i, j)
			}
		}
	}
	reader.Close()
	if st := h.Stats(); st != (Stats{}) {
		t.Errorf("Stats %+v after every subscription closed, want zero", st)
	}
}

// Closing subscriptions gives back everything they held: their places,
// their queued bytes, and their readers of the log, whether they were
// live, ended, or catching up.
func TestCloseReleasesAll(t *testing.T) {
	s := newStore(t)
	log := changelog.NewLog(s, changelog.Options{})
	h := NewHub(log, Options{ReadBatch: 1, MaxPending: 2000})
	h.Start(context.Background())
	t.Cleanup(func() { h.Close() })
	start := now(t, s)
	for i := range 3 {
		commit(t, s, rec{"c1", fmt.Sprint(i)})
	}
	var subs []*Subscription
	for i := range 50 {
		from := now(t, s)
		if i%3 == 0 {
			from = start // catching up
		}
		subs = append(subs, subscribe(t, h, from, Changes(1, "db", "c1")))
	}
	for i := range 20 {
		commit(t, s, rec{"c1", strings.Repeat("x", 100) + fmt.Sprint(i)}) // overflows some
	}
	waitFor(t, "the hub to queue", func() bool { return h.Stats().PendingBytes > 0 })
	for _, sub := range subs {
		sub.Close()
	}
	commit(t, s, rec{"c1", "nobody"}) // wakes the hub, which lets its reader go
	waitFor(t, "the idle hub to let its reader go", func() bool { return log.Readers() == 0 })
	if st := h.Stats(); st != (Stats{}) {
		t.Errorf("Stats %+v after every subscription closed, want zero", st)
	}
}

// Over the budget, the subscription ended is the one whose oldest queued
// change is the oldest, not one that keeps up and holds as many bytes: the
// batch just handed to it.
func TestMaxPendingTotalEndsTheFurthestBehind(t *testing.T) {
	s := newStore(t)
	per := recordSize(&changelog.Record{Key: []byte("kx"), Data: []byte("x")})
	h := newHub(t, s, Options{MaxPendingTotal: int64(per*5/2) + 1})
	for round := range 20 {
		behind := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
		keeping := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
		// Both fed by the hub, so that what they hold is counted: one still
		// catching up reads the log itself, outside the budget.
		goLive(t, behind)
		goLive(t, keeping)
		commit(t, s, rec{"c1", "x"})
		next(t, keeping)
		y := commit(t, s, rec{"c1", "y"}) // two queued for behind, one for keeping: over
		// Until the hub has offered y to both, keeping could take its y at
		// once and the total never go over.
		waitFor(t, "the hub to offer y", func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.pos >= y
		})
		if got := render(next(t, keeping)); got != "y!" {
			t.Fatalf("round %d: the subscription keeping up got %s", round, got)
		}
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		_, err := behind.Next(ctx)
		cancel()
		if apierror.CodeOf(err) != apierror.ResourceExhausted {
			t.Fatalf("round %d: the subscription behind: %v, want RESOURCE_EXHAUSTED", round, err)
		}
		behind.Close()
		keeping.Close()
	}
}

// A subscription whose consumer is stuck writing an old batch to its
// client is further behind than one whose consumer came back for more,
// though each has only the newest change queued: over the budget, the
// stuck one ends. (By the queues alone the two tie, and the hub ended
// either: a stream that kept up was cut off under load.)
func TestMaxPendingTotalEndsTheStuckWriter(t *testing.T) {
	s := newStore(t)
	per := recordSize(&changelog.Record{Key: []byte("kx"), Data: []byte("x")})
	h := newHub(t, s, Options{MaxPendingTotal: int64(per*5/2) + 1})
	for round := range 20 {
		stuck := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
		keeping := subscribe(t, h, now(t, s), Changes(1, "db", "c1"))
		goLive(t, stuck)
		goLive(t, keeping)
		commit(t, s, rec{"c1", "x"})
		next(t, stuck) // taken, and being written to a client that does not read
		next(t, keeping)
		// keeping's consumer comes back for more and finds none.
		ctx, cancel := context.WithTimeout(bg, time.Millisecond)
		if _, err := keeping.Next(ctx); err == nil {
			t.Fatalf("round %d: keeping got a batch with nothing committed", round)
		}
		cancel()
		commit(t, s, rec{"c1", "y"}) // one queued for each: within the budget
		z := commit(t, s, rec{"c1", "z"})
		waitFor(t, "the hub to offer z", func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.pos >= z
		})
		if got := render(next(t, keeping)); got != "y!" {
			t.Fatalf("round %d: the subscription keeping up got %s", round, got)
		}
		ctx, cancel = context.WithTimeout(bg, 10*time.Second)
		_, err := stuck.Next(ctx)
		cancel()
		if apierror.CodeOf(err) != apierror.ResourceExhausted {
			t.Fatalf("round %d: the stuck subscription: %v, want RESOURCE_EXHAUSTED", round, err)
		}
		stuck.Close()
		keeping.Close()
	}
}

// goLive makes a subscription that has nothing to catch up join the hub.
func goLive(t *testing.T, sub *Subscription) {
	t.Helper()
	for range 100 {
		sub.mu.Lock()
		live := sub.live
		sub.mu.Unlock()
		if live {
			return
		}
		if err := sub.catchUp(bg); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the subscription never joined the hub")
}
