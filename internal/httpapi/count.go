package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// count answers {"count": N}: the documents a filter matches. The final
// API's CountRequest has no options; a collation is taken as read takes
// it (options.collation), and at the top level as well.
func (s *Server) count(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Filter    json.RawMessage `json:"filter"`
		Branch    string          `json:"branch"`
		Collation collation       `json:"collation"`
		Options   struct {
			Collation collation `json:"collation"`
		} `json:"options"`
	}
	malformed := decode(r, &body, countOptions)
	coll := body.Collation
	if coll.Case == "" {
		coll = body.Options.Collation
	}
	n, err := s.ops.Count(r.Context(), caller(r), ops.CountRequest{Malformed: malformed, DB: r.PathValue("db"), Branch: branchOf(r, body.Branch),
		Collection: r.PathValue("collection"), Tx: txRef(r), Filter: body.Filter, Collation: coll.ops()})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Count int64 `json:"count"`
	}{n})
	return nil
}
