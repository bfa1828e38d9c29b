package ops

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/cluster"
)

// Forwarding: any node may receive any request of an interactive
// transaction, as in the original; the node that holds the transaction
// serves it. A transport asks ForwardTo before it routes a request, relays
// the request to the node named, and returns its answer unchanged. One
// hop at most: a request that was forwarded once is served where it
// lands, which answers for a transaction it does not hold.

// Route names the node a request must go to.
type Route struct {
	Node string // its id, the transaction's origin
	Addr string // host:port of its API
	TLS  bool   // it serves the API over TLS
}

// ForwardTo reports whether a request in transaction tx must go to another
// node, and which: one that is live and holds it. forwarded says the
// request came from another node already. A transaction of a node that is
// gone is served here, and its requests answer the original's errors for a
// lost session. When the registry cannot be read, the error (UNAVAILABLE,
// retryable) is the request's answer: serving it here would answer that
// another node holds the transaction, which the client cannot retry.
func (o *Ops) ForwardTo(ctx context.Context, tx TxRef, forwarded bool) (Route, bool, error) {
	if o.cfg.Cluster == nil || forwarded || !tx.InTx() || tx.Origin == o.sessions.Origin() {
		return Route{}, false, nil
	}
	m, err := o.cfg.Cluster.Locate(ctx, tx.Origin)
	if errors.Is(err, cluster.ErrGone) {
		return Route{}, false, nil
	}
	if err != nil {
		o.log.Warn("cannot look up the node holding a transaction", "node_id", tx.Origin, "err", err)
		return Route{}, false, &apierror.Error{Code: apierror.Unavailable, RetryDelay: retryUnreachable,
			Message: "cannot look up the node holding this transaction ('" + tx.Origin + "'); retry", Cause: err}
	}
	return Route{Node: m.ID, Addr: m.Addr, TLS: m.TLS}, true, nil
}

// NodeID is this node's id: its transactions' origin.
func (o *Ops) NodeID() string { return o.sessions.Origin() }

// ForwardStats counts the requests forwarded to other nodes.
type ForwardStats struct {
	Forwarded uint64 // relayed, whatever the other node answered
	Failed    uint64 // the other node could not be reached
}

// forwardCounts are ForwardStats' counters.
type forwardCounts struct {
	forwarded, failed atomic.Uint64
}

// NoteForward counts a request forwarded (reached: the other node
// answered, or could not be reached).
func (o *Ops) NoteForward(reached bool) {
	if reached {
		o.forwards.forwarded.Add(1)
	} else {
		o.forwards.failed.Add(1)
	}
}

// ForwardStats reports the requests forwarded so far.
func (o *Ops) ForwardStats() ForwardStats {
	return ForwardStats{Forwarded: o.forwards.forwarded.Load(), Failed: o.forwards.failed.Load()}
}

// retryUnreachable is the retry advice of Unreachable: a node restarting
// is back within seconds.
const retryUnreachable = time.Second

// Unreachable is the error of a request that had to go to another node
// that could not be reached: it may be restarting, or dead with its lease
// still running (then its transactions are lost, which the client learns
// on its retry once the lease is out).
//
// The node may have just left (its registration can be remembered for a
// second, see cluster.Registry.Locate): if the registry now says it is gone,
// the answer is the original's for a lost session instead (ending: the
// request is a commit or a rollback).
func (o *Ops) Unreachable(ctx context.Context, tx TxRef, ending bool, r Route, cause error) error {
	if o.cfg.Cluster != nil {
		o.cfg.Cluster.Forget(r.Node)
		if _, err := o.cfg.Cluster.Locate(ctx, r.Node); errors.Is(err, cluster.ErrGone) {
			return o.heldElsewhere(ctx, tx, ending)
		}
	}
	return &apierror.Error{Code: apierror.Unavailable, RetryDelay: retryUnreachable,
		Message: "the node holding this transaction ('" + r.Node + "' at " + r.Addr + ") cannot be reached; retry, or begin the transaction again",
		Cause:   cause}
}

// heldElsewhere is the error of a request in a transaction that another
// node (tx.Origin) holds, served here all the same: the node is gone, so
// is the transaction (the original's errors for a lost session: ending
// says whether the request is a commit or a rollback); or it is live and
// the request was not forwarded to it (a second hop, or a node alone).
func (o *Ops) heldElsewhere(ctx context.Context, tx TxRef, ending bool) error {
	if o.cfg.Cluster != nil {
		if _, err := o.cfg.Cluster.Locate(ctx, tx.Origin); errors.Is(err, cluster.ErrGone) {
			if ending {
				return apierror.Errorf(apierror.NotFound, "session not found")
			}
			return apierror.Errorf(apierror.Internal, "session is gone")
		}
	}
	return apierror.Errorf(apierror.FailedPrecondition, "transaction %s is held by node '%s', not by this node ('%s'): send its requests there", tx.ID, tx.Origin, o.sessions.Origin())
}
