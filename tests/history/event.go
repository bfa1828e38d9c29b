package history

import (
	"fmt"
)

// Type is what an event says of its operation: invoked, or completed with
// one of three outcomes.
type Type string

const (
	Invoke Type = "invoke"
	// OK: the operation took effect, and its completion holds what it read.
	OK Type = "ok"
	// Fail: the operation certainly took no effect (a transaction aborted).
	Fail Type = "fail"
	// Info: the outcome is unknown (a timeout, a connection cut while the
	// commit was in flight): the operation may or may not have taken effect.
	Info Type = "info"
)

// The functions of the two workloads.
const (
	FTxn      = "txn"      // list-append: Event.Txn
	FTransfer = "transfer" // bank: Event.Transfer
	FRead     = "read"     // bank: Event.Balances, on an ok completion
)

// The micro-operations of a list-append transaction.
const (
	MAppend = "append"
	MRead   = "r"
)

// Mop is one micro-operation of a list-append transaction: append Value to
// the list at Key, or read that list.
type Mop struct {
	F     string // MAppend or MRead
	Key   string
	Value int64 // MAppend: unique per key over the whole history
	// Read is the list a MRead observed. nil means not known (an
	// invocation, or a completion that was lost); a read that observed an
	// empty list holds a non-nil empty slice.
	Read []int64
}

// Append and Read build micro-operations, for harnesses and tests.
func Append(key string, v int64) Mop { return Mop{F: MAppend, Key: key, Value: v} }

// Read is a read whose result is not known yet (an invocation's).
func Read(key string) Mop { return Mop{F: MRead, Key: key} }

// ReadOf is a read that observed vals (an empty list if none).
func ReadOf(key string, vals ...int64) Mop {
	if vals == nil {
		vals = []int64{}
	}
	return Mop{F: MRead, Key: key, Read: vals}
}

// Transfer moves Amount from one bank account to another.
type Transfer struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Amount int64  `json:"amount"`
}

// Event is one line of a history: a client (Process) invoking an operation
// or learning its outcome. A process has at most one operation in flight,
// so a completion belongs to its process's last invocation.
type Event struct {
	Process int
	Type    Type
	F       string
	// Time is when the event happened, in nanoseconds from any fixed
	// origin; optional. The checkers use the events' order, not Time.
	Time int64
	// The value, by F.
	Txn      []Mop
	Transfer *Transfer
	Balances map[string]int64
	// Error says why an operation failed or its outcome is unknown.
	Error string
}

// Op is an operation: an invocation paired with its completion.
type Op struct {
	ID      int // its index in the slice Pair returns: in invocation order
	Process int
	F       string
	Type    Type // OK, Fail or Info (Info also when the history ends first)
	// Invoke and Complete are the indexes of its two events in the history;
	// Complete is -1 when the history ended before it completed. Their
	// order against other operations' events is the real-time order.
	Invoke, Complete int
	// The value: an ok operation's from its completion (what it read), the
	// others' from their invocation (what they tried).
	Txn      []Mop
	Transfer *Transfer
	Balances map[string]int64
}

// Pair matches each invocation with its process's next completion. It
// refuses histories no correct recorder writes: a completion with nothing
// in flight, an invocation while one is in flight, a completion whose
// function differs from its invocation's, an ok transaction whose
// micro-operations differ from those it invoked.
func Pair(events []Event) ([]Op, error) {
	var ops []Op
	inflight := map[int]int{} // process -> index in ops
	for i, e := range events {
		switch e.Type {
		case Invoke:
			if j, ok := inflight[e.Process]; ok {
				return nil, fmt.Errorf("event %d: process %d invokes while its event %d is in flight", i, e.Process, ops[j].Invoke)
			}
			inflight[e.Process] = len(ops)
			ops = append(ops, Op{ID: len(ops), Process: e.Process, F: e.F, Type: Info, Invoke: i, Complete: -1,
				Txn: e.Txn, Transfer: e.Transfer, Balances: e.Balances})
		case OK, Fail, Info:
			j, ok := inflight[e.Process]
			if !ok {
				return nil, fmt.Errorf("event %d: process %d completes with nothing in flight", i, e.Process)
			}
			delete(inflight, e.Process)
			op := &ops[j]
			if e.F != op.F {
				return nil, fmt.Errorf("event %d: process %d completes %q but invoked %q", i, e.Process, e.F, op.F)
			}
			op.Type, op.Complete = e.Type, i
			if e.Type == OK {
				if err := sameMops(op.Txn, e.Txn); err != nil {
					return nil, fmt.Errorf("event %d: %w", i, err)
				}
				op.Txn, op.Balances = e.Txn, e.Balances
				if e.Transfer != nil {
					op.Transfer = e.Transfer
				}
			}
		default:
			return nil, fmt.Errorf("event %d: unknown type %q", i, e.Type)
		}
	}
	return ops, nil
}

// sameMops checks that an ok completion reports the transaction that was
// invoked, so that what it read can be taken from the completion alone.
func sameMops(invoked, completed []Mop) error {
	if len(invoked) != len(completed) {
		return fmt.Errorf("completion has %d micro-operations, invocation %d", len(completed), len(invoked))
	}
	for k, m := range invoked {
		c := completed[k]
		if m.F != c.F || m.Key != c.Key || (m.F == MAppend && m.Value != c.Value) {
			return fmt.Errorf("micro-operation %d completed as %v, invoked as %v", k, c, m)
		}
		if c.F == MRead && c.Read == nil {
			return fmt.Errorf("micro-operation %d: an ok read of %q holds no list", k, c.Key)
		}
	}
	return nil
}
