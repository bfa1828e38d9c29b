package history

import (
	"slices"
	"testing"
)

// tx is one transaction of a hand-built history: its process, outcome and
// micro-operations as completed (reads with what they saw).
type tx struct {
	p    int
	typ  Type
	mops []Mop
}

func ok(p int, mops ...Mop) tx   { return tx{p, OK, mops} }
func fail(p int, mops ...Mop) tx { return tx{p, Fail, mops} }
func info(p int, mops ...Mop) tx { return tx{p, Info, mops} }

// invoked is what the transaction was invoked with: reads not yet known.
func (t tx) invoked() []Mop {
	mops := slices.Clone(t.mops)
	for i := range mops {
		mops[i].Read = nil
	}
	return mops
}

func (t tx) invocation() Event { return Event{Process: t.p, Type: Invoke, F: FTxn, Txn: t.invoked()} }

func (t tx) completion() Event {
	if t.typ == OK {
		return Event{Process: t.p, Type: OK, F: FTxn, Txn: t.mops}
	}
	return Event{Process: t.p, Type: t.typ, F: FTxn, Txn: t.invoked()}
}

// serial runs the transactions one after another.
func serial(txs ...tx) []Event {
	var events []Event
	for _, t := range txs {
		events = append(events, t.invocation(), t.completion())
	}
	return events
}

// together invokes all the transactions, then completes them all: each
// is concurrent with every other, so real time orders none of them.
func together(txs ...tx) []Event {
	var events []Event
	for _, t := range txs {
		events = append(events, t.invocation())
	}
	for _, t := range txs {
		events = append(events, t.completion())
	}
	return events
}

func then(parts ...[]Event) []Event { return slices.Concat(parts...) }

var (
	app = Append
	r   = ReadOf
)

