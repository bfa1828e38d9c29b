package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

type publishResponse struct {
	Metadata metadata `json:"metadata"`
	Status   string   `json:"status"`
	Keys     [][]byte `json:"keys"` // base64 in JSON
}

// publish stores messages in a messages collection (reference §7), in the
// client's transaction if the request carries one.
func (s *Server) publish(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Options  struct {
			Partition int64Option `json:"partition"`
		} `json:"options"`
	}
	malformed := decode(r, &body, publishOptions)
	req := ops.PublishRequest{Malformed: malformed, DB: r.PathValue("db"), Collection: r.PathValue("collection"), Tx: txRef(r),
		Messages: make([][]byte, len(body.Messages)), Partition: int64(body.Options.Partition)}
	for i, m := range body.Messages {
		req.Messages[i] = m
	}
	res, err := s.ops.Publish(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, publishResponse{Metadata: metadata{CreatedAt: timestamp(res.Time)}, Status: "published", Keys: res.Keys})
	return nil
}
