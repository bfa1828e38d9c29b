package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Tx is an interactive transaction of a database: the collections of
// Coll(tx, …) and the calls of tx run in it. It is valid only inside the
// function given to Database.Tx.
type Tx struct {
	db *Database
	h  txHeaders
}

func (tx *Tx) scope() scope { return scope{db: tx.db, tx: &tx.h} }

// CreateCollection is Database.CreateCollection in the transaction.
func (tx *Tx) CreateCollection(ctx context.Context, name string, schema []byte) error {
	return tx.scope().createCollection(ctx, name, schema)
}

// DropCollection is Database.DropCollection in the transaction.
func (tx *Tx) DropCollection(ctx context.Context, name string) error {
	return tx.scope().dropCollection(ctx, name)
}

// ListCollections is Database.ListCollections in the transaction.
func (tx *Tx) ListCollections(ctx context.Context) ([]CollectionInfo, error) {
	return tx.scope().listCollections(ctx)
}

// DescribeCollection is Database.DescribeCollection in the transaction.
func (tx *Tx) DescribeCollection(ctx context.Context, name string) (*CollectionDescription, error) {
	return tx.scope().describeCollection(ctx, name)
}

// Tx runs fn in a serializable transaction and commits it. When the
// commit (or a call in fn) is aborted by a conflicting transaction (code
// ABORTED), the transaction is rolled back and fn runs again in a new one,
// after a growing, jittered pause, up to Options.TxAttempts times. An
// error fn returns rolls the transaction back and is returned as it is.
// fn may thus run more than once: it should have no effects outside the
// transaction.
func (db *Database) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for attempt := range db.c.opts.TxAttempts {
		if attempt > 0 {
			if werr := sleep(ctx, backoff(attempt, err)); werr != nil {
				return fmt.Errorf("transaction on %s: %w (after: %w)", db.name, werr, err)
			}
		}
		if err = db.runTx(ctx, fn); !IsCode(err, Aborted) {
			return err
		}
	}
	return fmt.Errorf("transaction on %s aborted %d times by conflicts: %w", db.name, db.c.opts.TxAttempts, err)
}

// Snapshot runs fn in a transaction that is rolled back when fn returns:
// its reads see one consistent state of the database, however long they
// take (up to the server's transaction lifetime), and nothing fn writes
// is kept. Unlike Tx it runs fn once: an ABORTED error is returned as it
// is. It returns fn's error.
func (db *Database) Snapshot(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.rollback(ctx)
	return fn(tx)
}

// runTx is one attempt: begin, fn, commit (or roll back).
func (db *Database) runTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.rollback(ctx)
		return err
	}
	return db.c.call(ctx, &request{route: routeCommit, params: db.params(), tx: &tx.h}, &struct{}{})
}

func (db *Database) begin(ctx context.Context) (*Tx, error) {
	var res struct {
		TxCtx struct {
			ID     string `json:"id"`
			Origin string `json:"origin"`
		} `json:"tx_ctx"`
	}
	if err := db.c.call(ctx, &request{route: routeBegin, params: db.params()}, &res); err != nil {
		return nil, err
	}
	return &Tx{db: db, h: txHeaders{id: res.TxCtx.ID, origin: res.TxCtx.Origin}}, nil
}

// rollback rolls the transaction back, even when ctx is done: else the
// server holds it until its idle timeout. Its error is not the caller's
// concern: the transaction ends either way.
func (tx *Tx) rollback(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = tx.db.c.call(rctx, &request{route: routeRollback, params: tx.db.params(), tx: &tx.h}, &struct{}{})
}

// backoff is the pause before attempt n (from 1): 10 ms doubling up to
// 1 s, jittered so that the transactions that conflicted do not meet
// again, and never shorter than the server's hint.
func backoff(n int, err error) time.Duration {
	d := 10 * time.Millisecond << min(n-1, 7)
	d = min(d, time.Second)
	d = d/2 + rand.N(d/2+1)
	if e := (*Error)(nil); errors.As(err, &e) && e.RetryDelay > d {
		d = e.RetryDelay
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
