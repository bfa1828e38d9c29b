package history

import (
	"fmt"
	"strings"
)

// Kind names an anomaly.
type Kind string

// The anomalies of the list-append checker. The G names are Adya's.
const (
	// G0, write cycle: transactions whose appends are ordered each before
	// the other's (ww edges only).
	G0 Kind = "G0"
	// G1a, aborted read: a read saw an append of a transaction that failed.
	G1a Kind = "G1a"
	// G1b, intermediate read: a read saw a transaction's append to a key
	// that the same transaction followed with another append to that key.
	G1b Kind = "G1b"
	// G1c, circular information flow: a cycle of ww and wr edges with at
	// least one wr.
	G1c Kind = "G1c"
	// GSingle, read skew: a cycle with exactly one rw (anti-dependency)
	// edge, the rest ww and wr.
	GSingle Kind = "G-single"
	// G2, anti-dependency cycle: a cycle that needs two or more rw edges
	// (write skew). Adya's G2 is any cycle with rw edges; one with exactly
	// one is reported as G-single, the more specific name.
	G2 Kind = "G2"

	// The same cycles closed by real-time order: each transaction must take
	// effect between its invocation and completion (strict serializability).
	G0Realtime      Kind = "G0-realtime"
	G1cRealtime     Kind = "G1c-realtime"
	GSingleRealtime Kind = "G-single-realtime"
	G2Realtime      Kind = "G2-realtime"

	// LostAppend: an ok append missing from its key's longest read, though
	// a read of the key began after the append completed.
	LostAppend Kind = "lost-append"
	// DuplicateAppend: one read shows a value twice.
	DuplicateAppend Kind = "duplicate-append"
	// GarbageRead: a read shows a value that no transaction appended.
	GarbageRead Kind = "garbage-read"
	// IncompatibleOrder: a read of a key that is not a prefix of the
	// key's longest read, so no single order of versions explains both.
	IncompatibleOrder Kind = "incompatible-order"

	// The anomalies of the bank checker.
	WrongTotal      Kind = "wrong-total"
	NegativeBalance Kind = "negative-balance"
)

// Anomaly is one anomaly found, with what shows it.
type Anomaly struct {
	Kind Kind
	// Ops are the operations involved (op IDs), for a cycle in its order.
	Ops []int
	// Cycle holds a cycle's edges, each from the op before it in Ops.
	Cycle []Edge
	// Key and Value name the version involved, for anomalies of one value.
	Key   string
	Value int64
	// Why says it in a sentence.
	Why string
}

func (a Anomaly) String() string {
	if len(a.Cycle) == 0 {
		return fmt.Sprintf("%s: %s", a.Kind, a.Why)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: op %d", a.Kind, a.Cycle[0].From)
	for _, e := range a.Cycle {
		if e.Kind == RT {
			fmt.Fprintf(&b, " -rt-> op %d", e.To)
		} else {
			fmt.Fprintf(&b, " -%s(%s %d)-> op %d", e.Kind, e.Key, e.Value, e.To)
		}
	}
	return b.String()
}

// Result is what a checker found.
type Result struct {
	Anomalies []Anomaly
	// Incomplete lists the cycle kinds whose search ran out of budget
	// before it finished: their absence from Anomalies proves nothing.
	Incomplete []Kind
}

// Valid says the checker found nothing wrong and finished every search.
func (r Result) Valid() bool { return len(r.Anomalies) == 0 && len(r.Incomplete) == 0 }

// Kinds lists the kinds of anomaly found, each once, in the order found.
func (r Result) Kinds() []Kind {
	var kinds []Kind
	seen := map[Kind]bool{}
	for _, a := range r.Anomalies {
		if !seen[a.Kind] {
			seen[a.Kind] = true
			kinds = append(kinds, a.Kind)
		}
	}
	return kinds
}

func (r Result) String() string {
	if r.Valid() {
		return "valid"
	}
	var b strings.Builder
	for _, a := range r.Anomalies {
		b.WriteString(a.String())
		b.WriteByte('\n')
	}
	for _, k := range r.Incomplete {
		fmt.Fprintf(&b, "search for %s cycles stopped at its budget\n", k)
	}
	return b.String()
}
