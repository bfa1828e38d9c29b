package kv

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeTx is a Reclaimable that records how it ended, and removes itself from
// its tracker as the backends' transactions do.
type fakeTx struct {
	tr *Tracker
	rv Position

	mu     sync.Mutex
	ended  bool
	reason error
}

func (f *fakeTx) ReadVersion() Position { return f.rv }

func (f *fakeTx) Expire(reason error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return false
	}
	f.ended, f.reason = true, reason
	f.tr.Remove(f)
	return true
}

func (f *fakeTx) state() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended, f.reason
}

// newTestTracker returns a tracker without a background sweeper, so that
// only the test's own sweeps reclaim.
func newTestTracker(maxAge time.Duration) *Tracker { return newTracker(maxAge, nil) }

func TestTrackerSweep(t *testing.T) {
	const maxAge = time.Hour
	tests := []struct {
		name string
		ages []time.Duration // how long before the sweep each began
		done []bool          // which had already ended (by their owner) before it
		want []bool          // which the sweep expires
	}{
		{name: "none open"},
		{
			name: "younger ones stay",
			ages: []time.Duration{0, time.Minute, maxAge - time.Nanosecond},
			want: []bool{false, false, false},
		},
		{
			name: "exactly the maximum age stays",
			ages: []time.Duration{maxAge},
			want: []bool{false},
		},
		{
			name: "older ones go",
			ages: []time.Duration{maxAge + time.Nanosecond, 3 * maxAge, time.Minute},
			want: []bool{true, true, false},
		},
		{
			name: "one that ended meanwhile is not counted",
			ages: []time.Duration{2 * maxAge, 2 * maxAge},
			done: []bool{true, false},
			want: []bool{false, true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(maxAge)
			now := time.Now()
			txs := make([]*fakeTx, len(tc.ages))
			for i, age := range tc.ages {
				txs[i] = &fakeTx{tr: tr}
				tr.Add(txs[i], now.Add(-age))
			}
			for i, done := range tc.done {
				if done {
					// Ended by its owner but, racing the sweep, still
					// listed when the sweep looked.
					txs[i].mu.Lock()
					txs[i].ended = true
					txs[i].mu.Unlock()
				}
			}
			wantN := 0
			for _, w := range tc.want {
				if w {
					wantN++
				}
			}
			if n := tr.Sweep(now); n != wantN {
				t.Errorf("Sweep reclaimed %d, want %d", n, wantN)
			}
			for i, tx := range txs {
				ended, reason := tx.state()
				if tc.want[i] {
					if !ended || !errors.Is(reason, ErrTxTooOld) {
						t.Errorf("tx %d (age %s): ended %v with %v, want ErrTxTooOld", i, tc.ages[i], ended, reason)
					}
				} else if reason != nil {
					t.Errorf("tx %d (age %s): expired with %v, want left alone", i, tc.ages[i], reason)
				}
			}
			if got := tr.Len(); got != len(txs)-wantN {
				t.Errorf("Len after sweep = %d, want %d", got, len(txs)-wantN)
			}
		})
	}
}

func TestTrackerExpireAll(t *testing.T) {
	tr := newTestTracker(time.Hour)
	now := time.Now()
	txs := []*fakeTx{{tr: tr}, {tr: tr}, {tr: tr}}
	for _, tx := range txs {
		tr.Add(tx, now)
	}
	txs[1].Expire(nil) // ended by its owner: no longer tracked
	if n := tr.ExpireAll(ErrClosed); n != 2 {
		t.Errorf("ExpireAll reclaimed %d, want 2", n)
	}
	for i, tx := range txs {
		ended, reason := tx.state()
		want := ErrClosed
		if i == 1 {
			want = nil
		}
		if !ended || !errors.Is(reason, want) || (want == nil && reason != nil) {
			t.Errorf("tx %d: ended %v with %v, want %v", i, ended, reason, want)
		}
	}
	if tr.Len() != 0 {
		t.Errorf("Len after ExpireAll = %d", tr.Len())
	}
	if n := tr.ExpireAll(ErrClosed); n != 0 {
		t.Errorf("second ExpireAll reclaimed %d", n)
	}
}

