package history

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

var exampleHistory = `{"process":0,"type":"invoke","f":"txn","value":[["append","x",1],["r","y",null]],"time":1200}
{"process":0,"type":"ok","f":"txn","value":[["append","x",1],["r","y",[3,4]]],"time":5300}

{"process":1,"type":"invoke","f":"transfer","value":{"from":"a","to":"b","amount":5}}
{"process":1,"type":"info","f":"transfer","value":{"from":"a","to":"b","amount":5},"error":"timeout"}
{"process":2,"type":"invoke","f":"read","value":null}
{"process":2,"type":"ok","f":"read","value":{"a":45,"b":55}}
{"process":3,"type":"invoke","f":"txn","value":[["r","x",null]]}
{"process":3,"type":"fail","f":"txn","value":[["r","x",[]]]}
`

func TestDecode(t *testing.T) {
	events, err := Decode(strings.NewReader(exampleHistory))
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{Process: 0, Type: Invoke, F: FTxn, Time: 1200, Txn: []Mop{Append("x", 1), Read("y")}},
		{Process: 0, Type: OK, F: FTxn, Time: 5300, Txn: []Mop{Append("x", 1), ReadOf("y", 3, 4)}},
		{Process: 1, Type: Invoke, F: FTransfer, Transfer: &Transfer{"a", "b", 5}},
		{Process: 1, Type: Info, F: FTransfer, Transfer: &Transfer{"a", "b", 5}, Error: "timeout"},
		{Process: 2, Type: Invoke, F: FRead},
		{Process: 2, Type: OK, F: FRead, Balances: map[string]int64{"a": 45, "b": 55}},
		{Process: 3, Type: Invoke, F: FTxn, Txn: []Mop{Read("x")}},
		{Process: 3, Type: Fail, F: FTxn, Txn: []Mop{ReadOf("x")}},
	}
	if !reflect.DeepEqual(events, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", events, want)
	}
	roundTrip(t, events)
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"not json", `{`, "EOF"},
		{"unknown type", `{"process":0,"type":"done","f":"txn","value":[]}`, "unknown type"},
		{"unknown function", `{"process":0,"type":"invoke","f":"cas","value":[]}`, "unknown function"},
		{"unknown field", `{"process":0,"type":"invoke","f":"txn","value":[],"extra":1}`, "unknown field"},
		{"short micro-op", `{"process":0,"type":"invoke","f":"txn","value":[["r","x"]]}`, "want [f, key, value]"},
		{"unknown micro-op", `{"process":0,"type":"invoke","f":"txn","value":[["cas","x",1]]}`, "unknown micro-operation"},
		{"fractional value", `{"process":0,"type":"invoke","f":"txn","value":[["append","x",1.5]]}`, "int64"},
		{"read not a list", `{"process":0,"type":"ok","f":"txn","value":[["r","x",{"v":1}]]}`, "[]int64"},
		{"key not a string", `{"process":0,"type":"invoke","f":"txn","value":[["append",1,1]]}`, "key"},
		{"transfer field", `{"process":0,"type":"invoke","f":"transfer","value":{"from":"a","too":"b"}}`, "unknown field"},
		{"second value", `{"process":0,"type":"invoke","f":"read","value":null} {}`, "after the value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader("\n" + tc.line + "\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("Decode(%s) = %v, want an error on line 2 saying %q", tc.line, err, tc.want)
			}
		})
	}
}

func TestPairRefuses(t *testing.T) {
	inv := func(p int) Event { return Event{Process: p, Type: Invoke, F: FTxn, Txn: []Mop{Append("x", 1)}} }
	done := func(p int, typ Type, mops ...Mop) Event { return Event{Process: p, Type: typ, F: FTxn, Txn: mops} }
	for _, tc := range []struct {
		name   string
		events []Event
		want   string
	}{
		{"completion with nothing in flight", []Event{done(0, OK, Append("x", 1))}, "nothing in flight"},
		{"two invocations", []Event{inv(0), inv(0)}, "in flight"},
		{"other function", []Event{inv(0), {Process: 0, Type: OK, F: FRead}}, "invoked"},
		{"other micro-ops", []Event{inv(0), done(0, OK, Append("x", 2))}, "micro-operation 0"},
		{"fewer micro-ops", []Event{inv(0), done(0, OK)}, "micro-operations"},
		{"ok read without its list", []Event{{Process: 0, Type: Invoke, F: FTxn, Txn: []Mop{Read("x")}}, done(0, OK, Read("x"))}, "holds no list"},
		{"unknown type", []Event{{Process: 0, Type: "done"}}, "unknown type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Pair(tc.events); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pair = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestPair(t *testing.T) {
	events := then(
		[]Event{ok(0, Append("x", 1)).invocation(), ok(1, ReadOf("x", 1)).invocation()},
		[]Event{ok(1, ReadOf("x", 1)).completion(), info(0, Append("x", 1)).completion()},
		[]Event{ok(2, ReadOf("x")).invocation()},
		// An ok transfer's completion need not repeat its value.
		[]Event{{Process: 3, Type: Invoke, F: FTransfer, Transfer: &Transfer{From: "a", To: "b", Amount: 5}}, {Process: 3, Type: OK, F: FTransfer}},
	)
	ops, err := Pair(events)
	if err != nil {
		t.Fatal(err)
	}
	want := []Op{
		{ID: 0, Process: 0, F: FTxn, Type: Info, Invoke: 0, Complete: 3, Txn: []Mop{Append("x", 1)}},
		{ID: 1, Process: 1, F: FTxn, Type: OK, Invoke: 1, Complete: 2, Txn: []Mop{ReadOf("x", 1)}},
		{ID: 2, Process: 2, F: FTxn, Type: Info, Invoke: 4, Complete: -1, Txn: []Mop{Read("x")}},
		{ID: 3, Process: 3, F: FTransfer, Type: OK, Invoke: 5, Complete: 6, Transfer: &Transfer{From: "a", To: "b", Amount: 5}},
	}
	if !reflect.DeepEqual(ops, want) {
		t.Fatalf("paired\n%+v\nwant\n%+v", ops, want)
	}
}

// roundTrip encodes events and wants them decoded back the same.
func roundTrip(t *testing.T, events []Event) {
	t.Helper()
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatalf("encode %+v: %v", e, err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatalf("decode what was encoded: %v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back, events) {
		t.Fatalf("round trip changed the events:\n%+v\nbecame\n%+v", events, back)
	}
}

// FuzzDecode: any input either is refused or decodes to events that
// encode and decode back the same, and that pair and check without a
// panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(exampleHistory))
	for _, line := range strings.Split(exampleHistory, "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"process":0,"type":"ok","f":"txn","value":[["r","x",[1,1,2]],["append","x",-9]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		roundTrip(t, events)
		ops, err := Pair(events)
		if err != nil {
			return
		}
		CheckAppend(ops, AppendOptions{RealTime: true})
		CheckBank(ops, BankOptions{})
	})
}
