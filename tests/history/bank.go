package history

import (
	"fmt"
	"slices"
)

// BankOptions describe the bank a history ran against.
type BankOptions struct {
	// Total is the sum of all balances, which transfers never change.
	Total int64
	// AllowNegative says the workload lets a transfer overdraw an account;
	// otherwise a negative balance read is an anomaly.
	AllowNegative bool
}

// CheckBank checks every ok read of all balances: it must sum to the
// total, and show no negative balance unless the workload allows it. A
// wrong sum is a read that saw part of a transfer (or a transfer applied
// twice, or lost halfway); a negative balance, two transfers that each
// checked the balance and together overdrew it (write skew). Transfers
// themselves are not checked: their effects are what the reads show.
// O(reads × accounts).
func CheckBank(ops []Op, opt BankOptions) Result {
	var r Result
	for _, op := range ops {
		if op.F != FRead || op.Type != OK {
			continue
		}
		var sum int64
		for _, b := range op.Balances {
			sum += b
		}
		if sum != opt.Total {
			r.Anomalies = append(r.Anomalies, Anomaly{Kind: WrongTotal, Ops: []int{op.ID},
				Why: fmt.Sprintf("op %d read balances %v summing to %d, not %d", op.ID, op.Balances, sum, opt.Total)})
		}
		if opt.AllowNegative {
			continue
		}
		for _, account := range sortedKeys(op.Balances) {
			if b := op.Balances[account]; b < 0 {
				r.Anomalies = append(r.Anomalies, Anomaly{Kind: NegativeBalance, Ops: []int{op.ID}, Key: account, Value: b,
					Why: fmt.Sprintf("op %d read balance %d of account %s", op.ID, b, account)})
			}
		}
	}
	slices.SortStableFunc(r.Anomalies, func(a, b Anomaly) int { return a.Ops[0] - b.Ops[0] })
	return r
}