func TestCheckAppend(t *testing.T) {
	for _, tc := range []struct {
		name     string
		events   []Event
		realtime bool
		want     []Kind
	}{
		{name: "empty"},
		{name: "serial", realtime: true, events: serial(
			ok(0, app("x", 1), r("y")),
			ok(1, r("x", 1), app("x", 2), app("y", 1)),
			ok(0, r("x", 1, 2), r("y", 1)),
		)},
		{name: "concurrent appends in either order", realtime: true, events: then(
			together(ok(0, app("x", 1)), ok(1, app("x", 2)), ok(2, r("x", 2))),
			serial(ok(0, r("x", 2, 1))),
		)},
		// The longest read is the order whichever read comes last: a
		// later, shorter read is serialized before the longer one.
		{name: "a later read shorter than an earlier one", realtime: true, events: together(
			ok(0, app("x", 1)), ok(1, app("x", 2)), ok(2, r("x", 1, 2)), ok(3, r("x", 1)), ok(4, r("x")),
		)},
		// Op 0's first ww edge (to op 1) leads nowhere; the cycle takes
		// its second, of the same kind, to op 2.
		{name: "write cycle through an op's second edge", events: then(
			together(ok(0, app("z", 1), app("x", 1), app("y", 2)), ok(1, app("z", 2)), ok(2, app("x", 2), app("y", 1))),
			serial(ok(3, r("x", 1, 2), r("y", 1, 2), r("z", 1, 2))),
		), want: []Kind{G0}},
		// Op 0 precedes op 1 by ww and by real time: only the rt edge
		// closes the G-single-realtime.
		{name: "two kinds of edge between the same ops", realtime: true, events: serial(
			ok(0, app("x", 1), app("y", 1)),
			ok(1, app("x", 2), r("y")),
			ok(2, r("x", 1, 2), r("y", 1)),
		), want: []Kind{GSingle, GSingleRealtime}},
		{name: "info ops seen and unseen, failed op unseen", realtime: true, events: then(
			serial(info(0, app("x", 1)), ok(1, r("x", 1)), info(2, app("x", 2), app("y", 9)), fail(3, app("x", 3))),
			serial(ok(4, app("x", 4)), ok(4, r("x", 1, 4), r("y"))),
		)},
		{name: "info op seen, its reads unknown", realtime: true, events: serial(
			ok(0, app("x", 1)),
			info(1, r("x", 1), app("y", 1)),
			ok(2, r("y", 1), r("x", 1)),
		)},
		{name: "own appends read within the transaction", realtime: true, events: serial(
			ok(0, app("x", 1), r("x", 1), app("x", 2), r("x", 1, 2)),
			ok(1, r("x", 1, 2)),
		)},
		{name: "history ends with ops in flight", realtime: true, events: then(
			serial(ok(0, app("x", 1))),
			[]Event{ok(1, app("x", 2)).invocation()},
			serial(ok(2, r("x", 1, 2))),
		)},

		{name: "G0 write cycle", want: []Kind{G0}, events: serial(
			ok(0, app("x", 1), app("y", 1)),
			ok(1, app("x", 2), app("y", 2)),
			ok(2, r("x", 1, 2)),
			ok(3, r("y", 2, 1)),
		)},
		{name: "G1a aborted read", want: []Kind{G1a}, events: serial(
			fail(0, app("x", 1)),
			ok(1, r("x", 1)),
		)},
		{name: "G1b intermediate read", want: []Kind{G1b}, events: serial(
			ok(0, app("x", 1), app("x", 2)),
			ok(1, r("x", 1)),
			ok(2, r("x", 1, 2)),
		)},
		{name: "G1c circular information flow", want: []Kind{G1c}, events: together(
			ok(0, app("x", 1), r("y", 1)),
			ok(1, app("y", 1), r("x", 1)),
		)},
		{name: "G-single read skew", want: []Kind{GSingle}, events: then(
			together(ok(0, app("x", 1), app("y", 1)), ok(1, r("x"), r("y", 1))),
			serial(ok(2, r("x", 1))),
		)},
		{name: "G2 write skew", want: []Kind{G2}, events: then(
			together(ok(0, r("x"), app("y", 1)), ok(1, r("y"), app("x", 1))),
			serial(ok(2, r("x", 1), r("y", 1))),
		)},
		{name: "G2 over three transactions", want: []Kind{G2}, events: then(
			together(ok(0, r("x"), app("y", 1)), ok(1, r("y"), app("z", 1)), ok(2, r("z"), app("x", 1))),
			serial(ok(3, r("x", 1), r("y", 1), r("z", 1))),
		)},
		{name: "stale read is serializable", events: serial(
			ok(0, app("x", 1)),
			ok(1, r("x")),
			ok(2, r("x", 1)),
		)},
		{name: "stale read is not strict", realtime: true, want: []Kind{GSingleRealtime}, events: serial(
			ok(0, app("x", 1)),
			ok(1, r("x")),
			ok(2, r("x", 1)),
		)},
		{name: "appends ordered against real time", realtime: true, want: []Kind{G0Realtime}, events: serial(
			ok(0, app("x", 1)),
			ok(1, app("x", 2)),
			ok(2, r("x", 2, 1)),
		)},
		{name: "appends ordered against real time over three transactions", realtime: true, want: []Kind{G0Realtime}, events: serial(
			ok(0, app("x", 1)),
			ok(1, app("x", 2)),
			ok(2, app("x", 3)),
			ok(3, r("x", 3, 1, 2)),
		)},
		{name: "a read of an append that came after it", realtime: true, want: []Kind{G1cRealtime}, events: serial(
			ok(0, r("x", 1)),
			ok(1, app("x", 1)),
		)},
		{name: "lost append", realtime: true, want: []Kind{LostAppend}, events: serial(
			ok(0, app("x", 1)),
			ok(1, app("x", 2)),
			ok(2, r("x", 1)),
		)},
		{name: "unseen append of a concurrent read is not lost", realtime: true, events: then(
			together(ok(0, app("x", 1)), ok(1, r("x"))),
		)},
		{name: "duplicate append", want: []Kind{DuplicateAppend}, events: serial(
			ok(0, app("x", 1)),
			ok(1, r("x", 1, 1)),
		)},
		{name: "duplicate in a shorter read too", want: []Kind{DuplicateAppend}, events: serial(
			ok(0, app("x", 1)),
			ok(1, app("x", 2)),
			ok(2, r("x", 1, 2, 1)),
			ok(3, app("x", 3)),
			ok(4, r("x", 1, 2, 1, 3)),
		)},
		{name: "garbage read", want: []Kind{GarbageRead}, events: serial(
			ok(0, app("x", 1)),
			ok(1, r("x", 1, 7)),
		)},
		{name: "incompatible order", want: []Kind{IncompatibleOrder}, events: serial(
			ok(0, app("x", 1)),
			ok(1, app("x", 2)),
			ok(2, r("x", 1, 2)),
			ok(3, r("x", 2)),
		)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.events, AppendOptions{RealTime: tc.realtime})
			got := res.Kinds()
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) || len(res.Incomplete) > 0 {
				t.Fatalf("found %v, want %v:\n%s", got, want, res)
			}
			for _, a := range res.Anomalies {
				checkExplained(t, a, tc.events)
			}
		})
	}
}

func check(t testing.TB, events []Event, opt AppendOptions) Result {
	t.Helper()
	ops, err := Pair(events)
	if err != nil {
		t.Fatal(err)
	}
	return CheckAppend(ops, opt)
}

