package history

import (
	"cmp"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// testSeed is the seed of a randomized test: FOLIO_TEST_SEED if set (to
// replay a failure), otherwise the clock; logged if the test fails.
func testSeed(t testing.TB) uint64 {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FOLIO_TEST_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("FOLIO_TEST_SEED: %v", err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d (replay with FOLIO_TEST_SEED=%d)", seed, seed)
		}
	})
	return seed
}

// serialShape sets how a random serial history looks.
type serialShape struct {
	txns, keys, maxMops int
	// spread is how far, in units of one transaction's slot, an invocation
	// may come before its commit point and a completion after it: the
	// larger, the more transactions overlap.
	spread int
}

// timed is an event at a time, before the history is put in time order.
type timed struct {
	at int
	e  Event
}

// randomSerialHistory executes random list-append transactions one by one
// against an in-memory model, the i-th at commit point i, then gives each
// an invocation before and a completion after its point, at random: the
// history is strictly serializable by construction (the commit points are
// a serial order within each op's real-time bounds), however much the ops
// overlap. Some fail (not executed), some end as info having executed or
// not, some info ops never complete. Each process runs one op at a time,
// and the history ends with a read of every key.
func randomSerialHistory(rng *rand.Rand, s serialShape) []Event {
	lists := map[string][]int64{}
	next := int64(0)
	var events []timed
	var bounds [][2]int // each op's [invoke, complete]
	var txns [][2][]Mop // invoked, completed
	var types []Type
	for i := range s.txns {
		var invoked, done []Mop
		typ := OK
		switch n := rng.IntN(100); {
		case n < 5:
			typ = Fail
		case n < 12:
			typ = Info
		}
		apply := typ == OK || (typ == Info && rng.IntN(2) == 0)
		for range 1 + rng.IntN(s.maxMops) {
			key := "k" + strconv.Itoa(rng.IntN(s.keys))
			if rng.IntN(2) == 0 {
				next++
				invoked = append(invoked, Append(key, next))
				if apply {
					lists[key] = append(lists[key], next)
				}
				done = append(done, Append(key, next))
				continue
			}
			invoked = append(invoked, Read(key))
			done = append(done, ReadOf(key, slices.Clone(lists[key])...))
		}
		if typ != OK {
			done = invoked
		}
		point := 1000 * (i + 1)
		bounds = append(bounds, [2]int{point - 1 - rng.IntN(1000*s.spread+1), point + 1 + rng.IntN(1000*s.spread+1)})
		txns = append(txns, [2][]Mop{invoked, done})
		types = append(types, typ)
	}
	// Give each op a process free at its invocation, in invocation order.
	order := make([]int, len(bounds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(bounds[a][0], bounds[b][0]) })
	var freeAt []int // per process, when its last op completed; -1: never again
	for _, i := range order {
		p := slices.IndexFunc(freeAt, func(t int) bool { return t >= 0 && t < bounds[i][0] })
		if p < 0 {
			p = len(freeAt)
			freeAt = append(freeAt, 0)
		}
		freeAt[p] = bounds[i][1]
		events = append(events, timed{bounds[i][0], Event{Process: p, Type: Invoke, F: FTxn, Txn: txns[i][0]}})
		if types[i] == Info && rng.IntN(3) == 0 {
			freeAt[p] = -1 // completion lost: the process never comes back
			continue
		}
		events = append(events, timed{bounds[i][1], Event{Process: p, Type: types[i], F: FTxn, Txn: txns[i][1]}})
	}
	end := 1000 * (s.txns + 2*s.spread + 2)
	var invoked, done []Mop
	for _, key := range sortedKeys(lists) {
		invoked = append(invoked, Read(key))
		done = append(done, ReadOf(key, lists[key]...))
	}
	events = append(events, timed{end, Event{Process: len(freeAt), Type: Invoke, F: FTxn, Txn: invoked}},
		timed{end + 1, Event{Process: len(freeAt), Type: OK, F: FTxn, Txn: done}})
	slices.SortStableFunc(events, func(a, b timed) int { return cmp.Compare(a.at, b.at) })
	out := make([]Event, len(events))
	for i, e := range events {
		out[i] = e.e
		out[i].Time = int64(e.at)
	}
	return out
}

// TestSerialHistoriesAreValid: the checker finds nothing in histories that
// are strictly serializable by construction, however they overlap.
func TestSerialHistoriesAreValid(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 43))
	runs := 300
	if testing.Short() {
		runs = 30
	}
	for run := range runs {
		shape := serialShape{txns: 1 + rng.IntN(200), keys: 1 + rng.IntN(8), maxMops: 1 + rng.IntN(6), spread: rng.IntN(10)}
		events := randomSerialHistory(rng, shape)
		if res := check(t, events, AppendOptions{RealTime: true}); !res.Valid() {
			t.Fatalf("run %d, %+v: a serial history reported\n%s", run, shape, res)
		}
	}
}

// TestPlantedInSerialHistories: a random serial history with one final
// read changed is no longer valid, and the checker says so: an acked
// append dropped from the end of a key is lost; two values from different
// ops swapped makes the order incompatible with earlier reads, or a cycle.
func TestPlantedInSerialHistories(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 44))
	for run := range 100 {
		events := randomSerialHistory(rng, serialShape{txns: 50 + rng.IntN(100), keys: 1 + rng.IntN(3), maxMops: 4, spread: rng.IntN(5)})
		acked := map[int64]bool{} // an info op's append may be missing
		for _, e := range events {
			for _, m := range e.Txn {
				acked[m.Value] = acked[m.Value] || (e.Type == OK && m.F == MAppend)
			}
		}
		final := events[len(events)-1].Txn
		m := &final[rng.IntN(len(final))]
		if len(m.Read) < 2 || !acked[m.Read[len(m.Read)-1]] {
			continue
		}
		plant := "drop the last value"
		m.Read = m.Read[:len(m.Read)-1]
		if rng.IntN(2) == 0 {
			plant = "append a value twice"
			m.Read = append(m.Read, m.Read[0], m.Read[0])
		}
		if res := check(t, events, AppendOptions{RealTime: true}); res.Valid() {
			t.Fatalf("run %d: %s in the final read of %s: nothing reported", run, plant, m.Key)
		}
	}
}

// TestLargeHistory checks that 100,000 ops are checked in reasonable time,
// valid and then with anomalies all over.
func TestLargeHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("large history")
	}
	rng := rand.New(rand.NewPCG(testSeed(t), 45))
	txns := 100_000
	if raceEnabled {
		txns = 20_000 // ten times slower under the race detector
	}
	events := randomSerialHistory(rng, serialShape{txns: txns, keys: txns / 100, maxMops: 6, spread: 20})
	start := time.Now()
	res := check(t, events, AppendOptions{RealTime: true})
	t.Logf("%d events checked in %v", len(events), time.Since(start))
	if !res.Valid() {
		t.Fatalf("a serial history reported\n%s", res)
	}
	// Read skew everywhere: every read of the final transaction but one
	// forgets its last value.
	final := events[len(events)-1].Txn
	for i := 1; i < len(final); i++ {
		final[i].Read = final[i].Read[:len(final[i].Read)/2]
	}
	start = time.Now()
	res = check(t, events, AppendOptions{RealTime: true})
	t.Logf("%d events with anomalies checked in %v: %v, incomplete %v", len(events), time.Since(start), res.Kinds(), res.Incomplete)
	if res.Valid() {
		t.Fatal("nothing reported")
	}
}
