package ops

import (
	"context"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// BeginResult is a new interactive transaction.
type BeginResult struct {
	Tx TxRef
	// Expires is when the transaction is rolled back at the latest.
	Expires time.Time
}

// BeginTransaction opens an interactive transaction on a database's branch
// (main unless the request names another): every request in it must be on
// that branch. As in the original it checks the names but not that the
// database or branch exists: the first request in the transaction does.
func (o *Ops) BeginTransaction(ctx context.Context, c Caller, req DatabaseRequest) (_ *BeginResult, err error) {
	ctx, op, err := o.open(ctx, c, "BeginTransaction")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	t, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed)
	if err != nil {
		return nil, err
	}
	sess, err := o.sessions.Begin(ctx, t.stored, c.owner())
	if err != nil {
		return nil, err
	}
	return &BeginResult{Tx: TxRef{ID: sess.ID, Origin: sess.Origin}, Expires: time.Now().Add(o.sessions.MaxLifetime())}, nil
}

// CommitTransaction commits the interactive transaction req.Tx names.
func (o *Ops) CommitTransaction(ctx context.Context, c Caller, req DatabaseRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "CommitTransaction")
	defer op.end(&err)
	if err != nil {
		return err
	}
	id, err := o.ending(ctx, c, req)
	if err != nil {
		return err
	}
	return o.sessions.Commit(ctx, id, c.owner())
}

// RollbackTransaction rolls back the interactive transaction req.Tx names.
func (o *Ops) RollbackTransaction(ctx context.Context, c Caller, req DatabaseRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "RollbackTransaction")
	defer op.end(&err)
	if err != nil {
		return err
	}
	id, err := o.ending(ctx, c, req)
	if err != nil {
		return err
	}
	return o.sessions.Rollback(ctx, id, c.owner())
}

// ending checks a commit or rollback and returns the transaction's id.
// Unlike other requests, these need only the id: an origin, if given,
// must be this node. As a 2022 commit's database, a 2023 commit's branch is
// checked as a name, not held against the transaction's.
func (o *Ops) ending(ctx context.Context, c Caller, req DatabaseRequest) (string, error) {
	if _, err := c.resolve(req.DB, req.Branch, "", false, req.Malformed); err != nil {
		return "", err
	}
	if req.Tx.ID == "" {
		return "", apierror.Errorf(apierror.NotFound, "session not found")
	}
	if req.Tx.Origin != "" && req.Tx.Origin != o.sessions.Origin() {
		return "", o.heldElsewhere(ctx, req.Tx, true)
	}
	return req.Tx.ID, nil
}
