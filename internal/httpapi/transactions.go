package httpapi

import (
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// The headers that carry a client's transaction (reference §2).
const (
	headerTxID     = "Tigris-Tx-Id"
	headerTxOrigin = "Tigris-Tx-Origin"
)

// txRef reads the transaction a request names, if any.
func txRef(r *http.Request) ops.TxRef {
	return ops.TxRef{ID: r.Header.Get(headerTxID), Origin: r.Header.Get(headerTxOrigin)}
}

type txCtx struct {
	ID     string `json:"id"`
	Origin string `json:"origin"`
}

func (s *Server) beginTransaction(w http.ResponseWriter, r *http.Request) error {
	req := transactionRequest(r, noOptions)
	res, err := s.ops.BeginTransaction(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	// Clients and load balancers use the cookie for stickiness.
	http.SetCookie(w, &http.Cookie{Name: headerTxID, Value: res.Tx.ID, Expires: res.Expires, Path: "/"})
	writeJSON(w, http.StatusOK, map[string]txCtx{"tx_ctx": {ID: res.Tx.ID, Origin: res.Tx.Origin}})
	return nil
}

func (s *Server) commitTransaction(w http.ResponseWriter, r *http.Request) error {
	req := transactionRequest(r, nil)
	if err := s.ops.CommitTransaction(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "committed"})
	return nil
}

func (s *Server) rollbackTransaction(w http.ResponseWriter, r *http.Request) error {
	req := transactionRequest(r, nil)
	if err := s.ops.RollbackTransaction(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "rolled back"})
	return nil
}

// transactionRequest decodes a begin, commit or rollback: these take an
// empty body, or options (known) for a begin, or in the 2023 API the
// branch.
func transactionRequest(r *http.Request, known options) ops.DatabaseRequest {
	var body struct {
		Branch string `json:"branch"`
	}
	malformed := decode(r, &body, known)
	return ops.DatabaseRequest{Malformed: malformed, DB: r.PathValue("db"), Branch: branchOf(r, body.Branch), Tx: txRef(r)}
}
