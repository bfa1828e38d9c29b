package nemesis

import (
	"errors"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/tests/history"
)

// errRefused is the error of a transfer the workload itself gave up (the
// account short of the amount): rolled back, so certainly without effect.
var errRefused = errors.New("insufficient balance")

// outcome is what a transaction's error says of its effect. An error
// before the commit was sent leaves the transaction uncommitted, whatever
// it was (a cut connection, a node gone): it failed. Once the commit is
// sent, only an ABORTED answer says it took no effect; anything else (a
// connection cut, a timeout, a node or PostgreSQL gone mid-commit, an
// INTERNAL or UNAVAILABLE answer relayed from another node) may come
// after the commit took effect: the outcome is unknown (info). Taking
// such an error for a failure would make the checker see aborted reads
// (G1a) where there are none; taking an abort for unknown only weakens
// the check.
func outcome(err error, commitSent bool) history.Type {
	switch {
	case err == nil:
		return history.OK
	case !commitSent, client.IsCode(err, client.Aborted):
		return history.Fail
	}
	return history.Info
}