// checkExplained checks that an anomaly names its ops, and that a cycle's
// edges join up and are of the kinds its name says.
func checkExplained(t *testing.T, a Anomaly, events []Event) {
	t.Helper()
	if len(a.Ops) == 0 || a.Why == "" {
		t.Errorf("%s names no ops or gives no reason: %+v", a.Kind, a)
	}
	if len(a.Cycle) == 0 {
		return
	}
	count := map[EdgeKind]int{}
	for i, e := range a.Cycle {
		count[e.Kind]++
		if next := a.Cycle[(i+1)%len(a.Cycle)]; e.To != next.From || a.Ops[i] != e.From {
			t.Errorf("%s: cycle does not join up at edge %d: %s", a.Kind, i, a)
		}
	}
	want := map[Kind]func() bool{
		G0:              func() bool { return count[WW] == len(a.Cycle) },
		G1c:             func() bool { return count[WR] > 0 && count[RW] == 0 && count[RT] == 0 },
		GSingle:         func() bool { return count[RW] == 1 && count[RT] == 0 },
		G2:              func() bool { return count[RW] > 1 && count[RT] == 0 },
		G0Realtime:      func() bool { return count[RT] > 0 && count[WW]+count[RT] == len(a.Cycle) },
		G1cRealtime:     func() bool { return count[RT] > 0 && count[WR] > 0 && count[RW] == 0 },
		GSingleRealtime: func() bool { return count[RT] > 0 && count[RW] == 1 },
		G2Realtime:      func() bool { return count[RT] > 0 && count[RW] > 1 },
	}[a.Kind]
	if want == nil || !want() {
		t.Errorf("cycle of the wrong edges for %s: %s", a.Kind, a)
	}
}

// TestSearchBudgetReported: a search that stops at its budget is reported
// as incomplete, and the history is then not valid.
func TestSearchBudgetReported(t *testing.T) {
	events := then(
		together(ok(0, r("x"), app("y", 1)), ok(1, r("y"), app("x", 1))),
		serial(ok(2, r("x", 1), r("y", 1))),
	)
	res := check(t, events, AppendOptions{SearchBudget: 1})
	if !slices.Contains(res.Incomplete, G2) || res.Valid() || slices.Contains(res.Kinds(), G2) {
		t.Fatalf("with a budget of 1: %+v, want G2's search incomplete", res)
	}
	if res := check(t, events, AppendOptions{}); len(res.Incomplete) > 0 {
		t.Fatalf("with the default budget: incomplete %v", res.Incomplete)
	}
}

// TestAnomalyText: what a run reports is read by people, so each anomaly
// says its kind and, for a cycle, every edge with the key and version
// that shows it (none for real time); a value's anomaly, its reason.
func TestAnomalyText(t *testing.T) {
	cycle := Anomaly{Kind: GSingleRealtime, Ops: []int{3, 5, 7}, Cycle: []Edge{
		{From: 3, To: 5, Kind: WW, Key: "x", Value: 2},
		{From: 5, To: 7, Kind: RW, Key: "y", Value: 9},
		{From: 7, To: 3, Kind: RT},
	}}
	value := Anomaly{Kind: G1a, Ops: []int{1, 2}, Key: "x", Value: 4, Why: "op 2 read 4 in x, appended by op 1, which failed"}
	res := Result{Anomalies: []Anomaly{cycle, value}, Incomplete: []Kind{G2}}
	want := "G-single-realtime: op 3 -ww(x 2)-> op 5 -rw(y 9)-> op 7 -rt-> op 3\n" +
		"G1a: op 2 read 4 in x, appended by op 1, which failed\n" +
		"search for G2 cycles stopped at its budget\n"
	if got := res.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}

	// A cycle found is explained by the same text.
	events := then(
		together(ok(0, r("x"), app("y", 1)), ok(1, r("y"), app("x", 1))),
		serial(ok(2, r("x", 1), r("y", 1))),
	)
	found := check(t, events, AppendOptions{}).Anomalies
	if len(found) != 1 || found[0].Why != "G2: op 0 -rw(x 1)-> op 1 -rw(y 1)-> op 0" && found[0].Why != "G2: op 1 -rw(y 1)-> op 0 -rw(x 1)-> op 1" {
		t.Errorf("write skew reported as %+v", found)
	}
}

// TestDuplicateNamesEachReader: a value read twice is reported once for
// each op whose read shows it twice, the longest read's and a shorter
// one's alike.
func TestDuplicateNamesEachReader(t *testing.T) {
	events := serial(ok(0, app("x", 1)), ok(1, app("x", 2)), ok(2, r("x", 1, 1)), ok(3, r("x", 1, 1, 2)))
	var readers []int
	for _, a := range check(t, events, AppendOptions{}).Anomalies {
		if a.Kind == DuplicateAppend {
			readers = append(readers, a.Ops...)
		}
	}
	slices.Sort(readers)
	if !slices.Equal(readers, []int{2, 3}) {
		t.Fatalf("duplicate reported for ops %v, want 2 and 3 once each", readers)
	}
}
