package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/tests/history"
)

// The bank workload: transfers between accounts inside transactions,
// each refused when the account would go below zero, and reads of every
// balance, whose sum must never change and none of which may be negative.

const (
	bankColl = "accounts"
	accounts = 8
	initial  = 100 // each account's balance at the start
	total    = accounts * initial
)

type account struct {
	ID      string `json:"id" tigris:"primaryKey:1"`
	Balance int64  `json:"balance"`
}

func accountName(i int) string { return fmt.Sprintf("a%d", i) }

type bankLoad struct {
	rec *recorder
}

func (w *bankLoad) setup(ctx context.Context, db *client.Database) error {
	schema, err := client.SchemaOf[account](bankColl)
	if err != nil {
		return err
	}
	if err := db.CreateCollection(ctx, bankColl, schema); err != nil {
		return err
	}
	var docs []*account
	for i := range accounts {
		docs = append(docs, &account{ID: accountName(i), Balance: initial})
	}
	_, err = client.Coll[account](db, bankColl).Insert(ctx, docs...)
	return err
}

// step runs a transfer (three times in five) or a read of every balance
// as process p, records it and returns its error.
func (w *bankLoad) step(ctx context.Context, c *client.Client, rng *rand.Rand, p int) error {
	db := c.Database(dbName)
	if rng.IntN(5) < 3 {
		return w.transfer(ctx, db, rng, p)
	}
	w.rec.record(history.Event{Process: p, Type: history.Invoke, F: history.FRead})
	var bal map[string]int64
	var err error
	commitSent := false
	if rng.IntN(4) == 0 {
		// A read outside a transaction runs on one snapshot too.
		bal, err = readBalances(ctx, client.Coll[account](db, bankColl))
	} else {
		err = db.Tx(ctx, func(tx *client.Tx) error {
			var err error
			bal, err = readBalances(ctx, client.Coll[account](tx, bankColl))
			commitSent = err == nil
			return err
		})
	}
	e := history.Event{Process: p, Type: outcome(err, commitSent), F: history.FRead}
	if err != nil {
		e.Error = err.Error()
	} else {
		e.Balances = bal
	}
	w.rec.record(e)
	return err
}

func readBalances(ctx context.Context, coll *client.Collection[account]) (map[string]int64, error) {
	bal := map[string]int64{}
	for a, err := range coll.Read(ctx, client.All()) {
		if err != nil {
			return nil, err
		}
		bal[a.ID] = a.Balance
	}
	return bal, nil
}

// transfer moves 1 to 5 between two accounts: it reads both and refuses
// to overdraw; then it writes both balances (replace) or has the server
// add and subtract ($increment, $decrement), drawn per transfer.
func (w *bankLoad) transfer(ctx context.Context, db *client.Database, rng *rand.Rand, p int) error {
	from, to := rng.IntN(accounts), rng.IntN(accounts-1)
	if to >= from {
		to++
	}
	t := &history.Transfer{From: accountName(from), To: accountName(to), Amount: 1 + rng.Int64N(5)}
	w.rec.record(history.Event{Process: p, Type: history.Invoke, F: history.FTransfer, Transfer: t})
	server := rng.IntN(2) == 0
	commitSent := false
	err := db.Tx(ctx, func(tx *client.Tx) error {
		coll := client.Coll[account](tx, bankColl)
		src, err := coll.ReadOne(ctx, client.Eq("id", t.From))
		if err != nil {
			return err
		}
		dst, err := coll.ReadOne(ctx, client.Eq("id", t.To))
		if err != nil {
			return err
		}
		if src.Balance < t.Amount {
			return errRefused
		}
		if server {
			for _, u := range []struct {
				id, op string
			}{{t.From, "$decrement"}, {t.To, "$increment"}} {
				n, err := coll.Update(ctx, client.Eq("id", u.id), client.RawUpdate(fmt.Appendf(nil, `{%q:{"balance":%d}}`, u.op, t.Amount)))
				if err != nil {
					return err
				}
				if n != 1 {
					return fmt.Errorf("%s of account %s changed %d documents", u.op, u.id, n)
				}
			}
		} else {
			src.Balance -= t.Amount
			dst.Balance += t.Amount
			if _, err := coll.Replace(ctx, src, dst); err != nil {
				return err
			}
		}
		commitSent = true
		return nil
	})
	e := history.Event{Process: p, Type: outcome(err, commitSent), F: history.FTransfer, Transfer: t}
	if err != nil {
		e.Error = err.Error()
	}
	w.rec.record(e)
	if errors.Is(err, errRefused) {
		return nil
	}
	return err
}

// final reads every balance once the faults and clients have stopped.
func (w *bankLoad) final(ctx context.Context, c *client.Client, p int) error {
	w.rec.record(history.Event{Process: p, Type: history.Invoke, F: history.FRead})
	var bal map[string]int64
	err := c.Database(dbName).Tx(ctx, func(tx *client.Tx) error {
		var err error
		bal, err = readBalances(ctx, client.Coll[account](tx, bankColl))
		return err
	})
	if err != nil {
		w.rec.record(history.Event{Process: p, Type: history.Fail, F: history.FRead, Error: err.Error()})
		return fmt.Errorf("the final read of the balances: %w", err)
	}
	w.rec.record(history.Event{Process: p, Type: history.OK, F: history.FRead, Balances: bal})
	return nil
}
