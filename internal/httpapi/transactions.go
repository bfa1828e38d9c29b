package httpapi

import (
	"net/http"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/status"
)

// The headers that carry a client's transaction (reference §2).
const (
	headerTxID     = "Tigris-Tx-Id"
	headerTxOrigin = "Tigris-Tx-Origin"
)

// inTx runs fn in the client's transaction if the request carries one, and
// in a transaction of its own (retried on conflict) otherwise.
func (s *Server) inTx(r *http.Request, db string, fn func(tx kv.Tx) error) error {
	id, origin := r.Header.Get(headerTxID), r.Header.Get(headerTxOrigin)
	// As in the original: without an origin the request is not in a
	// transaction, whatever its id says.
	if id == "" || origin == "" {
		return s.run(r.Context(), fn)
	}
	if origin != s.sessions.Origin() {
		return status.Errorf(status.FailedPrecondition, "transaction %s is held by node '%s', not by this node ('%s'): send its requests there", id, origin, s.sessions.Origin())
	}
	return s.sessions.Run(r.Context(), id, db, fn)
}

type txCtx struct {
	ID     string `json:"id"`
	Origin string `json:"origin"`
}

func (s *Server) beginTransaction(w http.ResponseWriter, r *http.Request) error {
	db := r.PathValue("db")
	// As in the original, begin checks the name but not that the database
	// exists: the first request in the transaction does.
	if err := catalog.CheckDatabaseName(db); err != nil {
		return err
	}
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	sess, err := s.sessions.Begin(r.Context(), db)
	if err != nil {
		return err
	}
	// Clients and load balancers use the cookie for stickiness.
	http.SetCookie(w, &http.Cookie{Name: headerTxID, Value: sess.ID, Expires: time.Now().Add(s.cfg.TxMaxLifetime()), Path: "/"})
	writeJSON(w, http.StatusOK, map[string]txCtx{"tx_ctx": {ID: sess.ID, Origin: sess.Origin}})
	return nil
}

func (s *Server) commitTransaction(w http.ResponseWriter, r *http.Request) error {
	if err := s.endTransaction(r, true); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "committed"})
	return nil
}

func (s *Server) rollbackTransaction(w http.ResponseWriter, r *http.Request) error {
	if err := s.endTransaction(r, false); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "rolled back"})
	return nil
}

func (s *Server) endTransaction(r *http.Request, commit bool) error {
	if err := catalog.CheckDatabaseName(r.PathValue("db")); err != nil {
		return err
	}
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	id := r.Header.Get(headerTxID)
	if id == "" {
		return status.Errorf(status.NotFound, "session not found")
	}
	if origin := r.Header.Get(headerTxOrigin); origin != "" && origin != s.sessions.Origin() {
		return status.Errorf(status.FailedPrecondition, "transaction %s is held by node '%s', not by this node ('%s')", id, origin, s.sessions.Origin())
	}
	if commit {
		return s.sessions.Commit(r.Context(), id)
	}
	return s.sessions.Rollback(r.Context(), id)
}
