package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// aggregate streams one {"result":{"group":{...},"name":value,...}} line
// per group (Folio's own call, on both generations' paths); with
// "explain": true, one {"explain":{...}} object saying how it ran
// instead. A collation is taken as read takes it (options.collation), and
// at the top level as well, as count takes it.
func (s *Server) aggregate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Filter    json.RawMessage `json:"filter"`
		GroupBy   []string        `json:"group_by"`
		Fields    json.RawMessage `json:"fields"`
		Sort      json.RawMessage `json:"sort"`
		Limit     int64Option     `json:"limit"`
		Explain   bool            `json:"explain"`
		Branch    string          `json:"branch"`
		Collation collation       `json:"collation"`
		Options   struct {
			Collation collation `json:"collation"`
		} `json:"options"`
	}
	malformed := decode(r, &body, aggregateOptions)
	coll := body.Collation
	if coll.Case == "" {
		coll = body.Options.Collation
	}
	req := ops.AggregateRequest{Malformed: malformed, DB: r.PathValue("db"), Branch: branchOf(r, body.Branch),
		Collection: r.PathValue("collection"), Tx: txRef(r), Filter: body.Filter, Collation: coll.ops(),
		GroupBy: body.GroupBy, Fields: body.Fields, Sort: body.Sort, Limit: int64(body.Limit), Explain: body.Explain}
	if req.Explain {
		ex, err := s.ops.Aggregate(r.Context(), caller(r), req, nil)
		if err != nil {
			return err
		}
		type explanation struct {
			Plan     string `json:"plan"`
			Groups   int    `json:"groups"`
			Matched  int64  `json:"matched"`
			KeysRead int64  `json:"keys_read"`
		}
		writeJSON(w, http.StatusOK, struct {
			Explain explanation `json:"explain"`
		}{explanation{ex.Plan, ex.Groups, ex.Matched, ex.KeysRead}})
		return nil
	}
	stream := newBatchedStream(w, s.publicFor(r))
	_, err := s.ops.Aggregate(r.Context(), caller(r), req, func(result []byte) error {
		return stream.send(result)
	})
	return stream.finish(err)
}