func TestTrackerOldestReadVersion(t *testing.T) {
	tests := []struct {
		name   string
		open   []Position
		newest Position
		want   Position
	}{
		{name: "none open", newest: 7, want: 7},
		{name: "oldest open", open: []Position{5, 3, 6}, newest: 7, want: 3},
		{name: "all at the newest", open: []Position{7, 7}, newest: 7, want: 7},
		{name: "newest is lower", open: []Position{9}, newest: 7, want: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTracker(time.Hour)
			for _, rv := range tc.open {
				tr.Add(&fakeTx{tr: tr, rv: rv}, time.Now())
			}
			if got := tr.OldestReadVersion(tc.newest); got != tc.want {
				t.Errorf("OldestReadVersion(%d) = %d, want %d", tc.newest, got, tc.want)
			}
		})
	}
}

// TestTrackerSweeper: the background sweeper reclaims on its own, and stops.
func TestTrackerSweeper(t *testing.T) {
	tr := NewTracker(20*time.Millisecond, nil)
	old, young := &fakeTx{tr: tr}, &fakeTx{tr: tr}
	tr.Add(old, time.Now())
	tr.Add(young, time.Now().Add(time.Hour))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ended, reason := old.state(); ended {
			if !errors.Is(reason, ErrTxTooOld) {
				t.Fatalf("reclaimed with %v, want ErrTxTooOld", reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not reclaim an old transaction")
		}
		time.Sleep(5 * time.Millisecond)
	}
	tr.Stop()
	tr.Stop() // a second Stop returns too
	if ended, _ := young.state(); ended {
		t.Error("the sweeper reclaimed a young transaction")
	}
}

// TestTrackerConcurrent: owners adding and ending transactions race the
// sweeper, ExpireAll and OldestReadVersion; under -race nothing may be
// reported, every transaction ends exactly once, and none stays tracked.
func TestTrackerConcurrent(t *testing.T) {
	tr := NewTracker(time.Millisecond, nil) // the real sweeper joins in
	defer tr.Stop()
	const owners, perOwner = 8, 300
	var wg sync.WaitGroup
	var reclaimed sync.Map
	for o := 0; o < owners; o++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perOwner; i++ {
				tx := &fakeTx{tr: tr, rv: Position(i)}
				tr.Add(tx, time.Now())
				if i%3 == 0 {
					tr.OldestReadVersion(Position(perOwner))
				}
				tx.Expire(nil)
				if i%5 == 0 {
					// Left open for the sweeper or ExpireAll.
					left := &fakeTx{tr: tr}
					tr.Add(left, time.Now().Add(-time.Hour))
					reclaimed.Store(left, true)
				}
			}
		}()
	}
	stop := make(chan struct{})
	var bgwg sync.WaitGroup
	bgwg.Add(1)
	go func() {
		defer bgwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				tr.Sweep(time.Now())
				tr.ExpireAll(ErrClosed)
			}
		}
	}()
	wg.Wait()
	close(stop)
	bgwg.Wait()
	tr.ExpireAll(ErrClosed)
	if n := tr.Len(); n != 0 {
		t.Fatalf("%d transactions still tracked", n)
	}
	reclaimed.Range(func(k, _ any) bool {
		if ended, reason := k.(*fakeTx).state(); !ended || reason == nil {
			t.Fatalf("an abandoned transaction ended %v with %v", ended, reason)
		}
		return true
	})
}

// TestSweepInterval: a few sweeps per maximum age, but no more often than
// every 10ms and at least once a second.
func TestSweepInterval(t *testing.T) {
	for _, tc := range []struct{ maxAge, want time.Duration }{
		{time.Second, 250 * time.Millisecond},
		{100 * time.Millisecond, 25 * time.Millisecond},
		{20 * time.Millisecond, 10 * time.Millisecond},
		{time.Millisecond, 10 * time.Millisecond},
		{time.Hour, time.Second},
	} {
		if got := sweepInterval(tc.maxAge); got != tc.want {
			t.Errorf("sweepInterval(%v) = %v, want %v", tc.maxAge, got, tc.want)
		}
	}
}
