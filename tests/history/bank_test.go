package history

import (
	"slices"
	"testing"
)

func transfer(p int, typ Type, from, to string, amount int64) []Event {
	t := &Transfer{From: from, To: to, Amount: amount}
	return []Event{{Process: p, Type: Invoke, F: FTransfer, Transfer: t}, {Process: p, Type: typ, F: FTransfer, Transfer: t}}
}

func balances(p int, b map[string]int64) []Event {
	return []Event{{Process: p, Type: Invoke, F: FRead}, {Process: p, Type: OK, F: FRead, Balances: b}}
}

func TestCheckBank(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []Event
		opt    BankOptions
		want   []Kind
	}{
		{name: "transfers and consistent reads", opt: BankOptions{Total: 100}, events: then(
			balances(0, map[string]int64{"a": 50, "b": 50}),
			transfer(1, OK, "a", "b", 10),
			transfer(2, Info, "b", "a", 5),
			transfer(3, Fail, "a", "b", 500),
			balances(0, map[string]int64{"a": 45, "b": 55}),
			[]Event{{Process: 4, Type: Invoke, F: FRead}, {Process: 4, Type: Info, F: FRead, Error: "timeout"}},
		)},
		{name: "wrong sum", opt: BankOptions{Total: 100}, want: []Kind{WrongTotal}, events: then(
			transfer(1, OK, "a", "b", 10),
			balances(0, map[string]int64{"a": 40, "b": 50}),
		)},
		{name: "wrong sum from a missing account", opt: BankOptions{Total: 100}, want: []Kind{WrongTotal}, events: then(
			balances(0, map[string]int64{"a": 50}),
		)},
		{name: "negative balance", opt: BankOptions{Total: 100}, want: []Kind{NegativeBalance}, events: then(
			balances(0, map[string]int64{"a": -10, "b": 110}),
		)},
		{name: "an empty account is not overdrawn", opt: BankOptions{Total: 100}, events: then(
			balances(0, map[string]int64{"a": 0, "b": 100}),
		)},
		{name: "negative balance allowed", opt: BankOptions{Total: 100, AllowNegative: true}, events: then(
			balances(0, map[string]int64{"a": -10, "b": 110}),
		)},
		{name: "both", opt: BankOptions{Total: 100}, want: []Kind{WrongTotal, NegativeBalance}, events: then(
			balances(0, map[string]int64{"a": -10, "b": 100}),
		)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := Pair(tc.events)
			if err != nil {
				t.Fatal(err)
			}
			res := CheckBank(ops, tc.opt)
			if got := res.Kinds(); !slices.Equal(got, tc.want) {
				t.Fatalf("found %v, want %v:\n%s", got, tc.want, res)
			}
			for _, a := range res.Anomalies {
				if ops[a.Ops[0]].F != FRead {
					t.Errorf("%s names op %d, not a read", a.Kind, a.Ops[0])
				}
			}
		})
	}
}
